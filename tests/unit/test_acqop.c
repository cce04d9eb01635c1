/* An acquire call stepped in libbaton's client core (acqop.h), with no
 * handle, thread or clock: the server's answers are scripted, the time is
 * virtual, and what the call sends is read from the link's outbox. Each
 * way of recovering an ACQUIRE whose outcome the cluster forgot
 * (BATON_ESEQ) is driven here, and what the call answers at each end. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../include/baton.h"
#include "../../src/proto/reply.h"
#include "clientfix.h"

#define T0      100000 /* an arbitrary start: nothing reads the clock */
#define TTL     10000
#define WAIT    1000 /* the call's wait */
#define TIMEOUT 2000 /* a request's */
#define SESSION 42
#define OWNER   1

/* A call on a fixture with a live session on a connection. */
struct call {
        struct clientfix *f;
        uint64_t conn;
        struct acqop a;
        char why[256];
};

/* The frames in the link's outbox (clientfix_take()), their commands
 * decoded: at most `max` into `out`; their count. */
static size_t take(struct call *c, struct clientfix_frame *out, size_t max)
{
        return clientfix_take(c->f, out, max, true);
}

/* The one command the call sent since the last look (an ATTACH before it,
 * on a connection's first command, is skipped). */
static struct clientfix_frame sent(struct call *c)
{
        struct clientfix_frame out[4];
        size_t n = take(c, out, 4), i = 0;

        if (n == 2 && out[0].h.type == PROTO_ATTACH) {
                i = 1;
        }
        assert_int_equal(n, i + 1);
        return out[i];
}

/* The server's frame `buf` (`n` bytes, whole) arrives at `now`. */
static void feed(struct call *c, const uint8_t *buf, size_t n, int64_t now)
{
        struct proto_header h;

        assert_int_equal(proto_header_decode(&h, buf, PROTO_MAX_BODY), 0);
        assert_int_equal(PROTO_HEADER_SIZE + h.length, n);
        link_conn_frame(&c->f->core.link, c->conn, &h, buf + PROTO_HEADER_SIZE,
                        now);
}

/* The RESULT `res` of the frame `fr` arrives at `now`. */
static void answer(struct call *c, const struct clientfix_frame *fr,
                   struct proto_result res, int64_t now)
{
        uint8_t buf[256];
        size_t n = proto_write_result(buf, sizeof buf, fr->h.id, 0, &res);

        assert_true(n > 0);
        feed(c, buf, n, now);
}

/* A grant to this call's session and owner: `token`, `count` holds. */
static struct proto_result grant(uint8_t kind, uint64_t token, uint32_t count)
{
        return (struct proto_result){.kind = kind,
                                     .session = SESSION,
                                     .owner = OWNER,
                                     .token = token,
                                     .count = count};
}

/* Step the call at `now`. */
static int step(struct call *c, int64_t now)
{
        return acqop_step(&c->f->core, &c->a, now, c->why, sizeof c->why);
}

/* The call's holds of "L" in `mode`, as the lock table has them. */
static uint32_t holds(struct call *c, int mode)
{
        return locks_count(&c->f->core.locks, SESSION, "L", 1, OWNER, mode);
}

/* A fixture whose link is up (greeted) and whose call asking for `ask`
 * has been stepped at T0 through its OPEN, answered: session 42. */
static struct call *call_new(const struct acqop_ask *ask, int64_t wait_ms,
                             uint64_t seed)
{
        struct call *c = calloc(1, sizeof *c);
        uint8_t pong[PROTO_HEADER_SIZE];
        struct clientfix_frame out[4];

        assert_non_null(c);
        c->f = clientfix_new(TTL, seed);
        c->conn = link_dial(&c->f->core.link, T0, true);
        assert_int_not_equal(c->conn, 0);
        link_conn_up(&c->f->core.link, c->conn, T0);
        assert_int_equal(take(c, out, 4), 1); /* the greeting PING */
        proto_write_empty(pong, sizeof pong, c->f->core.link.hello, PROTO_PONG);
        feed(c, pong, sizeof pong, T0);
        assert_true(link_up(&c->f->core.link));

        acqop_init(&c->f->core, &c->a, "L", 1, OWNER, ask, wait_ms, TIMEOUT,
                   T0);
        assert_int_equal(acqop_deadline(&c->a), T0 + TIMEOUT);
        assert_int_equal(step(c, T0), 1);
        out[0] = sent(c);
        assert_int_equal(out[0].k.type, COMMAND_OPEN);
        answer(c, &out[0], (struct proto_result){.session = SESSION}, T0 + 5);
        return c;
}

