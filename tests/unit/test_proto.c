/* Unit tests for the client protocol: frame codec and incremental reader. */
/* Exact bytes, round trips, what the writers refuse and the header checks
 * are here; LIST in test_proto_list.c, the incremental reader in
 * test_proto_reader.c, the body readers and fuzzing in test_proto_bodies.c,
 * and the frame corpus they share in protofix.c. */
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
#include "../../src/proto/reply.h"
#include "../../src/proto/query.h"
#include "../../src/proto/member.h"
#include "../../src/proto/status.h"
#include "../../src/proto/keepalive.h"
#include "protofix.h"
#include "test_proto_bodies.h"
#include "test_proto_list.h"
#include "test_proto_sessions.h"
#include "test_proto_attach.h"
#include "test_proto_acl.h"
#include "test_proto_backup.h"
#include "test_proto_names.h"
#include "test_proto_reader.h"

/* --- Exact bytes ----------------------------------------------------------
 */

/* A header's bytes, written out by hand from the layout in proto.h. */
static void header_exact_bytes(void **state)
{
        static const uint8_t want[PROTO_HEADER_SIZE] = {
            0x02,                                           /* version */
            0x04,                                           /* type CHECK */
            0x00, 0x00,                                     /* flags */
            0x2c, 0x01, 0x00, 0x00,                         /* length 300 */
            0x10, 0x32, 0x54, 0x76, 0x98, 0xba, 0xdc, 0xfe, /* id */
        };
        struct proto_header h = {PROTO_VERSION, PROTO_CHECK, 0, 300,
                                 0xfedcba9876543210ULL};
        struct proto_header back;
        uint8_t buf[PROTO_HEADER_SIZE + 4];

        (void)state;
        memset(buf, CANARY, sizeof buf);
        proto_header_encode(&h, buf);
        assert_memory_equal(buf, want, sizeof want);
        assert_int_equal(buf[PROTO_HEADER_SIZE], CANARY);

        assert_int_equal(proto_header_decode(&back, want, PROTO_MAX_BODY), 0);
        assert_int_equal(back.version, 2);
        assert_int_equal(back.type, PROTO_CHECK);
        assert_int_equal(back.flags, 0);
        assert_int_equal(back.length, 300);
        assert_true(back.id == 0xfedcba9876543210ULL);
}

/* A whole RESULT frame, written out by hand. */
static void result_exact_bytes(void **state)
{
        static const uint8_t want[] = {
            /* header */
            0x02, 0x40, 0x00, 0x00,                         /* v2, RESULT */
            0x2d, 0x00, 0x00, 0x00,                         /* length 45 */
            0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, /* id */
            /* body */
            0xf7, 0xff, 0xff, 0xff,                         /* status -9 */
            0x00,                                           /* kind */
            0x05, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* index 261 */
            0x2a, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* session 42 */
            0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, /* owner */
            0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* token 256 */
            0x01, 0x00, 0x00, 0x00,                         /* count 1 */
            0x04, 0x03, 0x02, 0x01,                         /* waiters */
        };
        struct proto_result r = {
            .status = BATON_EBUSY,
            .kind = 0,
            .index = 261,
            .session = 42,
            .owner = 0x0807060504030201ULL,
            .token = 256,
            .count = 1,
            .waiters = 0x01020304U,
        };
        uint8_t buf[sizeof want + 8];
        size_t n;

        (void)state;
        assert_int_equal(BATON_EBUSY, -9);
        memset(buf, CANARY, sizeof buf);
        n = proto_write_result(buf, sizeof buf, 0x1122334455667788ULL, 0, &r);
        assert_int_equal(n, sizeof want);
        assert_memory_equal(buf, want, sizeof want);
        assert_int_equal(buf[sizeof want], CANARY);
}

/* --- Round trips ----------------------------------------------------------
 */

static void round_trip_command(void **state)
{
        uint8_t cmd[COMMAND_MAX_SIZE];
        uint8_t buf[FRAME_MAX];
        const uint8_t *body;
        struct command c;
        size_t n, cmd_len, len;

        (void)state;
        cmd_len = acquire_command(cmd, sizeof cmd);
        n = proto_write_command(buf, sizeof buf, 77, cmd, cmd_len);
        assert_int_equal(n, PROTO_HEADER_SIZE + cmd_len);
        body = check_frame(buf, n, PROTO_COMMAND, 77, &len);
        assert_int_equal(len, cmd_len);
        assert_memory_equal(body, cmd, cmd_len);
        assert_int_equal(command_decode(&c, body, len), 0);
        assert_int_equal(c.type, COMMAND_ACQUIRE);
        assert_true(c.session == 7 && c.seq == 3 && c.ack == 2);
        assert_true(c.owner == 9 && c.wait_ms == 1000);
        assert_int_equal(c.name_len, sizeof lock_name - 1);
        assert_memory_equal(c.name, lock_name, c.name_len);
}

