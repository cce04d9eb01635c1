/* Read/write locks in the lock state machine: who is admitted, in which
 * order, with which token (docs/fsm.md, "Read/write locks"). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "../../include/baton.h"
#include "../lib/fsmtest.h"

#define R       COMMAND_MODE_SHARED
#define W       COMMAND_MODE_EXCLUSIVE
#define FOREVER COMMAND_WAIT_FOREVER

static struct command acq_cmd(uint64_t s, uint64_t seq, const char *name,
                              uint8_t mode, uint32_t wait_ms)
{
        struct command c = fsmtest_acquire_cmd(s, seq, 1, name, wait_ms);

        c.mode = mode;
        return c;
}

/* ACQUIRE of `name` in `mode` by session `s` (owner 1). */
static struct lockfsm_result acq(struct fsmtest *t, uint64_t s, uint64_t seq,
                                 const char *name, uint8_t mode,
                                 uint32_t wait_ms)
{
        struct command c = acq_cmd(s, seq, name, mode, wait_ms);

        return fsmtest_apply(t, &c);
}

static struct lockfsm_result rel(struct fsmtest *t, uint64_t s, uint64_t seq,
                                 const char *name, uint64_t token)
{
        return fsmtest_release(t, s, seq, 1, name, token);
}

static void test_readers_share(void **state)
{
        struct fsmtest *t = *state;
        uint64_t a = fsmtest_open(t, 1), b = fsmtest_open(t, 2);
        struct lockfsm_result ra = acq(t, a, 1, "x", R, 0);
        struct lockfsm_result rb = acq(t, b, 1, "x", R, 0);

        assert_int_equal(ra.kind, PROTO_KIND_GRANTED);
        assert_int_equal(rb.kind, PROTO_KIND_GRANTED);
        assert_true(rb.token > ra.token);
        assert_int_equal(fsmtest_check(t, "x", ra.token).kind,
                         PROTO_KIND_CURRENT);
        assert_int_equal(fsmtest_check(t, "x", rb.token).kind,
                         PROTO_KIND_CURRENT);
        assert_int_equal(fsmtest_query(t, "x").session, a);
        /* A writer finds it busy, naming the oldest reader. */
        rb = acq(t, b, 2, "x", W, 0);
        assert_int_equal(rb.status, BATON_EUPGRADE); /* b reads already */
        rb = acq(t, fsmtest_open(t, 3), 1, "x", W, 0);
        assert_int_equal(rb.status, BATON_EBUSY);
        assert_int_equal(rb.session, a);
}

/* A queued writer blocks the readers after it; when the readers are gone
 * it is granted, and the readers behind it after it. */
static void test_writer_waits_and_blocks_later_readers(void **state)
{
        struct fsmtest *t = *state;
        uint64_t a = fsmtest_open(t, 1), b = fsmtest_open(t, 2);
        uint64_t w = fsmtest_open(t, 3), c = fsmtest_open(t, 4);
        uint64_t ta = acq(t, a, 1, "x", R, 0).token;
        uint64_t tb = acq(t, b, 1, "x", R, 0).token, tw;

        assert_int_equal(acq(t, w, 1, "x", W, FOREVER).kind, PROTO_KIND_QUEUED);
        assert_int_equal(acq(t, c, 1, "x", R, 0).status, BATON_EBUSY);
        assert_int_equal(acq(t, c, 2, "x", R, FOREVER).kind, PROTO_KIND_QUEUED);
        assert_int_equal(rel(t, a, 2, "x", ta).kind, PROTO_KIND_RELEASED);
        assert_int_equal(fsmtest_granted(t, w, 1), 0);
        rel(t, b, 2, "x", tb);
        tw = fsmtest_granted(t, w, 1);
        assert_int_equal(tw, t->index);
        assert_int_equal(fsmtest_granted(t, c, 2), 0);
        assert_int_equal(fsmtest_query(t, "x").session, w);
        rel(t, w, 2, "x", tw);
        assert_int_equal(fsmtest_granted(t, c, 2), t->index);
}

/* Readers queued together are granted together by one entry, up to the
 * next writer. */
