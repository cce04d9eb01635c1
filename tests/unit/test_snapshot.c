/* Tests of snapshot and restore: determinism, and rejection of bad input. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "../../include/baton.h"
#include "../../src/fsm/snapshot.h"
#include "../lib/fsmtest.h"
#include "fsm_v3_fixture.h"
#include "fsm_v4_fixture.h"
#include "fsm_v6_fixture.h"

/* Re-seal a doctored snapshot, so restore's checks past the checksum run. */
static void reseal(uint8_t *p, size_t len)
{
        uint64_t h = 0xcbf29ce484222325ULL;
        size_t i;

        for (i = 0; i < len - 8; i++) {
                h ^= p[i];
                h *= 0x100000001b3ULL;
        }
        for (i = 0; i < 8; i++) {
                p[len - 8 + i] = (uint8_t)(h >> (8 * i));
        }
}

/* Little-endian field of `n` bytes at `p`. */
static uint64_t le_at(const uint8_t *p, size_t n)
{
        uint64_t v = 0;

        while (n-- > 0) {
                v = v << 8 | p[n];
        }
        return v;
}

/* Remove `n` bytes at `at` of the `*len` bytes of `p`. */
static void cut(uint8_t *p, size_t *len, size_t at, size_t n)
{
        memmove(p + at, p + at + n, *len - at - n);
        *len -= n;
}

/* Version 13 written as version 6, in place (a state with no value, no
 * hold time and no principal is written as version 10 wrote it but for
 * each hold's empty value and zero hold clock and each session's zero
 * principal, which go): the same without the leader's clock, each
 * session's lock-delay, count of revoked grants and principal and each
 * grant's time (all of which must be 0 here), and with no
 * multi-lock waiting (version 7's addition). Returns the new length,
 * resealed. */
static size_t as_version_6(uint8_t *v, size_t len)
{
        size_t in = 4 + 2 + 2 + 8 + 8;
        uint64_t i, m, j, k, h;

        assert_int_equal(v[4], 13);
        v[4] = 6;
        assert_int_equal(le_at(v + in, 8), 0);
        cut(v, &len, in, 8);            /* the clock */
        in += 4 + 9 * le_at(v + in, 4); /* the tombstones */
        m = le_at(v + in, 4);
        in += 4;
        for (i = 0; i < m; i++) {
                in += 8 + 8 + 4 + 8 + 1 + v[in + 28] + 32;
                assert_int_equal(le_at(v + in, 8), 0);
                assert_int_equal(le_at(v + in + 8, 8), 0);
                cut(v, &len, in, 16); /* lock-delay, revoked, principal */
                in += 1 + 45 * v[in]; /* the outcomes */
        }
        m = le_at(v + in, 4);
        in += 4;
        for (i = 0; i < m; i++) {
                bool sem, blocked;
                in += 1 + v[in] + 8;
                sem = (v[in] & 0x7f) == COMMAND_MODE_SEMAPHORE;
                blocked = (v[in] & 0x80) != 0;
                in += 1 + (sem || blocked ? 4 : 0);
                for (j = 0; j < 2; j++) { /* holders, then waiters */
                        k = le_at(v + in, 4);
                        in += 4;
                        for (h = 0; h < k; h++) {
                                in += 4 * 8 + 4 + 1 + (sem ? 4 : 0);
                                if (j == 0) {
                                        assert_int_equal(le_at(v + in, 4), 0);
                                        cut(v, &len, in, 4); /* its time */
                                }
                                assert_int_equal(v[in], 0);
                                cut(v, &len, in, 1); /* its empty value */
                                assert_int_equal(le_at(v + in, 4), 0);
                                assert_int_equal(le_at(v + in + 4, 8), 0);
                                cut(v, &len, in, 12); /* no hold clock */
                        }
                }
        }
        reseal(v, len);
        return len;
}

/* Version 4 written as version 3: the same without each hold's mode
 * (which must be exclusive here, as version 3 loads it). `out` holds
 * `len` bytes; returns the new length, resealed. */
