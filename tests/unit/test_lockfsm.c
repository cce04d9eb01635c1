/* Unit tests of the lock state machine: every outcome and every error path. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "../../include/baton.h"
#include "../../src/fsm/entry.h"
#include "lockfsmcase.h"

static void test_open_gives_index_as_id(void **state)
{
        struct fsmtest *t = *state;
        uint64_t a = fsmtest_open(t, 11);
        uint64_t b = fsmtest_open(t, 12);

        assert_int_equal(a, 1);
        assert_int_equal(b, 2);
        assert_int_equal(lockfsm_session_ttl(t->f, a), 10000);
        assert_int_equal(lockfsm_session_ttl(t->f, 99), 0);
        assert_non_null(fsmtest_find(t, LOCKFSM_EV_OPEN, 1));
        lockfsmcase_result_last(t, 0);
}

static void test_open_retry_with_nonce_returns_same_session(void **state)
{
        struct fsmtest *t = *state;
        uint64_t a = fsmtest_open(t, 77);
        struct command c = {.type = COMMAND_OPEN, .nonce = 77, .ttl_ms = 500};
        struct lockfsm_result r = fsmtest_apply(t, &c);
        struct lockfsm_stats st;

        assert_int_equal(r.kind, PROTO_KIND_OPENED);
        assert_int_equal(r.session, a);
        assert_true(r.duplicate);
        lockfsm_stats(t->f, &st);
        assert_int_equal(st.sessions, 1);
        /* Nonce 0 means "no retry detection": each OPEN is a new session. */
        c.nonce = 0;
        assert_int_not_equal(fsmtest_apply(t, &c).session,
                             fsmtest_apply(t, &c).session);
}

static void test_open_ttl_out_of_range(void **state)
{
        struct fsmtest *t = *state;
        struct command c = {.type = COMMAND_OPEN, .ttl_ms = 99};

        assert_int_equal(fsmtest_apply(t, &c).status, BATON_ETTL);
        c.ttl_ms = 60001;
        assert_int_equal(fsmtest_apply(t, &c).status, BATON_ETTL);
        c.ttl_ms = 100;
        assert_int_equal(fsmtest_apply(t, &c).status, 0);
}

static void test_open_too_many_sessions(void **state)
{
        struct fsmtest *t = *state;
        struct command c = {.type = COMMAND_OPEN, .ttl_ms = 1000};
        int i;

        for (i = 0; i < 4; i++) {
                fsmtest_open(t, 0);
        }
        assert_int_equal(fsmtest_apply(t, &c).status, BATON_ETOOMANYSESSIONS);
        lockfsmcase_result_last(t, BATON_ETOOMANYSESSIONS);
        /* Ending one makes room again. */
        fsmtest_expire(t, 1);
        assert_int_equal(fsmtest_apply(t, &c).status, 0);
}

static void test_acquire_free_lock_grants_with_index(void **state)
{
        struct fsmtest *t = *state;
        uint64_t s = fsmtest_open(t, 1);
        struct lockfsm_result r = fsmtest_acquire(t, s, 1, 7, "a", 0);
        const struct fsmtest_event *g = fsmtest_find(t, LOCKFSM_EV_GRANT, 0);

        assert_int_equal(r.status, 0);
        assert_int_equal(r.kind, PROTO_KIND_GRANTED);
        assert_int_equal(r.token, 2);
        assert_int_equal(r.session, s);
        assert_int_equal(r.owner, 7);
        assert_int_equal(r.count, 1);
        assert_non_null(g);
        assert_int_equal(g->token, 2);
        assert_int_equal(g->seq, 1);
        assert_string_equal(g->name, "a");
        lockfsmcase_result_last(t, 0);
}

static void test_reentrant_acquire_and_release(void **state)
{
        struct fsmtest *t = *state;
        uint64_t s = fsmtest_open(t, 1);
        uint64_t tok = fsmtest_acquire(t, s, 1, 7, "a", 0).token;
        struct lockfsm_result r = fsmtest_acquire(t, s, 2, 7, "a", 0);

        assert_int_equal(r.kind, PROTO_KIND_REENTERED);
        assert_int_equal(r.token, tok);
        assert_int_equal(r.count, 2);
        r = fsmtest_release(t, s, 3, 7, "a", tok);
        assert_int_equal(r.kind, PROTO_KIND_RELEASED);
        assert_int_equal(r.count, 1);
        assert_int_equal(fsmtest_count(t, LOCKFSM_EV_RELEASE), 0);
        assert_int_equal(fsmtest_query(t, "a").kind, PROTO_KIND_HOLDER);
        r = fsmtest_release(t, s, 4, 7, "a", tok);
        assert_int_equal(r.count, 0);
        assert_int_equal(fsmtest_count(t, LOCKFSM_EV_RELEASE), 1);
        assert_int_equal(fsmtest_query(t, "a").kind, PROTO_KIND_FREE);
}

