/* The simulation's network between clients and nodes (tests/lib/simnet.c),
 * case by case: each connection's streams whole and in order under seeded
 * delays and chunks, connections reordered among themselves, and cuts,
 * partitions, kills and pauses as each side sees them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../include/baton/errors.h"
#include "../lib/rng.h"
#include "../lib/simnet.h"
#include "simnetfix.h"

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
                struct simnetfix *r;
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
                r = simnetfix_new(&cfg);
                conn = simnetfix_open(r, 42, 1, &now);
                while (total < 150000) {
                        size_t n = 1 + rng_below(&g, sizeof buf);
                        enum simnet_side from = rng_below(&g, 2);
                        simnetfix_fill(&g, buf, n);
                        simnetfix_send(r, conn, from, buf, n, now);
                        total += n;
                        writes++;
                        now += rng_below(&g, 4);
                        simnetfix_drain(r, now);
                }
                simnetfix_drain(r, now + 10000);
                assert_int_equal(simnet_next_due(r->net), SIMNET_NEVER);
                simnetfix_check(r, conn, SIMNET_NODE, 1);
                simnetfix_check(r, conn, SIMNET_CLIENT, 1);
                /* Writes of up to 3,000 bytes in chunks of up to 97: each
                 * was split. */
                assert_true(r->n_bytes_cb > writes);
                assert_int_equal(simnet_stats(r->net)->bytes_delivered[0] +
                                     simnet_stats(r->net)->bytes_delivered[1],
                                 total);
                simnetfix_free(r);
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
                struct simnetfix *r;
                uint64_t now = 0;
                uint64_t a;
                uint64_t b;
                struct simnetfix_side *old;
                struct simnetfix_side *new;

                simnet_config_defaults(&cfg, seed, 3);
                cfg.delay_max_ms = 200;
                r = simnetfix_new(&cfg);
                a = simnetfix_open(r, 7, 0, &now);
                simnetfix_send(r, a, SIMNET_CLIENT, "request#1", 9, now);
                assert_int_equal(simnet_close(r->net, a, SIMNET_CLIENT, now),
                                 0);
                assert_int_equal(simnet_connect(r->net, 7, 0, now, &b), 0);
                simnetfix_drain(r, now + 5);
                if (simnetfix_conn(r, b)->side[SIMNET_CLIENT].established) {
                        simnetfix_send(r, b, SIMNET_CLIENT, "request#1", 9,
                                       now + 5);
                }
                simnetfix_drain(r, now + 10000);
                old = &simnetfix_conn(r, a)->side[SIMNET_NODE];
                new = &simnetfix_conn(r, b)->side[SIMNET_NODE];
                simnetfix_check(r, a, SIMNET_NODE, 1);
                assert_int_equal(old->closed, 1);
                assert_int_equal(old->why, SIMNET_EOF);
                if (new->got.n > 0) {
                        simnetfix_check(r, b, SIMNET_NODE, 1);
                        if (new->first_got_seq < old->last_got_seq) {
                                overtaken++;
                        } else {
                                in_order++;
                        }
                }
                simnetfix_free(r);
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
                struct simnetfix *r;
                uint64_t now = 0;
                struct simnetfix_conn *c;
                int s;

                simnet_config_defaults(&cfg, seed, 3);
                cfg.chunk_max = 16;
                r = simnetfix_new(&cfg);
                cut.conn = simnetfix_open(r, 3, 2, &now);
                c = simnetfix_conn(r, cut.conn);
                simnetfix_send(r, cut.conn, SIMNET_CLIENT,
                               "abcdefghijklmnopqrstuvwxyz", 26, now);
                simnetfix_send(r, cut.conn, SIMNET_NODE,
                               "0123456789012345678901234", 25, now);
                simnetfix_drain(r, now + 5);
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
                simnetfix_drain(r, now + 10000);
                for (s = 0; s < 2; s++) {
                        assert_int_equal(c->side[s].closed, 1);
                        assert_int_equal(c->side[s].why, SIMNET_RESET);
                        assert_true(c->side[s].closed_at >= now);
                        simnetfix_check(r, cut.conn, s, 0);
                        partial += c->side[s].got.n < c->side[!s].sent.n;
                        some += c->side[s].got.n > 0;
                        assert_int_equal(simnet_send(r->net, cut.conn, s, "x",
                                                     1, now + 10000),
                                         BATON_EINVAL);
                }
                skewed += c->side[0].closed_at != c->side[1].closed_at;
                assert_int_equal(simnet_stats(r->net)->cuts, 1);
                assert_int_equal(simnet_stats(r->net)->open_conns, 0);
                simnetfix_free(r);
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
        struct simnetfix *r;

        (void)state;
        simnet_config_defaults(&cfg, 9, 3);
        r = simnetfix_new(&cfg);
        assert_int_equal(simnet_connect(r->net, 1, 0, 0, &cut.conn), 0);
        assert_int_equal(simnet_apply(r->net, &cut, 0), 0);
        simnetfix_drain(r, 10000);
        assert_int_equal(simnetfix_conn(r, cut.conn)->failed, 1);
        assert_int_equal(simnetfix_conn(r, cut.conn)->fail_why, SIMNET_RESET);
        assert_int_equal(
            simnetfix_conn(r, cut.conn)->side[SIMNET_NODE].established, 0);
        simnetfix_free(r);
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
        struct simnetfix *r;
        uint64_t now = 0;
        uint64_t a;
        uint64_t b;
        uint64_t across;
        uint64_t elsewhere;
        uint64_t start;

        (void)state;
        simnet_config_defaults(&cfg, 17, 3);
        r = simnetfix_new(&cfg);
        a = simnetfix_open(r, 1, 0, &now);
        b = simnetfix_open(r, 2, 0, &now);
        assert_int_equal(simnet_apply(r->net, &part, now), 0);
        simnetfix_send(r, a, SIMNET_CLIENT, "stalled", 7, now);
        simnetfix_send(r, a, SIMNET_NODE, "answer", 6, now);
        simnetfix_send(r, b, SIMNET_CLIENT, "through", 7, now);
        start = now;
        assert_int_equal(simnet_connect(r->net, 1, 0, now, &across), 0);
        assert_int_equal(simnet_connect(r->net, 1, 1, now, &elsewhere), 0);
        simnetfix_drain(r, now + 60000);
        /* Nothing is due while only stalled bytes are left. */
        assert_int_equal(simnet_next_due(r->net), SIMNET_NEVER);
        now += 60000;
        assert_int_equal(simnetfix_conn(r, a)->side[SIMNET_NODE].got.n, 0);
        assert_int_equal(simnetfix_conn(r, a)->side[SIMNET_CLIENT].got.n, 0);
        assert_int_equal(simnetfix_conn(r, a)->side[SIMNET_NODE].closed, 0);
        assert_int_equal(simnetfix_conn(r, a)->side[SIMNET_CLIENT].closed, 0);
        simnetfix_check(r, b, SIMNET_NODE, 1);
        assert_int_equal(simnetfix_conn(r, across)->failed, 1);
        assert_int_equal(simnetfix_conn(r, across)->fail_why, SIMNET_TIMEDOUT);
        assert_int_equal(simnetfix_conn(r, across)->failed_at,
                         start + cfg.connect_timeout_ms);
        assert_int_equal(
            simnetfix_conn(r, elsewhere)->side[SIMNET_CLIENT].established, 1);
        simnetfix_send(r, a, SIMNET_CLIENT, " more", 5, now);
        assert_int_equal(simnet_undo(r->net, &part, now), 0);
        assert_int_equal(simnet_undo(r->net, &part, now), BATON_EINVAL);
        simnetfix_drain(r, now + 1000);
        simnetfix_check(r, a, SIMNET_NODE, 1);
        simnetfix_check(r, a, SIMNET_CLIENT, 1);
        assert_int_equal(simnetfix_conn(r, a)->side[SIMNET_NODE].got.n, 12);
        assert_int_equal(simnet_stats(r->net)->partitions, 1);
        simnetfix_free(r);
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
        struct simnetfix *r;
        uint64_t now = 0;
        uint64_t a;
        uint64_t b;

        (void)state;
        simnet_config_defaults(&cfg, 23, 3);
        r = simnetfix_new(&cfg);
        a = simnetfix_open(r, 1, 0, &now);
        b = simnetfix_open(r, 2, 0, &now);
        part.dirs = 0;
        assert_int_equal(simnet_apply(r->net, &part, now), BATON_EINVAL);
        part.dirs = SIMNET_TO_NODE;
        assert_int_equal(simnet_apply(r->net, &part, now), 0);
        simnetfix_send(r, a, SIMNET_CLIENT, "up", 2, now);
        simnetfix_send(r, a, SIMNET_NODE, "down", 4, now);
        simnetfix_drain(r, now + 5000);
        now += 5000;
        assert_int_equal(simnetfix_conn(r, a)->side[SIMNET_NODE].got.n, 0);
        simnetfix_check(r, a, SIMNET_CLIENT, 1);
        assert_int_equal(simnet_undo(r->net, &part, now), 0);
        assert_int_equal(simnet_apply(r->net, &iso, now), 0);
        simnetfix_send(r, b, SIMNET_CLIENT, "b", 1, now);
        simnetfix_drain(r, now + 5000);
        now += 5000;
        assert_int_equal(simnetfix_conn(r, a)->side[SIMNET_NODE].got.n, 0);
        assert_int_equal(simnetfix_conn(r, b)->side[SIMNET_NODE].got.n, 0);
        assert_int_equal(simnet_undo(r->net, &iso, now), 0);
        simnetfix_drain(r, now + 1000);
        simnetfix_check(r, a, SIMNET_NODE, 1);
        simnetfix_check(r, b, SIMNET_NODE, 1);
        simnetfix_free(r);
}

