/* The deciding half of libbaton's transport (src/client/link.c), with no
 * socket, clock or TLS: the host's reports are made up here. Which node
 * comes next and when (the backoff, the polls while an election runs, the
 * node gone silent), what the greeting's answer means (a refusal that
 * fails a call at once, or a full node that may take it later), what a
 * failure says before and after the node answered, and that nothing of a
 * connection the link gave up reaches its owner any more. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../include/baton.h"
#include "../../src/client/clock.h"
#include "../../src/client/link.h"
#include "../../src/proto/reply.h"

#define T0 100000 /* an arbitrary start: nothing reads the clock */
#define R  UINT64_C(0x123456789) /* every random number the link draws */

static const char eps[3][LINK_ADDR_MAX] = {"a:1", "b:2", "c:3"};

struct fix {
        struct core_env env;
        struct link l;
        unsigned draws;
        unsigned connected, frames, closed, unreachable;
        uint8_t last_type; /* of the last frame the owner got */
};

static uint64_t fixed_random(void *data)
{
        struct fix *f = data;

        f->draws++;
        return R;
}

static int no_secret(void *data, uint8_t *buf, size_t n)
{
        (void)data;
        (void)buf;
        (void)n;
        return BATON_EIO;
}

static void on_connected(void *data, int64_t now)
{
        struct fix *f = data;

        (void)now;
        f->connected++;
}

static void on_frame(void *data, const struct proto_header *h,
                     const uint8_t *body, int64_t now)
{
        struct fix *f = data;

        (void)body;
        (void)now;
        f->frames++;
        f->last_type = h->type;
}

static void on_closed(void *data, uint64_t gen, int64_t now)
{
        struct fix *f = data;

        (void)gen;
        (void)now;
        f->closed++;
}

static void on_unreachable(void *data)
{
        struct fix *f = data;

        f->unreachable++;
}

/* A link over the first `n` of eps. */
static struct fix *fix_new(unsigned n)
{
        struct fix *f = calloc(1, sizeof *f);
        struct link_cb cb = {NULL, on_connected, on_frame, on_closed,
                             on_unreachable};

        assert_non_null(f);
        f->env.data = f;
        f->env.random = fixed_random;
        f->env.secret = no_secret;
        assert_int_equal(link_init(&f->l, eps, n, &f->env), 0);
        cb.data = f;
        link_listen(&f->l, &cb);
        return f;
}

static void fix_free(struct fix *f)
{
        link_close(&f->l);
        free(f);
}

/* What coreenv_jitter() gives for `ms` with the fixed draw. */
static int64_t jitter(int64_t ms)
{
        return ms / 2 + (int64_t)(R % (uint64_t)ms);
}

/* The link asks for an attempt at `now`, on `peer`. */
static uint64_t dial(struct fix *f, int64_t now, const char *peer)
{
        uint64_t conn = link_dial(&f->l, now, true);

        assert_int_not_equal(conn, 0);
        assert_string_equal(f->l.peer, peer);
        assert_false(link_up(&f->l));
        return conn;
}

/* One frame of `conn`, of `type` with id `id` (an empty body). */
static void feed_empty(struct fix *f, uint64_t conn, uint8_t type, uint64_t id,
                       int64_t now)
{
        uint8_t frame[PROTO_HEADER_SIZE];
        struct proto_header h;

        assert_int_equal(proto_write_empty(frame, sizeof frame, id, type),
                         sizeof frame);
        assert_int_equal(proto_header_decode(&h, frame, PROTO_MAX_BODY), 0);
        link_conn_frame(&f->l, conn, &h, frame + PROTO_HEADER_SIZE, now);
}

static void feed_error(struct fix *f, uint64_t conn, int status,
                       const char *msg, int64_t now)
{
        uint8_t frame[256];
        struct proto_header h;
        size_t n =
            proto_write_error(frame, sizeof frame, f->l.hello, status, msg);

        assert_true(n > 0);
        assert_int_equal(proto_header_decode(&h, frame, PROTO_MAX_BODY), 0);
        link_conn_frame(&f->l, conn, &h, frame + PROTO_HEADER_SIZE, now);
}

static void feed_not_leader(struct fix *f, uint64_t conn, uint64_t leader,
                            const char *address, int64_t now)
{
        uint8_t frame[256];
        struct proto_header h;
        size_t n =
            proto_write_not_leader(frame, sizeof frame, 0, leader, address);

        assert_true(n > 0);
        assert_int_equal(proto_header_decode(&h, frame, PROTO_MAX_BODY), 0);
        link_conn_frame(&f->l, conn, &h, frame + PROTO_HEADER_SIZE, now);
}

