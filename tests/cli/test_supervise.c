/*
 * `batonctl lock|sem|elect -- CMD` keeps its promise when batonctl itself
 * is killed or stopped: CMD is dead before the cluster can give the lock
 * (the permits, the leadership) to anyone else. Against a live 3-node
 * cluster (tests/integration/harness), the built batonctl ($BATONCTL, or
 * ./batonctl in the build dir) runs this program as its command, which
 * appends its CLOCK_MONOTONIC time to a file every few ms (its signs of
 * life); then batonctl alone is killed with SIGKILL (as the OOM killer or
 * a KillMode=process unit would) or stopped with SIGSTOP for longer than
 * the TTL, and a second batonctl takes the same name and runs this
 * program to stamp the moment it holds it. The first command's last sign
 * of life must come before that moment.
 *
 * lock, sem and elect share one code path (src/cli/main.c, cmd_lock ->
 * supervise_run): each is run at least once here, under one fault or the
 * other, with a command that stops on SIGTERM and one that ignores it
 * (then only the SIGKILL at the lease's deadline stops it). Besides: a
 * SIGTERM to the whole process group still gives the command its grace
 * (the watchdog lives on), and a watchdog killed takes the command with
 * it (batonctl exits 125).
 *
 * As the command: `test_supervise --alive FILE [--ignore-term]
 * [--linger-ms N]` writes "pid P", then a time every 5 ms (on SIGTERM,
 * `linger` more ms of them and "term", then exit 0; ignored with
 * --ignore-term); `test_supervise --mark FILE` writes one time and exits.
 *
 * Every wait is bounded; commands left running are killed at exit.
 * Environment as the integration tests: BATOND, BATON_TEST_BASE_PORT,
 * BATON_TEST_TMPDIR. Prints TAP.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../integration/harness.h"
#include "../lib/proc.h"
#include "../lib/tap.h"
#include "../lib/tclient.h"
#include "ctlcluster.h"

#define WATCHDOG_S 240
#define TTL_MS     2000
#define RUN_MS     30000 /* the longest a batonctl here may take */
#define MAX_STRAYS 16

static struct harness cluster;
static const char *batonctl; /* $BATONCTL, or ./batonctl */
static char self[4096];      /* this program, as the commands' path */
/* Every case of this program, in one TAP stream. */
static struct tap tap;
#define ok(...) tap_ok(&tap, __VA_ARGS__)
static pid_t strays[MAX_STRAYS]; /* commands to kill at exit */
static unsigned n_strays;

/* --- The command ------------------------------------------------------------
 */

static volatile sig_atomic_t got_term;

static void on_term(int sig)
{
        (void)sig;
        got_term = 1;
}

static void stamp(int fd, const char *what)
{
        char line[64];
        int n = what != NULL ? snprintf(line, sizeof line, "%s\n", what)
                             : snprintf(line, sizeof line, "%" PRId64 "\n",
                                        tclient_now_ns());

        if (write(fd, line, (size_t)n) != n) {
                _exit(3);
        }
}

