/* Cases of test_proto on LIST. */
#include "test_proto_list.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../include/baton.h"
#include "../../src/proto/command.h"
#include "../../src/proto/proto.h"
#include "../../src/proto/list.h"
#include "protofix.h"

/* --- LIST ----------------------------------------------------------------- */

void round_trip_list(void **state)
{
        char longest[COMMAND_NAME_MAX + 1];
        uint8_t buf[FRAME_MAX];
        struct proto_string s;
        const uint8_t *body;
        size_t n, len;
        uint32_t limit;

        (void)state;
        n = proto_write_list(buf, sizeof buf, 9, 0, "db/", 3, 25);
        assert_int_equal(n, PROTO_HEADER_SIZE + 1 + 3 + 4);
        body = check_frame(buf, n, PROTO_LIST, 9, &len);
        assert_int_equal(proto_read_list(body, len, &s, &limit), 0);
        assert_true(string_is(s, "db/"));
        assert_int_equal(limit, 25);

        /* An empty prefix lists every lock; the limits are inclusive. */
        n = proto_write_list(buf, sizeof buf, 10, 0, NULL, 0, PROTO_LIST_MAX);
        assert_int_equal(n, PROTO_HEADER_SIZE + 1 + 4);
        body = check_frame(buf, n, PROTO_LIST, 10, &len);
        assert_int_equal(proto_read_list(body, len, &s, &limit), 0);
        assert_int_equal(s.len, 0);
        assert_int_equal(limit, PROTO_LIST_MAX);

        memset(longest, 'x', sizeof longest);
        n = proto_write_list(buf, sizeof buf, 11, 0, longest, COMMAND_NAME_MAX,
                             1);
        assert_int_equal(n, PROTO_HEADER_SIZE + 1 + COMMAND_NAME_MAX + 4);
        body = check_frame(buf, n, PROTO_LIST, 11, &len);
        assert_int_equal(proto_read_list(body, len, &s, &limit), 0);
        assert_int_equal(s.len, COMMAND_NAME_MAX);
        assert_int_equal(limit, 1);

        /* Refused: too long a prefix, a NUL, a limit out of range, no room. */
        assert_int_equal(proto_write_list(buf, sizeof buf, 1, 0, longest,
                                          COMMAND_NAME_MAX + 1, 1),
                         0);
        assert_int_equal(proto_write_list(buf, sizeof buf, 1, 0, "a\0b", 3, 1),
                         0);
        assert_int_equal(proto_write_list(buf, sizeof buf, 1, 0, "a", 1, 0), 0);
        assert_int_equal(
            proto_write_list(buf, sizeof buf, 1, 0, "a", 1, PROTO_LIST_MAX + 1),
            0);
        assert_int_equal(
            proto_write_list(buf, PROTO_HEADER_SIZE + 5, 1, 0, "a", 1, 1), 0);
}

void list_request_bodies(void **state)
{
        uint8_t buf[FRAME_MAX];
        struct proto_string s;
        const uint8_t *body;
        uint8_t bad[16];
        size_t n, len, cut;
        uint32_t limit;

        (void)state;
        n = proto_write_list(buf, sizeof buf, 1, 0, "ab", 2, 7);
        body = check_frame(buf, n, PROTO_LIST, 1, &len);
        for (cut = 0; cut < len; cut++) {
                assert_int_equal(proto_read_list(body, cut, &s, &limit),
                                 BATON_EMALFORMED);
        }
        memcpy(bad, body, len);
        bad[len] = 0;
        assert_int_equal(proto_read_list(bad, len + 1, &s, &limit),
                         BATON_EMALFORMED);
        /* limit 0 and PROTO_LIST_MAX + 1 */
        memcpy(bad, body, len);
        memset(bad + 3, 0, 4);
        assert_int_equal(proto_read_list(bad, len, &s, &limit),
                         BATON_EMALFORMED);
        bad[3] = (PROTO_LIST_MAX + 1) & 0xff;
        bad[4] = (PROTO_LIST_MAX + 1) >> 8;
        assert_int_equal(proto_read_list(bad, len, &s, &limit),
                         BATON_EMALFORMED);
        /* a NUL in the prefix */
        memcpy(bad, body, len);
        bad[2] = '\0';
        assert_int_equal(proto_read_list(bad, len, &s, &limit), BATON_ENAME);
}

static void fill_entries(struct proto_lock_entry *e, uint32_t n,
                         const char *names[])
{
        uint32_t i;

        for (i = 0; i < n; i++) {
                e[i].name.p = names[i];
                e[i].name.len = (uint8_t)strlen(names[i]);
                e[i].session = 100 + i;
                e[i].owner = UINT64_MAX - i;
                e[i].token = 1000 + i;
                e[i].count = i + 1;
                e[i].waiters = 2 * i;
        }
}

