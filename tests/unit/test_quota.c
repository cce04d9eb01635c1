/* Quotas per identity in the lock state machine (src/fsm/quota.h): an
 * OPEN past its principal's sessions quota, and an ACQUIRE or MULTI past
 * its locks or waiters quota, is BATON_EQUOTA naming the quota; what is
 * released, cancelled or ended frees it; the counts survive a snapshot,
 * and so does a refusal's quota, which a retry is answered with; the
 * limits are asked at apply, so a change takes effect at the next entry. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "../../include/baton.h"
#include "../../src/fsm/acl.h"
#include "../lib/fsmtest.h"

#define FOREVER COMMAND_WAIT_FOREVER

/* Two teams' principals, and one with no quota of its own. */
#define TEAM_A 0xa11ceULL
#define TEAM_B 0xb0bULL
#define OTHER  0x07e4ULL

/* The quotas the machine asks: team A's own, and a default for the rest
 * (`with_default`). Each test sets them. */
struct quotas {
        uint32_t a[ACL_QUOTA_KINDS];
        uint32_t fallback[ACL_QUOTA_KINDS];
        bool with_default;
};

static const uint32_t *limits_of(void *data, uint64_t principal)
{
        struct quotas *q = data;

        if (principal == TEAM_A) {
                return q->a;
        }
        return q->with_default ? q->fallback : NULL;
}

struct fixture {
        struct fsmtest *t;
        struct quotas q;
};

static int setup(void **state)
{
        struct fixture *fx = calloc(1, sizeof *fx);

        fx->t = fsmtest_new(NULL);
        lockfsm_set_quota_cb(fx->t->f, limits_of, &fx->q);
        *state = fx;
        return 0;
}

static int teardown(void **state)
{
        struct fixture *fx = *state;
        void *t = fx->t;

        assert_null(lockfsm_check(fx->t->f));
        free(fx);
        return fsmtest_teardown(&t);
}

static struct lockfsm_result open_as(struct fsmtest *t, uint64_t nonce,
                                     uint64_t principal)
{
        struct command c = {.type = COMMAND_OPEN,
                            .nonce = nonce,
                            .ttl_ms = 10000,
                            .principal = principal};

        return fsmtest_apply(t, &c);
}

static uint64_t open_ok(struct fsmtest *t, uint64_t nonce, uint64_t principal)
{
        struct lockfsm_result r = open_as(t, nonce, principal);

        assert_int_equal(r.status, 0);
        assert_int_equal(r.kind, PROTO_KIND_OPENED);
        return r.session;
}

/* A refusal names its quota: kind in `waiters`, limit in `count`. */
static void assert_quota(struct lockfsm_result r, int kind, uint32_t limit)
{
        assert_int_equal(r.status, BATON_EQUOTA);
        assert_int_equal(r.kind, PROTO_KIND_REJECTED);
        assert_int_equal(r.waiters, kind);
        assert_int_equal(r.count, limit);
}

static void used(struct fsmtest *t, uint64_t principal, uint32_t sessions,
                 uint32_t holds, uint32_t waits)
{
        uint32_t u[3];

        lockfsm_quota_use(t->f, principal, u);
        assert_int_equal(u[0], sessions);
        assert_int_equal(u[1], holds);
        assert_int_equal(u[2], waits);
}

static void test_sessions_refused_at_limit_freed_on_close(void **state)
{
        struct fixture *fx = *state;
        struct fsmtest *t = fx->t;
        uint64_t s1, s2;

        fx->q.a[ACL_QUOTA_SESSIONS] = 2;
        s1 = open_ok(t, 1, TEAM_A);
        s2 = open_ok(t, 2, TEAM_A);
        used(t, TEAM_A, 2, 0, 0);
        assert_quota(open_as(t, 3, TEAM_A), ACL_QUOTA_SESSIONS, 2);
        /* Nothing changed: no third session, no record moved. */
        used(t, TEAM_A, 2, 0, 0);
        /* Another identity (no quota) is not limited by team A's. */
        open_ok(t, 4, TEAM_B);
        open_ok(t, 5, TEAM_B);
        open_ok(t, 6, TEAM_B);
        /* A retried OPEN of a live session is its answer again, not a
         * new session: never refused. */
        assert_int_equal(open_as(t, 1, TEAM_A).session, s1);
        assert_int_equal(fsmtest_close_session(t, s2, 1).status, 0);
        used(t, TEAM_A, 1, 0, 0);
        open_ok(t, 7, TEAM_A);
        assert_int_equal(fsmtest_expire(t, s1).kind, PROTO_KIND_EXPIRED);
        used(t, TEAM_A, 1, 0, 0);
}

