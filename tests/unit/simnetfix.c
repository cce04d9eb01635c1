/* A recorder behind a simulated client network, for its unit tests. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../src/lib/hmap.h"
#include "simnetfix.h"

static void put(struct simnetfix_bytes *b, const void *p, size_t n)
{
        if (b->n + n > b->cap) {
                b->cap = (b->n + n) * 2 + 64;
                b->p = realloc(b->p, b->cap);
                assert_non_null(b->p);
        }
        memcpy(b->p + b->n, p, n);
        b->n += n;
}

/* Records come in blocks that never move, so that a test may hold one
 * while more connections are made. */
#define BLOCK 1024

struct simnetfix_conn *simnetfix_conn(struct simnetfix *f, uint64_t conn)
{
        size_t b = (size_t)(conn / BLOCK);

        assert_true(conn > 0 && conn < 1000000);
        if (b >= f->n_blocks) {
                f->blocks = realloc(f->blocks, (b + 1) * sizeof *f->blocks);
                assert_non_null(f->blocks);
                while (f->n_blocks <= b) {
                        f->blocks[f->n_blocks] =
                            calloc(BLOCK, sizeof **f->blocks);
                        assert_non_null(f->blocks[f->n_blocks]);
                        f->n_blocks++;
                }
        }
        return &f->blocks[b][conn % BLOCK];
}

/* Log a callback at `now` and check its time. */
static void note(struct simnetfix *f, uint64_t now, const char *fmt, ...)
{
        char line[160];
        int n = snprintf(line, sizeof line, "%llu ", (unsigned long long)now);
        va_list ap;

        va_start(ap, fmt);
        n += vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
        va_end(ap);
        put(&f->log, line, (size_t)n);
        put(&f->log, "\n", 1);
        assert_true(now >= f->last_now);
        if (f->ok_at != SIMNET_NEVER) {
                assert_int_equal(now, f->ok_at);
        }
        f->last_now = now;
        f->seq++;
}

static void check_alive(const struct simnetfix_side *s)
{
        assert_int_equal(s->closed, 0);
        assert_int_equal(s->closed_self, 0);
        assert_int_equal(s->gone, 0);
}

static void on_established(void *data, uint64_t conn, enum simnet_side side,
                           uint64_t now)
{
        struct simnetfix *f = data;
        struct simnetfix_conn *c = simnetfix_conn(f, conn);

        check_alive(&c->side[side]);
        assert_int_equal(c->side[side].established, 0);
        if (side == SIMNET_CLIENT) {
                assert_int_equal(c->side[SIMNET_NODE].established, 1);
        }
        c->side[side].established++;
        note(f, now, "up %llu %d", (unsigned long long)conn, (int)side);
}

static void on_failed(void *data, uint64_t conn, enum simnet_why why,
                      uint64_t now)
{
        struct simnetfix *f = data;
        struct simnetfix_conn *c = simnetfix_conn(f, conn);

        assert_int_equal(c->failed, 0);
        assert_int_equal(c->side[SIMNET_CLIENT].established, 0);
        assert_int_equal(c->side[SIMNET_NODE].established, 0);
        c->failed++;
        c->fail_why = why;
        c->failed_at = now;
        note(f, now, "fail %llu %d", (unsigned long long)conn, (int)why);
}

static void on_bytes(void *data, uint64_t conn, enum simnet_side to,
                     const uint8_t *p, size_t n, uint64_t now)
{
        struct simnetfix *f = data;
        struct simnetfix_side *s = &simnetfix_conn(f, conn)->side[to];

        check_alive(s);
        assert_int_equal(s->established, 1);
        assert_true(n > 0);
        put(&s->got, p, n);
        note(f, now, "bytes %llu %d %zu %016llx", (unsigned long long)conn,
             (int)to, n, (unsigned long long)hash_bytes(p, n));
        if (s->first_got_seq == 0) {
                s->first_got_seq = f->seq;
        }
        s->last_got_seq = f->seq;
        f->n_bytes_cb++;
        if (f->hook != NULL) {
                f->hook(f, conn, to, p, n, now);
        }
}

