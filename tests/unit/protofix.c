/* The fixtures of test_proto. */
#include "protofix.h"

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
#include "../../src/proto/reply.h"
#include "../../src/proto/query.h"
#include "../../src/proto/member.h"
#include "../../src/proto/status.h"
#include "../../src/proto/keepalive.h"

/* xorshift64: a tiny, seeded generator so every run sees the same inputs. */
uint64_t next_rand(uint64_t *s)
{
        uint64_t x = *s;

        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        *s = x;
        return x;
}

size_t rand_below(uint64_t *s, size_t n)
{
        return n == 0 ? 0 : (size_t)(next_rand(s) % n);
}

/* --- Fixtures -------------------------------------------------------------
 */

const char lock_name[] = "db/primary";

void fill_big_status(struct big_status *b)
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

const struct proto_result full_result = {
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
size_t acquire_command(uint8_t *buf, size_t cap)
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

size_t write_nth(int i, uint8_t *out, size_t cap)
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
                return proto_write_keepalive(out, cap, id, 0,
                                             0x1122334455667788ULL);
        case 2:
                return proto_write_query(out, cap, id, 0, lock_name,
                                         sizeof lock_name - 1);
        case 3:
                memset(long_name, 'n', sizeof long_name);
                return proto_write_check(out, cap, id, long_name,
                                         sizeof long_name,
                                         0xfedcba9876543210ULL);
        case 4:
                return proto_write_status_request(out, cap, id, 0);
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
                return proto_write_result(out, cap, id, 0, &full_result);
        case 10:
                return proto_write_not_leader(out, cap, id, 2, "10.0.0.2:7101");
        case 11:
                return proto_write_not_leader(out, cap, id, 0, NULL);
        case 12:
                return proto_write_error(out, cap, id, BATON_EMALFORMED,
                                         "bad frame");
        case 13:
                fill_big_status(&big);
                return proto_write_status(out, cap, id, 0, &big.st, NULL);
        case 14:
                memset(&small, 0, sizeof small);
                small.id = 1;
                small.role = 1;
                return proto_write_status(out, cap, id, 0, &small, NULL);
        case 15:
                return proto_write_keepalive_ok(out, cap, id, 0, 10000, 0);
        case 16:
                return proto_write_empty(out, cap, id, PROTO_PONG);
        case 17:
                return proto_write_query(out, cap, id, 0, "x", 1);
        case 18:
                memset(message, 'm', PROTO_MESSAGE_MAX);
                message[PROTO_MESSAGE_MAX] = '\0';
                return proto_write_error(out, cap, id, INT32_MIN, message);
        default:
                fail_msg("no corpus frame %d", i);
                return 0;
        }
}

struct frame *make_corpus(void)
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
int read_body(uint8_t type, const uint8_t *body, size_t len)
{
        struct proto_string s1, s2;
        struct proto_result res;
        struct proto_status st;
        uint64_t u64;
        uint32_t u32, revoked;
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
                return proto_read_result(body, len, 0, &res);
        case PROTO_NOT_LEADER:
                return proto_read_not_leader(body, len, &u64, &s1);
        case PROTO_ERROR:
                return proto_read_error(body, len, &status, &s1);
        case PROTO_STATUS_REPLY:
                return proto_read_status(body, len, 0, &st, NULL);
        case PROTO_KEEPALIVE_OK:
                return proto_read_keepalive_ok(body, len, 0, &u32, &revoked);
        case PROTO_STATUS:
        case PROTO_PING:
        case PROTO_PONG:
                return len == 0 ? 0 : BATON_EMALFORMED;
        default:
                return BATON_EMALFORMED;
        }
}

/* Decodes the header of a whole frame and checks it against the buffer. */
const uint8_t *check_frame(const uint8_t *buf, size_t n, uint8_t type,
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

bool string_is(struct proto_string s, const char *want)
{
        return s.len == strlen(want) && memcmp(s.p, want, s.len) == 0;
}
