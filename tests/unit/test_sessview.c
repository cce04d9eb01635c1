/* The SESSIONS read on the request core (sessview.h), on the fake host of
 * corefix.h: pages bounded by the frame, each session whole on one page;
 * one session by id; a session that is not live named; each session with
 * the leader's lease, and each holder of a lock with the same figure. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "../../include/baton/errors.h"
#include "../../src/proto/list.h"
#include "../../src/proto/query.h"
#include "../../src/proto/reply.h"
#include "../../src/proto/sesslist.h"
#include "corefix.h"

#define TERM 7
#define WALL 1700000000000ULL
#define TTL  10000
#define BIG  120 /* locks of a big session: two of them overfill a frame */

/* Session `nonce`, opened by entry `*index`, holding `n` locks of 255-byte
 * names that start with `tag`. */
static uint64_t session_with(struct corefix *x, uint64_t *index, uint64_t nonce,
                             unsigned n, char tag)
{
        struct command open = {.type = COMMAND_OPEN, .ttl_ms = TTL};
        char name[COMMAND_NAME_MAX];
        uint64_t s;
        unsigned i;

        open.nonce = nonce;
        s = corefix_apply(x, (*index)++, &open).session;
        memset(name, tag, sizeof name);
        for (i = 0; i < n; i++) {
                struct command acq = {.type = COMMAND_ACQUIRE,
                                      .session = s,
                                      .seq = i + 1,
                                      .ack = i + 1,
                                      .owner = 1,
                                      .name = name,
                                      .name_len = sizeof name};
                snprintf(name + 1, 8, "%07u", i);
                name[8] = tag;
                assert_int_equal(corefix_apply(x, (*index)++, &acq).status, 0);
        }
        return s;
}

/* Send the read `frame` of `len` bytes, let its barrier apply, and read
 * the answer: its header in `h`, its body in `body`. */
static void ask_frame(struct corefix *x, uint8_t *frame, size_t len,
                      struct proto_header *h, const uint8_t **body)
{
        size_t m;

        corefix_send_frame(x, frame, len);
        m = corefix_mark(x);
        gateway_flush(&x->g, &x->now, WALL);
        corefix_expect_count(x, m, COREFIX_BARRIER, 1);
        corefix_complete(x, corefix_nth(x, m, COREFIX_BARRIER, 0)->sent, 0);
        assert_true(corefix_next_reply(x, h, body));
}

/* Send SESSIONS (id, mode, limit) and read the answer, as ask_frame(). */
static void ask(struct corefix *x, uint64_t id, uint8_t mode, uint32_t limit,
                struct proto_header *h, const uint8_t **body)
{
        uint8_t frame[64];

        ask_frame(x, frame,
                  proto_write_sessions(frame, sizeof frame, x->next_id++, id,
                                       mode, limit),
                  h, body);
}

/* A page: `*n` sessions into `s` (holds into a buffer of the caller's). */
static bool page(struct corefix *x, uint64_t after, struct proto_session *s,
                 struct proto_session_hold *holds, uint32_t *n)
{
        struct proto_header h;
        const uint8_t *body;
        bool more;

        ask(x, after, PROTO_SESSIONS_AFTER, 10, &h, &body);
        assert_int_equal(h.type, PROTO_SESSIONS_REPLY);
        assert_int_equal(proto_read_sessions_reply(
                             body, h.length, s, 10, holds,
                             PROTO_MAX_BODY / PROTO_SESSION_HOLD_MIN, n, &more),
                         0);
        return more;
}

static void pages_keep_each_session_whole(void **state)
{
        struct corefix *x = *state;
        struct proto_session_hold *holds =
            calloc(PROTO_MAX_BODY / PROTO_SESSION_HOLD_MIN, sizeof *holds);
        struct proto_session s[10];
        uint64_t index = 41, a, b, c;
        uint32_t n;

        gateway_on_ready(&x->g, &x->now, TERM);
        a = session_with(x, &index, 1, BIG, 'a');
        b = session_with(x, &index, 2, BIG, 'b');
        c = session_with(x, &index, 3, 2, 'c');
        x->fake.applied = index - 1;
        /* a fills most of a frame, b would not fit whole beside it. */
        assert_true(page(x, 0, s, holds, &n));
        assert_int_equal(n, 1);
        assert_int_equal(s[0].id, a);
        assert_int_equal(s[0].n_holds, BIG);
        assert_int_equal(s[0].n_grants, BIG);
        assert_true(s[0].left_ms <= TTL && s[0].left_ms + s[0].idle_ms == TTL);
        /* The next page, after a: b whole, then c; the last. */
        assert_false(page(x, a, s, holds, &n));
        assert_int_equal(n, 2);
        assert_int_equal(s[0].id, b);
        assert_int_equal(s[0].n_holds, BIG);
        assert_int_equal(s[1].id, c);
        assert_int_equal(s[1].n_holds, 2);
        assert_int_equal(s[1].holds[0].name.len, COMMAND_NAME_MAX);
        /* Past the end: an empty last page. */
        assert_false(page(x, c, s, holds, &n));
        assert_int_equal(n, 0);
        free(holds);
}

