/* Network faults between batond nodes, on real processes on 127.0.0.1 with
 * TLS (BATON_TEST_TLS=off: without), printing TAP: a peer whose raft port
 * refuses is logged once per episode, from the first start on, and once
 * when it is reached again; a member removed from the cluster, follower or
 * leader, learns it, says so and exits 0. Environment as test_integration
 * (BATOND, BATON_TEST_BASE_PORT, BATON_TEST_TMPDIR, BATON_TEST_WATCHDOG). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../include/baton.h"
#include "harness.h"
#include "scenario.h"
#include "tlsfiles.h"

#define WATCHDOG_S 240
#define QUIET_MS   3000 /* a dial about every heartbeat: ~60 in this time */

/* Poll node `id`'s log until it has at least `want` lines with `needle`,
 * for up to `ms`. The count. */
static unsigned await_lines(struct harness *h, unsigned id, const char *needle,
                            unsigned want, int ms)
{
        int64_t deadline = tclient_now_ms() + ms;
        unsigned n = 0;

        while ((n = harness_log_count(h, id, needle)) < want &&
               tclient_now_ms() < deadline) {
                poll_pause();
        }
        return n;
}

/* Start nodes `first`..`last` of the cluster on fresh directories named
 * `tag`, so that their member lines bootstrap anew. */
static bool fresh(struct ctx *x, unsigned first, unsigned last, const char *tag)
{
        struct harness *h = &x->h;
        unsigned id;

        for (id = first; id <= last; id++) {
                struct harness_node *nd = &h->nodes[id - 1];
                snprintf(nd->data_dir, sizeof nd->data_dir, "%s/%s%u", h->dir,
                         tag, id);
                snprintf(nd->apply_log, sizeof nd->apply_log,
                         "%s/%s-apply%u.log", h->dir, tag, id);
                if (harness_restart(h, id) != 0) {
                        fail_at(x, __LINE__, "start node %u: %s", id,
                                h->errmsg);
                        return false;
                }
        }
        return true;
}

/*
 * Nodes 1 and 2 start a new cluster whose member 3 is not running: its
 * raft port refuses. The leader logs that once, with node 3's id, address
 * and "refused", and not again while it dials on; once node 3 runs, one
 * line says it is reached again; killed, a second episode gets one line.
 */
static void sc_peer_refused(struct ctx *x)
{
        struct harness *h = &x->h;
        char down[160], up[160];
        unsigned leader, id, n;
        int64_t until;

        for (id = 1; id <= 3; id++) {
                EXPECT(x, harness_kill(h, id, NULL) == 0, "kill node %u: %s",
                       id, h->errmsg);
        }
        if (!fresh(x, 1, 2, "refused")) {
                return;
        }
        EXPECT(x, harness_wait_leader(h, HEALTHY_MS, &leader) == 0,
               "nodes 1 and 2 without node 3: %s", h->errmsg);
        snprintf(down, sizeof down,
                 "raft peer node 3 at %s cannot be reached: refused",
                 h->nodes[2].raft_address);
        snprintf(up, sizeof up, "raft peer node 3 at %s reached again",
                 h->nodes[2].raft_address);
        n = await_lines(h, leader, down, 1, HEALTHY_MS);
        EXPECT(x, n == 1,
               "node %u (leader) logged \"%s\" %u times, not once, at its "
               "first start",
               leader, down, n);
        /* The leader dials node 3 at every heartbeat meanwhile. */
        until = tclient_now_ms() + QUIET_MS;
        while (tclient_now_ms() < until) {
                poll_pause();
        }
        n = harness_log_count(h, leader, down);
        EXPECT(x, n == 1, "node %u logged \"%s\" %u times in one episode",
               leader, down, n);
        if (!fresh(x, 3, 3, "refused")) {
                return;
        }
        n = await_lines(h, leader, up, 1, HEALTHY_MS);
        EXPECT(x, n == 1, "node %u logged \"%s\" %u times once node 3 ran",
               leader, up, n);
        EXPECT(x, harness_kill(h, 3, NULL) == 0, "kill node 3: %s", h->errmsg);
        n = await_lines(h, leader, down, 2, HEALTHY_MS);
        EXPECT(x, n == 2,
               "node %u logged \"%s\" %u times after node 3 was killed (a "
               "second episode: 2 expected)",
               leader, down, n);
        printf("# node %u: \"%s\", once per episode\n", leader, down);
}

