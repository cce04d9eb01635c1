/* The simulation's network between clients and nodes (tests/lib/simnet.c):
 * each connection's streams whole and in order under seeded delays and
 * chunks, connections reordered among themselves, cuts, partitions,
 * kills and pauses as each side sees them, the same deliveries from the
 * same seed, and a next-due time an event loop can sleep until. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../include/baton/errors.h"
#include "../../src/lib/hmap.h"
#include "../lib/rng.h"
#include "../lib/simnet.h"

#define MAX_CONNS 4096

/* A growable byte string. */
struct bytes {
        uint8_t *p;
        size_t n, cap;
};

static void put(struct bytes *b, const void *p, size_t n)
{
        if (b->n + n > b->cap) {
                b->cap = (b->n + n) * 2 + 64;
                b->p = realloc(b->p, b->cap);
                assert_non_null(b->p);
        }
        memcpy(b->p + b->n, p, n);
        b->n += n;
}

/* What each side of a connection was told and sent, per side. */
struct side_log {
        int established; /* times told */
        int closed;      /* times told */
        enum simnet_why why;
        uint64_t closed_at;
        int closed_self; /* closed its end */
        int gone;        /* its node was killed: must hear nothing */
        struct bytes sent, got;
        uint64_t first_got_seq; /* log position of its first byte, or 0 */
        uint64_t last_got_seq;
};

struct conn_log {
        unsigned node; /* as the workload opened it */
        int failed;
        enum simnet_why fail_why;
        uint64_t failed_at;
        struct side_log side[2];
};

/* The recorder behind the callbacks: every callback in one text log (for
 * determinism), every stream per connection (for order), and the checks
 * that nothing reaches a side after it was told closed. */
struct rec {
        struct simnet *net;
        struct conn_log c[MAX_CONNS];
        struct bytes log;
        uint64_t seq;      /* callbacks so far */
        uint64_t last_now; /* the last callback's time */
        uint64_t n_bytes_cb;
        uint64_t ok_at; /* every callback must come at this time, or any
                           time when SIMNET_NEVER */
};

static struct conn_log *conn_of(struct rec *r, uint64_t conn)
{
        assert_true(conn > 0 && conn < MAX_CONNS);
        return &r->c[conn];
}

static void note(struct rec *r, uint64_t now, const char *fmt, ...)
{
        char line[160];
        int n = snprintf(line, sizeof line, "%llu ", (unsigned long long)now);
        va_list ap;

        va_start(ap, fmt);
        n += vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
        va_end(ap);
        put(&r->log, line, (size_t)n);
        put(&r->log, "\n", 1);
        assert_true(now >= r->last_now);
        if (r->ok_at != SIMNET_NEVER) {
                assert_int_equal(now, r->ok_at);
        }
        r->last_now = now;
        r->seq++;
}

/* A side may hear something only until it was told closed, closed its
 * end itself or died with its node. */
static void check_alive(const struct side_log *s)
{
        assert_int_equal(s->closed, 0);
        assert_int_equal(s->closed_self, 0);
        assert_int_equal(s->gone, 0);
}

static void on_established(void *data, uint64_t conn, enum simnet_side side,
                           uint64_t now)
{
        struct rec *r = data;
        struct side_log *s = &conn_of(r, conn)->side[side];

        check_alive(s);
        assert_int_equal(s->established, 0);
        if (side == SIMNET_CLIENT) {
                assert_int_equal(
                    conn_of(r, conn)->side[SIMNET_NODE].established, 1);
        }
        s->established++;
        note(r, now, "up %llu %d", (unsigned long long)conn, (int)side);
}

static void on_failed(void *data, uint64_t conn, enum simnet_why why,
                      uint64_t now)
{
        struct rec *r = data;
        struct conn_log *c = conn_of(r, conn);

        assert_int_equal(c->failed, 0);
        assert_int_equal(c->side[SIMNET_CLIENT].established, 0);
        assert_int_equal(c->side[SIMNET_NODE].established, 0);
        c->failed++;
        c->fail_why = why;
        c->failed_at = now;
        note(r, now, "fail %llu %d", (unsigned long long)conn, (int)why);
}

