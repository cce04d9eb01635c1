/* Unit tests of the lock state machine's entries: several commands in one
 * entry (entry.h) applied at one index, and malformed entries that change
 * nothing. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../../include/baton.h"
#include "../../src/fsm/entry.h"
#include "lockfsmcase.h"

static void test_malformed_entry_changes_nothing(void **state)
{
        struct fsmtest *t = *state;
        static const uint8_t junk[] = {1, 4, 0, 0, 1, 2, 3};
        static const uint8_t future[] = {COMMAND_VERSION + 1, 4, 0, 0};
        uint64_t a = fsmtest_open(t, 1);
        size_t l1, l2;
        void *s1, *s2;
        struct lockfsm_result r;

        fsmtest_acquire(t, a, 1, 1, "x", 0);
        s1 = fsmtest_snapshot(t->f, &l1);
        r = fsmtest_apply_raw(t, junk, sizeof junk);
        assert_int_equal(t->last_rv, 0);
        assert_int_equal(r.status, BATON_EMALFORMED);
        lockfsmcase_result_last(t, BATON_EMALFORMED);
        assert_int_equal(fsmtest_apply_raw(t, future, sizeof future).status,
                         BATON_EVERSION);
        assert_int_equal(fsmtest_apply_raw(t, NULL, 0).status,
                         BATON_EMALFORMED);
        s2 = fsmtest_snapshot(t->f, &l2);
        /* Identical but for last_index and the stamp (bytes 8..23) and
         * the checksum. */
        assert_int_equal(l1, l2);
        assert_memory_equal((char *)s1 + 24, (char *)s2 + 24, l1 - 32);
        assert_int_equal(lockfsm_last_index(t->f), t->index);
        free(s1);
        free(s2);
}

/* --- Entries of several commands (entry.h) ------------------------------ */

static void test_batch_commands_share_the_entry_index(void **state)
{
        struct fsmtest *t = *state;
        struct command c[4] = {
            {.type = COMMAND_OPEN, .nonce = 11, .ttl_ms = 1000},
            {.type = COMMAND_OPEN, .nonce = 12, .ttl_ms = 1000},
        };
        struct lockfsm_result r, ra, rb;
        uint64_t a, b, at;

        r = fsmtest_apply_batch(t, c, 2);
        assert_int_equal(r.kind, PROTO_KIND_APPLIED);
        assert_int_equal(r.count, 2);
        /* Two OPENs in one entry: distinct ids, the first the entry's
         * index, the second one stamp later. */
        a = fsmtest_find(t, LOCKFSM_EV_OPEN, 0)->session;
        b = fsmtest_find(t, LOCKFSM_EV_OPEN, 1)->session;
        assert_int_equal(a, t->index);
        assert_int_equal(b, t->index + 1);
        c[0] = fsmtest_acquire_cmd(a, 1, 1, "x", 0);
        c[1] = fsmtest_acquire_cmd(b, 1, 1, "y", 0);
        c[2] = fsmtest_acquire_cmd(b, 2, 1, "x", COMMAND_WAIT_FOREVER);
        c[3] = fsmtest_acquire_cmd(a, 2, 1, "y", COMMAND_WAIT_TRY);
        fsmtest_apply_batch(t, c, 4);
        at = t->index;
        ra = fsmtest_result_of(t, a, 1);
        rb = fsmtest_result_of(t, b, 1);
        /* Grants of different locks by one entry share its index. */
        assert_int_equal(ra.kind, PROTO_KIND_GRANTED);
        assert_int_equal(rb.kind, PROTO_KIND_GRANTED);
        assert_int_equal(ra.token, at);
        assert_int_equal(rb.token, at);
        assert_int_equal(fsmtest_result_of(t, b, 2).kind, PROTO_KIND_QUEUED);
        r = fsmtest_result_of(t, a, 2);
        assert_int_equal(r.status, BATON_EBUSY);
        assert_int_equal(r.token, at);
        assert_int_equal(lockfsm_deferred(t->f), 0);
}

/* The case that makes the rule: a release hands a lock on, and the same
 * entry ends the new holder's session. The lock must not be handed on a
 * second time with the same token; the next entry does it. */