static void test_try_lock_busy_names_holder(void **state)
{
        struct fsmtest *t = *state;
        uint64_t a = fsmtest_open(t, 1);
        uint64_t b = fsmtest_open(t, 2);
        uint64_t tok = fsmtest_acquire(t, a, 1, 7, "a", 0).token;
        struct lockfsm_result r = fsmtest_acquire(t, b, 1, 8, "a", 0);

        assert_int_equal(r.status, BATON_EBUSY);
        assert_int_equal(r.token, tok);
        assert_int_equal(r.session, a);
        assert_int_equal(r.owner, 7);
        /* Another owner tag of the same session is another owner. */
        r = fsmtest_acquire(t, a, 2, 9, "a", 0);
        assert_int_equal(r.status, BATON_EBUSY);
}

static void test_waiter_granted_on_release_fifo(void **state)
{
        struct fsmtest *t = *state;
        uint64_t a = fsmtest_open(t, 1);
        uint64_t b = fsmtest_open(t, 2);
        uint64_t c = fsmtest_open(t, 3);
        uint64_t tok = fsmtest_acquire(t, a, 1, 1, "x", 0).token;
        struct lockfsm_result r = fsmtest_acquire(t, b, 1, 1, "x", 1000);
        const struct fsmtest_event *g;

        assert_int_equal(r.kind, PROTO_KIND_QUEUED);
        assert_int_equal(r.count, 1);
        r = fsmtest_acquire(t, c, 1, 1, "x", COMMAND_WAIT_FOREVER);
        assert_int_equal(r.count, 2);
        assert_int_equal(fsmtest_query(t, "x").waiters, 2);
        r = fsmtest_release(t, a, 2, 1, "x", tok);
        assert_int_equal(r.kind, PROTO_KIND_RELEASED);
        g = fsmtest_find(t, LOCKFSM_EV_GRANT, 1);
        assert_non_null(g);
        assert_int_equal(g->session, b);
        assert_int_equal(g->seq, 1);
        assert_int_equal(g->token, t->index);
        assert_true(g->token > tok);
        r = fsmtest_query(t, "x");
        assert_int_equal(r.session, b);
        assert_int_equal(r.waiters, 1);
        /* The waiter's remembered outcome followed it: a retry says so. */
        r = fsmtest_acquire(t, b, 1, 1, "x", 1000);
        assert_true(r.duplicate);
        assert_int_equal(r.kind, PROTO_KIND_GRANTED);
        assert_int_equal(r.token, g->token);
}

static void test_release_errors_change_nothing(void **state)
{
        struct fsmtest *t = *state;
        uint64_t a = fsmtest_open(t, 1);
        uint64_t b = fsmtest_open(t, 2);
        uint64_t tok = fsmtest_acquire(t, a, 1, 1, "x", 0).token;
        size_t before_len, after_len;
        void *before, *after;

        assert_int_equal(fsmtest_release(t, a, 2, 1, "x", tok + 1).status,
                         BATON_ESTALE);
        assert_int_equal(fsmtest_release(t, a, 3, 2, "x", tok).status,
                         BATON_ENOTHOLDER);
        assert_int_equal(fsmtest_release(t, b, 1, 1, "x", tok).status,
                         BATON_ENOTHOLDER);
        assert_int_equal(fsmtest_release(t, b, 2, 1, "nope", tok).status,
                         BATON_ENOTHOLDER);
        before = fsmtest_snapshot(t->f, &before_len);
        assert_int_equal(fsmtest_release(t, a, 4, 1, "x", 1).status,
                         BATON_ESTALE);
        after = fsmtest_snapshot(t->f, &after_len);
        /* Only the exactly-once memory and the index moved. */
        assert_int_equal(fsmtest_query(t, "x").token, tok);
        assert_int_equal(fsmtest_query(t, "x").session, a);
        free(before);
        free(after);
}

static void test_expire_frees_locks_and_grants_waiter(void **state)
{
        struct fsmtest *t = *state;
        uint64_t a = fsmtest_open(t, 1);
        uint64_t b = fsmtest_open(t, 2);
        uint64_t tok = fsmtest_acquire(t, a, 1, 1, "x", 0).token;
        struct lockfsm_result r;

        uint64_t at;

        fsmtest_acquire(t, b, 1, 1, "x", 5000);
        r = fsmtest_expire(t, a);
        at = t->index;
        assert_int_equal(r.kind, PROTO_KIND_EXPIRED);
        assert_int_equal(r.session, a);
        r = fsmtest_query(t, "x");
        assert_int_equal(r.session, b);
        assert_int_equal(r.token, at);
        assert_true(r.token > tok);
        assert_non_null(fsmtest_find(t, LOCKFSM_EV_END, 0));
        /* The expired session is gone for good. */
        assert_int_equal(fsmtest_acquire(t, a, 2, 1, "y", 0).status,
                         BATON_EEXPIRED);
        assert_int_equal(fsmtest_expire(t, a).status, BATON_EEXPIRED);
        assert_int_equal(fsmtest_close_session(t, a, 3).status, BATON_EEXPIRED);
}