static void on_bytes(void *data, uint64_t conn, enum simnet_side to,
                     const uint8_t *p, size_t n, uint64_t now)
{
        struct rec *r = data;
        struct side_log *s = &conn_of(r, conn)->side[to];

        check_alive(s);
        assert_int_equal(s->established, 1);
        assert_true(n > 0);
        put(&s->got, p, n);
        note(r, now, "bytes %llu %d %zu %016llx", (unsigned long long)conn,
             (int)to, n, (unsigned long long)hash_bytes(p, n));
        if (s->first_got_seq == 0) {
                s->first_got_seq = r->seq;
        }
        s->last_got_seq = r->seq;
        r->n_bytes_cb++;
}

static void on_closed(void *data, uint64_t conn, enum simnet_side side,
                      enum simnet_why why, uint64_t now)
{
        struct rec *r = data;
        struct side_log *s = &conn_of(r, conn)->side[side];

        check_alive(s);
        assert_int_equal(s->established, 1);
        s->closed++;
        s->why = why;
        s->closed_at = now;
        note(r, now, "closed %llu %d %d", (unsigned long long)conn, (int)side,
             (int)why);
}

static struct rec *rec_new(const struct simnet_config *cfg)
{
        struct rec *r = calloc(1, sizeof *r);
        struct simnet_cbs cbs = {NULL, on_established, on_failed, on_bytes,
                                 on_closed};

        assert_non_null(r);
        cbs.data = r;
        r->ok_at = SIMNET_NEVER;
        r->net = simnet_create(cfg, &cbs);
        assert_non_null(r->net);
        return r;
}

static void rec_free(struct rec *r)
{
        size_t i;
        int s;

        simnet_destroy(r->net);
        for (i = 0; i < MAX_CONNS; i++) {
                for (s = 0; s < 2; s++) {
                        free(r->c[i].side[s].sent.p);
                        free(r->c[i].side[s].got.p);
                }
        }
        free(r->log.p);
        free(r);
}

static void send_from(struct rec *r, uint64_t conn, enum simnet_side side,
                      const void *p, size_t n, uint64_t now)
{
        assert_int_equal(simnet_send(r->net, conn, side, p, n, now), 0);
        put(&conn_of(r, conn)->side[side].sent, p, n);
}

/* What `to` got of the stream its peer sent is a prefix of it (all of it
 * when `whole`). */
static void check_prefix(struct rec *r, uint64_t conn, enum simnet_side to,
                         int whole)
{
        struct conn_log *c = conn_of(r, conn);
        const struct bytes *got = &c->side[to].got;
        const struct bytes *sent = &c->side[!to].sent;

        assert_true(got->n <= sent->n);
        if (whole) {
                assert_int_equal(got->n, sent->n);
        }
        assert_true(got->n == 0 || memcmp(got->p, sent->p, got->n) == 0);
}

/* Run the network to quiet, as an event loop would: sleep until the next
 * due time, and check that nothing comes before it and something at it. */
static void drain_until(struct rec *r, uint64_t until)
{
        uint64_t due;

        while ((due = simnet_next_due(r->net)) <= until) {
                uint64_t before = r->seq;
                if (due > 0) {
                        simnet_advance(r->net, due - 1);
                        assert_int_equal(r->seq, before);
                }
                r->ok_at = due;
                simnet_advance(r->net, due);
                r->ok_at = SIMNET_NEVER;
                assert_true(r->seq > before);
        }
        simnet_advance(r->net, until);
}

static uint64_t open_conn(struct rec *r, uint64_t client, unsigned node,
                          uint64_t *now)
{
        uint64_t conn;

        assert_int_equal(simnet_connect(r->net, client, node, *now, &conn), 0);
        *now += 1000;
        drain_until(r, *now);
        assert_int_equal(conn_of(r, conn)->side[SIMNET_CLIENT].established, 1);
        return conn;
}

static void fill(struct rng *g, uint8_t *p, size_t n)
{
        size_t i;

        for (i = 0; i < n; i++) {
                p[i] = (uint8_t)rng_next(g);
        }
}

/* A long random stream each way, written in random sizes at random times
 * and handed over in chunks up to 97 bytes after delays up to 50 ms,
 * arrives whole and in order, split and joined differently from how it
 * was written. */
