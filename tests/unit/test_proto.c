/* Unit tests for the client protocol: frame codec and incremental reader. */
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
#include "../../src/fsm/command.h"
#include "../../src/proto/proto.h"
#include "../lib/failalloc.h"

#define CANARY    0xA5
#define FRAME_MAX (PROTO_HEADER_SIZE + 2400)
#define N_CORPUS  19

/* xorshift64: a tiny, seeded generator so every run sees the same inputs. */
static uint64_t next_rand(uint64_t *s)
{
        uint64_t x = *s;

        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        *s = x;
        return x;
}

static size_t rand_below(uint64_t *s, size_t n)
{
        return n == 0 ? 0 : (size_t)(next_rand(s) % n);
}

/* --- Fixtures -------------------------------------------------------------
 */

static const char lock_name[] = "db/primary";

/* A status reply at its largest: every member, every address at its
 * maximum. The strings live in `addr`, which must outlive its use. */
struct big_status {
        struct proto_status st;
        char addr[2][PROTO_MAX_MEMBERS][PROTO_ADDRESS_MAX];
};

static void fill_big_status(struct big_status *b)
{
        unsigned i;
        int k;

        memset(b, 0, sizeof *b);
        b->st.id = 0x0102030405060708ULL;
        b->st.role = 3;
        b->st.term = 0x1112131415161718ULL;
        b->st.leader_id = 0x2122232425262728ULL;
        b->st.commit_index = 0x3132333435363738ULL;
        b->st.applied_index = 0x4142434445464748ULL;
        b->st.last_index = 0x5152535455565758ULL;
        b->st.sessions = 0x6162636465666768ULL;
        b->st.locks = 0x7172737475767778ULL;
        b->st.waiters = 0x8182838485868788ULL;
        b->st.n_members = PROTO_MAX_MEMBERS;
        for (i = 0; i < PROTO_MAX_MEMBERS; i++) {
                struct proto_member *m = &b->st.members[i];

                for (k = 0; k < 2; k++) {
                        memset(b->addr[k][i], 'a' + (int)i, PROTO_ADDRESS_MAX);
                        b->addr[k][i][0] = k == 0 ? 'R' : 'C';
                }
                m->id = 100 + i;
                m->role = (uint8_t)(i % 3);
                m->raft_address.p = b->addr[0][i];
                m->raft_address.len = PROTO_ADDRESS_MAX;
                m->client_address.p = b->addr[1][i];
                m->client_address.len = PROTO_ADDRESS_MAX;
        }
}

static const struct proto_result full_result = {
    .status = BATON_EBUSY,
    .kind = 4,
    .index = 0x0102030405060708ULL,
    .session = 0x1112131415161718ULL,
    .owner = 0x2122232425262728ULL,
    .token = 0x3132333435363738ULL,
    .count = 0x41424344U,
    .waiters = 0x51525354U,
};

/* An encoded ACQUIRE with every field set. */
static size_t acquire_command(uint8_t *buf, size_t cap)
{
        struct command c;

        memset(&c, 0, sizeof c);
        c.type = COMMAND_ACQUIRE;
        c.session = 7;
        c.seq = 3;
        c.ack = 2;
        c.owner = 9;
        c.wait_ms = 1000;
        c.mode = COMMAND_MODE_EXCLUSIVE;
        c.name = lock_name;
        c.name_len = sizeof lock_name - 1;
        return command_encode(&c, buf, cap);
}

/*
 * Writes frame number `i` of a corpus that holds every frame type (several
 * of them at their largest) into `out`; returns what the writer returned.
 * The frame's id is i + 1.
 */
static size_t write_nth(int i, uint8_t *out, size_t cap)
{
        uint8_t cmd[COMMAND_MAX_SIZE];
        char long_name[COMMAND_NAME_MAX];
        char message[PROTO_MESSAGE_MAX + 1];
        struct big_status big;
        struct proto_status small;
        uint64_t id = (uint64_t)i + 1;
        size_t n;

        switch (i) {
        case 0:
                n = acquire_command(cmd, sizeof cmd);
                assert_true(n > 0);
                return proto_write_command(out, cap, id, cmd, n);
        case 1:
                return proto_write_keepalive(out, cap, id,
                                             0x1122334455667788ULL);
        case 2:
                return proto_write_query(out, cap, id, lock_name,
                                         sizeof lock_name - 1);
        case 3:
                memset(long_name, 'n', sizeof long_name);
                return proto_write_check(out, cap, id, long_name,
                                         sizeof long_name,
                                         0xfedcba9876543210ULL);
        case 4:
                return proto_write_empty(out, cap, id, PROTO_STATUS);
        case 5:
                return proto_write_member_add(out, cap, id, 4, "10.0.0.4:7001",
                                              "10.0.0.4:7101");
        case 6:
                return proto_write_id(out, cap, id, PROTO_MEMBER_REMOVE, 3);
        case 7:
                return proto_write_id(out, cap, id, PROTO_TRANSFER, 0);
        case 8:
                return proto_write_empty(out, cap, id, PROTO_PING);
        case 9:
                return proto_write_result(out, cap, id, &full_result);
        case 10:
                return proto_write_not_leader(out, cap, id, 2, "10.0.0.2:7101");
        case 11:
                return proto_write_not_leader(out, cap, id, 0, NULL);
        case 12:
                return proto_write_error(out, cap, id, BATON_EMALFORMED,
                                         "bad frame");
        case 13:
                fill_big_status(&big);
                return proto_write_status(out, cap, id, &big.st);
        case 14:
                memset(&small, 0, sizeof small);
                small.id = 1;
                small.role = 1;
                return proto_write_status(out, cap, id, &small);
        case 15:
                return proto_write_keepalive_ok(out, cap, id, 10000);
        case 16:
                return proto_write_empty(out, cap, id, PROTO_PONG);
        case 17:
                return proto_write_query(out, cap, id, "x", 1);
        case 18:
                memset(message, 'm', PROTO_MESSAGE_MAX);
                message[PROTO_MESSAGE_MAX] = '\0';
                return proto_write_error(out, cap, id, INT32_MIN, message);
        default:
                fail_msg("no corpus frame %d", i);
                return 0;
        }
}

struct frame {
        size_t len;
        uint8_t b[FRAME_MAX];
};

static struct frame *make_corpus(void)
{
        struct frame *f = calloc(N_CORPUS, sizeof *f);
        int i;