/* A killed node: its clients are reset (after what was already on its
 * way to them), it hears nothing further and may not send, attempts to it
 * are refused, other nodes go on; revived, it accepts again. */
static void kill_resets_clients_and_refuses(void **state)
{
        struct simnet_config cfg;
        struct simnet_fault kill = {.kind = SIMNET_KILL, .node = 0};
        struct simnetfix *r;
        uint64_t now = 0;
        uint64_t on0[3];
        uint64_t on1;
        uint64_t refused;
        uint64_t later;
        int i;

        (void)state;
        simnet_config_defaults(&cfg, 31, 3);
        r = simnetfix_new(&cfg);
        for (i = 0; i < 3; i++) {
                on0[i] = simnetfix_open(r, 10 + (uint64_t)i, 0, &now);
                simnetfix_send(r, on0[i], SIMNET_NODE, "reply", 5, now);
                simnetfix_send(r, on0[i], SIMNET_CLIENT, "request", 7, now);
        }
        on1 = simnetfix_open(r, 10, 1, &now);
        for (i = 0; i < 3; i++) {
                simnetfix_send(r, on0[i], SIMNET_NODE, "in flight", 9, now);
                simnetfix_send(r, on0[i], SIMNET_CLIENT, "too late", 8, now);
        }
        assert_int_equal(simnet_apply(r->net, &kill, now), 0);
        for (i = 0; i < 3; i++) {
                simnetfix_conn(r, on0[i])->side[SIMNET_NODE].gone = 1;
                assert_int_equal(
                    simnet_send(r->net, on0[i], SIMNET_NODE, "x", 1, now),
                    BATON_EINVAL);
        }
        assert_int_equal(simnet_connect(r->net, 99, 0, now, &refused), 0);
        simnetfix_send(r, on1, SIMNET_CLIENT, "fine", 4, now);
        simnetfix_drain(r, now + 10000);
        now += 10000;
        for (i = 0; i < 3; i++) {
                struct simnetfix_side *cl =
                    &simnetfix_conn(r, on0[i])->side[SIMNET_CLIENT];
                assert_int_equal(cl->closed, 1);
                assert_int_equal(cl->why, SIMNET_RESET);
                assert_true(cl->got.n >= 5);
                simnetfix_check(r, on0[i], SIMNET_CLIENT, 0);
        }
        assert_int_equal(simnetfix_conn(r, refused)->fail_why, SIMNET_REFUSED);
        simnetfix_check(r, on1, SIMNET_NODE, 1);
        assert_int_equal(simnet_undo(r->net, &kill, now), 0);
        later = simnetfix_open(r, 99, 0, &now);
        assert_int_equal(
            simnetfix_conn(r, later)->side[SIMNET_NODE].established, 1);
        assert_int_equal(simnet_stats(r->net)->kills, 1);
        simnetfix_free(r);
}

