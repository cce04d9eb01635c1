#!/usr/bin/python3
"""tests/deploy's stand-in for systemctl and journalctl on a test host.

systemd is not the service manager where the multi-host test runs (the
hosts are network namespaces of one machine), so the documented commands
`systemctl enable --now batond@node1`, `systemctl restart ...`,
`systemctl stop ...`, `systemctl kill -s KILL ...` and
`journalctl -u batond@node1` reach this program instead. It reads the
unit the docs installed (/etc/systemd/system/batond@.service, with %i
replaced) and does what systemd would do with the keys that matter here:

- ExecStart runs as User=/Group=, with LimitNOFILE= (or the hard limit
  where a container caps it lower, said in the journal), in a session of its
  own, its stdout and stderr appended to the host's journal file;
  StateDirectory= (under /var/lib) is made for the user with
  StateDirectoryMode= first.
- Type=notify: NOTIFY_SOCKET is a datagram socket of a supervisor process
  that stays with the service; `start` returns once READY=1 arrives (exit
  0), or when the process exits first or TimeoutStartSec= passes (exit 1,
  systemd's "Job ... failed" line). STATUS= is kept for `status`/`show`.
- stop: KillSignal= (SIGTERM) to the main process, SIGKILL after
  TimeoutStopSec=; returns once it has exited.
- Restart=on-failure: an exit with a non-zero status or by a signal that
  no `stop` asked for starts it again after RestartSec=.
- reload: ExecReload (SIGHUP to the main process).

WatchdogSec= is passed on (WATCHDOG_USEC) but not enforced, and the
sandboxing keys (ProtectSystem= and the like) are not applied: the test
checks the procedures, not the hardening.

The host's state (pids, READY, STATUS, the journal) lives in
$DEPLOYTEST_HOSTDIR/units, which the test's host wrapper sets.
"""

import os
import pwd
import grp
import resource
import select
import signal
import socket
import sys
import time

UNIT_DIR = "/etc/systemd/system"


def die(msg, code=1):
    sys.stderr.write(msg + "\n")
    sys.exit(code)


def state_dir():
    d = os.environ.get("DEPLOYTEST_HOSTDIR")
    if not d:
        die("systemctl (tests/deploy): DEPLOYTEST_HOSTDIR is not set", 1)
    d = os.path.join(d, "units")
    os.makedirs(d, exist_ok=True)
    return d


def seconds(v, default):
    v = (v or "").strip()
    if not v:
        return default
    if v.endswith("ms"):
        return float(v[:-2]) / 1000
    if v.endswith("s"):
        return float(v[:-1])
    if v.endswith("min"):
        return float(v[:-3]) * 60
    return float(v)


class Unit:
    def __init__(self, name):
        if name.endswith(".service"):
            name = name[: -len(".service")]
        self.name = name
        if "@" in name:
            prefix, inst = name.split("@", 1)
            path = os.path.join(UNIT_DIR, prefix + "@.service")
        else:
            inst = ""
            path = os.path.join(UNIT_DIR, name + ".service")
        if not os.path.exists(path):
            die("Unit %s.service not found." % name, 5)
        self.keys = {}
        with open(path) as f:
            for line in f:
                line = line.strip()
                if not line or line[0] in "#;[" or "=" not in line:
                    continue
                k, v = line.split("=", 1)
                self.keys.setdefault(k.strip(), []).append(v.strip().replace("%i", inst))
        self.dir = state_dir()

    def key(self, k, default=""):
        v = self.keys.get(k)
        return v[-1] if v else default

    def file(self, what):
        return os.path.join(self.dir, "%s.%s" % (self.name, what))

    def read(self, what):
        try:
            with open(self.file(what)) as f:
                return f.read().strip()
        except OSError:
            return ""

    def write(self, what, text):
        tmp = self.file(what) + ".tmp"
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, self.file(what))

    def main_pid(self):
        pid = self.read("pid")
        if not pid:
            return 0
        try:
            os.kill(int(pid), 0)
        except (OSError, ValueError):
            return 0
        return int(pid)

    def supervisor_alive(self):
        pid = self.read("supervisor")
        if not pid:
            return False
        try:
            os.kill(int(pid), 0)
        except (OSError, ValueError):
            return False
        # A zombie of ours cannot be: the supervisor is a grandchild.
        return True

    def active(self):
        return self.supervisor_alive() and self.read("state") in ("starting", "running", "restarting")