static void round_trip_u64_requests(void **state)
{
        uint8_t buf[64];
        const uint8_t *body;
        size_t n, len;
        uint64_t v;

        (void)state;
        n = proto_write_keepalive(buf, sizeof buf, 1, 0, 0x1122334455667788ULL);
        assert_int_equal(n, PROTO_HEADER_SIZE + 8);
        body = check_frame(buf, n, PROTO_KEEPALIVE, 1, &len);
        assert_int_equal(proto_read_u64(body, len, &v), 0);
        assert_true(v == 0x1122334455667788ULL);

        n = proto_write_id(buf, sizeof buf, 2, PROTO_MEMBER_REMOVE, UINT64_MAX);
        assert_int_equal(n, PROTO_HEADER_SIZE + 8);
        body = check_frame(buf, n, PROTO_MEMBER_REMOVE, 2, &len);
        assert_int_equal(proto_read_u64(body, len, &v), 0);
        assert_true(v == UINT64_MAX);

        n = proto_write_id(buf, sizeof buf, UINT64_MAX, PROTO_TRANSFER, 0);
        assert_int_equal(n, PROTO_HEADER_SIZE + 8);
        body = check_frame(buf, n, PROTO_TRANSFER, UINT64_MAX, &len);
        v = 99;
        assert_int_equal(proto_read_u64(body, len, &v), 0);
        assert_true(v == 0);
}

static void round_trip_query_check(void **state)
{
        char longest[COMMAND_NAME_MAX];
        uint8_t buf[FRAME_MAX];
        struct proto_string s;
        const uint8_t *body;
        size_t n, len;
        uint64_t token;

        (void)state;
        n = proto_write_query(buf, sizeof buf, 5, 0, lock_name,
                              sizeof lock_name - 1);
        assert_int_equal(n, PROTO_HEADER_SIZE + 1 + sizeof lock_name - 1);
        body = check_frame(buf, n, PROTO_QUERY, 5, &len);
        assert_int_equal(proto_read_query(body, len, &s), 0);
        assert_true(string_is(s, lock_name));

        /* A name may hold any byte but NUL, up to the limit. */
        memset(longest, 0xff, sizeof longest);
        longest[0] = '\n';
        n = proto_write_check(buf, sizeof buf, 6, longest, sizeof longest,
                              0xfedcba9876543210ULL);
        assert_int_equal(n, PROTO_HEADER_SIZE + 8 + 1 + COMMAND_NAME_MAX);
        body = check_frame(buf, n, PROTO_CHECK, 6, &len);
        assert_int_equal(proto_read_check(body, len, &s, &token), 0);
        assert_true(token == 0xfedcba9876543210ULL);
        assert_int_equal(s.len, COMMAND_NAME_MAX);
        assert_memory_equal(s.p, longest, sizeof longest);
        /* Strings are borrowed from the body, not copied. */
        assert_ptr_equal(s.p, body + 9);
}

static void round_trip_empty(void **state)
{
        static const uint8_t types[] = {PROTO_STATUS, PROTO_PING, PROTO_PONG};
        uint8_t buf[PROTO_HEADER_SIZE];
        size_t i, n, len;

        (void)state;
        for (i = 0; i < sizeof types; i++) {
                /* STATUS has a writer of its own, for its flags. */
                n = types[i] == PROTO_STATUS
                        ? proto_write_status_request(buf, sizeof buf, 40 + i, 0)
                        : proto_write_empty(buf, sizeof buf, 40 + i, types[i]);
                assert_int_equal(n, PROTO_HEADER_SIZE);
                check_frame(buf, n, types[i], 40 + i, &len);
                assert_int_equal(len, 0);
        }
}

static void round_trip_member_add(void **state)
{
        char raft[PROTO_ADDRESS_MAX + 1], client[PROTO_ADDRESS_MAX + 1];
        struct proto_string ra, ca;
        uint8_t buf[FRAME_MAX];
        const uint8_t *body;
        size_t n, len;
        uint64_t member;

        (void)state;
        n = proto_write_member_add(buf, sizeof buf, 9, 4, "10.0.0.4:7001",
                                   "10.0.0.4:7101");
        body = check_frame(buf, n, PROTO_MEMBER_ADD, 9, &len);
        assert_int_equal(len, 8 + 1 + 13 + 1 + 13);
        assert_int_equal(proto_read_member_add(body, len, &member, &ra, &ca),
                         0);
        assert_true(member == 4);
        assert_true(string_is(ra, "10.0.0.4:7001"));
        assert_true(string_is(ca, "10.0.0.4:7101"));

        /* Addresses of exactly the maximum length. */
        memset(raft, 'r', PROTO_ADDRESS_MAX);
        raft[PROTO_ADDRESS_MAX] = '\0';
        memset(client, 'c', PROTO_ADDRESS_MAX);
        client[PROTO_ADDRESS_MAX] = '\0';
        n = proto_write_member_add(buf, sizeof buf, 10, UINT64_MAX, raft,
                                   client);
        body = check_frame(buf, n, PROTO_MEMBER_ADD, 10, &len);
        assert_int_equal(proto_read_member_add(body, len, &member, &ra, &ca),
                         0);
        assert_true(member == UINT64_MAX);
        assert_true(string_is(ra, raft));
        assert_true(string_is(ca, client));
}

