/* Cases of test_proto on SESSIONS and SESSIONS_REPLY. */
#include "test_proto_sessions.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../../include/baton.h"
#include "../../src/proto/command.h"
#include "../../src/proto/proto.h"
#include "../../src/proto/sesslist.h"
#include "protofix.h"

#define REPLY_MAX (PROTO_HEADER_SIZE + PROTO_MAX_BODY)

void sessions_request_round_trip(void **state)
{
        uint8_t buf[64];
        const uint8_t *body;
        uint64_t id;
        uint8_t mode;
        uint32_t limit;
        size_t n, len;

        (void)state;
        n = proto_write_sessions(buf, sizeof buf, 7, 42, PROTO_SESSIONS_AFTER,
                                 PROTO_SESSIONS_MAX);
        assert_int_equal(n, PROTO_HEADER_SIZE + 8 + 1 + 4);
        body = check_frame(buf, n, PROTO_SESSIONS, 7, &len);
        assert_int_equal(proto_read_sessions(body, len, &id, &mode, &limit), 0);
        assert_int_equal(id, 42);
        assert_int_equal(mode, PROTO_SESSIONS_AFTER);
        assert_int_equal(limit, PROTO_SESSIONS_MAX);

        n = proto_write_sessions(buf, sizeof buf, 8, 9, PROTO_SESSIONS_ONE, 1);
        body = check_frame(buf, n, PROTO_SESSIONS, 8, &len);
        assert_int_equal(proto_read_sessions(body, len, &id, &mode, &limit), 0);
        assert_int_equal(id, 9);
        assert_int_equal(mode, PROTO_SESSIONS_ONE);

        /* Writers refuse what readers would. */
        assert_int_equal(proto_write_sessions(buf, sizeof buf, 1, 0,
                                              PROTO_SESSIONS_AFTER, 0),
                         0);
        assert_int_equal(proto_write_sessions(buf, sizeof buf, 1, 0,
                                              PROTO_SESSIONS_AFTER,
                                              PROTO_SESSIONS_MAX + 1),
                         0);
        assert_int_equal(
            proto_write_sessions(buf, sizeof buf, 1, 5, PROTO_SESSIONS_ONE, 2),
            0);
        assert_int_equal(proto_write_sessions(buf, sizeof buf, 1, 5, 2, 1), 0);
}

void sessions_request_bad_bodies(void **state)
{
        uint8_t body[14] = {0};
        uint64_t id;
        uint8_t mode;
        uint32_t limit;

        (void)state;
        body[9] = 1; /* limit 1, mode 0 */
        assert_int_equal(proto_read_sessions(body, 13, &id, &mode, &limit), 0);
        assert_int_equal(proto_read_sessions(body, 12, &id, &mode, &limit),
                         BATON_EMALFORMED); /* truncated */
        assert_int_equal(proto_read_sessions(body, 14, &id, &mode, &limit),
                         BATON_EMALFORMED); /* trailing */
        body[9] = 0;
        assert_int_equal(proto_read_sessions(body, 13, &id, &mode, &limit),
                         BATON_EMALFORMED); /* limit 0 */
        body[9] = PROTO_SESSIONS_MAX + 1;
        assert_int_equal(proto_read_sessions(body, 13, &id, &mode, &limit),
                         BATON_EMALFORMED);
        body[9] = 1;
        body[8] = 2; /* no such mode */
        assert_int_equal(proto_read_sessions(body, 13, &id, &mode, &limit),
                         BATON_EMALFORMED);
        body[8] = PROTO_SESSIONS_ONE;
        body[9] = 2; /* one session, two wanted */
        assert_int_equal(proto_read_sessions(body, 13, &id, &mode, &limit),
                         BATON_EMALFORMED);
}

