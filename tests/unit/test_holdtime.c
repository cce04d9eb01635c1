/* Hold times in the lock state machine (docs/fsm.md, "Hold times"): a
 * grant acquired with one ends by the leader's EXPIRE_HOLD when its clock
 * still dates from the entry the expiry names (lock-delay applies, the
 * next waiter gets a higher token, the session counts it revoked), and an
 * EXTEND by the holder with its token restarts the clock, so that an
 * expiry proposed before it changes nothing; kept by a snapshot. */
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

/* An exclusive ACQUIRE of `name` by owner 1 with a hold time. */
static struct lockfsm_result take(struct fsmtest *t, uint64_t s, uint64_t seq,
                                  const char *name, uint32_t hold_ms)
{
        struct command c = fsmtest_acquire_cmd(s, seq, 1, name, FOREVER);

        c.hold_ms = hold_ms;
        return fsmtest_apply(t, &c);
}

static struct lockfsm_result extend(struct fsmtest *t, uint64_t s, uint64_t seq,
                                    const char *name, uint64_t token,
                                    uint32_t hold_ms)
{
        struct command c = fsmtest_release_cmd(s, seq, 1, name, token);

        c.type = COMMAND_EXTEND;
        c.hold_ms = hold_ms;
        return fsmtest_apply(t, &c);
}

/* The leader's expiry of the grant `s`'s ACQUIRE of `seq` made on `name`,
 * its clock dating from `armed`, with a lock-delay of `delay_ms`. */
static struct lockfsm_result expire(struct fsmtest *t, uint64_t s, uint64_t seq,
                                    const char *name, uint64_t armed,
                                    uint32_t delay_ms)
{
        struct command c;

        memset(&c, 0, sizeof c);
        c.type = COMMAND_EXPIRE_HOLD;
        c.session = s;
        c.target = seq;
        c.token = armed;
        c.delay_ms = delay_ms;
        c.name = name;
        c.name_len = (uint8_t)strlen(name);
        return fsmtest_apply(t, &c);
}

static uint32_t hold_of(struct fsmtest *t, uint64_t s, uint64_t seq,
                        const char *name, uint64_t *armed)
{
        uint32_t hold_ms = 0;

        *armed = 0;
        if (!lockfsm_hold_clock(t->f, s, seq, name, strlen(name), &hold_ms,
                                armed)) {
                return UINT32_MAX;
        }
        return hold_ms;
}

/* The clock dates from the grant, not the ACQUIRE: a waiter's starts when
 * it is granted; the grant's events carry its hold time. */
static void test_clock_starts_at_the_grant(void **state)
{
        struct fsmtest *t = *state;
        uint64_t a = fsmtest_open(t, 1), b = fsmtest_open(t, 2), armed;
        struct lockfsm_result g, w, r;

        g = take(t, a, 1, "job", 5000);
        assert_int_equal(g.kind, PROTO_KIND_GRANTED);
        assert_int_equal(hold_of(t, a, 1, "job", &armed), 5000);
        assert_int_equal(armed, g.token);
        w = take(t, b, 1, "job", 7000);
        assert_int_equal(w.kind, PROTO_KIND_QUEUED);
        /* A waiter is no grant: no clock to expire yet. */
        assert_int_equal(hold_of(t, b, 1, "job", &armed), UINT32_MAX);
        r = fsmtest_release(t, a, 2, 1, "job", g.token);
        assert_int_equal(r.kind, PROTO_KIND_RELEASED);
        assert_int_equal(hold_of(t, b, 1, "job", &armed), 7000);
        assert_int_equal(armed, t->index);
        assert_int_equal(fsmtest_granted(t, b, 1), t->index);
        /* A grant without one has none. */
        assert_int_equal(fsmtest_acquire(t, a, 3, 1, "free", FOREVER).kind,
                         PROTO_KIND_GRANTED);
        assert_int_equal(hold_of(t, a, 3, "free", &armed), 0);
        assert_int_equal(armed, 0);
}