static void round_trip_result(void **state)
{
        uint8_t buf[FRAME_MAX];
        struct proto_result r, zero;
        const uint8_t *body;
        size_t n, len;

        (void)state;
        n = proto_write_result(buf, sizeof buf, 11, 0, &full_result);
        assert_int_equal(n, PROTO_HEADER_SIZE + 45);
        body = check_frame(buf, n, PROTO_RESULT, 11, &len);
        memset(&r, 0, sizeof r);
        assert_int_equal(proto_read_result(body, len, 0, &r), 0);
        assert_int_equal(r.status, full_result.status);
        assert_int_equal(r.kind, full_result.kind);
        assert_true(r.index == full_result.index);
        assert_true(r.session == full_result.session);
        assert_true(r.owner == full_result.owner);
        assert_true(r.token == full_result.token);
        assert_int_equal(r.count, full_result.count);
        assert_int_equal(r.waiters, full_result.waiters);

        /* Extremes survive: the most negative status, every field full. */
        memset(&zero, 0xff, sizeof zero);
        zero.status = INT32_MIN;
        n = proto_write_result(buf, sizeof buf, 12, 0, &zero);
        body = check_frame(buf, n, PROTO_RESULT, 12, &len);
        assert_int_equal(proto_read_result(body, len, 0, &r), 0);
        assert_int_equal(r.status, INT32_MIN);
        assert_int_equal(r.kind, 0xff);
        assert_true(r.index == UINT64_MAX && r.token == UINT64_MAX);
        assert_true(r.count == UINT32_MAX && r.waiters == UINT32_MAX);
}

static void round_trip_not_leader(void **state)
{
        uint8_t buf[FRAME_MAX];
        struct proto_string a;
        const uint8_t *body;
        uint64_t leader;
        size_t n, len;

        (void)state;
        n = proto_write_not_leader(buf, sizeof buf, 13, 2, "127.0.0.1:7102");
        body = check_frame(buf, n, PROTO_NOT_LEADER, 13, &len);
        assert_int_equal(proto_read_not_leader(body, len, &leader, &a), 0);
        assert_true(leader == 2);
        assert_true(string_is(a, "127.0.0.1:7102"));

        /* Leader unknown: id 0 and an empty address, NULL or "". */
        n = proto_write_not_leader(buf, sizeof buf, 14, 0, NULL);
        assert_int_equal(n, PROTO_HEADER_SIZE + 9);
        body = check_frame(buf, n, PROTO_NOT_LEADER, 14, &len);
        assert_int_equal(proto_read_not_leader(body, len, &leader, &a), 0);
        assert_true(leader == 0);
        assert_int_equal(a.len, 0);
        assert_int_equal(proto_write_not_leader(buf, sizeof buf, 14, 0, ""), n);
}

static void round_trip_error(void **state)
{
        char longest[PROTO_MESSAGE_MAX + 1];
        struct proto_string m;
        uint8_t buf[FRAME_MAX];
        const uint8_t *body;
        size_t n, len;
        int status;

        (void)state;
        n = proto_write_error(buf, sizeof buf, 15, BATON_ETOOBIG,
                              "frame too large");
        body = check_frame(buf, n, PROTO_ERROR, 15, &len);
        assert_int_equal(proto_read_error(body, len, &status, &m), 0);
        assert_int_equal(status, BATON_ETOOBIG);
        assert_true(string_is(m, "frame too large"));

        memset(longest, '!', PROTO_MESSAGE_MAX);
        longest[PROTO_MESSAGE_MAX] = '\0';
        n = proto_write_error(buf, sizeof buf, 16, BATON_EMALFORMED, longest);
        assert_int_equal(n, PROTO_HEADER_SIZE + 4 + 1 + PROTO_MESSAGE_MAX);
        body = check_frame(buf, n, PROTO_ERROR, 16, &len);
        assert_int_equal(proto_read_error(body, len, &status, &m), 0);
        assert_int_equal(status, BATON_EMALFORMED);
        assert_true(string_is(m, longest));

        n = proto_write_error(buf, sizeof buf, 17, BATON_ENOMEM, NULL);
        body = check_frame(buf, n, PROTO_ERROR, 17, &len);
        assert_int_equal(proto_read_error(body, len, &status, &m), 0);
        assert_int_equal(status, BATON_ENOMEM);
        assert_int_equal(m.len, 0);
}

