/* libbaton's client core (libbatonclientcore.la: the link's decisions, the
 * registry, the session, the outcomes) driven as a simulation would drive
 * it: connections come up and fail when the test says, the server's frames
 * are scripted, the time is virtual and the randomness seeded, and what
 * the core sends is read from the link's outbox. No clock, thread or
 * socket: the core's host is this file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../include/baton.h"
#include "../../src/client/clock.h" /* CLOCK_NEVER only */
#include "../../src/proto/keepalive.h"
#include "../../src/proto/list.h"
#include "../../src/proto/query.h"
#include "../../src/proto/reply.h"
#include "../../src/proto/watch.h"
#include "clientfix.h"

#define T0  100000 /* an arbitrary start: nothing reads the clock */
#define TTL 10000

/* The frames in the link's outbox (clientfix_take()), not decoded: at
 * most `max` into `out`; their count. */
static size_t take(struct clientfix *f, struct clientfix_frame *out, size_t max)
{
        return clientfix_take(f, out, max, false);
}

/* The server's frame `buf` (`n` bytes, whole) arrives on `conn` at `now`. */
static void feed(struct clientfix *f, uint64_t conn, const uint8_t *buf,
                 size_t n, int64_t now)
{
        struct proto_header h;

        assert_true(n >= PROTO_HEADER_SIZE);
        assert_int_equal(proto_header_decode(&h, buf, PROTO_MAX_BODY), 0);
        assert_int_equal(PROTO_HEADER_SIZE + h.length, n);
        link_conn_frame(&f->core.link, conn, &h, buf + PROTO_HEADER_SIZE, now);
}

/* A RESULT of `res` for the frame `id`. */
static void feed_result(struct clientfix *f, uint64_t conn, uint64_t id,
                        struct proto_result res, int64_t now)
{
        uint8_t buf[256];
        size_t n = proto_write_result(buf, sizeof buf, id, 0, &res);

        assert_true(n > 0);
        feed(f, conn, buf, n, now);
}

/* The attempt `conn` comes up at `now`: TCP through, its greeting PING
 * answered. */
static void greet(struct clientfix *f, uint64_t conn, int64_t now)
{
        uint8_t pong[PROTO_HEADER_SIZE];
        struct clientfix_frame out[4];

        link_conn_up(&f->core.link, conn, now);
        assert_int_equal(take(f, out, 4), 1);
        assert_int_equal(out[0].h.type, PROTO_PING);
        proto_write_empty(pong, sizeof pong, f->core.link.hello, PROTO_PONG);
        feed(f, conn, pong, sizeof pong, now);
        assert_true(link_up(&f->core.link));
}

/* The connection the core dials at `now` comes up, on `peer`. */
static uint64_t connect_up(struct clientfix *f, int64_t now, const char *peer)
{
        uint64_t conn = link_dial(&f->core.link, now, true);

        assert_int_not_equal(conn, 0);
        assert_string_equal(f->core.link.peer, peer);
        greet(f, conn, now);
        return conn;
}

/* A call opens the session at `now` on the live `conn`, answered 5 ms
 * later: session 42. */
static void open_session(struct clientfix *f, uint64_t conn, int64_t now)
{
        uint64_t seen = f->core.session.epoch;
        struct clientfix_frame out[4];
        char why[256];

        assert_int_equal(
            session_ensure_step(&f->core.session, &seen, now, why, 256), 1);
        assert_true(
            f->core.registry.write_now); /* the caller's thread writes it */
        f->core.registry.write_now = false;
        assert_int_equal(take(f, out, 4), 1);
        assert_int_equal(out[0].h.type, PROTO_COMMAND);
        assert_int_equal(out[0].h.id, f->core.session.opening->id);
        feed_result(f, conn, out[0].h.id,
                    (struct proto_result){.status = 0, .session = 42}, now + 5);
        assert_int_equal(
            session_ensure_step(&f->core.session, &seen, now + 6, why, 256), 0);
        assert_int_equal(f->core.session.state, BATON_SESSION_LIVE);
}

/* OPEN → LIVE, dated from the OPEN's send; the keepalive at TTL/3 goes out
 * behind the ATTACH that proves the connection owns the session, and its
 * answer dates the lease from the keepalive's send: JEOPARDY from
 * acked + TTL/2 + 1, EXPIRED at acked + TTL - margin, to the ms. */