/* TCP is through at `now`: the link's first PING is the whole outbox,
 * taken by the host. */
static void through(struct fix *f, uint64_t conn, int64_t now)
{
        const uint8_t *p;
        struct proto_header h;

        link_conn_up(&f->l, conn, now);
        assert_int_equal(link_output(&f->l, &p), PROTO_HEADER_SIZE);
        assert_int_equal(proto_header_decode(&h, p, PROTO_MAX_BODY), 0);
        assert_int_equal(h.type, PROTO_PING);
        assert_int_equal(h.id, f->l.hello);
        link_output_taken(&f->l, PROTO_HEADER_SIZE);
        assert_false(link_up(&f->l));
        assert_int_equal(link_next_event(&f->l, true), now + LINK_CONNECT_MS);
}

/* A connection on `peer` that the node answered at `now`. */
static uint64_t connect_up(struct fix *f, int64_t now, const char *peer)
{
        uint64_t conn = dial(f, now, peer);
        unsigned connected = f->connected, frames = f->frames;
        uint64_t gen = f->l.gen;

        through(f, conn, now);
        feed_empty(f, conn, PROTO_PONG, f->l.hello, now);
        assert_true(link_up(&f->l));
        assert_int_equal(f->l.gen, gen + 1);
        assert_int_equal(f->connected, connected + 1);
        /* The PING's answer is the link's own. */
        assert_int_equal(f->frames, frames);
        return conn;
}

static void refuse(struct fix *f, uint64_t conn, int64_t now)
{
        struct link_failure fl = {false, REACH_REFUSED, false, "refused"};

        link_conn_failed(&f->l, conn, &fl, now);
}

/* Failures in a row on one endpoint: the first moves on at once, then
 * 10 ms doubling up to 1 s, each jittered; none is dialled early; the
 * leader's answer starts the count again. */
static void backoff_schedule(void **state)
{
        static const int64_t ms[] = {0,   10,  20,   40,   80,  160,
                                     320, 640, 1000, 1000, 1000};
        struct fix *f = fix_new(1);
        int64_t now = T0;
        unsigned i;

        (void)state;
        assert_int_equal(link_dial(&f->l, now, false), 0); /* not needed */
        assert_int_equal(link_next_event(&f->l, false), CLOCK_NEVER);
        for (i = 0; i < sizeof ms / sizeof ms[0]; i++) {
                int64_t want = ms[i] == 0 ? 0 : jitter(ms[i]);
                uint64_t conn = dial(f, now, "a:1");
                refuse(f, conn, now);
                assert_int_equal(f->l.failures, i + 1);
                assert_int_equal(f->l.retry_at, now + want);
                assert_int_equal(link_next_event(&f->l, true), now + want);
                if (want > 0) {
                        assert_int_equal(link_dial(&f->l, now + want - 1, true),
                                         0);
                }
                now += want;
        }
        /* Every pass failed everywhere: each told the owner. */
        assert_int_equal(f->unreachable, sizeof ms / sizeof ms[0]);
        connect_up(f, now, "a:1");
        link_leader_answered(&f->l);
        assert_int_equal(f->l.failures, 0);
        link_fail(&f->l, now, false);
        assert_int_equal(f->l.retry_at, now);
        fix_free(f);
}

/* Within a pass the next endpoint is tried at once; the pass that ends
 * without a leader backs off. */
static void pass_goes_on_at_once(void **state)
{
        struct fix *f = fix_new(3);
        uint64_t conn;

        (void)state;
        conn = dial(f, T0, "a:1");
        refuse(f, conn, T0);
        assert_int_equal(f->l.retry_at, T0);
        conn = dial(f, T0, "b:2");
        refuse(f, conn, T0);
        assert_int_equal(f->l.retry_at, T0);
        assert_int_equal(f->unreachable, 0);
        conn = dial(f, T0, "c:3");
        refuse(f, conn, T0);
        assert_int_equal(f->unreachable, 1);
        assert_int_equal(f->l.failures, 1);
        assert_int_equal(f->l.retry_at, T0); /* the first pass: at once */
        conn = dial(f, T0, "a:1");
        refuse(f, conn, T0);
        conn = dial(f, T0, "b:2");
        refuse(f, conn, T0);
        conn = dial(f, T0, "c:3");
        refuse(f, conn, T0);
        assert_int_equal(f->l.retry_at, T0 + jitter(10));
        fix_free(f);
}