/* An operator's REVOKE ends a session as EXPIRE does, its END saying who
 * asked; a REVOKE of an ended session is answered as an EXPIRE is. */
static void test_revoke_ends_a_session(void **state)
{
        struct fsmtest *t = *state;
        uint64_t a = fsmtest_open(t, 1);
        uint64_t b = fsmtest_open(t, 2);
        uint64_t tok = fsmtest_acquire(t, a, 1, 1, "x", 0).token;
        struct command k = {.type = COMMAND_REVOKE,
                            .session = a,
                            .name = "ops-admin",
                            .name_len = 9};
        const struct fsmtest_event *end;
        struct lockfsm_result r;

        fsmtest_acquire(t, b, 1, 1, "x", 5000);
        r = fsmtest_apply(t, &k);
        assert_int_equal(r.kind, PROTO_KIND_EXPIRED);
        assert_int_equal(r.session, a);
        r = fsmtest_query(t, "x");
        assert_int_equal(r.session, b);
        assert_true(r.token > tok);
        end = fsmtest_find(t, LOCKFSM_EV_END, 0);
        assert_non_null(end);
        assert_int_equal(end->cause, COMMAND_REVOKE);
        assert_string_equal(end->by, "ops-admin");
        assert_int_equal(lockfsm_session_status(t->f, a), BATON_EEXPIRED);
        assert_int_equal(fsmtest_apply(t, &k).status, BATON_EEXPIRED);
}

/* The creation stamp of lock `name` as its BLOCK event gave it (0: none). */
static uint64_t blocked_stamp(const struct fsmtest *t, const char *name)
{
        const struct fsmtest_event *e;

        for (unsigned i = 0; (e = fsmtest_find(t, LOCKFSM_EV_BLOCK, i)); i++) {
                if (strcmp(e->name, name) == 0) {
                        return e->seq;
                }
        }
        return 0;
}

/* An EXPIRE with a lock-delay leaves the holder's lock to no one (a try is
 * busy, a waiter waits) until the UNBLOCK of that lock's instance, which
 * hands it on with its own index; a release is not a loss. A snapshot
 * keeps the delay. */
static void test_lock_delay(void **state)
{
        struct fsmtest *t = *state;
        struct command un = {
            .type = COMMAND_UNBLOCK, .name = "x", .name_len = 1};
        struct command expire = {.type = COMMAND_EXPIRE, .delay_ms = 1000};
        struct fsmtest u;
        uint64_t a, b, c, stamp;
        struct lockfsm_result r;
        size_t len;
        void *buf;

        a = fsmtest_open(t, 1);
        b = fsmtest_open(t, 2);
        c = fsmtest_open(t, 3);
        fsmtest_acquire(t, a, 1, 1, "x", 0);
        fsmtest_acquire(t, b, 1, 1, "x", COMMAND_WAIT_FOREVER);
        expire.session = a;
        fsmtest_apply(t, &expire);
        stamp = blocked_stamp(t, "x");
        assert_true(stamp > 0);
        assert_int_equal(fsmtest_granted(t, b, 1), 0);
        r = fsmtest_query(t, "x");
        assert_int_equal(r.kind, PROTO_KIND_FREE);
        assert_int_equal(r.waiters, 1);
        assert_int_equal(fsmtest_acquire(t, c, 1, 1, "x", 0).status,
                         BATON_EBUSY);
        r = fsmtest_query(t, "x");
        assert_int_equal(r.waiters, 1); /* the try did not queue */
        /* The delay survives a snapshot. */
        fsmtest_init(&u, NULL, NULL);
        buf = fsmtest_snapshot(t->f, &len);
        assert_int_equal(lockfsm_restore(u.f, buf, len), 0);
        assert_true(fsmtest_same_state(t->f, u.f));
        free(buf);
        fsmtest_close(&u);
        un.target = stamp + 1; /* another instance's */
        assert_int_equal(fsmtest_apply(t, &un).status, BATON_ENOTFOUND);
        un.target = stamp;
        r = fsmtest_apply(t, &un);
        assert_int_equal(r.kind, PROTO_KIND_FREE);
        assert_int_equal(fsmtest_granted(t, b, 1), t->index);
        assert_int_equal(fsmtest_apply(t, &un).status, BATON_ENOTFOUND);
        /* A release hands it on at once. */
        fsmtest_acquire(t, c, 2, 1, "x", COMMAND_WAIT_FOREVER);
        fsmtest_release(t, b, 2, 1, "x", fsmtest_granted(t, b, 1));
        assert_int_equal(fsmtest_granted(t, c, 2), t->index);
        /* A lock in its delay with no one in it: a try is busy, and does
         * not wait for the delay's end. */
        fsmtest_acquire(t, b, 3, 1, "y", 0);
        expire.session = b;
        fsmtest_apply(t, &expire);
        assert_int_equal(fsmtest_acquire(t, c, 3, 1, "y", 0).status,
                         BATON_EBUSY);
        r = fsmtest_query(t, "y");
        assert_int_equal(r.kind, PROTO_KIND_FREE);
        assert_int_equal(r.waiters, 0);
}

