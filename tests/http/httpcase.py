"""What the HTTP API tests share: a local cluster of their own (started
with scripts/cluster in a scratch directory, with client certificates of
every role), HTTPS clients with a chosen certificate, a record of every
call made (for the OpenAPI check) and TAP output.

Standard library only, and PyYAML (python3-yaml) for docs/openapi.yaml.
"""

import http.client
import json
import os
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CLUSTER = os.path.join(ROOT, "scripts", "cluster")
CERTS = os.path.join(ROOT, "scripts", "certs")


class Tap:
    """TAP lines: one per check, the plan at the end."""

    def __init__(self):
        self.n = 0
        self.failed = 0

    def check(self, what, ok, detail=""):
        self.n += 1
        if ok:
            print("ok %d - %s" % (self.n, what), flush=True)
        else:
            self.failed += 1
            print("not ok %d - %s" % (self.n, what), flush=True)
            for line in str(detail).splitlines()[:20]:
                print("#   " + line, flush=True)
        return ok

    def note(self, text):
        for line in str(text).splitlines():
            print("# " + line, flush=True)

    def end(self):
        print("1..%d" % self.n, flush=True)
        return 0 if self.failed == 0 else 1


def port_free(port):
    s = socket.socket()
    try:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", port))
        return True
    except OSError:
        return False
    finally:
        s.close()


def free_base(start):
    """A base port whose cluster ports (BASE+1..5, +101.., +201.., +301..)
    are all free."""
    base = start
    for _ in range(10):
        ports = [base + off + i for off in (0, 100, 200, 300)
                 for i in range(1, 6)]
        if all(port_free(p) for p in ports):
            return base
        base += 1000
    raise RuntimeError("no free port base near %d" % start)


def build_dir():
    """The build directory the test runs in (make check's working
    directory) when it has a batond, else the source tree's build/."""
    here = os.getcwd()
    if os.access(os.path.join(here, "batond"), os.X_OK):
        return here
    return os.path.join(ROOT, "build")


class Cluster:
    """A 3-node TLS cluster of scripts/cluster in its own directory, with
    client certificates `admin` (admin), `locker` (lock, the default role),
    `reader` (read) and `nobody` (none)."""

    def __init__(self, base_env, node_config=(), build=None,
                 default_base=26000):
        self.tmp = tempfile.mkdtemp(prefix="baton-http-test.")
        self.state = os.path.join(self.tmp, "cluster")
        self.base = free_base(int(os.environ.get(base_env, default_base)))
        lines = ["role = reader read", "role = nobody none"] + list(node_config)
        self.env = dict(os.environ,
                        BATON_BUILD_DIR=build or build_dir(),
                        BATON_CLUSTER_DIR=self.state,
                        BATON_BASE_PORT=str(self.base),
                        BATON_NODE_CONFIG="\n".join(lines))
        self.tls = os.path.join(self.state, "tls")

    def run(self, *args, check=True):
        return subprocess.run([CLUSTER] + list(args), env=self.env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, check=check, timeout=300)

    def up(self):
        os.makedirs(self.state, exist_ok=True)
        subprocess.run([CERTS, self.tls, "--nodes", "3", "--client", "reader",
                        "--client", "locker", "--client", "nobody"],
                       check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.STDOUT, timeout=120)
        return self.run("up")

    def down(self):
        """Stop the nodes; what their logs say of memory errors, leaks or
        undefined behaviour (a sanitizer build's), as a list of lines."""
        self.run("down", check=False)
        found = []
        for node in (1, 2, 3):
            try:
                with open(os.path.join(self.state, "node%d.log" % node)) as f:
                    found += [line.rstrip() for line in f
                              if "ERROR: AddressSanitizer" in line
                              or "ERROR: LeakSanitizer" in line
                              or "runtime error:" in line]
            except OSError:
                pass
        self.run("down", "--purge", check=False)
        shutil.rmtree(self.tmp, ignore_errors=True)
        return found

    def http_port(self, node):
        return self.base + 300 + node

    def client_port(self, node):
        return self.base + 100 + node

    def context(self, who="admin"):
        ctx = ssl.create_default_context(cafile=os.path.join(self.tls,
                                                             "ca.crt"))
        if who is not None:
            ctx.load_cert_chain(os.path.join(self.tls, who + ".crt"),
                                os.path.join(self.tls, who + ".key"))
        return ctx

    def pid(self, node):
        with open(os.path.join(self.state, "node%d.pid" % node)) as f:
            return int(f.read().strip())