static void test_locks_count_grants_and_waits(void **state)
{
        struct fixture *fx = *state;
        struct fsmtest *t = fx->t;
        uint64_t a, b;
        struct lockfsm_result r;

        fx->q.a[ACL_QUOTA_LOCKS] = 2;
        a = open_ok(t, 1, TEAM_A);
        b = open_ok(t, 2, TEAM_B);
        assert_int_equal(fsmtest_acquire(t, b, 1, 1, "busy", 0).kind,
                         PROTO_KIND_GRANTED);
        r = fsmtest_acquire(t, a, 1, 1, "x", 0);
        assert_int_equal(r.kind, PROTO_KIND_GRANTED);
        /* A wait counts too: it becomes a grant without asking again. */
        assert_int_equal(fsmtest_acquire(t, a, 2, 1, "busy", FOREVER).kind,
                         PROTO_KIND_QUEUED);
        used(t, TEAM_A, 1, 2, 1);
        assert_quota(fsmtest_acquire(t, a, 3, 1, "y", 0), ACL_QUOTA_LOCKS, 2);
        /* Re-entering a lock it holds takes no new hold. */
        assert_int_equal(fsmtest_acquire(t, a, 4, 1, "x", 0).status, 0);
        /* The wait turning into a grant keeps the count. */
        assert_int_equal(
            fsmtest_release(t, b, 2, 1, "busy", fsmtest_granted(t, b, 1))
                .status,
            0);
        used(t, TEAM_A, 1, 2, 0);
        /* A release frees one. */
        assert_int_equal(fsmtest_release(t, a, 5, 1, "x", r.token).status, 0);
        assert_int_equal(fsmtest_release(t, a, 6, 1, "x", r.token).status, 0);
        used(t, TEAM_A, 1, 1, 0);
        assert_int_equal(fsmtest_acquire(t, a, 7, 1, "y", 0).kind,
                         PROTO_KIND_GRANTED);
}

static void test_waiters_quota_and_cancel(void **state)
{
        struct fixture *fx = *state;
        struct fsmtest *t = fx->t;
        uint64_t a, b;

        fx->q.a[ACL_QUOTA_WAITERS] = 1;
        a = open_ok(t, 1, TEAM_A);
        b = open_ok(t, 2, TEAM_B);
        fsmtest_acquire(t, b, 1, 1, "p", 0);
        fsmtest_acquire(t, b, 2, 1, "q", 0);
        assert_int_equal(fsmtest_acquire(t, a, 1, 1, "p", FOREVER).kind,
                         PROTO_KIND_QUEUED);
        assert_quota(fsmtest_acquire(t, a, 2, 1, "q", FOREVER),
                     ACL_QUOTA_WAITERS, 1);
        /* A grant is not a wait: the waiters quota does not refuse it. */
        assert_int_equal(fsmtest_acquire(t, a, 3, 1, "free", 0).kind,
                         PROTO_KIND_GRANTED);
        assert_int_equal(fsmtest_cancel(t, a, 4, "p", 1).status, 0);
        used(t, TEAM_A, 1, 1, 0);
        assert_int_equal(fsmtest_acquire(t, a, 5, 1, "q", FOREVER).kind,
                         PROTO_KIND_QUEUED);
}