void round_trip_list_reply(void **state)
{
        static const char *names[] = {"a/1", "a/2", "b"};
        struct proto_lock_entry in[3], out[3];
        uint8_t buf[FRAME_MAX];
        const uint8_t *body;
        size_t n, len;
        uint32_t got, i;
        bool more;

        (void)state;
        fill_entries(in, 3, names);
        n = proto_write_list_reply(buf, sizeof buf, 4, 0, in, 3, true);
        assert_int_equal(n, PROTO_HEADER_SIZE + PROTO_LIST_REPLY_FIXED +
                                PROTO_LIST_ENTRY_SIZE(3) * 2 +
                                PROTO_LIST_ENTRY_SIZE(1));
        body = check_frame(buf, n, PROTO_LIST_REPLY, 4, &len);
        assert_int_equal(
            proto_read_list_reply(body, len, 0, out, 3, &got, &more), 0);
        assert_int_equal(got, 3);
        assert_true(more);
        for (i = 0; i < 3; i++) {
                assert_true(string_is(out[i].name, names[i]));
                assert_true(out[i].session == in[i].session);
                assert_true(out[i].owner == in[i].owner);
                assert_true(out[i].token == in[i].token);
                assert_int_equal(out[i].count, in[i].count);
                assert_int_equal(out[i].waiters, in[i].waiters);
        }
        /* More entries than the caller has room for: refused. */
        assert_int_equal(
            proto_read_list_reply(body, len, 0, out, 2, &got, &more),
            BATON_EMALFORMED);
        assert_int_equal(got, 0);

        /* An empty reply. */
        n = proto_write_list_reply(buf, sizeof buf, 5, 0, NULL, 0, false);
        assert_int_equal(n, PROTO_HEADER_SIZE + PROTO_LIST_REPLY_FIXED);
        body = check_frame(buf, n, PROTO_LIST_REPLY, 5, &len);
        assert_int_equal(
            proto_read_list_reply(body, len, 0, out, 0, &got, &more), 0);
        assert_int_equal(got, 0);
        assert_false(more);
}

void list_reply_limits(void **state)
{
        static const char *names[] = {"a", "", "c"};
        struct proto_lock_entry in[3], out[3];
        char longest[COMMAND_NAME_MAX];
        struct proto_lock_entry *many;
        uint8_t buf[FRAME_MAX];
        uint8_t *big;
        const uint8_t *body;
        size_t n, len, cut, fit, i;
        uint32_t got;
        bool more;

        (void)state;
        /* Bad names are refused by the writer. */
        fill_entries(in, 3, names);
        assert_int_equal(
            proto_write_list_reply(buf, sizeof buf, 1, 0, in, 3, false), 0);
        in[1].name.p = "x\0y";
        in[1].name.len = 3;
        assert_int_equal(
            proto_write_list_reply(buf, sizeof buf, 1, 0, in, 3, false), 0);
        in[1].name.p = "b";
        in[1].name.len = 1;
        n = proto_write_list_reply(buf, sizeof buf, 1, 0, in, 3, false);
        assert_true(n > 0);
        assert_int_equal(proto_write_list_reply(buf, n - 1, 1, 0, in, 3, false),
                         0);
        assert_int_equal(
            proto_write_list_reply(buf, sizeof buf, 1, 0, in, 3, false), n);
        body = check_frame(buf, n, PROTO_LIST_REPLY, 1, &len);

        /* Every truncation, and a trailing byte, is malformed. */
        for (cut = 0; cut < len; cut++) {
                assert_int_equal(
                    proto_read_list_reply(body, cut, 0, out, 3, &got, &more),
                    BATON_EMALFORMED);
                assert_int_equal(got, 0);
        }
        memcpy(buf + n, "", 1);
        assert_int_equal(
            proto_read_list_reply(body, len + 1, 0, out, 3, &got, &more),
            BATON_EMALFORMED);

        /* A count the bytes cannot hold, a bad `more`, a bad name. */
        big = malloc(len);
        assert_non_null(big);
        memcpy(big, body, len);
        big[0] = 4;
        assert_int_equal(
            proto_read_list_reply(big, len, 0, out, 3, &got, &more),
            BATON_EMALFORMED);
        big[0] = 0xff;
        big[3] = 0xff;
        assert_int_equal(
            proto_read_list_reply(big, len, 0, out, 3, &got, &more),
            BATON_EMALFORMED);
        memcpy(big, body, len);
        big[4] = 2;
        assert_int_equal(
            proto_read_list_reply(big, len, 0, out, 3, &got, &more),
            BATON_EMALFORMED);
        memcpy(big, body, len);
        big[PROTO_LIST_REPLY_FIXED] = 0; /* first name empty */
        assert_int_equal(
            proto_read_list_reply(big, len, 0, out, 3, &got, &more),
            BATON_EMALFORMED);
        memcpy(big, body, len);
        big[PROTO_LIST_REPLY_FIXED + 1] = '\0'; /* a NUL in the name */
        assert_int_equal(
            proto_read_list_reply(big, len, 0, out, 3, &got, &more),
            BATON_EMALFORMED);
        free(big);

        /* Longest names: as many as fit PROTO_MAX_BODY, and not one more. */
        fit = (PROTO_MAX_BODY - PROTO_LIST_REPLY_FIXED) / PROTO_LIST_ENTRY_MAX;
        many = calloc(fit + 1, sizeof *many);
        big = malloc(PROTO_HEADER_SIZE + PROTO_MAX_BODY + 1024);
        assert_non_null(many);
        assert_non_null(big);
        memset(longest, 'n', sizeof longest);
        for (i = 0; i <= fit; i++) {
                many[i].name.p = longest;
                many[i].name.len = COMMAND_NAME_MAX;
                many[i].token = i;
        }
        assert_int_equal(proto_write_list_reply(
                             big, PROTO_HEADER_SIZE + PROTO_MAX_BODY + 1024, 2,
                             0, many, (uint32_t)fit + 1, true),
                         0);
        n = proto_write_list_reply(big,
                                   PROTO_HEADER_SIZE + PROTO_MAX_BODY + 1024, 2,
                                   0, many, (uint32_t)fit, true);
        assert_int_equal(n, PROTO_HEADER_SIZE + PROTO_LIST_REPLY_FIXED +
                                fit * PROTO_LIST_ENTRY_MAX);
        body = check_frame(big, n, PROTO_LIST_REPLY, 2, &len);
        assert_int_equal(
            proto_read_list_reply(body, len, 0, many, fit, &got, &more), 0);
        assert_int_equal(got, fit);
        assert_true(many[fit - 1].token == fit - 1);
        free(big);
        free(many);
}
