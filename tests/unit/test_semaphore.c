/* Semaphores in the lock state machine: permits, FIFO order, tokens and
 * the refusals of docs/fsm.md, "Semaphores". */
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
        limits.max_permits = 8;
        *state = fsmtest_new(&limits);
        return 0;
}

/* ACQUIRE of `k` of the `n` permits of semaphore `name` by session `s`
 * (owner 1). */
static struct lockfsm_result take(struct fsmtest *t, uint64_t s, uint64_t seq,
                                  const char *name, uint32_t k, uint32_t n,
                                  uint32_t wait_ms)
{
        struct command c = fsmtest_acquire_cmd(s, seq, 1, name, wait_ms);

        c.mode = COMMAND_MODE_SEMAPHORE;
        c.permits = k;
        c.limit = n;
        return fsmtest_apply(t, &c);
}

static struct lockfsm_result give(struct fsmtest *t, uint64_t s, uint64_t seq,
                                  const char *name, uint64_t token)
{
        return fsmtest_release(t, s, seq, 1, name, token);
}

/* Holders take permits until none are left; each grant carries the index
 * of its own entry. Then a try is busy with the oldest holder's fields,
 * and a blocking ACQUIRE queues. */
static void test_permits_until_full(void **state)
{
        struct fsmtest *t = *state;
        uint64_t a = fsmtest_open(t, 1), b = fsmtest_open(t, 2);
        uint64_t c = fsmtest_open(t, 3);
        struct lockfsm_result ra = take(t, a, 1, "pool", 2, 3, 0);
        struct lockfsm_result rb = take(t, b, 1, "pool", 1, 3, 0);
        struct lockfsm_result rc = take(t, c, 1, "pool", 1, 3, 0);

        assert_int_equal(ra.kind, PROTO_KIND_GRANTED);
        assert_int_equal(rb.kind, PROTO_KIND_GRANTED);
        assert_true(rb.token > ra.token);
        assert_int_equal(rc.status, BATON_EBUSY);
        assert_int_equal(rc.session, a);
        assert_int_equal(rc.token, ra.token);
        rc = take(t, c, 2, "pool", 1, 3, FOREVER);
        assert_int_equal(rc.kind, PROTO_KIND_QUEUED);
        assert_int_equal(rc.count, 1);
        /* b's permit goes to c, with the release's index. */
        rb = give(t, b, 2, "pool", rb.token);
        assert_int_equal(rb.kind, PROTO_KIND_RELEASED);
        assert_int_equal(fsmtest_granted(t, c, 2), t->index);
        assert_int_equal(fsmtest_query(t, "pool").kind, PROTO_KIND_HOLDER);
}

/* A large request at the head of the queue is not overtaken by a smaller
 * one behind it, even when the smaller one would fit; once the large one
 * is admitted, every waiter behind it that fits is admitted too, by the
 * same entry. */
static void test_fifo_not_overtaken(void **state)
{
        struct fsmtest *t = *state;
        uint64_t a = fsmtest_open(t, 1), b = fsmtest_open(t, 2);
        uint64_t c = fsmtest_open(t, 3), d = fsmtest_open(t, 4);
        struct lockfsm_result ra = take(t, a, 1, "pool", 2, 4, 0);

        assert_int_equal(take(t, b, 1, "pool", 1, 4, 0).kind,
                         PROTO_KIND_GRANTED);
        /* 1 permit free: c wants 3 and waits; d wants 1 and waits behind. */
        assert_int_equal(take(t, c, 1, "pool", 3, 4, FOREVER).kind,
                         PROTO_KIND_QUEUED);
        assert_int_equal(take(t, d, 1, "pool", 1, 4, FOREVER).count, 2);
        assert_int_equal(take(t, d, 2, "pool", 1, 4, 0).status, BATON_EWAITING);
        assert_int_equal(fsmtest_granted(t, d, 1), 0);
        /* a's 2 permits free 3: c takes them, and d's 1 does not fit. */
        give(t, a, 2, "pool", ra.token);
        assert_int_equal(fsmtest_granted(t, c, 1), t->index);
        assert_int_equal(fsmtest_granted(t, d, 1), 0);
        /* b leaves: d fits. */
        fsmtest_close_session(t, b, 2);
        assert_int_equal(fsmtest_granted(t, d, 1), t->index);
}

/* Waiters at the head are admitted together by one entry, sharing its
 * index, as readers are. */
static void test_waiters_admitted_together(void **state)
{
        struct fsmtest *t = *state;
        uint64_t a = fsmtest_open(t, 1), b = fsmtest_open(t, 2);
        uint64_t c = fsmtest_open(t, 3);
        struct lockfsm_result ra = take(t, a, 1, "pool", 2, 2, 0);

        take(t, b, 1, "pool", 1, 2, FOREVER);
        take(t, c, 1, "pool", 1, 2, FOREVER);
        give(t, a, 2, "pool", ra.token);
        assert_int_equal(fsmtest_granted(t, b, 1), t->index);
        assert_int_equal(fsmtest_granted(t, c, 1), t->index);
}

/* The number of permits is the creator's; a semaphore and a lock never
 * share a name; permits out of range, too many permits for the cluster,
 * and a second grant to one owner are each refused by name, and change
 * nothing. */