static size_t as_version_3(const uint8_t *v4, size_t len, uint8_t *out)
{
        size_t in = 4 + 2 + 2 + 8 + 8, n;
        uint64_t i, m, k, j, h;

        in += 4 + 9 * le_at(v4 + in, 4); /* the tombstones */
        m = le_at(v4 + in, 4);
        in += 4;
        for (i = 0; i < m; i++) { /* the sessions, unchanged */
                in += 8 + 8 + 4 + 8 + 1 + v4[in + 28] + 32;
                k = v4[in];
                in += 1 + 45 * k;
        }
        memcpy(out, v4, in);
        out[4] = 3;
        n = in;
        m = le_at(v4 + in, 4);
        memcpy(out + n, v4 + in, 4);
        in += 4;
        n += 4;
        for (i = 0; i < m; i++) {
                size_t head = 1 + v4[in] + 8 + 1;
                memcpy(out + n, v4 + in, head);
                in += head;
                n += head;
                for (j = 0; j < 2; j++) { /* holders, then waiters */
                        k = le_at(v4 + in, 4);
                        memcpy(out + n, v4 + in, 4);
                        in += 4;
                        n += 4;
                        for (h = 0; h < k; h++) {
                                assert_int_equal(v4[in + 36],
                                                 COMMAND_MODE_EXCLUSIVE);
                                memcpy(out + n, v4 + in, 36);
                                in += 37;
                                n += 36;
                        }
                }
        }
        assert_int_equal(in + 8, len);
        n += 8;
        reseal(out, n);
        return n;
}

/* Version 3 written as version 2: the same without each session's owner
 * hash (which must be zero here, as version 2 loads it). `out` holds
 * `len` bytes; returns the new length, resealed. */
static size_t as_version_2(const uint8_t *v3, size_t len, uint8_t *out)
{
        static const uint8_t zero[32];
        size_t in = 4 + 2 + 2 + 8 + 8;
        size_t n = in;
        uint64_t i, m, k;

        memcpy(out, v3, in);
        out[4] = 2;
        m = le_at(v3 + in, 4);
        memcpy(out + n, v3 + in, 4 + 9 * m); /* the tombstones */
        in += 4 + 9 * m;
        n += 4 + 9 * m;
        memcpy(out + n, v3 + in, 4);
        m = le_at(v3 + in, 4);
        in += 4;
        n += 4;
        for (i = 0; i < m; i++) {
                size_t head = 8 + 8 + 4 + 8 + 1 + v3[in + 28];
                memcpy(out + n, v3 + in, head);
                in += head;
                n += head;
                assert_memory_equal(v3 + in, zero, sizeof zero);
                in += sizeof zero;
                k = v3[in];
                memcpy(out + n, v3 + in, 1 + 45 * k); /* the outcomes */
                in += 1 + 45 * k;
                n += 1 + 45 * k;
        }
        memcpy(out + n, v3 + in, len - in);
        n += len - in;
        reseal(out, n);
        return n;
}

/* A state that uses every part of the format. */
static void build_rich(struct fsmtest *t)
{
        uint64_t a = fsmtest_open(t, 101);
        uint64_t b = fsmtest_open(t, 102);
        uint64_t c = fsmtest_open(t, 0);
        uint64_t d = fsmtest_open(t, 104);
        struct command cmd = {.type = COMMAND_ACQUIRE,
                              .session = b,
                              .seq = 9,
                              .ack = 3,
                              .owner = 2,
                              .wait_ms = 700,
                              .name = "beta",
                              .name_len = 4};

        fsmtest_acquire(t, a, 1, 1, "alpha", 0);
        fsmtest_acquire(t, a, 2, 1, "alpha", 0);
        fsmtest_acquire(t, a, 3, 2, "beta", 0);
        fsmtest_acquire(t, b, 1, 1, "alpha", 5000);
        fsmtest_apply(t, &cmd); /* waits, with outcomes remembered from 3 */
        fsmtest_acquire(t, c, 1, 1, "alpha", COMMAND_WAIT_FOREVER);
        fsmtest_acquire(t, c, 2, 1, "gamma", 0);
        fsmtest_expire(t, d);
        fsmtest_close_session(t, fsmtest_open(t, 0), 1);
}

/* ACQUIRE of `k` permits of the semaphore "pool" of 3. */
static struct lockfsm_result take_permits(struct fsmtest *t, uint64_t s,
                                          uint32_t k, uint32_t wait_ms)
{
        struct command c = fsmtest_acquire_cmd(s, 1, 1, "pool", wait_ms);

        c.mode = COMMAND_MODE_SEMAPHORE;
        c.permits = k;
        c.limit = 3;
        return fsmtest_apply(t, &c);
}

/* build_rich(), a semaphore of 3 permits (one session holds 2 and
 * another waits for 2), and a lock in its lock-delay that a session waits
 * for. */