static void on_closed(void *data, uint64_t conn, enum simnet_side side,
                      enum simnet_why why, uint64_t now)
{
        struct simnetfix *f = data;
        struct simnetfix_side *s = &simnetfix_conn(f, conn)->side[side];

        check_alive(s);
        assert_int_equal(s->established, 1);
        s->closed++;
        s->why = why;
        s->closed_at = now;
        note(f, now, "closed %llu %d %d", (unsigned long long)conn, (int)side,
             (int)why);
}

struct simnetfix *simnetfix_new(const struct simnet_config *cfg)
{
        struct simnetfix *f = calloc(1, sizeof *f);
        struct simnet_cbs cbs = {NULL, on_established, on_failed, on_bytes,
                                 on_closed};

        assert_non_null(f);
        cbs.data = f;
        f->ok_at = SIMNET_NEVER;
        f->net = simnet_create(cfg, &cbs);
        assert_non_null(f->net);
        return f;
}

void simnetfix_free(struct simnetfix *f)
{
        size_t i;
        int s;

        simnet_destroy(f->net);
        for (i = 0; i < f->n_blocks * BLOCK; i++) {
                struct simnetfix_conn *c = &f->blocks[i / BLOCK][i % BLOCK];
                for (s = 0; s < 2; s++) {
                        free(c->side[s].sent.p);
                        free(c->side[s].got.p);
                }
        }
        for (i = 0; i < f->n_blocks; i++) {
                free(f->blocks[i]);
        }
        free(f->blocks);
        free(f->log.p);
        free(f);
}

void simnetfix_send(struct simnetfix *f, uint64_t conn, enum simnet_side side,
                    const void *p, size_t n, uint64_t now)
{
        assert_int_equal(simnet_send(f->net, conn, side, p, n, now), 0);
        put(&simnetfix_conn(f, conn)->side[side].sent, p, n);
}

void simnetfix_check(struct simnetfix *f, uint64_t conn, enum simnet_side to,
                     int whole)
{
        struct simnetfix_conn *c = simnetfix_conn(f, conn);
        const struct simnetfix_bytes *got = &c->side[to].got;
        const struct simnetfix_bytes *sent = &c->side[!to].sent;

        assert_true(got->n <= sent->n);
        if (whole) {
                assert_int_equal(got->n, sent->n);
        }
        assert_true(got->n == 0 || memcmp(got->p, sent->p, got->n) == 0);
}

void simnetfix_drain(struct simnetfix *f, uint64_t until)
{
        uint64_t due;

        while ((due = simnet_next_due(f->net)) <= until) {
                uint64_t before = f->seq;
                if (due > 0) {
                        simnet_advance(f->net, due - 1);
                        assert_int_equal(f->seq, before);
                }
                f->ok_at = due;
                simnet_advance(f->net, due);
                f->ok_at = SIMNET_NEVER;
                assert_true(f->seq > before);
        }
        simnet_advance(f->net, until);
}

uint64_t simnetfix_open(struct simnetfix *f, uint64_t client, unsigned node,
                        uint64_t *now)
{
        uint64_t conn;

        assert_int_equal(simnet_connect(f->net, client, node, *now, &conn), 0);
        simnetfix_conn(f, conn)->node = node;
        *now += 1000;
        simnetfix_drain(f, *now);
        assert_int_equal(
            simnetfix_conn(f, conn)->side[SIMNET_CLIENT].established, 1);
        return conn;
}

void simnetfix_fill(struct rng *g, uint8_t *p, size_t n)
{
        size_t i;

        for (i = 0; i < n; i++) {
                p[i] = (uint8_t)rng_next(g);
        }
}

uint64_t simnetfix_still_open(struct simnetfix *f)
{
        uint64_t n = 0;
        size_t id;
        int s;

        for (id = 1; id < f->n_blocks * BLOCK; id++) {
                const struct simnetfix_conn *c = simnetfix_conn(f, id);
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
