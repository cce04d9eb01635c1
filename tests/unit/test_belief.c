/* What libbaton's client core believes, read as a simulation's checker
 * reads it (src/client/belief.c): the lease at a chosen time without a
 * tick, which must be what the tick then reports, to the millisecond of
 * each bound; the holds of the live session; and the tracer's account of
 * every change of the lock table and of the reported state, with the time
 * of the input that made it. No clock, thread or connection. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../include/baton.h"
#include "../../src/client/outcome.h"
#include "clientfix.h"

#define T0  100000 /* an arbitrary start: nothing reads the clock */
#define TTL 10000  /* margin 1000: jeopardy at +5001, expiry at +9000 */

/* A call asks for a session at `sent`: the OPEN session_ensure_step()
 * makes goes out then and is answered with session 42 at `now`. */
static void open_session(struct clientfix *f, int64_t sent, int64_t now)
{
        uint64_t seen = f->core.session.epoch;
        struct request *r;
        char why[256];

        assert_int_equal(
            session_ensure_step(&f->core.session, &seen, sent, why, 256), 1);
        r = f->core.session.opening;
        assert_non_null(r);
        clientfix_sent(f, r, sent);
        r->res.session = 42;
        clientfix_answer(f, r, 0, now);
}

/* The keepalive due at `due` goes out at `sent` and is acknowledged at
 * `now`. */
static void keepalive(struct clientfix *f, int64_t due, int64_t sent,
                      int64_t now)
{
        struct request *r;

        core_lease_tick(&f->core, due);
        r = f->core.session.keepalive;
        assert_non_null(r);
        clientfix_sent(f, r, sent);
        clientfix_answer(f, r, 0, now);
}

/* The belief at `t`, then the tick at `t`: the state the belief gave is
 * `want`, and the one the tick reports. */
static void belief_then_tick(struct clientfix *f, int64_t t, int want)
{
        struct core_belief b;

        core_belief(&f->core, t, &b);
        assert_int_equal(b.state, want);
        core_lease_tick(&f->core, t);
        assert_int_equal(f->core.session.state, b.state);
}

/* Dated from the OPEN's send, then from an acknowledged keepalive's: LIVE
 * to jeopardy_at - 1, JEOPARDY from jeopardy_at to expires_at - 1, EXPIRED
 * at expires_at; what the belief says at each bound is what the tick then
 * reports. */
static void belief_is_what_the_tick_reports(void **state)
{
        struct clientfix *f = clientfix_new(TTL, 1);
        struct core_belief b;
        int64_t acked;

        (void)state;
        open_session(f, T0, T0 + 40);
        core_belief(&f->core, T0 + 40, &b);
        assert_int_equal(b.session, 42);
        assert_false(b.validating);
        assert_int_equal(b.acked_sent, T0);
        assert_int_equal(b.jeopardy_at, T0 + 5001);
        assert_int_equal(b.expires_at, T0 + 9000);
        belief_then_tick(f, T0 + 5000, BATON_SESSION_LIVE);
        belief_then_tick(f, T0 + 5001, BATON_SESSION_JEOPARDY);

        keepalive(f, T0 + 5001, T0 + 5002, T0 + 5100);
        acked = T0 + 5002;
        core_belief(&f->core, T0 + 5100, &b);
        assert_int_equal(b.acked_sent, acked);
        assert_int_equal(b.jeopardy_at, acked + TTL / 2 + 1);
        assert_int_equal(b.expires_at, acked + TTL - 1000);
        belief_then_tick(f, T0 + 5100, BATON_SESSION_LIVE);
        belief_then_tick(f, acked + 5000, BATON_SESSION_LIVE);
        belief_then_tick(f, acked + 5001, BATON_SESSION_JEOPARDY);
        belief_then_tick(f, acked + 8999, BATON_SESSION_JEOPARDY);
        belief_then_tick(f, acked + 9000, BATON_SESSION_EXPIRED);

        core_belief(&f->core, acked + 9001, &b);
        assert_int_equal(b.session, 0);
        assert_int_equal(b.state, BATON_SESSION_EXPIRED);
        assert_int_equal(b.expires_at, 0);
        clientfix_free(f);
}

/* A belief read ahead changes nothing: at expires_at it says EXPIRED while
 * the session stays LIVE, open and usable until a tick comes. */
static void belief_changes_nothing(void **state)
{
        struct clientfix *f = clientfix_new(TTL, 2);
        struct core_belief b;

        (void)state;
        open_session(f, T0, T0 + 5);
        core_belief(&f->core, T0 + 9000, &b);
        assert_int_equal(b.state, BATON_SESSION_EXPIRED);
        assert_int_equal(b.session, 42);
        core_belief(&f->core, T0 + 5001, &b);
        assert_int_equal(b.state, BATON_SESSION_JEOPARDY);
        assert_int_equal(f->core.session.state, BATON_SESSION_LIVE);
        assert_int_equal(f->core.session.id, 42);
        assert_true(session_usable(&f->core.session));
        assert_int_equal(core_next_tick(&f->core), T0 + 3333);
        clientfix_free(f);
}