static void test_refusals(void **state)
{
        struct fsmtest *t = *state;
        uint64_t a = fsmtest_open(t, 1), b = fsmtest_open(t, 2);
        struct lockfsm_result r = take(t, a, 1, "pool", 1, 3, 0);
        uint64_t at = t->index;

        assert_int_equal(r.kind, PROTO_KIND_GRANTED);
        assert_int_equal(take(t, b, 1, "pool", 1, 4, 0).status, BATON_EPERMITS);
        assert_int_equal(take(t, a, 2, "pool", 1, 3, 0).status, BATON_EHELD);
        assert_int_equal(take(t, b, 2, "pool", 0, 3, 0).status, BATON_EINVAL);
        assert_int_equal(take(t, b, 3, "pool", 4, 3, 0).status, BATON_EINVAL);
        assert_int_equal(take(t, b, 4, "big", 1, 9, 0).status,
                         BATON_ETOOMANYPERMITS);
        assert_int_equal(take(t, b, 5, "old", 1, 0, 0).status,
                         BATON_EUNSUPPORTED);
        assert_int_equal(fsmtest_acquire(t, b, 6, 1, "pool", 0).status,
                         BATON_EKIND);
        assert_int_equal(fsmtest_acquire(t, b, 7, 1, "lock", 0).kind,
                         PROTO_KIND_GRANTED);
        assert_int_equal(take(t, a, 3, "lock", 1, 3, 0).status, BATON_EKIND);
        /* Nothing changed: a still holds its one permit, b the lock. */
        r = fsmtest_query(t, "pool");
        assert_int_equal(r.session, a);
        assert_int_equal(r.token, at);
        assert_int_equal(fsmtest_query(t, "big").kind, PROTO_KIND_FREE);
        assert_int_equal(take(t, b, 8, "pool", 2, 3, 0).kind,
                         PROTO_KIND_GRANTED);
}

/* RELEASE names the grant by its token; an expired session's permits go
 * to the queue; the semaphore is gone once free, and may come back with
 * another number of permits. */
static void test_release_and_expiry(void **state)
{
        struct fsmtest *t = *state;
        uint64_t a = fsmtest_open(t, 1), b = fsmtest_open(t, 2);
        struct lockfsm_result ra = take(t, a, 1, "pool", 2, 2, 0);
        struct lockfsm_result rb;

        assert_int_equal(give(t, a, 2, "pool", ra.token + 1).status,
                         BATON_ESTALE);
        assert_int_equal(give(t, b, 1, "pool", ra.token).status,
                         BATON_ENOTHOLDER);
        rb = take(t, b, 2, "pool", 1, 2, FOREVER);
        assert_int_equal(rb.kind, PROTO_KIND_QUEUED);
        fsmtest_expire(t, a);
        assert_int_equal(fsmtest_granted(t, b, 2), t->index);
        rb = give(t, b, 3, "pool", t->index);
        assert_int_equal(rb.kind, PROTO_KIND_RELEASED);
        assert_int_equal(rb.count, 0);
        assert_int_equal(fsmtest_query(t, "pool").kind, PROTO_KIND_FREE);
        assert_int_equal(take(t, b, 4, "pool", 5, 5, 0).kind,
                         PROTO_KIND_GRANTED);
}

static bool collect(void *data, const struct lockfsm_holder *h)
{
        struct lockfsm_holder *out = data;

        while (out->session != 0) {
                out++;
        }
        *out = *h;
        return true;
}

/* Every holder of a semaphore is listed, oldest first, with its permits
 * and the semaphore's limit; a free name lists none. */
static void test_holders_listed(void **state)
{
        struct fsmtest *t = *state;
        uint64_t a = fsmtest_open(t, 1), b = fsmtest_open(t, 2);
        struct lockfsm_holder h[4];
        struct lockfsm_result ra = take(t, a, 1, "pool", 2, 5, 0);
        struct lockfsm_result rb = take(t, b, 1, "pool", 3, 5, 0);

        take(t, a, 2, "pool2", 1, 1, 0);
        memset(h, 0, sizeof h);
        lockfsm_foreach_holder(t->f, "pool", 4, collect, h);
        assert_int_equal(h[0].session, a);
        assert_int_equal(h[0].token, ra.token);
        assert_int_equal(h[0].permits, 2);
        assert_int_equal(h[0].limit, 5);
        assert_int_equal(h[0].mode, COMMAND_MODE_SEMAPHORE);
        assert_int_equal(h[1].session, b);
        assert_int_equal(h[1].token, rb.token);
        assert_int_equal(h[1].permits, 3);
        assert_int_equal(h[2].session, 0);
        memset(h, 0, sizeof h);
        lockfsm_foreach_holder(t->f, "none", 4, collect, h);
        assert_int_equal(h[0].session, 0);
}

/* A semaphore ACQUIRE is written as command version 3; a cluster that
 * knows only version 2 never sees one unless semaphores are used. */
static void test_version_3_only_for_semaphores(void **state)
{
        struct command c = fsmtest_acquire_cmd(1, 1, 1, "pool", 0);
        uint8_t buf[COMMAND_MAX_SIZE];

        (void)state;
        assert_true(command_encode(&c, buf, sizeof buf) > 0);
        assert_int_equal(buf[0], 2);
        c.mode = COMMAND_MODE_SEMAPHORE;
        c.permits = 1;
        c.limit = 2;
        assert_true(command_encode(&c, buf, sizeof buf) > 0);
        assert_int_equal(buf[0], 3);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_permits_until_full, setup,
                                            fsmtest_teardown),
            cmocka_unit_test_setup_teardown(test_fifo_not_overtaken, setup,
                                            fsmtest_teardown),
            cmocka_unit_test_setup_teardown(test_waiters_admitted_together,
                                            setup, fsmtest_teardown),
            cmocka_unit_test_setup_teardown(test_refusals, setup,
                                            fsmtest_teardown),
            cmocka_unit_test_setup_teardown(test_release_and_expiry, setup,
                                            fsmtest_teardown),
            cmocka_unit_test(test_version_3_only_for_semaphores),
            cmocka_unit_test_setup_teardown(test_holders_listed, setup,
                                            fsmtest_teardown),
        };

        return cmocka_run_group_tests_name("semaphore", tests, NULL, NULL);
}