static void open_keepalive_lease(void **state)
{
        struct clientfix *f = clientfix_new(TTL, 1);
        uint64_t conn = connect_up(f, T0, "127.0.0.1:1");
        int64_t acked, margin = f->core.session.margin_ms;
        struct clientfix_frame out[4];
        uint8_t buf[64];
        size_t n;

        (void)state;
        open_session(f, conn, T0);
        assert_int_equal(f->core.session.acked_sent, T0);
        session_tick(&f->core.session, T0 + TTL / 3 - 1);
        assert_null(f->core.session.keepalive);
        session_tick(&f->core.session, T0 + TTL / 3);
        assert_non_null(f->core.session.keepalive);
        assert_int_equal(take(f, out, 4), 2);
        assert_int_equal(out[0].h.type, PROTO_ATTACH);
        assert_int_equal(out[1].h.type, PROTO_KEEPALIVE);
        n = proto_write_keepalive_ok(buf, sizeof buf, out[1].h.id, 0, TTL, 0);
        assert_true(n > 0);
        feed(f, conn, buf, n, T0 + TTL / 3 + 40);
        acked = T0 + TTL / 3;
        assert_int_equal(f->core.session.acked_sent,
                         acked); /* the send, not the answer */

        session_tick(&f->core.session, acked + TTL / 2);
        assert_int_equal(f->core.session.state, BATON_SESSION_LIVE);
        session_tick(&f->core.session, acked + TTL / 2 + 1);
        assert_int_equal(f->core.session.state, BATON_SESSION_JEOPARDY);
        session_tick(&f->core.session, acked + TTL - margin - 1);
        assert_int_equal(f->core.session.state, BATON_SESSION_JEOPARDY);
        session_tick(&f->core.session, acked + TTL - margin);
        assert_int_equal(f->core.session.state, BATON_SESSION_EXPIRED);
        clientfix_free(f);
}

/* A read the connection lost goes out again, byte for byte, on the next
 * one; answered BATON_EUNKNOWN, it goes out again at the retry time the
 * environment's jitter gives, not a ms earlier. */
static void resend_and_retry(void **state)
{
        struct clientfix *f = clientfix_new(TTL, 2);
        uint64_t conn = connect_up(f, T0, "127.0.0.1:1");
        struct request *r = request_read(PROTO_QUERY, "L", 1, 0);
        struct clientfix_frame first[2], out[2];
        struct rng before, after;
        int64_t t, want;

        (void)state;
        assert_non_null(r);
        r->kind = REQUEST_CALL;
        registry_submit(&f->core.registry, r, T0);
        assert_int_equal(take(f, first, 2), 1);
        link_fail(&f->core.link, T0 + 10, false);
        assert_false(link_up(&f->core.link));

        t = link_next_event(&f->core.link, true);
        conn = connect_up(f, t, "127.0.0.1:1");
        registry_step(&f->core.registry, t);
        assert_int_equal(take(f, out, 2), 1);
        assert_int_equal(out[0].h.type, first[0].h.type);
        assert_int_equal(out[0].h.length, first[0].h.length);
        assert_memory_equal(out[0].body, first[0].body, first[0].h.length);
        assert_int_equal(r->sends, 2);

        before = f->rng;
        feed_result(f, conn, out[0].h.id,
                    (struct proto_result){.status = BATON_EUNKNOWN}, t + 5);
        after = f->rng;
        f->rng = before; /* the same draw again, for the expected time */
        want = t + 5 + coreenv_jitter(&f->env, 50);
        f->rng = after;
        assert_int_equal(r->not_before, want);
        assert_int_equal(registry_next_event(&f->core.registry), want);
        registry_step(&f->core.registry, want - 1);
        assert_int_equal(take(f, out, 2), 0);
        registry_step(&f->core.registry, want);
        assert_int_equal(take(f, out, 2), 1);
        assert_memory_equal(out[0].body, first[0].body, first[0].h.length);
        assert_int_equal(r->sends, 3);
        registry_drop(&f->core.registry, r);
        clientfix_free(f);
}

/* NOT_LEADER naming the leader: the core leaves the node, dials the
 * leader it names next, and sends the request there again. */