        assert_non_null(f);
        for (i = 0; i < N_CORPUS; i++) {
                f[i].len = write_nth(i, f[i].b, sizeof f[i].b);
                assert_true(f[i].len >= PROTO_HEADER_SIZE);
        }
        return f;
}

/* Reads a body with the reader its frame type calls for; empty bodies
 * (STATUS, PING, PONG) have no reader, so their rule is spelled out. */
static int read_body(uint8_t type, const uint8_t *body, size_t len)
{
        struct proto_string s1, s2;
        struct proto_result res;
        struct proto_status st;
        uint64_t u64;
        uint32_t u32;
        int status;

        switch (type) {
        case PROTO_COMMAND: {
                struct command c;

                return command_decode(&c, body, len);
        }
        case PROTO_KEEPALIVE:
        case PROTO_MEMBER_REMOVE:
        case PROTO_TRANSFER:
                return proto_read_u64(body, len, &u64);
        case PROTO_QUERY:
                return proto_read_query(body, len, &s1);
        case PROTO_CHECK:
                return proto_read_check(body, len, &s1, &u64);
        case PROTO_MEMBER_ADD:
                return proto_read_member_add(body, len, &u64, &s1, &s2);
        case PROTO_RESULT:
                return proto_read_result(body, len, &res);
        case PROTO_NOT_LEADER:
                return proto_read_not_leader(body, len, &u64, &s1);
        case PROTO_ERROR:
                return proto_read_error(body, len, &status, &s1);
        case PROTO_STATUS_REPLY:
                return proto_read_status(body, len, &st);
        case PROTO_KEEPALIVE_OK:
                return proto_read_u32(body, len, &u32);
        case PROTO_STATUS:
        case PROTO_PING:
        case PROTO_PONG:
                return len == 0 ? 0 : BATON_EMALFORMED;
        default:
                return BATON_EMALFORMED;
        }
}

/* Decodes the header of a whole frame and checks it against the buffer. */
static const uint8_t *check_frame(const uint8_t *buf, size_t n, uint8_t type,
                                  uint64_t id, size_t *body_len)
{
        struct proto_header h;

        assert_true(n >= PROTO_HEADER_SIZE);
        assert_int_equal(proto_header_decode(&h, buf, PROTO_MAX_BODY), 0);
        assert_int_equal(h.version, PROTO_VERSION);
        assert_int_equal(h.type, type);
        assert_int_equal(h.flags, 0);
        assert_true(h.id == id);
        assert_int_equal(h.length, n - PROTO_HEADER_SIZE);
        *body_len = h.length;
        return buf + PROTO_HEADER_SIZE;
}

static bool string_is(struct proto_string s, const char *want)
{
        return s.len == strlen(want) && memcmp(s.p, want, s.len) == 0;
}

/* --- Exact bytes ----------------------------------------------------------
 */

