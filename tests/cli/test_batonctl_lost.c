/*
 * batonctl's most important promise, against a live 3-node cluster
 * (tests/integration/harness): `lock --ttl 2000 -- CMD` while every node
 * is SIGSTOPped: the command must be dead before the cluster could expire
 * the session, and batonctl must exit 121; with the command ignoring
 * SIGTERM too. Prints TAP.
 *
 * Every wait is bounded; a watchdog (BATON_TEST_WATCHDOG seconds, default
 * 180) bails out of a hung run, and the harness kills every node by PID on
 * any exit. Environment as the integration tests: BATOND,
 * BATON_TEST_BASE_PORT, BATON_TEST_TMPDIR.
 */
#include <ctype.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../integration/harness.h"
#include "../integration/tlsfiles.h"
#include "../lib/proc.h"
#include "../lib/tap.h"
#include "../lib/tclient.h"
#include "ctlcluster.h"
#include "jsoncheck.h"

#define WATCHDOG_S 180
#define HEALTHY_MS 20000
#define RUN_MS     20000 /* a batonctl run that should end on its own */
#define LOSS_TTL   2000

static struct harness cluster;
static const char *batonctl; /* $BATONCTL, or ./batonctl */
static pid_t stray_child;    /* a lock's command, killed at exit if alive */
/* Every case of this program, in one TAP stream. */
static struct tap tap;
#define ok(...) tap_ok(&tap, __VA_ARGS__)

/* --- Running batonctl ----------------------------------------------------- */

/* batonctl --endpoints E args... run to its end. */
#define ctl(p, timeout_ms, ...)                                                \
        ctlcluster_ctl((p), batonctl, &cluster, (timeout_ms), __VA_ARGS__)

/* --- Cases ---------------------------------------------------------------- */

/* The last step of lock_lost(): every node resumed, the cluster healthy
 * again, and `name` freed once its session's TTL (`eff_ttl`) ran out. */
static void resume_and_expire(const char *name, const char *what,
                              int64_t eff_ttl)
{
        unsigned i, leader;

        for (i = 1; i <= cluster.n; i++) {
                harness_resume(&cluster, i);
        }
        if (!ok(harness_wait_healthy(&cluster, HEALTHY_MS, &leader) == 0,
                "the cluster recovers after SIGCONT")) {
                tap_diag("%s", cluster.errmsg);
                return;
        }
        /* The session's TTL has run out: the cluster frees the lock. */
        {
                int64_t end = tclient_now_ms() + eff_ttl + 5000;
                struct proc h;
                bool freed = false;

                while (!freed && tclient_now_ms() < end) {
                        ctl(&h, RUN_MS, "holder", name, NULL);
                        freed =
                            h.status == 0 && strstr(h.out, " free\n") != NULL;
                        if (!freed) {
                                tclient_sleep_ms(200);
                        }
                }
                ok(freed,
                   "lock (%s): the lock is freed once the session expires",
                   what);
        }
}

/*
 * lock --ttl 2000 -- CMD, then SIGSTOP every node: no keepalive can be
 * acknowledged any more. The cluster could expire the session at the
 * earliest at (send time of the last acknowledged keepalive) + TTL; that
 * send happened before the first SIGSTOP, so we take t_stop + TTL, and
 * also show the margin against t_stop + 2/3 TTL (keepalives are sent every
 * TTL/3, so the last acknowledged one may be that old). With
 * `ignore_term`, the command ignores SIGTERM and must be SIGKILLed before
 * the lease runs out, whatever --grace says.
 */