/* A campaign for the election "chief" by session `s` (its first
 * request), waiting as long as it takes. */
static struct lockfsm_result campaign(struct fsmtest *t, uint64_t s,
                                      const char *value)
{
        struct command c =
            fsmtest_acquire_cmd(s, 1, 1, "chief", COMMAND_WAIT_FOREVER);

        c.mode = COMMAND_MODE_ELECTION;
        c.value = value;
        c.value_len = (uint8_t)strlen(value);
        return fsmtest_apply(t, &c);
}

static void build_every_kind(struct fsmtest *t)
{
        uint64_t lost, waiter;

        build_rich(t);
        assert_int_equal(take_permits(t, fsmtest_open(t, 105), 2, 0).kind,
                         PROTO_KIND_GRANTED);
        assert_int_equal(
            take_permits(t, fsmtest_open(t, 106), 2, COMMAND_WAIT_FOREVER).kind,
            PROTO_KIND_QUEUED);
        lost = fsmtest_open(t, 107);
        waiter = fsmtest_open(t, 108);
        fsmtest_acquire(t, lost, 1, 1, "delayed", 0);
        fsmtest_acquire(t, waiter, 1, 1, "delayed", COMMAND_WAIT_FOREVER);
        fsmtest_apply(t, &(struct command){.type = COMMAND_EXPIRE,
                                           .session = lost,
                                           .delay_ms = 250});
        assert_int_equal(fsmtest_count(t, LOCKFSM_EV_BLOCK), 1);
        /* A multi-lock waiting on a held name and a free one. */
        fsmtest_acquire(t, fsmtest_open(t, 109), 1, 1, "m1", 0);
        assert_int_equal(fsmtest_multi(t, fsmtest_open(t, 110), 1, 1, "m1 m2/r",
                                       COMMAND_WAIT_FOREVER)
                             .kind,
                         PROTO_KIND_QUEUED);
        /* An election: a leader and a candidate, each with a value. */
        assert_int_equal(campaign(t, fsmtest_open(t, 111), "10.0.0.1:80").kind,
                         PROTO_KIND_GRANTED);
        assert_int_equal(campaign(t, fsmtest_open(t, 112), "").kind,
                         PROTO_KIND_QUEUED);
}

static void test_empty_round_trip(void **state)
{
        struct fsmtest a, b;
        size_t len;
        void *buf;

        (void)state;
        fsmtest_init(&a, NULL, NULL);
        fsmtest_init(&b, NULL, NULL);
        buf = fsmtest_snapshot(a.f, &len);
        assert_int_equal(lockfsm_restore(b.f, buf, len), 0);
        assert_true(fsmtest_same_state(a.f, b.f));
        free(buf);
        fsmtest_close(&a);
        fsmtest_close(&b);
}

static void test_restore_then_continue_in_lockstep(void **state)
{
        struct fsmtest *a = malloc(sizeof *a);
        struct fsmtest *b = malloc(sizeof *b);
        struct lockfsm_result ra, rb;
        size_t len;
        void *buf;

        (void)state;
        fsmtest_init(a, NULL, NULL);
        fsmtest_init(b, NULL, NULL);
        build_rich(a);
        buf = fsmtest_snapshot(a->f, &len);
        assert_int_equal(lockfsm_restore(b->f, buf, len), 0);
        assert_null(lockfsm_check(b->f));
        assert_int_equal(lockfsm_last_index(b->f), a->index);
        b->index = a->index;
        assert_true(fsmtest_same_state(a->f, b->f));
        /* Release "alpha" twice (reentrant), handing it to b, then expire
         * the session that holds two locks: both machines must agree on
         * every outcome and event. */
        ra = fsmtest_release(a, 1, 4, 1, "alpha", 5);
        rb = fsmtest_release(b, 1, 4, 1, "alpha", 5);
        assert_memory_equal(&ra, &rb, sizeof ra);
        ra = fsmtest_release(a, 1, 5, 1, "alpha", 5);
        rb = fsmtest_release(b, 1, 5, 1, "alpha", 5);
        assert_memory_equal(&ra, &rb, sizeof ra);
        assert_int_equal(ra.count, 0);
        ra = fsmtest_expire(a, 2);
        rb = fsmtest_expire(b, 2);
        assert_memory_equal(&ra, &rb, sizeof ra);
        /* The retried ACQUIRE seq 9 of session 2 is gone with it. */
        assert_true(fsmtest_same_state(a->f, b->f));
        assert_int_equal(a->n_events - 0 > 0, 1);
        free(buf);
        fsmtest_close(a);
        fsmtest_close(b);
        free(a);
        free(b);
}