static void fifo_under_chunks_and_delays(void **state)
{
        uint64_t seed;

        (void)state;
        for (seed = 1; seed <= 12; seed++) {
                struct simnet_config cfg;
                struct rec *r;
                struct rng g = {seed * 977};
                static uint8_t buf[3000];
                uint64_t now = 0;
                uint64_t conn;
                size_t total = 0;
                unsigned writes = 0;

                simnet_config_defaults(&cfg, seed, 3);
                cfg.delay_min_ms = 0;
                cfg.delay_max_ms = 50;
                cfg.chunk_max = 97;
                r = rec_new(&cfg);
                conn = open_conn(r, 42, 1, &now);
                while (total < 150000) {
                        size_t n = 1 + rng_below(&g, sizeof buf);
                        enum simnet_side from = rng_below(&g, 2);
                        fill(&g, buf, n);
                        send_from(r, conn, from, buf, n, now);
                        total += n;
                        writes++;
                        now += rng_below(&g, 4);
                        drain_until(r, now);
                }
                drain_until(r, now + 10000);
                assert_int_equal(simnet_next_due(r->net), SIMNET_NEVER);
                check_prefix(r, conn, SIMNET_NODE, 1);
                check_prefix(r, conn, SIMNET_CLIENT, 1);
                /* Writes of up to 3,000 bytes in chunks of up to 97: each
                 * was split. */
                assert_true(r->n_bytes_cb > writes);
                assert_int_equal(simnet_stats(r->net)->bytes_delivered[0] +
                                     simnet_stats(r->net)->bytes_delivered[1],
                                 total);
                rec_free(r);
        }
}

/* A client sends on one connection, closes it and sends again on a new
 * one: with some seeds the node reads the new connection's bytes before
 * the old one's, as a resent request overtakes the first; each stream is
 * still whole and in order. */
static void reorder_across_connections(void **state)
{
        unsigned overtaken = 0;
        unsigned in_order = 0;
        uint64_t seed;

        (void)state;
        for (seed = 1; seed <= 60; seed++) {
                struct simnet_config cfg;
                struct rec *r;
                uint64_t now = 0;
                uint64_t a;
                uint64_t b;
                struct side_log *old;
                struct side_log *new;

                simnet_config_defaults(&cfg, seed, 3);
                cfg.delay_max_ms = 200;
                r = rec_new(&cfg);
                a = open_conn(r, 7, 0, &now);
                send_from(r, a, SIMNET_CLIENT, "request#1", 9, now);
                assert_int_equal(simnet_close(r->net, a, SIMNET_CLIENT, now),
                                 0);
                assert_int_equal(simnet_connect(r->net, 7, 0, now, &b), 0);
                drain_until(r, now + 5);
                if (conn_of(r, b)->side[SIMNET_CLIENT].established) {
                        send_from(r, b, SIMNET_CLIENT, "request#1", 9, now + 5);
                }
                drain_until(r, now + 10000);
                old = &conn_of(r, a)->side[SIMNET_NODE];
                new = &conn_of(r, b)->side[SIMNET_NODE];
                check_prefix(r, a, SIMNET_NODE, 1);
                assert_int_equal(old->closed, 1);
                assert_int_equal(old->why, SIMNET_EOF);
                if (new->got.n > 0) {
                        check_prefix(r, b, SIMNET_NODE, 1);
                        if (new->first_got_seq < old->last_got_seq) {
                                overtaken++;
                        } else {
                                in_order++;
                        }
                }
                rec_free(r);
        }
        assert_true(overtaken > 0);
        assert_true(in_order > 0);
}

/* A cut: each side gets a prefix of what was in flight to it, then one
 * RESET, at its own time, and nothing after; what a side sends before it
 * is told is lost, and after it is refused. */
