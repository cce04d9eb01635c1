/* Multi-locks in the lock state machine: all names at once with one token,
 * one waiter for all of them, no partial holds, and the refusals of
 * docs/fsm.md, "Multi-locks". */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "../../include/baton.h"
#include "../lib/fsmtest.h"

#define FOREVER COMMAND_WAIT_FOREVER

static int setup(void **state)
{
        struct lockfsm_limits limits;

        lockfsm_limits_default(&limits);
        limits.max_names_per_acquire = 4;
        *state = fsmtest_new(&limits);
        return 0;
}

static int teardown(void **state)
{
        struct fsmtest *t = *state;

        /* Which invariant a test broke, before fsmtest_teardown()'s
         * snapshot round trip. */
        assert_null(lockfsm_check(t->f));
        return fsmtest_teardown(state);
}

/* A MULTI by owner 1, checked for the machine's invariants after. */
static struct lockfsm_result multi(struct fsmtest *t, uint64_t s, uint64_t seq,
                                   const char *spec, uint32_t wait_ms)
{
        struct lockfsm_result r = fsmtest_multi(t, s, seq, 1, spec, wait_ms);

        assert_null(lockfsm_check(t->f));
        return r;
}

/* The token the holder of `name` holds it with (0: free). */
static uint64_t held(struct fsmtest *t, const char *name)
{
        struct lockfsm_result r = fsmtest_query(t, name);

        return r.kind == PROTO_KIND_HOLDER ? r.token : 0;
}

/* Every name is granted by the one entry, its index the token of all. */
static void test_all_at_once(void **state)
{
        struct fsmtest *t = *state;
        uint64_t a = fsmtest_open(t, 1), b = fsmtest_open(t, 2);
        struct lockfsm_result r;
        struct command c;

        fsmtest_acquire(t, b, 1, 1, "y", 0);
        r = multi(t, a, 1, "x z", 0);
        assert_int_equal(r.status, 0);
        assert_int_equal(r.kind, PROTO_KIND_GRANTED);
        assert_int_equal(r.token, t->index);
        assert_int_equal(held(t, "x"), r.token);
        assert_int_equal(held(t, "z"), r.token);
        assert_int_equal(fsmtest_count(t, LOCKFSM_EV_GRANT), 3);
        /* Shared names join readers; the owner's own grants end one by
         * one, as any grant does. */
        c = fsmtest_acquire_cmd(b, 2, 1, "r", 0);
        c.mode = COMMAND_MODE_SHARED;
        assert_int_equal(fsmtest_apply(t, &c).kind, PROTO_KIND_GRANTED);
        r = multi(t, a, 2, "r/r w", 0);
        assert_int_equal(r.kind, PROTO_KIND_GRANTED);
        assert_int_equal(fsmtest_release(t, a, 3, 1, "x", held(t, "x")).kind,
                         PROTO_KIND_RELEASED);
        assert_int_equal(held(t, "x"), 0);
        assert_int_not_equal(held(t, "z"), 0);
}

/* A try that finds one name busy changes nothing and names its holder. */
static void test_try_busy_changes_nothing(void **state)
{
        struct fsmtest *t = *state;
        uint64_t a = fsmtest_open(t, 1), b = fsmtest_open(t, 2);
        uint64_t tok = fsmtest_acquire(t, b, 1, 1, "y", 0).token;
        struct lockfsm_result r = multi(t, a, 1, "x y z", 0);

        assert_int_equal(r.status, BATON_EBUSY);
        assert_int_equal(r.session, b);
        assert_int_equal(r.token, tok);
        assert_int_equal(fsmtest_query(t, "x").kind, PROTO_KIND_FREE);
        assert_int_equal(fsmtest_query(t, "z").kind, PROTO_KIND_FREE);
        assert_int_equal(fsmtest_query(t, "y").waiters, 0);
}

/* A blocking MULTI waits on every name, holds none of them meanwhile
 * (later arrivals queue behind it, even on a free name), and takes all
 * at once when the last is freed. */