static void call_free(struct call *c)
{
        clientfix_free(c->f);
        free(c);
}

/* A RESULT of `status` alone. */
static struct proto_result result(int status)
{
        return (struct proto_result){.status = status};
}

/* The call, stepped after its OPEN, asks: what it sent. */
static struct clientfix_frame asks(struct call *c)
{
        assert_int_equal(step(c, T0 + 6), 1);
        return sent(c);
}

/* `res`, the answer to `fr`, arrives at `t`, and the call stepped then
 * sends one frame more: that frame. */
static struct clientfix_frame then_sends(struct call *c,
                                         const struct clientfix_frame *fr,
                                         struct proto_result res, int64_t t)
{
        answer(c, fr, res, t);
        assert_int_equal(step(c, t), 1);
        return sent(c);
}

/* `res`, the answer to `fr`, arrives at `t`, and the call stepped then
 * ends with `rv`. */
static void then_ends(struct call *c, const struct clientfix_frame *fr,
                      struct proto_result res, int64_t t, int rv)
{
        answer(c, fr, res, t);
        assert_int_equal(step(c, t), rv);
}

/* The same, ended with a grant of `token`. */
static void then_granted(struct call *c, const struct clientfix_frame *fr,
                         struct proto_result res, int64_t t, uint64_t token)
{
        then_ends(c, fr, res, t, 0);
        assert_int_equal(c->a.res.token, token);
}

/* `res`, the answer to `fr`, arrives at `t`, and the call asks again: an
 * ACQUIRE waiting for what is left of WAIT, which is returned. */
static struct clientfix_frame asks_again(struct call *c,
                                         const struct clientfix_frame *fr,
                                         struct proto_result res, int64_t t)
{
        struct clientfix_frame a2 = then_sends(c, fr, res, t);

        assert_int_equal(a2.k.type, COMMAND_ACQUIRE);
        assert_int_equal(a2.k.wait_ms, WAIT - (t - T0));
        return a2;
}

/* Nothing more went out: the call is freed. */
static void quiet_free(struct call *c)
{
        struct clientfix_frame none[2];

        assert_int_equal(take(c, none, 2), 0);
        call_free(c);
}

/* The call asks; its ACQUIRE, waiting all of WAIT, is answered BATON_ESEQ
 * at `t`: the call CANCELs that seq. The CANCEL sent. */
static struct clientfix_frame forgotten(struct call *c, int64_t t,
                                        struct clientfix_frame *a1)
{
        struct clientfix_frame cancel;

        *a1 = asks(c);
        assert_true(a1->k.type == COMMAND_ACQUIRE ||
                    a1->k.type == COMMAND_MULTI);
        assert_int_equal(a1->k.wait_ms, WAIT);
        assert_int_equal(acqop_deadline(&c->a), T0 + WAIT + TIMEOUT);
        assert_int_equal(
            acqop_verdict(&c->f->core, &c->a, false, T0 + 6, c->why, 256), 0);
        cancel = then_sends(c, a1, result(BATON_ESEQ), t);
        assert_int_equal(cancel.k.type, COMMAND_CANCEL);
        assert_int_equal(cancel.k.target, a1->k.seq);
        assert_true(cancel.k.seq > a1->k.seq);
        return cancel;
}

/* The call's ACQUIRE forgotten (at T0 + 100) and its CANCEL answered
 * BATON_ENOTWAITING at T0 + 200: the frame the call sends next to learn
 * what became of the ACQUIRE, a QUERY or a try. */
static struct clientfix_frame not_waiting(struct call *c,
                                          struct clientfix_frame *a1)
{
        struct clientfix_frame cancel = forgotten(c, T0 + 100, a1);