static void cut_tells_each_side_once(void **state)
{
        unsigned skewed = 0;
        unsigned partial = 0;
        unsigned some = 0;
        uint64_t seed;

        (void)state;
        for (seed = 1; seed <= 40; seed++) {
                struct simnet_config cfg;
                struct simnet_fault cut = {.kind = SIMNET_CUT};
                struct rec *r;
                uint64_t now = 0;
                struct conn_log *c;
                int s;

                simnet_config_defaults(&cfg, seed, 3);
                cfg.chunk_max = 16;
                r = rec_new(&cfg);
                cut.conn = open_conn(r, 3, 2, &now);
                c = conn_of(r, cut.conn);
                send_from(r, cut.conn, SIMNET_CLIENT,
                          "abcdefghijklmnopqrstuvwxyz", 26, now);
                send_from(r, cut.conn, SIMNET_NODE, "0123456789012345678901234",
                          25, now);
                drain_until(r, now + 5);
                now += 5;
                assert_int_equal(simnet_apply(r->net, &cut, now), 0);
                for (s = 0; s < 2; s++) {
                        /* Not told yet: lost, without an error. */
                        if (c->side[s].closed == 0) {
                                assert_int_equal(simnet_send(r->net, cut.conn,
                                                             s, "late", 4, now),
                                                 0);
                        }
                }
                drain_until(r, now + 10000);
                for (s = 0; s < 2; s++) {
                        assert_int_equal(c->side[s].closed, 1);
                        assert_int_equal(c->side[s].why, SIMNET_RESET);
                        assert_true(c->side[s].closed_at >= now);
                        check_prefix(r, cut.conn, s, 0);
                        partial += c->side[s].got.n < c->side[!s].sent.n;
                        some += c->side[s].got.n > 0;
                        assert_int_equal(simnet_send(r->net, cut.conn, s, "x",
                                                     1, now + 10000),
                                         BATON_EINVAL);
                }
                skewed += c->side[0].closed_at != c->side[1].closed_at;
                assert_int_equal(simnet_stats(r->net)->cuts, 1);
                assert_int_equal(simnet_stats(r->net)->open_conns, 0);
                rec_free(r);
        }
        assert_true(skewed > 0);
        assert_true(partial > 0);
        assert_true(some > 0);
}

/* A cut attempt fails with RESET, and the node never hears of it. */
static void cut_while_connecting(void **state)
{
        struct simnet_config cfg;
        struct simnet_fault cut = {.kind = SIMNET_CUT};
        struct rec *r;

        (void)state;
        simnet_config_defaults(&cfg, 9, 3);
        r = rec_new(&cfg);
        assert_int_equal(simnet_connect(r->net, 1, 0, 0, &cut.conn), 0);
        assert_int_equal(simnet_apply(r->net, &cut, 0), 0);
        drain_until(r, 10000);
        assert_int_equal(conn_of(r, cut.conn)->failed, 1);
        assert_int_equal(conn_of(r, cut.conn)->fail_why, SIMNET_RESET);
        assert_int_equal(conn_of(r, cut.conn)->side[SIMNET_NODE].established,
                         0);
        rec_free(r);
}

/* A partition between one client and a node stalls both ways without a
 * word to anyone, a new attempt across it times out, other clients and
 * nodes go on; the heal delivers the stalled bytes whole and in order. */
