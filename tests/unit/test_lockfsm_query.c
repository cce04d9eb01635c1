/* Unit tests of the lock state machine's read side: QUERY and CHECK, the
 * stats, the session and lock iterators, and the limits it refuses. */
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

static void test_query_and_check(void **state)
{
        struct fsmtest *t = *state;
        uint64_t a = fsmtest_open(t, 1);
        uint64_t tok;
        struct lockfsm_result r;

        r = fsmtest_check(t, "x", 5);
        assert_int_equal(r.status, BATON_ESTALE);
        assert_int_equal(r.token, 0);
        tok = fsmtest_acquire(t, a, 1, 3, "x", 0).token;
        r = fsmtest_query(t, "x");
        assert_int_equal(r.kind, PROTO_KIND_HOLDER);
        assert_int_equal(r.session, a);
        assert_int_equal(r.owner, 3);
        assert_int_equal(r.token, tok);
        assert_int_equal(r.count, 1);
        r = fsmtest_check(t, "x", tok);
        assert_int_equal(r.status, 0);
        assert_int_equal(r.kind, PROTO_KIND_CURRENT);
        r = fsmtest_check(t, "x", tok - 1);
        assert_int_equal(r.status, BATON_ESTALE);
        assert_int_equal(r.token, tok);
        /* The read-only lookup agrees with the QUERY command. */
        lockfsm_query(t->f, "x", 1, &r);
        assert_int_equal(r.token, tok);
}

static void test_create_rejects_bad_limits(void **state)
{
        struct lockfsm_limits l;

        (void)state;
        lockfsm_limits_default(&l);
        l.max_inflight = 0;
        assert_null(lockfsm_create(&l, NULL));
        l.max_inflight = 256;
        assert_null(lockfsm_create(&l, NULL));
        lockfsm_limits_default(&l);
        l.min_ttl_ms = 10;
        l.max_ttl_ms = 5;
        assert_null(lockfsm_create(&l, NULL));
        lockfsm_destroy(NULL);
}

static void test_stats(void **state)
{
        struct fsmtest *t = *state;
        uint64_t a = fsmtest_open(t, 1);
        uint64_t b = fsmtest_open(t, 2);
        struct lockfsm_stats st;

        fsmtest_acquire(t, a, 1, 1, "x", 0);
        fsmtest_acquire(t, b, 1, 1, "x", 5000);
        fsmtest_acquire(t, b, 2, 1, "y", 0);
        lockfsm_stats(t->f, &st);
        assert_int_equal(st.sessions, 2);
        assert_int_equal(st.locks, 2);
        assert_int_equal(st.grants, 2);
        assert_int_equal(st.waiters, 1);
        assert_int_equal(st.tombstones, 0);
}

struct visits {
        uint64_t sessions[8];
        unsigned n_sessions;
        uint64_t waiter_seq[8];
        uint32_t waiter_wait[8];
        unsigned n_waiters;
};

static void visit_session(void *data, uint64_t session, uint32_t ttl_ms)
{
        struct visits *v = data;

        assert_int_equal(ttl_ms, 10000);
        v->sessions[v->n_sessions++] = session;
}

static void visit_waiter(void *data, uint64_t session, uint64_t seq,
                         const char *name, size_t name_len, uint32_t wait_ms)
{
        struct visits *v = data;

        (void)session;
        assert_int_equal(name_len, 1);
        assert_memory_equal(name, "x", 1);
        v->waiter_seq[v->n_waiters] = seq;
        v->waiter_wait[v->n_waiters++] = wait_ms;
}