/* A header's bytes, written out by hand from the layout in proto.h. */
static void header_exact_bytes(void **state)
{
        static const uint8_t want[PROTO_HEADER_SIZE] = {
            0x01,                                           /* version */
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
        assert_int_equal(back.version, 1);
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
            0x01, 0x40, 0x00, 0x00,                         /* v1, RESULT */
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
        n = proto_write_result(buf, sizeof buf, 0x1122334455667788ULL, &r);
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
        n = proto_write_keepalive(buf, sizeof buf, 1, 0x1122334455667788ULL);
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
        n = proto_write_query(buf, sizeof buf, 5, lock_name,
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
                n = proto_write_empty(buf, sizeof buf, 40 + i, types[i]);
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
        n = proto_write_result(buf, sizeof buf, 11, &full_result);
        assert_int_equal(n, PROTO_HEADER_SIZE + 45);
        body = check_frame(buf, n, PROTO_RESULT, 11, &len);
        memset(&r, 0, sizeof r);
        assert_int_equal(proto_read_result(body, len, &r), 0);
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
        n = proto_write_result(buf, sizeof buf, 12, &zero);
        body = check_frame(buf, n, PROTO_RESULT, 12, &len);
        assert_int_equal(proto_read_result(body, len, &r), 0);
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
        n = proto_write_status(buf, sizeof buf, 18, &big->st);
        assert_int_equal(n, PROTO_HEADER_SIZE + 74 +
                                PROTO_MAX_MEMBERS *
                                    (8 + 1 + 2 * (1 + PROTO_ADDRESS_MAX)));
        body = check_frame(buf, n, PROTO_STATUS_REPLY, 18, &len);
        memset(st, 0xee, sizeof *st);
        assert_int_equal(proto_read_status(body, len, st), 0);
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
        n = proto_write_status(buf, sizeof buf, 19, &big->st);
        assert_int_equal(n, PROTO_HEADER_SIZE + 74 + 8 + 1 + 1 + 1);
        body = check_frame(buf, n, PROTO_STATUS_REPLY, 19, &len);
        assert_int_equal(proto_read_status(body, len, st), 0);
        assert_int_equal(st->n_members, 1);
        assert_true(st->members[0].id == 1);
        assert_int_equal(st->members[0].raft_address.len, 0);
        assert_int_equal(st->members[0].client_address.len, 0);

        big->st.n_members = 0;
        n = proto_write_status(buf, sizeof buf, 20, &big->st);
        assert_int_equal(n, PROTO_HEADER_SIZE + 74);
        body = check_frame(buf, n, PROTO_STATUS_REPLY, 20, &len);
        assert_int_equal(proto_read_status(body, len, st), 0);
        assert_int_equal(st->n_members, 0);
        assert_true(st->sessions == big->st.sessions);
        free(st);
        free(big);
}

static void round_trip_keepalive_ok(void **state)
{
        uint8_t buf[64];
        const uint8_t *body;
        size_t n, len;
        uint32_t ttl;

        (void)state;
        n = proto_write_keepalive_ok(buf, sizeof buf, 21, 0xdeadbeefU);
        assert_int_equal(n, PROTO_HEADER_SIZE + 4);
        body = check_frame(buf, n, PROTO_KEEPALIVE_OK, 21, &len);
        assert_int_equal(proto_read_u32(body, len, &ttl), 0);
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
        assert_int_equal(proto_write_query(buf, sizeof buf, 1, name, 0), 0);
        assert_int_equal(proto_write_query(buf, sizeof buf, 1, NULL, 3), 0);
        assert_int_equal(
            proto_write_query(buf, sizeof buf, 1, name, COMMAND_NAME_MAX + 1),
            0);
        assert_int_equal(proto_write_check(buf, sizeof buf, 1, name,
                                           COMMAND_NAME_MAX + 1, 5),
                         0);
        assert_int_equal(proto_write_check(buf, sizeof buf, 1, name, 0, 5), 0);
        assert_int_equal(proto_write_check(buf, sizeof buf, 1, NULL, 1, 5), 0);
        /* A length of 256 must not wrap to a 0-byte u8 string. */
        assert_int_equal(proto_write_query(buf, sizeof buf, 1, name, 256), 0);
        name[7] = '\0';
        assert_int_equal(proto_write_query(buf, sizeof buf, 1, name, 10), 0);
        assert_int_equal(proto_write_check(buf, sizeof buf, 1, name, 10, 5), 0);
        /* The same buffer up to the NUL is a fine name. */
        assert_int_not_equal(proto_write_query(buf, sizeof buf, 1, name, 7), 0);
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
        assert_int_equal(proto_write_status(buf, sizeof buf, 1, &big->st), 0);
        fill_big_status(big);
        big->st.members[15].raft_address.p = NULL;
        assert_int_equal(proto_write_status(buf, sizeof buf, 1, &big->st), 0);
        fill_big_status(big);
        big->addr[0][3][10] = '\0';
        assert_int_equal(proto_write_status(buf, sizeof buf, 1, &big->st), 0);
        /* Too many members: refused before reading past the array, which
         * the sanitizer would see in this exact-size allocation. */
        st = calloc(1, sizeof *st);
        assert_non_null(st);
        st->n_members = PROTO_MAX_MEMBERS + 1;
        assert_int_equal(proto_write_status(buf, sizeof buf, 1, st), 0);
        assert_int_equal(proto_write_status(NULL, 0, 1, st), 0);
        st->n_members = PROTO_MAX_MEMBERS;
        assert_int_not_equal(proto_write_status(buf, sizeof buf, 1, st), 0);
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
                bool empty =
                    t == PROTO_STATUS || t == PROTO_PING || t == PROTO_PONG;
                bool id = t == PROTO_MEMBER_REMOVE || t == PROTO_TRANSFER;

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

static void header_accepts_exactly_the_known_types(void **state)
{
        static const uint8_t known[] = {
            PROTO_COMMAND,       PROTO_KEEPALIVE,    PROTO_QUERY,
            PROTO_CHECK,         PROTO_STATUS,       PROTO_MEMBER_ADD,
            PROTO_MEMBER_REMOVE, PROTO_TRANSFER,     PROTO_PING,
            PROTO_RESULT,        PROTO_NOT_LEADER,   PROTO_ERROR,
            PROTO_STATUS_REPLY,  PROTO_KEEPALIVE_OK, PROTO_PONG,
            PROTO_LIST,          PROTO_LIST_REPLY,
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
        in.version = 2;
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
        assert_string_equal(proto_type_name(11), "UNKNOWN");
        assert_string_equal(proto_type_name(63), "UNKNOWN");
        assert_string_equal(proto_type_name(71), "UNKNOWN");
        assert_string_equal(proto_type_name(-1), "UNKNOWN");
        assert_string_equal(proto_type_name(256 + PROTO_PING), "UNKNOWN");
}

/* --- LIST ----------------------------------------------------------------- */

static void round_trip_list(void **state)
{
        char longest[COMMAND_NAME_MAX + 1];
        uint8_t buf[FRAME_MAX];
        struct proto_string s;
        const uint8_t *body;
        size_t n, len;
        uint32_t limit;

        (void)state;
        n = proto_write_list(buf, sizeof buf, 9, "db/", 3, 25);
        assert_int_equal(n, PROTO_HEADER_SIZE + 1 + 3 + 4);
        body = check_frame(buf, n, PROTO_LIST, 9, &len);
        assert_int_equal(proto_read_list(body, len, &s, &limit), 0);
        assert_true(string_is(s, "db/"));
        assert_int_equal(limit, 25);

        /* An empty prefix lists every lock; the limits are inclusive. */
        n = proto_write_list(buf, sizeof buf, 10, NULL, 0, PROTO_LIST_MAX);
        assert_int_equal(n, PROTO_HEADER_SIZE + 1 + 4);
        body = check_frame(buf, n, PROTO_LIST, 10, &len);
        assert_int_equal(proto_read_list(body, len, &s, &limit), 0);
        assert_int_equal(s.len, 0);
        assert_int_equal(limit, PROTO_LIST_MAX);

        memset(longest, 'x', sizeof longest);
        n = proto_write_list(buf, sizeof buf, 11, longest, COMMAND_NAME_MAX, 1);
        assert_int_equal(n, PROTO_HEADER_SIZE + 1 + COMMAND_NAME_MAX + 4);
        body = check_frame(buf, n, PROTO_LIST, 11, &len);
        assert_int_equal(proto_read_list(body, len, &s, &limit), 0);
        assert_int_equal(s.len, COMMAND_NAME_MAX);
        assert_int_equal(limit, 1);

        /* Refused: too long a prefix, a NUL, a limit out of range, no room. */
        assert_int_equal(proto_write_list(buf, sizeof buf, 1, longest,
                                          COMMAND_NAME_MAX + 1, 1),
                         0);
        assert_int_equal(proto_write_list(buf, sizeof buf, 1, "a\0b", 3, 1), 0);
        assert_int_equal(proto_write_list(buf, sizeof buf, 1, "a", 1, 0), 0);
        assert_int_equal(
            proto_write_list(buf, sizeof buf, 1, "a", 1, PROTO_LIST_MAX + 1),
            0);
        assert_int_equal(
            proto_write_list(buf, PROTO_HEADER_SIZE + 5, 1, "a", 1, 1), 0);
}

static void list_request_bodies(void **state)
{
        uint8_t buf[FRAME_MAX];
        struct proto_string s;
        const uint8_t *body;
        uint8_t bad[16];
        size_t n, len, cut;
        uint32_t limit;

        (void)state;
        n = proto_write_list(buf, sizeof buf, 1, "ab", 2, 7);
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

static void round_trip_list_reply(void **state)
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
        n = proto_write_list_reply(buf, sizeof buf, 4, in, 3, true);
        assert_int_equal(n, PROTO_HEADER_SIZE + PROTO_LIST_REPLY_FIXED +
                                PROTO_LIST_ENTRY_SIZE(3) * 2 +
                                PROTO_LIST_ENTRY_SIZE(1));
        body = check_frame(buf, n, PROTO_LIST_REPLY, 4, &len);
        assert_int_equal(proto_read_list_reply(body, len, out, 3, &got, &more),
                         0);
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
        assert_int_equal(proto_read_list_reply(body, len, out, 2, &got, &more),
                         BATON_EMALFORMED);
        assert_int_equal(got, 0);

        /* An empty reply. */
        n = proto_write_list_reply(buf, sizeof buf, 5, NULL, 0, false);
        assert_int_equal(n, PROTO_HEADER_SIZE + PROTO_LIST_REPLY_FIXED);
        body = check_frame(buf, n, PROTO_LIST_REPLY, 5, &len);
        assert_int_equal(proto_read_list_reply(body, len, out, 0, &got, &more),
                         0);
        assert_int_equal(got, 0);
        assert_false(more);
}

static void list_reply_limits(void **state)
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
            proto_write_list_reply(buf, sizeof buf, 1, in, 3, false), 0);
        in[1].name.p = "x\0y";
        in[1].name.len = 3;
        assert_int_equal(
            proto_write_list_reply(buf, sizeof buf, 1, in, 3, false), 0);
        in[1].name.p = "b";
        in[1].name.len = 1;
        n = proto_write_list_reply(buf, sizeof buf, 1, in, 3, false);
        assert_true(n > 0);
        assert_int_equal(proto_write_list_reply(buf, n - 1, 1, in, 3, false),
                         0);
        assert_int_equal(
            proto_write_list_reply(buf, sizeof buf, 1, in, 3, false), n);
        body = check_frame(buf, n, PROTO_LIST_REPLY, 1, &len);

        /* Every truncation, and a trailing byte, is malformed. */
        for (cut = 0; cut < len; cut++) {
                assert_int_equal(
                    proto_read_list_reply(body, cut, out, 3, &got, &more),
                    BATON_EMALFORMED);
                assert_int_equal(got, 0);
        }
        memcpy(buf + n, "", 1);
        assert_int_equal(
            proto_read_list_reply(body, len + 1, out, 3, &got, &more),
            BATON_EMALFORMED);

        /* A count the bytes cannot hold, a bad `more`, a bad name. */
        big = malloc(len);
        assert_non_null(big);
        memcpy(big, body, len);
        big[0] = 4;
        assert_int_equal(proto_read_list_reply(big, len, out, 3, &got, &more),
                         BATON_EMALFORMED);
        big[0] = 0xff;
        big[3] = 0xff;
        assert_int_equal(proto_read_list_reply(big, len, out, 3, &got, &more),
                         BATON_EMALFORMED);
        memcpy(big, body, len);
        big[4] = 2;
        assert_int_equal(proto_read_list_reply(big, len, out, 3, &got, &more),
                         BATON_EMALFORMED);
        memcpy(big, body, len);
        big[PROTO_LIST_REPLY_FIXED] = 0; /* first name empty */
        assert_int_equal(proto_read_list_reply(big, len, out, 3, &got, &more),
                         BATON_EMALFORMED);
        memcpy(big, body, len);
        big[PROTO_LIST_REPLY_FIXED + 1] = '\0'; /* a NUL in the name */
        assert_int_equal(proto_read_list_reply(big, len, out, 3, &got, &more),
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
                             many, (uint32_t)fit + 1, true),
                         0);
        n = proto_write_list_reply(big,
                                   PROTO_HEADER_SIZE + PROTO_MAX_BODY + 1024, 2,
                                   many, (uint32_t)fit, true);
        assert_int_equal(n, PROTO_HEADER_SIZE + PROTO_LIST_REPLY_FIXED +
                                fit * PROTO_LIST_ENTRY_MAX);
        body = check_frame(big, n, PROTO_LIST_REPLY, 2, &len);
        assert_int_equal(
            proto_read_list_reply(body, len, many, fit, &got, &more), 0);
        assert_int_equal(got, fit);
        assert_true(many[fit - 1].token == fit - 1);
        free(big);
        free(many);
}

/* --- Reader ---------------------------------------------------------------
 */

/*
 * Feeds `s` to the reader in chunks (1 byte, random sizes up to
 * `max_chunk`, or all at once when max_chunk is 0) and checks each frame it
 * yields against the corpus in order, wrapping around. Returns the number of
 * frames.
 */
static size_t feed_checked(struct proto_reader *r, const uint8_t *s, size_t len,
                           uint64_t *rng, size_t max_chunk,
                           const struct frame *corpus)
{
        size_t off = 0, frames = 0;

        while (off < len) {
                size_t chunk =
                    max_chunk == 0 ? len - off : 1 + rand_below(rng, max_chunk);
                size_t end;

                if (chunk > len - off) {
                        chunk = len - off;
                }
                end = off + chunk;
                while (off < end) {
                        long n = proto_reader_feed(r, s + off, end - off);

                        assert_true(n > 0);
                        assert_true((size_t)n <= end - off);
                        off += (size_t)n;
                        if (r->ready) {
                                const struct frame *f =
                                    &corpus[frames % N_CORPUS];

                                assert_int_equal(r->body_len, r->h.length);
                                assert_int_equal(
                                    PROTO_HEADER_SIZE + r->h.length, f->len);
                                assert_memory_equal(r->head, f->b,
                                                    PROTO_HEADER_SIZE);
                                assert_true(r->h.id == (frames % N_CORPUS) + 1);
                                if (r->h.length > 0) {
                                        assert_memory_equal(
                                            r->body, f->b + PROTO_HEADER_SIZE,
                                            r->h.length);
                                }
                                assert_int_equal(
                                    read_body(r->h.type, r->body, r->body_len),
                                    0);
                                frames++;
                        } else {
                                /* Only a frame's end stops a feed short. */
                                assert_int_equal(off, end);
                        }
                }
        }
        return frames;
}

/* The whole corpus, `copies` times over, in one buffer. */
static uint8_t *corpus_stream(const struct frame *corpus, int copies,
                              size_t *len)
{
        size_t total = 0, off = 0;
        uint8_t *s;
        int c, i;

        for (i = 0; i < N_CORPUS; i++) {
                total += corpus[i].len;
        }
        total *= (size_t)copies;
        s = malloc(total);
        assert_non_null(s);
        for (c = 0; c < copies; c++) {
                for (i = 0; i < N_CORPUS; i++) {
                        memcpy(s + off, corpus[i].b, corpus[i].len);
                        off += corpus[i].len;
                }
        }
        *len = total;
        return s;
}

static void reader_byte_by_byte(void **state)
{
        struct frame *corpus = make_corpus();
        struct proto_reader r;
        struct failalloc fa;
        uint64_t rng = 1;
        uint8_t *s;
        size_t len;

        (void)state;
        failalloc_init(&fa);
        s = corpus_stream(corpus, 2, &len);
        proto_reader_init(&r, PROTO_MAX_BODY, &fa.mem);
        assert_int_equal(feed_checked(&r, s, len, &rng, 1, corpus),
                         2 * N_CORPUS);
        assert_int_equal(r.err, 0);
        assert_true(fa.live <= 1);
        proto_reader_close(&r);
        assert_int_equal(fa.live, 0);
        free(s);
        free(corpus);
}

static void reader_random_splits(void **state)
{
        static const size_t max_chunks[] = {2, 7, 16, 17, 33, 300, 5000};
        struct frame *corpus = make_corpus();
        struct proto_reader r;
        uint64_t rng = 0x9e3779b97f4a7c15ULL;
        uint8_t *s;
        size_t len, i;
        int round;

        (void)state;
        s = corpus_stream(corpus, 3, &len);
        for (i = 0; i < sizeof max_chunks / sizeof max_chunks[0]; i++) {
                for (round = 0; round < 20; round++) {
                        proto_reader_init(&r, PROTO_MAX_BODY, NULL);
                        assert_int_equal(feed_checked(&r, s, len, &rng,
                                                      max_chunks[i], corpus),
                                         3 * N_CORPUS);
                        proto_reader_close(&r);
                }
        }
        free(s);
        free(corpus);
}

/* Several frames in one buffer: each feed stops at a frame's end, and
 * calling again with the rest yields the next. */
static void reader_several_frames_per_buffer(void **state)
{
        struct frame *corpus = make_corpus();
        struct proto_reader r;
        uint8_t *s;
        size_t len, off = 0, frames = 0;
        long n;

        (void)state;
        s = corpus_stream(corpus, 1, &len);
        proto_reader_init(&r, PROTO_MAX_BODY, NULL);
        while (off < len) {
                n = proto_reader_feed(&r, s + off, len - off);
                assert_int_equal(n, corpus[frames].len);
                assert_true(r.ready);
                assert_int_equal(r.h.type, corpus[frames].b[1]);
                off += (size_t)n;
                frames++;
        }
        assert_int_equal(frames, N_CORPUS);
        /* The last frame stays readable until the next call, which drops
         * it even when it brings no bytes. */
        assert_true(r.ready);
        assert_int_equal(r.h.type, PROTO_ERROR);
        assert_int_equal(proto_reader_feed(&r, s, 0), 0);
        assert_false(r.ready);
        proto_reader_close(&r);
        free(s);
        free(corpus);
}

/* A frame announcing more than max_body is refused from its header alone,
 * before anything is allocated, and the reader stays failed. */
static void reader_too_big_before_allocating(void **state)
{
        struct proto_header h = {PROTO_VERSION, PROTO_COMMAND, 0, 101, 1};
        uint8_t head[PROTO_HEADER_SIZE];
        uint8_t ok[PROTO_HEADER_SIZE];
        struct proto_reader r;
        struct failalloc fa;

        (void)state;
        failalloc_init(&fa);
        proto_header_encode(&h, head);
        proto_reader_init(&r, 100, &fa.mem);
        assert_int_equal(proto_reader_feed(&r, head, 8), 8);
        assert_int_equal(proto_reader_feed(&r, head + 8, 8), BATON_ETOOBIG);
        assert_int_equal(fa.calls, 0);
        assert_int_equal(fa.live, 0);
        assert_false(r.ready);
        assert_int_equal(proto_write_empty(ok, sizeof ok, 2, PROTO_PING),
                         PROTO_HEADER_SIZE);
        assert_int_equal(proto_reader_feed(&r, ok, sizeof ok), BATON_ETOOBIG);
        proto_reader_close(&r);

        /* The largest length a header can carry. */
        h.length = UINT32_MAX;
        proto_header_encode(&h, head);
        proto_reader_init(&r, PROTO_MAX_BODY, &fa.mem);
        assert_int_equal(proto_reader_feed(&r, head, sizeof head),
                         BATON_ETOOBIG);
        assert_int_equal(fa.calls, 0);
        proto_reader_close(&r);

        /* Exactly max_body is fine. */
        h.length = 100;
        proto_header_encode(&h, head);
        proto_reader_init(&r, 100, &fa.mem);
        assert_int_equal(proto_reader_feed(&r, head, sizeof head),
                         PROTO_HEADER_SIZE);
        assert_int_equal(r.err, 0);
        assert_int_equal(fa.calls, 1);
        proto_reader_close(&r);
        assert_int_equal(fa.live, 0);
}

/* Every header error fails the reader, and it stays failed. */
static void reader_errors_are_sticky(void **state)
{
        static const struct {
                struct proto_header h;
                int err;
        } cases[] = {
            {{0, PROTO_PING, 0, 0, 1}, BATON_EVERSION},
            {{2, PROTO_PING, 0, 0, 1}, BATON_EVERSION},
            {{PROTO_VERSION, PROTO_PING, 1, 0, 1}, BATON_EMALFORMED},
            {{PROTO_VERSION, 0, 0, 0, 1}, BATON_EMALFORMED},
            {{PROTO_VERSION, 11, 0, 0, 1}, BATON_EMALFORMED},
            {{PROTO_VERSION, 255, 0, 0, 1}, BATON_EMALFORMED},
            {{PROTO_VERSION, PROTO_COMMAND, 0, PROTO_MAX_BODY + 1, 1},
             BATON_ETOOBIG},
        };
        uint8_t buf[2 * PROTO_HEADER_SIZE];
        struct proto_reader r;
        struct failalloc fa;
        size_t i;

        (void)state;
        failalloc_init(&fa);
        for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
                /* A good frame, then the bad header. */
                assert_int_equal(
                    proto_write_empty(buf, sizeof buf, 1, PROTO_PING),
                    PROTO_HEADER_SIZE);
                proto_header_encode(&cases[i].h, buf + PROTO_HEADER_SIZE);
                proto_reader_init(&r, PROTO_MAX_BODY, &fa.mem);
                assert_int_equal(proto_reader_feed(&r, buf, sizeof buf),
                                 PROTO_HEADER_SIZE);
                assert_true(r.ready);
                assert_int_equal(proto_reader_feed(&r, buf + PROTO_HEADER_SIZE,
                                                   PROTO_HEADER_SIZE),
                                 cases[i].err);
                assert_false(r.ready);
                assert_int_equal(r.err, cases[i].err);
                /* Good bytes, no bytes: the same error, nothing consumed. */
                assert_int_equal(proto_reader_feed(&r, buf, PROTO_HEADER_SIZE),
                                 cases[i].err);
                assert_int_equal(proto_reader_feed(&r, buf, 0), cases[i].err);
                assert_false(r.ready);
                proto_reader_close(&r);
        }
        assert_int_equal(fa.calls, 0);
        assert_int_equal(fa.live, 0);
}

