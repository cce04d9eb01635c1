/* Unit tests for the leader's packed lease table (src/server/gateway/leases.h):
 * random sets, moves and drops checked against a plain array after every
 * step, the heap and the index checked whole. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../../include/baton.h"
#include "../../src/lib/hmap.h"
#include "../../src/server/gateway/leases.h"

#define MAX_SESSION 3000 /* ids 1..MAX_SESSION: sets and drops collide */

/* The reference: each session's deadline, 0 when it has none. */
struct model {
        uint64_t at[MAX_SESSION + 1];
        unsigned n;
};

static uint64_t rnd(uint64_t *s)
{
        *s ^= *s << 13;
        *s ^= *s >> 7;
        *s ^= *s << 17;
        return *s;
}

/* The table holds exactly the model's leases: lookups find them, the heap is
 * ordered, every entry's slot leads back to it, every used slot leads to an
 * entry, and the first is a smallest deadline. */
static void check(const struct leases *l, const struct model *m)
{
        uint32_t i, j, used = 0;
        const struct lease *first = leases_first(l);
        uint64_t min = UINT64_MAX;

        assert_int_equal(l->n, m->n);
        /* A lookup finds exactly the model's leases. */
        for (i = 1; i <= MAX_SESSION; i += 7) {
                const struct lease *e = leases_find(l, i);
                if (m->at[i] == 0) {
                        assert_null(e);
                } else {
                        assert_non_null(e);
                        assert_int_equal(e->session, i);
                        assert_int_equal(e->at, m->at[i]);
                }
        }
        for (i = 0; i < l->n; i++) {
                const struct lease *e = &l->heap[i];
                assert_true(e->session >= 1 && e->session <= MAX_SESSION);
                assert_int_equal(e->at, m->at[e->session]);
                if (i > 0) {
                        assert_true(l->heap[(i - 1) / 2].at <= e->at);
                }
                if (e->at < min) {
                        min = e->at;
                }
        }
        if (l->n == 0) {
                assert_null(first);
                return;
        }
        assert_non_null(first);
        assert_int_equal(first->at, min);
        assert_true((uint64_t)l->n * 4 <= (uint64_t)(l->mask + 1) * 3);
        for (i = 0; i <= l->mask; i++) {
                if (l->slots[i] == UINT32_MAX) {
                        continue;
                }
                used++;
                assert_true(l->slots[i] < l->n);
                /* Linear probing: no empty slot between the entry's home
                 * and its slot, or a lookup would stop short of it. */
                for (j = (uint32_t)hash_u64(l->heap[l->slots[i]].session) &
                         l->mask;
                     j != i; j = (j + 1) & l->mask) {
                        assert_true(l->slots[j] != UINT32_MAX);
                }
        }
        /* Each entry has exactly one slot: as many used slots as entries,
         * and each slot's entry distinct (positions are). */
        assert_int_equal(used, l->n);
}

static void set(struct leases *l, struct model *m, uint64_t session,
                uint64_t at)
{
        assert_int_equal(leases_set(l, session, at), 0);
        if (m->at[session] == 0) {
                m->n++;
        }
        m->at[session] = at;
}

static void drop(struct leases *l, struct model *m, uint64_t session)
{
        leases_drop(l, session);
        if (m->at[session] != 0) {
                m->n--;
        }
        m->at[session] = 0;
}

static void empty_table(void **state)
{
        struct leases l;

        (void)state;
        leases_init(&l);
        assert_null(leases_first(&l));
        leases_drop(&l, 7); /* nothing to drop */
        leases_move_first(&l, 5);
        assert_null(leases_first(&l));
        leases_clear(&l);
}

static void earliest_first(void **state)
{
        struct leases l;
        const struct lease *f;

        (void)state;
        leases_init(&l);
        assert_int_equal(leases_set(&l, 10, 300), 0);
        assert_int_equal(leases_set(&l, 11, 100), 0);
        assert_int_equal(leases_set(&l, 12, 200), 0);
        f = leases_first(&l);
        assert_int_equal(f->session, 11);
        /* A keepalive moves it: now 12 is due first. */
        assert_int_equal(leases_set(&l, 11, 400), 0);
        assert_int_equal(leases_first(&l)->session, 12);
        /* It fired and re-armed later: 10 is next. */
        leases_move_first(&l, 500);
        assert_int_equal(leases_first(&l)->session, 10);
        leases_drop(&l, 10);
        assert_int_equal(leases_first(&l)->session, 11);
        assert_int_equal(l.n, 2);
        leases_clear(&l);
}

/* 200,000 random steps over 3,000 sessions: sets of new and known
 * sessions, moves of the first, drops (present or not), and a clear;
 * the table agrees with the model after every one. */
static void random_steps_match_the_model(void **state)
{
        static struct model m;
        struct leases l;
        uint64_t seed = 0x9e3779b97f4a7c15u;
        unsigned step;

        (void)state;
        memset(&m, 0, sizeof m);
        leases_init(&l);
        for (step = 0; step < 200000; step++) {
                uint64_t r = rnd(&seed);
                uint64_t session = 1 + r % MAX_SESSION;
                uint64_t at = 1 + (r >> 20) % 100000;
                unsigned op = (unsigned)(r >> 48) % 10;

                if (op < 5) {
                        set(&l, &m, session, at);
                } else if (op < 8) {
                        drop(&l, &m, session);
                } else if (op < 9 && l.n > 0) {
                        uint64_t s = leases_first(&l)->session;
                        leases_move_first(&l, at);
                        m.at[s] = at;
                } else if (step == 100000) {
                        leases_clear(&l);
                        memset(&m, 0, sizeof m);
                }
                if (step % 97 == 0 || l.n < 64) {
                        check(&l, &m);
                }
        }
        check(&l, &m);
        /* Drained in deadline order. */
        {
                uint64_t last = 0;
                while (l.n > 0) {
                        const struct lease *f = leases_first(&l);
                        assert_true(f->at >= last);
                        last = f->at;
                        drop(&l, &m, f->session);
                        if (l.n % 101 == 0) {
                                check(&l, &m);
                        }
                }
        }
        check(&l, &m);
        leases_clear(&l);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(empty_table),
            cmocka_unit_test(earliest_first),
            cmocka_unit_test(random_steps_match_the_model),
        };
        return cmocka_run_group_tests_name("leases", tests, NULL, NULL);
}