def spawn_main(u, sock_path, journal):
    argv = u.key("ExecStart").split()
    user = u.key("User")
    group = u.key("Group")
    env = dict(os.environ)
    env["NOTIFY_SOCKET"] = sock_path
    wd = seconds(u.key("WatchdogSec"), 0)
    nofile = u.key("LimitNOFILE")
    pid = os.fork()
    if pid == 0:
        try:
            os.setsid()
            fd = os.open(journal, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o640)
            os.dup2(fd, 1)
            os.dup2(fd, 2)
            nul = os.open("/dev/null", os.O_RDONLY)
            os.dup2(nul, 0)
            if nofile:
                n = int(nofile)
                try:
                    resource.setrlimit(resource.RLIMIT_NOFILE, (n, n))
                except (ValueError, OSError):
                    # A container may cap the hard limit below the unit's;
                    # systemd would fail the start, the test goes on.
                    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
                    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
                    os.write(2, ("systemctl (tests/deploy): LimitNOFILE=%d is above this "
                                 "machine's hard limit: %d\n" % (n, hard)).encode())
            if wd:
                env["WATCHDOG_USEC"] = str(int(wd * 1000000))
                env["WATCHDOG_PID"] = str(os.getpid())
            if user:
                pw = pwd.getpwnam(user)
                gid = grp.getgrnam(group).gr_gid if group else pw.pw_gid
                os.initgroups(user, gid)
                os.setgid(gid)
                os.setuid(pw.pw_uid)
                env["HOME"] = pw.pw_dir
                env["USER"] = user
            umask = u.key("UMask")
            if umask:
                os.umask(int(umask, 8))
            os.chdir("/")
            os.execve(argv[0], argv, env)
        except Exception as e:  # noqa: BLE001 - reported in the journal
            os.write(2, ("systemctl (tests/deploy): cannot start %s: %s\n" % (argv[0], e)).encode())
        os._exit(203)
    return pid


def supervise(u):
    """The service's supervisor: runs ExecStart, reads its notifications,
    restarts it on failure. Runs detached until the service is stopped or
    ends for good."""
    sock_path = u.file("notify")
    try:
        os.unlink(sock_path)
    except OSError:
        pass
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(sock_path)
    os.chmod(sock_path, 0o666)
    journal = u.file("journal")
    restart = u.key("Restart", "no")
    restart_sec = seconds(u.key("RestartSec"), 0.1)
    while True:
        u.write("state", "starting")
        u.write("ready", "")
        pid = spawn_main(u, sock_path, journal)
        u.write("pid", str(pid))
        status = None
        while status is None:
            r, _, _ = select.select([s], [], [], 0.1)
            if r:
                msg = s.recv(4096).decode(errors="replace")
                for line in msg.split("\n"):
                    if line == "READY=1":
                        u.write("ready", "1")
                        u.write("state", "running")
                    elif line.startswith("STATUS="):
                        u.write("statustext", line[len("STATUS="):])
            got, st = os.waitpid(pid, os.WNOHANG)
            if got == pid:
                status = st
        if os.WIFEXITED(status):
            result = "exit-code=%d" % os.WEXITSTATUS(status)
            failed = os.WEXITSTATUS(status) != 0
        else:
            result = "signal=%s" % signal.Signals(os.WTERMSIG(status)).name
            failed = True
        u.write("result", result)
        u.write("pid", "")
        with open(journal, "a") as j:
            j.write("systemctl (tests/deploy): %s: main process exited, %s\n" % (u.name, result))
        if u.read("stopping") or not failed or restart not in ("on-failure", "always"):
            break
        u.write("state", "restarting")
        time.sleep(restart_sec)
    u.write("state", "failed" if failed and not u.read("stopping") else "inactive")
    s.close()
    os.unlink(sock_path)