/* Every bad input must be refused and leave the target untouched. */
static void expect_refused(struct lockfsm *target, const void *buf, size_t len,
                           int code)
{
        size_t l1, l2;
        void *s1 = fsmtest_snapshot(target, &l1);
        void *s2;

        assert_int_equal(lockfsm_restore(target, buf, len), code);
        s2 = fsmtest_snapshot(target, &l2);
        assert_int_equal(l1, l2);
        assert_memory_equal(s1, s2, l1);
        free(s1);
        free(s2);
}

static void test_truncations_and_bit_flips_refused(void **state)
{
        struct fsmtest *src = malloc(sizeof *src);
        struct fsmtest *dst = malloc(sizeof *dst);
        uint8_t *buf;
        size_t len, i;
        int bit;

        (void)state;
        fsmtest_init(src, NULL, NULL);
        fsmtest_init(dst, NULL, NULL);
        build_rich(src);
        fsmtest_open(dst, 5); /* a target with state of its own */
        buf = fsmtest_snapshot(src->f, &len);
        for (i = 0; i < len; i++) {
                expect_refused(dst->f, buf, i, BATON_ECORRUPT);
        }
        for (i = 0; i < len; i++) {
                for (bit = 0; bit < 8; bit += 3) {
                        buf[i] ^= (uint8_t)(1u << bit);
                        expect_refused(dst->f, buf, len, BATON_ECORRUPT);
                        buf[i] ^= (uint8_t)(1u << bit);
                }
        }
        assert_int_equal(lockfsm_restore(dst->f, buf, len), 0);
        free(buf);
        fsmtest_close(src);
        fsmtest_close(dst);
        free(src);
        free(dst);
}

/* A fresh machine in `t` and its snapshot (of nothing). */
static uint8_t *empty_snapshot(struct fsmtest *t, size_t *len)
{
        fsmtest_init(t, NULL, NULL);
        return fsmtest_snapshot(t->f, len);
}

static void test_unknown_version_refused(void **state)
{
        struct fsmtest t;
        size_t len;
        uint8_t *buf = empty_snapshot(&t, &len);

        (void)state;
        buf[4] = SNAPSHOT_VERSION + 1;
        reseal(buf, len);
        expect_refused(t.f, buf, len, BATON_EVERSION);
        buf[4] = 0;
        reseal(buf, len);
        expect_refused(t.f, buf, len, BATON_EVERSION);
        buf[4] = SNAPSHOT_VERSION;
        buf[6] = 1; /* flags */
        reseal(buf, len);
        expect_refused(t.f, buf, len, BATON_ECORRUPT);
        free(buf);
        fsmtest_close(&t);
}

/* A lock count that the bytes left cannot hold is damage: refused before
 * the lock table is sized for it. */
static void test_lock_count_past_the_bytes_refused(void **state)
{
        struct fsmtest t;
        size_t len;
        uint8_t *buf = empty_snapshot(&t, &len);

        (void)state;
        /* Header (32), no tombstone, no session, no lock, checksum. */
        assert_int_equal(len, 32 + 4 + 4 + 4 + 8);
        memset(buf + 40, 0xff, 4);
        reseal(buf, len);
        expect_refused(t.f, buf, len, BATON_ECORRUPT);
        free(buf);
        fsmtest_close(&t);
}

/* A version 1 snapshot (no stamp: every id was its entry's index) still
 * loads, as the state a version 2 machine would have had. */
static void test_version_1_loads(void **state)
{
        struct fsmtest *a = malloc(sizeof *a);
        struct fsmtest *b = malloc(sizeof *b);
        uint8_t *v4, *v3, *v2, *v1;
        size_t len;

        (void)state;
        fsmtest_init(a, NULL, NULL);
        fsmtest_init(b, NULL, NULL);
        build_rich(a);
        v4 = fsmtest_snapshot(a->f, &len);
        len = as_version_6(v4, len); /* as version 4 for this state */
        v3 = malloc(len);
        len = as_version_3(v4, len, v3);
        free(v4);
        v2 = malloc(len);
        len = as_version_2(v3, len, v2);
        free(v3);
        /* Version 1 is version 2 without the stamp after last_index. */
        assert_memory_equal(v2 + 8, v2 + 16, 8);
        v1 = malloc(len - 8);
        memcpy(v1, v2, 16);
        memcpy(v1 + 16, v2 + 24, len - 24);
        v1[4] = 1;
        reseal(v1, len - 8);
        assert_int_equal(lockfsm_restore(b->f, v1, len - 8), 0);
        assert_null(lockfsm_check(b->f));
        assert_true(fsmtest_same_state(a->f, b->f));
        free(v1);
        free(v2);
        fsmtest_close(a);
        fsmtest_close(b);
        free(a);
        free(b);
}

