/*
 * What the lock state machine takes per session, per lock and per outcome
 * in flight, as batond holds it: records in the pool's slabs
 * (src/lib/pool.h) and tables from its allocator, so that the counts are
 * what the state takes, the rounding of each record to 8 bytes and the
 * slabs' slack included, and what a change to a record's layout moves.
 * docs/performance.md has the resident figures of a running node, which
 * add the raft log and the snapshot image kept.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../include/baton.h"
#include "../../src/fsm/lockfsm.h"
#include "../../src/lib/pool.h"

/* A sanitizer build follows each record with a redzone, and rounds the
 * two to 8 bytes again: a session has two records (itself, its outcome
 * array), and so has a lock (itself, its grant). */
#define REDZONES (POOL_REDZONE != 0 ? 2 * (POOL_REDZONE + 8) : 0)

/* What the state asks of its allocator (tables, the tombstone ring,
 * large outcome arrays); each block carries its size in front so free
 * can subtract it. */
struct counter {
        size_t live;
        struct mem mem;
};

static void *count_alloc(void *ctx, size_t size)
{
        struct counter *c = ctx;
        size_t *p = malloc(sizeof *p + size);

        if (p == NULL) {
                return NULL;
        }
        *p = size;
        c->live += size;
        return p + 1;
}

static void count_free(void *ctx, void *ptr)
{
        struct counter *c = ctx;
        size_t *p = ptr;

        if (p == NULL) {
                return;
        }
        c->live -= p[-1];
        free(p - 1);
}

struct fixture {
        struct counter c;
        struct lockfsm *f;
        uint64_t index;
        /* Count the records' own bytes, not the slabs committed: for
         * differences smaller than a slab. */
        bool records;
};

#define N_SESSIONS 4096u

static struct fixture *fixture_new(bool records)
{
        struct fixture *x = calloc(1, sizeof *x);
        struct lockfsm_limits l;

        lockfsm_limits_default(&l);
        l.max_sessions = N_SESSIONS;
        x->c.mem = (struct mem){count_alloc, count_free, &x->c, NULL};
        x->f = lockfsm_create(&l, &x->c.mem);
        x->records = records;
        assert_non_null(x->f);
        return x;
}

/* The bytes the state takes now. */
static size_t taken(const struct fixture *x)
{
        struct lockfsm_stats st;

        lockfsm_stats(x->f, &st);
        return x->c.live +
               (size_t)(x->records ? st.record_bytes : st.slab_bytes);
}

/* Counts of slabs: what the state really takes, the rounding of each
 * record and the slabs' slack included. Over 4,096 sessions a slab is
 * 16 bytes per session, over 16,384 locks 4 bytes per lock. */
static int setup(void **state)
{
        *state = fixture_new(false);
        return 0;
}

/* Counts of each record's bytes. */
static int setup_records(void **state)
{
        *state = fixture_new(true);
        return 0;
}

static int teardown(void **state)
{
        struct fixture *x = *state;

        lockfsm_destroy(x->f);
        assert_int_equal(x->c.live, 0);
        free(x);
        return 0;
}

static struct lockfsm_result apply(struct fixture *x, const struct command *c)
{
        struct lockfsm_result r;

        assert_int_equal(lockfsm_apply_command(x->f, ++x->index, c, &r), 0);
        return r;
}

/* Opens N_SESSIONS sessions with a 16-byte client name; their ids. */
static uint64_t *open_all(struct fixture *x)
{
        uint64_t *ids = calloc(N_SESSIONS, sizeof *ids);
        uint8_t hash[COMMAND_HASH_SIZE] = {1};
        unsigned i;

        for (i = 0; i < N_SESSIONS; i++) {
                struct command c = {.type = COMMAND_OPEN,
                                    .ttl_ms = 60000,
                                    .nonce = i + 1,
                                    .name = "worker-000000001",
                                    .name_len = 16,
                                    .hash = hash};
                struct lockfsm_result r = apply(x, &c);
                assert_int_equal(r.status, 0);
                ids[i] = r.session;
        }
        return ids;
}

static struct command acquire(uint64_t session, uint64_t seq, uint64_t ack,
                              const char *name)
{
        return (struct command){.type = COMMAND_ACQUIRE,
                                .session = session,
                                .seq = seq,
                                .ack = ack,
                                .owner = 1,
                                .name = name,
                                .name_len = (uint8_t)strlen(name)};
}

/* A session costs its record and its share of two index tables, nothing
 * reserved for outcomes it has not asked for. */