static void test_readers_granted_together(void **state)
{
        struct fsmtest *t = *state;
        uint64_t w = fsmtest_open(t, 1), r1 = fsmtest_open(t, 2);
        uint64_t r2 = fsmtest_open(t, 3), w2 = fsmtest_open(t, 4);
        uint64_t r3 = fsmtest_open(t, 5);
        uint64_t tw = acq(t, w, 1, "x", W, 0).token;

        acq(t, r1, 1, "x", R, FOREVER);
        acq(t, r2, 1, "x", R, FOREVER);
        acq(t, w2, 1, "x", W, FOREVER);
        acq(t, r3, 1, "x", R, FOREVER);
        rel(t, w, 2, "x", tw);
        assert_int_equal(fsmtest_granted(t, r1, 1), t->index);
        assert_int_equal(fsmtest_granted(t, r2, 1), t->index);
        assert_int_equal(fsmtest_granted(t, w2, 1), 0);
        assert_int_equal(fsmtest_granted(t, r3, 1), 0);
        assert_int_equal(fsmtest_query(t, "x").waiters, 2);
}

static void test_reentrant_per_mode(void **state)
{
        struct fsmtest *t = *state;
        uint64_t a = fsmtest_open(t, 1);
        uint64_t tok = acq(t, a, 1, "x", R, 0).token;
        struct lockfsm_result r = acq(t, a, 2, "x", R, 0);

        assert_int_equal(r.kind, PROTO_KIND_REENTERED);
        assert_int_equal(r.count, 2);
        assert_int_equal(r.token, tok);
        assert_int_equal(rel(t, a, 3, "x", tok).count, 1);
        assert_int_equal(rel(t, a, 4, "x", tok).count, 0);
        assert_int_equal(fsmtest_query(t, "x").kind, PROTO_KIND_FREE);
}

/* A writer takes the read lock at once; releasing the write lock then
 * admits the readers at the head of the queue. */
static void test_downgrade(void **state)
{
        struct fsmtest *t = *state;
        uint64_t a = fsmtest_open(t, 1), b = fsmtest_open(t, 2);
        uint64_t tw = acq(t, a, 1, "x", W, 0).token;
        struct lockfsm_result r;

        acq(t, b, 1, "x", R, FOREVER);
        r = acq(t, a, 2, "x", R, 0);
        assert_int_equal(r.kind, PROTO_KIND_GRANTED);
        assert_true(r.token > tw);
        assert_int_equal(fsmtest_granted(t, b, 1), 0);
        assert_int_equal(rel(t, a, 3, "x", tw).kind, PROTO_KIND_RELEASED);
        assert_int_equal(fsmtest_granted(t, b, 1), t->index);
        assert_int_equal(fsmtest_check(t, "x", tw).status, BATON_ESTALE);
        assert_int_equal(fsmtest_check(t, "x", r.token).kind,
                         PROTO_KIND_CURRENT);
}

/* A sole reader takes the write lock at once; with another reader it is
 * refused at once, and nothing changes. */
static void test_upgrade(void **state)
{
        struct fsmtest *t = *state;
        uint64_t a = fsmtest_open(t, 1), b = fsmtest_open(t, 2);
        uint64_t tr = acq(t, a, 1, "x", R, 0).token, tw;
        struct lockfsm_result r;
        void *before;
        size_t len;

        r = acq(t, a, 2, "x", W, 0);
        assert_int_equal(r.kind, PROTO_KIND_GRANTED);
        tw = r.token;
        assert_int_equal(acq(t, b, 1, "x", R, FOREVER).kind, PROTO_KIND_QUEUED);
        rel(t, a, 3, "x", tw);
        assert_int_equal(fsmtest_granted(t, b, 1), t->index);
        /* Now a and b read: a's upgrade is refused, not queued. */
        before = fsmtest_snapshot(t->f, &len);
        r = acq(t, a, 4, "x", W, FOREVER);
        assert_int_equal(r.status, BATON_EUPGRADE);
        assert_int_equal(fsmtest_query(t, "x").waiters, 0);
        assert_int_equal(fsmtest_check(t, "x", tr).kind, PROTO_KIND_CURRENT);
        free(before);
}

