/* How batond's raft transports dial (src/server/raft/rafttcp.h), on real batond
 * processes on 127.0.0.1 with TLS (BATON_TEST_TLS=off: without), printing
 * TAP: a member whose raft address does not resolve is dialled again and
 * again, each failure logged at debug level and the episode warned about
 * once, while the other nodes keep serving.
 * Environment as test_integration (BATOND, BATON_TEST_BASE_PORT,
 * BATON_TEST_TMPDIR, BATON_TEST_WATCHDOG). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "scenario.h"

#define WATCHDOG_S 180
#define RESOLVES   20    /* failed lookups the leader must live through */
#define RESOLVE_MS 60000 /* for them, about one per heartbeat */

/*
 * Nodes 1 and 2 bootstrap a cluster whose member 3 has a raft address in
 * .invalid (RFC 6761: it never resolves) and node 3 never runs. The
 * leader dials node 3 at every heartbeat and each lookup fails; the
 * node must log each and live on, and the two must serve a lock.
 */
static void sc_unresolvable(struct ctx *x)
{
        /* Each failure at debug level; the warning once (peerreach.h). */
        const char *cause = "name does not resolve";
        const char *const debug[] = {"--log-level", "debug"};
        char warned[160];
        struct harness *h = &x->h;
        struct tclient c;
        char addr[HARNESS_ADDR_MAX], name[64], *port;
        unsigned leader, id, seen = 0;
        uint64_t token;
        int64_t deadline;

        for (id = 1; id <= 3; id++) {
                EXPECT(x, harness_kill(h, id, NULL) == 0, "kill node %u: %s",
                       id, h->errmsg);
        }
        port = strrchr(h->nodes[2].raft_address, ':');
        EXPECT(x, port != NULL, "raft address %s", h->nodes[2].raft_address);
        snprintf(addr, sizeof addr, "node3.invalid%s", port);
        snprintf(h->nodes[2].raft_address, sizeof h->nodes[2].raft_address,
                 "%s", addr);
        /* New directories, so that the member lines bootstrap anew. */
        for (id = 1; id <= 2; id++) {
                struct harness_node *nd = &h->nodes[id - 1];
                snprintf(nd->data_dir, sizeof nd->data_dir, "%s/unresolved%u",
                         h->dir, id);
                snprintf(nd->apply_log, sizeof nd->apply_log,
                         "%s/unresolved-apply%u.log", h->dir, id);
                EXPECT(x, harness_set_flags(h, id, debug, 2) == 0, "flags: %s",
                       h->errmsg);
                EXPECT(x, harness_restart(h, id) == 0, "restart node %u: %s",
                       id, h->errmsg);
        }
        EXPECT(x, harness_wait_leader(h, HEALTHY_MS, &leader) == 0,
               "nodes 1 and 2 with member 3 at %s: %s", addr, h->errmsg);
        deadline = tclient_now_ms() + RESOLVE_MS;
        while (seen < RESOLVES && tclient_now_ms() < deadline) {
                EXPECT(x, harness_reap(h) == 0 && harness_running(h, leader),
                       "node %u exited after %u failed lookups of %s", leader,
                       seen, addr);
                poll_pause();
                seen = harness_log_count(h, leader, cause);
        }
        printf("# node %u logged %u failed lookups of %s\n", leader, seen,
               addr);
        EXPECT(x, seen >= RESOLVES, "%u failed lookups logged in %d ms", seen,
               RESOLVE_MS);
        snprintf(warned, sizeof warned,
                 "raft peer node 3 at %s cannot be reached: name does not "
                 "resolve",
                 addr);
        seen = harness_log_count(h, leader, warned);
        EXPECT(x, seen == 1, "\"%s\" logged %u times, not once", warned, seen);
        EXPECT(x,
               harness_reap(h) == 0 && harness_running(h, 1) &&
                   harness_running(h, 2),
               "node 1 or 2 exited");
        lock_name(x, name, sizeof name, "unresolved");
        OPEN(x, &c, TTL_MS);
        GRANT(x, token, &c, name);
        RELEASE(x, &c, name, token);
        tclient_close(&c);
}

int main(int argc, char **argv)
{
        const char *wd = getenv("BATON_TEST_WATCHDOG");
        struct run r;
        struct ctx x;
        char first[256];
        int64_t t0;

        (void)argc;
        memset(&r, 0, sizeof r);
        memset(&x, 0, sizeof x);
        r.argv0 = argv[0];
        x.run = &r;
        x.n = 3;
        x.ok = true;
        setvbuf(stdout, NULL, _IOLBF, 0);
        harness_setup_process(wd != NULL ? (unsigned)atoi(wd) : WATCHDOG_S);
        printf("1..2\n");
        t0 = tclient_now_ms();
        if (harness_start(&x.h, 3, NULL, r.argv0, 0) != 0) {
                fail_at(&x, __LINE__, "a new cluster: %s", x.h.errmsg);
        } else {
                sc_unresolvable(&x);
        }
        printf("%s 1 - a member whose raft address does not resolve: dialled "
               "again and again, the others serve (%" PRId64 " ms)%s%s\n",
               x.ok ? "ok" : "not ok", tclient_now_ms() - t0, x.ok ? "" : ": ",
               x.why);
        harness_stop(&x.h);
        if (harness_scan_logs(&x.h, first, sizeof first) > 0) {
                printf("not ok 2 - no sanitizer or assertion report in the "
                       "logs: %s\n",
                       first);
                x.ok = false;
        } else {
                printf("ok 2 - no sanitizer or assertion report in the logs\n");
        }
        x.h.failed = !x.ok;
        harness_close(&x.h);
        return x.ok ? 0 : 1;
}