static void test_batch_never_grants_a_lock_twice(void **state)
{
        struct fsmtest *t = *state;
        uint64_t a = fsmtest_open(t, 1);
        uint64_t b = fsmtest_open(t, 2);
        uint64_t c = fsmtest_open(t, 3);
        uint64_t t1 = fsmtest_acquire(t, a, 1, 1, "x", 0).token;
        struct command cmd[3];
        const struct fsmtest_event *e;
        struct lockfsm_result r;
        uint64_t at;
        unsigned grants;

        fsmtest_acquire(t, b, 1, 1, "x", COMMAND_WAIT_FOREVER);
        fsmtest_acquire(t, c, 1, 1, "x", COMMAND_WAIT_FOREVER);
        grants = fsmtest_count(t, LOCKFSM_EV_GRANT);
        cmd[0] = fsmtest_release_cmd(a, 2, 1, "x", t1);
        cmd[1] = (struct command){.type = COMMAND_EXPIRE, .session = b};
        fsmtest_apply_batch(t, cmd, 2);
        at = t->index;
        /* b got x at `at` and lost it; c waits, x is between holders. */
        assert_int_equal(fsmtest_count(t, LOCKFSM_EV_GRANT), grants + 1);
        e = fsmtest_find(t, LOCKFSM_EV_GRANT, grants);
        assert_int_equal(e->session, b);
        assert_int_equal(e->token, at);
        assert_int_equal(lockfsm_deferred(t->f), 1);
        /* Asked between entries (a read after a barrier). */
        lockfsm_query(t->f, "x", 1, &r);
        assert_int_equal(r.kind, PROTO_KIND_FREE);
        assert_int_equal(r.waiters, 1);
        assert_null(lockfsm_check(t->f));
        /* A try finds it busy: it belongs to its queue. */
        assert_int_equal(fsmtest_acquire(t, a, 3, 1, "x", 0).status,
                         BATON_EBUSY);
        /* The next entry, whatever it is (here that try), hands it on
         * first, with its own index. */
        e = fsmtest_find(t, LOCKFSM_EV_GRANT, grants + 1);
        assert_non_null(e);
        assert_int_equal(e->session, c);
        assert_int_equal(e->cause, COMMAND_BATCH);
        assert_int_equal(e->token, at + 1);
        assert_int_equal(fsmtest_result_of(t, a, 3).token, at + 1);
        assert_int_equal(lockfsm_deferred(t->f), 0);
        r = fsmtest_query(t, "x");
        assert_int_equal(r.session, c);
        assert_int_equal(r.token, at + 1);
}

/* A lock created, released and wanted again in one entry: even a try
 * waits for the next entry, rather than share the token. */
static void test_batch_try_waits_one_entry_for_a_regranted_lock(void **state)
{
        struct fsmtest *t = *state;
        uint64_t a = fsmtest_open(t, 1);
        uint64_t b = fsmtest_open(t, 2);
        uint64_t at = t->index + 1;
        struct command cmd[3] = {
            fsmtest_acquire_cmd(a, 1, 1, "x", 0),
            fsmtest_release_cmd(a, 2, 1, "x", at),
            fsmtest_acquire_cmd(b, 1, 1, "x", COMMAND_WAIT_TRY),
        };
        struct command none;
        struct lockfsm_result r;

        fsmtest_apply_batch(t, cmd, 3);
        assert_int_equal(fsmtest_result_of(t, a, 1).token, at);
        assert_int_equal(fsmtest_result_of(t, a, 2).kind, PROTO_KIND_RELEASED);
        r = fsmtest_result_of(t, b, 1);
        assert_int_equal(r.status, 0);
        assert_int_equal(r.kind, PROTO_KIND_QUEUED);
        assert_int_equal(lockfsm_deferred(t->f), 1);
        /* An empty batch is the leader's nudge. */
        r = fsmtest_apply_batch(t, &none, 0);
        assert_int_equal(r.kind, PROTO_KIND_APPLIED);
        assert_int_equal(r.count, 0);
        r = fsmtest_query(t, "x");
        assert_int_equal(r.session, b);
        assert_int_equal(r.token, at + 1);
        /* The try's remembered outcome is the grant. */
        assert_int_equal(fsmtest_acquire(t, b, 1, 1, "x", 0).token, at + 1);
        /* A lock freed by its own entry with no one waiting is gone. */
        cmd[0] = fsmtest_acquire_cmd(a, 3, 1, "y", 0);
        cmd[1] = fsmtest_release_cmd(a, 4, 1, "y", t->index + 1);
        fsmtest_apply_batch(t, cmd, 2);
        assert_int_equal(fsmtest_query(t, "y").kind, PROTO_KIND_FREE);
        assert_int_equal(lockfsm_deferred(t->f), 0);
        assert_int_equal(fsmtest_query(t, "y").waiters, 0);
}

/* A deferred lock survives a snapshot: the restored machine hands it on
 * at the same point with the same events. */