static void test_multi_counts_each_name(void **state)
{
        struct fixture *fx = *state;
        struct fsmtest *t = fx->t;
        uint64_t a;

        fx->q.a[ACL_QUOTA_LOCKS] = 3;
        a = open_ok(t, 1, TEAM_A);
        assert_int_equal(fsmtest_acquire(t, a, 1, 1, "one", 0).kind,
                         PROTO_KIND_GRANTED);
        assert_quota(fsmtest_multi(t, a, 2, 1, "m1 m2 m3", 0), ACL_QUOTA_LOCKS,
                     3);
        /* None of its names was taken. */
        assert_int_equal(fsmtest_query(t, "m1").kind, PROTO_KIND_FREE);
        assert_int_equal(fsmtest_multi(t, a, 3, 1, "m1 m2", 0).kind,
                         PROTO_KIND_GRANTED);
        used(t, TEAM_A, 1, 3, 0);
}

static void test_default_applies_to_everyone_else(void **state)
{
        struct fixture *fx = *state;
        struct fsmtest *t = fx->t;

        fx->q.with_default = true;
        fx->q.fallback[ACL_QUOTA_SESSIONS] = 1;
        fx->q.a[ACL_QUOTA_SESSIONS] = 3;
        open_ok(t, 1, OTHER);
        assert_quota(open_as(t, 2, OTHER), ACL_QUOTA_SESSIONS, 1);
        /* Each identity has its own count under the default. */
        open_ok(t, 3, TEAM_B);
        /* Its own quota, not the default, for team A. */
        open_ok(t, 4, TEAM_A);
        open_ok(t, 5, TEAM_A);
        /* A session opened with no principal (an admin's, or before any
         * quota) counts nowhere. */
        open_ok(t, 6, 0);
        open_ok(t, 7, 0);
        used(t, 0, 0, 0, 0);
}

static void test_change_applies_at_next_entry(void **state)
{
        struct fixture *fx = *state;
        struct fsmtest *t = fx->t;
        uint64_t a;

        a = open_ok(t, 1, TEAM_A);
        fsmtest_acquire(t, a, 1, 1, "x", 0);
        fsmtest_acquire(t, a, 2, 1, "y", 0);
        /* Lowered below what it has: what it has stays, more is refused. */
        fx->q.a[ACL_QUOTA_LOCKS] = 1;
        assert_quota(fsmtest_acquire(t, a, 3, 1, "z", 0), ACL_QUOTA_LOCKS, 1);
        used(t, TEAM_A, 1, 2, 0);
        memset(fx->q.a, 0, sizeof fx->q.a);
        assert_int_equal(fsmtest_acquire(t, a, 4, 1, "z", 0).kind,
                         PROTO_KIND_GRANTED);
}

static void test_counts_survive_snapshot(void **state)
{
        struct fixture *fx = *state;
        struct fsmtest *t = fx->t;
        struct fsmtest *u = fsmtest_new(NULL);
        void *buf;
        size_t len;
        uint64_t a;

        fx->q.a[ACL_QUOTA_LOCKS] = 2;
        a = open_ok(t, 1, TEAM_A);
        open_ok(t, 2, TEAM_A);
        fsmtest_acquire(t, a, 1, 1, "x", 0);
        buf = fsmtest_snapshot(t->f, &len);
        lockfsm_set_quota_cb(u->f, limits_of, &fx->q);
        assert_int_equal(lockfsm_restore(u->f, buf, len), 0);
        free(buf);
        used(u, TEAM_A, 2, 1, 0);
        assert_null(lockfsm_check(u->f));
        /* The restored machine refuses at the same point. */
        u->index = t->index;
        assert_int_equal(fsmtest_acquire(u, a, 2, 1, "y", 0).kind,
                         PROTO_KIND_GRANTED);
        assert_quota(fsmtest_acquire(u, a, 3, 1, "z", 0), ACL_QUOTA_LOCKS, 2);
        t = u;
        fsmtest_teardown((void **)&t);
}