/* A socket listening on `address` (127.0.0.1:PORT) that never accepts:
 * connections complete in the kernel, and nothing answers on them. The
 * descriptor, or -1. */
static int silent_listener(const char *address)
{
        const char *port = strrchr(address, ':');
        struct sockaddr_in sa;
        int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

        if (fd < 0 || port == NULL) {
                return -1;
        }
        memset(&sa, 0, sizeof sa);
        sa.sin_family = AF_INET;
        sa.sin_port = htons((uint16_t)atoi(port + 1));
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 ||
            listen(fd, 64) != 0) {
                close(fd);
                return -1;
        }
        return fd;
}

/*
 * TLS: nodes 1 and 2 start a new cluster whose member 3's raft port takes
 * connections and never answers (a stopped process, or not batond): the
 * leader logs once that node 3 timed out in the TLS handshake.
 */
static void sc_peer_silent(struct ctx *x)
{
        struct harness *h = &x->h;
        char down[192];
        unsigned leader, id, n;
        int fd;

        if (!tlsfiles_on()) {
                printf("# plain raft has no handshake to wait for: skipped\n");
                return;
        }
        for (id = 1; id <= 3; id++) {
                EXPECT(x, harness_kill(h, id, NULL) == 0, "kill node %u: %s",
                       id, h->errmsg);
        }
        fd = silent_listener(h->nodes[2].raft_address);
        EXPECT(x, fd >= 0, "listen on %s", h->nodes[2].raft_address);
        if (!fresh(x, 1, 2, "silent")) {
                close(fd);
                return;
        }
        if (harness_wait_leader(h, HEALTHY_MS, &leader) != 0) {
                close(fd);
                fail_at(x, __LINE__, "nodes 1 and 2: %s", h->errmsg);
                return;
        }
        snprintf(down, sizeof down,
                 "raft peer node 3 at %s cannot be reached: timed out (no "
                 "TLS handshake within",
                 h->nodes[2].raft_address);
        n = await_lines(h, leader, down, 1, HEALTHY_MS);
        close(fd);
        EXPECT(x, n == 1, "node %u logged \"%s\" %u times, not once", leader,
               down, n);
        printf("# node %u: \"%s ...\"\n", leader, down);
}

#define REMOVED_LINE                                                           \
        "this node is no longer a member of the cluster (member remove): "     \
        "stopping"

/* Wait up to `ms` for node `id` to exit by itself: 0 with its exit code
 * (128 + a signal) in `*status`, or -1 while it runs. */
static int await_own_exit(struct harness *h, unsigned id, int ms, int *status)
{
        struct harness_node *nd = &h->nodes[id - 1];
        int64_t deadline = tclient_now_ms() + ms;
        int st;

        while (tclient_now_ms() < deadline) {
                if (waitpid(nd->pid, &st, WNOHANG) == nd->pid) {
                        nd->pid = 0;
                        *status = WIFEXITED(st) ? WEXITSTATUS(st)
                                                : 128 + WTERMSIG(st);
                        return 0;
                }
                poll_pause();
        }
        return -1;
}

/* Remove member `id` through the leader; it must log REMOVED_LINE and
 * exit 0 by itself, and the rest serve a lock. */