static void partition_stalls_then_heals(void **state)
{
        struct simnet_config cfg;
        struct simnet_fault part = {.kind = SIMNET_PARTITION,
                                    .client = 1,
                                    .node = 0,
                                    .dirs = SIMNET_BOTH};
        struct rec *r;
        uint64_t now = 0;
        uint64_t a;
        uint64_t b;
        uint64_t across;
        uint64_t elsewhere;
        uint64_t start;

        (void)state;
        simnet_config_defaults(&cfg, 17, 3);
        r = rec_new(&cfg);
        a = open_conn(r, 1, 0, &now);
        b = open_conn(r, 2, 0, &now);
        assert_int_equal(simnet_apply(r->net, &part, now), 0);
        send_from(r, a, SIMNET_CLIENT, "stalled", 7, now);
        send_from(r, a, SIMNET_NODE, "answer", 6, now);
        send_from(r, b, SIMNET_CLIENT, "through", 7, now);
        start = now;
        assert_int_equal(simnet_connect(r->net, 1, 0, now, &across), 0);
        assert_int_equal(simnet_connect(r->net, 1, 1, now, &elsewhere), 0);
        drain_until(r, now + 60000);
        /* Nothing is due while only stalled bytes are left. */
        assert_int_equal(simnet_next_due(r->net), SIMNET_NEVER);
        now += 60000;
        assert_int_equal(conn_of(r, a)->side[SIMNET_NODE].got.n, 0);
        assert_int_equal(conn_of(r, a)->side[SIMNET_CLIENT].got.n, 0);
        assert_int_equal(conn_of(r, a)->side[SIMNET_NODE].closed, 0);
        assert_int_equal(conn_of(r, a)->side[SIMNET_CLIENT].closed, 0);
        check_prefix(r, b, SIMNET_NODE, 1);
        assert_int_equal(conn_of(r, across)->failed, 1);
        assert_int_equal(conn_of(r, across)->fail_why, SIMNET_TIMEDOUT);
        assert_int_equal(conn_of(r, across)->failed_at,
                         start + cfg.connect_timeout_ms);
        assert_int_equal(conn_of(r, elsewhere)->side[SIMNET_CLIENT].established,
                         1);
        send_from(r, a, SIMNET_CLIENT, " more", 5, now);
        assert_int_equal(simnet_undo(r->net, &part, now), 0);
        assert_int_equal(simnet_undo(r->net, &part, now), BATON_EINVAL);
        drain_until(r, now + 1000);
        check_prefix(r, a, SIMNET_NODE, 1);
        check_prefix(r, a, SIMNET_CLIENT, 1);
        assert_int_equal(conn_of(r, a)->side[SIMNET_NODE].got.n, 12);
        assert_int_equal(simnet_stats(r->net)->partitions, 1);
        rec_free(r);
}

/* One way only: the node's bytes still reach the client while the
 * client's stall; a node isolated from all its clients stalls them all. */
static void one_way_and_isolation(void **state)
{
        struct simnet_config cfg;
        struct simnet_fault part = {.kind = SIMNET_PARTITION,
                                    .client = 1,
                                    .node = 0,
                                    .dirs = SIMNET_TO_NODE};
        struct simnet_fault iso = {
            .kind = SIMNET_ISOLATE, .node = 0, .dirs = SIMNET_BOTH};
        struct rec *r;
        uint64_t now = 0;
        uint64_t a;
        uint64_t b;

        (void)state;
        simnet_config_defaults(&cfg, 23, 3);
        r = rec_new(&cfg);
        a = open_conn(r, 1, 0, &now);
        b = open_conn(r, 2, 0, &now);
        assert_int_equal(simnet_apply(r->net, &part, now), 0);
        send_from(r, a, SIMNET_CLIENT, "up", 2, now);
        send_from(r, a, SIMNET_NODE, "down", 4, now);
        drain_until(r, now + 5000);
        now += 5000;
        assert_int_equal(conn_of(r, a)->side[SIMNET_NODE].got.n, 0);
        check_prefix(r, a, SIMNET_CLIENT, 1);
        assert_int_equal(simnet_undo(r->net, &part, now), 0);
        assert_int_equal(simnet_apply(r->net, &iso, now), 0);
        send_from(r, b, SIMNET_CLIENT, "b", 1, now);
        drain_until(r, now + 5000);
        now += 5000;
        assert_int_equal(conn_of(r, a)->side[SIMNET_NODE].got.n, 0);
        assert_int_equal(conn_of(r, b)->side[SIMNET_NODE].got.n, 0);
        assert_int_equal(simnet_undo(r->net, &iso, now), 0);
        drain_until(r, now + 1000);
        check_prefix(r, a, SIMNET_NODE, 1);
        check_prefix(r, b, SIMNET_NODE, 1);
        rec_free(r);
}

/* A killed node: its clients are reset (after what was already on its
 * way to them), it hears nothing further and may not send, attempts to it
 * are refused, other nodes go on; revived, it accepts again. */
