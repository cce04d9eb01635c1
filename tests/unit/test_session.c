/* The local lease of libbaton's session (src/client/session.c) at chosen
 * times: from which send it is dated, when it turns to jeopardy and when
 * it expires, to the millisecond, with no clock, thread or connection. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../include/baton.h"
#include "clientfix.h"

#define T0 100000 /* an arbitrary start: nothing reads the clock */

/* The session's OPEN, as session_ensure_step() makes it, first sent at
 * `sent` and answered with session 42 at `now`. */
static void open_session(struct clientfix *f, int64_t sent, int64_t now)
{
        uint8_t hash[ATTACH_HASH_SIZE] = {0};
        struct command k;
        struct request *r;
        int rv;

        memset(&k, 0, sizeof k);
        k.type = COMMAND_OPEN;
        k.hash = hash;
        k.nonce = 1;
        k.ttl_ms = f->core.session.ttl_ms;
        k.name = "unit";
        k.name_len = 4;
        r = request_command(&k, &rv);
        assert_non_null(r);
        r->kind = REQUEST_OPEN;
        f->core.session.opening = r;
        registry_submit(&f->core.registry, r, sent);
        assert_int_equal(r->sends, 0); /* the link is down: queued */
        clientfix_sent(f, r, sent);
        r->res.session = 42;
        clientfix_answer(f, r, 0, now);
}

/* The keepalive session_tick() made, sent at `sent`. */
static struct request *keepalive_sent(struct clientfix *f, int64_t sent)
{
        struct request *r = f->core.session.keepalive;

        assert_non_null(r);
        clientfix_sent(f, r, sent);
        return r;
}

/* The next queued callback: a state change (its state), a lost lock
 * (-BATON_SESSION_EXPIRED), or -1 for none. */
static int next_notice(struct clientfix *f)
{
        struct notify_event *e = notify_pop(&f->core.notify);
        int got;

        if (e == NULL) {
                return -1;
        }
        got = e->kind == NOTIFY_STATE ? e->state : -BATON_SESSION_EXPIRED;
        free(e);
        return got;
}

/* The lease runs from the OPEN's first send, not from its answer: with a
 * TTL of 10 s and a margin of 1 s, 8.7 s are left 300 ms later. The first
 * keepalive is due a third of the TTL after that send. */
static void open_dates_from_first_send(void **state)
{
        struct clientfix *f = clientfix_new(10000, 1);

        (void)state;
        open_session(f, T0, T0 + 300);
        assert_int_equal(f->core.session.state, BATON_SESSION_LIVE);
        assert_int_equal(next_notice(f), BATON_SESSION_LIVE);
        assert_int_equal(f->core.session.id, 42);
        assert_int_equal(f->core.session.acked_sent, T0);
        assert_int_equal(session_remaining(&f->core.session, T0 + 300), 8700);
        assert_int_equal(session_next_event(&f->core.session), T0 + 3333);
        session_tick(&f->core.session, T0 + 3332);
        assert_null(f->core.session.keepalive);
        session_tick(&f->core.session, T0 + 3333);
        assert_non_null(f->core.session.keepalive);
        /* With the keepalive out, the next event is the jeopardy bound. */
        assert_int_equal(session_next_event(&f->core.session), T0 + 5001);
        clientfix_free(f);
}

/* LIVE up to TTL/2 after the acknowledged send, JEOPARDY from the next
 * millisecond on; the session stays usable. */
static void jeopardy_after_half_ttl(void **state)
{
        struct clientfix *f = clientfix_new(10000, 1);

        (void)state;
        open_session(f, T0, T0);
        assert_int_equal(next_notice(f), BATON_SESSION_LIVE);
        session_tick(&f->core.session, T0 + 5000);
        assert_int_equal(f->core.session.state, BATON_SESSION_LIVE);
        assert_int_equal(next_notice(f), -1);
        session_tick(&f->core.session, T0 + 5001);
        assert_int_equal(f->core.session.state, BATON_SESSION_JEOPARDY);
        assert_int_equal(next_notice(f), BATON_SESSION_JEOPARDY);
        assert_true(session_usable(&f->core.session));
        assert_int_equal(session_remaining(&f->core.session, T0 + 5001), 3999);
        assert_int_equal(session_next_event(&f->core.session), T0 + 9000);
        clientfix_free(f);
}

/* EXPIRED at TTL minus the margin after the acknowledged send: the
 * session is gone, its holds are lost (with a callback) and its keepalive
 * in flight fails. */
static void expires_at_ttl_less_margin(void **state)
{
        struct clientfix *f = clientfix_new(10000, 1);

        (void)state;
        open_session(f, T0, T0);
        assert_int_equal(locks_set_at(&f->core.locks, 42, "L", 1, 7,
                                      COMMAND_MODE_EXCLUSIVE, 99, 1, T0),
                         0);
        session_tick(&f->core.session, T0 + 8999);
        assert_int_equal(f->core.session.state, BATON_SESSION_JEOPARDY);
        assert_non_null(f->core.session.keepalive); /* due since T0 + 3333 */
        assert_int_equal(session_remaining(&f->core.session, T0 + 8999), 1);
        session_tick(&f->core.session, T0 + 9000);
        assert_int_equal(f->core.session.state, BATON_SESSION_EXPIRED);
        assert_int_equal(f->core.session.id, 0);
        assert_false(session_usable(&f->core.session));
        assert_int_equal(session_remaining(&f->core.session, T0 + 9000), 0);
        assert_null(f->core.session.keepalive);
        assert_false(registry_busy(&f->core.registry));
        assert_int_equal(next_notice(f), BATON_SESSION_LIVE);
        assert_int_equal(next_notice(f), BATON_SESSION_JEOPARDY);
        assert_int_equal(next_notice(f), BATON_SESSION_EXPIRED);
        assert_int_equal(next_notice(f), -BATON_SESSION_EXPIRED); /* L */
        assert_int_equal(next_notice(f), -1);
        clientfix_free(f);
}