/* Nodes that know no leader are asked again every 20-60 ms (jittered) for
 * 3 s from the first such answer; then the backoff takes over. A leader
 * that answers ends the streak. */
static void leaderless_fast_poll(void **state)
{
        struct fix *f = fix_new(1);
        int64_t now = T0;
        uint64_t conn;
        unsigned polls = 0;

        (void)state;
        while (now - T0 < 3000) {
                conn = connect_up(f, now, "a:1");
                feed_not_leader(f, conn, 0, "", now);
                assert_int_equal(f->l.conn, 0);
                assert_int_equal(f->l.retry_at, now + jitter(40));
                assert_int_equal(f->l.reach.ends[0].outcome, REACH_NO_LEADER);
                assert_string_equal(f->l.reach.ends[0].why, "no leader");
                now = f->l.retry_at;
                polls++;
        }
        assert_true(polls > 3000 / 60);
        conn = connect_up(f, now, "a:1");
        link_no_leader(&f->l, now);
        assert_int_equal(f->l.retry_at, now + jitter(1000)); /* backed off */
        assert_int_equal(f->unreachable, 0); /* an answer is no failure */
        now = f->l.retry_at;
        conn = connect_up(f, now, "a:1");
        link_leader_answered(&f->l);
        link_no_leader(&f->l, now);
        assert_int_equal(f->l.retry_at, now + jitter(40)); /* a new streak */
        fix_free(f);
}

/* A node that went silent is skipped for 3 s: as the next endpoint, and
 * as the leader another node names (that node has not noticed yet). */
static void suspect_skipped(void **state)
{
        struct fix *f = fix_new(3);
        uint64_t conn;

        (void)state;
        conn = connect_up(f, T0, "a:1");
        (void)conn;
        link_fail(&f->l, T0, true);
        assert_int_equal(f->l.reach.ends[0].outcome, REACH_LOST);
        assert_string_equal(f->l.reach.ends[0].why, "stopped answering");
        conn = connect_up(f, T0 + 10, "b:2");
        feed_not_leader(f, conn, 1, "a:1", T0 + 10);
        assert_int_equal(f->l.reach.ends[1].outcome, REACH_NO_LEADER);
        assert_string_equal(f->l.reach.ends[1].why,
                            "no leader (it names a:1, which went silent)");
        assert_string_equal(f->l.hint, "");
        conn = dial(f, f->l.retry_at, "c:3");
        refuse(f, conn, T0 + 100);
        /* After c comes a, still silent: b instead, a skipped in the pass. */
        conn = dial(f, f->l.retry_at, "b:2");
        refuse(f, conn, T0 + 200);
        /* 3 s on, a named leader is followed again. */
        conn = connect_up(f, T0 + 3000, "c:3");
        feed_not_leader(f, conn, 1, "a:1", T0 + 3000);
        assert_string_equal(f->l.hint, "a:1");
        assert_int_equal(f->l.reach.ends[2].outcome, REACH_REDIRECTED);
        assert_string_equal(f->l.reach.ends[2].why,
                            "not the leader; it names a:1");
        dial(f, f->l.retry_at, "a:1");
        fix_free(f);
}

/* More than two redirects in a row back off; fewer go at once. */
static void redirects_back_off(void **state)
{
        struct fix *f = fix_new(3);
        uint64_t conn;

        (void)state;
        conn = connect_up(f, T0, "a:1");
        feed_not_leader(f, conn, 2, "b:2", T0);
        assert_int_equal(f->l.retry_at, T0);
        conn = connect_up(f, T0, "b:2");
        feed_not_leader(f, conn, 1, "a:1", T0);
        assert_int_equal(f->l.retry_at, T0);
        conn = connect_up(f, T0, "a:1");
        feed_not_leader(f, conn, 2, "b:2", T0);
        assert_int_equal(f->l.bounces, 3);
        assert_int_equal(f->l.retry_at, T0 + jitter(20));
        assert_int_equal(f->l.redirects, 3);
        fix_free(f);
}

/* A follower that named the leader before and answers a new
 * connection's PING has said nothing new of leadership: a call that
 * gives up while its request waits on that follower says the named
 * leader could not be reached, not that its outcome is unknown. */
