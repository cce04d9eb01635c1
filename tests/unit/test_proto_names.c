/* Cases of test_proto on client names and every holder: the
 * PROTO_FLAG_NAMES and PROTO_FLAG_HOLDERS shapes. */
#include "test_proto_names.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <string.h>

#include "../../include/baton.h"
#include "../../src/proto/proto.h"
#include "../../src/proto/reply.h"
#include "../../src/proto/query.h"
#include "../../src/proto/list.h"

void names_flag_only_where_allowed(void **state)
{
        uint8_t buf[PROTO_HEADER_SIZE];
        struct proto_header h;
        int type;

        (void)state;
        for (type = 0; type < 256; type++) {
                struct proto_header in = {PROTO_VERSION, (uint8_t)type,
                                          PROTO_FLAG_NAMES, 0, 1};
                bool want = type == PROTO_QUERY || type == PROTO_LIST ||
                            type == PROTO_RESULT || type == PROTO_LIST_REPLY;
                /* With values: a LIST and its reply only. */
                bool valued = type == PROTO_LIST || type == PROTO_LIST_REPLY;

                proto_header_encode(&in, buf);
                assert_int_equal(proto_header_decode(&h, buf, PROTO_MAX_BODY),
                                 want ? 0 : BATON_EMALFORMED);
                if (want) {
                        assert_int_equal(h.flags, PROTO_FLAG_NAMES);
                }
                in.flags = PROTO_FLAG_NAMES | PROTO_FLAG_VALUES;
                proto_header_encode(&in, buf);
                assert_int_equal(proto_header_decode(&h, buf, PROTO_MAX_BODY),
                                 valued ? 0 : BATON_EMALFORMED);
                /* Any other bit is refused, on every type. */
                in.flags = PROTO_FLAG_NAMES | 2;
                proto_header_encode(&in, buf);
                assert_int_equal(proto_header_decode(&h, buf, PROTO_MAX_BODY),
                                 BATON_EMALFORMED);
        }
}

void names_requests_exact_bytes(void **state)
{
        static const uint8_t query[] = {
            0x02, 0x03, 0x01, 0x00, /* v2, QUERY, PROTO_FLAG_NAMES */
            0x02, 0x00, 0x00, 0x00, /* length 2 */
            0x07, 0,    0,    0,    0, 0, 0, 0, 0x01, 'a',
        };
        static const uint8_t list[] = {
            0x02, 0x0a, 0x01, 0x00, /* v2, LIST, PROTO_FLAG_NAMES */
            0x06, 0x00, 0x00, 0x00, /* length 6 */
            0x07, 0,    0,    0,    0,    0,    0,
            0,    0x01, 'a',  0x0a, 0x00, 0x00, 0x00,
        };
        uint8_t buf[64];
        uint8_t plain[64];
        size_t n;

        (void)state;
        n = proto_write_query(buf, sizeof buf, 7, PROTO_FLAG_NAMES, "a", 1);
        assert_int_equal(n, sizeof query);
        assert_memory_equal(buf, query, sizeof query);
        /* Without the flag: the same body, flags 0. */
        assert_int_equal(proto_write_query(plain, sizeof plain, 7, 0, "a", 1),
                         n);
        assert_int_equal(plain[2], 0);
        assert_memory_equal(plain + 4, buf + 4, n - 4);

        n = proto_write_list(buf, sizeof buf, 7, PROTO_FLAG_NAMES, "a", 1, 10);
        assert_int_equal(n, sizeof list);
        assert_memory_equal(buf, list, sizeof list);
        assert_int_equal(
            proto_write_list(buf, sizeof buf, 7, PROTO_FLAG_NAMES, "a", 1, 0),
            0);
        assert_int_equal(
            proto_write_query(buf, sizeof buf, 7, PROTO_FLAG_NAMES, "", 0), 0);
}