        return then_sends(c, &cancel, result(BATON_ENOTWAITING), T0 + 200);
}

/* CANCELLED: the forgotten wait was still queued. The call asks again,
 * under a new seq, for what is left of its wait, and is granted. */
static void eseq_cancelled_asks_again(void **state)
{
        static const struct acqop_ask ask = {.mode = COMMAND_MODE_EXCLUSIVE};
        struct call *c = call_new(&ask, WAIT, 1);
        struct clientfix_frame a1, cancel, a2;

        (void)state;
        cancel = forgotten(c, T0 + 100, &a1);
        a2 = asks_again(c, &cancel, result(0), T0 + 300);
        assert_true(a2.k.seq > cancel.k.seq);
        then_granted(c, &a2, grant(PROTO_KIND_GRANTED, 9, 1), T0 + 310, 9);
        assert_int_equal(holds(c, COMMAND_MODE_EXCLUSIVE), 1);
        quiet_free(c);
}

/* CANCELLED, but nothing is left of the wait: BATON_ETIMEDOUT, and
 * nothing more goes out. */
static void eseq_cancelled_nothing_left(void **state)
{
        static const struct acqop_ask ask = {.mode = COMMAND_MODE_EXCLUSIVE};
        struct call *c = call_new(&ask, WAIT, 2);
        struct clientfix_frame a1, cancel;

        (void)state;
        cancel = forgotten(c, T0 + 100, &a1);
        then_ends(c, &cancel, result(0), T0 + WAIT, BATON_ETIMEDOUT);
        quiet_free(c);
}

/* The CANCEL fails otherwise (the session ended): so does the call. */
static void eseq_cancel_fails(void **state)
{
        static const struct acqop_ask ask = {.mode = COMMAND_MODE_EXCLUSIVE};
        struct call *c = call_new(&ask, WAIT, 3);
        struct clientfix_frame a1, cancel;

        (void)state;
        cancel = forgotten(c, T0 + 100, &a1);
        then_ends(c, &cancel, result(BATON_ENOSESSION), T0 + 200,
                  BATON_ENOSESSION);
        quiet_free(c);
}

/* NOT_WAITING, an exclusive lock: a QUERY names the holder. This session
 * and owner with a hold more than before: the forgotten ACQUIRE was
 * granted, and the call returns that grant, recorded. */
static void eseq_queried_granted(void **state)
{
        static const struct acqop_ask ask = {.mode = COMMAND_MODE_EXCLUSIVE};
        struct call *c = call_new(&ask, WAIT, 4);
        struct clientfix_frame a1, query;

        (void)state;
        query = not_waiting(c, &a1);
        assert_int_equal(query.h.type, PROTO_QUERY);
        assert_int_equal(holds(c, COMMAND_MODE_EXCLUSIVE), 0);
        then_granted(c, &query, grant(PROTO_KIND_HOLDER, 11, 1), T0 + 210, 11);
        assert_int_equal(c->a.res.status, 0);
        assert_int_equal(holds(c, COMMAND_MODE_EXCLUSIVE), 1);
        quiet_free(c);
}

/* NOT_WAITING, and the QUERY names another session: the forgotten ACQUIRE
 * was not granted, and the call asks again for what is left. */
static void eseq_queried_not_granted(void **state)
{
        static const struct acqop_ask ask = {.mode = COMMAND_MODE_EXCLUSIVE};
        struct call *c = call_new(&ask, WAIT, 5);
        struct clientfix_frame a1, query, a2;
        struct proto_result other = grant(PROTO_KIND_HOLDER, 12, 1);

        (void)state;
        query = not_waiting(c, &a1);
        other.session = SESSION + 1;
        a2 = asks_again(c, &query, other, T0 + 400);
        then_granted(c, &a2, grant(PROTO_KIND_GRANTED, 13, 1), T0 + 450, 13);
        call_free(c);
}

/* NOT_WAITING, a reader: a try of the read lock asks. REENTERED with two
 * holds: the forgotten ACQUIRE was granted, the try's own hold goes back
 * with a RELEASE of its token, and the call returns the grant with the
 * holds the RELEASE left. */
