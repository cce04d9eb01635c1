/* What a node binds apart from what it advertises (client-listen,
 * raft-listen): real batond processes whose member lines name 127.0.0.2
 * (the loopback /8 all answers on Linux) while they listen on 127.0.0.1,
 * on 0.0.0.0 or on [::], with TLS (BATON_TEST_TLS=off: without), printing
 * TAP; and a bad value, refused at start naming the key. Each scenario
 * starts a cluster of its own. Environment as test_integration (BATOND,
 * BATON_TEST_BASE_PORT, BATON_TEST_TMPDIR, BATON_TEST_WATCHDOG).
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../include/baton.h"
#include "harness.h"
#include "oneoff.h"
#include "scenario.h"

#define WATCHDOG_S 180
#define START_MS   20000 /* a restarted node answers on its new address */
#define REFUSED_MS 1000  /* a bad value stops batond within a second */
#define POLL_MS    50

/* The port of "host:port". */
static int port_of(const char *address)
{
        const char *colon = strrchr(address, ':');

        return colon != NULL ? atoi(colon + 1) : 0;
}

/* Whether something accepts TCP connections on numeric `host` ("a.b.c.d"
 * or "::1") at `port`. */
static bool accepts(const char *host, int port)
{
        struct sockaddr_storage ss;
        struct sockaddr_in *v4 = (struct sockaddr_in *)&ss;
        struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&ss;
        socklen_t len;
        int fd;
        bool up;

        memset(&ss, 0, sizeof ss);
        if (inet_pton(AF_INET, host, &v4->sin_addr) == 1) {
                v4->sin_family = AF_INET;
                v4->sin_port = htons((uint16_t)port);
                len = sizeof *v4;
        } else if (inet_pton(AF_INET6, host, &v6->sin6_addr) == 1) {
                v6->sin6_family = AF_INET6;
                v6->sin6_port = htons((uint16_t)port);
                len = sizeof *v6;
        } else {
                return false;
        }
        fd = socket(ss.ss_family, SOCK_STREAM, 0);
        up = fd >= 0 && connect(fd, (struct sockaddr *)&ss, len) == 0;
        if (fd >= 0) {
                close(fd);
        }
        return up;
}

/* Poll STATUS of `endpoint` until node `id` answers there knowing a
 * leader; false (the scenario failed) after timeout_ms. */
static bool answers(struct ctx *x, const char *endpoint, unsigned id,
                    int timeout_ms, struct baton_status *st, int line)
{
        int64_t until = tclient_now_ms() + timeout_ms;
        int rv = -1;

        for (;;) {
                memset(st, 0, sizeof *st);
                rv = tclient_status_of(endpoint, 2000, st);
                if (rv == 0 && st->id == id && st->leader_id != 0) {
                        return true;
                }
                if (tclient_now_ms() > until) {
                        break;
                }
                tclient_sleep_ms(POLL_MS);
        }
        fail_at(x, line,
                "node %u does not answer STATUS on %s with a leader within "
                "%d ms (last: %d, id %" PRIu64 ", leader %" PRIu64
                "); its log: %s",
                id, endpoint, timeout_ms, rv, st->id, st->leader_id,
                x->h.nodes[id - 1].log_path);
        return false;
}

#define ANSWERS(x, endpoint, id, st)                                           \
        do {                                                                   \
                if (!answers(x, endpoint, id, START_MS, st, __LINE__)) {       \
                        return;                                                \
                }                                                              \
        } while (0)

/* A cluster of `n` nodes whose member lines name `raft_host` and
 * `client_host`, healthy. */
static bool cluster(struct ctx *x, unsigned n, const char *raft_host,
                    const char *client_host, int line)
{
        if (harness_start_on(&x->h, n, NULL, x->run->argv0, x->run->base_port,
                             raft_host, client_host) != 0 ||
            harness_wait_healthy(&x->h, HEALTHY_MS, NULL) != 0) {
                fail_at(x, line, "a new cluster: %s", x->h.errmsg);
                return false;
        }
        x->h.keep = x->run->keep;
        return true;
}