static void removed_exits(struct ctx *x, unsigned id)
{
        struct harness *h = &x->h;
        struct tclient c;
        char name[64];
        uint64_t token;
        int rv, status = -1;

        EXPECT(x, tclient_init(&c, h->endpoints) == 0, "client");
        rv = tclient_member_remove(&c, id, OP_MS);
        tclient_close(&c);
        EXPECT(x, rv == 0, "member remove %u: %s", id, baton_strerror(rv));
        EXPECT(x, await_own_exit(h, id, HEALTHY_MS, &status) == 0,
               "node %u still runs %d ms after its removal (log: %s)", id,
               HEALTHY_MS, h->nodes[id - 1].log_path);
        EXPECT(x, status == 0, "removed node %u exited with status %d", id,
               status);
        EXPECT(x, harness_log_count(h, id, REMOVED_LINE) == 1,
               "removed node %u did not log \"%s\" once", id, REMOVED_LINE);
        lock_name(x, name, sizeof name, "removed");
        OPEN(x, &c, TTL_MS);
        GRANT(x, token, &c, name);
        RELEASE(x, &c, name, token);
        tclient_close(&c);
        printf("# node %u: \"%s\", exit status 0\n", id, REMOVED_LINE);
}

/* A follower removed from a 3-node cluster learns it and exits 0. */
static void sc_removed_follower(struct ctx *x)
{
        unsigned leader;

        EXPECT(x, harness_wait_healthy(&x->h, HEALTHY_MS, &leader) == 0,
               "healthy: %s", x->h.errmsg);
        removed_exits(x, a_follower(x, leader));
}

/* The leader removed from a 3-node cluster learns it from the committed
 * configuration and exits 0; the other two elect a leader. */
static void sc_removed_leader(struct ctx *x)
{
        unsigned leader;

        EXPECT(x, harness_wait_healthy(&x->h, HEALTHY_MS, &leader) == 0,
               "healthy: %s", x->h.errmsg);
        removed_exits(x, leader);
}

/* Scenarios, each on a cluster of its own. */
static const struct scenario {
        const char *name;
        void (*run)(struct ctx *x);
} scenarios[] = {
    {"a peer whose raft port refuses is logged once per episode, from the "
     "first start, and once when reached again",
     sc_peer_refused},
    {"a peer whose raft port never answers is logged as timed out in the "
     "TLS handshake",
     sc_peer_silent},
    {"a follower removed (member remove) says so and exits 0",
     sc_removed_follower},
    {"a leader removed (member remove) says so and exits 0", sc_removed_leader},
};

#define N_SCENARIOS (sizeof scenarios / sizeof scenarios[0])

int main(int argc, char **argv)
{
        const char *wd = getenv("BATON_TEST_WATCHDOG");
        const char *only = getenv("BATON_TEST_ONLY");
        struct run r;
        struct ctx x;
        char first[256];
        unsigned i;
        int64_t t0;
        bool all_ok = true;

        (void)argc;
        memset(&r, 0, sizeof r);
        r.argv0 = argv[0];
        setvbuf(stdout, NULL, _IOLBF, 0);
        harness_setup_process(wd != NULL ? (unsigned)atoi(wd) : WATCHDOG_S);
        printf("1..%zu\n", N_SCENARIOS);
        for (i = 0; i < N_SCENARIOS; i++) {
                if (only != NULL && strstr(scenarios[i].name, only) == NULL) {
                        printf("ok %u - %s # SKIP\n", i + 1, scenarios[i].name);
                        continue;
                }
                memset(&x, 0, sizeof x);
                x.run = &r;
                x.n = 3;
                x.ok = true;
                harness_rearm_watchdog();
                t0 = tclient_now_ms();
                if (harness_start(&x.h, 3, NULL, r.argv0, 0) != 0) {
                        fail_at(&x, __LINE__, "a new cluster: %s", x.h.errmsg);
                } else {
                        scenarios[i].run(&x);
                }
                harness_stop(&x.h);
                if (x.ok && harness_scan_logs(&x.h, first, sizeof first) > 0) {
                        fail_at(&x, __LINE__,
                                "a sanitizer or assertion "
                                "report: %s",
                                first);
                }
                printf("%s %u - %s (%" PRId64 " ms)%s%s\n",
                       x.ok ? "ok" : "not ok", i + 1, scenarios[i].name,
                       tclient_now_ms() - t0, x.ok ? "" : ": ", x.why);
                all_ok = all_ok && x.ok;
                x.h.failed = !x.ok;
                harness_close(&x.h);
        }
        return all_ok ? 0 : 1;
}