static void reader_out_of_memory(void **state)
{
        uint8_t buf[FRAME_MAX];
        struct proto_reader r;
        struct failalloc fa;
        size_t n;

        (void)state;
        failalloc_init(&fa);
        n = proto_write_keepalive(buf, sizeof buf, 1, 42);
        proto_reader_init(&r, PROTO_MAX_BODY, &fa.mem);
        failalloc_arm(&fa, 0, false);
        assert_int_equal(proto_reader_feed(&r, buf, n), BATON_ENOMEM);
        assert_int_equal(fa.calls, 1);
        assert_int_equal(fa.live, 0);
        assert_false(r.ready);
        /* Sticky, even though memory is back. */
        failalloc_disarm(&fa);
        assert_int_equal(proto_reader_feed(&r, buf, n), BATON_ENOMEM);
        assert_int_equal(fa.calls, 1);
        proto_reader_close(&r);

        /* Failing to grow: the old buffer is gone, nothing leaks. */
        proto_reader_init(&r, PROTO_MAX_BODY, &fa.mem);
        assert_int_equal(proto_reader_feed(&r, buf, n), (long)n);
        assert_true(r.ready);
        assert_int_equal(fa.live, 1);
        n = proto_write_result(buf, sizeof buf, 2, &full_result);
        failalloc_arm(&fa, 0, false);
        assert_int_equal(proto_reader_feed(&r, buf, n), BATON_ENOMEM);
        assert_int_equal(r.err, BATON_ENOMEM);
        proto_reader_close(&r);
        proto_reader_close(&r); /* twice is harmless */
        assert_int_equal(fa.live, 0);
}

