/*
 * Allocation-failure injection: every allocation the state machine makes is
 * failed in turn, and each failure must leave the state exactly as it was.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../include/baton.h"
#include "../lib/failalloc.h"
#include "../lib/fsmtest.h"

struct fixture {
        struct failalloc fa;
        struct fsmtest t;   /* allocates through fa */
        struct fsmtest ref; /* the same commands, never failing */
};

static int setup(void **state)
{
        struct fixture *x = malloc(sizeof *x);

        failalloc_init(&x->fa);
        fsmtest_init(&x->t, NULL, &x->fa.mem);
        fsmtest_init(&x->ref, NULL, NULL);
        *state = x;
        return 0;
}

static int teardown(void **state)
{
        struct fixture *x = *state;

        fsmtest_close(&x->t);
        fsmtest_close(&x->ref);
        /* Nothing leaked on any failure path. */
        assert_int_equal(x->fa.live, 0);
        free(x);
        return 0;
}

/* Apply to both machines without failures. */
static void both(struct fixture *x, const struct command *c)
{
        struct lockfsm_result a = fsmtest_apply(&x->t, c);
        struct lockfsm_result b = fsmtest_apply(&x->ref, c);

        assert_memory_equal(&a, &b, sizeof a);
}

/*
 * Apply `c` with the n-th allocation failing, for n = 0, 1, ... until it
 * succeeds. Every failure must be BATON_ENOMEM with no state change and no
 * event; the eventual success must match the machine that never failed.
 * Returns the number of failures seen.
 */
static unsigned apply_under_failures(struct fixture *x, const struct command *c)
{
        struct lockfsm_result got, want;
        unsigned failures = 0;
        long n;

        want = fsmtest_apply(&x->ref, c);
        for (n = 0;; n++) {
                size_t l1, l2;
                void *s1 = fsmtest_snapshot(x->t.f, &l1);
                unsigned events = x->t.n_events;
                uint64_t index = x->t.index;
                void *s2;

                failalloc_arm(&x->fa, n, true);
                got = fsmtest_apply(&x->t, c);
                failalloc_disarm(&x->fa);
                if (x->t.last_rv == 0) {
                        free(s1);
                        break;
                }
                assert_int_equal(x->t.last_rv, BATON_ENOMEM);
                assert_int_equal(x->t.index, index);
                assert_int_equal(x->t.n_events, events);
                s2 = fsmtest_snapshot(x->t.f, &l2);
                assert_int_equal(l1, l2);
                assert_memory_equal(s1, s2, l1);
                assert_null(lockfsm_check(x->t.f));
                free(s1);
                free(s2);
                failures++;
        }
        assert_memory_equal(&got, &want, sizeof got);
        assert_true(fsmtest_same_state(x->t.f, x->ref.f));
        return failures;
}

static struct command open_cmd(uint64_t nonce)
{
        struct command c = {
            .type = COMMAND_OPEN, .nonce = nonce, .ttl_ms = 1000};
        return c;
}

static struct command acquire_cmd(uint64_t session, uint64_t seq,
                                  const char *name, uint32_t wait_ms)
{
        struct command c = {.type = COMMAND_ACQUIRE,
                            .session = session,
                            .seq = seq,
                            .ack = seq,
                            .owner = 1,
                            .wait_ms = wait_ms,
                            .name = name,
                            .name_len = (uint8_t)strlen(name)};
        return c;
}

static void test_open_under_failures(void **state)
{
        struct fixture *x = *state;
        struct command c;
        unsigned i;

        /* The first OPEN sizes empty maps; the 17th grows them. */
        for (i = 1; i <= 20; i++) {
                c = open_cmd(i);
                assert_true(apply_under_failures(x, &c) > 0);
        }
        /* A retried OPEN allocates nothing. */
        c = open_cmd(3);
        assert_int_equal(apply_under_failures(x, &c), 0);
}