/* A paused node hears nothing and accepts nothing until it resumes, while
 * what it sent before still arrives; a paused client is handed nothing. */
static void pause_holds_one_side(void **state)
{
        struct simnet_config cfg;
        struct simnet_fault pn = {.kind = SIMNET_PAUSE_NODE, .node = 2};
        struct simnet_fault pc = {.kind = SIMNET_PAUSE_CLIENT, .client = 5};
        struct simnetfix *r;
        uint64_t now = 0;
        uint64_t a;
        uint64_t t;

        (void)state;
        simnet_config_defaults(&cfg, 37, 3);
        r = simnetfix_new(&cfg);
        a = simnetfix_open(r, 5, 2, &now);
        simnetfix_send(r, a, SIMNET_NODE, "sent before", 11, now);
        assert_int_equal(simnet_apply(r->net, &pn, now), 0);
        simnetfix_send(r, a, SIMNET_CLIENT, "held", 4, now);
        assert_int_equal(simnet_connect(r->net, 6, 2, now, &t), 0);
        simnetfix_drain(r, now + 5000);
        now += 5000;
        simnetfix_check(r, a, SIMNET_CLIENT, 1);
        assert_int_equal(simnetfix_conn(r, a)->side[SIMNET_NODE].got.n, 0);
        assert_int_equal(simnetfix_conn(r, t)->fail_why, SIMNET_TIMEDOUT);
        assert_int_equal(simnet_undo(r->net, &pn, now), 0);
        assert_int_equal(simnet_apply(r->net, &pc, now), 0);
        simnetfix_send(r, a, SIMNET_NODE, "!", 1, now);
        simnetfix_drain(r, now + 5000);
        now += 5000;
        simnetfix_check(r, a, SIMNET_NODE, 1);
        assert_int_equal(simnetfix_conn(r, a)->side[SIMNET_CLIENT].got.n, 11);
        assert_int_equal(simnet_undo(r->net, &pc, now), 0);
        simnetfix_drain(r, now + 1000);
        simnetfix_check(r, a, SIMNET_CLIENT, 1);
        simnetfix_free(r);
}