/* The cluster's word ends the lease before its time: EXPIRED from then on,
 * whatever the bounds said. */
static void cluster_ends_it_early(void **state)
{
        struct clientfix *f = clientfix_new(TTL, 3);
        struct core_belief b;

        (void)state;
        open_session(f, T0, T0 + 5);
        session_ended(&f->core.session, 42, BATON_EEXPIRED, T0 + 100);
        belief_then_tick(f, T0 + 101, BATON_SESSION_EXPIRED);
        core_belief(&f->core, T0 + 101, &b);
        assert_int_equal(b.session, 0);
        clientfix_free(f);
}

/* An OPEN answered more than TTL/2 after its send is validated first: the
 * belief says so and keeps the state reported before (none), as the tick
 * does however late; the acknowledged keepalive makes it LIVE, dated from
 * its own send. */
static void validating_keeps_the_state(void **state)
{
        struct clientfix *f = clientfix_new(TTL, 4);
        struct core_belief b;

        (void)state;
        open_session(f, T0, T0 + 5001);
        core_belief(&f->core, T0 + 20000, &b);
        assert_true(b.validating);
        assert_int_equal(b.session, 42);
        assert_int_equal(b.state, BATON_SESSION_NONE);
        belief_then_tick(f, T0 + 5001, BATON_SESSION_NONE);
        keepalive(f, T0 + 5001, T0 + 5002, T0 + 5050);
        core_belief(&f->core, T0 + 5050, &b);
        assert_false(b.validating);
        assert_int_equal(b.acked_sent, T0 + 5002);
        belief_then_tick(f, T0 + 5050, BATON_SESSION_LIVE);
        clientfix_free(f);
}

/* One tracer call, as struct core_tracer makes it. */
struct traced {
        char what;  /* 'h' a hold, 'l' the lease */
        int change; /* enum core_hold_change; the state for 'l' */
        char name[8];
        uint64_t session, token;
        uint32_t count;
        int64_t now;
};

struct trace {
        struct traced ev[32];
        unsigned n;
};

static void on_hold(void *data, const struct locks_hold *h, int change,
                    uint32_t count, int64_t now)
{
        struct trace *t = data;
        struct traced *e;

        assert_true(t->n < 32);
        e = &t->ev[t->n++];
        memset(e, 0, sizeof *e);
        e->what = 'h';
        e->change = change;
        assert_true(h->name_len < sizeof e->name);
        memcpy(e->name, h->name, h->name_len);
        e->session = h->session;
        e->token = h->token;
        e->count = count;
        e->now = now;
}

static void on_lease(void *data, uint64_t session, int state, int64_t now)
{
        struct trace *t = data;
        struct traced *e;

        assert_true(t->n < 32);
        e = &t->ev[t->n++];
        memset(e, 0, sizeof *e);
        e->what = 'l';
        e->change = state;
        e->session = session;
        e->now = now;
}

/* The tracer's call `i` was about the hold `name`: `change`, `count`
 * holds of `token` left, at `now`. */
static void hold_was(const struct trace *t, unsigned i, int change,
                     const char *name, uint64_t token, uint32_t count,
                     int64_t now)
{
        assert_true(i < t->n);
        assert_int_equal(t->ev[i].what, 'h');
        assert_int_equal(t->ev[i].change, change);
        assert_string_equal(t->ev[i].name, name);
        assert_int_equal(t->ev[i].session, 42);
        assert_int_equal(t->ev[i].token, token);
        assert_int_equal(t->ev[i].count, count);
        assert_int_equal(t->ev[i].now, now);
}

/* The tracer's call `i` reported `state` of session 42 at `now`. */
static void lease_was(const struct trace *t, unsigned i, int state, int64_t now)
{
        assert_true(i < t->n);
        assert_int_equal(t->ev[i].what, 'l');
        assert_int_equal(t->ev[i].change, state);
        assert_int_equal(t->ev[i].session, 42);
        assert_int_equal(t->ev[i].now, now);
}

/* The cluster's answer `res` to the session's command of `type` on `name`
 * for owner 1, handled at `now` as the registry hands a caller's answer
 * over (outcome_final()). */
static void answered(struct clientfix *f, uint8_t type, const char *name,
                     struct proto_result res, int64_t now)
{
        struct command k;
        struct request *r;
        int rv;

        memset(&k, 0, sizeof k);
        k.type = type;
        k.name = name;
        k.name_len = (uint8_t)strlen(name);
        k.owner = 1;
        k.token = res.token;
        r = session_command(&f->core.session, &k, REQUEST_COMMAND, &rv);
        assert_non_null(r);
        r->status = 0;
        r->res = res;
        r->state = REQUEST_DONE;
        outcome_final(&f->core.session, r, REGISTRY_ANSWERED, now);
        request_free(r);
}

/* What core_holds() lists, as "name:token:count " in order. */
static void list_one(void *data, const struct locks_hold *h)
{
        char *out = data;
        size_t n = strlen(out);

        snprintf(out + n, 128 - n, "%.*s:%llu:%u ", (int)h->name_len, h->name,
                 (unsigned long long)h->token, (unsigned)h->count);
}