/* `b`, fresh, restores the snapshot a stored version took after the log
 * that `a` replayed: the same state, at the same index, which keeps
 * every invariant. */
static void restore_after(struct fsmtest *a, struct fsmtest *b,
                          const uint8_t *snap, size_t len)
{
        fsmtest_init(b, NULL, NULL);
        assert_int_equal(lockfsm_restore(b->f, snap, len), 0);
        b->index = a->index;
        assert_int_equal(lockfsm_last_index(b->f), a->index);
        assert_null(lockfsm_check(b->f));
        assert_true(fsmtest_same_state(a->f, b->f));
}

/* A stored log (fsm_v3_fixture.h, fsm_v4_fixture.h) replayed by `a`,
 * fresh, each entry applied without error; then restore_after(). */
#define LOAD_FIXTURE(a, b, log, snap)                                          \
        do {                                                                   \
                fsmtest_init(a, NULL, NULL);                                   \
                for (size_t i_ = 0; i_ < sizeof log / sizeof log[0]; i_++) {   \
                        struct lockfsm_result r_ =                             \
                            fsmtest_apply_raw(a, log[i_].buf, log[i_].len);    \
                        assert_int_equal(a->last_rv, 0);                       \
                        assert_int_equal(r_.status, 0);                        \
                }                                                              \
                restore_after(a, b, snap, sizeof snap);                        \
        } while (0)

/* What version 3 wrote, a log and the snapshot taken after it
 * (fsm_v3_fixture.h, made by that version), reads as it did: replaying
 * the log and restoring the snapshot give one state, and the next entry
 * hands the lock its last entry left between holders to its queue's head
 * on both. */
static void test_version_3_log_and_snapshot(void **state)
{
        struct fsmtest *a = malloc(sizeof *a);
        struct fsmtest *b = malloc(sizeof *b);
        struct lockfsm_result r;

        (void)state;
        LOAD_FIXTURE(a, b, v3_log, v3_snapshot);
        assert_int_equal(lockfsm_deferred(b->f), 1);
        lockfsm_query(b->f, "alpha", 5, &r); /* A's twice, B and C queued */
        assert_int_equal(r.kind, PROTO_KIND_HOLDER);
        assert_int_equal(r.session, 1);
        assert_int_equal(r.token, 5);
        assert_int_equal(r.count, 2);
        assert_int_equal(r.waiters, 2);
        assert_int_equal(lockfsm_session_status(b->f, 4), BATON_EEXPIRED);
        assert_int_equal(lockfsm_session_status(b->f, 12), BATON_ECLOSED);
        assert_int_equal(lockfsm_session_hash(b->f, 1)[0], 0xa0);
        fsmtest_open(a, 0);
        fsmtest_open(b, 0);
        lockfsm_query(b->f, "delta", 5, &r);
        assert_int_equal(r.kind, PROTO_KIND_HOLDER);
        assert_int_equal(r.session, 3);
        assert_int_equal(r.token, 15);
        assert_true(fsmtest_same_state(a->f, b->f));
        fsmtest_close(a);
        fsmtest_close(b);
        free(a);
        free(b);
}

/* What version 4 wrote (fsm_v4_fixture.h, made by that version: read/write
 * locks, a batch), a log and the snapshot taken after it, reads as it did;
 * both go on to hand a lock to its waiting writer alike, and take a
 * semaphore, which version 4 did not know. */