static void test_waits_for_all(void **state)
{
        struct fsmtest *t = *state;
        uint64_t a = fsmtest_open(t, 1), b = fsmtest_open(t, 2);
        uint64_t c = fsmtest_open(t, 3);
        uint64_t tok = fsmtest_acquire(t, b, 1, 1, "y", 0).token;
        struct lockfsm_result r = multi(t, a, 1, "x y", FOREVER);

        assert_int_equal(r.kind, PROTO_KIND_QUEUED);
        assert_int_equal(held(t, "x"), 0);
        assert_int_equal(fsmtest_count(t, LOCKFSM_EV_QUEUE), 2);
        assert_int_equal(fsmtest_acquire(t, c, 1, 1, "x", 0).status,
                         BATON_EBUSY);
        assert_int_equal(fsmtest_acquire(t, c, 2, 1, "x", FOREVER).kind,
                         PROTO_KIND_QUEUED);
        fsmtest_release(t, b, 2, 1, "y", tok);
        assert_null(lockfsm_check(t->f));
        tok = t->index;
        assert_int_equal(held(t, "x"), tok);
        assert_int_equal(held(t, "y"), tok);
        assert_int_equal(fsmtest_query(t, "x").session, a);
        assert_int_equal(fsmtest_granted(t, a, 1), tok);
        /* The retried MULTI learns it was granted. */
        r = multi(t, a, 1, "x y", FOREVER);
        assert_true(r.duplicate);
        assert_int_equal(r.kind, PROTO_KIND_GRANTED);
}

/* Two multi-lockers asking for the same names in opposite orders, each
 * name held by someone else meanwhile: both are granted in turn. */
static void test_no_deadlock(void **state)
{
        struct fsmtest *t = *state;
        uint64_t a = fsmtest_open(t, 1), b = fsmtest_open(t, 2);
        uint64_t h = fsmtest_open(t, 3);
        uint64_t t1 = fsmtest_acquire(t, h, 1, 1, "p", 0).token;
        uint64_t t2 = fsmtest_acquire(t, h, 2, 1, "q", 0).token;

        assert_int_equal(multi(t, a, 1, "p q", FOREVER).kind,
                         PROTO_KIND_QUEUED);
        assert_int_equal(multi(t, b, 1, "q p", FOREVER).kind,
                         PROTO_KIND_QUEUED);
        fsmtest_release(t, h, 3, 1, "q", t2);
        assert_int_equal(fsmtest_granted(t, a, 1), 0); /* p still held */
        fsmtest_release(t, h, 4, 1, "p", t1);
        assert_int_equal(fsmtest_granted(t, a, 1), t->index);
        assert_int_equal(fsmtest_granted(t, b, 1), 0);
        fsmtest_close_session(t, a, 2);
        assert_null(lockfsm_check(t->f));
        t1 = t->index;
        assert_int_equal(fsmtest_granted(t, b, 1), t1);
        assert_int_equal(held(t, "p"), t1);
        assert_int_equal(held(t, "q"), t1);
}

/* CANCEL, TIMEOUT and the session's end take the waiter off every name,
 * and the names behind it move up. */
static void test_leaves_every_queue(void **state)
{
        struct fsmtest *t = *state;
        uint64_t a = fsmtest_open(t, 1), b = fsmtest_open(t, 2);
        uint64_t c = fsmtest_open(t, 3);
        uint64_t tok = fsmtest_acquire(t, b, 1, 1, "y", 0).token;
        struct lockfsm_result r;

        multi(t, a, 1, "x y", FOREVER);
        fsmtest_acquire(t, c, 1, 1, "x", FOREVER);
        r = fsmtest_cancel(t, a, 2, "y", 1);
        assert_int_equal(r.kind, PROTO_KIND_CANCELLED);
        assert_int_equal(fsmtest_count(t, LOCKFSM_EV_UNQUEUE), 2);
        assert_int_equal(fsmtest_granted(t, c, 1), t->index); /* x moved */
        assert_int_equal(fsmtest_query(t, "y").waiters, 0);
        assert_int_equal(multi(t, a, 3, "z y", FOREVER).kind,
                         PROTO_KIND_QUEUED);
        r = fsmtest_timeout(t, a, "z", 3);
        assert_int_equal(r.kind, PROTO_KIND_CANCELLED);
        assert_int_equal(fsmtest_query(t, "z").kind, PROTO_KIND_FREE);
        assert_int_equal(multi(t, a, 4, "z y", FOREVER).kind,
                         PROTO_KIND_QUEUED);
        fsmtest_expire(t, a);
        assert_null(lockfsm_check(t->f));
        assert_int_equal(fsmtest_query(t, "z").kind, PROTO_KIND_FREE);
        assert_int_equal(fsmtest_query(t, "y").waiters, 0);
        assert_int_equal(held(t, "y"), tok);
}