static void round_trip_status(void **state)
{
        struct big_status *big = malloc(sizeof *big);
        struct proto_status *st = malloc(sizeof *st);
        uint8_t buf[FRAME_MAX];
        const uint8_t *body;
        size_t n, len;
        unsigned i;

        (void)state;
        assert_non_null(big);
        assert_non_null(st);
        fill_big_status(big);
        n = proto_write_status(buf, sizeof buf, 18, 0, &big->st, NULL);
        assert_int_equal(n, PROTO_HEADER_SIZE + 74 +
                                PROTO_MAX_MEMBERS *
                                    (8 + 1 + 2 * (1 + PROTO_ADDRESS_MAX)));
        body = check_frame(buf, n, PROTO_STATUS_REPLY, 18, &len);
        memset(st, 0xee, sizeof *st);
        assert_int_equal(proto_read_status(body, len, 0, st, NULL), 0);
        assert_true(st->id == big->st.id);
        assert_int_equal(st->role, big->st.role);
        assert_true(st->term == big->st.term);
        assert_true(st->leader_id == big->st.leader_id);
        assert_true(st->commit_index == big->st.commit_index);
        assert_true(st->applied_index == big->st.applied_index);
        assert_true(st->last_index == big->st.last_index);
        assert_true(st->sessions == big->st.sessions);
        assert_true(st->locks == big->st.locks);
        assert_true(st->waiters == big->st.waiters);
        assert_int_equal(st->n_members, PROTO_MAX_MEMBERS);
        for (i = 0; i < PROTO_MAX_MEMBERS; i++) {
                const struct proto_member *a = &st->members[i];
                const struct proto_member *b = &big->st.members[i];

                assert_true(a->id == b->id);
                assert_int_equal(a->role, b->role);
                assert_int_equal(a->raft_address.len, PROTO_ADDRESS_MAX);
                assert_memory_equal(a->raft_address.p, b->raft_address.p,
                                    PROTO_ADDRESS_MAX);
                assert_int_equal(a->client_address.len, PROTO_ADDRESS_MAX);
                assert_memory_equal(a->client_address.p, b->client_address.p,
                                    PROTO_ADDRESS_MAX);
        }

        /* No members, and members with empty (unknown) addresses. */
        memset(&big->st.members[0], 0, sizeof big->st.members[0]);
        big->st.members[0].id = 1;
        big->st.n_members = 1;
        n = proto_write_status(buf, sizeof buf, 19, 0, &big->st, NULL);
        assert_int_equal(n, PROTO_HEADER_SIZE + 74 + 8 + 1 + 1 + 1);
        body = check_frame(buf, n, PROTO_STATUS_REPLY, 19, &len);
        assert_int_equal(proto_read_status(body, len, 0, st, NULL), 0);
        assert_int_equal(st->n_members, 1);
        assert_true(st->members[0].id == 1);
        assert_int_equal(st->members[0].raft_address.len, 0);
        assert_int_equal(st->members[0].client_address.len, 0);

        big->st.n_members = 0;
        n = proto_write_status(buf, sizeof buf, 20, 0, &big->st, NULL);
        assert_int_equal(n, PROTO_HEADER_SIZE + 74);
        body = check_frame(buf, n, PROTO_STATUS_REPLY, 20, &len);
        assert_int_equal(proto_read_status(body, len, 0, st, NULL), 0);
        assert_int_equal(st->n_members, 0);
        assert_true(st->sessions == big->st.sessions);
        free(st);
        free(big);
}

/* STATUS with PROTO_FLAG_VERSIONS: the request is an empty STATUS with the
 * flag, the reply the same body as without it and the node's versions
 * after the members; either shape read as the other is malformed (an old
 * client, which never asks, never sees the tail). */
static void round_trip_status_versions(void **state)
{
        struct proto_status st, *back = malloc(sizeof *back);
        struct proto_versions v = {{"0.2.0", 5}, 3, 11, 1}, got;
        char longest[PROTO_RELEASE_MAX + 2];
        uint8_t buf[1024];
        struct proto_header h;
        size_t n, plain;

        (void)state;
        assert_non_null(back);
        memset(&st, 0, sizeof st);
        st.id = 2;
        st.role = 3;
        st.n_members = 1;
        st.members[0].id = 2;
        st.members[0].raft_address = (struct proto_string){"127.0.0.1:1", 11};

        n = proto_write_status_request(buf, sizeof buf, 9, PROTO_FLAG_VERSIONS);
        assert_int_equal(n, PROTO_HEADER_SIZE);
        assert_int_equal(proto_header_decode(&h, buf, PROTO_MAX_BODY), 0);
        assert_int_equal(h.type, PROTO_STATUS);
        assert_int_equal(h.flags, PROTO_FLAG_VERSIONS);
        assert_int_equal(proto_write_status_request(buf, sizeof buf, 9, 0), n);
        assert_int_equal(
            proto_write_status_request(buf, sizeof buf, 9, PROTO_FLAG_NAMES),
            0);

        plain = proto_write_status(buf, sizeof buf, 9, 0, &st, NULL);
        n = proto_write_status(buf, sizeof buf, 9, PROTO_FLAG_VERSIONS, &st,
                               &v);
        assert_int_equal(n, plain + 1 + 5 + 3 * 2);
        assert_int_equal(proto_header_decode(&h, buf, PROTO_MAX_BODY), 0);
        assert_int_equal(h.type, PROTO_STATUS_REPLY);
        assert_int_equal(h.flags, PROTO_FLAG_VERSIONS);
        assert_int_equal(proto_read_status(buf + PROTO_HEADER_SIZE, h.length,
                                           h.flags, back, &got),
                         0);
        assert_true(back->id == 2);
        assert_int_equal(back->n_members, 1);
        assert_true(string_is(got.release, "0.2.0"));
        assert_int_equal(got.command, 3);
        assert_int_equal(got.snapshot, 11);
        assert_int_equal(got.container, 1);
        /* Read without the flag, the tail is trailing bytes. */
        assert_int_equal(
            proto_read_status(buf + PROTO_HEADER_SIZE, h.length, 0, back, NULL),
            BATON_EMALFORMED);
        /* A plain reply read with the flag lacks its tail. */
        plain = proto_write_status(buf, sizeof buf, 9, 0, &st, NULL);
        assert_int_equal(proto_read_status(buf + PROTO_HEADER_SIZE,
                                           plain - PROTO_HEADER_SIZE,
                                           PROTO_FLAG_VERSIONS, back, &got),
                         BATON_EMALFORMED);

        /* The release: 1..PROTO_RELEASE_MAX bytes, no NUL. */
        v.release.len = 0;
        assert_int_equal(proto_write_status(buf, sizeof buf, 9,
                                            PROTO_FLAG_VERSIONS, &st, &v),
                         0);
        memset(longest, '9', sizeof longest);
        v.release = (struct proto_string){longest, PROTO_RELEASE_MAX};
        assert_true(proto_write_status(buf, sizeof buf, 9, PROTO_FLAG_VERSIONS,
                                       &st, &v) > 0);
        v.release.len = PROTO_RELEASE_MAX + 1;
        assert_int_equal(proto_write_status(buf, sizeof buf, 9,
                                            PROTO_FLAG_VERSIONS, &st, &v),
                         0);
        v.release = (struct proto_string){"0.\0", 3};
        assert_int_equal(proto_write_status(buf, sizeof buf, 9,
                                            PROTO_FLAG_VERSIONS, &st, &v),
                         0);
        free(back);
}