static void not_leader_followed(void **state)
{
        struct clientfix *f = clientfix_new(TTL, 3);
        uint64_t conn = connect_up(f, T0, "127.0.0.1:1");
        struct request *r = request_read(PROTO_QUERY, "L", 1, 0);
        struct clientfix_frame first[2], out[2];
        uint8_t buf[128];
        size_t n;
        int64_t t;

        (void)state;
        assert_non_null(r);
        r->kind = REQUEST_CALL;
        registry_submit(&f->core.registry, r, T0);
        assert_int_equal(take(f, first, 2), 1);
        n = proto_write_not_leader(buf, sizeof buf, 0, 2, "127.0.0.2:1");
        feed(f, conn, buf, n, T0 + 3);
        assert_false(link_up(&f->core.link));
        t = link_next_event(&f->core.link, true);
        connect_up(f, t, "127.0.0.2:1");
        registry_step(&f->core.registry, t);
        assert_int_equal(take(f, out, 2), 1);
        assert_memory_equal(out[0].body, first[0].body, first[0].h.length);
        registry_drop(&f->core.registry, r);
        clientfix_free(f);
}

/* The pending request of the command `cmd`, or NULL. */
static struct request *pending_cmd(struct clientfix *f, uint8_t cmd)
{
        struct queue *q;

        QUEUE_FOREACH(q, &f->core.registry.list)
        {
                struct request *r = QUEUE_DATA(q, struct request, link);
                if (r->type == PROTO_COMMAND && r->cmd == cmd &&
                    request_pending(r)) {
                        return r;
                }
        }
        return NULL;
}

/* A blocking ACQUIRE, the session's first command on the connection, goes
 * out behind an ATTACH. Its caller gives up: the wait is withdrawn with
 * one CANCEL on that connection (not one a round), and the grant that
 * races the CANCEL is released. */
static void withdrawn_wait_released(void **state)
{
        struct clientfix *f = clientfix_new(TTL, 4);
        uint64_t conn = connect_up(f, T0, "127.0.0.1:1");
        struct request *w = NULL, *cancel, *release;
        struct clientfix_frame out[4];
        struct command k;

        (void)state;
        open_session(f, conn, T0);
        memset(&k, 0, sizeof k);
        k.type = COMMAND_ACQUIRE;
        k.name = "L";
        k.name_len = 1;
        k.owner = 1;
        k.wait_ms = 5000;
        assert_int_equal(session_submit_step(&f->core.session, &k, T0 + 10, &w),
                         0);
        assert_int_equal(w->kind, REQUEST_WAIT);
        assert_int_equal(take(f, out, 4), 2);
        assert_int_equal(out[0].h.type, PROTO_ATTACH);
        assert_int_equal(out[1].h.id, w->id);

        registry_abandon(&f->core.registry, w, T0 + 20);
        assert_int_equal(w->state, REQUEST_BACKGROUND);
        registry_step(&f->core.registry, T0 + 20);
        cancel = pending_cmd(f, COMMAND_CANCEL);
        assert_non_null(cancel);
        assert_ptr_equal(w->cancel, cancel);
        assert_int_equal(take(f, out, 4), 1);
        assert_int_equal(out[0].h.id, cancel->id);
        registry_step(&f->core.registry, T0 + 21);
        assert_int_equal(take(f, out, 4), 0);

        feed_result(f, conn, w->id,
                    (struct proto_result){.status = 0, .token = 7}, T0 + 30);
        release = pending_cmd(f, COMMAND_RELEASE);
        assert_non_null(release);
        assert_int_equal(take(f, out, 4), 1);
        assert_int_equal(out[0].h.id, release->id);
        clientfix_free(f);
}

/* The core through its facade, as a simulation's loop drives it: it wants
 * and dials a connection once a call has a request on its way (the same
 * attempt, asked again, until it ends), sends what is pending
 * on its round, says when its next round is due (the PING of an idle
 * connection), what a waiting call answers, and which callback to run. */