/* A session's own lock-delay, asked for by its OPEN: an EXPIRE or REVOKE
 * blocks its locks for the longer of it and the entry's delay; a CLOSE
 * does not; an OPEN above max_lock_delay_ms is refused. */
static void test_session_lock_delay(void **state)
{
        struct fsmtest *t = *state;
        struct command open = {.type = COMMAND_OPEN, .ttl_ms = 1000};
        struct command expire = {.type = COMMAND_EXPIRE};
        struct lockfsm_limits lim;
        const struct fsmtest_event *e;
        uint64_t a;

        lockfsm_limits_default(&lim);
        open.nonce = 11;
        open.delay_ms = lim.max_lock_delay_ms + 1;
        assert_int_equal(fsmtest_apply(t, &open).status, BATON_EDELAY);
        open.delay_ms = 700;
        a = fsmtest_apply(t, &open).session;
        fsmtest_acquire(t, a, 1, 1, "x", 0);
        fsmtest_acquire(t, a, 2, 1, "s", 0);
        expire.session = a;
        fsmtest_apply(t, &expire); /* the entry carries none */
        e = fsmtest_find(t, LOCKFSM_EV_BLOCK, 0);
        assert_non_null(e);
        assert_string_equal(e->name, "x");
        assert_int_equal(e->wait_ms, 700);
        assert_int_equal(fsmtest_count(t, LOCKFSM_EV_BLOCK), 2);
        /* The entry's, when longer. */
        open.nonce = 12;
        a = fsmtest_apply(t, &open).session;
        fsmtest_acquire(t, a, 1, 1, "y", 0);
        expire.session = a;
        expire.delay_ms = 900;
        fsmtest_apply(t, &expire);
        e = fsmtest_find(t, LOCKFSM_EV_BLOCK, 2);
        assert_string_equal(e->name, "y");
        assert_int_equal(e->wait_ms, 900);
        /* A close is not a loss. */
        open.nonce = 13;
        a = fsmtest_apply(t, &open).session;
        fsmtest_acquire(t, a, 1, 1, "z", 0);
        fsmtest_close_session(t, a, 2);
        assert_int_equal(fsmtest_count(t, LOCKFSM_EV_BLOCK), 3);
        assert_int_equal(fsmtest_query(t, "z").waiters, 0);
}

/* REVOKE_LOCK takes one grant away from a session that lives on: the
 * lock goes to its queue with a higher token, the session keeps its other
 * locks and counts the revoke, the lock-delay applies, and a retry (or a
 * stale token) takes nothing. */
static void test_revoke_lock(void **state)
{
        struct fsmtest *t = *state;
        struct command rv = {.type = COMMAND_REVOKE_LOCK,
                             .name = "x",
                             .name_len = 1,
                             .address = "op",
                             .address_len = 2};
        uint64_t a = fsmtest_open(t, 1), b = fsmtest_open(t, 2);
        uint64_t tx = fsmtest_acquire(t, a, 1, 1, "x", 0).token;
        uint64_t ty = fsmtest_acquire(t, a, 2, 1, "y", 0).token;
        const struct fsmtest_event *e;
        struct lockfsm_result r;

        fsmtest_acquire(t, b, 1, 1, "x", COMMAND_WAIT_FOREVER);
        rv.session = a;
        rv.token = tx + 1;
        assert_int_equal(fsmtest_apply(t, &rv).status, BATON_ENOTHOLDER);
        rv.token = tx;
        r = fsmtest_apply(t, &rv);
        assert_int_equal(r.status, 0);
        assert_int_equal(r.kind, PROTO_KIND_RELEASED);
        assert_int_equal(r.token, tx);
        assert_int_equal(fsmtest_granted(t, b, 1), t->index);
        assert_int_equal(lockfsm_session_status(t->f, a), 0);
        assert_int_equal(lockfsm_session_revoked(t->f, a), 1);
        assert_int_equal(lockfsm_session_revoked(t->f, b), 0);
        assert_int_equal(fsmtest_query(t, "y").token, ty);
        e = fsmtest_find(t, LOCKFSM_EV_RELEASE, 0);
        assert_non_null(e);
        assert_int_equal(e->cause, COMMAND_REVOKE_LOCK);
        assert_string_equal(e->by, "op");
        assert_int_equal(fsmtest_apply(t, &rv).status, BATON_ENOTHOLDER);
        assert_int_equal(fsmtest_release(t, a, 3, 1, "x", tx).status,
                         BATON_ENOTHOLDER);
        /* With a lock-delay: the lock waits it out. */
        rv.name = "y";
        rv.token = ty;
        rv.delay_ms = 500;
        fsmtest_apply(t, &rv);
        assert_int_equal(fsmtest_count(t, LOCKFSM_EV_BLOCK), 1);
        assert_int_equal(fsmtest_acquire(t, b, 2, 1, "y", 0).status,
                         BATON_EBUSY);
        assert_int_equal(lockfsm_session_revoked(t->f, a), 2);
}