static void one_session_or_its_status(void **state)
{
        struct corefix *x = *state;
        struct proto_session_hold holds[8];
        struct command close = {.type = COMMAND_CLOSE, .seq = 1, .ack = 1};
        struct proto_session s;
        struct proto_result r;
        struct proto_header h;
        const uint8_t *body;
        uint64_t index = 41, a, b;
        uint32_t n;
        bool more;

        gateway_on_ready(&x->g, &x->now, TERM);
        a = session_with(x, &index, 1, 1, 'a');
        b = session_with(x, &index, 2, 0, 'b');
        close.session = b;
        assert_int_equal(corefix_apply(x, index++, &close).status, 0);
        x->fake.applied = index - 1;
        ask(x, a, PROTO_SESSIONS_ONE, 1, &h, &body);
        assert_int_equal(h.type, PROTO_SESSIONS_REPLY);
        assert_int_equal(proto_read_sessions_reply(body, h.length, &s, 1, holds,
                                                   8, &n, &more),
                         0);
        assert_int_equal(n, 1);
        assert_int_equal(s.id, a);
        assert_int_equal(s.n_holds, 1);
        assert_int_equal(s.holds[0].token, a + 1);
        ask(x, b, PROTO_SESSIONS_ONE, 1, &h, &body);
        assert_int_equal(h.type, PROTO_RESULT);
        assert_int_equal(proto_read_result(body, h.length, h.flags, &r), 0);
        assert_int_equal(r.status, BATON_ECLOSED);
        ask(x, 999, PROTO_SESSIONS_ONE, 1, &h, &body);
        assert_int_equal(proto_read_result(body, h.length, h.flags, &r), 0);
        assert_int_equal(r.status, BATON_ENOSESSION);
}

/* A QUERY of every holder with PROTO_FLAG_LEFT: each holder with the
 * time the leader's lease leaves its session, as SESSIONS says it;
 * without the flag, the entries as before. */
static void holders_with_time_left(void **state)
{
        struct corefix *x = *state;
        struct proto_session_hold holds[8];
        struct proto_lock_entry e[2];
        struct proto_session s;
        struct proto_header h;
        const uint8_t *body;
        uint8_t frame[PROTO_HEADER_SIZE + 1 + COMMAND_NAME_MAX];
        char name[COMMAND_NAME_MAX];
        uint64_t index = 41, a;
        uint32_t n;
        bool more;
        uint16_t flags = PROTO_FLAG_HOLDERS | PROTO_FLAG_LEFT;

        gateway_on_ready(&x->g, &x->now, TERM);
        a = session_with(x, &index, 1, 1, 'a');
        x->fake.applied = index - 1;
        memset(name, 'a', sizeof name);
        memcpy(name + 1, "0000000", 7); /* session_with()'s first lock */
        ask_frame(x, frame,
                  proto_write_query(frame, sizeof frame, x->next_id++, flags,
                                    name, sizeof name),
                  &h, &body);
        assert_int_equal(h.type, PROTO_LIST_REPLY);
        assert_int_equal(h.flags, flags);
        assert_int_equal(
            proto_read_list_reply(body, h.length, h.flags, e, 2, &n, &more), 0);
        assert_int_equal(n, 1);
        assert_int_equal(e[0].session, a);
        ask(x, a, PROTO_SESSIONS_ONE, 1, &h, &body);
        assert_int_equal(proto_read_sessions_reply(body, h.length, &s, 1, holds,
                                                   8, &n, &more),
                         0);
        assert_true(s.left_ms <= TTL);
        assert_int_equal(e[0].left_ms, s.left_ms);
        ask_frame(x, frame,
                  proto_write_query(frame, sizeof frame, x->next_id++,
                                    PROTO_FLAG_HOLDERS, name, sizeof name),
                  &h, &body);
        assert_int_equal(h.flags, PROTO_FLAG_HOLDERS);
        assert_int_equal(
            proto_read_list_reply(body, h.length, h.flags, e, 2, &n, &more), 0);
        assert_int_equal(n, 1);
        assert_int_equal(e[0].left_ms, 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(pages_keep_each_session_whole,
                                            corefix_setup, corefix_teardown),
            cmocka_unit_test_setup_teardown(one_session_or_its_status,
                                            corefix_setup, corefix_teardown),
            cmocka_unit_test_setup_teardown(holders_with_time_left,
                                            corefix_setup, corefix_teardown),
        };

        return cmocka_run_group_tests_name("sessview", tests, NULL, NULL);
}