static void test_bytes_per_session(void **state)
{
        struct fixture *x = *state;
        size_t before = taken(x);
        uint64_t *ids = open_all(x);
        size_t per = (taken(x) - before) / N_SESSIONS;

        printf("# %zu bytes per session\n", per);
        assert_true(per <= 150 + REDZONES);
        free(ids);
}

/* Each session of `ids` takes 4 locks, PREFIX/I/J with I its index
 * (`width` digits at least) and J 1 to 4, acknowledging every answer. */
static void take_four_each(struct fixture *x, const uint64_t *ids,
                           const char *prefix, int width)
{
        char name[40];
        unsigned i, j;

        for (i = 0; i < N_SESSIONS; i++) {
                for (j = 1; j <= 4; j++) {
                        struct command c;
                        snprintf(name, sizeof name, "%s/%0*u/%u", prefix, width,
                                 i, j);
                        c = acquire(ids[i], j, j, name);
                        assert_int_equal(apply(x, &c).kind, PROTO_KIND_GRANTED);
                }
        }
}

/* A lock taken by a client that waits for each answer costs the lock, its
 * grant, one remembered outcome and its share of the lock table. */
static void test_bytes_per_lock(void **state)
{
        struct fixture *x = *state;
        uint64_t *ids = open_all(x);
        size_t before = taken(x), per;

        take_four_each(x, ids, "fleet", 0);
        per = (taken(x) - before) / (4 * N_SESSIONS);
        printf("# %zu bytes per lock\n", per);
        assert_true(per <= 156 + REDZONES);
        free(ids);
}

/* Takes locks n/from..to/ for `session`, each request acknowledging up to
 * `ack` (0: everything before it). Returns the bytes it added. */
static size_t take(struct fixture *x, uint64_t session, const char *prefix,
                   unsigned from, unsigned to, uint64_t ack)
{
        size_t before = taken(x);
        char name[32];
        unsigned j;

        for (j = from; j <= to; j++) {
                struct command c;
                snprintf(name, sizeof name, "%s/%02u", prefix, j);
                c = acquire(session, j, ack != 0 ? ack : j, name);
                assert_int_equal(apply(x, &c).kind, PROTO_KIND_GRANTED);
        }
        return taken(x) - before;
}

/* A burst of pipelined requests keeps one outcome each until acknowledged,
 * then the session gives the room back: it costs what a session that
 * waited for every answer costs. */
static void test_outcomes_follow_what_is_in_flight(void **state)
{
        struct fixture *x = *state;
        uint64_t *ids = open_all(x);
        size_t piped, waited;

        /* Room in the lock table for what follows, so neither session
         * pays for its growth: 300 locks grow it to 512 slots, which hold
         * 384. */
        take(x, ids[2], "r2", 1, 100, 0);
        take(x, ids[3], "r3", 1, 100, 0);
        take(x, ids[4], "r4", 1, 100, 0);
        /* Session 0 pipelines 16 requests (all ack 1), session 1 waits. */
        piped = take(x, ids[0], "p", 1, 16, 1);
        waited = take(x, ids[1], "w", 1, 16, 0);
        assert_true(piped >= waited + 15 * 32);
        /* Two more requests each, acknowledging every answer. */
        piped += take(x, ids[0], "p", 17, 18, 0);
        waited += take(x, ids[1], "w", 17, 18, 0);
        assert_int_equal(piped, waited);
        assert_null(lockfsm_check(x->f));
        free(ids);
}

/* Fills `x` with N_SESSIONS sessions of 4 locks each, named as
 * `baton-bench --workload fill` names them (17 bytes). */
static void fill(struct fixture *x)
{
        uint64_t *ids = open_all(x);

        take_four_each(x, ids, "lockbench", 5);
        free(ids);
}

/* A session with 4 locks named as the fill names them, in slabs: the
 * figure docs/history/scale.md breaks down ("Where a lock's bytes go"). */
static void test_fill_session(void **state)
{
        struct fixture *x = *state;
        size_t before = taken(x), per;

        fill(x);
        per = (taken(x) - before) / N_SESSIONS;
        printf("# a session with 4 locks: %zu bytes\n", per);
        assert_true(per <= 850 + 5 * REDZONES);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_bytes_per_session, setup,
                                            teardown),
            cmocka_unit_test_setup_teardown(test_bytes_per_lock, setup,
                                            teardown),
            cmocka_unit_test_setup_teardown(
                test_outcomes_follow_what_is_in_flight, setup_records,
                teardown),
            cmocka_unit_test_setup_teardown(test_fill_session, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