static void test_acquire_under_failures(void **state)
{
        struct fixture *x = *state;
        struct command c = open_cmd(1);
        char name[8];
        unsigned i;

        both(x, &c);
        c = open_cmd(2);
        both(x, &c);
        /* New locks (the 17th grows the lock map), reentry, queueing. */
        for (i = 0; i < 20; i++) {
                snprintf(name, sizeof name, "l%u", i);
                c = acquire_cmd(1, i + 1, name, 0);
                assert_true(apply_under_failures(x, &c) > 0);
        }
        c = acquire_cmd(1, 21, "l0", 0);
        assert_true(apply_under_failures(x, &c) > 0);
        c = acquire_cmd(2, 1, "l0", 5000);
        assert_true(apply_under_failures(x, &c) > 0);
        /* A duplicate is answered from memory without allocating. */
        assert_int_equal(apply_under_failures(x, &c), 0);
}

/* A semaphore's ACQUIRE: creating it, a second holder, a waiter; its
 * RELEASE hands the permits on without allocating; its snapshot under
 * failures. */
static void test_semaphore_under_failures(void **state)
{
        struct fixture *x = *state;
        struct command c = open_cmd(1);
        unsigned i;

        both(x, &c);
        c = open_cmd(2);
        both(x, &c);
        for (i = 0; i < 3; i++) {
                c = acquire_cmd(i == 2 ? 2 : 1, i + 1, "pool", 5000);
                c.owner = i + 1;
                c.mode = COMMAND_MODE_SEMAPHORE;
                c.permits = 2;
                c.limit = 4;
                assert_true(apply_under_failures(x, &c) > 0);
        }
        c = (struct command){.type = COMMAND_RELEASE,
                             .session = 1,
                             .seq = 4,
                             .ack = 4,
                             .owner = 1,
                             .token = 3,
                             .name = "pool",
                             .name_len = 4};
        assert_int_equal(apply_under_failures(x, &c), 0);
        assert_int_equal(fsmtest_query(&x->t, "pool").waiters, 0);
}

/* A MULTI of `spec` ("a b c": exclusive names) by owner 1. */
static struct command multi_cmd(uint64_t session, uint64_t seq,
                                const char *spec, uint32_t wait_ms,
                                uint8_t *list, size_t cap)
{
        struct command c = {.type = COMMAND_MULTI,
                            .session = session,
                            .seq = seq,
                            .ack = seq,
                            .owner = 1,
                            .wait_ms = wait_ms,
                            .list = list};
        size_t len = 0;

        for (const char *p = spec; *p != '\0'; p += strcspn(p, " ")) {
                p += *p == ' ';
                assert_int_equal(
                    command_list_add(list, cap, &len, 0, p, strcspn(p, " ")),
                    0);
                c.n_names++;
        }
        c.list_len = (uint16_t)len;
        return c;
}

/* A MULTI creating several locks at once, one waiting on all its names,
 * and the CANCEL that takes it off every queue without allocating. */
static void test_multi_under_failures(void **state)
{
        struct fixture *x = *state;
        struct command c = open_cmd(1);
        uint8_t list[COMMAND_MULTI_MAX_SIZE];

        both(x, &c);
        c = open_cmd(2);
        both(x, &c);
        c = multi_cmd(1, 1, "m1 m2 m3", 0, list, sizeof list);
        assert_true(apply_under_failures(x, &c) > 3);
        c = multi_cmd(2, 1, "m4 m2 m5", 5000, list, sizeof list);
        assert_true(apply_under_failures(x, &c) > 3);
        assert_int_equal(apply_under_failures(x, &c), 0); /* a duplicate */
        c = (struct command){.type = COMMAND_CANCEL,
                             .session = 2,
                             .seq = 2,
                             .ack = 2,
                             .target = 1,
                             .name = "m5",
                             .name_len = 2};
        assert_int_equal(apply_under_failures(x, &c), 0);
        assert_int_equal(fsmtest_query(&x->t, "m4").kind, PROTO_KIND_FREE);
}

