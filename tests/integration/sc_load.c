/* Integration scenarios on load, metrics and limits. */
#include "sc_load.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../include/baton.h"
#include "rawframe.h"
#include "../../src/proto/reply.h"

/* Several clients' commands in flight at once: the leader proposes what
 * arrives in one loop iteration as one raft batch (one AppendEntries with
 * several entries), and every follower must apply the same entries. */
void sc_concurrent(struct ctx *x)
{
        enum { N = 8 };
        struct tclient c[N];
        struct tclient_result res;
        char names[N][64];
        uint64_t tokens[N];
        unsigned i;
        int rv;

        for (i = 0; i < N; i++) {
                /* Lengths that are not multiples of 8, on purpose. */
                snprintf(names[i], sizeof names[i], "it-%u-batch-%.*s-%u", x->n,
                         (int)(i + 1), "abcdefgh", ++x->names);
                OPEN(x, &c[i], TTL_MS);
        }
        for (i = 0; i < N; i++) {
                START_WAIT(x, &c[i], names[i], COMMAND_WAIT_TRY, NULL);
        }
        for (i = 0; i < N; i++) {
                rv = tclient_finish(&c[i], OP_MS, &res);
                EXPECT(x, rv == 0 && res.kind == PROTO_KIND_GRANTED,
                       "concurrent ACQUIRE %s: %d %s", names[i], rv,
                       rs(x, &res));
                tokens[i] = res.token;
                note(x, &res);
        }
        for (i = 0; i < N; i++) {
                START_WAIT(x, &c[i], names[(i + 1) % N], COMMAND_WAIT_TRY,
                           NULL);
        }
        for (i = 0; i < N; i++) {
                rv = tclient_finish(&c[i], OP_MS, &res);
                EXPECT(x, rv == BATON_EBUSY && res.token == tokens[(i + 1) % N],
                       "concurrent try of a held lock %s: %d %s",
                       names[(i + 1) % N], rv, rs(x, &res));
        }
        for (i = 0; i < N; i++) {
                RELEASE(x, &c[i], names[i], tokens[i]);
                tclient_close(&c[i]);
        }
        /* Every node must have applied all of it, and the same. */
        EXPECT(x, harness_wait_healthy(&x->h, HEALTHY_MS, NULL) == 0, "%s",
               x->h.errmsg);
}

void sc_metrics(struct ctx *x)
{
        static const char acquires[] =
            "baton_requests_total{type=\"acquire\",result=\"ok\"}";
        static const char raft_stage[] =
            "baton_command_stage_seconds_count{stage=\"raft\"}";
        struct tclient a;
        char name[64];
        char *text;
        double v, before, after, staged_before, staged_after;
        unsigned leader, i;
        uint64_t t;

        EXPECT(x, harness_wait_healthy(&x->h, HEALTHY_MS, &leader) == 0, "%s",
               x->h.errmsg);
        text = malloc(METRICS_MAX);
        EXPECT(x, text != NULL, "out of memory");
        for (i = 1; i <= x->n; i++) {
                if (!harness_running(&x->h, i)) {
                        continue;
                }
                SCRAPE(x, i, text, "baton_is_leader", &v);
                if (v != (i == leader ? 1.0 : 0.0)) {
                        fail_at(x, __LINE__,
                                "node %u reports baton_is_leader %g; the "
                                "leader is %u",
                                i, v, leader);
                        free(text);
                        return;
                }
        }
        SCRAPE(x, leader, text, acquires, &before);
        SCRAPE(x, leader, text, raft_stage, &staged_before);
        lock_name(x, name, sizeof name, "metrics");
        if (!client_open(x, &a, TTL_MS, __LINE__)) {
                free(text);
                return;
        }
        for (i = 0; i < 3; i++) {
                t = granted(x, &a, name, 1000, __LINE__);
                if (t == 0 || !released(x, &a, name, t, __LINE__)) {
                        free(text);
                        return;
                }
        }
        tclient_close(&a);
        SCRAPE(x, leader, text, acquires, &after);
        printf("# leader %u: %s %g -> %g after 3 acquires\n", leader, acquires,
               before, after);
        if (after < before + 3) {
                fail_at(x, __LINE__,
                        "%s went from %g to %g over 3 acquires on leader %u",
                        acquires, before, after, leader);
                free(text);
                return;
        }
        /* Each acquire and release went through raft once. */
        SCRAPE(x, leader, text, raft_stage, &staged_after);
        if (staged_after < staged_before + 6) {
                fail_at(x, __LINE__,
                        "%s went from %g to %g over 3 acquires and 3 "
                        "releases on leader %u",
                        raft_stage, staged_before, staged_after, leader);
        }
        free(text);
}