#define CLUSTER(x, n, raft_host, client_host)                                  \
        do {                                                                   \
                if (!cluster(x, n, raft_host, client_host, __LINE__)) {        \
                        return;                                                \
                }                                                              \
        } while (0)

/* Node `id`'s client address in `st`'s member list, or "". */
static const char *member_client(const struct baton_status *st, unsigned id)
{
        unsigned i;

        for (i = 0; i < st->n_members && i < 16; i++) {
                if (st->members[i].id == id) {
                        return st->members[i].client_address;
                }
        }
        return "";
}

/* Take and release a lock through the one endpoint `endpoint`. */
static bool locks_through(struct ctx *x, const char *endpoint, int line)
{
        struct tclient c;
        struct tclient_result res;
        char name[64];
        uint64_t t;
        int rv;

        lock_name(x, name, sizeof name, "through");
        if (tclient_init(&c, endpoint) != 0) {
                fail_at(x, line, "tclient_init(%s) failed", endpoint);
                return false;
        }
        rv = tclient_session_open(&c, TTL_MS, "listen", OP_MS, &res);
        if (rv != 0 || res.kind != PROTO_KIND_OPENED) {
                fail_at(x, line, "OPEN through %s: %d %s (%s)", endpoint, rv,
                        rs(x, &res), c.errmsg);
                tclient_close(&c);
                return false;
        }
        t = granted(x, &c, name, 1000, line);
        if (t == 0 || !released(x, &c, name, t, line)) {
                tclient_close(&c);
                return false;
        }
        tclient_close(&c);
        return true;
}

/* Node 1 of 3 binds its client port on 127.0.0.1 while its member line
 * (and so what clients and the other nodes are told) says 127.0.0.2. */
static void sc_client_listen(struct ctx *x)
{
        char listen[HARNESS_ADDR_MAX], flag[HARNESS_FLAG_MAX];
        const char *flags[1] = {flag};
        const char *told;
        struct baton_status st;
        int port;

        CLUSTER(x, 3, "127.0.0.1", "127.0.0.2");
        told = x->h.nodes[0].client_address;
        port = port_of(told);
        snprintf(listen, sizeof listen, "127.0.0.1:%d", port);
        snprintf(flag, sizeof flag, "--client-listen=%s", listen);
        RESTART_WITH(x, 1, flags, 1, true);
        ANSWERS(x, listen, 1, &st);
        EXPECT(x, !accepts("127.0.0.2", port),
               "node 1 still listens on its member line's %s", told);
        /* Told as the member line says, by node 1 and by the others. */
        EXPECT(x, strcmp(member_client(&st, 1), told) == 0,
               "node 1 names its client address '%s', not %s",
               member_client(&st, 1), told);
        ANSWERS(x, x->h.nodes[1].client_address, 2, &st);
        EXPECT(x, strcmp(member_client(&st, 1), told) == 0,
               "node 2 names node 1's client address '%s', not %s",
               member_client(&st, 1), told);
        /* A client on node 1's listen address takes a lock, wherever the
         * leader is (a follower redirects it to the leader's advertised
         * address). */
        if (!locks_through(x, listen, __LINE__)) {
                return;
        }
        /* And the others still serve through their advertised
         * addresses. */
        if (!locks_through(x, x->h.nodes[2].client_address, __LINE__)) {
                return;
        }
        printf("# node 1 serves on %s, advertised as %s (leader %" PRIu64 ")\n",
               listen, told, st.leader_id);
}

/* Node 1 of 3 binds its raft port on [::] (which takes IPv4 too) and its
 * client port on 0.0.0.0, its member line naming 127.0.0.2: the peers
 * reach it through the advertised raft address, the clients through the
 * advertised client address, and a tool on the node through 127.0.0.1;
 * then it leads. */