/* The expiry ends the grant as a revoke does: a lock-delay, then the next
 * waiter with a higher token; the session lives on and counts it. A
 * second expiry, or one of a grant that has none, changes nothing. */
static void test_expiry_with_lock_delay_and_token_order(void **state)
{
        struct fsmtest *t = *state;
        uint64_t a = fsmtest_open(t, 1), b = fsmtest_open(t, 2), armed;
        struct lockfsm_result g, r, q;
        struct command u;

        g = take(t, a, 1, "job", 1000);
        assert_int_equal(take(t, b, 1, "job", 0).kind, PROTO_KIND_QUEUED);
        assert_int_equal(hold_of(t, a, 1, "job", &armed), 1000);
        r = expire(t, a, 1, "job", armed, 3000);
        assert_int_equal(r.kind, PROTO_KIND_RELEASED);
        assert_int_equal(r.token, g.token);
        /* In its lock-delay: nobody holds it, b still waits. */
        q = fsmtest_query(t, "job");
        assert_int_equal(q.kind, PROTO_KIND_FREE);
        assert_non_null(fsmtest_find(t, LOCKFSM_EV_BLOCK, 0));
        assert_int_equal(fsmtest_granted(t, b, 1), 0);
        /* Again: nothing left to expire. */
        assert_int_equal(expire(t, a, 1, "job", armed, 3000).status,
                         BATON_ENOTHOLDER);
        /* The delay's end hands it on, with a higher token. */
        memset(&u, 0, sizeof u);
        u.type = COMMAND_UNBLOCK;
        u.target = fsmtest_find(t, LOCKFSM_EV_BLOCK, 0)->seq;
        u.name = "job";
        u.name_len = 3;
        assert_int_equal(fsmtest_apply(t, &u).kind, PROTO_KIND_FREE);
        assert_true(fsmtest_granted(t, b, 1) > g.token);
        /* a's session lives, and heard of it as of a revoke. */
        assert_int_equal(lockfsm_session_status(t->f, a), 0);
        assert_int_equal(fsmtest_release(t, a, 2, 1, "job", g.token).status,
                         BATON_ENOTHOLDER);
        /* b's grant has no hold time: no expiry touches it. */
        assert_int_equal(
            expire(t, b, 1, "job", fsmtest_granted(t, b, 1), 0).status,
            BATON_ENOTHOLDER);
        assert_int_equal(fsmtest_query(t, "job").session, b);
}

/* EXTEND before the deadline restarts the clock, so the expiry proposed
 * for the old one changes nothing; after the expiry applied, the grant is
 * gone and so is the EXTEND's grant. Fenced by the token, refused for a
 * grant without a hold time, bounded by max_hold_ms. */