def start(u):
    if u.active():
        return 0
    sd = u.key("StateDirectory")
    if sd:
        path = os.path.join("/var/lib", sd)
        os.makedirs(path, exist_ok=True)
        user = u.key("User")
        if user:
            pw = pwd.getpwnam(user)
            os.chown(path, pw.pw_uid, grp.getgrnam(u.key("Group")).gr_gid if u.key("Group") else pw.pw_gid)
        os.chmod(path, int(u.key("StateDirectoryMode", "0755"), 8))
    for what in ("stopping", "result", "ready", "statustext"):
        u.write(what, "")
    u.write("state", "starting")
    pid = os.fork()
    if pid == 0:
        os.setsid()
        if os.fork() != 0:
            os._exit(0)
        nul = os.open("/dev/null", os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(nul, fd)
        u.write("supervisor", str(os.getpid()))
        try:
            supervise(u)
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    deadline = time.monotonic() + seconds(u.key("TimeoutStartSec"), 90)
    while time.monotonic() < deadline:
        if u.read("ready") == "1":
            return 0
        if u.read("result") and u.read("state") != "restarting":
            break
        time.sleep(0.05)
    sys.stderr.write(
        "Job for %s.service failed because the control process exited with error code.\n"
        "See \"systemctl status %s.service\" and \"journalctl -xeu %s.service\" for details.\n"
        % (u.name, u.name, u.name))
    stop(u)
    return 1


def stop(u):
    if not u.supervisor_alive():
        return 0
    u.write("stopping", "1")
    pid = u.main_pid()
    sig = getattr(signal, u.key("KillSignal", "SIGTERM"))
    if pid:
        try:
            os.kill(pid, sig)
        except OSError:
            pass
    deadline = time.monotonic() + seconds(u.key("TimeoutStopSec"), 90)
    while u.supervisor_alive():
        if time.monotonic() > deadline:
            pid = u.main_pid()
            if pid:
                try:
                    os.killpg(pid, signal.SIGKILL)
                except OSError:
                    pass
            deadline = time.monotonic() + 5
        time.sleep(0.02)
    return 0


def kill(u, sig):
    pid = u.main_pid()
    if pid:
        os.kill(pid, sig)
    return 0


def status(u):
    state = u.read("state") if u.supervisor_alive() else (u.read("state") or "inactive")
    print("* %s.service - %s" % (u.name, u.key("Description")))
    print("     Active: %s%s" % ("active (running)" if u.active() else state,
                                  "" if u.active() else " (Result: %s)" % (u.read("result") or "-")))
    print("   Main PID: %s" % (u.main_pid() or "-"))
    print("     Status: \"%s\"" % u.read("statustext"))
    return 0 if u.active() else 3


def systemctl(args):
    now = False
    sig = signal.SIGTERM
    props = []
    value = False
    rest = []
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--now":
            now = True
        elif a in ("-s", "--signal"):
            i += 1
            sig = getattr(signal, args[i] if args[i].startswith("SIG") else "SIG" + args[i])
        elif a.startswith("--signal="):
            v = a.split("=", 1)[1]
            sig = getattr(signal, v if v.startswith("SIG") else "SIG" + v)
        elif a == "-p":
            i += 1
            props.append(args[i])
        elif a == "--value":
            value = True
        elif a.startswith("--kill-whom") or a.startswith("--kill-who") or a in ("-q", "--quiet", "--no-pager"):
            pass
        else:
            rest.append(a)
        i += 1
    if not rest:
        die("systemctl (tests/deploy): no verb")
    verb, names = rest[0], rest[1:]
    if verb == "daemon-reload":
        return 0
    rc = 0
    for name in names:
        u = Unit(name)
        if verb in ("start",) or (verb == "enable" and now):
            rc |= start(u)
        elif verb == "enable" or verb == "disable" and not now:
            pass
        elif verb == "disable" and now:
            rc |= stop(u)
        elif verb == "stop":
            rc |= stop(u)
        elif verb == "restart":
            stop(u)
            rc |= start(u)
        elif verb == "reload":
            rc |= kill(u, signal.SIGHUP)
        elif verb == "kill":
            rc |= kill(u, sig)
        elif verb == "is-active":
            print("active" if u.active() else "inactive")
            rc |= 0 if u.active() else 3
        elif verb == "status":
            rc |= status(u)
        elif verb == "show":
            for p in props:
                v = {"StatusText": u.read("statustext"),
                     "ActiveState": "active" if u.active() else "inactive",
                     "MainPID": str(u.main_pid())}.get(p, "")
                print(v if value else "%s=%s" % (p, v))
        else:
            die("systemctl (tests/deploy): verb %s is not supported here" % verb)
    return rc


def journalctl(args):
    units = []
    i = 0
    while i < len(args):
        if args[i] == "-u":
            i += 1
            units.append(args[i])
        elif args[i].startswith("--unit="):
            units.append(args[i].split("=", 1)[1])
        elif args[i] == "-f":
            die("journalctl (tests/deploy): -f is not supported here")
        i += 1
    for name in units:
        u = Unit(name)
        try:
            with open(u.file("journal")) as f:
                sys.stdout.write(f.read())
        except OSError:
            pass
    return 0


if __name__ == "__main__":
    prog = os.path.basename(sys.argv[0])
    args = sys.argv[1:]
    if args[:1] == ["--as"]:
        prog, args = args[1], args[2:]
    if prog == "journalctl":
        sys.exit(journalctl(args))
    sys.exit(systemctl(args))