/* The body buffer grows to the largest frame seen and is then reused:
 * frames of equal or smaller size allocate nothing, empty ones never. */
static void reader_reuses_body_buffer(void **state)
{
        uint8_t buf[FRAME_MAX];
        struct proto_reader r;
        struct failalloc fa;
        struct proto_string s;
        size_t n;
        char name[200];

        (void)state;
        failalloc_init(&fa);
        proto_reader_init(&r, PROTO_MAX_BODY, &fa.mem);

        n = proto_write_empty(buf, sizeof buf, 1, PROTO_PING);
        assert_int_equal(proto_reader_feed(&r, buf, n), (long)n);
        assert_true(r.ready);
        assert_int_equal(fa.calls, 0);

        memset(name, 'q', sizeof name);
        n = proto_write_query(buf, sizeof buf, 2, name, 100);
        assert_int_equal(proto_reader_feed(&r, buf, n), (long)n);
        assert_int_equal(fa.calls, 1);
        assert_int_equal(r.body_cap, 101);
        /* Equal, then smaller, then empty: no allocation. */
        n = proto_write_query(buf, sizeof buf, 3, name, 100);
        assert_int_equal(proto_reader_feed(&r, buf, n), (long)n);
        assert_true(r.ready);
        assert_int_equal(proto_read_query(r.body, r.body_len, &s), 0);
        assert_int_equal(s.len, 100);
        n = proto_write_query(buf, sizeof buf, 4, "a", 1);
        assert_int_equal(proto_reader_feed(&r, buf, n), (long)n);
        assert_true(r.ready);
        assert_int_equal(proto_read_query(r.body, r.body_len, &s), 0);
        assert_true(string_is(s, "a"));
        n = proto_write_keepalive(buf, sizeof buf, 5, 1);
        assert_int_equal(proto_reader_feed(&r, buf, n), (long)n);
        n = proto_write_empty(buf, sizeof buf, 6, PROTO_PONG);
        assert_int_equal(proto_reader_feed(&r, buf, n), (long)n);
        assert_int_equal(r.body_len, 0);
        assert_int_equal(fa.calls, 1);
        assert_int_equal(fa.live, 1);
        /* Larger: one more allocation, the old buffer freed. */
        n = proto_write_query(buf, sizeof buf, 7, name, 200);
        assert_int_equal(proto_reader_feed(&r, buf, n), (long)n);
        assert_int_equal(fa.calls, 2);
        assert_int_equal(fa.live, 1);
        assert_int_equal(r.body_cap, 201);
        n = proto_write_query(buf, sizeof buf, 8, name, 150);
        assert_int_equal(proto_reader_feed(&r, buf, n), (long)n);
        assert_int_equal(fa.calls, 2);
        proto_reader_close(&r);
        assert_int_equal(fa.live, 0);
}