static void kill_resets_clients_and_refuses(void **state)
{
        struct simnet_config cfg;
        struct simnet_fault kill = {.kind = SIMNET_KILL, .node = 0};
        struct rec *r;
        uint64_t now = 0;
        uint64_t on0[3];
        uint64_t on1;
        uint64_t refused;
        uint64_t later;
        int i;

        (void)state;
        simnet_config_defaults(&cfg, 31, 3);
        r = rec_new(&cfg);
        for (i = 0; i < 3; i++) {
                on0[i] = open_conn(r, 10 + (uint64_t)i, 0, &now);
                send_from(r, on0[i], SIMNET_NODE, "reply", 5, now);
                send_from(r, on0[i], SIMNET_CLIENT, "request", 7, now);
        }
        on1 = open_conn(r, 10, 1, &now);
        for (i = 0; i < 3; i++) {
                send_from(r, on0[i], SIMNET_NODE, "in flight", 9, now);
                send_from(r, on0[i], SIMNET_CLIENT, "too late", 8, now);
        }
        assert_int_equal(simnet_apply(r->net, &kill, now), 0);
        for (i = 0; i < 3; i++) {
                conn_of(r, on0[i])->side[SIMNET_NODE].gone = 1;
                assert_int_equal(
                    simnet_send(r->net, on0[i], SIMNET_NODE, "x", 1, now),
                    BATON_EINVAL);
        }
        assert_int_equal(simnet_connect(r->net, 99, 0, now, &refused), 0);
        send_from(r, on1, SIMNET_CLIENT, "fine", 4, now);
        drain_until(r, now + 10000);
        now += 10000;
        for (i = 0; i < 3; i++) {
                struct side_log *cl = &conn_of(r, on0[i])->side[SIMNET_CLIENT];
                assert_int_equal(cl->closed, 1);
                assert_int_equal(cl->why, SIMNET_RESET);
                assert_true(cl->got.n >= 5);
                check_prefix(r, on0[i], SIMNET_CLIENT, 0);
        }
        assert_int_equal(conn_of(r, refused)->fail_why, SIMNET_REFUSED);
        check_prefix(r, on1, SIMNET_NODE, 1);
        assert_int_equal(simnet_undo(r->net, &kill, now), 0);
        later = open_conn(r, 99, 0, &now);
        assert_int_equal(conn_of(r, later)->side[SIMNET_NODE].established, 1);
        assert_int_equal(simnet_stats(r->net)->kills, 1);
        rec_free(r);
}

/* A paused node hears nothing and accepts nothing until it resumes, while
 * what it sent before still arrives; a paused client is handed nothing. */
static void pause_holds_one_side(void **state)
{
        struct simnet_config cfg;
        struct simnet_fault pn = {.kind = SIMNET_PAUSE_NODE, .node = 2};
        struct simnet_fault pc = {.kind = SIMNET_PAUSE_CLIENT, .client = 5};
        struct rec *r;
        uint64_t now = 0;
        uint64_t a;
        uint64_t t;

        (void)state;
        simnet_config_defaults(&cfg, 37, 3);
        r = rec_new(&cfg);
        a = open_conn(r, 5, 2, &now);
        send_from(r, a, SIMNET_NODE, "sent before", 11, now);
        assert_int_equal(simnet_apply(r->net, &pn, now), 0);
        send_from(r, a, SIMNET_CLIENT, "held", 4, now);
        assert_int_equal(simnet_connect(r->net, 6, 2, now, &t), 0);
        drain_until(r, now + 5000);
        now += 5000;
        check_prefix(r, a, SIMNET_CLIENT, 1);
        assert_int_equal(conn_of(r, a)->side[SIMNET_NODE].got.n, 0);
        assert_int_equal(conn_of(r, t)->fail_why, SIMNET_TIMEDOUT);
        assert_int_equal(simnet_undo(r->net, &pn, now), 0);
        assert_int_equal(simnet_apply(r->net, &pc, now), 0);
        send_from(r, a, SIMNET_NODE, "!", 1, now);
        drain_until(r, now + 5000);
        now += 5000;
        check_prefix(r, a, SIMNET_NODE, 1);
        assert_int_equal(conn_of(r, a)->side[SIMNET_CLIENT].got.n, 11);
        assert_int_equal(simnet_undo(r->net, &pc, now), 0);
        drain_until(r, now + 1000);
        check_prefix(r, a, SIMNET_CLIENT, 1);
        rec_free(r);
}

/* --- A seeded workload, for determinism and the event loop ------------- */

struct undo {
        struct simnet_fault f;
        uint64_t at;
};