/* A node over its connection limit refuses the next connection with an
 * ERROR and closes it; the others carry on; a freed slot is usable. */
void sc_conn_limit(struct ctx *x)
{
        static const char *const limit[] = {"--max-connections", "2"};
        struct tclient c1, c2, c3, c4;
        struct proto_header h;
        struct proto_string msg;
        const uint8_t *body;
        const char *addr;
        uint8_t ping[PROTO_HEADER_SIZE];
        unsigned leader, node, tries = 0;
        int64_t deadline;
        char *text;
        double refused, open;
        int rv, status;

        EXPECT(x, harness_wait_healthy(&x->h, HEALTHY_MS, &leader) == 0, "%s",
               x->h.errmsg);
        node = a_follower(x, leader);
        addr = harness_client_address(&x->h, node);
        EXPECT(x, harness_term(&x->h, node, NULL) == 0, "%s", x->h.errmsg);
        EXPECT(x, harness_wait_exit(&x->h, node, HEALTHY_MS, &status) == 0,
               "%s", x->h.errmsg);
        EXPECT(x, status == 0, "node %u exited with %d on SIGTERM", node,
               status);
        EXPECT(x, harness_set_flags(&x->h, node, limit, 2) == 0, "%s",
               x->h.errmsg);
        RESTART(x, node);
        printf("# node %u restarted with --max-connections 2\n", node);

        EXPECT(x, tclient_init(&c1, addr) == 0, "tclient_init");
        EXPECT(x, tclient_init(&c2, addr) == 0, "tclient_init");
        EXPECT(x, tclient_init(&c3, addr) == 0, "tclient_init");
        EXPECT(x, tclient_init(&c4, addr) == 0, "tclient_init");
        c1.try_ms = c2.try_ms = c4.try_ms = 0;
        EXPECT(x, tclient_connect(&c1, addr, OP_MS) == 0, "%s", c1.errmsg);
        rv = tclient_ping(&c1, OP_MS, NULL);
        EXPECT(x, rv == 0, "PING on the first connection: %d (%s)", rv,
               c1.errmsg);
        EXPECT(x, tclient_connect(&c2, addr, OP_MS) == 0, "%s", c2.errmsg);
        rv = tclient_ping(&c2, OP_MS, NULL);
        EXPECT(x, rv == 0, "PING on the second connection: %d (%s)", rv,
               c2.errmsg);

        EXPECT(x, tclient_connect(&c3, addr, OP_MS) == 0, "%s", c3.errmsg);
        rv = tclient_raw_recv(&c3, OP_MS, &h, &body);
        EXPECT(x, rv == 0 && h.type == PROTO_ERROR && h.id == 0,
               "third connection: %d %s id %" PRIu64
               ", expected an ERROR frame with id 0",
               rv, rv == 0 ? proto_type_name(h.type) : c3.errmsg,
               rv == 0 ? h.id : 0);
        EXPECT(x, proto_read_error(body, h.length, &status, &msg) == 0,
               "the ERROR frame does not decode");
        EXPECT(x, status == BATON_ETOOMANYCONNS,
               "third connection: ERROR status %d, expected %d", status,
               BATON_ETOOMANYCONNS);
        EXPECT(x, tclient_wait_closed(&c3, OP_MS),
               "the third connection stayed open after its ERROR");

        rv = tclient_ping(&c1, OP_MS, NULL);
        EXPECT(x, rv == 0, "first connection after the refusal: %d (%s)", rv,
               c1.errmsg);
        rv = tclient_ping(&c2, OP_MS, NULL);
        EXPECT(x, rv == 0, "second connection after the refusal: %d (%s)", rv,
               c2.errmsg);

        /* Until the node has seen the first connection close, a new one
         * may still be over the limit: retry for a while. */
        tclient_disconnect(&c1);
        header(ping, PROTO_VERSION, PROTO_PING, 0, 0, 401);
        deadline = tclient_now_ms() + OP_MS;
        for (;;) {
                tries++;
                rv = tclient_connect(&c4, addr, OP_MS);
                if (rv == 0) {
                        rv = tclient_raw_send(&c4, ping, sizeof ping, OP_MS);
                }
                if (rv == 0) {
                        rv = tclient_raw_recv(&c4, OP_MS, &h, &body);
                }
                if (rv == 0 && h.type == PROTO_PONG && h.id == 401) {
                        break;
                }
                EXPECT(x,
                       tclient_now_ms() < deadline &&
                           (rv != 0 || h.type == PROTO_ERROR),
                       "a connection after closing one: %d %s (%s)", rv,
                       rv == 0 ? proto_type_name(h.type) : "-", c4.errmsg);
                poll_pause();
        }
        printf("# a freed slot was usable after %u connection(s)\n", tries);
        rv = tclient_ping(&c2, OP_MS, NULL);
        EXPECT(x, rv == 0, "second connection at the end: %d (%s)", rv,
               c2.errmsg);

        text = malloc(METRICS_MAX);
        EXPECT(x, text != NULL, "out of memory");
        SCRAPE(x, node, text, "baton_connections_refused_total", &refused);
        SCRAPE(x, node, text, "baton_connections", &open);
        free(text);
        EXPECT(x, refused >= 1 && open == 2,
               "node %u reports %g refused and %g open connections, expected "
               ">= 1 and 2",
               node, refused, open);
        tclient_close(&c1);
        tclient_close(&c2);
        tclient_close(&c3);
        tclient_close(&c4);

        EXPECT(x, harness_term(&x->h, node, NULL) == 0, "%s", x->h.errmsg);
        EXPECT(x, harness_wait_exit(&x->h, node, HEALTHY_MS, &status) == 0,
               "%s", x->h.errmsg);
        EXPECT(x, harness_set_flags(&x->h, node, NULL, 0) == 0, "%s",
               x->h.errmsg);
        RESTART(x, node);
}