static void test_batch_deferred_lock_in_snapshot(void **state)
{
        struct fsmtest *t = *state;
        struct fsmtest *u = malloc(sizeof *u);
        uint64_t a = fsmtest_open(t, 1);
        uint64_t b = fsmtest_open(t, 2);
        uint64_t c = fsmtest_open(t, 3);
        uint64_t t1 = fsmtest_acquire(t, a, 1, 1, "x", 0).token;
        uint64_t t2 = fsmtest_acquire(t, a, 2, 1, "y", 0).token;
        struct command cmd[4] = {
            fsmtest_release_cmd(a, 3, 1, "y", t2),
            fsmtest_release_cmd(a, 4, 1, "x", t1),
            {.type = COMMAND_EXPIRE, .session = b},
        };
        struct lockfsm_limits l;
        struct lockfsm_result ra, rb;
        size_t len;
        void *buf;

        fsmtest_acquire(t, b, 1, 1, "y", COMMAND_WAIT_FOREVER);
        fsmtest_acquire(t, b, 2, 1, "x", COMMAND_WAIT_FOREVER);
        fsmtest_acquire(t, c, 1, 1, "y", COMMAND_WAIT_FOREVER);
        fsmtest_acquire(t, c, 2, 1, "x", COMMAND_WAIT_FOREVER);
        /* b gets y, then x, and loses both: x and y wait for the next
         * entry, which hands them on in lock age order (x first). */
        fsmtest_apply_batch(t, cmd, 3);
        assert_int_equal(lockfsm_deferred(t->f), 2);
        assert_null(lockfsm_check(t->f));
        lockfsmcase_small_limits(&l);
        fsmtest_init(u, &l, NULL);
        buf = fsmtest_snapshot(t->f, &len);
        assert_int_equal(lockfsm_restore(u->f, buf, len), 0);
        u->index = t->index;
        assert_true(fsmtest_same_state(t->f, u->f));
        t->n_events = 0;
        ra = fsmtest_query(t, "x");
        rb = fsmtest_query(u, "x");
        assert_memory_equal(&ra, &rb, sizeof ra);
        assert_int_equal(ra.session, c);
        assert_int_equal(t->n_events, u->n_events);
        assert_memory_equal(t->events, u->events,
                            t->n_events * sizeof t->events[0]);
        assert_string_equal(t->events[0].name, "x");
        assert_string_equal(t->events[1].name, "y");
        assert_true(fsmtest_same_state(t->f, u->f));
        free(buf);
        fsmtest_close(u);
        free(u);
}

static void test_batch_framing_is_strict(void **state)
{
        struct fsmtest *t = *state;
        uint64_t a = fsmtest_open(t, 1);
        struct command c = fsmtest_acquire_cmd(a, 1, 1, "x", 0);
        uint8_t buf[128], cmd[COMMAND_MAX_SIZE];
        struct entry_writer w;
        size_t n, len = command_encode(&c, cmd, sizeof cmd);
        struct lockfsm_result r;

        entry_writer_init(&w, buf, sizeof buf, 7);
        assert_true(entry_writer_add(&w, cmd, len));
        assert_false(entry_writer_add(&w, cmd, len - 1));
        n = entry_writer_finish(&w);
        assert_int_equal(n % 8, 0);
        /* Short, long, bad count, bad length, non-zero padding: the whole
         * entry is refused and nothing in it applied. */
        r = fsmtest_apply_raw(t, buf, n - 8);
        assert_int_equal(r.status, BATON_EMALFORMED);
        buf[4] = 2;
        assert_int_equal(fsmtest_apply_raw(t, buf, n).status, BATON_EMALFORMED);
        buf[4] = 1;
        buf[16] = (uint8_t)(len + 8);
        assert_int_equal(fsmtest_apply_raw(t, buf, n).status, BATON_EMALFORMED);
        buf[16] = (uint8_t)len;
        buf[n - 1] = 1;
        assert_int_equal(fsmtest_apply_raw(t, buf, n).status, BATON_EMALFORMED);
        buf[n - 1] = 0;
        memset(buf + n, 0, 8);
        assert_int_equal(fsmtest_apply_raw(t, buf, n + 8).status,
                         BATON_EMALFORMED);
        assert_int_equal(fsmtest_query(t, "x").kind, PROTO_KIND_FREE);
        /* Intact, it applies. */
        assert_int_equal(fsmtest_apply_raw(t, buf, n).kind, PROTO_KIND_APPLIED);
        assert_int_equal(fsmtest_query(t, "x").session, a);
}

#define T(name) LOCKFSMCASE(name)

int main(void)
{
        const struct CMUnitTest tests[] = {
            T(test_malformed_entry_changes_nothing),
            T(test_batch_commands_share_the_entry_index),
            T(test_batch_never_grants_a_lock_twice),
            T(test_batch_try_waits_one_entry_for_a_regranted_lock),
            T(test_batch_deferred_lock_in_snapshot),
            T(test_batch_framing_is_strict),
        };
        return cmocka_run_group_tests_name("lockfsm_batch", tests, NULL, NULL);
}