static void sc_wildcards(struct ctx *x)
{
        char raft_flag[HARNESS_FLAG_MAX], client_flag[HARNESS_FLAG_MAX];
        char local[HARNESS_ADDR_MAX];
        const char *flags[2] = {raft_flag, client_flag};
        struct baton_status st;
        struct tclient c;
        int raft_port, client_port, rv;
        unsigned leader;

        CLUSTER(x, 3, "127.0.0.2", "127.0.0.2");
        raft_port = port_of(x->h.nodes[0].raft_address);
        client_port = port_of(x->h.nodes[0].client_address);
        snprintf(raft_flag, sizeof raft_flag, "--raft-listen=[::]:%d",
                 raft_port);
        snprintf(client_flag, sizeof client_flag, "--client-listen=0.0.0.0:%d",
                 client_port);
        RESTART_WITH(x, 1, flags, 2, true);
        EXPECT(x, harness_wait_healthy(&x->h, HEALTHY_MS, &leader) == 0,
               "node 1 on 0.0.0.0 does not rejoin through 127.0.0.2: %s",
               x->h.errmsg);
        snprintf(local, sizeof local, "127.0.0.1:%d", client_port);
        ANSWERS(x, local, 1, &st);
        EXPECT(x, accepts("127.0.0.3", raft_port),
               "node 1's raft port does not take 127.0.0.3:%d (not bound on "
               "[::])",
               raft_port);
        /* Node 1 leads: the peers answer it on its advertised raft
         * address. */
        EXPECT(x, tclient_init(&c, x->h.endpoints) == 0, "tclient_init");
        rv = tclient_transfer(&c, 1, OP_MS);
        tclient_close(&c);
        EXPECT(x, rv == 0, "transfer to node 1: %d", rv);
        EXPECT(x, harness_wait_healthy(&x->h, HEALTHY_MS, &leader) == 0,
               "after the transfer: %s", x->h.errmsg);
        EXPECT(x, leader == 1, "node %u leads, not node 1", leader);
        if (!locks_through(x, x->h.endpoints, __LINE__) ||
            !locks_through(x, local, __LINE__)) {
                return;
        }
}

/* A one-node cluster whose member line says 127.0.0.2 for raft binds its
 * raft port on 127.0.0.1 only, and its client port on [::], which takes
 * IPv4 too. */
static void sc_raft_listen_ipv6(struct ctx *x)
{
        char raft_flag[HARNESS_FLAG_MAX], client_flag[HARNESS_FLAG_MAX];
        char v6[HARNESS_ADDR_MAX];
        const char *flags[2] = {raft_flag, client_flag};
        struct baton_status st;
        int raft_port, client_port;

        CLUSTER(x, 1, "127.0.0.2", "127.0.0.1");
        raft_port = port_of(x->h.nodes[0].raft_address);
        client_port = port_of(x->h.nodes[0].client_address);
        snprintf(raft_flag, sizeof raft_flag, "--raft-listen=127.0.0.1:%d",
                 raft_port);
        snprintf(client_flag, sizeof client_flag, "--client-listen=[::]:%d",
                 client_port);
        RESTART_WITH(x, 1, flags, 2, true);
        snprintf(v6, sizeof v6, "[::1]:%d", client_port);
        ANSWERS(x, v6, 1, &st);
        ANSWERS(x, x->h.nodes[0].client_address, 1, &st);
        EXPECT(x, accepts("127.0.0.1", raft_port),
               "nothing listens on raft-listen 127.0.0.1:%d", raft_port);
        EXPECT(x, !accepts("127.0.0.2", raft_port),
               "the raft port still listens on the member line's %s",
               x->h.nodes[0].raft_address);
        if (!locks_through(x, v6, __LINE__)) {
                return;
        }
}

/* batond started as node 1 on a fresh directory with `value` for
 * client-listen: it exits `code` within a second, its output has `a` and
 * `b`, and the directory was not made. */