static void eseq_shared_tried_given_back(void **state)
{
        static const struct acqop_ask ask = {.mode = COMMAND_MODE_SHARED};
        struct call *c = call_new(&ask, WAIT, 6);
        struct clientfix_frame a1, try, rel;

        (void)state;
        try = not_waiting(c, &a1);
        assert_int_equal(try.k.type, COMMAND_ACQUIRE);
        assert_int_equal(try.k.mode, COMMAND_MODE_SHARED);
        assert_int_equal(try.k.wait_ms, COMMAND_WAIT_TRY);
        rel = then_sends(c, &try, grant(PROTO_KIND_REENTERED, 77, 2), T0 + 210);
        assert_int_equal(rel.k.type, COMMAND_RELEASE);
        assert_int_equal(rel.k.token, 77);
        assert_int_equal(rel.k.owner, OWNER);
        assert_true(rel.k.seq > try.k.seq);
        then_granted(c, &rel, grant(PROTO_KIND_RELEASED, 77, 1), T0 + 220, 77);
        assert_int_equal(c->a.res.count, 1);
        quiet_free(c);
}

/* NOT_WAITING, a reader, and the try is GRANTED its first hold: the
 * forgotten ACQUIRE was not granted, the try's grant is the call's, and
 * nothing goes back. */
static void eseq_shared_tried_granted(void **state)
{
        static const struct acqop_ask ask = {.mode = COMMAND_MODE_SHARED};
        struct call *c = call_new(&ask, WAIT, 7);
        struct clientfix_frame a1, try;

        (void)state;
        try = not_waiting(c, &a1);
        then_granted(c, &try, grant(PROTO_KIND_GRANTED, 80, 1), T0 + 210, 80);
        quiet_free(c);
}

/* NOT_WAITING, a semaphore's permits: the try is refused BATON_EHELD with
 * the grant's token. The forgotten ACQUIRE was granted: the call returns
 * it, recorded in the lock table. */
static void eseq_permits_held(void **state)
{
        static const struct acqop_ask ask = {
            .mode = COMMAND_MODE_SEMAPHORE, .permits = 2, .limit = 3};
        struct call *c = call_new(&ask, WAIT, 8);
        struct clientfix_frame a1, try;
        struct proto_result held = grant(0, 78, 1);

        (void)state;
        try = not_waiting(c, &a1);
        assert_int_equal(try.k.wait_ms, COMMAND_WAIT_TRY);
        assert_int_equal(try.k.permits, 2);
        assert_int_equal(try.k.limit, 3);
        held.status = BATON_EHELD;
        then_granted(c, &try, held, T0 + 210, 78);
        assert_int_equal(c->a.res.status, 0);
        assert_int_equal(holds(c, COMMAND_MODE_SEMAPHORE), 1);
        quiet_free(c);
}

/* NOT_WAITING, a multi-lock: the try of the same names is refused
 * BATON_EHELD with the grant's token. The forgotten MULTI was granted:
 * the call returns it, every name recorded in its mode. */
static void eseq_multi_held(void **state)
{
        struct acqop_ask ask = {.n_names = 2};
        uint8_t list[64];
        size_t used = 0;
        struct call *c;
        struct clientfix_frame a1, try;
        struct proto_result held = grant(0, 79, 1);

        (void)state;
        assert_int_equal(command_list_add(list, sizeof list, &used,
                                          COMMAND_MODE_EXCLUSIVE, "L", 1),
                         0);
        assert_int_equal(command_list_add(list, sizeof list, &used,
                                          COMMAND_MODE_SHARED, "M", 1),
                         0);
        ask.list = list;
        ask.list_len = (uint16_t)used;
        c = call_new(&ask, WAIT, 13);
        try = not_waiting(c, &a1);
        assert_int_equal(a1.k.type, COMMAND_MULTI);
        assert_int_equal(try.k.type, COMMAND_MULTI);
        assert_int_equal(try.k.wait_ms, COMMAND_WAIT_TRY);
        assert_int_equal(try.k.list_len, used);
        /* The command borrows from the body it was decoded from, in
         * sent()'s array, gone by now: the list is read again from this
         * copy's own body. */
        assert_int_equal(command_decode(&try.k, try.body, try.h.length), 0);
        assert_memory_equal(try.k.list, list, used);
        held.status = BATON_EHELD;
        then_granted(c, &try, held, T0 + 210, 79);
        assert_int_equal(holds(c, COMMAND_MODE_EXCLUSIVE), 1);
        assert_int_equal(locks_count(&c->f->core.locks, SESSION, "M", 1, OWNER,
                                     COMMAND_MODE_SHARED),
                         1);
        quiet_free(c);
}

