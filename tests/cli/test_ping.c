/*
 * batonctl ping against a live 3-node cluster (tests/integration/harness):
 * it names the serving leader (endpoint, id, term, round trip) as text and
 * as JSON, also when asked through a follower alone; with nothing
 * listening it fails at once with one line naming the reason (exit 3); a
 * leader whose followers are all paused, which cannot serve, does not
 * count (exit 3 after --timeout, and after --wait when given: it kept
 * asking); and `ping --wait` started meanwhile answers once the followers
 * are back. Its arguments are checked as every command's. Prints TAP.
 *
 * The built batonctl is $BATONCTL, or ./batonctl in the build dir. Every
 * wait is bounded; a watchdog (BATON_TEST_WATCHDOG seconds, default 180)
 * bails out of a hung run, and the harness kills every node by PID on any
 * exit. Environment as the integration tests: BATOND,
 * BATON_TEST_BASE_PORT, BATON_TEST_TMPDIR, BATON_TEST_TLS.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../integration/harness.h"
#include "../integration/lonenode.h"
#include "../lib/proc.h"
#include "../lib/tap.h"
#include "../lib/tclient.h"
#include "ctlcluster.h"

#define WATCHDOG_S 180
#define RUN_MS     60000 /* a batonctl run that must end on its own */
#define PROMPT_MS  5000  /* a connection failure ends this soon */
#define WAIT_MS    2500  /* --wait of a run no leader can answer */
#define BACK_MS    30000 /* the paused followers serve again by then */

static struct harness cluster;
static const char *batonctl = "./batonctl";
static struct tap tap;
#define ok(...) tap_ok(&tap, __VA_ARGS__)

/* batonctl with the NULL-terminated arguments that follow, run to its
 * end. */
#define ctl(r, ...) ctlcluster_ctl((r), batonctl, NULL, RUN_MS, __VA_ARGS__)

/* Every node's client address but node `skip`'s (0: none skipped). */
static void endpoints_but(unsigned skip, char *buf, size_t cap)
{
        size_t at = 0;

        buf[0] = '\0';
        for (unsigned i = 1; i <= cluster.n && at < cap; i++) {
                if (i != skip) {
                        at += (size_t)snprintf(
                            buf + at, cap - at, "%s%s", at > 0 ? "," : "",
                            harness_client_address(&cluster, i));
                }
        }
}

/* The node whose line the run `r` printed, "ENDPOINT id=ID term=T
 * rtt_us=N", with ENDPOINT that node's client address, a term and a round
 * trip, alone on stdout, exiting 0; else 0. */
static unsigned served_by(const struct proc *r)
{
        char ep[64], rest[8];
        uint64_t id = 0, term = 0;
        int64_t rtt = -1;
        const char *nl = strchr(r->out, '\n');

        if (r->status != 0 || nl == NULL || nl[1] != '\0' ||
            sscanf(r->out,
                   "%63s id=%" SCNu64 " term=%" SCNu64 " rtt_us=%" SCNd64 "%7s",
                   ep, &id, &term, &rtt, rest) != 4) {
                return 0;
        }
        if (id < 1 || id > cluster.n || term < 1 || rtt < 0 ||
            strcmp(ep, harness_client_address(&cluster, (unsigned)id)) != 0) {
                return 0;
        }
        return (unsigned)id;
}

/* Through every endpoint, through a follower alone, and as JSON. */
static void serving(unsigned leader)
{
        char eps[3 * (HARNESS_ADDR_MAX + 1)], want[128];
        unsigned follower = leader % cluster.n + 1;
        struct proc r;

        endpoints_but(0, eps, sizeof eps);
        ctl(&r, "--endpoints", eps, "ping", NULL);
        if (!ok(served_by(&r) == leader,
                "ping names the leader, node %u: its endpoint, id, term and "
                "round trip",
                leader)) {
                proc_show(&r);
        } else {
                printf("# %s", r.out);
        }

        ctl(&r, "--endpoints", harness_client_address(&cluster, follower),
            "ping", NULL);
        if (!ok(served_by(&r) == leader,
                "ping through follower %u alone names the leader, node %u",
                follower, leader)) {
                proc_show(&r);
        }

        ctl(&r, "--endpoints", eps, "--json", "ping", NULL);
        snprintf(want, sizeof want, "{\"endpoint\":\"%s\",\"id\":%u,\"term\":",
                 harness_client_address(&cluster, leader), leader);
        if (!ok(r.status == 0 && strncmp(r.out, want, strlen(want)) == 0 &&
                    strstr(r.out, ",\"rtt_us\":") != NULL &&
                    strcmp(r.out + strlen(r.out) - 2, "}\n") == 0,
                "--json ping: one object with the leader's endpoint, id, "
                "term and rtt_us")) {
                proc_show(&r);
        }
}

/* Exit status `status` within `within_ms`, and one line on stderr
 * starting "batonctl: ping: " that says each of the NULL-terminated
 * strings. */
static void expect(const struct proc *r, int status, int64_t within_ms,
                   const char *name, ...)
{
        va_list ap;

        va_start(ap, name);
        ctlcluster_one_line(&tap, r, status, within_ms, name, "ping", ap);
        va_end(ap);
}

