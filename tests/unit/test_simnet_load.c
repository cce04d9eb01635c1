/* The simulation's network between clients and nodes (tests/lib/simnet.c)
 * under a seeded workload: the same deliveries from the same seed, an
 * event loop run by next-due times alone, thousands of clients, and
 * callbacks that answer, cut and reconnect from inside. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../lib/rng.h"
#include "../lib/simnet.h"
#include "simnetfix.h"

struct undo {
        struct simnet_fault f;
        uint64_t at;
};

/* A killed node's side hears nothing more: mark its connections. */
static void mark_killed(struct simnetfix *r, const struct simnet_fault *f,
                        uint64_t n_conns)
{
        uint64_t id;

        for (id = 1; id <= n_conns && f->kind == SIMNET_KILL; id++) {
                struct simnetfix_side *s =
                    &simnetfix_conn(r, id)->side[SIMNET_NODE];
                if (simnetfix_conn(r, id)->node == f->node && s->established &&
                    !s->closed) {
                        s->gone = 1;
                }
        }
}

/* One random action of the workload at `now`. */
static void act(struct simnetfix *r, struct rng *g, uint64_t now,
                uint64_t *n_conns, struct undo *undos, size_t *n_undos)
{
        static uint8_t buf[600];
        /* One of the 30 newest: most older ones are over. */
        uint64_t id =
            *n_conns > 0
                ? *n_conns -
                      rng_below(g, *n_conns < 30 ? (uint32_t)*n_conns : 30)
                : 0;
        struct simnetfix_conn *c = id > 0 ? simnetfix_conn(r, id) : NULL;
        enum simnet_side s = rng_below(g, 2);
        struct simnetfix_side *sl = c != NULL ? &c->side[s] : NULL;
        int usable = sl != NULL && sl->established && !sl->closed &&
                     !sl->closed_self && !sl->gone;
        unsigned what = rng_below(g, 12);
        uint64_t conn;

        if (what < 3 && *n_conns < 100000) {
                unsigned node = rng_below(g, 3);
                uint64_t client = rng_below(g, 40);
                uint64_t peer;
                assert_int_equal(
                    simnet_connect(r->net, client, node, now, &conn), 0);
                assert_int_equal(conn, *n_conns + 1);
                assert_int_equal(simnet_peer(r->net, conn, &peer, &node), 0);
                assert_int_equal(peer, client);
                simnetfix_conn(r, conn)->node = node;
                (*n_conns)++;
        } else if (what < 9 && usable) {
                size_t n = 1 + rng_below(g, sizeof buf);
                simnetfix_fill(g, buf, n);
                simnetfix_send(r, id, s, buf, n, now);
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
static void workload(struct simnetfix *r, uint64_t seed)
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
                simnetfix_drain(r, now);
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
        simnetfix_drain(r, now + 60000);
        for (id = 1; id <= n_conns; id++) {
                simnetfix_check(r, id, SIMNET_NODE,
                                simnetfix_conn(r, id)->side[SIMNET_NODE].why ==
                                    SIMNET_EOF);
                simnetfix_check(
                    r, id, SIMNET_CLIENT,
                    simnetfix_conn(r, id)->side[SIMNET_CLIENT].why ==
                        SIMNET_EOF);
        }
}

static struct simnetfix *run_workload(uint64_t seed)
{
        struct simnet_config cfg;
        struct simnetfix *r;

        simnet_config_defaults(&cfg, seed, 3);
        cfg.chunk_max = 200;
        r = simnetfix_new(&cfg);
        workload(r, seed);
        return r;
}

/* Two runs of one seed hand over the same bytes at the same times, in the
 * same chunks; another seed does not. */
static void same_seed_same_deliveries(void **state)
{
        struct simnetfix *a = run_workload(5);
        struct simnetfix *b = run_workload(5);
        struct simnetfix *c = run_workload(6);
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
        simnetfix_free(a);
        simnetfix_free(b);
        simnetfix_free(c);
}

/* The workload under several seeds, run by next-due times alone
 * (simnetfix_drain() checks each: nothing before it, something at it, all of it
 * at it), with every fault kind picked at least once. */
static void next_due_drives_an_event_loop(void **state)
{
        uint64_t seed;
        uint64_t kinds = 0;

        (void)state;
        for (seed = 1; seed <= 6; seed++) {
                struct simnetfix *r = run_workload(seed);
                const struct simnet_stats *st = simnet_stats(r->net);
                assert_int_equal(simnet_next_due(r->net), SIMNET_NEVER);
                assert_int_equal(st->open_conns, simnetfix_still_open(r));
                kinds |= (st->cuts > 0) | (st->partitions > 0) << 1 |
                         (st->isolations > 0) << 2 | (st->kills > 0) << 3 |
                         (st->pauses > 0) << 4 | (st->spikes > 0) << 5;
                simnetfix_free(r);
        }
        assert_int_equal(kinds, 0x3f);
}

/* The node side echoes whatever it gets, from inside the callback; with
 * `cut_after` set, a client that has had that many bytes back cuts its
 * connection, from inside the callback too. */
struct echo {
        size_t cut_after;
        unsigned cuts;
};

static void echo_hook(struct simnetfix *f, uint64_t conn, enum simnet_side to,
                      const uint8_t *p, size_t n, uint64_t now)
{
        struct echo *e = f->data;
        struct simnetfix_side *cl =
            &simnetfix_conn(f, conn)->side[SIMNET_CLIENT];
        struct simnet_fault cut = {.kind = SIMNET_CUT, .conn = conn};

        if (to == SIMNET_NODE) {
                simnetfix_send(f, conn, SIMNET_NODE, p, n, now);
        } else if (e->cut_after > 0 && cl->got.n >= e->cut_after &&
                   cl->got.n - n < e->cut_after) {
                assert_int_equal(simnet_apply(f->net, &cut, now), 0);
                e->cuts++;
        }
}

/* Thousands of clients on 5 nodes, each with one connection opened at a
 * random time in the first second and a request echoed back: every echo
 * comes back whole, and nothing is left due. */
static void thousands_of_clients(void **state)
{
        struct simnet_config cfg;
        struct echo e = {0, 0};
        struct simnetfix *f;
        struct rng g = {4242};
        uint64_t id;
        uint64_t now = 0;
        uint8_t req[40];

        (void)state;
        simnet_config_defaults(&cfg, 11, 5);
        cfg.chunk_max = 16;
        f = simnetfix_new(&cfg);
        f->hook = echo_hook;
        f->data = &e;
        for (id = 1; id <= 5000; id++) {
                uint64_t conn;
                now += rng_below(&g, 2) * 1;
                simnetfix_drain(f, now);
                assert_int_equal(simnet_connect(f->net, 1000 + id,
                                                rng_below(&g, 5), now, &conn),
                                 0);
                assert_int_equal(conn, id);
        }
        simnetfix_drain(f, now + 1000);
        now += 1000;
        for (id = 1; id <= 5000; id++) {
                simnetfix_fill(&g, req, sizeof req);
                simnetfix_send(f, id, SIMNET_CLIENT, req, sizeof req, now);
        }
        simnetfix_drain(f, now + 1000);
        assert_int_equal(simnet_next_due(f->net), SIMNET_NEVER);
        for (id = 1; id <= 5000; id++) {
                simnetfix_check(f, id, SIMNET_NODE, 1);
                simnetfix_check(f, id, SIMNET_CLIENT, 1);
                assert_int_equal(
                    simnetfix_conn(f, id)->side[SIMNET_CLIENT].got.n,
                    sizeof req);
        }
        assert_int_equal(simnet_stats(f->net)->established, 5000);
        assert_int_equal(simnet_stats(f->net)->open_conns, 5000);
        simnetfix_free(f);
}

/* Callbacks that send and cut from inside: a stream written over 200 ms,
 * echoed by the node as it arrives, cut by the client once 5,000 bytes
 * came back. Each
 * side is told of the reset once, and what each got is a prefix of what
 * the other sent. */
static void callbacks_echo_and_cut(void **state)
{
        uint64_t seed;

        (void)state;
        for (seed = 1; seed <= 10; seed++) {
                struct simnet_config cfg;
                struct echo e = {5000, 0};
                struct simnetfix *f;
                struct rng g = {seed};
                static uint8_t buf[20000];
                uint64_t now = 0;
                uint64_t conn;
                size_t i;
                int s;

                simnet_config_defaults(&cfg, seed, 3);
                cfg.chunk_max = 300;
                f = simnetfix_new(&cfg);
                f->hook = echo_hook;
                f->data = &e;
                conn = simnetfix_open(f, 1, 0, &now);
                simnetfix_fill(&g, buf, sizeof buf);
                for (i = 0; i < sizeof buf; i += 200) {
                        if (simnetfix_conn(f, conn)
                                ->side[SIMNET_CLIENT]
                                .closed) {
                                break;
                        }
                        simnetfix_send(f, conn, SIMNET_CLIENT, buf + i, 200,
                                       now);
                        now += 2;
                        simnetfix_drain(f, now);
                }
                simnetfix_drain(f, now + 10000);
                assert_int_equal(e.cuts, 1);
                for (s = 0; s < 2; s++) {
                        struct simnetfix_side *side =
                            &simnetfix_conn(f, conn)->side[s];
                        assert_int_equal(side->closed, 1);
                        assert_int_equal(side->why, SIMNET_RESET);
                        simnetfix_check(f, conn, s, 0);
                }
                assert_true(
                    simnetfix_conn(f, conn)->side[SIMNET_CLIENT].got.n >= 5000);
                assert_true(simnetfix_conn(f, conn)->side[SIMNET_NODE].got.n <
                            sizeof buf);
                simnetfix_free(f);
        }
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(same_seed_same_deliveries),
            cmocka_unit_test(next_due_drives_an_event_loop),
            cmocka_unit_test(thousands_of_clients),
            cmocka_unit_test(callbacks_echo_and_cut),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