static void test_expired_waiter_is_skipped(void **state)
{
        struct fsmtest *t = *state;
        uint64_t a = fsmtest_open(t, 1);
        uint64_t b = fsmtest_open(t, 2);
        uint64_t c = fsmtest_open(t, 3);
        uint64_t tok = fsmtest_acquire(t, a, 1, 1, "x", 0).token;
        const struct fsmtest_event *u;

        fsmtest_acquire(t, b, 1, 1, "x", 5000);
        fsmtest_acquire(t, c, 1, 1, "x", 5000);
        fsmtest_expire(t, b);
        u = fsmtest_find(t, LOCKFSM_EV_UNQUEUE, 0);
        assert_non_null(u);
        assert_int_equal(u->session, b);
        assert_int_equal(u->status, BATON_EEXPIRED);
        fsmtest_release(t, a, 2, 1, "x", tok);
        assert_int_equal(fsmtest_query(t, "x").session, c);
        assert_int_equal(fsmtest_count(t, LOCKFSM_EV_GRANT), 2);
}

static void test_close_hands_over_every_lock_at_one_index(void **state)
{
        struct fsmtest *t = *state;
        uint64_t a = fsmtest_open(t, 1);
        uint64_t b = fsmtest_open(t, 2);
        uint64_t c = fsmtest_open(t, 3);
        struct lockfsm_result r;
        uint64_t at;

        fsmtest_acquire(t, a, 1, 1, "x", 0);
        fsmtest_acquire(t, a, 2, 1, "y", 0);
        fsmtest_acquire(t, b, 1, 1, "x", 5000);
        fsmtest_acquire(t, c, 1, 1, "y", 5000);
        r = fsmtest_close_session(t, a, 3);
        at = t->index;
        assert_int_equal(r.kind, PROTO_KIND_CLOSED);
        r = fsmtest_query(t, "x");
        assert_int_equal(r.session, b);
        assert_int_equal(r.token, at);
        r = fsmtest_query(t, "y");
        assert_int_equal(r.session, c);
        assert_int_equal(r.token, at);
        /* A retried CLOSE succeeds again; anything else is refused. */
        r = fsmtest_close_session(t, a, 3);
        assert_int_equal(r.kind, PROTO_KIND_CLOSED);
        assert_true(r.duplicate);
        assert_int_equal(fsmtest_acquire(t, a, 4, 1, "z", 0).status,
                         BATON_ECLOSED);
        assert_int_equal(fsmtest_expire(t, a).status, BATON_ECLOSED);
}

static void test_close_never_hands_a_lock_to_itself(void **state)
{
        struct fsmtest *t = *state;
        uint64_t a = fsmtest_open(t, 1);
        struct lockfsm_stats st;

        fsmtest_acquire(t, a, 1, 1, "x", 0);
        /* Another owner tag of the same session waits behind it. */
        assert_int_equal(fsmtest_acquire(t, a, 2, 2, "x", 5000).kind,
                         PROTO_KIND_QUEUED);
        fsmtest_close_session(t, a, 3);
        assert_int_equal(fsmtest_query(t, "x").kind, PROTO_KIND_FREE);
        lockfsm_stats(t->f, &st);
        assert_int_equal(st.locks, 0);
        assert_int_equal(st.waiters, 0);
        assert_int_equal(fsmtest_count(t, LOCKFSM_EV_GRANT), 1);
}

static void test_unknown_session(void **state)
{
        struct fsmtest *t = *state;

        assert_int_equal(fsmtest_acquire(t, 42, 1, 1, "x", 0).status,
                         BATON_ENOSESSION);
        assert_int_equal(fsmtest_close_session(t, 42, 1).status,
                         BATON_ENOSESSION);
        assert_int_equal(fsmtest_expire(t, 42).status, BATON_ENOSESSION);
        assert_int_equal(fsmtest_timeout(t, 42, "x", 1).status,
                         BATON_ENOSESSION);
        lockfsmcase_result_last(t, BATON_ENOSESSION);
}

static void test_tombstones_are_bounded(void **state)
{
        struct fsmtest *t = *state;
        uint64_t first = fsmtest_open(t, 0);
        int i;

        fsmtest_expire(t, first);
        assert_int_equal(fsmtest_expire(t, first).status, BATON_EEXPIRED);
        /* max_tombstones = 3: three more endings push the first out. */
        for (i = 0; i < 3; i++) {
                fsmtest_expire(t, fsmtest_open(t, 0));
        }
        assert_int_equal(fsmtest_expire(t, first).status, BATON_ENOSESSION);
}