static const char *holds(struct clientfix *f, char out[128])
{
        out[0] = '\0';
        core_holds(&f->core, list_one, out);
        return out;
}

/* Grants, a re-entry, releases and the expiry, each as the tracer hears of
 * it with the time of the answer or tick that made it, and what
 * core_holds() lists in between; an answer that changes nothing is not
 * heard of. */
static void tracer_follows_the_table(void **state)
{
        struct clientfix *f = clientfix_new(TTL, 5);
        struct core_tracer tracer = {NULL, on_hold, on_lease};
        struct trace t = {.n = 0};
        char out[128];

        (void)state;
        tracer.data = &t;
        f->env.tracer = &tracer;
        open_session(f, T0, T0 + 5);
        lease_was(&t, 0, BATON_SESSION_LIVE, T0 + 5);
        answered(f, COMMAND_ACQUIRE, "A",
                 (struct proto_result){
                     .kind = PROTO_KIND_GRANTED, .token = 7, .count = 1},
                 T0 + 10);
        hold_was(&t, 1, CORE_HOLD_SET, "A", 7, 1, T0 + 10);
        answered(f, COMMAND_ACQUIRE, "B",
                 (struct proto_result){
                     .kind = PROTO_KIND_GRANTED, .token = 8, .count = 1},
                 T0 + 11);
        hold_was(&t, 2, CORE_HOLD_SET, "B", 8, 1, T0 + 11);
        answered(f, COMMAND_ACQUIRE, "A",
                 (struct proto_result){
                     .kind = PROTO_KIND_REENTERED, .token = 7, .count = 2},
                 T0 + 12);
        hold_was(&t, 3, CORE_HOLD_SET, "A", 7, 2, T0 + 12);
        assert_string_equal(holds(f, out), "A:7:2 B:8:1 ");
        /* The same answer again (acquire.c records what outcome did). */
        assert_int_equal(locks_set_at(&f->core.locks, 42, "B", 1, 1,
                                      COMMAND_MODE_EXCLUSIVE, 8, 1, T0 + 13),
                         0);
        assert_int_equal(t.n, 4);

        answered(f, COMMAND_RELEASE, "A",
                 (struct proto_result){
                     .kind = PROTO_KIND_RELEASED, .token = 7, .count = 1},
                 T0 + 20);
        hold_was(&t, 4, CORE_HOLD_RELEASED, "A", 7, 1, T0 + 20);
        answered(f, COMMAND_RELEASE, "A",
                 (struct proto_result){
                     .kind = PROTO_KIND_RELEASED, .token = 7, .count = 0},
                 T0 + 21);
        hold_was(&t, 5, CORE_HOLD_RELEASED, "A", 7, 0, T0 + 21);
        assert_string_equal(holds(f, out), "B:8:1 ");

        core_lease_tick(&f->core, T0 + 5001);
        lease_was(&t, 6, BATON_SESSION_JEOPARDY, T0 + 5001);
        assert_int_equal(t.n, 7);
        core_lease_tick(&f->core, T0 + 9000);
        lease_was(&t, 7, BATON_SESSION_EXPIRED, T0 + 9000);
        hold_was(&t, 8, CORE_HOLD_ENDED, "B", 8, 0, T0 + 9000);
        assert_int_equal(t.n, 9);
        assert_string_equal(holds(f, out), "");
        clientfix_free(f);
}

/* A detached session's holds are forgotten, not lost: FORGOTTEN for each,
 * then the state NONE, at the time of the detach; a hold recorded with no
 * time at hand comes with LOCKS_NO_TIME. */
static void tracer_hears_the_detach(void **state)
{
        struct clientfix *f = clientfix_new(TTL, 6);
        struct core_tracer tracer = {NULL, on_hold, on_lease};
        struct trace t = {.n = 0};
        char out[128];

        (void)state;
        tracer.data = &t;
        f->env.tracer = &tracer;
        open_session(f, T0, T0 + 5);
        assert_int_equal(locks_set_at(&f->core.locks, 42, "C", 1, 1,
                                      COMMAND_MODE_SHARED, 3, 1, LOCKS_NO_TIME),
                         0);
        hold_was(&t, 1, CORE_HOLD_SET, "C", 3, 1, LOCKS_NO_TIME);
        assert_string_equal(holds(f, out), "C:3:1 ");
        assert_int_equal(session_detach(&f->core.session, NULL, T0 + 30), 42);
        hold_was(&t, 2, CORE_HOLD_FORGOTTEN, "C", 3, 0, T0 + 30);
        lease_was(&t, 3, BATON_SESSION_NONE, T0 + 30);
        assert_int_equal(t.n, 4);
        assert_string_equal(holds(f, out), "");
        clientfix_free(f);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(belief_is_what_the_tick_reports),
            cmocka_unit_test(belief_changes_nothing),
            cmocka_unit_test(cluster_ends_it_early),
            cmocka_unit_test(validating_keeps_the_state),
            cmocka_unit_test(tracer_follows_the_table),
            cmocka_unit_test(tracer_hears_the_detach),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