/* --alive FILE [--ignore-term] [--linger-ms N], or --mark FILE. */
static int command(int argc, char **argv)
{
        bool ignore = false, mark = strcmp(argv[1], "--mark") == 0;
        int64_t linger = 0, end = tclient_now_ms() + 60000, i;
        struct sigaction sa = {0};
        char line[32];
        int fd;

        fd = open(argv[2], O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (fd < 0) {
                return 3;
        }
        if (mark) {
                stamp(fd, NULL);
                return 0;
        }
        for (i = 3; i < argc; i++) {
                if (strcmp(argv[i], "--ignore-term") == 0) {
                        ignore = true;
                } else if (strcmp(argv[i], "--linger-ms") == 0 &&
                           i + 1 < argc) {
                        linger = strtoll(argv[++i], NULL, 10);
                }
        }
        sa.sa_handler = ignore ? SIG_IGN : on_term;
        sigaction(SIGTERM, &sa, NULL);
        snprintf(line, sizeof line, "pid %d", (int)getpid());
        stamp(fd, line);
        /* At most a minute, in case nothing stops it. */
        while (tclient_now_ms() < end) {
                if (got_term) {
                        got_term = 0;
                        end = tclient_now_ms() + linger;
                        stamp(fd, NULL);
                        while (tclient_now_ms() < end) {
                                stamp(fd, NULL);
                                tclient_sleep_ms(5);
                        }
                        stamp(fd, "term");
                        return 0;
                }
                stamp(fd, NULL);
                tclient_sleep_ms(5);
        }
        return 4;
}

/* --- Files and processes ----------------------------------------------------
 */

/* What a command's file says: its pid, its signs of life, "term". */
struct life {
        pid_t pid;
        unsigned n;    /* times */
        int64_t first; /* ns */
        int64_t last;
        bool term;
};

static void read_life(const char *path, struct life *l)
{
        char line[128];
        FILE *f = fopen(path, "r");

        memset(l, 0, sizeof *l);
        if (f == NULL) {
                return;
        }
        while (fgets(line, sizeof line, f) != NULL) {
                int pid;
                if (sscanf(line, "pid %d", &pid) == 1) {
                        l->pid = pid;
                } else if (strncmp(line, "term", 4) == 0) {
                        l->term = true;
                } else if (line[0] >= '0' && line[0] <= '9') {
                        int64_t t = strtoll(line, NULL, 10);
                        if (l->n++ == 0) {
                                l->first = t;
                        }
                        l->last = t;
                }
        }
        fclose(f);
}

static bool wait_dead(pid_t pid, int timeout_ms)
{
        int64_t end = tclient_now_ms() + timeout_ms;

        while (!proc_gone(pid)) {
                if (tclient_now_ms() >= end) {
                        return false;
                }
                tclient_sleep_ms(5);
        }
        return true;
}

static void stray(pid_t pid)
{
        if (pid > 0 && n_strays < MAX_STRAYS) {
                strays[n_strays++] = pid;
        }
}

static void cleanup(void)
{
        unsigned i;

        for (i = 0; i < n_strays; i++) {
                if (!proc_gone(strays[i])) {
                        kill(strays[i], SIGKILL);
                }
        }
}

/* Start batonctl --endpoints E `args` in a process group of its own. */
static int ctl_start(struct proc *c, const char *const *args)
{
        return ctlcluster_start(c, batonctl, &cluster, args);
}

/* Wait until the command's file shows it running (its pid and a few
 * signs of life). */
static bool wait_running(const char *path, struct proc *c, struct life *l)
{
        int64_t end = tclient_now_ms() + RUN_MS;

        for (;;) {
                read_life(path, l);
                if (l->pid > 0 && l->n >= 3) {
                        stray(l->pid);
                        return true;
                }
                if (tclient_now_ms() >= end ||
                    waitpid(c->pid, NULL, WNOHANG) != 0) {
                        return false;
                }
                tclient_sleep_ms(10);
        }
}

/* The words of a command line for `kind` (lock, sem or elect) of `name`. */
static unsigned kind_args(const char *kind, const char *name, const char **args)
{
        unsigned n = 0;

        args[n++] = kind;
        args[n++] = name;
        if (strcmp(kind, "sem") == 0) {
                args[n++] = "--permits";
                args[n++] = "1";
        }
        return n;
}

/* --- The scenarios ----------------------------------------------------------
 */

/*
 * `kind` NAME --ttl 2000 --grace 5000 -- this --alive FILE [--ignore-term];
 * once it runs, SIGKILL (stop = false) or SIGSTOP (stop = true) batonctl
 * alone; then a second batonctl of `kind` NAME runs this --mark FILE2. The
 * first command's last sign of life comes before the second's mark, and
 * it is dead. SIGSTOP lasts until the second holder is done (longer than
 * the TTL); after SIGCONT batonctl exits 121 saying the lock was lost.
 */
static void fault(const char *kind, bool stop, bool ignore_term)
{
        char name[64], alive[512], mark[512], ttl[16];
        const char *what = stop ? "SIGSTOP" : "SIGKILL";
        const char *cmd = ignore_term ? " (SIGTERM ignored)" : "";
        const char *args[32];
        struct proc first, second;
        struct life l1, l2;
        int64_t t_fault, t_second;
        unsigned n;

        snprintf(name, sizeof name, "sv-%s-%s%s", kind, stop ? "stop" : "kill",
                 ignore_term ? "-ignore" : "");
        snprintf(alive, sizeof alive, "%s/%s.alive", cluster.dir, name);
        snprintf(mark, sizeof mark, "%s/%s.mark", cluster.dir, name);
        snprintf(ttl, sizeof ttl, "%d", TTL_MS);
        n = kind_args(kind, name, args);
        args[n++] = "--ttl";
        args[n++] = ttl;
        args[n++] = "--grace";
        args[n++] = "5000";
        args[n++] = "--";
        args[n++] = self;
        args[n++] = "--alive";
        args[n++] = alive;
        if (ignore_term) {
                args[n++] = "--ignore-term";
        }
        args[n] = NULL;
        if (ctl_start(&first, args) != 0 ||
            !ok(wait_running(alive, &first, &l1), "%s %s: the command runs",
                kind, name)) {
                kill(first.pid, SIGKILL);
                proc_wait(&first, RUN_MS);
                tap_diag("batonctl: %s", first.err);
                return;
        }
        /* Some keepalives go through: the session is in its steady state. */
        tclient_sleep_ms(TTL_MS / 2);
        t_fault = tclient_now_ns();
        kill(first.pid, stop ? SIGSTOP : SIGKILL);

        n = kind_args(kind, name, args);
        args[n++] = "--ttl";
        args[n++] = ttl;
        args[n++] = "--wait";
        args[n++] = "30000";
        args[n++] = "--";
        args[n++] = self;
        args[n++] = "--mark";
        args[n++] = mark;
        args[n] = NULL;
        if (ctl_start(&second, args) != 0) {
                ok(false, "%s %s: a second batonctl starts", kind, name);
                return;
        }
        proc_wait(&second, RUN_MS);
        read_life(mark, &l2);
        t_second = l2.n > 0 ? l2.last : 0;
        if (!ok(second.status == 0 && l2.n == 1,
                "%s %s, batonctl %s: a second holder takes it", kind, name,
                what)) {
                tap_diag("second batonctl: exit %d: %s", second.status,
                         second.err);
        }
        read_life(alive, &l1);
        tap_diag("%s %s%s: %s at 0; the command's last sign of life at %.0f "
                 "ms; the second holder at %.0f ms",
                 kind, name, cmd, what, (l1.last - t_fault) / 1e6,
                 (t_second - t_fault) / 1e6);
        ok(t_second > 0 && l1.last < t_second,
           "%s --ttl %d, batonctl %s%s: the command's last sign of life "
           "comes before the second holder's (%.0f ms before)",
           kind, TTL_MS, what, cmd, (t_second - l1.last) / 1e6);
        ok(wait_dead(l1.pid, 1000), "%s, batonctl %s%s: the command is dead",
           kind, what, cmd);
        if (stop) {
                kill(first.pid, SIGCONT);
                proc_wait(&first, RUN_MS);
                if (!ok(first.status == 121 && strstr(first.err, "lost"),
                        "%s, batonctl %s then SIGCONT: exit 121, the lock "
                        "lost",
                        kind, what)) {
                        tap_diag("exit %d: %s", first.status, first.err);
                }
        } else {
                proc_wait(&first, RUN_MS);
                /* Stopped at once (SIGTERM); ignoring it, at the lease's
                 * deadline (SIGKILL), which the check above bounds. */
                if (!ignore_term) {
                        ok(l1.last - t_fault < INT64_C(1000000000),
                           "%s, batonctl SIGKILL: the command stopped at "
                           "once (%.0f ms)",
                           kind, (l1.last - t_fault) / 1e6);
                }
        }
}

/*
 * SIGTERM to batonctl's whole process group, as `kill -TERM -PGID`, a
 * terminal's ^C (SIGINT) or systemd would send it: the command gets it
 * (twice, batonctl passes it on too), lingers 300 ms and exits 0; the
 * watchdog lives on to report it, so batonctl exits 0 and releases.
 */
static void group_term(void)
{
        char alive[512];
        const char *args[] = {"lock",        "sv-group", "--ttl",   "2000",
                              "--",          self,       "--alive", alive,
                              "--linger-ms", "300",      NULL};
        struct proc c, h;
        struct life l;
        int64_t t_term;

        snprintf(alive, sizeof alive, "%s/sv-group.alive", cluster.dir);
        if (ctl_start(&c, args) != 0 ||
            !ok(wait_running(alive, &c, &l),
                "lock sv-group: the command runs")) {
                kill(c.pid, SIGKILL);
                proc_wait(&c, RUN_MS);
                return;
        }
        t_term = tclient_now_ns();
        kill(-c.pid, SIGTERM);
        proc_wait(&c, RUN_MS);
        read_life(alive, &l);
        if (!ok(c.status == 0 && l.term,
                "lock, SIGTERM to the process group: the command lingers "
                "and exits 0, batonctl exits 0")) {
                tap_diag("exit %d, term %d: %s", c.status, l.term, c.err);
        }
        ok(l.last - t_term >= INT64_C(250000000),
           "lock, SIGTERM to the process group: the command had its "
           "grace (%.0f ms)",
           (l.last - t_term) / 1e6);
        {
                const char *try[] = {"try", "sv-group", "--detach", NULL};
                ctl_start(&h, try);
                proc_wait(&h, RUN_MS);
                ok(h.status == 0,
                   "lock, SIGTERM to the process group: the "
                   "lock was released (exit %d)",
                   h.status);
        }
}

/* kill -9 of the watchdog (the command's parent, not batonctl): the
 * command dies with it at once, and batonctl exits 125 saying so. */
static void watchdog_killed(void)
{
        char alive[512];
        const char *args[] = {"lock", "sv-watchdog", "--ttl", "2000", "--",
                              self,   "--alive",     alive,   NULL};
        struct proc c;
        struct life l;
        pid_t parent;
        int64_t t_kill;

        snprintf(alive, sizeof alive, "%s/sv-watchdog.alive", cluster.dir);
        if (ctl_start(&c, args) != 0 ||
            !ok(wait_running(alive, &c, &l),
                "lock sv-watchdog: the command runs")) {
                kill(c.pid, SIGKILL);
                proc_wait(&c, RUN_MS);
                return;
        }
        parent = proc_parent(l.pid);
        if (!ok(parent > 0 && parent != c.pid,
                "lock: the command's parent is a watchdog, not batonctl")) {
                tap_diag("batonctl %d, command %d, its parent %d", (int)c.pid,
                         (int)l.pid, (int)parent);
                kill(c.pid, SIGKILL);
                proc_wait(&c, RUN_MS);
                return;
        }
        t_kill = tclient_now_ns();
        kill(parent, SIGKILL);
        ok(wait_dead(l.pid, 1000),
           "lock, the watchdog killed: the command dies with it");
        read_life(alive, &l);
        tap_diag("the watchdog killed at 0, the command's last sign of life at "
                 "%.0f ms",
                 (l.last - t_kill) / 1e6);
        proc_wait(&c, RUN_MS);
        if (!ok(c.status == 125 && strstr(c.err, "watchdog") != NULL,
                "lock, the watchdog killed: batonctl exits 125 and says so")) {
                tap_diag("exit %d: %s", c.status, c.err);
        }
}

int main(int argc, char **argv)
{
        int64_t t0 = tclient_now_ms();
        unsigned leader;
        ssize_t n;

        if (argc >= 3 && (strcmp(argv[1], "--alive") == 0 ||
                          strcmp(argv[1], "--mark") == 0)) {
                return command(argc, argv);
        }
        batonctl = ctlcluster_program("BATONCTL", "./batonctl");
        if (batonctl == NULL) {
                return 0;
        }
        n = readlink("/proc/self/exe", self, sizeof self - 1);
        if (n <= 0) {
                printf("Bail out! cannot find this program's path\n");
                return 1;
        }
        self[n] = '\0';
        atexit(cleanup);
        if (ctlcluster_open(&cluster, argv[0], WATCHDOG_S, &leader) != 0) {
                return 1;
        }
        tap_diag("cluster %s, leader %u, batonctl %s", cluster.endpoints,
                 leader, batonctl);

        fault("lock", false, false);
        fault("lock", true, true);
        fault("sem", false, true);
        fault("elect", true, false);
        group_term();
        watchdog_killed();

        return ctlcluster_close(&cluster, &tap, false, t0);
}