#define PING_CHUNK 4096 /* PINGs generated per send */

/*
 * Send bytes [*sent, limit) of the stream of PING frames with ids 1, 2, ...
 * (at most one chunk of it), as far as the socket takes them within
 * timeout_ms; `*sent` moves on. 0 when the chunk went, else as
 * tclient_raw_send_some().
 */
static int send_pings(struct tclient *c, size_t *sent, size_t limit,
                      int timeout_ms)
{
        static uint8_t chunk[PING_CHUNK * PROTO_HEADER_SIZE];
        size_t first = *sent / PROTO_HEADER_SIZE;
        size_t skip = *sent % PROTO_HEADER_SIZE;
        size_t len = sizeof chunk - skip, n = 0;
        unsigned i;
        int rv;

        if (len > limit - *sent) {
                len = limit - *sent;
        }
        for (i = 0; i < PING_CHUNK; i++) {
                header(chunk + (size_t)i * PROTO_HEADER_SIZE, PROTO_VERSION,
                       PROTO_PING, 0, 0, first + i + 1);
        }
        rv = tclient_raw_send_some(c, chunk + skip, len, timeout_ms, &n);
        *sent += n;
        return rv;
}

/*
 * A client pipelines PINGs without reading the PONGs: once they pile up
 * past the leader's socket buffer and output-limit, the leader stops
 * reading that client, so its memory stays bounded, and it serves other
 * clients meanwhile; then every PONG arrives, in order. How many PINGs it
 * takes depends on the kernel's buffers: we send until the socket stays
 * full (at most MAX_PINGS), then EXTRA_PINGS more while reading.
 */