static void facade_round(void **state)
{
        struct clientfix *f = clientfix_new(TTL, 5);
        struct core *k = &f->core;
        uint64_t seen = k->session.epoch, mark = registry_mark(&k->registry);
        struct notify_event *e;
        struct clientfix_frame out[4];
        uint64_t conn;
        char why[256];
        int64_t t;

        (void)state;
        assert_false(core_wants_link(k));
        assert_int_equal(core_dial(k, T0), 0);
        assert_int_equal(core_next_tick(k), CLOCK_NEVER);
        assert_int_equal(session_ensure_step(&k->session, &seen, T0, why, 256),
                         1);
        assert_true(core_wants_link(k)); /* the OPEN, queued */
        conn = core_dial(k, T0 + 1);
        assert_int_not_equal(conn, 0);
        assert_string_equal(k->link.peer, "127.0.0.1:1");
        assert_int_equal(core_dial(k, T0 + 1), conn); /* a level */
        greet(f, conn, T0 + 1);
        assert_int_equal(take(f, out, 4), 0);
        core_tick(k, T0 + 1);
        assert_int_equal(take(f, out, 4), 1);
        assert_int_equal(out[0].h.id, k->session.opening->id);
        feed_result(f, conn, out[0].h.id,
                    (struct proto_result){.status = 0, .session = 42}, T0 + 6);
        assert_int_equal(
            session_ensure_step(&k->session, &seen, T0 + 7, why, 256), 0);
        assert_int_equal(core_verdict(k, mark, NULL, false, why, 256), 0);

        t = core_next_tick(k);
        assert_int_equal(t, T0 + 6 + k->registry.hb_idle_ms);
        core_tick(k, t - 1);
        assert_int_equal(take(f, out, 4), 0);
        core_tick(k, t);
        assert_int_equal(take(f, out, 4), 1);
        assert_int_equal(out[0].h.type, PROTO_PING);

        e = core_next_notice(k);
        assert_non_null(e);
        assert_int_equal(e->kind, NOTIFY_STATE);
        assert_int_equal(e->state, BATON_SESSION_LIVE);
        free(e);
        assert_null(core_next_notice(k));
        clientfix_free(f);
}

/* An ACQUIRE given up after it went out goes on in the background; answered
 * BATON_ESEQ (the cluster forgot its outcome), the core asks with a QUERY
 * whether it was granted, and gives back the hold QUERY finds. */
static void background_eseq_queried(void **state)
{
        struct clientfix *f = clientfix_new(TTL, 6);
        uint64_t conn = connect_up(f, T0, "127.0.0.1:1");
        struct request *a = NULL, *query, *release;
        struct clientfix_frame out[4];
        struct command k;
        struct queue *q;

        (void)state;
        open_session(f, conn, T0);
        memset(&k, 0, sizeof k);
        k.type = COMMAND_ACQUIRE;
        k.name = "L";
        k.name_len = 1;
        k.owner = 1;
        assert_int_equal(session_submit_step(&f->core.session, &k, T0 + 10, &a),
                         0);
        assert_int_equal(take(f, out, 4), 2); /* ATTACH, ACQUIRE */
        registry_abandon(&f->core.registry, a, T0 + 20);
        assert_int_equal(a->state, REQUEST_BACKGROUND);

        feed_result(f, conn, a->id, (struct proto_result){.status = BATON_ESEQ},
                    T0 + 30);
        query = NULL;
        QUEUE_FOREACH(q, &f->core.registry.list)
        {
                struct request *r = QUEUE_DATA(q, struct request, link);
                if (r->kind == REQUEST_RECHECK && request_pending(r)) {
                        query = r;
                }
        }
        assert_non_null(query);
        assert_int_equal(take(f, out, 4), 1);
        assert_int_equal(out[0].h.type, PROTO_QUERY);
        assert_int_equal(out[0].h.id, query->id);

        feed_result(f, conn, query->id,
                    (struct proto_result){.status = 0,
                                          .kind = PROTO_KIND_HOLDER,
                                          .session = 42,
                                          .owner = 1,
                                          .token = 9,
                                          .count = 1},
                    T0 + 40);
        release = pending_cmd(f, COMMAND_RELEASE);
        assert_non_null(release);
        assert_int_equal(take(f, out, 4), 1);
        assert_int_equal(out[0].h.id, release->id);
        clientfix_free(f);
}

/* The hold changes a tracer heard of: how many, and the last. */
struct heard {
        unsigned n;
        int change;
        uint64_t token;
        uint32_t count;
        int64_t now;
};