/* Refusals, each changing nothing. */
static void test_refusals(void **state)
{
        struct fsmtest *t = *state;
        uint64_t a = fsmtest_open(t, 1), b = fsmtest_open(t, 2);
        struct command sem = fsmtest_acquire_cmd(b, 1, 1, "s", 0);
        uint64_t tok = fsmtest_acquire(t, a, 1, 1, "x", 0).token;
        struct lockfsm_result r;
        unsigned locks = 0;

        sem.mode = COMMAND_MODE_SEMAPHORE;
        sem.permits = 1;
        sem.limit = 2;
        fsmtest_apply(t, &sem);
        assert_int_equal(multi(t, a, 2, "p q r s t", 0).status,
                         BATON_ETOOMANYNAMES);
        assert_int_equal(multi(t, a, 3, "p q p", 0).status, BATON_EINVAL);
        assert_int_equal(multi(t, a, 4, "p s", 0).status, BATON_EKIND);
        r = multi(t, a, 5, "p x", FOREVER);
        assert_int_equal(r.status, BATON_EHELD);
        assert_int_equal(r.token, tok);
        for (const char *n = "pqr"; *n != '\0'; n++) {
                char name[2] = {*n, '\0'};
                locks += fsmtest_query(t, name).kind != PROTO_KIND_FREE;
        }
        assert_int_equal(locks, 0);
        assert_int_equal(multi(t, b, 2, "x q", FOREVER).kind,
                         PROTO_KIND_QUEUED);
        assert_int_equal(multi(t, b, 3, "x/r", FOREVER).status, BATON_EWAITING);
}

/* The locks a MULTI creates have distinct, increasing ages: later
 * commands' stamps follow on. */
static void test_new_locks_take_stamps(void **state)
{
        struct fsmtest *t = *state;
        uint64_t a = fsmtest_open(t, 1);
        uint64_t b;

        assert_int_equal(multi(t, a, 1, "m n o", 0).kind, PROTO_KIND_GRANTED);
        b = fsmtest_open(t, 2);
        assert_true(b >= t->index + 2); /* the stamps ran two ahead */
        assert_null(lockfsm_check(t->f));
}

/* A machine restored from a snapshot with a multi-lock waiting makes the
 * same grants, with the same events, as the one it came from. */
static void test_restore_in_lockstep(void **state)
{
        struct fsmtest *t = *state;
        struct fsmtest *u = malloc(sizeof *u);
        uint64_t a = fsmtest_open(t, 1), b = fsmtest_open(t, 2);
        uint64_t tok = fsmtest_acquire(t, b, 1, 1, "y", 0).token;
        size_t len;
        void *buf;

        multi(t, a, 1, "x y/r z", FOREVER);
        fsmtest_init(u, NULL, NULL);
        buf = fsmtest_snapshot(t->f, &len);
        assert_int_equal(lockfsm_restore(u->f, buf, len), 0);
        u->index = t->index;
        fsmtest_release(t, b, 2, 1, "y", tok);
        fsmtest_release(u, b, 2, 1, "y", tok);
        assert_true(fsmtest_same_state(t->f, u->f));
        assert_int_equal(fsmtest_granted(u, a, 1), u->index);
        assert_int_equal(fsmtest_count(u, LOCKFSM_EV_GRANT), 3);
        free(buf);
        fsmtest_close(u);
        free(u);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_all_at_once, setup, teardown),
            cmocka_unit_test_setup_teardown(test_try_busy_changes_nothing,
                                            setup, teardown),
            cmocka_unit_test_setup_teardown(test_waits_for_all, setup,
                                            teardown),
            cmocka_unit_test_setup_teardown(test_no_deadlock, setup, teardown),
            cmocka_unit_test_setup_teardown(test_leaves_every_queue, setup,
                                            teardown),
            cmocka_unit_test_setup_teardown(test_refusals, setup, teardown),
            cmocka_unit_test_setup_teardown(test_new_locks_take_stamps, setup,
                                            teardown),
            cmocka_unit_test_setup_teardown(test_restore_in_lockstep, setup,
                                            teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