static void test_release_close_expire_never_allocate(void **state)
{
        struct fixture *x = *state;
        struct command c = open_cmd(1);

        both(x, &c);
        c = open_cmd(2);
        both(x, &c);
        c = open_cmd(3);
        both(x, &c);
        c = acquire_cmd(1, 1, "a", 0);
        both(x, &c);
        c = acquire_cmd(1, 2, "b", 0);
        both(x, &c);
        c = acquire_cmd(2, 1, "a", 5000);
        both(x, &c);
        c = acquire_cmd(3, 1, "b", 5000);
        both(x, &c);
        c = acquire_cmd(3, 2, "a", 5000);
        both(x, &c);
        /* Release with a handover, expiry and close with handovers: these
         * free memory and reuse the waiter's record, never allocate. */
        c = (struct command){.type = COMMAND_RELEASE,
                             .session = 1,
                             .seq = 3,
                             .ack = 3,
                             .owner = 1,
                             .token = 5,
                             .name = "b",
                             .name_len = 1};
        assert_int_equal(apply_under_failures(x, &c), 0);
        c = (struct command){.type = COMMAND_EXPIRE, .session = 1};
        assert_int_equal(apply_under_failures(x, &c), 0);
        c = (struct command){
            .type = COMMAND_CLOSE, .session = 2, .seq = 2, .ack = 2};
        assert_int_equal(apply_under_failures(x, &c), 0);
        c = (struct command){.type = COMMAND_QUERY, .name = "a", .name_len = 1};
        assert_int_equal(apply_under_failures(x, &c), 0);
        /* The leader's clock, and an operator's REVOKE_LOCK of session
         * 3's grant of "b" (token 5 went to it), which hands it on. */
        c = (struct command){.type = COMMAND_CLOCK, .time_ms = 1000};
        assert_int_equal(apply_under_failures(x, &c), 0);
        c = (struct command){.type = COMMAND_REVOKE_LOCK,
                             .session = 3,
                             .token = fsmtest_query(&x->ref, "b").token,
                             .name = "b",
                             .name_len = 1};
        fsmtest_query(&x->t, "b"); /* the same entries on both */
        assert_int_equal(apply_under_failures(x, &c), 0);
        assert_int_equal(fsmtest_query(&x->t, "b").kind, PROTO_KIND_FREE);
        fsmtest_query(&x->ref, "b");
        /* An operator's REVOKE hands on the session's locks as EXPIRE. */
        c = (struct command){
            .type = COMMAND_REVOKE, .session = 3, .name = "op", .name_len = 2};
        assert_int_equal(apply_under_failures(x, &c), 0);
}

static void test_snapshot_and_restore_under_failures(void **state)
{
        struct fixture *x = *state;
        struct command c = open_cmd(1);
        void *buf = NULL;
        size_t len, l1, l2;
        void *good, *before, *after;
        long n;
        int rv;

        both(x, &c);
        c = acquire_cmd(1, 1, "a", 0);
        both(x, &c);
        failalloc_arm(&x->fa, 0, true);
        assert_int_equal(lockfsm_snapshot(x->t.f, &buf, &len), BATON_ENOMEM);
        failalloc_disarm(&x->fa);
        good = fsmtest_snapshot(x->ref.f, &len);
        /* Give the target a different state, then restore under failure at
         * every allocation: the target must stay as it was until success. */
        c = open_cmd(9);
        fsmtest_apply(&x->t, &c);
        for (n = 0;; n++) {
                before = fsmtest_snapshot(x->t.f, &l1);
                failalloc_arm(&x->fa, n, true);
                rv = lockfsm_restore(x->t.f, good, len);
                failalloc_disarm(&x->fa);
                if (rv == 0) {
                        free(before);
                        break;
                }
                assert_int_equal(rv, BATON_ENOMEM);
                after = fsmtest_snapshot(x->t.f, &l2);
                assert_int_equal(l1, l2);
                assert_memory_equal(before, after, l1);
                free(before);
                free(after);
        }
        assert_true(n > 3);
        assert_true(fsmtest_same_state(x->t.f, x->ref.f));
        free(good);
}