static void heard_hold(void *data, const struct locks_hold *h, int change,
                       uint32_t count, int64_t now)
{
        struct heard *w = data;

        w->n++;
        w->change = change;
        w->token = h->token;
        w->count = count;
        w->now = now;
}

/* The keepalive the core sends at `t` on `conn`, answered 10 ms later:
 * `revoked` of the session's grants have been revoked so far. */
static void keepalive_revoked(struct clientfix *f, uint64_t conn, int64_t t,
                              uint32_t revoked)
{
        struct clientfix_frame out[4];
        uint8_t buf[64];
        size_t n;

        session_tick(&f->core.session, t);
        assert_int_equal(take(f, out, 4), 1);
        assert_int_equal(out[0].h.type, PROTO_KEEPALIVE);
        assert_int_equal(out[0].h.flags, PROTO_FLAG_REVOKED);
        n = proto_write_keepalive_ok(buf, sizeof buf, out[0].h.id,
                                     PROTO_FLAG_REVOKED, TTL, revoked);
        assert_true(n > 0);
        feed(f, conn, buf, n, t + 10);
}

/* The core verifies its hold of L: one QUERY for L's holders, answered at
 * `now` with the `n` holders `e`. */
static void verify_answered(struct clientfix *f, uint64_t conn,
                            const struct proto_lock_entry *e, uint32_t n,
                            int64_t now)
{
        struct clientfix_frame out[4];
        struct proto_string name;
        uint8_t buf[512];
        size_t len;

        assert_int_equal(take(f, out, 4), 1);
        assert_int_equal(out[0].h.type, PROTO_QUERY);
        assert_int_equal(out[0].h.flags, PROTO_FLAG_HOLDERS);
        assert_int_equal(proto_read_query(out[0].body, out[0].h.length, &name),
                         0);
        assert_int_equal(name.len, 1);
        assert_memory_equal(name.p, "L", 1);
        len = proto_write_list_reply(buf, sizeof buf, out[0].h.id,
                                     PROTO_FLAG_HOLDERS, e, n, false);
        assert_true(len > 0);
        feed(f, conn, buf, len, now);
}

/* An administrator revokes the session's grant of L: the keepalive answer
 * says one more grant was revoked, the core asks with a QUERY who holds L,
 * and the hold the answer no longer names is lost (on_lock_lost, and the
 * tracer hears REVOKED at the answer's time). The control: a revoke of
 * another grant, whose QUERY still names the hold, keeps it. */
static void revoke_verified_lost(void **state)
{
        struct clientfix *f = clientfix_new(TTL, 8);
        uint64_t conn = connect_up(f, T0, "127.0.0.1:1");
        struct core_tracer tracer = {NULL, heard_hold, NULL};
        struct proto_lock_entry e = {.name = {"L", 1},
                                     .session = 42,
                                     .owner = 1,
                                     .token = 9,
                                     .count = 1};
        struct heard w = {0};
        struct request *a = NULL;
        struct notify_event *ev;
        struct clientfix_frame out[4];
        struct command k;
        int64_t t1 = T0 + TTL / 3, t2 = t1 + TTL / 3;

        (void)state;
        open_session(f, conn, T0);
        tracer.data = &w;
        f->env.tracer = &tracer;
        memset(&k, 0, sizeof k);
        k.type = COMMAND_ACQUIRE;
        k.name = "L";
        k.name_len = 1;
        k.owner = 1;
        assert_int_equal(session_submit_step(&f->core.session, &k, T0 + 10, &a),
                         0);
        assert_int_equal(take(f, out, 4), 2); /* ATTACH, ACQUIRE */
        feed_result(f, conn, a->id,
                    (struct proto_result){.status = 0,
                                          .kind = PROTO_KIND_GRANTED,
                                          .token = 9,
                                          .count = 1},
                    T0 + 20);
        registry_drop(&f->core.registry, a); /* collected */
        assert_int_equal(
            locks_count(&f->core.locks, 42, "L", 1, 1, LOCKS_ANY_MODE), 1);
        assert_int_equal(w.n, 1);
        assert_int_equal(w.change, CORE_HOLD_SET);

        keepalive_revoked(f, conn, t1, 1);
        verify_answered(f, conn, &e, 1, t1 + 20);
        assert_int_equal(
            locks_count(&f->core.locks, 42, "L", 1, 1, LOCKS_ANY_MODE), 1);
        assert_int_equal(w.n, 1);

        keepalive_revoked(f, conn, t2, 2);
        e.session = 77; /* L went to another session */
        e.token = 10;
        verify_answered(f, conn, &e, 1, t2 + 20);
        assert_int_equal(
            locks_count(&f->core.locks, 42, "L", 1, 1, LOCKS_ANY_MODE), 0);
        assert_int_equal(w.n, 2);
        assert_int_equal(w.change, CORE_HOLD_REVOKED);
        assert_int_equal(w.token, 9);
        assert_int_equal(w.count, 0);
        assert_int_equal(w.now, t2 + 20);
        ev = core_next_notice(&f->core);
        assert_non_null(ev);
        assert_int_equal(ev->kind, NOTIFY_STATE); /* LIVE, from the OPEN */
        free(ev);
        ev = core_next_notice(&f->core);
        assert_non_null(ev);
        assert_int_equal(ev->kind, NOTIFY_LOST);
        assert_string_equal(ev->name, "L");
        assert_int_equal(ev->token, 9);
        free(ev);
        assert_null(core_next_notice(&f->core));
        assert_int_equal(f->core.session.state, BATON_SESSION_LIVE);
        clientfix_free(f);
}