/* A client that closes its attempt before it is established abandons it:
 * nobody hears of it. A node that closes after writing: the client gets
 * every byte, then EOF, and may send no more. */
static void abandon_and_node_close(void **state)
{
        struct simnet_config cfg;
        struct simnetfix *f;
        uint64_t now = 0;
        uint64_t gone;
        uint64_t conn;

        (void)state;
        simnet_config_defaults(&cfg, 41, 3);
        f = simnetfix_new(&cfg);
        assert_int_equal(simnet_connect(f->net, 1, 0, now, &gone), 0);
        assert_int_equal(simnet_close(f->net, gone, SIMNET_NODE, now),
                         BATON_EINVAL);
        assert_int_equal(simnet_close(f->net, gone, SIMNET_CLIENT, now), 0);
        assert_int_equal(simnet_next_due(f->net), SIMNET_NEVER);
        assert_int_equal(f->seq, 0);
        assert_int_equal(simnet_stats(f->net)->open_conns, 0);
        conn = simnetfix_open(f, 1, 0, &now);
        simnetfix_send(f, conn, SIMNET_NODE, "error frame", 11, now);
        assert_int_equal(simnet_close(f->net, conn, SIMNET_NODE, now), 0);
        simnetfix_conn(f, conn)->side[SIMNET_NODE].closed_self = 1;
        assert_int_equal(simnet_send(f->net, conn, SIMNET_NODE, "x", 1, now),
                         BATON_EINVAL);
        simnetfix_drain(f, now + 1000);
        simnetfix_check(f, conn, SIMNET_CLIENT, 1);
        assert_int_equal(simnetfix_conn(f, conn)->side[SIMNET_CLIENT].why,
                         SIMNET_EOF);
        assert_int_equal(simnet_send(f->net, conn, SIMNET_CLIENT, "y", 1, now),
                         BATON_EINVAL);
        assert_int_equal(simnet_stats(f->net)->open_conns, 0);
        simnetfix_free(f);
}

/* An empty network is never due; a lone attempt is due at its connect
 * time exactly. */
static void next_due_of_one_attempt(void **state)
{
        struct simnet_config cfg;
        struct simnetfix *r;
        uint64_t conn;
        uint64_t due;

        (void)state;
        simnet_config_defaults(&cfg, 3, 3);
        cfg.connect_min_ms = cfg.connect_max_ms = 7;
        r = simnetfix_new(&cfg);
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
        simnetfix_free(r);
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
            cmocka_unit_test(abandon_and_node_close),
            cmocka_unit_test(next_due_of_one_attempt),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