static void round_trip_keepalive_ok(void **state)
{
        uint8_t buf[64];
        const uint8_t *body;
        size_t n, len;
        uint32_t ttl, revoked;

        (void)state;
        n = proto_write_keepalive_ok(buf, sizeof buf, 21, 0, 0xdeadbeefU, 0);
        assert_int_equal(n, PROTO_HEADER_SIZE + 4);
        body = check_frame(buf, n, PROTO_KEEPALIVE_OK, 21, &len);
        assert_int_equal(proto_read_keepalive_ok(body, len, 0, &ttl, &revoked),
                         0);
        assert_int_equal(ttl, 0xdeadbeefU);
}

/* Every writer sizes with a NULL buffer, refuses every capacity that is too
 * small (writing nothing past it), and fits exactly its own length. */
static void writers_size_and_fit(void **state)
{
        uint8_t buf[FRAME_MAX + 1];
        uint8_t want[FRAME_MAX];
        size_t n, cap;
        int i;

        (void)state;
        for (i = 0; i < N_CORPUS; i++) {
                n = write_nth(i, want, sizeof want);
                assert_true(n >= PROTO_HEADER_SIZE && n <= FRAME_MAX);
                assert_int_equal(write_nth(i, NULL, 0), n);
                for (cap = 0; cap < n; cap++) {
                        memset(buf, CANARY, sizeof buf);
                        assert_int_equal(write_nth(i, buf, cap), 0);
                        assert_int_equal(buf[cap], CANARY);
                }
                memset(buf, CANARY, sizeof buf);
                assert_int_equal(write_nth(i, buf, n), n);
                assert_memory_equal(buf, want, n);
                assert_int_equal(buf[n], CANARY);
        }
}

/* --- Writers refuse what they cannot encode faithfully --------------------
 */

static void writers_refuse_bad_names(void **state)
{
        char name[COMMAND_NAME_MAX + 1];
        uint8_t buf[FRAME_MAX];

        (void)state;
        memset(name, 'n', sizeof name);
        assert_int_equal(proto_write_query(buf, sizeof buf, 1, 0, name, 0), 0);
        assert_int_equal(proto_write_query(buf, sizeof buf, 1, 0, NULL, 3), 0);
        assert_int_equal(proto_write_query(buf, sizeof buf, 1, 0, name,
                                           COMMAND_NAME_MAX + 1),
                         0);
        assert_int_equal(proto_write_check(buf, sizeof buf, 1, name,
                                           COMMAND_NAME_MAX + 1, 5),
                         0);
        assert_int_equal(proto_write_check(buf, sizeof buf, 1, name, 0, 5), 0);
        assert_int_equal(proto_write_check(buf, sizeof buf, 1, NULL, 1, 5), 0);
        /* A length of 256 must not wrap to a 0-byte u8 string. */
        assert_int_equal(proto_write_query(buf, sizeof buf, 1, 0, name, 256),
                         0);
        name[7] = '\0';
        assert_int_equal(proto_write_query(buf, sizeof buf, 1, 0, name, 10), 0);
        assert_int_equal(proto_write_check(buf, sizeof buf, 1, name, 10, 5), 0);
        /* The same buffer up to the NUL is a fine name. */
        assert_int_not_equal(proto_write_query(buf, sizeof buf, 1, 0, name, 7),
                             0);
}