/* An acknowledged keepalive moves the lease to its own send, however late
 * its answer comes: every bound follows that send. */
static void keepalive_dates_from_its_send(void **state)
{
        struct clientfix *f = clientfix_new(10000, 1);
        struct request *ka;

        (void)state;
        open_session(f, T0, T0);
        session_tick(&f->core.session, T0 + 3333);
        ka = keepalive_sent(f, T0 + 4000);
        clientfix_answer(f, ka, 0, T0 + 4600);
        assert_int_equal(f->core.session.acked_sent, T0 + 4000);
        assert_int_equal(f->core.session.ka_sent, T0 + 4000);
        assert_int_equal(session_remaining(&f->core.session, T0 + 4600), 8400);
        session_tick(&f->core.session, T0 + 9000);
        assert_int_equal(f->core.session.state, BATON_SESSION_LIVE);
        session_tick(&f->core.session, T0 + 9001);
        assert_int_equal(f->core.session.state, BATON_SESSION_JEOPARDY);
        session_tick(&f->core.session, T0 + 12999);
        assert_int_equal(f->core.session.state, BATON_SESSION_JEOPARDY);
        session_tick(&f->core.session, T0 + 13000);
        assert_int_equal(f->core.session.state, BATON_SESSION_EXPIRED);
        clientfix_free(f);
}

/* An answer handled after the lease ran out cannot bring the session
 * back, even though its keepalive went out in time; handled a millisecond
 * earlier, it renews the lease from its send. */
static void late_answer_does_not_revive(void **state)
{
        struct clientfix *f = clientfix_new(10000, 1);
        struct request *ka;

        (void)state;
        open_session(f, T0, T0);
        session_tick(&f->core.session, T0 + 3333);
        ka = keepalive_sent(f, T0 + 4000);
        clientfix_answer(f, ka, 0, T0 + 9000);
        assert_int_equal(f->core.session.state, BATON_SESSION_EXPIRED);
        assert_int_equal(f->core.session.id, 0);
        clientfix_free(f);

        f = clientfix_new(10000, 1);
        open_session(f, T0, T0);
        session_tick(&f->core.session, T0 + 3333);
        ka = keepalive_sent(f, T0 + 4000);
        clientfix_answer(f, ka, 0, T0 + 8999);
        assert_int_equal(f->core.session.state, BATON_SESSION_LIVE);
        assert_int_equal(f->core.session.acked_sent, T0 + 4000);
        assert_int_equal(next_notice(f), BATON_SESSION_LIVE);
        assert_int_equal(next_notice(f), BATON_SESSION_JEOPARDY);
        assert_int_equal(next_notice(f), BATON_SESSION_LIVE);
        clientfix_free(f);
}

/* An OPEN answered more than TTL/2 after its first send leaves the session
 * unusable until a keepalive, due at once, is acknowledged; answered at
 * TTL/2 exactly, the session is live at once. */
static void slow_open_validates_first(void **state)
{
        struct clientfix *f = clientfix_new(10000, 1);
        struct request *ka;

        (void)state;
        open_session(f, T0, T0 + 5001);
        assert_true(f->core.session.validating);
        assert_false(session_usable(&f->core.session));
        assert_int_equal(f->core.session.state, BATON_SESSION_NONE);
        assert_int_equal(session_next_event(&f->core.session), 0);
        session_tick(&f->core.session, T0 + 5001);
        ka = keepalive_sent(f, T0 + 5002);
        clientfix_answer(f, ka, 0, T0 + 5100);
        assert_false(f->core.session.validating);
        assert_int_equal(f->core.session.state, BATON_SESSION_LIVE);
        assert_int_equal(f->core.session.acked_sent, T0 + 5002);
        clientfix_free(f);

        f = clientfix_new(10000, 1);
        open_session(f, T0, T0 + 5000);
        assert_false(f->core.session.validating);
        assert_int_equal(f->core.session.state, BATON_SESSION_LIVE);
        clientfix_free(f);
}

/* A short TTL keeps a margin of at least 200 ms: 1 s expires 800 ms after
 * the acknowledged send, in jeopardy from 501 ms. */
static void margin_has_a_floor(void **state)
{
        struct clientfix *f = clientfix_new(1000, 1);

        (void)state;
        open_session(f, T0, T0);
        assert_int_equal(f->core.session.margin_ms, SESSION_MARGIN_MIN_MS);
        session_tick(&f->core.session, T0 + 500);
        assert_int_equal(f->core.session.state, BATON_SESSION_LIVE);
        session_tick(&f->core.session, T0 + 501);
        assert_int_equal(f->core.session.state, BATON_SESSION_JEOPARDY);
        session_tick(&f->core.session, T0 + 799);
        assert_int_equal(f->core.session.state, BATON_SESSION_JEOPARDY);
        session_tick(&f->core.session, T0 + 800);
        assert_int_equal(f->core.session.state, BATON_SESSION_EXPIRED);
        clientfix_free(f);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(open_dates_from_first_send),
            cmocka_unit_test(jeopardy_after_half_ttl),
            cmocka_unit_test(expires_at_ttl_less_margin),
            cmocka_unit_test(keepalive_dates_from_its_send),
            cmocka_unit_test(late_answer_does_not_revive),
            cmocka_unit_test(slow_open_validates_first),
            cmocka_unit_test(margin_has_a_floor),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