void sc_backpressure(struct ctx *x)
{
        enum {
                MIN_PINGS = 200000,
                MAX_PINGS = 4000000,
                EXTRA_PINGS = 100000,
                STALL_MS = 300
        };
        const long bound_kib = 64 * 1024;
        struct tclient flood, other;
        struct proto_header h;
        const uint8_t *body;
        const char *addr;
        char name[64];
        size_t sent = 0, total, whole;
        uint64_t next = 1, t, n;
        unsigned leader;
        long rss0, rss1, rss2;
        int64_t t0;
        int rv;

        EXPECT(x, harness_wait_healthy(&x->h, HEALTHY_MS, &leader) == 0, "%s",
               x->h.errmsg);
        addr = harness_client_address(&x->h, leader);
        lock_name(x, name, sizeof name, "backpressure");
        OPEN(x, &other, TTL_MS);
        rss0 = harness_rss_kib(&x->h, leader);
        EXPECT(x, tclient_init(&flood, addr) == 0, "tclient_init");
        /* Small socket buffers on our side, so the kernel holds less. */
        flood.rcvbuf = 16 * 1024;
        flood.sndbuf = 64 * 1024;
        EXPECT(x, tclient_connect(&flood, addr, OP_MS) == 0, "%s",
               flood.errmsg);
        t0 = tclient_now_ms();

        /* Send, reading nothing, until nothing goes for STALL_MS. */
        total = (size_t)MAX_PINGS * PROTO_HEADER_SIZE;
        do {
                size_t before = sent;
                rv = send_pings(&flood, &sent, total, STALL_MS);
                if (rv == BATON_ENOANSWER && sent == before) {
                        break;
                }
        } while ((rv == 0 || rv == BATON_ENOANSWER) && sent < total);
        EXPECT(x, rv == 0 || rv == BATON_ENOANSWER, "flood: %d (%s)", rv,
               flood.errmsg);
        EXPECT(x, sent < total,
               "%u PINGs went out unread: the leader never stopped reading",
               (unsigned)MAX_PINGS);
        rss1 = harness_rss_kib(&x->h, leader);
        n = sent / PROTO_HEADER_SIZE + EXTRA_PINGS;
        if (n < MIN_PINGS) {
                n = MIN_PINGS;
        }
        total = n * PROTO_HEADER_SIZE;
        printf("# the leader stopped reading after %zu PINGs (%zu KiB) "
               "sent unread in %" PRId64 " ms; its RSS %ld -> %ld KiB\n",
               sent / PROTO_HEADER_SIZE, sent / 1024, tclient_now_ms() - t0,
               rss0, rss1);

        /* Meanwhile another client is served. */
        rv = tclient_ping(&other, OP_MS, NULL);
        EXPECT(x, rv == 0, "PING by another client: %d (%s)", rv, other.errmsg);
        t = granted(x, &other, name, 1000, __LINE__);
        if (t == 0 || !released(x, &other, name, t, __LINE__)) {
                return;
        }

        /* Read every PONG, in order, sending the rest as room appears:
         * without waiting while a reply is due, else until a PING goes. */
        while (next <= n) {
                whole = sent / PROTO_HEADER_SIZE;
                if (sent < total) {
                        rv = send_pings(&flood, &sent, total,
                                        next <= whole ? 0 : OP_MS);
                        EXPECT(x,
                               rv == 0 ||
                                   (rv == BATON_ENOANSWER && next <= whole),
                               "flood: %d (%s)", rv, flood.errmsg);
                        whole = sent / PROTO_HEADER_SIZE;
                }
                while (next <= whole) {
                        rv = tclient_raw_recv(&flood, OP_MS, &h, &body);
                        EXPECT(x,
                               rv == 0 && h.type == PROTO_PONG && h.id == next,
                               "reply %" PRIu64 " of %" PRIu64 ": %d %s id "
                               "%" PRIu64 " (%s)",
                               next, n, rv,
                               rv == 0 ? proto_type_name(h.type) : "-",
                               rv == 0 ? h.id : 0, flood.errmsg);
                        next++;
                        if (flood.in_off >= flood.in_len) {
                                break; /* what has come is read: send */
                        }
                }
        }
        rss2 = harness_rss_kib(&x->h, leader);
        printf("# all %" PRIu64 " PONGs in order after %" PRId64 " ms; "
               "leader RSS %ld KiB at the end\n",
               n, tclient_now_ms() - t0, rss2);
        EXPECT(x, rss0 > 0 && rss1 > 0 && rss2 > 0, "no VmRSS for node %u",
               leader);
        EXPECT(x, rss1 - rss0 < bound_kib && rss2 - rss0 < bound_kib,
               "leader RSS grew from %ld to %ld and %ld KiB", rss0, rss1, rss2);
        rv = tclient_ping(&flood, OP_MS, NULL);
        EXPECT(x, rv == 0, "PING after the flood: %d (%s)", rv, flood.errmsg);
        tclient_close(&flood);
        tclient_close(&other);
}