static void lock_lost(bool ignore_term)
{
        const char *cmd = ignore_term
                              ? "trap '' TERM; echo $$ $BATON_DEADLINE_MS; "
                                "exec sleep 60"
                              : "echo $$ $BATON_DEADLINE_MS; exec sleep 60";
        const char *name = ignore_term ? "cli-lost-kill" : "cli-lost-term";
        const char *what = ignore_term ? "SIGTERM ignored" : "sleep";
        char ttl[16];
        const char *args[] = {"--endpoints", cluster.endpoints,
                              "lock",        name,
                              "--ttl",       ttl,
                              "--grace",     "5000",
                              "--",          "sh",
                              "-c",          cmd,
                              NULL};
        struct proc p;
        int64_t t_stop, t_dead = -1, t_read, lease_left, eff_ttl;
        unsigned i;
        long long deadline = 0;
        int child = 0;

        snprintf(ttl, sizeof ttl, "%d", LOSS_TTL);
        if (proc_start(&p, batonctl, 0, NULL, args) != 0 ||
            !proc_wait_line(&p, RUN_MS) ||
            sscanf(p.out, "%d %lld", &child, &deadline) != 2 || child <= 1) {
                ok(false, "lock (%s): the command started and printed $$",
                   what);
                kill(p.pid, SIGKILL);
                proc_wait(&p, RUN_MS);
                proc_show(&p);
                return;
        }
        t_read = ctlcluster_wall_ms();
        stray_child = child;
        lease_left = deadline - t_read;
        ok(lease_left <= LOSS_TTL,
           "lock --ttl %d (%s): BATON_DEADLINE_MS is within the TTL "
           "(%" PRId64 " ms left)",
           LOSS_TTL, what, lease_left);
        eff_ttl = LOSS_TTL;
        /* Some keepalives go through: the session is in its steady state. */
        tclient_sleep_ms(LOSS_TTL / 2);
        if (!ok(!proc_gone(child) && waitpid(p.pid, NULL, WNOHANG) == 0,
                "lock (%s): the command runs while the cluster is up", what)) {
                proc_wait(&p, RUN_MS);
                proc_show(&p);
                return;
        }

        t_stop = tclient_now_ms();
        for (i = 1; i <= cluster.n; i++) {
                harness_pause(&cluster, i);
        }
        while (tclient_now_ms() < t_stop + eff_ttl + 1000) {
                if (proc_gone(child)) {
                        t_dead = tclient_now_ms();
                        break;
                }
                proc_read(&p, 0);
                usleep(1000);
        }
        if (t_dead < 0) {
                tap_diag("the command (pid %d) still runs %" PRId64
                         " ms after SIGSTOP",
                         child, eff_ttl + 1000);
                kill(child, SIGKILL);
        } else {
                stray_child = 0;
                tap_diag("lock (%s), session TTL %" PRId64
                         " ms: SIGSTOP to child death %" PRId64
                         " ms; margin before t_stop + TTL %" PRId64
                         " ms; before t_stop + 2/3 TTL %" PRId64 " ms",
                         what, eff_ttl, t_dead - t_stop,
                         t_stop + eff_ttl - t_dead,
                         t_stop + eff_ttl * 2 / 3 - t_dead);
        }
        ok(t_dead >= 0 && t_dead < t_stop + LOSS_TTL,
           "lock --ttl %d (%s), every node stopped: the command is dead "
           "within %d ms of SIGSTOP",
           LOSS_TTL, what, LOSS_TTL);
        ok(t_dead >= 0 && t_dead < t_stop + eff_ttl,
           "lock (%s), every node stopped: the command is dead before the "
           "session (TTL %" PRId64 " ms) could expire",
           what, eff_ttl);

        proc_wait(&p, RUN_MS);
        if (!ok(p.status == 121 && strstr(p.err, "lost") != NULL,
                "lock (%s): batonctl exits 121 and says the lock was lost",
                what)) {
                proc_show(&p);
        } else {
                tap_diag("batonctl exited %" PRId64 " ms after SIGSTOP",
                         p.started_ms + p.elapsed_ms - t_stop);
        }

        resume_and_expire(name, what, eff_ttl);
}

static void cleanup(void)
{
        if (stray_child > 0 && !proc_gone(stray_child)) {
                kill(stray_child, SIGKILL);
        }
}

int main(int argc, char **argv)
{
        int64_t t0 = tclient_now_ms();
        unsigned leader;

        (void)argc;
        batonctl = ctlcluster_program("BATONCTL", "./batonctl");
        if (batonctl == NULL) {
                return 0;
        }
        atexit(cleanup);
        if (ctlcluster_open(&cluster, argv[0], WATCHDOG_S, &leader) != 0) {
                return 1;
        }
        tap_diag("cluster %s, leader %u, batonctl %s", cluster.endpoints,
                 leader, batonctl);

        lock_lost(false);
        lock_lost(true);

        return ctlcluster_close(&cluster, &tap, false, t0);
}