/* A killed node's side hears nothing more: mark its connections. */
static void mark_killed(struct rec *r, const struct simnet_fault *f,
                        uint64_t n_conns)
{
        uint64_t id;

        for (id = 1; id <= n_conns && f->kind == SIMNET_KILL; id++) {
                struct side_log *s = &conn_of(r, id)->side[SIMNET_NODE];
                if (conn_of(r, id)->node == f->node && s->established &&
                    !s->closed) {
                        s->gone = 1;
                }
        }
}

/* One random action of the workload at `now`. */
static void act(struct rec *r, struct rng *g, uint64_t now, uint64_t *n_conns,
                struct undo *undos, size_t *n_undos)
{
        static uint8_t buf[600];
        /* One of the 30 newest: most older ones are over. */
        uint64_t id =
            *n_conns > 0
                ? *n_conns -
                      rng_below(g, *n_conns < 30 ? (uint32_t)*n_conns : 30)
                : 0;
        struct conn_log *c = id > 0 ? conn_of(r, id) : NULL;
        enum simnet_side s = rng_below(g, 2);
        struct side_log *sl = c != NULL ? &c->side[s] : NULL;
        int usable = sl != NULL && sl->established && !sl->closed &&
                     !sl->closed_self && !sl->gone;
        unsigned what = rng_below(g, 12);
        uint64_t conn;

        if (what < 3 && *n_conns + 1 < MAX_CONNS) {
                unsigned node = rng_below(g, 3);
                uint64_t client = rng_below(g, 40);
                uint64_t peer;
                assert_int_equal(
                    simnet_connect(r->net, client, node, now, &conn), 0);
                assert_int_equal(conn, *n_conns + 1);
                assert_int_equal(simnet_peer(r->net, conn, &peer, &node), 0);
                assert_int_equal(peer, client);
                conn_of(r, conn)->node = node;
                (*n_conns)++;
        } else if (what < 9 && usable) {
                size_t n = 1 + rng_below(g, sizeof buf);
                fill(g, buf, n);
                send_from(r, id, s, buf, n, now);
        } else if (what == 9 && usable) {
                assert_int_equal(simnet_close(r->net, id, s, now), 0);
                sl->closed_self = 1;
        } else if (what == 10 && rng_below(g, 4) == 0 && *n_undos < 64) {
                struct undo *u = &undos[*n_undos];
                simnet_pick(r->net, &u->f);
                if (simnet_apply(r->net, &u->f, now) == 0 &&
                    u->f.kind != SIMNET_CUT) {
                        mark_killed(r, &u->f, *n_conns);
                        u->at = now + 200 + rng_below(g, 3000);
                        (*n_undos)++;
                }
        }
}

/* 20 virtual seconds of 40 clients on 3 nodes: attempts, sends both ways,
 * closes, and seeded faults undone after a while; the network driven as an
 * event loop. Every stream is checked against what was sent. */
static void workload(struct rec *r, uint64_t seed)
{
        struct rng g = {seed * 7919 + 1};
        struct undo undos[64];
        size_t n_undos = 0;
        uint64_t n_conns = 0;
        uint64_t now = 0;
        uint64_t id;
        size_t i;

        while (now < 20000) {
                now += rng_below(&g, 15);
                drain_until(r, now);
                for (i = n_undos; i-- > 0;) {
                        if (undos[i].at <= now) {
                                assert_int_equal(
                                    simnet_undo(r->net, &undos[i].f, now), 0);
                                undos[i] = undos[--n_undos];
                        }
                }
                act(r, &g, now, &n_conns, undos, &n_undos);
        }
        for (i = 0; i < n_undos; i++) {
                assert_int_equal(simnet_undo(r->net, &undos[i].f, now), 0);
        }
        drain_until(r, now + 60000);
        for (id = 1; id <= n_conns; id++) {
                check_prefix(r, id, SIMNET_NODE,
                             r->c[id].side[SIMNET_NODE].why == SIMNET_EOF);
                check_prefix(r, id, SIMNET_CLIENT,
                             r->c[id].side[SIMNET_CLIENT].why == SIMNET_EOF);
        }
}

static struct rec *run_workload(uint64_t seed)
{
        struct simnet_config cfg;
        struct rec *r;

        simnet_config_defaults(&cfg, seed, 3);
        cfg.chunk_max = 200;
        r = rec_new(&cfg);
        workload(r, seed);
        return r;
}

