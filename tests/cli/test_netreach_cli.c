/*
 * batonctl names what is wrong with the network between it and a node:
 * a port that refuses ("connection refused"), an address without a route
 * ("unreachable: no route to host"), one whose packets are dropped
 * ("timed out: no connection within 1000 ms"), and a leader that the
 * nodes name but that cannot be reached ("cannot connect to the leader",
 * its address and why, rather than "timed out waiting for an answer").
 *
 * Runs in a network namespace of its own (unshare, as root), where it
 * adds an unreachable route and nftables DROP rules that vanish with the
 * namespace when the program ends; without root or nft it skips. The
 * cluster is tests/integration/harness's, started inside the namespace.
 * The built batonctl is $BATONCTL, or ./batonctl in the build dir.
 * Environment as the integration tests (BATOND, BATON_TEST_BASE_PORT,
 * BATON_TEST_TMPDIR, BATON_TEST_TLS, BATON_TEST_WATCHDOG). Prints TAP.
 */
#include <inttypes.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../integration/harness.h"
#include "../integration/lonenode.h"
#include "../lib/proc.h"
#include "../lib/tap.h"
#include "../lib/tclient.h"
#include "ctlcluster.h"

#define WATCHDOG_S 180
#define RUN_MS     30000 /* a batonctl run that must end on its own */
#define PROMPT_MS  5000  /* a connection failure ends this soon */
#define LONG       "15000"
#define SHORT      "3000" /* --timeout of a run that must wait it out */
#define SHORT_MS   3000
#define NO_ROUTE   "10.9.9.1" /* in the namespace's unreachable route */
#define DROPPED    "127.0.0.9"

static struct harness cluster;
static const char *batonctl = "./batonctl";
static struct tap tap;
#define ok(...) tap_ok(&tap, __VA_ARGS__)

/* batonctl with the NULL-terminated arguments that follow, run to its
 * end. */
#define ctl(r, ...) ctlcluster_ctl((r), batonctl, NULL, RUN_MS, __VA_ARGS__)

/* Run a shell command (the namespace's network setup); whether it
 * succeeded. */
static bool sh(const char *fmt, ...)
{
        char cmd[512];
        va_list ap;
        int rv;

        va_start(ap, fmt);
        vsnprintf(cmd, sizeof cmd, fmt, ap);
        va_end(ap);
        rv = system(cmd);
        if (rv != 0) {
                printf("# `%s` failed (%d)\n", cmd, rv);
        }
        return rv == 0;
}

/* A network namespace of this process's own, with lo up, an unreachable
 * route and an nftables table for DROP rules. */
static bool private_network(void)
{
        if (geteuid() != 0 || unshare(CLONE_NEWNET) != 0) {
                return false;
        }
        return sh("ip link set lo up") &&
               sh("ip route add unreachable %s/32", NO_ROUTE) &&
               sh("nft add table inet netreach") &&
               sh("nft add chain inet netreach in '{ type filter hook input "
                  "priority 0; }'");
}

/* Exit status `status` within `within_ms`, and one line on stderr
 * starting "batonctl: `what`: " that says each of the NULL-terminated
 * strings. */
static void expect(const struct proc *r, int status, int64_t within_ms,
                   const char *name, const char *what, ...)
{
        va_list ap;

        va_start(ap, what);
        ctlcluster_one_line(&tap, r, status, within_ms, name, what, ap);
        va_end(ap);
}

/* Refused, unreachable and timed out, each named. */
static void endpoints(void)
{
        char refused[32], dropped[32], unroutable[32], want[96];
        struct proc r;

        snprintf(refused, sizeof refused, "127.0.0.1:%u", lonenode_free_port());
        ctl(&r, "--endpoints", refused, "--timeout", LONG, "holder", "x", NULL);
        expect(&r, 3, PROMPT_MS, "a port that refuses", "holder", refused,
               "connection refused", NULL);

        snprintf(unroutable, sizeof unroutable, "%s:7101", NO_ROUTE);
        snprintf(want, sizeof want, "%s: unreachable: no route to host",
                 unroutable);
        ctl(&r, "--endpoints", unroutable, "--timeout", LONG, "holder", "x",
            NULL);
        expect(&r, 3, PROMPT_MS, "an address without a route", "holder", want,
               NULL);

        snprintf(dropped, sizeof dropped, "%s:7101", DROPPED);
        snprintf(want, sizeof want, "%s: timed out: no connection within",
                 dropped);
        if (!sh("nft add rule inet netreach in ip daddr %s drop", DROPPED)) {
                ok(false, "a DROP rule for %s", DROPPED);
                return;
        }
        ctl(&r, "--endpoints", dropped, "--timeout", LONG, "holder", "x", NULL);
        expect(&r, 3, PROMPT_MS, "an address whose packets are dropped",
               "holder", want, NULL);
}

/* The followers name a leader whose client port drops packets: the run
 * says so, naming its address, not only "timed out". */
static void unreachable_leader(unsigned leader)
{
        const char *addr = cluster.nodes[leader - 1].client_address;
        const char *port = strrchr(addr, ':');
        char eps[2 * HARNESS_ADDR_MAX + 2] = "", want[128];
        struct proc r;
        unsigned i;

        for (i = 1; i <= cluster.n; i++) {
                if (i != leader) {
                        snprintf(eps + strlen(eps), sizeof eps - strlen(eps),
                                 "%s%s", eps[0] != '\0' ? "," : "",
                                 cluster.nodes[i - 1].client_address);
                }
        }
        if (port == NULL ||
            !sh("nft add rule inet netreach in tcp dport %s drop", port + 1)) {
                ok(false, "a DROP rule for the leader's client port %s", addr);
                return;
        }
        snprintf(want, sizeof want, "the leader they name, %s: timed out",
                 addr);
        ctl(&r, "--endpoints", eps, "--timeout", SHORT, "lock", "x", "--",
            "true", NULL);
        /* 125: batonctl lock's own failure (the session's request went to
         * a follower, so its outcome counts as unknown). */
        expect(&r, 125, SHORT_MS + PROMPT_MS,
               "the leader the followers name drops packets", "acquire",
               "cannot connect to the leader", want, NULL);
        sh("nft flush chain inet netreach in");
}

int main(int argc, char **argv)
{
        const char *env = getenv("BATONCTL");
        unsigned leader;

        (void)argc;
        if (env != NULL && env[0] != '\0') {
                batonctl = env;
        }
        setvbuf(stdout, NULL, _IOLBF, 0);
        printf("TAP version 13\n");
        if (!private_network()) {
                printf("1..0 # SKIP needs root, unshare(CLONE_NEWNET) and "
                       "nft\n");
                return 0;
        }
        if (ctlcluster_open(&cluster, argv[0], WATCHDOG_S, &leader) != 0) {
                return 1;
        }
        endpoints();
        unreachable_leader(leader);
        harness_close(&cluster);
        return tap_plan(&tap);
}