void names_result_exact_bytes(void **state)
{
        static const uint8_t tail[] = {0x08, 'b', 'u', 'i', 'l',
                                       'd',  '-', '4', '2'};
        struct proto_result r = {
            .kind = PROTO_KIND_HOLDER,
            .index = 9,
            .session = 3,
            .owner = 4,
            .token = 5,
            .count = 1,
            .waiters = 2,
            .client_name = {"build-42", 8},
        };
        struct proto_result back;
        uint8_t plain[128];
        uint8_t buf[128];
        struct proto_header h;
        size_t n, m;

        (void)state;
        /* The plain writer never sends the name: old clients get old bytes. */
        m = proto_write_result(plain, sizeof plain, 1, 0, &r);
        assert_int_equal(m, PROTO_HEADER_SIZE + 45);
        n = proto_write_result(buf, sizeof buf, 1, PROTO_FLAG_NAMES, &r);
        assert_int_equal(n, m + sizeof tail);
        assert_int_equal(buf[2], PROTO_FLAG_NAMES);
        assert_int_equal(buf[4], 45 + sizeof tail);
        assert_memory_equal(buf + 8, plain + 8, m - 8);
        assert_memory_equal(buf + m, tail, sizeof tail);

        assert_int_equal(proto_header_decode(&h, buf, PROTO_MAX_BODY), 0);
        assert_int_equal(h.flags, PROTO_FLAG_NAMES);
        memset(&back, 0xee, sizeof back);
        assert_int_equal(proto_read_result(buf + PROTO_HEADER_SIZE, h.length,
                                           PROTO_FLAG_NAMES, &back),
                         0);
        assert_int_equal(back.token, 5);
        assert_int_equal(back.client_name.len, 8);
        assert_memory_equal(back.client_name.p, "build-42", 8);
        /* Each reader refuses the other shape. */
        assert_int_equal(
            proto_read_result(buf + PROTO_HEADER_SIZE, h.length, 0, &back),
            BATON_EMALFORMED);
        assert_int_equal(proto_read_result(plain + PROTO_HEADER_SIZE, 45,
                                           PROTO_FLAG_NAMES, &back),
                         BATON_EMALFORMED);
        assert_int_equal(
            proto_read_result(plain + PROTO_HEADER_SIZE, 45, 0, &back), 0);
        assert_int_equal(back.client_name.len, 0);
}

void names_result_limits(void **state)
{
        char name[PROTO_CLIENT_NAME_MAX + 1];
        struct proto_result r;
        uint8_t buf[256];
        size_t n;

        (void)state;
        memset(name, 'x', sizeof name);
        memset(&r, 0, sizeof r);
        /* Empty (a free lock) and the longest name both go out. */
        assert_int_equal(
            proto_write_result(buf, sizeof buf, 1, PROTO_FLAG_NAMES, &r),
            PROTO_HEADER_SIZE + 46);
        r.client_name.p = name;
        r.client_name.len = PROTO_CLIENT_NAME_MAX;
        n = proto_write_result(buf, sizeof buf, 1, PROTO_FLAG_NAMES, &r);
        assert_int_equal(n, PROTO_HEADER_SIZE + 46 + PROTO_CLIENT_NAME_MAX);
        assert_int_equal(proto_read_result(buf + PROTO_HEADER_SIZE,
                                           n - PROTO_HEADER_SIZE,
                                           PROTO_FLAG_NAMES, &r),
                         0);
        /* One byte more, or a NUL, is refused both ways. */
        r.client_name.p = name;
        r.client_name.len = PROTO_CLIENT_NAME_MAX + 1;
        assert_int_equal(
            proto_write_result(buf, sizeof buf, 1, PROTO_FLAG_NAMES, &r), 0);
        name[3] = '\0';
        r.client_name.len = 8;
        assert_int_equal(
            proto_write_result(buf, sizeof buf, 1, PROTO_FLAG_NAMES, &r), 0);
        name[3] = 'x';
        n = proto_write_result(buf, sizeof buf, 1, PROTO_FLAG_NAMES, &r);
        buf[n - 2] = '\0';
        assert_int_equal(proto_read_result(buf + PROTO_HEADER_SIZE,
                                           n - PROTO_HEADER_SIZE,
                                           PROTO_FLAG_NAMES, &r),
                         BATON_EMALFORMED);
        buf[PROTO_HEADER_SIZE + 45] = PROTO_CLIENT_NAME_MAX + 1;
        assert_int_equal(proto_read_result(buf + PROTO_HEADER_SIZE,
                                           n - PROTO_HEADER_SIZE,
                                           PROTO_FLAG_NAMES, &r),
                         BATON_EMALFORMED);
}