/* A writer that leaves the head of the queue lets the readers behind it
 * join the readers holding the lock, in the same entry. */
static void test_head_writer_leaving_admits_readers(void **state)
{
        struct fsmtest *t = *state;
        uint64_t a = fsmtest_open(t, 1), w = fsmtest_open(t, 2);
        uint64_t c = fsmtest_open(t, 3), d = fsmtest_open(t, 4);

        acq(t, a, 1, "x", R, 0);
        acq(t, w, 1, "x", W, FOREVER);
        acq(t, c, 1, "x", R, FOREVER);
        acq(t, d, 1, "y", W, 0);
        assert_int_equal(fsmtest_cancel(t, w, 2, "x", 1).kind,
                         PROTO_KIND_CANCELLED);
        assert_int_equal(fsmtest_granted(t, c, 1), t->index);
        /* And the same when the waiting writer's session expires. */
        acq(t, a, 2, "y", R, FOREVER);
        acq(t, c, 2, "y", W, FOREVER);
        fsmtest_expire(t, d);
        assert_int_equal(fsmtest_granted(t, a, 2), t->index);
        assert_int_equal(fsmtest_granted(t, c, 2), 0);
}

/* One entry admits to a lock a writer alone or readers: a writer freed by
 * its own entry leaves the lock to the next entry, which admits the
 * readers queued meanwhile; readers of one entry share its index. */
static void test_one_entry_one_group(void **state)
{
        struct fsmtest *t = *state;
        uint64_t a = fsmtest_open(t, 1), b = fsmtest_open(t, 2);
        uint64_t c = fsmtest_open(t, 3);
        struct command batch[4];
        uint64_t e;

        batch[0] = acq_cmd(a, 1, "x", W, 0);
        batch[1] = fsmtest_release_cmd(a, 2, 1, "x", t->index + 1);
        batch[2] = acq_cmd(b, 1, "x", R, FOREVER);
        batch[3] = acq_cmd(c, 1, "x", R, 0); /* a try: the queue's */
        fsmtest_apply_batch(t, batch, 4);
        e = t->index;
        assert_int_equal(fsmtest_granted(t, a, 1), e);
        assert_int_equal(fsmtest_result_of(t, b, 1).kind, PROTO_KIND_QUEUED);
        assert_int_equal(fsmtest_result_of(t, c, 1).status, BATON_EBUSY);
        assert_int_equal(lockfsm_deferred(t->f), 1);
        fsmtest_open(t, 9);
        assert_int_equal(fsmtest_granted(t, b, 1), e + 1);
        /* Readers of one entry share its index. */
        batch[0] = acq_cmd(a, 3, "y", R, 0);
        batch[1] = acq_cmd(c, 2, "y", R, 0);
        fsmtest_apply_batch(t, batch, 2);
        assert_int_equal(fsmtest_granted(t, a, 3), t->index);
        assert_int_equal(fsmtest_granted(t, c, 2), t->index);
}

/* An owner's two grants made by one entry share its token; a release by
 * that token ends the write grant first. */
static void test_release_takes_the_write_grant_first(void **state)
{
        struct fsmtest *t = *state;
        uint64_t a = fsmtest_open(t, 1), b = fsmtest_open(t, 2);
        struct command batch[2];
        uint64_t e;

        batch[0] = acq_cmd(a, 1, "x", W, 0);
        batch[1] = acq_cmd(a, 2, "x", R, 0);
        fsmtest_apply_batch(t, batch, 2);
        e = t->index;
        assert_int_equal(fsmtest_result_of(t, a, 2).token, e);
        acq(t, b, 1, "x", R, FOREVER);
        assert_int_equal(rel(t, a, 3, "x", e).kind, PROTO_KIND_RELEASED);
        assert_int_equal(fsmtest_granted(t, b, 1), t->index); /* a reads on */
        assert_int_equal(rel(t, a, 4, "x", e).kind, PROTO_KIND_RELEASED);
        assert_int_equal(rel(t, a, 5, "x", e).status, BATON_ENOTHOLDER);
}