/* NOT_WAITING, and the try is BUSY: it was not granted; the call asks
 * again, waiting for what is left. */
static void eseq_tried_busy(void **state)
{
        static const struct acqop_ask ask = {.mode = COMMAND_MODE_SHARED};
        struct call *c = call_new(&ask, WAIT, 9);
        struct clientfix_frame a1, try, a2;

        (void)state;
        try = not_waiting(c, &a1);
        a2 = asks_again(c, &try, result(BATON_EBUSY), T0 + 250);
        assert_true(a2.k.seq > try.k.seq);
        call_free(c);
}

/* A try (no wait) answered BATON_ESEQ is not recovered: nothing waited,
 * and the call says so. */
static void try_eseq_told(void **state)
{
        static const struct acqop_ask ask = {.mode = COMMAND_MODE_EXCLUSIVE};
        struct call *c = call_new(&ask, 0, 10);
        struct clientfix_frame a1;

        (void)state;
        a1 = asks(c);
        assert_int_equal(a1.k.wait_ms, COMMAND_WAIT_TRY);
        then_ends(c, &a1, result(BATON_ESEQ), T0 + 10, BATON_ESEQ);
        quiet_free(c);
}

/* No answer by the deadline: a wait that ran out is BATON_ETIMEDOUT, told
 * in BATON_ENOANSWER's words, and the ACQUIRE sent is left to the core,
 * which withdraws it with a CANCEL; a try's is BATON_ENOANSWER. */
static void deadline_ends_the_call(void **state)
{
        static const struct acqop_ask ask = {.mode = COMMAND_MODE_EXCLUSIVE};
        const char *words = baton_strerror(BATON_ENOANSWER);
        struct call *c = call_new(&ask, WAIT, 11);
        struct clientfix_frame a1, cancel, out[4];
        int64_t end = T0 + WAIT + TIMEOUT;
        size_t n;

        (void)state;
        a1 = asks(c);
        assert_int_equal(acqop_deadline(&c->a), end);
        assert_int_equal(
            acqop_verdict(&c->f->core, &c->a, true, end, c->why, 256),
            BATON_ETIMEDOUT);
        assert_memory_equal(c->why, words, strlen(words));
        assert_int_equal(c->a.phase, ACQOP_DONE);
        /* The core's next round withdraws it (an idle connection's PING
         * may go first). */
        registry_step(&c->f->core.registry, end);
        n = take(c, out, 4);
        assert_true(n >= 1);
        cancel = out[n - 1];
        assert_int_equal(cancel.k.type, COMMAND_CANCEL);
        assert_int_equal(cancel.k.target, a1.k.seq);
        call_free(c);

        c = call_new(&ask, 0, 12);
        (void)asks(c);
        assert_int_equal(acqop_deadline(&c->a), T0 + TIMEOUT);
        assert_int_equal(
            acqop_verdict(&c->f->core, &c->a, true, T0 + TIMEOUT, c->why, 256),
            BATON_ENOANSWER);
        call_free(c);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(eseq_cancelled_asks_again),
            cmocka_unit_test(eseq_cancelled_nothing_left),
            cmocka_unit_test(eseq_cancel_fails),
            cmocka_unit_test(eseq_queried_granted),
            cmocka_unit_test(eseq_queried_not_granted),
            cmocka_unit_test(eseq_shared_tried_given_back),
            cmocka_unit_test(eseq_shared_tried_granted),
            cmocka_unit_test(eseq_permits_held),
            cmocka_unit_test(eseq_multi_held),
            cmocka_unit_test(eseq_tried_busy),
            cmocka_unit_test(try_eseq_told),
            cmocka_unit_test(deadline_ends_the_call),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