/* Two sessions: one holding a lock and waiting for another, one idle. */
static void two_sessions(struct proto_session *s, struct proto_session_hold *h)
{
        memset(s, 0, 2 * sizeof *s);
        memset(h, 0, 2 * sizeof *h);
        h[0] = (struct proto_session_hold){
            0, COMMAND_MODE_EXCLUSIVE, 3, 17, 2, 0, 0, {"db", 2}};
        h[1] = (struct proto_session_hold){
            1, COMMAND_MODE_SEMAPHORE, 3, 0, 0, 4, 5000, {"pool", 4}};
        s[0].id = 12;
        s[0].client_name = (struct proto_string){"worker", 6};
        s[0].identity = (struct proto_string){"CN=worker", 9};
        s[0].address = (struct proto_string){"10.0.0.7", 8};
        s[0].ttl_ms = 10000;
        s[0].lock_delay_ms = 500;
        s[0].left_ms = 8000;
        s[0].idle_ms = 2000;
        s[0].revoked = 1;
        s[0].n_grants = 1;
        s[0].n_waits = 1;
        s[0].n_holds = 2;
        s[0].holds = h;
        s[1].id = 30;
        s[1].ttl_ms = 3000;
        s[1].left_ms = s[1].idle_ms = PROTO_SESSION_UNKNOWN;
}

void sessions_reply_round_trip(void **state)
{
        struct proto_session s[2], back[2];
        struct proto_session_hold h[2], holds[8];
        uint8_t *buf = malloc(REPLY_MAX);
        const uint8_t *body;
        uint32_t n;
        bool more;
        size_t len, w;

        (void)state;
        two_sessions(s, h);
        w = proto_write_sessions_reply(buf, REPLY_MAX, 5, s, 2, true);
        assert_int_equal(
            w, PROTO_HEADER_SIZE + PROTO_SESSIONS_REPLY_FIXED +
                   PROTO_SESSION_SIZE(6, 9, 8) + PROTO_SESSION_HOLD_SIZE(2) +
                   PROTO_SESSION_HOLD_SIZE(4) + PROTO_SESSION_SIZE(0, 0, 0));
        body = check_frame(buf, w, PROTO_SESSIONS_REPLY, 5, &len);
        assert_int_equal(
            proto_read_sessions_reply(body, len, back, 2, holds, 8, &n, &more),
            0);
        assert_int_equal(n, 2);
        assert_true(more);
        assert_int_equal(back[0].id, 12);
        assert_true(string_is(back[0].client_name, "worker"));
        assert_true(string_is(back[0].identity, "CN=worker"));
        assert_true(string_is(back[0].address, "10.0.0.7"));
        assert_int_equal(back[0].lock_delay_ms, 500);
        assert_int_equal(back[0].left_ms, 8000);
        assert_int_equal(back[0].idle_ms, 2000);
        assert_int_equal(back[0].revoked, 1);
        assert_int_equal(back[0].n_holds, 2);
        assert_true(string_is(back[0].holds[0].name, "db"));
        assert_int_equal(back[0].holds[0].token, 17);
        assert_int_equal(back[0].holds[0].count, 2);
        assert_int_equal(back[0].holds[1].waiting, 1);
        assert_int_equal(back[0].holds[1].permits, 4);
        assert_int_equal(back[0].holds[1].wait_ms, 5000);
        assert_int_equal(back[1].id, 30);
        assert_int_equal(back[1].n_holds, 0);
        assert_null(back[1].holds);
        assert_int_equal(back[1].left_ms, PROTO_SESSION_UNKNOWN);

        /* An empty page: the end. */
        w = proto_write_sessions_reply(buf, REPLY_MAX, 6, NULL, 0, false);
        assert_int_equal(w, PROTO_HEADER_SIZE + PROTO_SESSIONS_REPLY_FIXED);
        body = check_frame(buf, w, PROTO_SESSIONS_REPLY, 6, &len);
        assert_int_equal(
            proto_read_sessions_reply(body, len, back, 2, holds, 8, &n, &more),
            0);
        assert_int_equal(n, 0);
        assert_false(more);
        free(buf);
}

/* One session at its largest, every string and hold at its longest,
 * fits one frame, and one hold more is refused. */