void names_list_reply_round_trip(void **state)
{
        struct proto_lock_entry e[2] = {
            {.name = {"db", 2},
             .session = 1,
             .token = 7,
             .client_name = {"build-42", 8}},
            {.name = {"q", 1},
             .session = 2,
             .token = 8,
             .client_name = {NULL, 0}},
        };
        struct proto_lock_entry back[2];
        uint8_t plain[256];
        uint8_t buf[256];
        uint32_t n = 0;
        bool more = false;
        size_t len, old;

        (void)state;
        old = proto_write_list_reply(plain, sizeof plain, 1, 0, e, 2, true);
        assert_int_equal(old, PROTO_HEADER_SIZE + PROTO_LIST_REPLY_FIXED +
                                  PROTO_LIST_ENTRY_SIZE(2) +
                                  PROTO_LIST_ENTRY_SIZE(1));
        assert_int_equal(plain[2], 0);
        len = proto_write_list_reply(buf, sizeof buf, 1, PROTO_FLAG_NAMES, e, 2,
                                     true);
        assert_int_equal(len, PROTO_HEADER_SIZE + PROTO_LIST_REPLY_FIXED +
                                  PROTO_LIST_ENTRY_NAMES_SIZE(2, 8) +
                                  PROTO_LIST_ENTRY_NAMES_SIZE(1, 0));
        assert_int_equal(buf[2], PROTO_FLAG_NAMES);
        /* The first entry's name follows its fixed fields. */
        assert_int_equal(buf[PROTO_HEADER_SIZE + PROTO_LIST_REPLY_FIXED +
                             PROTO_LIST_ENTRY_SIZE(2)],
                         8);
        assert_int_equal(proto_read_list_reply(
                             buf + PROTO_HEADER_SIZE, len - PROTO_HEADER_SIZE,
                             PROTO_FLAG_NAMES, back, 2, &n, &more),
                         0);
        assert_int_equal(n, 2);
        assert_true(more);
        assert_int_equal(back[0].client_name.len, 8);
        assert_memory_equal(back[0].client_name.p, "build-42", 8);
        assert_int_equal(back[1].client_name.len, 0);
        assert_int_equal(back[1].token, 8);
        assert_int_equal(proto_read_list_reply(buf + PROTO_HEADER_SIZE,
                                               len - PROTO_HEADER_SIZE, 0, back,
                                               2, &n, &more),
                         BATON_EMALFORMED);
        assert_int_equal(proto_read_list_reply(
                             plain + PROTO_HEADER_SIZE, old - PROTO_HEADER_SIZE,
                             PROTO_FLAG_NAMES, back, 2, &n, &more),
                         BATON_EMALFORMED);
        e[0].client_name.len = PROTO_CLIENT_NAME_MAX + 1;
        assert_int_equal(proto_write_list_reply(buf, sizeof buf, 1,
                                                PROTO_FLAG_NAMES, e, 2, true),
                         0);
}

/* A LIST's reply with names and values: each entry ends with its value,
 * after its client name, and reads back only in that shape. */