/* Every command a client sends is applied exactly once and answered exactly
 * once, counted, with many clients at once so that the leader puts several
 * commands in one log entry. A raft that dropped all but the first
 * command of an entry (libraft 0.22.1 takes one buffer per raft_apply)
 * shows here as timeouts and as fewer commands applied than proposed. */
/* Whether every node has applied the leader's last index `last`. */
static bool all_applied(struct ctx *x, char *text, double last)
{
        unsigned i;
        double v;

        for (i = 1; i <= x->n; i++) {
                if (!scrape(x, i, text, "baton_raft_applied_index", &v,
                            __LINE__) ||
                    v != last) {
                        return false;
                }
        }
        return true;
}

/* The leader's proposed commands and entries, and every node's applied
 * commands (a[1..n]). */
static bool read_counts(struct ctx *x, unsigned leader, char *text, double *p,
                        double *e, double *a)
{
        unsigned i;

        if (!scrape(x, leader, text, "baton_proposed_commands_total", p,
                    __LINE__) ||
            !scrape(x, leader, text, "baton_proposed_entries_total", e,
                    __LINE__)) {
                return false;
        }
        for (i = 1; i <= x->n; i++) {
                if (!scrape(x, i, text, "baton_applied_commands_total", &a[i],
                            __LINE__)) {
                        return false;
                }
        }
        return true;
}

/* The counts the scenario compares, read while nothing is in flight: the
 * leader's last index applied on every node, and the same after every
 * count was read. Otherwise an entry proposed before `*p` was read and
 * applied after `a` was (a new leader's access-list seed, an expiry, on a
 * machine slow enough that applying it takes a while) is counted as
 * applied without having been counted as proposed, or the other way
 * round. False (the scenario failed) when a scrape failed or the cluster
 * did not go quiet in HEALTHY_MS. */
static bool quiet_counts(struct ctx *x, unsigned leader, char *text, double *p,
                         double *e, double *a)
{
        int64_t end = tclient_now_ms() + HEALTHY_MS;

        do {
                double last, again;

                if (!scrape(x, leader, text, "baton_raft_last_index", &last,
                            __LINE__) ||
                    !all_applied(x, text, last)) {
                        tclient_sleep_ms(100);
                        continue;
                }
                if (!read_counts(x, leader, text, p, e, a) ||
                    !scrape(x, leader, text, "baton_raft_last_index", &again,
                            __LINE__)) {
                        return false;
                }
                if (again == last && all_applied(x, text, last)) {
                        return true;
                }
        } while (tclient_now_ms() < end);
        fail_at(x, __LINE__, "the cluster was never quiet for a count");
        return false;
}