/* --- Strict body readers --------------------------------------------------
 */

/* Every truncation of every body is refused, and so is one byte more. */
static void bodies_truncated_or_trailing(void **state)
{
        struct frame *corpus = make_corpus();
        uint8_t body[FRAME_MAX + 1];
        size_t len, k;
        uint8_t type;
        int i;

        (void)state;
        for (i = 0; i < N_CORPUS; i++) {
                type = corpus[i].b[1];
                len = corpus[i].len - PROTO_HEADER_SIZE;
                memcpy(body, corpus[i].b + PROTO_HEADER_SIZE, len);
                assert_int_equal(read_body(type, body, len), 0);
                for (k = 0; k < len; k++) {
                        int rv = read_body(type, body, k);

                        if (type == PROTO_COMMAND) {
                                assert_true(rv < 0);
                        } else {
                                assert_int_equal(rv, BATON_EMALFORMED);
                        }
                }
                body[len] = 0;
                assert_true(read_body(type, body, len + 1) < 0);
                if (type != PROTO_COMMAND) {
                        assert_int_equal(read_body(type, body, len + 1),
                                         BATON_EMALFORMED);
                }
        }
        free(corpus);
}

/* Fixed-size bodies must be exactly their size. */
static void fixed_bodies_exact(void **state)
{
        uint8_t body[64] = {0};
        struct proto_result res;
        uint64_t u64;
        uint32_t u32;
        size_t k;

        (void)state;
        for (k = 0; k < sizeof body; k++) {
                assert_int_equal(proto_read_u64(body, k, &u64),
                                 k == 8 ? 0 : BATON_EMALFORMED);
                assert_int_equal(proto_read_u32(body, k, &u32),
                                 k == 4 ? 0 : BATON_EMALFORMED);
                assert_int_equal(proto_read_result(body, k, &res),
                                 k == 45 ? 0 : BATON_EMALFORMED);
        }
        assert_int_equal(proto_read_u64(NULL, 0, &u64), BATON_EMALFORMED);
}