static void test_create_under_failures(void **state)
{
        struct failalloc fa;
        struct lockfsm *f;
        long n;

        (void)state;
        failalloc_init(&fa);
        for (n = 0;; n++) {
                failalloc_arm(&fa, n, true);
                f = lockfsm_create(NULL, &fa.mem);
                failalloc_disarm(&fa);
                if (f != NULL) {
                        break;
                }
                assert_int_equal(fa.live, 0);
        }
        assert_true(n > 0);
        lockfsm_destroy(f);
        assert_int_equal(fa.live, 0);
}

/*
 * A batch stopped by a failed allocation in its middle: the commands before
 * it stay applied, a snapshot is refused until the entry is finished, and
 * applying the same entry again finishes it without repeating anything, so
 * the result is the state and the events of a machine that never failed.
 */
static void test_batch_resumes_after_a_failure(void **state)
{
        struct fixture *x = *state;
        struct command c[5];
        unsigned busy = 0;
        long n;
        int rv;

        (void)x; /* each round needs machines of its own */
        for (n = 0;; n++) {
                struct fsmtest *t = malloc(sizeof *t);
                struct fsmtest *ref = malloc(sizeof *ref);
                struct failalloc fa;
                uint64_t a, b, tok;
                void *buf;
                size_t len;

                failalloc_init(&fa);
                fsmtest_init(t, NULL, &fa.mem);
                fsmtest_init(ref, NULL, NULL);
                a = fsmtest_open(t, 1);
                fsmtest_open(ref, 1);
                b = fsmtest_open(t, 2);
                fsmtest_open(ref, 2);
                tok = fsmtest_acquire(t, a, 1, 1, "x", 0).token;
                fsmtest_acquire(ref, a, 1, 1, "x", 0);
                fsmtest_acquire(t, b, 1, 1, "x", COMMAND_WAIT_FOREVER);
                fsmtest_acquire(ref, b, 1, 1, "x", COMMAND_WAIT_FOREVER);
                c[0] = fsmtest_acquire_cmd(a, 2, 1, "y", 0);
                c[1] = fsmtest_release_cmd(a, 3, 1, "x", tok);
                c[2] = open_cmd(3);
                c[3] = fsmtest_acquire_cmd(b, 2, 1, "y", 5000);
                c[4] = fsmtest_acquire_cmd(b, 3, 1, "z", 0);
                fsmtest_apply_batch(ref, c, 5);
                failalloc_arm(&fa, n, true);
                fsmtest_apply_batch(t, c, 5);
                failalloc_disarm(&fa);
                if (t->last_rv == 0) {
                        assert_true(fsmtest_same_state(t->f, ref->f));
                        fsmtest_close(t);
                        fsmtest_close(ref);
                        free(t);
                        free(ref);
                        break;
                }
                assert_int_equal(t->last_rv, BATON_ENOMEM);
                /* Refused once the entry changed something; a failure in
                 * its first command left the machine as it was. */
                rv = lockfsm_snapshot(t->f, &buf, &len);
                if (rv == 0) {
                        lockfsm_snapshot_free(t->f, buf);
                } else {
                        assert_int_equal(rv, BATON_EBUSY);
                        busy++;
                }
                fsmtest_apply_batch(t, c, 5);
                assert_int_equal(t->last_rv, 0);
                assert_int_equal(t->index, ref->index);
                assert_null(lockfsm_check(t->f));
                assert_true(fsmtest_same_state(t->f, ref->f));
                assert_int_equal(t->n_events, ref->n_events);
                assert_memory_equal(t->events, ref->events,
                                    t->n_events * sizeof t->events[0]);
                fsmtest_close(t);
                fsmtest_close(ref);
                assert_int_equal(fa.live, 0);
                free(t);
                free(ref);
        }
        assert_true(n > 3);
        assert_true(busy > 0);
}

#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void)
{
        const struct CMUnitTest tests[] = {
            T(test_open_under_failures),
            T(test_acquire_under_failures),
            T(test_semaphore_under_failures),
            T(test_multi_under_failures),
            T(test_release_close_expire_never_allocate),
            T(test_snapshot_and_restore_under_failures),
            cmocka_unit_test(test_create_under_failures),
            T(test_batch_resumes_after_a_failure),
        };
        return cmocka_run_group_tests_name("alloc", tests, NULL, NULL);
}
