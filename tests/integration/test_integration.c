/* Integration tests against real batond processes on 127.0.0.1, printing
 * TAP; and a failover measurement mode. */
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "failover.h"
#include "harness.h"
#include "sc_faults.h"
#include "sc_holder.h"
#include "sc_sessions.h"
#include "sc_install.h"
#include "sc_load.h"
#include "sc_metrics.h"
#include "sc_locking.h"
#include "sc_malformed.h"
#include "sc_owner.h"
#include "sc_membership.h"
#include "sc_tls.h"
#include "sc_watch.h"
#include "scenario.h"

/*
 * Every scenario runs on a 3-node and on a 5-node cluster. One cluster per
 * size serves all its scenarios: a scenario that kills nodes restarts them
 * and waits until every node follows the leader and has caught up before
 * it ends, and a scenario that finds the cluster unhealthy gets a fresh
 * one. After every scenario the nodes' apply logs must agree on every index
 * they both applied (docs/chaos.md, S9) and no node may have exited on its own.
 *
 * Every node serves metrics (the harness gives each a metrics address). The
 * membership scenario leaves the node it added and removed behind as a
 * stopped node n + 1 of the harness, so S9 keeps comparing its apply log;
 * the connection-limit scenario restarts a follower with
 * --max-connections 2 and then without.
 *
 * Waits are bounded polls (STATUS, QUERY) or client deadlines, never bare
 * sleeps. TTLs are short but never below the server's minimum (2 x the
 * default 300 ms election timeout). A watchdog (BATON_TEST_WATCHDOG
 * seconds, default 170), re-armed at the start of every scenario, bails out
 * of a scenario that hangs; every node is killed by PID on any exit.
 *
 * Environment: BATOND (the binary; default ./batond), BATON_TEST_BASE_PORT
 * (default 17000 + 100 * (pid % 50); each cluster of a run takes the next
 * free block of 20 ports that no other run has claimed), BATON_TEST_TMPDIR
 * (default /tmp).
 *
 * --failover-rounds N kills the serving leader N times (restarting it on
 * its data dir and waiting for every node to catch up between rounds) and
 * prints the time from kill() to the next granted ACQUIRE, retried with
 * the same seq across all endpoints with 300 ms tries (failover.c); not in
 * make check.
 *
 * This file holds the scenario table and runs it. The scenarios are in
 * sc_locking.c (grants, waiters, expiry, tokens, TTLs, LIST), sc_faults.c
 * (kill -9, SIGSTOP, SIGTERM, retries), sc_membership.c (redirects, a node
 * added and removed), sc_malformed.c (bad frames and names), sc_load.c
 * (many clients, metrics, limits, backpressure), sc_watch.c (a watch on
 * a follower that installs a snapshot) and sc_install.c (a follower's
 * directory as a kill during an install leaves it); they are written with the
 * context and steps of scenario.h, the hand-made frames of rawframe.h and
 * the Prometheus text checker of prom.h. A failure prints the line of the
 * scenario's file that failed, and its TAP line names the scenario.
 */

#define WATCHDOG_S 170

struct scenario {
        const char *name;
        void (*fn)(struct ctx *x);
};