static bool refused(struct ctx *x, const char *value, int code, const char *a,
                    const char *b, int line)
{
        char dir[PATH_MAX], log[PATH_MAX], said[1024];
        struct oneoff o;
        struct stat sb;

        snprintf(dir, sizeof dir, "%s/fresh", x->h.dir);
        snprintf(log, sizeof log, "%s/bad-%d.log", x->h.dir, line);
        oneoff_init(&o, x->h.batond, log);
        oneoff_node_args(&o, &x->h, 1, dir);
        oneoff_args(&o, "--client-listen", value, NULL);
        if (oneoff_start(&o) != 0) {
                fail_at(x, line, "cannot start batond");
                return false;
        }
        if (!oneoff_wait(&o, REFUSED_MS)) {
                oneoff_stop(&o);
                fail_at(x, line, "client-listen %s: still running after %d ms",
                        value, REFUSED_MS);
                return false;
        }
        oneoff_log_line(&o, "client-listen", said, sizeof said);
        printf("# client-listen %s: exit %d after %" PRId64 " ms: %s\n", value,
               o.status, o.ended_ms - o.started_ms, said);
        if (o.status != code || !oneoff_log_has(&o, a) ||
            !oneoff_log_has(&o, b)) {
                fail_at(x, line,
                        "exit %d (%d expected), '%s' and '%s' "
                        "expected in: %s",
                        o.status, code, a, b, said);
                return false;
        }
        if (stat(dir, &sb) == 0) {
                fail_at(x, line, "client-listen %s: %s was made", value, dir);
                return false;
        }
        return true;
}

/* A client-listen that is not an address, or one this host cannot bind:
 * batond stops within a second naming the key, the directory untouched.
 * The node of the cluster is stopped meanwhile, so that only the value
 * given is wrong; started again after, it serves. */
static void sc_bad_value(struct ctx *x)
{
        char busy[HARNESS_ADDR_MAX];
        int port = 0;
        int fd;

        CLUSTER(x, 1, "127.0.0.1", "127.0.0.1");
        EXPECT(x,
               harness_term(&x->h, 1, NULL) == 0 &&
                   harness_wait_exit(&x->h, 1, START_MS, NULL) == 0,
               "stopping node 1: %s", x->h.errmsg);
        if (!refused(x, "127.0.0.1", 2, "flag --client-listen: '127.0.0.1'",
                     "no ':port'", __LINE__) ||
            !refused(x, "0.0.0.0:99999", 2, "--client-listen", "the port",
                     __LINE__) ||
            /* 192.0.2.0/24 is for documentation: no host has it. */
            !refused(x, "192.0.2.1:7101", 1, "client address (client-listen",
                     "Cannot assign requested address", __LINE__)) {
                return;
        }
        /* A port another process holds on 127.0.0.1, asked for on every
         * interface. */
        fd = oneoff_listen(&port);
        EXPECT(x, fd >= 0, "no port to hold");
        snprintf(busy, sizeof busy, "0.0.0.0:%d", port);
        if (!refused(x, busy, 1, "client address (client-listen",
                     "another process listens there", __LINE__)) {
                close(fd);
                return;
        }
        close(fd);
        EXPECT(x, harness_restart(&x->h, 1) == 0, "%s", x->h.errmsg);
        EXPECT(x, harness_wait_healthy(&x->h, HEALTHY_MS, NULL) == 0, "%s",
               x->h.errmsg);
}

/* --- The run ---------------------------------------------------------------
 */

static const struct scenario_entry scenarios[] = {
    {"client-listen 127.0.0.1:P with the member line advertising "
     "127.0.0.2:P: clients on 127.0.0.1:P, told 127.0.0.2:P; the cluster "
     "serves",
     sc_client_listen, true},
    {"raft-listen on [::] and client-listen on 0.0.0.0, advertised "
     "127.0.0.2: the node rejoins and leads; tools use 127.0.0.1",
     sc_wildcards, true},
    {"raft-listen 127.0.0.1 with the member line on 127.0.0.2, "
     "client-listen [::]: raft binds only 127.0.0.1, clients on ::1 and "
     "127.0.0.1",
     sc_raft_listen_ipv6, true},
    {"a bad or unbindable client-listen: refused within a second naming "
     "the key, the data directory not made",
     sc_bad_value, true},
};

#define N_SCENARIOS (sizeof scenarios / sizeof scenarios[0])

static void run_one(struct ctx *x, const struct scenario_entry *s)
{
        int64_t t0 = scenario_begin(x);

        s->fn(x);
        scenario_close(x, s, t0);
}

int main(int argc, char **argv)
{
        return scenario_main(argc, argv, "test_listen", WATCHDOG_S, scenarios,
                             N_SCENARIOS, run_one);
}