static void test_version_4_log_and_snapshot(void **state)
{
        struct fsmtest *a = malloc(sizeof *a);
        struct fsmtest *b = malloc(sizeof *b);
        struct fsmtest *t[2] = {a, b};
        struct command sem = fsmtest_acquire_cmd(2, 3, 1, "pool", 0);
        struct lockfsm_result r;
        size_t i;

        (void)state;
        LOAD_FIXTURE(a, b, v4_log, v4_snapshot);
        lockfsm_query(b->f, "alpha", 5, &r); /* handed to B by the batch */
        assert_int_equal(r.session, 2);
        assert_int_equal(r.token, 13);
        lockfsm_query(b->f, "beta", 4, &r); /* D reads, A waits to write */
        assert_int_equal(r.session, 4);
        assert_int_equal(r.token, 8);
        assert_int_equal(r.waiters, 1);
        sem.mode = COMMAND_MODE_SEMAPHORE;
        sem.permits = 1;
        sem.limit = 2;
        for (i = 0; i < 2; i++) {
                r = fsmtest_release(t[i], 4, 5, 1, "beta", 8);
                assert_int_equal(r.kind, PROTO_KIND_RELEASED);
                assert_int_equal(fsmtest_apply(t[i], &sem).kind,
                                 PROTO_KIND_GRANTED);
                lockfsm_query(t[i]->f, "beta", 4, &r);
                assert_int_equal(r.session, 1);
                assert_int_equal(r.token, 15);
        }
        assert_true(fsmtest_same_state(a->f, b->f));
        fsmtest_close(a);
        fsmtest_close(b);
        free(a);
        free(b);
}

/* What version 6 wrote (fsm_v6_fixture.h, made by that version: read/write
 * locks, a semaphore, a lock-delay, a batch, a REVOKE), a log and the
 * snapshot taken after it, reads as it did; both go on alike to take a
 * multi-lock and have a grant revoked, which version 6 did not know. */
static void test_version_6_log_and_snapshot(void **state)
{
        struct fsmtest *a = malloc(sizeof *a);
        struct fsmtest *b = malloc(sizeof *b);
        struct fsmtest *t[2] = {a, b};
        struct command rv = {.type = COMMAND_REVOKE_LOCK,
                             .session = 3,
                             .token = 14,
                             .name = "delta",
                             .name_len = 5};
        struct lockfsm_result r;
        size_t i;

        (void)state;
        LOAD_FIXTURE(a, b, v6_log, v6_snapshot);
        lockfsm_query(b->f, "alpha", 5, &r); /* handed to B by the batch */
        assert_int_equal(r.session, 2);
        assert_int_equal(r.token, 14);
        lockfsm_query(b->f, "pool", 4, &r); /* B's 2 permits, then C's */
        assert_int_equal(r.session, 2);
        assert_int_equal(r.waiters, 0);
        assert_int_equal(lockfsm_session_status(b->f, 1), BATON_EEXPIRED);
        assert_int_equal(lockfsm_session_status(b->f, 4), BATON_EEXPIRED);
        for (i = 0; i < 2; i++) {
                /* beta is in the lock-delay D's expiry began. */
                assert_int_equal(
                    fsmtest_acquire(t[i], 2, 3, 1, "beta", 0).status,
                    BATON_EBUSY);
                r = fsmtest_multi(t[i], 2, 4, 3, "eps zeta/r", 0);
                assert_int_equal(r.kind, PROTO_KIND_GRANTED);
                r = fsmtest_apply(t[i], &rv);
                assert_int_equal(r.kind, PROTO_KIND_RELEASED);
                assert_int_equal(lockfsm_session_revoked(t[i]->f, 3), 1);
        }
        assert_true(fsmtest_same_state(a->f, b->f));
        fsmtest_close(a);
        fsmtest_close(b);
        free(a);
        free(b);
}

/* A session keeps its OPEN's owner hash, through a snapshot too; one from
 * a version 2 snapshot (or a version 1 OPEN) has an all-zero hash. */