static void test_extension_before_and_after(void **state)
{
        struct fsmtest *t = *state;
        uint64_t a = fsmtest_open(t, 1), b = fsmtest_open(t, 2), armed, old;
        struct lockfsm_result g, r;

        g = take(t, a, 1, "job", 1000);
        assert_int_equal(hold_of(t, a, 1, "job", &old), 1000);
        /* The leader proposed the expiry; the EXTEND comes first. */
        r = extend(t, a, 2, "job", g.token, 4000);
        assert_int_equal(r.kind, PROTO_KIND_UPDATED);
        assert_int_equal(r.token, g.token);
        assert_int_equal(hold_of(t, a, 1, "job", &armed), 4000);
        assert_int_equal(armed, t->index);
        assert_non_null(fsmtest_find(t, LOCKFSM_EV_EXTEND, 0));
        assert_int_equal(expire(t, a, 1, "job", old, 0).status,
                         BATON_ENOTHOLDER);
        assert_int_equal(fsmtest_query(t, "job").token, g.token);
        /* Fenced: another token, another session; and the limits. */
        assert_int_equal(extend(t, a, 3, "job", g.token - 1, 4000).status,
                         BATON_ESTALE);
        assert_int_equal(extend(t, b, 1, "job", g.token, 4000).status,
                         BATON_ENOTHOLDER);
        assert_int_equal(extend(t, a, 4, "job", g.token, 86400001).status,
                         BATON_EINVAL);
        assert_int_equal(take(t, a, 5, "other", 86400001).status, BATON_EINVAL);
        assert_int_equal(hold_of(t, a, 1, "job", &armed), 4000);
        /* The expiry of the new clock ends it; an EXTEND after it finds
         * nothing to extend. */
        assert_int_equal(expire(t, a, 1, "job", armed, 0).kind,
                         PROTO_KIND_RELEASED);
        assert_int_equal(extend(t, a, 6, "job", g.token, 4000).status,
                         BATON_ENOTHOLDER);
        /* A grant taken without a hold time gets none by EXTEND. */
        g = fsmtest_acquire(t, a, 7, 1, "plain", FOREVER);
        assert_int_equal(extend(t, a, 8, "plain", g.token, 4000).status,
                         BATON_EINVAL);
}

/* A reentrant ACQUIRE keeps the grant's clock; SET_VALUE, which replaces
 * the record, keeps it too; a snapshot keeps every clock, and the
 * restored machine expires the grant as the original would. */
static void test_kept_by_reentry_values_and_snapshots(void **state)
{
        struct fsmtest *t = *state;
        struct fsmtest *u = malloc(sizeof *u);
        uint64_t a = fsmtest_open(t, 1), b = fsmtest_open(t, 2), armed;
        struct lockfsm_result g;
        struct command c;
        size_t len;
        void *buf;

        g = take(t, a, 1, "job", 2000);
        assert_int_equal(take(t, a, 2, "job", 9000).kind, PROTO_KIND_REENTERED);
        assert_int_equal(hold_of(t, a, 1, "job", &armed), 2000);
        assert_int_equal(armed, g.token);
        c = fsmtest_release_cmd(a, 3, 1, "job", g.token);
        c.type = COMMAND_SET_VALUE;
        c.value = "10.0.0.7:8080";
        c.value_len = 13;
        assert_int_equal(fsmtest_apply(t, &c).kind, PROTO_KIND_PROCLAIMED);
        assert_int_equal(hold_of(t, a, 1, "job", &armed), 2000);
        assert_int_equal(armed, g.token);
        assert_int_equal(take(t, b, 1, "job", 3000).kind, PROTO_KIND_QUEUED);
        fsmtest_init(u, NULL, NULL);
        buf = fsmtest_snapshot(t->f, &len);
        assert_int_equal(lockfsm_restore(u->f, buf, len), 0);
        assert_null(lockfsm_check(u->f));
        u->index = t->index;
        assert_true(fsmtest_same_state(t->f, u->f));
        assert_int_equal(hold_of(u, a, 1, "job", &armed), 2000);
        assert_int_equal(armed, g.token);
        assert_int_equal(expire(u, a, 1, "job", armed, 0).kind,
                         PROTO_KIND_RELEASED);
        assert_int_equal(hold_of(u, b, 1, "job", &armed), 3000);
        assert_int_equal(armed, u->index);
        free(buf);
        fsmtest_close(u);
        free(u);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_clock_starts_at_the_grant,
                                            fsmtest_setup, fsmtest_teardown),
            cmocka_unit_test_setup_teardown(
                test_expiry_with_lock_delay_and_token_order, fsmtest_setup,
                fsmtest_teardown),
            cmocka_unit_test_setup_teardown(test_extension_before_and_after,
                                            fsmtest_setup, fsmtest_teardown),
            cmocka_unit_test_setup_teardown(
                test_kept_by_reentry_values_and_snapshots, fsmtest_setup,
                fsmtest_teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