/* A retried ACQUIRE or MULTI that a quota refused is answered as it was
 * (docs/fsm.md: a remembered outcome is returned as it stands): the same
 * quota named, by the machine and by a replica restored from its
 * snapshot. */
static void test_retry_names_the_same_quota(void **state)
{
        struct fixture *fx = *state;
        struct fsmtest *t = fx->t;
        struct fsmtest *u = fsmtest_new(NULL);
        struct lockfsm_result r;
        void *buf;
        size_t len;
        uint64_t a, b;

        fx->q.a[ACL_QUOTA_LOCKS] = 2;
        fx->q.a[ACL_QUOTA_WAITERS] = 1;
        a = open_ok(t, 1, TEAM_A);
        b = open_ok(t, 2, TEAM_B);
        fsmtest_acquire(t, b, 1, 1, "p", 0);
        fsmtest_acquire(t, b, 2, 1, "q", 0);
        fsmtest_acquire(t, a, 1, 1, "p", FOREVER);
        assert_quota(fsmtest_acquire(t, a, 2, 1, "q", FOREVER),
                     ACL_QUOTA_WAITERS, 1);
        r = fsmtest_acquire(t, a, 2, 1, "q", FOREVER);
        assert_true(r.duplicate);
        assert_quota(r, ACL_QUOTA_WAITERS, 1);
        assert_quota(fsmtest_multi(t, a, 3, 1, "m1 m2", 0), ACL_QUOTA_LOCKS, 2);
        buf = fsmtest_snapshot(t->f, &len);
        lockfsm_set_quota_cb(u->f, limits_of, &fx->q);
        assert_int_equal(lockfsm_restore(u->f, buf, len), 0);
        free(buf);
        u->index = t->index;
        r = fsmtest_multi(u, a, 3, 1, "m1 m2", 0);
        assert_true(r.duplicate);
        assert_quota(r, ACL_QUOTA_LOCKS, 2);
        t = u;
        fsmtest_teardown((void **)&t);
}

/* An OPEN that carries a principal is version 5, and only such an OPEN
 * is: the bytes of every other command stay as a release before quotas
 * writes them. */
static void test_open_principal_on_the_wire(void **state)
{
        struct command c = {.type = COMMAND_OPEN,
                            .nonce = 9,
                            .ttl_ms = 1000,
                            .principal = TEAM_A};
        uint8_t buf[COMMAND_MAX_SIZE];
        struct command d;
        size_t n = command_encode(&c, buf, sizeof buf);

        (void)state;
        assert_true(n > 0);
        assert_int_equal(buf[0], 5);
        assert_int_equal(command_decode(&d, buf, n), 0);
        assert_int_equal(d.principal, TEAM_A);
        /* A version 5 OPEN whose principal is 0 is malformed: one
         * encoding each (the principal follows the header, nonce, ttl,
         * hash and delay). */
        memset(buf + 4 + 8 + 4 + COMMAND_HASH_SIZE + 4, 0, 8);
        assert_int_equal(command_decode(&d, buf, n), BATON_EMALFORMED);
        c.principal = 0;
        n = command_encode(&c, buf, sizeof buf);
        assert_int_equal(buf[0], 2);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(
                test_sessions_refused_at_limit_freed_on_close, setup, teardown),
            cmocka_unit_test_setup_teardown(test_locks_count_grants_and_waits,
                                            setup, teardown),
            cmocka_unit_test_setup_teardown(test_waiters_quota_and_cancel,
                                            setup, teardown),
            cmocka_unit_test_setup_teardown(test_multi_counts_each_name, setup,
                                            teardown),
            cmocka_unit_test_setup_teardown(
                test_default_applies_to_everyone_else, setup, teardown),
            cmocka_unit_test_setup_teardown(test_change_applies_at_next_entry,
                                            setup, teardown),
            cmocka_unit_test_setup_teardown(test_counts_survive_snapshot, setup,
                                            teardown),
            cmocka_unit_test_setup_teardown(test_retry_names_the_same_quota,
                                            setup, teardown),
            cmocka_unit_test(test_open_principal_on_the_wire),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