static void test_owner_hash_kept(void **state)
{
        static const uint8_t zero[COMMAND_HASH_SIZE];
        struct fsmtest *a = malloc(sizeof *a);
        struct fsmtest *b = malloc(sizeof *b);
        struct fsmtest *c = malloc(sizeof *c);
        uint8_t hash[COMMAND_HASH_SIZE];
        struct command open = {
            .type = COMMAND_OPEN, .nonce = 9, .ttl_ms = 10000, .hash = hash};
        struct lockfsm_result r;
        uint64_t s, plain;
        uint8_t *buf, *v2;
        size_t len, i;

        (void)state;
        for (i = 0; i < sizeof hash; i++) {
                hash[i] = (uint8_t)(0xc0 + i);
        }
        fsmtest_init(a, NULL, NULL);
        fsmtest_init(b, NULL, NULL);
        fsmtest_init(c, NULL, NULL);
        r = fsmtest_apply(a, &open);
        assert_int_equal(r.kind, PROTO_KIND_OPENED);
        s = r.session;
        plain = fsmtest_open(a, 10);
        assert_memory_equal(lockfsm_session_hash(a->f, s), hash, sizeof hash);
        assert_memory_equal(lockfsm_session_hash(a->f, plain), zero,
                            sizeof zero);
        assert_null(lockfsm_session_hash(a->f, s + 100));
        buf = fsmtest_snapshot(a->f, &len);
        assert_int_equal(lockfsm_restore(b->f, buf, len), 0);
        assert_memory_equal(lockfsm_session_hash(b->f, s), hash, sizeof hash);
        assert_memory_equal(lockfsm_session_hash(b->f, plain), zero,
                            sizeof zero);
        free(buf);
        /* Version 2 has no hashes: everything else loads as it was. */
        fsmtest_close_session(a, s, 1);
        buf = fsmtest_snapshot(a->f, &len);
        len = as_version_6(buf, len); /* as version 3 for this state */
        v2 = malloc(len);
        len = as_version_2(buf, len, v2);
        assert_int_equal(lockfsm_restore(c->f, v2, len), 0);
        assert_memory_equal(lockfsm_session_hash(c->f, plain), zero,
                            sizeof zero);
        assert_true(fsmtest_same_state(a->f, c->f));
        free(v2);
        free(buf);
        fsmtest_close(a);
        fsmtest_close(b);
        fsmtest_close(c);
        free(a);
        free(b);
        free(c);
}

/*
 * Doctor each byte of a sealed snapshot in turn: restore must refuse it or
 * accept a consistent state whose own snapshot is exactly the input (so
 * nothing is silently repaired, dropped or misread).
 */
static void test_resealed_mutations_are_refused_or_canonical(void **state)
{
        struct fsmtest *src = malloc(sizeof *src);
        struct fsmtest *dst = malloc(sizeof *dst);
        static const uint8_t deltas[] = {1, 0x80, 0xff};
        unsigned accepted = 0, refused = 0, d;
        uint8_t *buf;
        size_t len, i;

        (void)state;
        fsmtest_init(src, NULL, NULL);
        build_every_kind(src);
        buf = fsmtest_snapshot(src->f, &len);
        for (i = 0; i + 8 < len; i++) {
                for (d = 0; d < sizeof deltas; d++) {
                        uint8_t old = buf[i];
                        size_t l2;
                        void *again;

                        buf[i] = (uint8_t)(old + deltas[d]);
                        reseal(buf, len);
                        fsmtest_init(dst, NULL, NULL);
                        if (lockfsm_restore(dst->f, buf, len) == 0) {
                                assert_null(lockfsm_check(dst->f));
                                again = fsmtest_snapshot(dst->f, &l2);
                                assert_int_equal(l2, len);
                                assert_memory_equal(again, buf, len);
                                free(again);
                                accepted++;
                        } else {
                                refused++;
                        }
                        fsmtest_close(dst);
                        buf[i] = old;
                        reseal(buf, len);
                }
        }
        /* Both outcomes occur: ids and tokens can change harmlessly, while
         * references and counts cannot. */
        assert_true(accepted > 0);
        assert_true(refused > 0);
        free(buf);
        fsmtest_close(src);
        free(src);
        free(dst);
}