static void test_duplicate_release_never_releases_newer_grant(void **state)
{
        struct fsmtest *t = *state;
        uint64_t a = fsmtest_open(t, 1);
        uint64_t t1 = fsmtest_acquire(t, a, 1, 1, "x", 0).token;
        struct lockfsm_result r = fsmtest_release(t, a, 2, 1, "x", t1);
        uint64_t t2;
        struct command c;

        assert_int_equal(r.kind, PROTO_KIND_RELEASED);
        /* The RELEASE's reply is lost, so the client acquires again while
         * still owing seq 2 an answer (ack stays 2), then retries seq 2:
         * the retry must not touch the new grant (etcd #22082). */
        memset(&c, 0, sizeof c);
        c.type = COMMAND_ACQUIRE;
        c.session = a;
        c.seq = 3;
        c.ack = 2;
        c.owner = 1;
        c.name = "x";
        c.name_len = 1;
        t2 = fsmtest_apply(t, &c).token;
        assert_true(t2 > t1);
        memset(&c, 0, sizeof c);
        c.type = COMMAND_RELEASE;
        c.session = a;
        c.seq = 2;
        c.ack = 2;
        c.owner = 1;
        c.token = t1;
        c.name = "x";
        c.name_len = 1;
        r = fsmtest_apply(t, &c);
        assert_true(r.duplicate);
        assert_int_equal(r.kind, PROTO_KIND_RELEASED);
        assert_int_equal(r.token, t1);
        assert_int_equal(fsmtest_query(t, "x").token, t2);
}

static void test_duplicate_acquire_does_not_queue_twice(void **state)
{
        struct fsmtest *t = *state;
        uint64_t a = fsmtest_open(t, 1);
        uint64_t b = fsmtest_open(t, 2);
        struct lockfsm_result r;

        fsmtest_acquire(t, a, 1, 1, "x", 0);
        r = fsmtest_acquire(t, b, 1, 1, "x", 5000);
        assert_int_equal(r.kind, PROTO_KIND_QUEUED);
        r = fsmtest_acquire(t, b, 1, 1, "x", 5000);
        assert_true(r.duplicate);
        assert_int_equal(r.kind, PROTO_KIND_QUEUED);
        assert_int_equal(fsmtest_query(t, "x").waiters, 1);
        assert_int_equal(fsmtest_count(t, LOCKFSM_EV_QUEUE), 1);
}

static void test_sequence_errors(void **state)
{
        struct fsmtest *t = *state;
        uint64_t a = fsmtest_open(t, 1);
        struct command c;

        assert_int_equal(fsmtest_acquire(t, a, 0, 1, "x", 0).status,
                         BATON_EINVAL);
        memset(&c, 0, sizeof c);
        c.type = COMMAND_ACQUIRE;
        c.session = a;
        c.seq = 3;
        c.ack = 4; /* acknowledging its own answer is a client bug */
        c.name = "x";
        c.name_len = 1;
        assert_int_equal(fsmtest_apply(t, &c).status, BATON_EINVAL);
        /* Raise the floor to 5, then come back below it. */
        assert_int_equal(fsmtest_acquire(t, a, 5, 1, "x", 0).status, 0);
        assert_int_equal(fsmtest_acquire(t, a, 4, 1, "y", 0).status,
                         BATON_ESEQ);
        assert_int_equal(fsmtest_query(t, "y").kind, PROTO_KIND_FREE);
}

static void test_inflight_limit(void **state)
{
        struct fsmtest *t = *state;
        uint64_t a = fsmtest_open(t, 1);
        uint64_t b = fsmtest_open(t, 2);
        struct command c;
        uint64_t seq;

        memset(&c, 0, sizeof c);
        c.type = COMMAND_ACQUIRE;
        c.session = a;
        c.owner = 1;
        c.name = "x";
        c.name_len = 1;
        c.ack = 1; /* nothing ever acknowledged */
        for (seq = 1; seq <= 4; seq++) {
                c.seq = seq;
                assert_int_equal(fsmtest_apply(t, &c).status, seq == 1 ? 0 : 0);
        }
        c.seq = 5;
        assert_int_equal(fsmtest_apply(t, &c).status, BATON_EINFLIGHT);
        /* CLOSE still works with a full memory. */
        assert_int_equal(fsmtest_close_session(t, a, 6).kind,
                         PROTO_KIND_CLOSED);
        (void)b;
}

static void test_ack_frees_remembered_outcomes(void **state)
{
        struct fsmtest *t = *state;
        uint64_t a = fsmtest_open(t, 1);
        uint64_t seq;

        /* fsmtest acks every earlier seq, so the memory never fills. */
        for (seq = 1; seq <= 20; seq++) {
                assert_int_equal(fsmtest_acquire(t, a, seq, 1, "x", 0).status,
                                 0);
        }
        assert_int_equal(fsmtest_query(t, "x").count, 20);
}

static void test_waiting_twice_is_refused(void **state)
{
        struct fsmtest *t = *state;
        uint64_t a = fsmtest_open(t, 1);
        uint64_t b = fsmtest_open(t, 2);

        fsmtest_acquire(t, a, 1, 1, "x", 0);
        fsmtest_acquire(t, b, 1, 1, "x", 5000);
        assert_int_equal(fsmtest_acquire(t, b, 2, 1, "x", 5000).status,
                         BATON_EWAITING);
        assert_int_equal(fsmtest_acquire(t, b, 3, 1, "x", 0).status,
                         BATON_EWAITING);
}