/* The position a WATCH frame asks to start from. */
static void watch_from(const uint8_t *body, size_t len, uint64_t *index,
                       uint32_t *ord)
{
        struct proto_watch w;

        assert_int_equal(proto_read_watch(body, len, &w), 0);
        *index = w.from_index;
        *ord = w.from_ord;
}

/* A watch sent again resumes where it stands: where the node started it
 * before any event came, then after the last event delivered. */
static void watch_resumes(void **state)
{
        struct clientfix *f = clientfix_new(TTL, 7);
        uint64_t conn = connect_up(f, T0, "127.0.0.1:1");
        struct request *r = request_watch("L", 1, 0, 0, 0);
        struct proto_watch_event e;
        struct clientfix_frame out[2];
        uint8_t buf[PROTO_HEADER_SIZE + PROTO_WATCH_EVENT_MAX];
        uint64_t index;
        uint32_t ord;
        size_t n;
        int64_t t;

        (void)state;
        assert_non_null(r);
        r->kind = REQUEST_WATCH;
        registry_submit(&f->core.registry, r, T0);
        assert_int_equal(take(f, out, 2), 1);
        watch_from(out[0].body, out[0].h.length, &index, &ord);
        assert_int_equal(index, 0); /* from the node's own index */

        feed_result(f, conn, r->id,
                    (struct proto_result){
                        .status = 0, .kind = PROTO_KIND_WATCHING, .index = 100},
                    T0 + 5);
        assert_true(r->watching);
        watch_from(r->frame + PROTO_HEADER_SIZE, r->len - PROTO_HEADER_SIZE,
                   &index, &ord);
        assert_int_equal(index, 100);
        assert_int_equal(ord, 0);

        memset(&e, 0, sizeof e);
        e.index = 105;
        e.ord = 2;
        e.kind = PROTO_EVENT_GRANTED;
        e.session = 7;
        e.owner = 1;
        e.token = 3;
        e.name = (struct proto_string){"L", 1};
        e.value = (struct proto_string){"", 0};
        n = proto_write_watch_event(buf, sizeof buf, r->id, &e);
        assert_true(n > 0);
        feed(f, conn, buf, n, T0 + 20);

        link_fail(&f->core.link, T0 + 30, false);
        t = link_next_event(&f->core.link, true);
        connect_up(f, t, "127.0.0.1:1");
        registry_step(&f->core.registry, t);
        assert_int_equal(take(f, out, 2), 1);
        assert_int_equal(out[0].h.type, PROTO_WATCH);
        watch_from(out[0].body, out[0].h.length, &index, &ord);
        assert_int_equal(index, 105);
        assert_int_equal(ord, 2);
        clientfix_free(f);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(open_keepalive_lease),
            cmocka_unit_test(resend_and_retry),
            cmocka_unit_test(not_leader_followed),
            cmocka_unit_test(withdrawn_wait_released),
            cmocka_unit_test(background_eseq_queried),
            cmocka_unit_test(revoke_verified_lost),
            cmocka_unit_test(watch_resumes),
            cmocka_unit_test(facade_round),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