static void writers_refuse_long_strings(void **state)
{
        char addr[PROTO_ADDRESS_MAX + 2];
        char msg[PROTO_MESSAGE_MAX + 2];
        struct big_status *big = malloc(sizeof *big);
        struct proto_status *st;
        uint8_t buf[FRAME_MAX];

        (void)state;
        assert_non_null(big);
        memset(addr, '1', sizeof addr);
        addr[PROTO_ADDRESS_MAX + 1] = '\0'; /* one byte too long */
        assert_int_equal(
            proto_write_member_add(buf, sizeof buf, 1, 2, addr, "1.2.3.4:5"),
            0);
        assert_int_equal(
            proto_write_member_add(buf, sizeof buf, 1, 2, "1.2.3.4:5", addr),
            0);
        assert_int_equal(proto_write_not_leader(buf, sizeof buf, 1, 2, addr),
                         0);
        addr[PROTO_ADDRESS_MAX] = '\0'; /* exactly the maximum */
        assert_int_not_equal(
            proto_write_member_add(buf, sizeof buf, 1, 2, addr, addr), 0);
        assert_int_not_equal(
            proto_write_not_leader(buf, sizeof buf, 1, 2, addr), 0);
        /* MEMBER_ADD needs both addresses. */
        assert_int_equal(
            proto_write_member_add(buf, sizeof buf, 1, 2, "", "1.2.3.4:5"), 0);
        assert_int_equal(
            proto_write_member_add(buf, sizeof buf, 1, 2, "1.2.3.4:5", NULL),
            0);

        memset(msg, 'm', sizeof msg);
        msg[PROTO_MESSAGE_MAX + 1] = '\0';
        assert_int_equal(
            proto_write_error(buf, sizeof buf, 1, BATON_EMALFORMED, msg), 0);
        msg[PROTO_MESSAGE_MAX] = '\0';
        assert_int_not_equal(
            proto_write_error(buf, sizeof buf, 1, BATON_EMALFORMED, msg), 0);

        fill_big_status(big);
        big->st.members[5].client_address.len = PROTO_ADDRESS_MAX + 1;
        assert_int_equal(
            proto_write_status(buf, sizeof buf, 1, 0, &big->st, NULL), 0);
        fill_big_status(big);
        big->st.members[15].raft_address.p = NULL;
        assert_int_equal(
            proto_write_status(buf, sizeof buf, 1, 0, &big->st, NULL), 0);
        fill_big_status(big);
        big->addr[0][3][10] = '\0';
        assert_int_equal(
            proto_write_status(buf, sizeof buf, 1, 0, &big->st, NULL), 0);
        /* Too many members: refused before reading past the array, which
         * the sanitizer would see in this exact-size allocation. */
        st = calloc(1, sizeof *st);
        assert_non_null(st);
        st->n_members = PROTO_MAX_MEMBERS + 1;
        assert_int_equal(proto_write_status(buf, sizeof buf, 1, 0, st, NULL),
                         0);
        assert_int_equal(proto_write_status(NULL, 0, 1, 0, st, NULL), 0);
        st->n_members = PROTO_MAX_MEMBERS;
        assert_int_not_equal(
            proto_write_status(buf, sizeof buf, 1, 0, st, NULL), 0);
        free(st);
        free(big);
}

static void writers_refuse_bad_types(void **state)
{
        uint8_t buf[FRAME_MAX];
        uint8_t cmd[8] = {0};
        int t;

        (void)state;
        for (t = 0; t < 256; t++) {
                bool empty = t == PROTO_PING || t == PROTO_PONG;
                bool id = t == PROTO_MEMBER_REMOVE || t == PROTO_TRANSFER ||
                          t == PROTO_UNWATCH;

                assert_int_equal(
                    proto_write_empty(buf, sizeof buf, 1, (uint8_t)t) != 0,
                    empty);
                assert_int_equal(
                    proto_write_id(buf, sizeof buf, 1, (uint8_t)t, 2) != 0, id);
        }
        /* A command frame carries a command: not nothing, not too much. */
        assert_int_equal(proto_write_command(buf, sizeof buf, 1, cmd, 0), 0);
        assert_int_equal(proto_write_command(buf, sizeof buf, 1, NULL, 8), 0);
        assert_int_equal(
            proto_write_command(NULL, 0, 1, cmd, PROTO_MAX_BODY + 1), 0);
}

/* --- Header checks --------------------------------------------------------
 */

/* Restamping a frame's id changes those 8 bytes and nothing else. */
static void header_set_id(void **state)
{
        struct proto_header h = {PROTO_VERSION, PROTO_QUERY, 0, 7, 1};
        struct proto_header back;
        uint8_t frame[PROTO_HEADER_SIZE], before[PROTO_HEADER_SIZE];

        (void)state;
        proto_header_encode(&h, frame);
        memcpy(before, frame, sizeof frame);
        proto_header_set_id(frame, 0x0102030405060708ULL);
        assert_memory_equal(frame, before, 8);
        assert_int_equal(frame[8], 0x08);
        assert_int_equal(frame[15], 0x01);
        assert_int_equal(proto_header_decode(&back, frame, PROTO_MAX_BODY), 0);
        assert_int_equal(back.id, 0x0102030405060708ULL);
        assert_int_equal(back.type, PROTO_QUERY);
        assert_int_equal(back.length, 7);
}

static void header_accepts_exactly_the_known_types(void **state)
{
        static const uint8_t known[] = {
            PROTO_COMMAND,       PROTO_KEEPALIVE,    PROTO_QUERY,
            PROTO_CHECK,         PROTO_STATUS,       PROTO_MEMBER_ADD,
            PROTO_MEMBER_REMOVE, PROTO_TRANSFER,     PROTO_PING,
            PROTO_RESULT,        PROTO_NOT_LEADER,   PROTO_ERROR,
            PROTO_STATUS_REPLY,  PROTO_KEEPALIVE_OK, PROTO_PONG,
            PROTO_LIST,          PROTO_LIST_REPLY,   PROTO_ATTACH,
            PROTO_WATCH,         PROTO_UNWATCH,      PROTO_WATCH_EVENT,
            PROTO_BACKUP,        PROTO_BACKUP_CHUNK, PROTO_ACL,
            PROTO_ACL_REPLY,     PROTO_SESSIONS,     PROTO_SESSIONS_REPLY,
        };
        struct proto_header h;
        uint8_t buf[PROTO_HEADER_SIZE];
        int t;

        (void)state;
        for (t = 0; t < 256; t++) {
                bool is_known = memchr(known, t, sizeof known) != NULL;
                struct proto_header in = {PROTO_VERSION, (uint8_t)t, 0, 0, 1};

                proto_header_encode(&in, buf);
                assert_int_equal(proto_header_decode(&h, buf, PROTO_MAX_BODY),
                                 is_known ? 0 : BATON_EMALFORMED);
                assert_int_equal(strcmp(proto_type_name(t), "UNKNOWN") != 0,
                                 is_known);
        }
}