static void test_session_status_and_iteration(void **state)
{
        struct fsmtest *t = *state;
        uint64_t a = fsmtest_open(t, 1);
        uint64_t b = fsmtest_open(t, 2);
        uint64_t c = fsmtest_open(t, 3);
        uint64_t d = fsmtest_open(t, 4);
        struct visits v;
        struct lockfsm_result r;

        fsmtest_acquire(t, a, 1, 1, "x", 0);
        fsmtest_acquire(t, b, 7, 1, "x", 900);
        fsmtest_acquire(t, c, 5, 1, "x", COMMAND_WAIT_FOREVER);
        fsmtest_expire(t, d);
        assert_int_equal(lockfsm_session_status(t->f, a), 0);
        assert_int_equal(lockfsm_session_status(t->f, d), BATON_EEXPIRED);
        assert_int_equal(lockfsm_session_status(t->f, 99), BATON_ENOSESSION);
        fsmtest_close_session(t, c, 6);
        assert_int_equal(lockfsm_session_status(t->f, c), BATON_ECLOSED);
        memset(&v, 0, sizeof v);
        lockfsm_foreach_session(t->f, visit_session, &v);
        assert_int_equal(v.n_sessions, 2);
        assert_int_equal(v.sessions[0], a);
        assert_int_equal(v.sessions[1], b);
        lockfsm_foreach_waiter(t->f, visit_waiter, &v);
        assert_int_equal(v.n_waiters, 1);
        assert_int_equal(v.waiter_seq[0], 7);
        assert_int_equal(v.waiter_wait[0], 900);
        lockfsm_check_token(t->f, "x", 1, 5, &r);
        assert_int_equal(r.kind, PROTO_KIND_CURRENT);
        lockfsm_check_token(t->f, "x", 1, 4, &r);
        assert_int_equal(r.status, BATON_ESTALE);
}

struct listed {
        char names[8][16];
        struct lockfsm_result holders[8];
        unsigned n;
        unsigned stop_after; /* 0: never stop */
};

static bool visit_lock(void *data, const char *name, size_t name_len,
                       const struct lockfsm_result *holder)
{
        struct listed *v = data;

        assert_true(name_len < sizeof v->names[0]);
        assert_true(v->n < 8);
        memcpy(v->names[v->n], name, name_len);
        v->names[v->n][name_len] = '\0';
        v->holders[v->n++] = *holder;
        return v->stop_after == 0 || v->n < v->stop_after;
}