static const struct scenario scenarios[] = {
    {"acquire/release", sc_acquire_release},
    {"concurrent clients (batched entries): all nodes apply the same",
     sc_concurrent},
    {"32 clients at once: every command applied and answered exactly once",
     sc_counted},
    {"try-lock answers BUSY with the holder's token", sc_try_busy},
    {"a blocked waiter is granted on release with a higher token", sc_waiter},
    {"session expiry frees the lock and grants the waiter", sc_expiry},
    {"lock-delay: an expired holder's lock waits out the delay, a released "
     "one does not",
     sc_lock_delay},
    {"kill -9 of the leader: the holder keeps its lock and token",
     sc_kill_leader_holder},
    {"kill -9 of the leader: a queued waiter is granted after the release",
     sc_kill_leader_waiter},
    {"SIGSTOP of the leader: a new leader serves, the old one follows",
     sc_pause_leader},
    {"restart of every node: state intact, tokens keep rising", sc_restart_all},
    {"retries after a leader kill: no double grant, no double release",
     sc_retry_exactly_once},
    {"malformed frames: ERROR, close, the node keeps serving", sc_malformed},
    {"foreign session: EPERM without its secret, the holder untouched",
     sc_foreign_session},
    {"a version 1 frame: ERROR EVERSION in a version 1 header", sc_old_version},
    {"bad and oversized names: ENAME, the connection stays usable", sc_names},
    {"stale tokens: ESTALE", sc_stale},
    {"client names: QUERY and LIST show build-42 when asked, old bytes if not",
     sc_client_names},
    {"session list: pages by id, one session's locks and waits, closed "
     "ones gone, the read role may list",
     sc_sessions},
    {"followers answer NOT_LEADER with the leader's client address",
     sc_not_leader},
    {"LIST of a prefix: exactly its locks, in age order; followers redirect",
     sc_list},
    {"TTL outside [2 x election timeout, max]: ETTL", sc_ttl},
    {"MEMBER_ADD of a joining node, directory replicated, MEMBER_REMOVE",
     sc_membership},
    {"SIGTERM of the leader: handover, exit 0, lock and token kept",
     sc_term_leader},
    {"SIGTERM of every node at once: each exits 0 within the bound",
     sc_term_all},
    {"TRANSFER to a follower that is behind: it leads once caught up",
     sc_transfer_lagging},
    {"a waiter's deadline: ETIMEDOUT, never granted, same answer on retry",
     sc_wait_deadline},
    {"metrics: Prometheus text, baton_is_leader, request counters", sc_metrics},
    {"metrics: build_info, process_*, leader and voters, disk writes, the "
     "certificate's notAfter, on every node",
     sc_metrics_node},
    {"metrics: EBUSY results, acquire waits, holds, revokes, keepalive gaps "
     "and expiries counted",
     sc_metrics_grants},
    {"--max-connections 2: the third connection gets ERROR ETOOMANYCONNS",
     sc_conn_limit},
    {"pipelined PINGs left unread: backpressure, bounded RSS, PONGs in order",
     sc_backpressure},
    {"TLS: plain text, another CA, expired: refused; the holder's lock kept",
     sc_tls_refused},
    {"TLS: per-address cap, handshake timeout for a silent socket",
     sc_tls_limits},
    {"TLS: new certificates on SIGHUP for new connections, old ones kept",
     sc_tls_rotation},
    {"metrics port: connection cap, deadline for silent ones, TLS if asked",
     sc_metrics_guarded},
    {"TLS roles: read may look, not lock; lock may lock, not administer",
     sc_tls_roles},
    {"TLS raft port: another node's, another CA's certificate: out; an "
     "expired one: refused at start",
     sc_tls_impostor},
    {"a watch on a follower that installs the leader's snapshot ends "
     "ECOMPACTED at once; watches from then on are gapless",
     sc_watch_restore},
    {"a follower killed between writing an installed snapshot and removing "
     "its old segments starts at once and catches up",
     sc_install_cut_short},
};

#define N_SCENARIOS (sizeof scenarios / sizeof scenarios[0])

/* --- Running
 * ------------------------------------------------------------------ */

static bool selected(const struct run *r, const struct scenario *s)
{
        return r->only == NULL || strstr(s->name, r->only) != NULL;
}

/* Stop the cluster and look through its logs (L4) before they go. */
static void close_cluster(struct ctx *x)
{
        char first[256];
        unsigned n;

        harness_stop(&x->h);
        n = harness_scan_logs(&x->h, first, sizeof first);
        if (n > 0) {
                printf("# %u sanitizer or assertion reports in the logs of "
                       "%s, first: %s\n",
                       n, x->h.dir, first);
                x->log_reports += n;
                x->h.failed = true;
        }
        x->clusters++;
        harness_close(&x->h);
        x->have_cluster = false;
}

static bool fresh_cluster(struct ctx *x)
{
        unsigned leader;

        if (x->have_cluster) {
                close_cluster(x);
        }
        if (harness_start(&x->h, x->n, NULL, x->run->argv0,
                          x->run->base_port) != 0) {
                snprintf(x->why, sizeof x->why, "cannot start the cluster: %s",
                         x->h.errmsg);
                x->h.failed = true;
                harness_close(&x->h);
                return false;
        }
        x->h.keep = x->run->keep;
        x->have_cluster = true;
        x->max_index = 0;
        if (harness_wait_healthy(&x->h, HEALTHY_MS, &leader) != 0) {
                snprintf(x->why, sizeof x->why, "new cluster: %s", x->h.errmsg);
                x->h.failed = true;
                return false;
        }
        printf("# %u-node cluster in %s, clients on %s; leader %u\n", x->n,
               x->h.dir, x->h.endpoints, leader);
        return true;
}

static void run_scenario(struct ctx *x, const struct scenario *s)
{
        int64_t t0 = tclient_now_ms();
        unsigned compared = 0, bad, node = 0;

        harness_rearm_watchdog();
        x->ok = true;
        x->why[0] = '\0';
        if (x->diverged) {
                /* Its apply logs would fail every later S9 check. */
                printf("# the last cluster diverged: starting a fresh one\n");
        }
        if (!x->have_cluster || x->diverged ||
            harness_wait_healthy(&x->h, HEALTHY_MS, NULL) != 0) {
                x->diverged = false;
                if (x->have_cluster) {
                        printf("# cluster unhealthy (%s): starting a fresh "
                               "one\n",
                               x->h.errmsg);
                }
                if (!fresh_cluster(x)) {
                        x->ok = false;
                }
        }
        if (x->ok) {
                s->fn(x);
        }
        if (x->have_cluster) {
                if (harness_reap(&x->h) > 0) {
                        fail_at(x, __LINE__, "a node exited on its own");
                }
                if (harness_check_apply_logs(&x->h, &compared) != 0) {
                        fail_at(x, __LINE__, "S9: %s", x->h.errmsg);
                        x->diverged = true;
                }
                /* The gateway proposes only commands that decode: one
                 * that does not was corrupted on its way (unpadded entries
                 * do that, docs/raft.md). */
                bad = harness_undecodable_entries(&x->h, &node);
                if (bad > 0) {
                        fail_at(x, __LINE__,
                                "node %u applied committed entries that do "
                                "not decode (%u in all)",
                                node, bad);
                        x->diverged = true;
                }
        }
        x->run->tap++;
        if (x->ok) {
                printf("ok %u - %u nodes: %s (%" PRId64 " ms, S9: %u "
                       "comparisons)\n",
                       x->run->tap, x->n, s->name, tclient_now_ms() - t0,
                       compared);
        } else {
                x->run->failed++;
                x->h.failed = true;
                printf("not ok %u - %u nodes: %s: %s\n", x->run->tap, x->n,
                       s->name, x->why);
        }
        fflush(stdout);
}