/* Two runs of one seed hand over the same bytes at the same times, in the
 * same chunks; another seed does not. */
static void same_seed_same_deliveries(void **state)
{
        struct rec *a = run_workload(5);
        struct rec *b = run_workload(5);
        struct rec *c = run_workload(6);
        const struct simnet_stats *st = simnet_stats(a->net);

        (void)state;
        assert_true(a->log.n > 10000);
        assert_int_equal(a->log.n, b->log.n);
        assert_memory_equal(a->log.p, b->log.p, a->log.n);
        assert_true(a->log.n != c->log.n ||
                    memcmp(a->log.p, c->log.p, a->log.n) != 0);
        assert_true(st->connects > 100);
        assert_true(st->bytes_delivered[0] > 0 && st->bytes_delivered[1] > 0);
        assert_true(st->cuts + st->partitions + st->isolations + st->kills +
                        st->pauses + st->spikes >
                    5);
        rec_free(a);
        rec_free(b);
        rec_free(c);
}

/* Connections the recorder knows a side of that may still hear: neither
 * failed nor finished on both sides. */
static uint64_t still_open(const struct rec *r)
{
        uint64_t n = 0;
        size_t id;
        int s;

        for (id = 1; id < MAX_CONNS; id++) {
                const struct conn_log *c = &r->c[id];
                int done = 0;
                if (c->failed || !c->side[SIMNET_NODE].established) {
                        continue;
                }
                for (s = 0; s < 2; s++) {
                        done += c->side[s].closed || c->side[s].closed_self ||
                                c->side[s].gone;
                }
                n += done < 2;
        }
        return n;
}

/* The workload under several seeds, run by next-due times alone
 * (drain_until checks each: nothing before it, something at it, all of it
 * at it), with every fault kind picked at least once. */
static void next_due_drives_an_event_loop(void **state)
{
        uint64_t seed;
        uint64_t kinds = 0;

        (void)state;
        for (seed = 1; seed <= 6; seed++) {
                struct rec *r = run_workload(seed);
                const struct simnet_stats *st = simnet_stats(r->net);
                assert_int_equal(simnet_next_due(r->net), SIMNET_NEVER);
                assert_int_equal(st->open_conns, still_open(r));
                kinds |= (st->cuts > 0) | (st->partitions > 0) << 1 |
                         (st->isolations > 0) << 2 | (st->kills > 0) << 3 |
                         (st->pauses > 0) << 4 | (st->spikes > 0) << 5;
                rec_free(r);
        }
        assert_int_equal(kinds, 0x3f);
}

/* An empty network is never due; a lone attempt is due at its connect
 * time exactly. */
static void next_due_of_one_attempt(void **state)
{
        struct simnet_config cfg;
        struct rec *r;
        uint64_t conn;
        uint64_t due;

        (void)state;
        simnet_config_defaults(&cfg, 3, 3);
        cfg.connect_min_ms = cfg.connect_max_ms = 7;
        r = rec_new(&cfg);
        assert_int_equal(simnet_next_due(r->net), SIMNET_NEVER);
        assert_int_equal(simnet_connect(r->net, 1, 0, 100, &conn), 0);
        due = simnet_next_due(r->net);
        assert_int_equal(due, 107);
        simnet_advance(r->net, 106);
        assert_int_equal(r->seq, 0);
        simnet_advance(r->net, 107);
        assert_int_equal(r->seq, 2);
        /* The pending timeout has nothing left to say. */
        assert_int_equal(simnet_next_due(r->net), SIMNET_NEVER);
        rec_free(r);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(fifo_under_chunks_and_delays),
            cmocka_unit_test(reorder_across_connections),
            cmocka_unit_test(cut_tells_each_side_once),
            cmocka_unit_test(cut_while_connecting),
            cmocka_unit_test(partition_stalls_then_heals),
            cmocka_unit_test(one_way_and_isolation),
            cmocka_unit_test(kill_resets_clients_and_refuses),
            cmocka_unit_test(pause_holds_one_side),
            cmocka_unit_test(same_seed_same_deliveries),
            cmocka_unit_test(next_due_drives_an_event_loop),
            cmocka_unit_test(next_due_of_one_attempt),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