static void test_foreach_lock(void **state)
{
        struct fsmtest *t = *state;
        uint64_t a = fsmtest_open(t, 1);
        uint64_t b = fsmtest_open(t, 2);
        uint64_t c = fsmtest_open(t, 3);
        uint64_t tok_a2, tok_a1, tok_b1, tok_ab;
        struct listed v;

        /* Created in this order: a/2, a/1, b/1, ab. */
        tok_a2 = fsmtest_acquire(t, a, 1, 7, "a/2", 0).token;
        tok_a1 = fsmtest_acquire(t, b, 1, 8, "a/1", 0).token;
        tok_b1 = fsmtest_acquire(t, a, 2, 7, "b/1", 0).token;
        tok_ab = fsmtest_acquire(t, c, 1, 9, "ab", 0).token;
        fsmtest_acquire(t, a, 3, 7, "a/1", 1000); /* queued behind b */
        fsmtest_acquire(t, a, 4, 7, "a/2", 0);    /* reentered: count 2 */

        memset(&v, 0, sizeof v);
        lockfsm_foreach_lock(t->f, "a/", 2, visit_lock, &v);
        assert_int_equal(v.n, 2);
        assert_string_equal(v.names[0], "a/2");
        assert_int_equal(v.holders[0].kind, PROTO_KIND_HOLDER);
        assert_int_equal(v.holders[0].session, a);
        assert_int_equal(v.holders[0].owner, 7);
        assert_int_equal(v.holders[0].token, tok_a2);
        assert_int_equal(v.holders[0].count, 2);
        assert_int_equal(v.holders[0].waiters, 0);
        assert_string_equal(v.names[1], "a/1");
        assert_int_equal(v.holders[1].session, b);
        assert_int_equal(v.holders[1].owner, 8);
        assert_int_equal(v.holders[1].token, tok_a1);
        assert_int_equal(v.holders[1].count, 1);
        assert_int_equal(v.holders[1].waiters, 1);

        /* The empty prefix: every lock, oldest first. */
        memset(&v, 0, sizeof v);
        lockfsm_foreach_lock(t->f, NULL, 0, visit_lock, &v);
        assert_int_equal(v.n, 4);
        assert_string_equal(v.names[2], "b/1");
        assert_int_equal(v.holders[2].token, tok_b1);
        assert_string_equal(v.names[3], "ab");
        assert_int_equal(v.holders[3].token, tok_ab);

        /* "a" matches a/2, a/1 and ab; a whole name matches itself; a
         * prefix longer than every name matches nothing. */
        memset(&v, 0, sizeof v);
        lockfsm_foreach_lock(t->f, "a", 1, visit_lock, &v);
        assert_int_equal(v.n, 3);
        memset(&v, 0, sizeof v);
        lockfsm_foreach_lock(t->f, "b/1", 3, visit_lock, &v);
        assert_int_equal(v.n, 1);
        memset(&v, 0, sizeof v);
        lockfsm_foreach_lock(t->f, "b/1/x", 5, visit_lock, &v);
        assert_int_equal(v.n, 0);
        memset(&v, 0, sizeof v);
        lockfsm_foreach_lock(t->f, "c", 1, visit_lock, &v);
        assert_int_equal(v.n, 0);

        /* The callback stops the walk. */
        memset(&v, 0, sizeof v);
        v.stop_after = 2;
        lockfsm_foreach_lock(t->f, "", 0, visit_lock, &v);
        assert_int_equal(v.n, 2);

        /* A released lock is gone; one handed to its waiter stays, in its
         * place, with the new holder. */
        fsmtest_release(t, a, 5, 7, "b/1", tok_b1);
        fsmtest_close_session(t, b, 2);
        memset(&v, 0, sizeof v);
        lockfsm_foreach_lock(t->f, "", 0, visit_lock, &v);
        assert_int_equal(v.n, 3);
        assert_string_equal(v.names[0], "a/2");
        assert_string_equal(v.names[1], "a/1");
        assert_int_equal(v.holders[1].session, a);
        assert_int_equal(v.holders[1].waiters, 0);
        assert_true(v.holders[1].token > tok_a1);
        assert_string_equal(v.names[2], "ab");
}

/* Sessions seen by lockfsm_foreach_session_from(), up to `stop_after`. */
struct paged {
        uint64_t ids[8];
        struct lockfsm_session_info info[8];
        unsigned n;
        unsigned stop_after; /* 0: never stop */
};

static bool visit_paged(void *data, const struct lockfsm_session_info *s)
{
        struct paged *p = data;

        assert_true(p->n < 8);
        p->info[p->n] = *s;
        p->ids[p->n++] = s->id;
        return p->stop_after == 0 || p->n < p->stop_after;
}

/* A page of up to `limit` sessions after `after`. */
static struct paged page(const struct fsmtest *t, uint64_t after,
                         unsigned limit)
{
        struct paged p;

        memset(&p, 0, sizeof p);
        p.stop_after = limit;
        lockfsm_foreach_session_from(t->f, after, visit_paged, &p);
        return p;
}

struct held {
        struct lockfsm_session_hold h[8];
        char names[8][16];
        unsigned n;
};

static bool visit_held(void *data, const struct lockfsm_session_hold *h)
{
        struct held *v = data;

        assert_true(v->n < 8 && h->name_len < sizeof v->names[0]);
        v->h[v->n] = *h;
        memcpy(v->names[v->n], h->name, h->name_len);
        v->names[v->n][h->name_len] = '\0';
        v->n++;
        return true;
}

/* Paging through sessions by id: the first page, the last, one past the
 * end, a cursor that names an ended session, and an empty machine. */