static void run_size(struct run *r, unsigned n)
{
        struct ctx x;
        unsigned i;

        memset(&x, 0, sizeof x);
        x.run = r;
        x.n = n;
        for (i = 0; i < N_SCENARIOS; i++) {
                if (selected(r, &scenarios[i])) {
                        run_scenario(&x, &scenarios[i]);
                }
        }
        if (x.have_cluster) {
                close_cluster(&x);
        }
        /* Shutdown is when LeakSanitizer speaks: checked once all is down. */
        r->tap++;
        if (x.log_reports == 0) {
                printf("ok %u - %u nodes: no sanitizer or assertion report in "
                       "the logs of %u cluster(s) (L4)\n",
                       r->tap, n, x.clusters);
        } else {
                r->failed++;
                printf("not ok %u - %u nodes: %u sanitizer or assertion "
                       "reports in the node logs (L4)\n",
                       r->tap, n, x.log_reports);
        }
}

/* --- main
 * ------------------------------------------------------------------------ */

static void usage(FILE *out)
{
        fprintf(out,
                "usage: test_integration [--nodes 3|5] [--only TEXT] [--keep]\n"
                "                        [--base-port PORT]\n"
                "       test_integration --failover-rounds N [--nodes 3|5]\n\n"
                "Runs batond clusters on 127.0.0.1 (batond from $BATOND or "
                "./batond)\nand prints TAP; ports from $BATON_TEST_BASE_PORT "
                "or 17000 + 100 * (pid %% 50);\ndata and logs under "
                "$BATON_TEST_TMPDIR or /tmp, kept when a test fails\n"
                "(--keep: always). --only runs the scenarios whose name "
                "contains TEXT.\n");
}

int main(int argc, char **argv)
{
        struct run r;
        unsigned sizes[2] = {3, 5}, n_sizes = 2, rounds = 0, i, planned = 0;
        const char *wd = getenv("BATON_TEST_WATCHDOG");
        int a;

        memset(&r, 0, sizeof r);
        r.argv0 = argv[0];
        for (a = 1; a < argc; a++) {
                if (strcmp(argv[a], "--nodes") == 0 && a + 1 < argc) {
                        sizes[0] = (unsigned)atoi(argv[++a]);
                        n_sizes = 1;
                        if (sizes[0] != 3 && sizes[0] != 5) {
                                fprintf(stderr, "--nodes: 3 or 5\n");
                                return 2;
                        }
                } else if (strcmp(argv[a], "--failover-rounds") == 0 &&
                           a + 1 < argc) {
                        rounds = (unsigned)atoi(argv[++a]);
                } else if (strcmp(argv[a], "--only") == 0 && a + 1 < argc) {
                        r.only = argv[++a];
                } else if (strcmp(argv[a], "--base-port") == 0 &&
                           a + 1 < argc) {
                        r.base_port = atoi(argv[++a]);
                } else if (strcmp(argv[a], "--keep") == 0) {
                        r.keep = true;
                } else {
                        usage(strcmp(argv[a], "--help") == 0 ? stdout : stderr);
                        return strcmp(argv[a], "--help") == 0 ? 0 : 2;
                }
        }
        setvbuf(stdout, NULL, _IOLBF, 0);
        if (rounds > 0) {
                harness_setup_process(0);
                return failover(&r, n_sizes == 1 ? sizes[0] : 3, rounds);
        }
        harness_setup_process(wd != NULL ? (unsigned)atoi(wd) : WATCHDOG_S);
        for (i = 0; i < N_SCENARIOS; i++) {
                planned += selected(&r, &scenarios[i]) ? n_sizes : 0;
        }
        planned += n_sizes; /* the logs of each size's clusters (L4) */
        printf("1..%u\n", planned);
        for (i = 0; i < n_sizes; i++) {
                run_size(&r, sizes[i]);
        }
        printf("# %u of %u failed\n", r.failed, planned);
        return r.failed == 0 ? 0 : 1;
}