/* Lock names in QUERY and CHECK follow command.h, with their own code. */
static void bodies_bad_lock_names(void **state)
{
        uint8_t body[8 + 1 + 8];
        struct proto_string s;
        uint64_t token;

        (void)state;
        body[0] = 0; /* empty name */
        assert_int_equal(proto_read_query(body, 1, &s), BATON_ENAME);
        memcpy(body, "\3a\0b", 4); /* NUL inside */
        assert_int_equal(proto_read_query(body, 4, &s), BATON_ENAME);
        memcpy(body, "\3abc", 4);
        assert_int_equal(proto_read_query(body, 4, &s), 0);

        memset(body, 0, 8);
        body[8] = 0;
        assert_int_equal(proto_read_check(body, 9, &s, &token), BATON_ENAME);
        memcpy(body + 8, "\2\0x", 3);
        assert_int_equal(proto_read_check(body, 11, &s, &token), BATON_ENAME);
        memcpy(body + 8, "\2yx", 3);
        assert_int_equal(proto_read_check(body, 11, &s, &token), 0);
        /* A short body is malformed, not a bad name. */
        assert_int_equal(proto_read_check(body, 10, &s, &token),
                         BATON_EMALFORMED);
}

/* Strings other than lock names: no NUL, no longer than their limit. */
static void bodies_bad_strings(void **state)
{
        uint8_t body[FRAME_MAX];
        struct proto_status *st = malloc(sizeof *st);
        struct proto_string a, b;
        uint64_t id;
        size_t n;
        int status;

        (void)state;
        assert_non_null(st);
        /* NOT_LEADER with a 65-byte address. */
        memset(body, 0, 8);
        body[8] = PROTO_ADDRESS_MAX + 1;
        memset(body + 9, '7', PROTO_ADDRESS_MAX + 1);
        n = 9 + PROTO_ADDRESS_MAX + 1;
        assert_int_equal(proto_read_not_leader(body, n, &id, &a),
                         BATON_EMALFORMED);
        body[8] = PROTO_ADDRESS_MAX;
        assert_int_equal(proto_read_not_leader(body, n - 1, &id, &a), 0);
        body[9] = '\0';
        assert_int_equal(proto_read_not_leader(body, n - 1, &id, &a),
                         BATON_EMALFORMED);

        /* ERROR with a NUL in its message. */
        memcpy(body, "\xfd\xff\xff\xff\3a\0b", 8);
        assert_int_equal(proto_read_error(body, 8, &status, &a),
                         BATON_EMALFORMED);
        body[6] = 'c';
        assert_int_equal(proto_read_error(body, 8, &status, &a), 0);
        assert_int_equal(status, BATON_EMALFORMED);

        /* MEMBER_ADD: both addresses present and in range. */
        memset(body, 0, 8);
        memcpy(body + 8, "\0\3a:1", 5);
        assert_int_equal(proto_read_member_add(body, 13, &id, &a, &b),
                         BATON_EMALFORMED);
        memcpy(body + 8, "\3a:1\0", 5);
        assert_int_equal(proto_read_member_add(body, 13, &id, &a, &b),
                         BATON_EMALFORMED);
        memcpy(body + 8, "\3a:1\3b:2", 8);
        assert_int_equal(proto_read_member_add(body, 16, &id, &a, &b), 0);
        body[8] = PROTO_ADDRESS_MAX + 1;
        memset(body + 9, 'x', PROTO_ADDRESS_MAX + 1);
        body[9 + PROTO_ADDRESS_MAX + 1] = 1;
        body[9 + PROTO_ADDRESS_MAX + 2] = 'y';
        assert_int_equal(
            proto_read_member_add(body, 9 + PROTO_ADDRESS_MAX + 3, &id, &a, &b),
            BATON_EMALFORMED);

        /* STATUS_REPLY with too many members, however many bytes follow. */
        memset(body, 0, sizeof body);
        body[73] = PROTO_MAX_MEMBERS + 1;
        for (n = 74; n < sizeof body; n += 11) {
                assert_int_equal(proto_read_status(body, n, st),
                                 BATON_EMALFORMED);
        }
        body[73] = 255;
        assert_int_equal(proto_read_status(body, sizeof body, st),
                         BATON_EMALFORMED);
        /* PROTO_MAX_MEMBERS empty members: fine. */
        body[73] = PROTO_MAX_MEMBERS;
        assert_int_equal(
            proto_read_status(body, 74 + PROTO_MAX_MEMBERS * 11, st), 0);
        assert_int_equal(st->n_members, PROTO_MAX_MEMBERS);
        /* A member address one byte too long. */
        body[74 + 9] = PROTO_ADDRESS_MAX + 1;
        assert_int_equal(
            proto_read_status(
                body, 74 + PROTO_MAX_MEMBERS * 11 + PROTO_ADDRESS_MAX + 1, st),
            BATON_EMALFORMED);
        free(st);
}

/* --- Fuzz -----------------------------------------------------------------
 */

/* Copies a decoded string into a C string for the writers that take one. */
static const char *cstr(struct proto_string s, char *buf)
{
        memcpy(buf, s.p, s.len);
        buf[s.len] = '\0';
        return buf;
}

/*
 * Passes `body` to every body reader. Whatever a reader accepts must be
 * exactly what its writer produces from the decoded values: decoding is
 * strict, so there is only one encoding of anything. Returns how many
 * readers accepted.
 */