static void test_unknown_mode_refused(void **state)
{
        struct fsmtest *t = *state;
        uint64_t a = fsmtest_open(t, 1);

        assert_int_equal(acq(t, a, 1, "x", 2, 0).status, BATON_EUNSUPPORTED);
        assert_int_equal(fsmtest_query(t, "x").kind, PROTO_KIND_FREE);
}

/* A snapshot keeps the modes of holders and waiters (checked by the
 * teardown's round trip) and what they mean: restored, the machine goes
 * on as the original. */
static void test_snapshot_keeps_modes(void **state)
{
        struct fsmtest *t = *state;
        struct fsmtest *u = malloc(sizeof *u);
        uint64_t a = fsmtest_open(t, 1), b = fsmtest_open(t, 2);
        uint64_t c = fsmtest_open(t, 3);
        uint64_t tr = acq(t, a, 1, "x", R, 0).token;
        size_t len;
        void *buf;

        acq(t, b, 1, "x", W, FOREVER);
        acq(t, c, 1, "x", R, FOREVER);
        fsmtest_init(u, NULL, NULL);
        buf = fsmtest_snapshot(t->f, &len);
        assert_int_equal(lockfsm_restore(u->f, buf, len), 0);
        u->index = t->index;
        rel(t, a, 2, "x", tr);
        rel(u, a, 2, "x", tr);
        assert_int_equal(fsmtest_granted(t, b, 1), t->index);
        assert_int_equal(fsmtest_granted(u, b, 1), t->index);
        assert_int_equal(fsmtest_granted(u, c, 1), 0);
        assert_true(fsmtest_same_state(t->f, u->f));
        free(buf);
        fsmtest_close(u);
        free(u);
}

#define T(f) cmocka_unit_test_setup_teardown(f, fsmtest_setup, fsmtest_teardown)

/* max_holders_per_lock bounds the readers: one more that would be
 * granted at once is refused by name; queued readers are admitted only up
 * to it, and the rest as readers leave. */
static void test_holder_limit(void **state)
{
        struct fsmtest *t = *state;
        struct lockfsm_limits limits;
        uint64_t s[6];
        uint64_t tok;

        fsmtest_close(t);
        lockfsm_limits_default(&limits);
        limits.max_holders_per_lock = 2;
        fsmtest_init(t, &limits, NULL);
        for (unsigned i = 0; i < 6; i++) {
                s[i] = fsmtest_open(t, i + 1);
        }
        acq(t, s[0], 1, "x", R, 0);
        tok = acq(t, s[1], 1, "x", R, 0).token;
        assert_int_equal(acq(t, s[2], 1, "x", R, FOREVER).status,
                         BATON_ETOOMANYHOLDERS);
        assert_int_equal(acq(t, s[5], 1, "x", W, FOREVER).kind,
                         PROTO_KIND_QUEUED);
        for (unsigned i = 2; i < 5; i++) {
                assert_int_equal(acq(t, s[i], 2, "x", R, FOREVER).kind,
                                 PROTO_KIND_QUEUED);
        }
        rel(t, s[0], 2, "x", tok - 1);
        rel(t, s[1], 2, "x", tok);
        tok = fsmtest_granted(t, s[5], 1);
        assert_true(tok > 0);
        rel(t, s[5], 2, "x", tok);
        assert_true(fsmtest_granted(t, s[2], 2) > 0 &&
                    fsmtest_granted(t, s[3], 2) > 0);
        assert_int_equal(fsmtest_granted(t, s[4], 2), 0);
        rel(t, s[2], 3, "x", fsmtest_granted(t, s[2], 2));
        assert_int_equal(fsmtest_granted(t, s[4], 2), t->index);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            T(test_readers_share),
            T(test_writer_waits_and_blocks_later_readers),
            T(test_readers_granted_together),
            T(test_reentrant_per_mode),
            T(test_downgrade),
            T(test_upgrade),
            T(test_head_writer_leaving_admits_readers),
            T(test_one_entry_one_group),
            T(test_release_takes_the_write_grant_first),
            T(test_unknown_mode_refused),
            T(test_snapshot_keeps_modes),
            T(test_holder_limit),
        };
        return cmocka_run_group_tests_name("rwlock", tests, NULL, NULL);
}