static void test_locks_per_session_limit(void **state)
{
        struct fsmtest *t = *state;
        uint64_t a = fsmtest_open(t, 1);
        uint64_t b = fsmtest_open(t, 2);

        fsmtest_acquire(t, b, 1, 1, "w", 0);
        fsmtest_acquire(t, a, 1, 1, "x", 0);
        fsmtest_acquire(t, a, 2, 1, "y", 0);
        /* Waits count too. */
        assert_int_equal(fsmtest_acquire(t, a, 3, 1, "w", 5000).kind,
                         PROTO_KIND_QUEUED);
        assert_int_equal(fsmtest_acquire(t, a, 4, 1, "z", 0).status,
                         BATON_ETOOMANYLOCKS);
        assert_int_equal(fsmtest_acquire(t, a, 5, 2, "x", 5000).status,
                         BATON_ETOOMANYLOCKS);
        /* Reentry needs no new slot. */
        assert_int_equal(fsmtest_acquire(t, a, 6, 1, "x", 0).kind,
                         PROTO_KIND_REENTERED);
}

static void test_waiters_per_lock_limit(void **state)
{
        struct fsmtest *t = *state;
        uint64_t a = fsmtest_open(t, 1);
        uint64_t b = fsmtest_open(t, 2);

        fsmtest_acquire(t, a, 1, 1, "x", 0);
        fsmtest_acquire(t, b, 1, 1, "x", 5000);
        fsmtest_acquire(t, b, 2, 2, "x", 5000);
        assert_int_equal(fsmtest_acquire(t, b, 3, 3, "x", 5000).status,
                         BATON_ETOOMANYWAITERS);
        /* A try-lock still answers BUSY, not a limit. */
        assert_int_equal(fsmtest_acquire(t, b, 4, 3, "x", 0).status,
                         BATON_EBUSY);
}

static void test_unknown_mode_unsupported(void **state)
{
        struct fsmtest *t = *state;
        uint64_t a = fsmtest_open(t, 1);
        struct command c;

        memset(&c, 0, sizeof c);
        c.type = COMMAND_ACQUIRE;
        c.session = a;
        c.seq = 1;
        c.ack = 1;
        c.mode = COMMAND_MODE_SHARED + 1;
        c.name = "x";
        c.name_len = 1;
        assert_int_equal(fsmtest_apply(t, &c).status, BATON_EUNSUPPORTED);
        assert_int_equal(fsmtest_query(t, "x").kind, PROTO_KIND_FREE);
}

static void test_cancel(void **state)
{
        struct fsmtest *t = *state;
        uint64_t a = fsmtest_open(t, 1);
        uint64_t b = fsmtest_open(t, 2);
        uint64_t tok = fsmtest_acquire(t, a, 1, 1, "x", 0).token;
        struct lockfsm_result r;
        const struct fsmtest_event *u;

        fsmtest_acquire(t, b, 1, 5, "x", 5000);
        assert_int_equal(fsmtest_cancel(t, b, 2, "x", 9).status,
                         BATON_ENOTWAITING);
        assert_int_equal(fsmtest_cancel(t, b, 3, "y", 1).status,
                         BATON_ENOTWAITING);
        r = fsmtest_cancel(t, b, 4, "x", 1);
        assert_int_equal(r.kind, PROTO_KIND_CANCELLED);
        assert_int_equal(r.owner, 5);
        u = fsmtest_find(t, LOCKFSM_EV_UNQUEUE, 0);
        assert_int_equal(u->status, BATON_ECANCELLED);
        assert_int_equal(u->seq, 1);
        assert_int_equal(fsmtest_query(t, "x").waiters, 0);
        /* Release now frees the lock: nobody is waiting. */
        fsmtest_release(t, a, 2, 1, "x", tok);
        assert_int_equal(fsmtest_query(t, "x").kind, PROTO_KIND_FREE);
        /* Cancelling a waiter that was already granted does nothing. */
        tok = fsmtest_acquire(t, a, 3, 1, "x", 0).token;
        fsmtest_acquire(t, b, 5, 5, "x", 5000);
        fsmtest_release(t, a, 4, 1, "x", tok);
        assert_int_equal(fsmtest_cancel(t, b, 6, "x", 5).status,
                         BATON_ENOTWAITING);
        assert_int_equal(fsmtest_query(t, "x").session, b);
}