static void greeting_keeps_redirect(void **state)
{
        struct fix *f = fix_new(2);
        struct link_failure fl = {true, REACH_REFUSED, false, "timed out"};
        char text[REACH_TEXT_MAX];
        int64_t now = T0;
        uint64_t conn;

        (void)state;
        conn = connect_up(f, now, "a:1");
        feed_not_leader(f, conn, 3, "l:9", now);
        conn = dial(f, now, "l:9");
        now += LINK_CONNECT_MS;
        link_conn_failed(&f->l, conn, &fl, now);
        /* b:2 names the leader that went silent: no leader, for now. */
        now = f->l.retry_at > now ? f->l.retry_at : now;
        conn = connect_up(f, now, "b:2");
        feed_not_leader(f, conn, 3, "l:9", now);
        /* The request is out on a:1 again, greeted; its answer is not
         * in when the call's time is up. */
        now = f->l.retry_at > now ? f->l.retry_at : now;
        conn = connect_up(f, now, "a:1");
        assert_int_equal(
            reach_answer(&f->l.reach, 1, true, true, text, sizeof text),
            BATON_ENOANSWER);
        assert_non_null(strstr(text, "cannot connect to the leader"));
        assert_null(strstr(text, "outcome is unknown"));
        assert_non_null(strstr(text, "a:1: not the leader; it names l:9"));
        assert_non_null(strstr(text, "the leader they name, l:9: timed out"));
        fix_free(f);
}

/* An ERROR in answer to the first PING is a refusal that fails the pass
 * (a call that sent nothing gives up at once); a node with too many
 * connections is only lost: it may take one later. Neither connection
 * comes up. */
static void greeting_refusals(void **state)
{
        struct fix *f = fix_new(1);
        uint64_t conn;

        (void)state;
        conn = dial(f, T0, "a:1");
        through(f, conn, T0);
        feed_error(f, conn, BATON_ETOOMANYCONNS, "too many", T0);
        assert_int_equal(f->l.conn, 0);
        assert_int_equal(f->l.reach.ends[0].outcome, REACH_LOST);
        assert_string_equal(f->l.reach.ends[0].why,
                            "refused the connection: too many");
        assert_int_equal(f->unreachable, 0);

        conn = dial(f, f->l.retry_at, "a:1");
        through(f, conn, f->l.retry_at);
        feed_error(f, conn, BATON_EPERM, "not allowed", T0 + 100);
        assert_int_equal(f->l.reach.ends[0].outcome, REACH_REFUSED);
        assert_false(f->l.reach.ends[0].tls);
        assert_string_equal(f->l.reach.ends[0].why,
                            "refused the connection: not allowed");
        assert_int_equal(f->unreachable, 1);

        conn = dial(f, f->l.retry_at, "a:1");
        through(f, conn, f->l.retry_at);
        feed_error(f, conn, BATON_ETLS, "TLS required", T0 + 200);
        assert_int_equal(f->l.reach.ends[0].outcome, REACH_REFUSED);
        assert_true(f->l.reach.ends[0].tls);
        assert_string_equal(f->l.reach.ends[0].why,
                            "the node requires TLS but this client uses "
                            "plain TCP (it was given no CA, certificate and "
                            "key)");
        assert_int_equal(f->unreachable, 2);
        assert_int_equal(f->connected, 0);
        assert_int_equal(f->frames, 0);
        assert_int_equal(f->closed, 3);
        assert_int_equal(f->l.gen, 0);
        fix_free(f);
}

/* The same failure says what the endpoint is before the node answered,
 * and only that the connection was lost after. */