static void test_crafted_inconsistencies_refused(void **state)
{
        struct fsmtest t;
        uint8_t *buf;
        size_t len, t0;
        uint64_t a;

        (void)state;
        fsmtest_init(&t, NULL, NULL);
        a = fsmtest_open(&t, 0);
        fsmtest_acquire(&t, a, 1, 1, "x", 0);
        buf = fsmtest_snapshot(t.f, &len);
        /* The layout ends: holder {session u64, owner u64, seq u64, token
         * u64, count u32, mode u8, time u32, value (here u8 0), hold clock
         * (u32 0, u64 0)}, u32 waiters, u64 checksum; `t` is where the
         * holder's time starts. */
        t0 = len - 8 - 4 - 12 - 1 - 4;
        buf[t0 - 37] ^= 0x40; /* holder of an unknown session */
        reseal(buf, len);
        expect_refused(t.f, buf, len, BATON_ECORRUPT);
        buf[t0 - 37] ^= 0x40;
        buf[t0 - 1] = 2; /* a mode that does not exist */
        reseal(buf, len);
        expect_refused(t.f, buf, len, BATON_ECORRUPT);
        buf[t0 - 1] = COMMAND_MODE_EXCLUSIVE;
        memset(&buf[t0 - 5], 0, 4); /* hold count 0 */
        reseal(buf, len);
        expect_refused(t.f, buf, len, BATON_ECORRUPT);
        memset(&buf[t0 - 5], 0, 4);
        buf[t0 - 5] = 1;
        buf[t0 + 5] = 0x10; /* a hold time whose clock dates from entry 0 */
        reseal(buf, len);
        expect_refused(t.f, buf, len, BATON_ECORRUPT);
        buf[t0 + 9] = 3; /* from entry 3, after the last one (2) */
        reseal(buf, len);
        expect_refused(t.f, buf, len, BATON_ECORRUPT);
        buf[t0 + 9] = 2; /* from its grant: a hold time of 16 ms */
        reseal(buf, len);
        assert_int_equal(lockfsm_restore(t.f, buf, len), 0);
        buf[t0 + 5] = 0;
        buf[t0 + 9] = 0;
        memset(&buf[t0 - 5], 0xff, 4); /* no room left to reenter */
        reseal(buf, len);
        assert_int_equal(lockfsm_restore(t.f, buf, len), 0);
        assert_int_equal(fsmtest_acquire(&t, a, 2, 1, "x", 0).status,
                         BATON_EOVERFLOW);
        free(buf);
        fsmtest_close(&t);
}

static void test_restore_keeps_event_callback(void **state)
{
        struct fsmtest *t = malloc(sizeof *t);
        struct fsmtest *u = malloc(sizeof *u);
        size_t len;
        void *buf;
        unsigned before;

        (void)state;
        fsmtest_init(t, NULL, NULL);
        fsmtest_init(u, NULL, NULL);
        build_rich(u);
        buf = fsmtest_snapshot(u->f, &len);
        assert_int_equal(lockfsm_restore(t->f, buf, len), 0);
        t->index = u->index;
        before = t->n_events;
        fsmtest_open(t, 0);
        assert_int_equal(t->n_events, before + 2); /* OPEN, RESULT */
        free(buf);
        fsmtest_close(t);
        fsmtest_close(u);
        free(t);
        free(u);
}

/* A node run with a lower max-sessions than the state it restores says
 * so, rather than calling the snapshot corrupt, and keeps its state. */
static void test_lower_session_limit_named(void **state)
{
        struct fsmtest *t = malloc(sizeof *t);
        struct fsmtest *u = malloc(sizeof *u);
        struct lockfsm_limits l;
        size_t len, before_len;
        void *buf, *before;

        (void)state;
        lockfsm_limits_default(&l);
        l.max_sessions = 2;
        fsmtest_init(t, &l, NULL);
        fsmtest_init(u, NULL, NULL);
        fsmtest_open(t, 0);
        fsmtest_open(u, 0);
        fsmtest_open(u, 0);
        fsmtest_open(u, 0);
        buf = fsmtest_snapshot(u->f, &len);
        before = fsmtest_snapshot(t->f, &before_len);
        assert_int_equal(lockfsm_restore(t->f, buf, len),
                         BATON_ETOOMANYSESSIONS);
        free(buf);
        buf = fsmtest_snapshot(t->f, &len);
        assert_int_equal(len, before_len);
        assert_memory_equal(buf, before, len);
        free(buf);
        free(before);
        fsmtest_close(t);
        fsmtest_close(u);
        free(t);
        free(u);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_empty_round_trip),
            cmocka_unit_test(test_restore_then_continue_in_lockstep),
            cmocka_unit_test(test_truncations_and_bit_flips_refused),
            cmocka_unit_test(test_unknown_version_refused),
            cmocka_unit_test(test_lock_count_past_the_bytes_refused),
            cmocka_unit_test(test_version_1_loads),
            cmocka_unit_test(test_owner_hash_kept),
            cmocka_unit_test(test_resealed_mutations_are_refused_or_canonical),
            cmocka_unit_test(test_crafted_inconsistencies_refused),
            cmocka_unit_test(test_version_3_log_and_snapshot),
            cmocka_unit_test(test_version_4_log_and_snapshot),
            cmocka_unit_test(test_version_6_log_and_snapshot),
            cmocka_unit_test(test_restore_keeps_event_callback),
            cmocka_unit_test(test_lower_session_limit_named),
        };
        return cmocka_run_group_tests_name("snapshot", tests, NULL, NULL);
}