class Answer:
    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers
        self.raw = body
        try:
            self.json = json.loads(body) if body else None
        except ValueError:
            self.json = None

    def get(self, key, default=None):
        return self.json.get(key, default) if isinstance(self.json, dict) \
            else default

    def __repr__(self):
        return "%d %s" % (self.status, self.raw[:300])


class Client:
    """HTTPS calls to one node with one certificate, on one keep-alive
    connection; every call is recorded in `calls` as (method, path,
    status) for the OpenAPI check."""

    calls = []

    def __init__(self, cluster, node=1, who="admin", timeout=30):
        self.cluster = cluster
        self.node = node
        self.who = who
        self.timeout = timeout
        self.conn = None
        self.session = None
        self.secret = None

    def connect(self):
        self.conn = http.client.HTTPSConnection(
            "127.0.0.1", self.cluster.http_port(self.node),
            context=self.cluster.context(self.who), timeout=self.timeout)

    def call(self, method, target, body=None, headers=None, session=True):
        if self.conn is None:
            self.connect()
        h = dict(headers or {})
        if session and self.session is not None:
            h.setdefault("Baton-Session", str(self.session))
            h.setdefault("Baton-Secret", self.secret)
        data = None
        if body is not None:
            data = body if isinstance(body, (bytes, str)) else json.dumps(body)
            h.setdefault("Content-Type", "application/json")
        try:
            self.conn.request(method, target, body=data, headers=h)
            r = self.conn.getresponse()
            raw = r.read().decode("utf-8", "replace")
        except (OSError, http.client.HTTPException):
            self.conn.close()
            self.conn = None
            raise
        if r.getheader("Connection", "").lower() == "close":
            self.conn.close()
            self.conn = None
        path = target.split("?")[0]
        if path.startswith("/v1/sessions/"):
            path = "/v1/sessions/{id}"  # as openapi.yaml names it
        Client.calls.append((method, path, r.status))
        return Answer(r.status, dict(r.getheaders()), raw)

    def leader_call(self, method, target, body=None, headers=None):
        """The call, following one redirect to the leader."""
        a = self.call(method, target, body, headers)
        if a.status == 307:
            port = int(a.headers["Location"].split(":")[2].split("/")[0])
            node = port - self.cluster.base - 300
            other = Client(self.cluster, node, self.who, self.timeout)
            other.session, other.secret = self.session, self.secret
            a = other.call(method, target, body, headers)
            other.close()
        return a

    def open(self, ttl_ms=15000, name="http-test", **more):
        body = dict(ttl_ms=ttl_ms, client_name=name, **more)
        a = self.call("POST", "/v1/session", body, session=False)
        if a.status == 201:
            self.session = a.get("session")
            self.secret = a.get("secret")
        return a

    def close(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None


def leader_node(cluster, timeout=30):
    """The node whose API answers role leader."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        for node in (1, 2, 3):
            c = Client(cluster, node, timeout=5)
            try:
                a = c.call("GET", "/v1/status")
                if a.status == 200 and a.get("role") == "leader":
                    return node
            except OSError:
                pass
            finally:
                c.close()
        time.sleep(0.2)
    raise RuntimeError("no leader within %d s" % timeout)


def raw_exchange(cluster, node, payload, who="admin", wait=5.0,
                 pause_after=None):
    """Send `payload` (bytes, or a list of pieces with `pause_after`
    seconds between them) on a fresh TLS connection and read until the
    node closes it or `wait` passes: what came back, as text."""
    ctx = cluster.context(who)
    s = socket.create_connection(("127.0.0.1", cluster.http_port(node)),
                                 timeout=wait)
    t = ctx.wrap_socket(s, server_hostname="127.0.0.1")
    out = b""
    try:
        pieces = payload if isinstance(payload, list) else [payload]
        for i, p in enumerate(pieces):
            t.sendall(p)
            if pause_after and i + 1 < len(pieces):
                time.sleep(pause_after)
        end = time.time() + wait
        while time.time() < end:
            try:
                chunk = t.recv(65536)
            except socket.timeout:
                break
            if not chunk:
                break
            out += chunk
    except OSError as e:
        out += ("[%s]" % e).encode()
    finally:
        t.close()
    return out.decode("utf-8", "replace")


def status_of(text):
    """The status code of the first HTTP answer in `text` (0: none)."""
    if not text.startswith("HTTP/1.1 "):
        return 0
    return int(text[9:12])


def main_guard(fn):
    """Run `fn(tap)`; an exception is one failing case, not a lost plan."""
    tap = Tap()
    try:
        fn(tap)
    except Exception as e:  # the plan must still be printed
        import traceback
        tap.check("the test ran to its end", False, traceback.format_exc())
        del e
    sys.exit(tap.end())