void sc_counted(struct ctx *x)
{
        enum { N = 32, ROUNDS = 8 };
        struct tclient *c = calloc(N, sizeof *c);
        char(*names)[64] = calloc(N, sizeof *names);
        double p0, p1, e0, e1, a0[HARNESS_MAX_NODES + 1],
            a1[HARNESS_MAX_NODES + 1];
        struct tclient_result res;
        uint64_t tokens[N];
        unsigned leader, i, r, answered = 0, opened = 0;
        char *text = malloc(METRICS_MAX);
        int rv;

        EXPECT(x, c != NULL && names != NULL && text != NULL, "out of memory");
        EXPECT(x, harness_wait_healthy(&x->h, HEALTHY_MS, &leader) == 0, "%s",
               x->h.errmsg);
        if (!quiet_counts(x, leader, text, &p0, &e0, a0)) {
                goto out;
        }
        for (i = 0; i < N; i++) {
                lock_name(x, names[i], sizeof names[i], "counted");
                if (!client_open(x, &c[i], TTL_MS, __LINE__)) {
                        goto out;
                }
                opened++;
        }
        for (r = 0; r < ROUNDS; r++) {
                for (i = 0; i < N; i++) {
                        if (!start_wait(x, &c[i], names[i], COMMAND_WAIT_TRY,
                                        NULL, __LINE__)) {
                                goto out;
                        }
                }
                for (i = 0; i < N; i++) {
                        rv = tclient_finish(&c[i], OP_MS, &res);
                        if (rv != 0 || res.kind != PROTO_KIND_GRANTED) {
                                fail_at(x, __LINE__,
                                        "round %u ACQUIRE %s: %d %s", r,
                                        names[i], rv, rs(x, &res));
                                goto out;
                        }
                        tokens[i] = res.token;
                        answered++;
                }
                for (i = 0; i < N; i++) {
                        if (!released(x, &c[i], names[i], tokens[i],
                                      __LINE__)) {
                                goto out;
                        }
                        answered++;
                }
        }
        for (i = 0; i < N; i++) {
                tclient_close(&c[i]);
        }
        opened = 0;
        EXPECT(x, harness_wait_healthy(&x->h, HEALTHY_MS, NULL) == 0, "%s",
               x->h.errmsg);
        if (!quiet_counts(x, leader, text, &p1, &e1, a1)) {
                goto out;
        }
        printf("# leader %u: %g commands in %g entries; %u answers\n", leader,
               p1 - p0, e1 - e0, answered);
        /* Opens, acquires and releases (tclient_close sends no CLOSE),
         * plus whatever the leader proposed itself meanwhile (an expiry):
         * each applied once, on every node. */
        if (p1 - p0 < N + 2.0 * N * ROUNDS) {
                fail_at(x, __LINE__, "%g commands proposed, expected >= %u",
                        p1 - p0, N + 2 * N * ROUNDS);
        }
        for (i = 1; i <= x->n; i++) {
                if (a1[i] - a0[i] != p1 - p0) {
                        fail_at(x, __LINE__,
                                "node %u applied %g commands, the leader "
                                "proposed %g",
                                i, a1[i] - a0[i], p1 - p0);
                }
        }
        if (e1 - e0 >= p1 - p0) {
                fail_at(x, __LINE__,
                        "%g commands in %g entries: no entry carried two, so "
                        "batching went untested",
                        p1 - p0, e1 - e0);
        }
out:
        for (i = 0; i < opened; i++) {
                tclient_close(&c[i]);
        }
        free(c);
        free(names);
        free(text);
}