static void test_sessions_paging(void **state)
{
        struct fsmtest *t = *state;
        uint64_t id[4];
        struct paged p;
        unsigned i;

        p = page(t, 0, 0);
        assert_int_equal(p.n, 0);
        for (i = 0; i < 4; i++) { /* the small limits' most */
                id[i] = fsmtest_open(t, i + 1);
        }
        p = page(t, 0, 2); /* the first page */
        assert_int_equal(p.n, 2);
        assert_int_equal(p.ids[0], id[0]);
        assert_int_equal(p.ids[1], id[1]);
        p = page(t, p.ids[1], 3); /* the last page, short */
        assert_int_equal(p.n, 2);
        assert_int_equal(p.ids[0], id[2]);
        assert_int_equal(p.ids[1], id[3]);
        p = page(t, id[3], 2); /* past the end */
        assert_int_equal(p.n, 0);
        p = page(t, id[3] + 1000, 2);
        assert_int_equal(p.n, 0);
        /* A cursor whose session ended still pages on after it. */
        fsmtest_expire(t, id[1]);
        p = page(t, id[1], 0);
        assert_int_equal(p.n, 2);
        assert_int_equal(p.ids[0], id[2]);
        p = page(t, id[0], 0);
        assert_int_equal(p.n, 2);
        assert_int_equal(p.ids[0], id[2]);
        p = page(t, 0, 1); /* a limit of one */
        assert_int_equal(p.n, 1);
        assert_int_equal(p.ids[0], id[0]);
}

/* One session's record: what its OPEN asked, its grants with their
 * tokens, then its waits; an ended session's status instead. */
static void test_session_info_and_holds(void **state)
{
        struct fsmtest *t = *state;
        uint64_t a = fsmtest_open(t, 1);
        uint64_t b = fsmtest_open(t, 2);
        struct lockfsm_session_info info;
        struct held v;
        uint64_t tok;

        tok = fsmtest_acquire(t, a, 1, 3, "x", 0).token;
        fsmtest_acquire(t, a, 2, 3, "x", 0); /* reentrant: count 2 */
        fsmtest_acquire(t, b, 1, 4, "y", 0);
        fsmtest_acquire(t, a, 3, 3, "y", 900);
        assert_int_equal(lockfsm_session_info(t->f, a, &info), 0);
        assert_int_equal(info.id, a);
        assert_int_equal(info.n_grants, 1);
        assert_int_equal(info.n_waits, 1);
        assert_int_equal(info.ttl_ms, lockfsm_session_ttl(t->f, a));
        memset(&v, 0, sizeof v);
        lockfsm_foreach_session_hold(t->f, a, visit_held, &v);
        assert_int_equal(v.n, 2);
        assert_string_equal(v.names[0], "x");
        assert_false(v.h[0].waiting);
        assert_int_equal(v.h[0].token, tok);
        assert_int_equal(v.h[0].count, 2);
        assert_int_equal(v.h[0].owner, 3);
        assert_string_equal(v.names[1], "y");
        assert_true(v.h[1].waiting);
        assert_int_equal(v.h[1].wait_ms, 900);
        assert_int_equal(v.h[1].token, 0);
        fsmtest_close_session(t, b, 2);
        assert_int_equal(lockfsm_session_info(t->f, b, &info), BATON_ECLOSED);
        assert_int_equal(lockfsm_session_info(t->f, 999, &info),
                         BATON_ENOSESSION);
        /* The wait was granted when b closed. */
        memset(&v, 0, sizeof v);
        lockfsm_foreach_session_hold(t->f, a, visit_held, &v);
        assert_int_equal(v.n, 2);
        assert_false(v.h[1].waiting);
}

#define T(name) LOCKFSMCASE(name)

int main(void)
{
        const struct CMUnitTest tests[] = {
            T(test_query_and_check),
            cmocka_unit_test(test_create_rejects_bad_limits),
            T(test_stats),
            T(test_session_status_and_iteration),
            T(test_foreach_lock),
            T(test_sessions_paging),
            T(test_session_info_and_holds),
        };
        return cmocka_run_group_tests_name("lockfsm_query", tests, NULL, NULL);
}