static void test_cancel_rewrites_remembered_acquire(void **state)
{
        struct fsmtest *t = *state;
        uint64_t a = fsmtest_open(t, 1);
        uint64_t b = fsmtest_open(t, 2);
        struct command c;
        struct lockfsm_result r;

        fsmtest_acquire(t, a, 1, 1, "x", 0);
        fsmtest_acquire(t, b, 1, 1, "x", 5000);
        /* ack stays at 1, so seq 1's outcome is still remembered. */
        memset(&c, 0, sizeof c);
        c.type = COMMAND_CANCEL;
        c.session = b;
        c.seq = 2;
        c.ack = 1;
        c.target = 1;
        c.name = "x";
        c.name_len = 1;
        assert_int_equal(fsmtest_apply(t, &c).kind, PROTO_KIND_CANCELLED);
        r = fsmtest_acquire(t, b, 1, 1, "x", 5000);
        assert_true(r.duplicate);
        assert_int_equal(r.status, BATON_ECANCELLED);
}

static void test_timeout(void **state)
{
        struct fsmtest *t = *state;
        uint64_t a = fsmtest_open(t, 1);
        uint64_t b = fsmtest_open(t, 2);
        uint64_t tok = fsmtest_acquire(t, a, 1, 1, "x", 0).token;
        struct lockfsm_result r;
        struct command c;

        memset(&c, 0, sizeof c);
        c.type = COMMAND_ACQUIRE;
        c.session = b;
        c.seq = 1;
        c.ack = 1;
        c.owner = 1;
        c.wait_ms = 100;
        c.name = "x";
        c.name_len = 1;
        fsmtest_apply(t, &c);
        r = fsmtest_timeout(t, b, "x", 1);
        assert_int_equal(r.kind, PROTO_KIND_CANCELLED);
        assert_int_equal(fsmtest_find(t, LOCKFSM_EV_UNQUEUE, 0)->status,
                         BATON_ETIMEDOUT);
        /* The retried ACQUIRE learns it timed out. */
        r = fsmtest_apply(t, &c);
        assert_true(r.duplicate);
        assert_int_equal(r.status, BATON_ETIMEDOUT);
        /* A TIMEOUT that arrives after the grant is a no-op. */
        c.seq = 2;
        c.ack = 2;
        fsmtest_apply(t, &c);
        fsmtest_release(t, a, 2, 1, "x", tok);
        assert_int_equal(fsmtest_timeout(t, b, "x", 2).status,
                         BATON_ENOTWAITING);
        assert_int_equal(fsmtest_query(t, "x").session, b);
        fsmtest_expire(t, b);
        assert_int_equal(fsmtest_timeout(t, b, "x", 2).status, BATON_EEXPIRED);
}

/* A grant's end says when it began and what the log's clock says now
 * (CLOCK entries), which is how batond times holds (baton_hold_seconds):
 * the same on every replica, from the log alone. */
static void test_release_dates_the_grant(void **state)
{
        struct fsmtest *t = *state;
        struct command clock;
        const struct fsmtest_event *e;
        struct lockfsm_result r;
        uint64_t s = fsmtest_open(t, 1);

        memset(&clock, 0, sizeof clock);
        clock.type = COMMAND_CLOCK;
        clock.time_ms = 10500;
        fsmtest_apply(t, &clock);
        r = fsmtest_acquire(t, s, 1, 1, "held", 0);
        assert_int_equal(r.kind, PROTO_KIND_GRANTED);
        clock.time_ms = 75800;
        fsmtest_apply(t, &clock);
        fsmtest_release(t, s, 2, 1, "held", r.token);
        e = fsmtest_find(t, LOCKFSM_EV_RELEASE, 0);
        assert_non_null(e);
        assert_int_equal(e->granted_s, 10);
        assert_int_equal(e->clock_ms, 75800);
}

#define T(name) LOCKFSMCASE(name)

int main(void)
{
        const struct CMUnitTest tests[] = {
            T(test_open_gives_index_as_id),
            T(test_open_retry_with_nonce_returns_same_session),
            T(test_open_ttl_out_of_range),
            T(test_open_too_many_sessions),
            T(test_acquire_free_lock_grants_with_index),
            T(test_reentrant_acquire_and_release),
            T(test_try_lock_busy_names_holder),
            T(test_waiter_granted_on_release_fifo),
            T(test_release_errors_change_nothing),
            T(test_expire_frees_locks_and_grants_waiter),
            T(test_revoke_ends_a_session),
            T(test_lock_delay),
            T(test_session_lock_delay),
            T(test_revoke_lock),
            T(test_expired_waiter_is_skipped),
            T(test_close_hands_over_every_lock_at_one_index),
            T(test_close_never_hands_a_lock_to_itself),
            T(test_unknown_session),
            T(test_tombstones_are_bounded),
            T(test_duplicate_release_never_releases_newer_grant),
            T(test_duplicate_acquire_does_not_queue_twice),
            T(test_sequence_errors),
            T(test_inflight_limit),
            T(test_ack_frees_remembered_outcomes),
            T(test_waiting_twice_is_refused),
            T(test_locks_per_session_limit),
            T(test_waiters_per_lock_limit),
            T(test_unknown_mode_unsupported),
            T(test_cancel),
            T(test_cancel_rewrites_remembered_acquire),
            T(test_timeout),
            T(test_release_dates_the_grant),
        };
        return cmocka_run_group_tests_name("lockfsm", tests, NULL, NULL);
}