/* Nothing listening: exit 3 at once, one line naming the reason. */
static void nothing_listening(void)
{
        char eps[64];
        struct proc r;

        snprintf(eps, sizeof eps, "127.0.0.1:%u,127.0.0.1:%u",
                 lonenode_free_port(), lonenode_free_port());
        ctl(&r, "--endpoints", eps, "--timeout", "15000", "ping", NULL);
        expect(&r, 3, PROMPT_MS, "no node listening",
               "cannot connect to any node", "connection refused", NULL);
        ok(r.out[0] == '\0', "no node listening: nothing on stdout");
}

/* Pause or resume every node but `leader`; whether all went. */
static bool followers(unsigned leader, bool pause)
{
        bool good = true;

        for (unsigned i = 1; i <= cluster.n; i++) {
                if (i != leader) {
                        good = (pause ? harness_pause(&cluster, i)
                                      : harness_resume(&cluster, i)) == 0 &&
                               good;
                }
        }
        return good;
}

/* The followers paused: the leader cannot confirm its leadership, so a
 * ping fails after --timeout, and after --wait when given (each try
 * within --timeout, again and again); a ping with a long --wait started
 * meanwhile answers once they are back. */
static void no_majority(unsigned leader)
{
        char eps[3 * (HARNESS_ADDR_MAX + 1)];
        const char *args[] = {"--endpoints", eps,     "--timeout", "1000",
                              "--wait",      "60000", "ping",      NULL};
        struct proc r, waiting;
        unsigned now_leader = 0;

        endpoints_but(0, eps, sizeof eps);
        if (!ok(followers(leader, true), "pause every node but leader %u",
                leader)) {
                return;
        }
        ctl(&r, "--endpoints", eps, "--timeout", "1000", "ping", NULL);
        expect(&r, 3, 1000 + PROMPT_MS,
               "no majority: ping fails after --timeout, saying why",
               "timed out", NULL);
        ctl(&r, "--endpoints", eps, "--timeout", "500", "--wait", "2500",
            "ping", NULL);
        expect(&r, 3, WAIT_MS + 500 + PROMPT_MS,
               "no majority: ping --wait fails when the wait is over",
               "timed out", NULL);
        if (!ok(r.elapsed_ms >= WAIT_MS,
                "no majority: ping --wait %d kept asking for the whole wait "
                "(%" PRId64 " ms)",
                WAIT_MS, r.elapsed_ms)) {
                proc_show(&r);
        }

        if (!ok(proc_start(&waiting, batonctl, 0, NULL, args) == 0,
                "start ping --wait 60000 while no majority is up")) {
                followers(leader, false);
                return;
        }
        /* Still asking a second later: nothing can answer yet. (Its
         * output read meanwhile, in case it does answer.) */
        while (tclient_now_ms() - waiting.started_ms < 1000) {
                proc_read(&waiting, 50);
        }
        ok(!proc_gone(waiting.pid) && waiting.n_out == 0,
           "ping --wait is still asking while no majority is up");
        ok(followers(leader, false), "resume the followers");
        proc_wait(&waiting, BACK_MS + RUN_MS);
        if (harness_wait_leader(&cluster, BACK_MS, &now_leader) != 0) {
                printf("# %s\n", cluster.errmsg);
        }
        /* Leadership may have moved since it answered: any node, named
         * by its own endpoint. */
        if (!ok(served_by(&waiting) != 0,
                "ping --wait answers once the followers are back, naming "
                "a leader (node %u leads now)",
                now_leader)) {
                proc_show(&waiting);
        }
}

/* ping takes no operand, and --wait only as a number. */
static void usage(void)
{
        struct proc r;

        ctl(&r, "ping", "x", NULL);
        ok(r.status == 2 && strstr(r.err, "ping: unexpected argument") != NULL,
           "ping x: a usage error (exit 2)");
        ctl(&r, "ping", "--wait", "soon", NULL);
        ok(r.status == 2 && strstr(r.err, "--wait: \"soon\"") != NULL,
           "ping --wait soon: a usage error (exit 2)");
        ctl(&r, "ping", "--shared", NULL);
        ok(r.status == 2 &&
               strstr(r.err, "--shared is not an option of ping") != NULL,
           "ping --shared: a usage error (exit 2)");
}

int main(int argc, char **argv)
{
        int64_t started = tclient_now_ms();
        unsigned leader;

        (void)argc;
        batonctl = ctlcluster_program("BATONCTL", "./batonctl");
        if (batonctl == NULL) {
                return 0;
        }
        printf("TAP version 13\n");
        if (ctlcluster_open(&cluster, argv[0], WATCHDOG_S, &leader) != 0) {
                return 1;
        }
        usage();
        serving(leader);
        nothing_listening();
        no_majority(leader);
        if (harness_wait_healthy(&cluster, CTLCLUSTER_HEALTHY_MS, &leader) !=
            0) {
                ok(false, "the cluster is healthy again: %s", cluster.errmsg);
        }
        return ctlcluster_close(&cluster, &tap, true, started);
}