static void header_errors(void **state)
{
        struct proto_header h;
        uint8_t buf[PROTO_HEADER_SIZE];
        struct proto_header in = {PROTO_VERSION, PROTO_PING, 0, 0, 1};
        int v;

        (void)state;
        for (v = 0; v < 256; v++) {
                in.version = (uint8_t)v;
                proto_header_encode(&in, buf);
                assert_int_equal(proto_header_decode(&h, buf, PROTO_MAX_BODY),
                                 v == PROTO_VERSION ? 0 : BATON_EVERSION);
        }
        in.version = PROTO_VERSION;

        in.flags = 1;
        proto_header_encode(&in, buf);
        assert_int_equal(proto_header_decode(&h, buf, PROTO_MAX_BODY),
                         BATON_EMALFORMED);
        in.flags = 0x8000;
        proto_header_encode(&in, buf);
        assert_int_equal(proto_header_decode(&h, buf, PROTO_MAX_BODY),
                         BATON_EMALFORMED);
        /* Versions only on STATUS and its reply. */
        in.flags = PROTO_FLAG_VERSIONS;
        proto_header_encode(&in, buf);
        assert_int_equal(proto_header_decode(&h, buf, PROTO_MAX_BODY),
                         BATON_EMALFORMED);
        in.type = PROTO_STATUS;
        proto_header_encode(&in, buf);
        assert_int_equal(proto_header_decode(&h, buf, PROTO_MAX_BODY), 0);
        in.type = PROTO_STATUS_REPLY;
        proto_header_encode(&in, buf);
        assert_int_equal(proto_header_decode(&h, buf, PROTO_MAX_BODY), 0);
        in.type = PROTO_PING;
        in.flags = 0;

        in.length = 100;
        proto_header_encode(&in, buf);
        assert_int_equal(proto_header_decode(&h, buf, 100), 0);
        assert_int_equal(proto_header_decode(&h, buf, 99), BATON_ETOOBIG);
        assert_int_equal(proto_header_decode(&h, buf, 0), BATON_ETOOBIG);
        in.length = UINT32_MAX;
        proto_header_encode(&in, buf);
        assert_int_equal(proto_header_decode(&h, buf, PROTO_MAX_BODY),
                         BATON_ETOOBIG);
        assert_int_equal(proto_header_decode(&h, buf, UINT32_MAX), 0);

        /* The version is checked first: a future version may change the
         * rest of the header. */
        in.version = PROTO_VERSION + 1;
        in.flags = 1;
        in.type = 200;
        proto_header_encode(&in, buf);
        assert_int_equal(proto_header_decode(&h, buf, PROTO_MAX_BODY),
                         BATON_EVERSION);
}