void names_values_list_reply_round_trip(void **state)
{
        uint16_t shape = PROTO_FLAG_NAMES | PROTO_FLAG_VALUES;
        struct proto_lock_entry e[2] = {
            {.name = {"db", 2},
             .session = 1,
             .token = 7,
             .client_name = {"build-42", 8},
             .value = {"10.0.0.7:80", 11}},
            {.name = {"q", 1}, .session = 2, .token = 8},
        };
        struct proto_lock_entry back[2];
        uint8_t buf[256];
        uint32_t n = 0;
        bool more = true;
        size_t len;

        (void)state;
        len = proto_write_list_reply(buf, sizeof buf, 1, shape, e, 2, false);
        assert_int_equal(len, PROTO_HEADER_SIZE + PROTO_LIST_REPLY_FIXED +
                                  PROTO_LIST_ENTRY_NAMES_VALUES_SIZE(2, 8, 11) +
                                  PROTO_LIST_ENTRY_NAMES_VALUES_SIZE(1, 0, 0));
        assert_int_equal(buf[2], shape);
        /* The value's length follows the client name. */
        assert_int_equal(buf[PROTO_HEADER_SIZE + PROTO_LIST_REPLY_FIXED +
                             PROTO_LIST_ENTRY_NAMES_SIZE(2, 8)],
                         11);
        assert_int_equal(proto_read_list_reply(buf + PROTO_HEADER_SIZE,
                                               len - PROTO_HEADER_SIZE, shape,
                                               back, 2, &n, &more),
                         0);
        assert_int_equal(n, 2);
        assert_false(more);
        assert_int_equal(back[0].value.len, 11);
        assert_memory_equal(back[0].value.p, "10.0.0.7:80", 11);
        assert_memory_equal(back[0].client_name.p, "build-42", 8);
        assert_int_equal(back[1].value.len, 0);
        assert_int_equal(back[1].token, 8);
        /* Read as names only, the values are trailing bytes. */
        assert_int_equal(proto_read_list_reply(
                             buf + PROTO_HEADER_SIZE, len - PROTO_HEADER_SIZE,
                             PROTO_FLAG_NAMES, back, 2, &n, &more),
                         BATON_EMALFORMED);
        /* A LIST asks for the shape with the same body. */
        assert_true(proto_write_list(buf, sizeof buf, 3, shape, "d", 1, 5) > 0);
        assert_int_equal(buf[2], shape);
}

/* PROTO_FLAG_HOLDERS: a QUERY asks with it, a LIST_REPLY answers with it;
 * no other type carries it, and it combines with no other flag but
 * PROTO_FLAG_VALUES and PROTO_FLAG_LEFT, which never come without it. */
void holders_flag_only_where_allowed(void **state)
{
        uint8_t buf[PROTO_HEADER_SIZE];
        struct proto_header h;
        int type;

        (void)state;
        for (type = 0; type < 256; type++) {
                struct proto_header in = {PROTO_VERSION, (uint8_t)type,
                                          PROTO_FLAG_HOLDERS, 0, 1};
                bool want = type == PROTO_QUERY || type == PROTO_LIST_REPLY;

                proto_header_encode(&in, buf);
                assert_int_equal(proto_header_decode(&h, buf, PROTO_MAX_BODY),
                                 want ? 0 : BATON_EMALFORMED);
                in.flags = PROTO_FLAG_HOLDERS | PROTO_FLAG_NAMES;
                proto_header_encode(&in, buf);
                assert_int_equal(proto_header_decode(&h, buf, PROTO_MAX_BODY),
                                 BATON_EMALFORMED);
                in.flags = PROTO_FLAG_HOLDERS | PROTO_FLAG_LEFT;
                proto_header_encode(&in, buf);
                assert_int_equal(proto_header_decode(&h, buf, PROTO_MAX_BODY),
                                 want ? 0 : BATON_EMALFORMED);
                in.flags |= PROTO_FLAG_VALUES;
                proto_header_encode(&in, buf);
                assert_int_equal(proto_header_decode(&h, buf, PROTO_MAX_BODY),
                                 want ? 0 : BATON_EMALFORMED);
                in.flags = PROTO_FLAG_LEFT;
                proto_header_encode(&in, buf);
                assert_int_equal(proto_header_decode(&h, buf, PROTO_MAX_BODY),
                                 BATON_EMALFORMED);
                in.flags =
                    PROTO_FLAG_HOLDERS | PROTO_FLAG_NAMES | PROTO_FLAG_LEFT;
                proto_header_encode(&in, buf);
                assert_int_equal(proto_header_decode(&h, buf, PROTO_MAX_BODY),
                                 BATON_EMALFORMED);
        }
        assert_int_equal(
            proto_write_query(buf, sizeof buf, 1, PROTO_FLAG_HOLDERS, "a", 1),
            0); /* 16 bytes: no room for the body */
}

/* Every holder's entry: the names shape, then mode, permits and limit;
 * read back field for field, and refused in the other shapes. */