void sessions_reply_largest_fits(void **state)
{
        static char name[COMMAND_NAME_MAX], ident[PROTO_IDENTITY_MAX],
            client[PROTO_CLIENT_NAME_MAX], addr[PROTO_ADDRESS_MAX];
        struct proto_session_hold *h =
            calloc(PROTO_SESSION_HOLDS_MAX + 1, sizeof *h);
        struct proto_session_hold *holds =
            calloc(PROTO_MAX_BODY / PROTO_SESSION_HOLD_MIN, sizeof *holds);
        uint8_t *buf = malloc(REPLY_MAX);
        struct proto_session s, back;
        const uint8_t *body;
        uint32_t n;
        bool more;
        size_t len, w, i;

        (void)state;
        memset(name, 'n', sizeof name);
        memset(ident, 'i', sizeof ident);
        memset(client, 'c', sizeof client);
        memset(addr, 'a', sizeof addr);
        for (i = 0; i <= PROTO_SESSION_HOLDS_MAX; i++) {
                h[i].name = (struct proto_string){name, sizeof name};
                h[i].token = i + 1;
        }
        memset(&s, 0, sizeof s);
        s.id = 1;
        s.client_name = (struct proto_string){client, sizeof client};
        s.identity = (struct proto_string){ident, sizeof ident};
        s.address = (struct proto_string){addr, sizeof addr};
        s.holds = h;
        s.n_holds = PROTO_SESSION_HOLDS_MAX;
        w = proto_write_sessions_reply(buf, REPLY_MAX, 1, &s, 1, false);
        assert_true(w > 0 && w <= REPLY_MAX);
        body = check_frame(buf, w, PROTO_SESSIONS_REPLY, 1, &len);
        assert_int_equal(
            proto_read_sessions_reply(body, len, &back, 1, holds,
                                      PROTO_MAX_BODY / PROTO_SESSION_HOLD_MIN,
                                      &n, &more),
            0);
        assert_int_equal(back.n_holds, PROTO_SESSION_HOLDS_MAX);
        assert_int_equal(back.holds[PROTO_SESSION_HOLDS_MAX - 1].token,
                         PROTO_SESSION_HOLDS_MAX);
        s.n_holds = PROTO_SESSION_HOLDS_MAX + 1;
        assert_int_equal(
            proto_write_sessions_reply(buf, REPLY_MAX, 1, &s, 1, false), 0);
        free(h);
        free(holds);
        free(buf);
}

void sessions_reply_bad_bodies(void **state)
{
        struct proto_session s[2], back[2];
        struct proto_session_hold h[2], holds[8];
        uint8_t *buf = malloc(REPLY_MAX);
        uint8_t *body;
        uint32_t n;
        bool more;
        size_t len, w;

        (void)state;
        two_sessions(s, h);
        w = proto_write_sessions_reply(buf, REPLY_MAX, 5, s, 2, false);
        body = buf + PROTO_HEADER_SIZE;
        len = w - PROTO_HEADER_SIZE;
        /* More records than room, truncated, trailing, holds beyond room. */
        assert_int_equal(
            proto_read_sessions_reply(body, len, back, 1, holds, 8, &n, &more),
            BATON_EMALFORMED);
        assert_int_equal(n, 0);
        assert_int_equal(proto_read_sessions_reply(body, len - 1, back, 2,
                                                   holds, 8, &n, &more),
                         BATON_EMALFORMED);
        assert_int_equal(proto_read_sessions_reply(body, len + 1, back, 2,
                                                   holds, 8, &n, &more),
                         BATON_EMALFORMED);
        assert_int_equal(
            proto_read_sessions_reply(body, len, back, 2, holds, 1, &n, &more),
            BATON_EMALFORMED);
        /* A count the body cannot hold; a `more` of 2. */
        body[0] = 0xff;
        assert_int_equal(
            proto_read_sessions_reply(body, len, back, 2, holds, 8, &n, &more),
            BATON_EMALFORMED);
        body[0] = 2;
        body[4] = 2;
        assert_int_equal(
            proto_read_sessions_reply(body, len, back, 2, holds, 8, &n, &more),
            BATON_EMALFORMED);
        body[4] = 0;
        assert_int_equal(
            proto_read_sessions_reply(body, len, back, 2, holds, 8, &n, &more),
            0);
        /* Writers refuse a NUL in a string and a hold without a name. */
        s[0].identity = (struct proto_string){"a\0b", 3};
        assert_int_equal(
            proto_write_sessions_reply(buf, REPLY_MAX, 5, s, 2, false), 0);
        s[0].identity = (struct proto_string){"", 0};
        h[0].name.len = 0;
        assert_int_equal(
            proto_write_sessions_reply(buf, REPLY_MAX, 5, s, 2, false), 0);
        free(buf);
}