static int read_all(const uint8_t *body, size_t len, struct proto_status *st)
{
        char c1[256], c2[256];
        uint8_t out[FRAME_MAX];
        struct proto_string s1, s2;
        struct proto_result res;
        uint64_t u64;
        uint32_t u32;
        int status, ok = 0;
        size_t n;

#define SAME(expr)                                                             \
        do {                                                                   \
                n = (expr);                                                    \
                assert_int_equal(n, PROTO_HEADER_SIZE + len);                  \
                if (len > 0) {                                                 \
                        assert_memory_equal(out + PROTO_HEADER_SIZE, body,     \
                                            len);                              \
                }                                                              \
                ok++;                                                          \
        } while (0)

        if (proto_read_u64(body, len, &u64) == 0) {
                SAME(proto_write_keepalive(out, sizeof out, 1, u64));
        }
        if (proto_read_u32(body, len, &u32) == 0) {
                SAME(proto_write_keepalive_ok(out, sizeof out, 1, u32));
        }
        if (proto_read_query(body, len, &s1) == 0) {
                SAME(proto_write_query(out, sizeof out, 1, s1.p, s1.len));
        }
        if (proto_read_check(body, len, &s1, &u64) == 0) {
                SAME(proto_write_check(out, sizeof out, 1, s1.p, s1.len, u64));
        }
        if (proto_read_member_add(body, len, &u64, &s1, &s2) == 0) {
                SAME(proto_write_member_add(out, sizeof out, 1, u64,
                                            cstr(s1, c1), cstr(s2, c2)));
        }
        if (proto_read_result(body, len, &res) == 0) {
                SAME(proto_write_result(out, sizeof out, 1, &res));
        }
        if (proto_read_not_leader(body, len, &u64, &s1) == 0) {
                SAME(proto_write_not_leader(out, sizeof out, 1, u64,
                                            cstr(s1, c1)));
        }
        if (proto_read_error(body, len, &status, &s1) == 0) {
                SAME(proto_write_error(out, sizeof out, 1, status,
                                       cstr(s1, c1)));
        }
        if (proto_read_status(body, len, st) == 0) {
                assert_true(st->n_members <= PROTO_MAX_MEMBERS);
                SAME(proto_write_status(out, sizeof out, 1, st));
        }
#undef SAME
        return ok;
}

/* A random input: a corpus frame mutated a little, several glued together,
 * a valid header with random body, or plain noise. */
static size_t random_input(uint8_t *buf, size_t cap, uint64_t *rng,
                           const struct frame *corpus)
{
        size_t len = 0, k, flips;
        const struct frame *f;

        switch (rand_below(rng, 4)) {
        case 0: /* mutated frames */
        case 1:
                do {
                        f = &corpus[rand_below(rng, N_CORPUS)];
                        if (len + f->len > cap) {
                                break;
                        }
                        memcpy(buf + len, f->b, f->len);
                        flips = rand_below(rng, 4);
                        for (k = 0; k < flips; k++) {
                                buf[len + rand_below(rng, f->len)] =
                                    (uint8_t)next_rand(rng);
                        }
                        len += f->len;
                        if (rand_below(rng, 4) == 0) {
                                len -= rand_below(rng, f->len);
                        }
                } while (rand_below(rng, 3) != 0);
                break;
        case 2: { /* a good header, random length and body */
                struct proto_header h = {PROTO_VERSION, 0, 0, 0, 0};

                f = &corpus[rand_below(rng, N_CORPUS)];
                h.type = f->b[1];
                h.length = (uint32_t)rand_below(rng, 128);
                h.id = next_rand(rng);
                proto_header_encode(&h, buf);
                len = PROTO_HEADER_SIZE + rand_below(rng, 160);
                for (k = PROTO_HEADER_SIZE; k < len; k++) {
                        buf[k] = (uint8_t)(rand_below(rng, 3) == 0
                                               ? next_rand(rng)
                                               : rand_below(rng, 8));
                }
                break;
        }
        default: /* noise */
                len = rand_below(rng, 300);
                for (k = 0; k < len; k++) {
                        buf[k] = (uint8_t)next_rand(rng);
                }
                break;
        }
        return len;
}

/* ~20k random inputs through the reader in random splits; every body it
 * yields goes through every body reader. Nothing may crash, read out of
 * bounds or leak, and every feed must keep the reader's promises. */
static void fuzz_reader_and_bodies(void **state)
{
        struct frame *corpus = make_corpus();
        struct proto_status *st = malloc(sizeof *st);
        size_t cap = 4 * FRAME_MAX;
        uint8_t *buf = malloc(cap);
        uint64_t rng = 0x2545f4914f6cdd1dULL;
        unsigned long frames = 0, accepted = 0, errors = 0;
        struct proto_reader r;
        struct failalloc fa;
        int iter;

        (void)state;
        assert_non_null(st);
        assert_non_null(buf);
        failalloc_init(&fa);
        for (iter = 0; iter < 20000; iter++) {
                size_t len = random_input(buf, cap, &rng, corpus);
                uint32_t max_body = rand_below(&rng, 2) ? PROTO_MAX_BODY : 200;
                size_t off = 0;

                proto_reader_init(&r, max_body, &fa.mem);
                while (off < len) {
                        size_t chunk = 1 + rand_below(&rng, len - off);
                        long n = proto_reader_feed(&r, buf + off, chunk);

                        if (n < 0) {
                                assert_int_equal(n, r.err);
                                assert_true(n == BATON_EVERSION ||
                                            n == BATON_EMALFORMED ||
                                            n == BATON_ETOOBIG);
                                assert_false(r.ready);
                                assert_int_equal(
                                    proto_reader_feed(&r, buf, len), n);
                                errors++;
                                break;
                        }
                        assert_true(n > 0 && (size_t)n <= chunk);
                        off += (size_t)n;
                        if (r.ready) {
                                assert_true(r.h.length <= max_body);
                                assert_true(r.body_len == r.h.length);
                                assert_true(r.body_cap >= r.body_len);
                                assert_int_equal(r.h.version, PROTO_VERSION);
                                assert_int_equal(r.h.flags, 0);
                                assert_string_not_equal(
                                    proto_type_name(r.h.type), "UNKNOWN");
                                accepted += (unsigned long)read_all(
                                    r.body, r.body_len, st);
                                frames++;
                        }
                }
                assert_true(fa.live <= 1);
                proto_reader_close(&r);
                assert_int_equal(fa.live, 0);

                /* The raw input as a body, too. */
                accepted += (unsigned long)read_all(
                    buf, len > FRAME_MAX ? FRAME_MAX : len, st);
        }
        /* The inputs exercised both sides. */
        assert_true(frames > 8000);
        assert_true(accepted > 4000);
        assert_true(errors > 8000);
        free(buf);
        free(st);
        free(corpus);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(header_exact_bytes),
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
            cmocka_unit_test(round_trip_keepalive_ok),
            cmocka_unit_test(round_trip_list),
            cmocka_unit_test(list_request_bodies),
            cmocka_unit_test(round_trip_list_reply),
            cmocka_unit_test(list_reply_limits),
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
        };

        return cmocka_run_group_tests_name("proto", tests, NULL, NULL);
}