void holders_list_reply_round_trip(void **state)
{
        struct proto_lock_entry e[2], back[2];
        uint8_t buf[256];
        uint32_t n = 0;
        bool more = false;
        size_t len, at;

        (void)state;
        memset(e, 0, sizeof e);
        e[0].name.p = e[1].name.p = "pool";
        e[0].name.len = e[1].name.len = 4;
        e[0].session = 7;
        e[0].token = 9;
        e[0].count = 1;
        e[0].mode = 2;
        e[0].permits = 2;
        e[0].limit = 5;
        e[0].client_name.p = "w-1";
        e[0].client_name.len = 3;
        e[1].session = 8;
        e[1].token = 11;
        e[1].mode = 2;
        e[1].permits = 3;
        e[1].limit = 5;
        len = proto_write_list_reply(buf, sizeof buf, 1, PROTO_FLAG_HOLDERS, e,
                                     2, false);
        assert_int_equal(len, PROTO_HEADER_SIZE + PROTO_LIST_REPLY_FIXED +
                                  PROTO_LIST_ENTRY_HOLDERS_SIZE(4, 3) +
                                  PROTO_LIST_ENTRY_HOLDERS_SIZE(4, 0));
        assert_int_equal(buf[2], PROTO_FLAG_HOLDERS);
        /* After the first entry's client name: mode 2, permits 2, limit 5. */
        at = PROTO_HEADER_SIZE + PROTO_LIST_REPLY_FIXED +
             PROTO_LIST_ENTRY_NAMES_SIZE(4, 3);
        assert_int_equal(buf[at], 2);
        assert_int_equal(buf[at + 1], 2);
        assert_int_equal(buf[at + 5], 5);
        assert_int_equal(proto_read_list_reply(
                             buf + PROTO_HEADER_SIZE, len - PROTO_HEADER_SIZE,
                             PROTO_FLAG_HOLDERS, back, 2, &n, &more),
                         0);
        assert_int_equal(n, 2);
        assert_false(more);
        assert_int_equal(back[0].mode, 2);
        assert_int_equal(back[0].permits, 2);
        assert_int_equal(back[1].permits, 3);
        assert_int_equal(back[1].limit, 5);
        assert_memory_equal(back[0].client_name.p, "w-1", 3);
        assert_int_equal(back[1].session, 8);
        assert_int_equal(proto_read_list_reply(
                             buf + PROTO_HEADER_SIZE, len - PROTO_HEADER_SIZE,
                             PROTO_FLAG_NAMES, back, 2, &n, &more),
                         BATON_EMALFORMED);
        assert_int_equal(proto_read_list_reply(
                             buf + PROTO_HEADER_SIZE, len - PROTO_HEADER_SIZE,
                             PROTO_FLAG_HOLDERS, back, 1, &n, &more),
                         BATON_EMALFORMED);   /* more entries than room */
        assert_int_equal(back[0].left_ms, 0); /* not in this shape */

        /* With PROTO_FLAG_LEFT each entry ends with its time left. */
        e[0].left_ms = 8000;
        e[1].left_ms = UINT32_MAX;
        len = proto_write_list_reply(buf, sizeof buf, 1,
                                     PROTO_FLAG_HOLDERS | PROTO_FLAG_LEFT, e, 2,
                                     false);
        assert_int_equal(len, PROTO_HEADER_SIZE + PROTO_LIST_REPLY_FIXED +
                                  PROTO_LIST_ENTRY_HOLDERS_SIZE(4, 3) +
                                  PROTO_LIST_ENTRY_HOLDERS_SIZE(4, 0) +
                                  2 * PROTO_LIST_ENTRY_LEFT_SIZE);
        assert_int_equal(proto_read_list_reply(
                             buf + PROTO_HEADER_SIZE, len - PROTO_HEADER_SIZE,
                             PROTO_FLAG_HOLDERS | PROTO_FLAG_LEFT, back, 2, &n,
                             &more),
                         0);
        assert_int_equal(back[0].left_ms, 8000);
        assert_int_equal(back[1].left_ms, UINT32_MAX);
        assert_int_equal(back[1].permits, 3);
        assert_int_equal(proto_read_list_reply(
                             buf + PROTO_HEADER_SIZE, len - PROTO_HEADER_SIZE,
                             PROTO_FLAG_HOLDERS, back, 2, &n, &more),
                         BATON_EMALFORMED); /* the tails left over */
}