static void type_names(void **state)
{
        (void)state;
        assert_string_equal(proto_type_name(PROTO_COMMAND), "COMMAND");
        assert_string_equal(proto_type_name(PROTO_KEEPALIVE), "KEEPALIVE");
        assert_string_equal(proto_type_name(PROTO_QUERY), "QUERY");
        assert_string_equal(proto_type_name(PROTO_CHECK), "CHECK");
        assert_string_equal(proto_type_name(PROTO_STATUS), "STATUS");
        assert_string_equal(proto_type_name(PROTO_MEMBER_ADD), "MEMBER_ADD");
        assert_string_equal(proto_type_name(PROTO_MEMBER_REMOVE),
                            "MEMBER_REMOVE");
        assert_string_equal(proto_type_name(PROTO_TRANSFER), "TRANSFER");
        assert_string_equal(proto_type_name(PROTO_PING), "PING");
        assert_string_equal(proto_type_name(PROTO_RESULT), "RESULT");
        assert_string_equal(proto_type_name(PROTO_NOT_LEADER), "NOT_LEADER");
        assert_string_equal(proto_type_name(PROTO_ERROR), "ERROR");
        assert_string_equal(proto_type_name(PROTO_STATUS_REPLY),
                            "STATUS_REPLY");
        assert_string_equal(proto_type_name(PROTO_KEEPALIVE_OK),
                            "KEEPALIVE_OK");
        assert_string_equal(proto_type_name(PROTO_PONG), "PONG");
        assert_string_equal(proto_type_name(0), "UNKNOWN");
        assert_string_equal(proto_type_name(PROTO_LIST), "LIST");
        assert_string_equal(proto_type_name(PROTO_LIST_REPLY), "LIST_REPLY");
        assert_string_equal(proto_type_name(PROTO_ATTACH), "ATTACH");
        assert_string_equal(proto_type_name(PROTO_WATCH), "WATCH");
        assert_string_equal(proto_type_name(PROTO_UNWATCH), "UNWATCH");
        assert_string_equal(proto_type_name(PROTO_WATCH_EVENT), "WATCH_EVENT");
        assert_string_equal(proto_type_name(PROTO_BACKUP), "BACKUP");
        assert_string_equal(proto_type_name(PROTO_BACKUP_CHUNK),
                            "BACKUP_CHUNK");
        assert_string_equal(proto_type_name(PROTO_ACL), "ACL");
        assert_string_equal(proto_type_name(PROTO_ACL_REPLY), "ACL_REPLY");
        assert_string_equal(proto_type_name(PROTO_SESSIONS), "SESSIONS");
        assert_string_equal(proto_type_name(PROTO_SESSIONS_REPLY),
                            "SESSIONS_REPLY");
        assert_string_equal(proto_type_name(17), "UNKNOWN");
        assert_string_equal(proto_type_name(63), "UNKNOWN");
        assert_string_equal(proto_type_name(75), "UNKNOWN");
        assert_string_equal(proto_type_name(-1), "UNKNOWN");
        assert_string_equal(proto_type_name(256 + PROTO_PING), "UNKNOWN");
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(header_exact_bytes),
            cmocka_unit_test(header_set_id),
            cmocka_unit_test(result_exact_bytes),
            cmocka_unit_test(round_trip_command),
            cmocka_unit_test(round_trip_u64_requests),
            cmocka_unit_test(round_trip_query_check),
            cmocka_unit_test(round_trip_empty),
            cmocka_unit_test(round_trip_member_add),
            cmocka_unit_test(round_trip_result),
            cmocka_unit_test(round_trip_not_leader),
            cmocka_unit_test(round_trip_error),
            cmocka_unit_test(round_trip_status),
            cmocka_unit_test(round_trip_status_versions),
            cmocka_unit_test(round_trip_keepalive_ok),
            cmocka_unit_test(round_trip_list),
            cmocka_unit_test(list_request_bodies),
            cmocka_unit_test(round_trip_list_reply),
            cmocka_unit_test(list_reply_limits),
            cmocka_unit_test(names_flag_only_where_allowed),
            cmocka_unit_test(names_requests_exact_bytes),
            cmocka_unit_test(names_result_exact_bytes),
            cmocka_unit_test(names_result_limits),
            cmocka_unit_test(names_list_reply_round_trip),
            cmocka_unit_test(names_values_list_reply_round_trip),
            cmocka_unit_test(holders_flag_only_where_allowed),
            cmocka_unit_test(holders_list_reply_round_trip),
            cmocka_unit_test(attach_exact_bytes),
            cmocka_unit_test(backup_frames_round_trip),
            cmocka_unit_test(backup_chunk_bounds),
            cmocka_unit_test(backup_file_checks_every_byte),
            cmocka_unit_test(attach_bad_bodies),
            cmocka_unit_test(refusal_in_the_old_version),
            cmocka_unit_test(writers_size_and_fit),
            cmocka_unit_test(writers_refuse_bad_names),
            cmocka_unit_test(writers_refuse_long_strings),
            cmocka_unit_test(writers_refuse_bad_types),
            cmocka_unit_test(header_accepts_exactly_the_known_types),
            cmocka_unit_test(header_errors),
            cmocka_unit_test(type_names),
            cmocka_unit_test(reader_byte_by_byte),
            cmocka_unit_test(reader_random_splits),
            cmocka_unit_test(reader_several_frames_per_buffer),
            cmocka_unit_test(reader_too_big_before_allocating),
            cmocka_unit_test(reader_errors_are_sticky),
            cmocka_unit_test(reader_out_of_memory),
            cmocka_unit_test(reader_reuses_body_buffer),
            cmocka_unit_test(bodies_truncated_or_trailing),
            cmocka_unit_test(fixed_bodies_exact),
            cmocka_unit_test(bodies_bad_lock_names),
            cmocka_unit_test(bodies_bad_strings),
            cmocka_unit_test(fuzz_reader_and_bodies),
            cmocka_unit_test(sessions_request_round_trip),
            cmocka_unit_test(sessions_request_bad_bodies),
            cmocka_unit_test(sessions_reply_round_trip),
            cmocka_unit_test(sessions_reply_largest_fits),
            cmocka_unit_test(sessions_reply_bad_bodies),
            cmocka_unit_test(acl_old_ops_unchanged),
            cmocka_unit_test(acl_rule_ops_round_trip),
            cmocka_unit_test(acl_rule_ops_refused),
            cmocka_unit_test(acl_rule_bodies_refused),
            cmocka_unit_test(acl_quota_ops_round_trip),
            cmocka_unit_test(acl_quota_ops_refused),
            cmocka_unit_test(acl_quota_bodies_refused),
            cmocka_unit_test(acl_reply_formats),
            cmocka_unit_test(acl_reply_limits),
            cmocka_unit_test(acl_reply_bad_bodies),
            cmocka_unit_test(acl_reply_quota_format),
            cmocka_unit_test(acl_reply_quota_bad_bodies),
        };

        return cmocka_run_group_tests_name("proto", tests, NULL, NULL);
}