static void failure_before_and_after_greeting(void **state)
{
        struct link_failure refused = {true, REACH_NOT_LISTENING, false,
                                       "connection refused"};
        struct fix *f = fix_new(1);
        int64_t at, silent_until;
        uint64_t conn;

        (void)state;
        /* Connecting. */
        conn = dial(f, T0, "a:1");
        link_conn_failed(&f->l, conn, &refused, T0);
        assert_int_equal(f->l.reach.ends[0].outcome, REACH_NOT_LISTENING);
        assert_string_equal(f->l.reach.ends[0].why, "connection refused");
        assert_string_equal(f->l.suspect, "a:1");

        /* Greeting: the node's verdicts are a refusal too. */
        conn = dial(f, T0 + 3000, "a:1");
        through(f, conn, T0 + 3000);
        link_fail(&f->l, T0 + 3000, false);
        assert_int_equal(f->l.reach.ends[0].outcome, REACH_REFUSED);
        assert_string_equal(f->l.reach.ends[0].why,
                            "closed the connection without answering (not a "
                            "Baton client port?)");

        /* Greeting unanswered: given up at its deadline, not before. */
        at = f->l.retry_at > T0 + 6000 ? f->l.retry_at : T0 + 6000;
        conn = dial(f, at, "a:1");
        through(f, conn, at);
        link_tick(&f->l, at + LINK_CONNECT_MS - 1);
        assert_int_equal(f->l.conn, conn);
        link_tick(&f->l, at + LINK_CONNECT_MS);
        assert_int_equal(f->l.conn, 0);
        assert_int_equal(f->l.reach.ends[0].outcome, REACH_REFUSED);
        assert_string_equal(
            f->l.reach.ends[0].why,
            "accepted the connection but did not answer within 1000 ms (not "
            "a Baton client port, or a node that is stopped?)");
        assert_int_equal(f->l.suspect_until, at + LINK_CONNECT_MS + 3000);

        /* Up: lost, silent or not, whatever the host saw. */
        at = f->l.suspect_until > f->l.retry_at ? f->l.suspect_until
                                                : f->l.retry_at;
        conn = connect_up(f, at, "a:1");
        link_conn_failed(&f->l, conn, &refused, at);
        assert_int_equal(f->l.reach.ends[0].outcome, REACH_LOST);
        assert_string_equal(f->l.reach.ends[0].why, "stopped answering");
        assert_int_equal(f->l.suspect_until, at + 3000);
        at = f->l.retry_at;
        silent_until = f->l.suspect_until;
        conn = connect_up(f, at, "a:1");
        refused.silent = false;
        link_conn_failed(&f->l, conn, &refused, at);
        assert_int_equal(f->l.reach.ends[0].outcome, REACH_LOST);
        assert_string_equal(f->l.reach.ends[0].why, "dropped the connection");
        assert_int_equal(f->l.suspect_until, silent_until); /* not silent */
        fix_free(f);
}

/* Owner verdict: its frame callback gives the connection up. */
static void fail_on_frame(void *data, const struct proto_header *h,
                          const uint8_t *body, int64_t now)
{
        struct fix *f = data;

        on_frame(data, h, body, now);
        link_fail(&f->l, now, false);
}

/* Once the link gives a connection up (a redirect, the owner's verdict),
 * nothing more of it reaches the owner: not its next frame, not a late
 * failure or "through"; the outbox is emptied, and the owner hears of
 * the close once. */
static void stop_after_drop(void **state)
{
        struct link_failure late = {true, REACH_REFUSED, false, "late"};
        struct fix *f = fix_new(3);
        uint8_t frame[PROTO_HEADER_SIZE];
        struct link_cb cb;
        uint64_t conn;

        (void)state;
        proto_write_empty(frame, sizeof frame, 0, PROTO_PING);
        conn = connect_up(f, T0, "a:1");
        assert_int_not_equal(link_put(&f->l, frame, sizeof frame), 0);
        feed_not_leader(f, conn, 2, "b:2", T0);
        assert_int_equal(f->l.conn, 0);
        assert_int_equal(f->closed, 1);
        assert_int_equal(link_output(&f->l, NULL), 0);
        feed_empty(f, conn, PROTO_PONG, 7, T0);
        assert_int_equal(f->frames, 0);
        link_conn_failed(&f->l, conn, &late, T0);
        assert_int_equal(f->l.reach.ends[0].outcome, REACH_REDIRECTED);
        link_conn_up(&f->l, conn, T0);
        assert_int_equal(link_output(&f->l, NULL), 0);
        assert_int_equal(f->closed, 1);

        /* The owner's own verdict, from inside its callback. */
        conn = connect_up(f, T0, "b:2");
        cb = f->l.cb;
        cb.frame = fail_on_frame;
        link_listen(&f->l, &cb);
        feed_empty(f, conn, PROTO_PONG, 8, T0);
        assert_int_equal(f->frames, 1);
        assert_int_equal(f->l.conn, 0);
        feed_empty(f, conn, PROTO_PONG, 9, T0);
        assert_int_equal(f->frames, 1);
        assert_int_equal(f->closed, 2);
        fix_free(f);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(backoff_schedule),
            cmocka_unit_test(pass_goes_on_at_once),
            cmocka_unit_test(leaderless_fast_poll),
            cmocka_unit_test(suspect_skipped),
            cmocka_unit_test(redirects_back_off),
            cmocka_unit_test(greeting_keeps_redirect),
            cmocka_unit_test(greeting_refusals),
            cmocka_unit_test(failure_before_and_after_greeting),
            cmocka_unit_test(stop_after_drop),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
