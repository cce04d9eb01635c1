/* The client protocol's frames as exact bytes: every message in every
 * shape its header's flags allow, against bytes recorded from the codec. */
/* The bytes below were captured from the codec as it stood before its
 * writers and readers took the frame's flags (it had one function per
 * shape then); they must never change, since clients and servers of every
 * release read them. Each case writes one frame from fixed inputs and
 * compares it with its bytes, then (for frames a peer decodes) reads the
 * recorded body back in the shape its header's flags say and writes it
 * again, which must give the same bytes. A failure prints the bytes
 * written, as hex. */
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
#include "../../src/proto/attach.h"
#include "../../src/proto/command.h"
#include "../../src/proto/proto.h"
#include "../../src/proto/reply.h"
#include "../../src/proto/query.h"
#include "../../src/proto/member.h"
#include "../../src/proto/status.h"
#include "../../src/proto/keepalive.h"
#include "../../src/proto/list.h"
#include "../../src/proto/watch.h"
#include "../../src/proto/backup.h"
#include "../../src/proto/aclwire.h"

#define CAP (PROTO_HEADER_SIZE + 1024)

/* --- Fixed inputs --------------------------------------------------------- */

static const uint8_t command_bytes[] = {1, 2, 3, 4, 5, 6, 7, 8, 9};

static const struct proto_lock_entry entries[2] = {
    {.name = {"db/a", 4},
     .session = 7,
     .owner = 8,
     .token = 9,
     .count = 1,
     .waiters = 2,
     .client_name = {"web-1", 5},
     .mode = 1,
     .permits = 3,
     .limit = 5,
     .granted_s = 1700000000,
     .value = {"v1", 2},
     .left_ms = 8000},
    {.name = {"db/b", 4},
     .session = 0x0102030405060708ULL,
     .owner = 11,
     .token = 12,
     .count = 0,
     .waiters = 0,
     .client_name = {NULL, 0},
     .mode = 0,
     .permits = 0,
     .limit = 0,
     .granted_s = 0,
     .value = {NULL, 0},
     .left_ms = UINT32_MAX},
};

static const struct proto_result result_in = {
    .status = BATON_EBUSY,
    .kind = PROTO_KIND_HOLDER,
    .index = 261,
    .session = 42,
    .owner = 0x0807060504030201ULL,
    .token = 256,
    .count = 1,
    .waiters = 0x01020304,
    .client_name = {"web-1", 5},
};

static void status_in(struct proto_status *st)
{
        memset(st, 0, sizeof *st);
        st->id = 1;
        st->role = 2;
        st->term = 3;
        st->leader_id = 1;
        st->commit_index = 10;
        st->applied_index = 9;
        st->last_index = 11;
        st->sessions = 4;
        st->locks = 5;
        st->waiters = 6;
        st->n_members = 2;
        st->members[0] = (struct proto_member){
            1, 0, {"127.0.0.1:7001", 14}, {"127.0.0.1:8001", 14}};
        st->members[1] =
            (struct proto_member){2, 1, {"127.0.0.1:7002", 14}, {NULL, 0}};
}

static const struct proto_versions versions_in = {{"0.2.0", 5}, 6, 3, 1};

static const struct proto_watch watch_in = {
    PROTO_WATCH_PREFIX, 300, 2, {"db/", 3}};

static const struct proto_watch_event event_in = {
    .index = 301,
    .ord = 1,
    .kind = PROTO_EVENT_PROCLAIMED,
    .cause = 9,
    .mode = 2,
    .session = 7,
    .owner = 8,
    .token = 9,
    .permits = 1,
    .name = {"db/leader", 9},
    .value = {"host-1", 6},
};

static const uint8_t backup_data[] = {0xde, 0xad, 0xbe, 0xef, 0x00, 0x01};

static const struct proto_backup_chunk chunk_in = {
    .backup = 3,
    .index = 500,
    .term = 4,
    .made_ms = 1700000000123ULL,
    .size = 100,
    .offset = 90,
    .sessions = 1,
    .locks = 2,
    .grants = 3,
    .waiters = 4,
    .data = backup_data,
    .len = sizeof backup_data,
};

static void acl_reply_in(struct proto_acl_reply *r)
{
        memset(r, 0, sizeof *r);
        r->seeded = 1;
        r->default_role = 2;
        r->n = 2;
        r->rules[0] = (struct proto_acl_rule){0, 3, {"CN=admin", 8}};
        r->rules[1] = (struct proto_acl_rule){0, 1, {"CN=reader", 9}};
}

/* --- Writers: one frame each, from the inputs above ---------------------- */

/* Each writes its frame with id 0x1122334455667788 and returns its size. */
typedef size_t (*write_fn)(uint8_t *out, size_t cap);

#define ID 0x1122334455667788ULL

static size_t w_command(uint8_t *o, size_t c)
{
        return proto_write_command(o, c, ID, command_bytes,
                                   sizeof command_bytes);
}
static size_t w_keepalive(uint8_t *o, size_t c)
{
        return proto_write_keepalive(o, c, ID, 0, 0x0a0b0c0d);
}
static size_t w_keepalive_revoked(uint8_t *o, size_t c)
{
        return proto_write_keepalive(o, c, ID, PROTO_FLAG_REVOKED, 0x0a0b0c0d);
}
static size_t w_query(uint8_t *o, size_t c)
{
        return proto_write_query(o, c, ID, 0, "db/a", 4);
}
static size_t w_query_names(uint8_t *o, size_t c)
{
        return proto_write_query(o, c, ID, PROTO_FLAG_NAMES, "db/a", 4);
}
static size_t w_query_holders(uint8_t *o, size_t c)
{
        return proto_write_query(o, c, ID, PROTO_FLAG_HOLDERS, "db/a", 4);
}
static size_t w_query_values(uint8_t *o, size_t c)
{
        return proto_write_query(
            o, c, ID, PROTO_FLAG_HOLDERS | PROTO_FLAG_VALUES, "db/a", 4);
}
static size_t w_query_left(uint8_t *o, size_t c)
{
        return proto_write_query(
            o, c, ID, PROTO_FLAG_HOLDERS | PROTO_FLAG_VALUES | PROTO_FLAG_LEFT,
            "db/a", 4);
}
static size_t w_check(uint8_t *o, size_t c)
{
        return proto_write_check(o, c, ID, "db/a", 4, 0x99);
}
static size_t w_status(uint8_t *o, size_t c)
{
        return proto_write_status_request(o, c, ID, 0);
}
static size_t w_status_versions(uint8_t *o, size_t c)
{
        return proto_write_status_request(o, c, ID, PROTO_FLAG_VERSIONS);
}
static size_t w_member_add(uint8_t *o, size_t c)
{
        return proto_write_member_add(o, c, ID, 4, "10.0.0.4:7001",
                                      "10.0.0.4:8001");
}
static size_t w_member_remove(uint8_t *o, size_t c)
{
        return proto_write_id(o, c, ID, PROTO_MEMBER_REMOVE, 4);
}
static size_t w_transfer(uint8_t *o, size_t c)
{
        return proto_write_id(o, c, ID, PROTO_TRANSFER, 2);
}
static size_t w_ping(uint8_t *o, size_t c)
{
        return proto_write_empty(o, c, ID, PROTO_PING);
}
static size_t w_list(uint8_t *o, size_t c)
{
        return proto_write_list(o, c, ID, 0, "db/", 3, 25);
}
static size_t w_list_names(uint8_t *o, size_t c)
{
        return proto_write_list(o, c, ID, PROTO_FLAG_NAMES, "db/", 3, 25);
}
static size_t w_attach(uint8_t *o, size_t c)
{
        static const uint8_t secret[ATTACH_SECRET_SIZE] = {
            1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};

        return attach_write(o, c, ID, 42, secret);
}
static size_t w_watch(uint8_t *o, size_t c)
{
        return proto_write_watch(o, c, ID, &watch_in);
}
static size_t w_unwatch(uint8_t *o, size_t c)
{
        return proto_write_id(o, c, ID, PROTO_UNWATCH, 0x77);
}
static size_t w_backup(uint8_t *o, size_t c)
{
        struct proto_backup b = {3, 4096};

        return proto_write_backup(o, c, ID, &b);
}
static size_t w_acl_list(uint8_t *o, size_t c)
{
        struct proto_acl_request r = {.op = PROTO_ACL_LIST};

        return proto_write_acl(o, c, ID, &r);
}
static size_t w_acl_set(uint8_t *o, size_t c)
{
        struct proto_acl_request r = {
            .op = PROTO_ACL_SET, .role = 2, .identity = {"CN=web", 6}};

        return proto_write_acl(o, c, ID, &r);
}
static size_t w_acl_quota_set(uint8_t *o, size_t c)
{
        struct proto_acl_request r = {.op = PROTO_ACL_QUOTA_SET,
                                      .identity = {"CN=ci", 5},
                                      .limits = {0, 300, 20, 0, 1000}};

        return proto_write_acl(o, c, ID, &r);
}
static size_t w_acl_quota_remove(uint8_t *o, size_t c)
{
        struct proto_acl_request r = {.op = PROTO_ACL_QUOTA_REMOVE,
                                      .identity = {"*", 1}};

        return proto_write_acl(o, c, ID, &r);
}
static size_t w_acl_rule_set(uint8_t *o, size_t c)
{
        struct proto_acl_request r = {.op = PROTO_ACL_RULE_SET,
                                      .role = 3,
                                      .identity = {"team-a", 6},
                                      .kind = PROTO_ACL_KIND_GROUP_PREFIX,
                                      .prefix = {"team-a/", 7}};

        return proto_write_acl(o, c, ID, &r);
}
static size_t w_result(uint8_t *o, size_t c)
{
        return proto_write_result(o, c, ID, 0, &result_in);
}
static size_t w_result_names(uint8_t *o, size_t c)
{
        return proto_write_result(o, c, ID, PROTO_FLAG_NAMES, &result_in);
}
static size_t w_not_leader(uint8_t *o, size_t c)
{
        return proto_write_not_leader(o, c, ID, 2, "127.0.0.1:8002");
}
static size_t w_error(uint8_t *o, size_t c)
{
        return proto_write_error(o, c, ID, BATON_EMALFORMED, "bad frame");
}
static size_t w_status_reply(uint8_t *o, size_t c)
{
        struct proto_status st;

        status_in(&st);
        return proto_write_status(o, c, ID, 0, &st, NULL);
}
static size_t w_status_reply_versions(uint8_t *o, size_t c)
{
        struct proto_status st;

        status_in(&st);
        return proto_write_status(o, c, ID, PROTO_FLAG_VERSIONS, &st,
                                  &versions_in);
}
static size_t w_keepalive_ok(uint8_t *o, size_t c)
{
        return proto_write_keepalive_ok(o, c, ID, 0, 15000, 0);
}
static size_t w_keepalive_ok_revoked(uint8_t *o, size_t c)
{
        return proto_write_keepalive_ok(o, c, ID, PROTO_FLAG_REVOKED, 15000, 3);
}
static size_t w_pong(uint8_t *o, size_t c)
{
        return proto_write_empty(o, c, ID, PROTO_PONG);
}
static size_t w_list_reply(uint8_t *o, size_t c)
{
        return proto_write_list_reply(o, c, ID, 0, entries, 2, true);
}
static size_t w_list_reply_names(uint8_t *o, size_t c)
{
        return proto_write_list_reply(o, c, ID, PROTO_FLAG_NAMES, entries, 2,
                                      true);
}
static size_t w_list_reply_holders(uint8_t *o, size_t c)
{
        return proto_write_list_reply(o, c, ID, PROTO_FLAG_HOLDERS, entries, 2,
                                      false);
}
static size_t w_list_reply_values(uint8_t *o, size_t c)
{
        return proto_write_list_reply(o, c, ID,
                                      PROTO_FLAG_HOLDERS | PROTO_FLAG_VALUES,
                                      entries, 2, false);
}
static size_t w_list_reply_left(uint8_t *o, size_t c)
{
        return proto_write_list_reply(
            o, c, ID, PROTO_FLAG_HOLDERS | PROTO_FLAG_VALUES | PROTO_FLAG_LEFT,
            entries, 2, false);
}
static size_t w_watch_event(uint8_t *o, size_t c)
{
        return proto_write_watch_event(o, c, ID, &event_in);
}
static size_t w_backup_chunk(uint8_t *o, size_t c)
{
        return proto_write_backup_chunk(o, c, ID, &chunk_in);
}
static size_t w_acl_reply(uint8_t *o, size_t c)
{
        struct proto_acl_reply r;

        acl_reply_in(&r);
        return proto_write_acl_reply(o, c, ID, &r);
}

/* The same list with rules on name prefixes: format 2. */
static size_t w_acl_reply_prefix(uint8_t *o, size_t c)
{
        struct proto_acl_reply r;

        acl_reply_in(&r);
        r.n_prefix = 2;
        r.prefix[0] = (struct proto_acl_prefix_rule){
            PROTO_ACL_KIND_PREFIX, 5, {"CN=ci", 5}, {NULL, 0}};
        r.prefix[1] = (struct proto_acl_prefix_rule){
            PROTO_ACL_KIND_GROUP_PREFIX, 3, {"team-a", 6}, {"team-a/", 7}};
        return proto_write_acl_reply(o, c, ID, &r);
}

/* The same list with a default quota and one identity's: format 3. */
static size_t w_acl_reply_quota(uint8_t *o, size_t c)
{
        struct proto_acl_reply r;

        acl_reply_in(&r);
        r.n_quota = 2;
        r.quotas[0] =
            (struct proto_acl_quota){{"*", 1}, {2, 0, 0, 0, 50}, {0, 0, 0}};
        r.quotas[1] = (struct proto_acl_quota){
            {"CN=ci", 5}, {0, 300, 20, 0, 0}, {1, 12, 3}};
        return proto_write_acl_reply(o, c, ID, &r);
}

/* --- Readers: a recorded body read back and written again ---------------- */

/* Each reads the body of a frame of its case's type in the shape `flags`
 * say and writes what it read into `out` as a frame with id ID; 0 when
 * the reader refused the body. */
typedef size_t (*reread_fn)(uint16_t flags, const uint8_t *body, size_t len,
                            uint8_t *out, size_t cap);

static size_t r_keepalive(uint16_t flags, const uint8_t *b, size_t n,
                          uint8_t *o, size_t c)
{
        uint64_t session;

        if (proto_read_u64(b, n, &session) != 0) {
                return 0;
        }
        return proto_write_keepalive(o, c, ID, flags, session);
}
static size_t r_query(uint16_t flags, const uint8_t *b, size_t n, uint8_t *o,
                      size_t c)
{
        struct proto_string s;

        if (proto_read_query(b, n, &s) != 0) {
                return 0;
        }
        return proto_write_query(o, c, ID, flags, s.p, s.len);
}
static size_t r_check(uint16_t flags, const uint8_t *b, size_t n, uint8_t *o,
                      size_t c)
{
        struct proto_string s;
        uint64_t token;

        (void)flags;
        if (proto_read_check(b, n, &s, &token) != 0) {
                return 0;
        }
        return proto_write_check(o, c, ID, s.p, s.len, token);
}
static size_t r_member_add(uint16_t flags, const uint8_t *b, size_t n,
                           uint8_t *o, size_t c)
{
        struct proto_string raft, client;
        char rbuf[PROTO_ADDRESS_MAX + 1], cbuf[PROTO_ADDRESS_MAX + 1];
        uint64_t member;

        (void)flags;
        if (proto_read_member_add(b, n, &member, &raft, &client) != 0) {
                return 0;
        }
        snprintf(rbuf, sizeof rbuf, "%.*s", (int)raft.len, raft.p);
        snprintf(cbuf, sizeof cbuf, "%.*s", (int)client.len, client.p);
        return proto_write_member_add(o, c, ID, member, rbuf, cbuf);
}
static size_t r_list(uint16_t flags, const uint8_t *b, size_t n, uint8_t *o,
                     size_t c)
{
        struct proto_string s;
        uint32_t limit;

        if (proto_read_list(b, n, &s, &limit) != 0) {
                return 0;
        }
        return proto_write_list(o, c, ID, flags, s.p, s.len, limit);
}
static size_t r_watch(uint16_t flags, const uint8_t *b, size_t n, uint8_t *o,
                      size_t c)
{
        struct proto_watch w;

        (void)flags;
        if (proto_read_watch(b, n, &w) != 0) {
                return 0;
        }
        return proto_write_watch(o, c, ID, &w);
}
static size_t r_unwatch(uint16_t flags, const uint8_t *b, size_t n, uint8_t *o,
                        size_t c)
{
        uint64_t v;

        (void)flags;
        if (proto_read_u64(b, n, &v) != 0) {
                return 0;
        }
        return proto_write_id(o, c, ID, PROTO_UNWATCH, v);
}
static size_t r_backup(uint16_t flags, const uint8_t *b, size_t n, uint8_t *o,
                       size_t c)
{
        struct proto_backup k;

        (void)flags;
        if (proto_read_backup(b, n, &k) != 0) {
                return 0;
        }
        return proto_write_backup(o, c, ID, &k);
}
static size_t r_acl(uint16_t flags, const uint8_t *b, size_t n, uint8_t *o,
                    size_t c)
{
        struct proto_acl_request r;

        (void)flags;
        if (proto_read_acl(b, n, &r) != 0) {
                return 0;
        }
        return proto_write_acl(o, c, ID, &r);
}
static size_t r_result(uint16_t flags, const uint8_t *b, size_t n, uint8_t *o,
                       size_t c)
{
        struct proto_result r;

        if (proto_read_result(b, n, flags, &r) != 0) {
                return 0;
        }
        return proto_write_result(o, c, ID, flags, &r);
}
static size_t r_not_leader(uint16_t flags, const uint8_t *b, size_t n,
                           uint8_t *o, size_t c)
{
        struct proto_string a;
        char abuf[PROTO_ADDRESS_MAX + 1];
        uint64_t leader;

        (void)flags;
        if (proto_read_not_leader(b, n, &leader, &a) != 0) {
                return 0;
        }
        snprintf(abuf, sizeof abuf, "%.*s", (int)a.len, a.p);
        return proto_write_not_leader(o, c, ID, leader, abuf);
}
static size_t r_error(uint16_t flags, const uint8_t *b, size_t n, uint8_t *o,
                      size_t c)
{
        struct proto_string m;
        char mbuf[PROTO_MESSAGE_MAX + 1];
        int status;

        (void)flags;
        if (proto_read_error(b, n, &status, &m) != 0) {
                return 0;
        }
        snprintf(mbuf, sizeof mbuf, "%.*s", (int)m.len, m.p);
        return proto_write_error(o, c, ID, status, mbuf);
}
static size_t r_status_reply(uint16_t flags, const uint8_t *b, size_t n,
                             uint8_t *o, size_t c)
{
        struct proto_status st;
        struct proto_versions v;

        if (proto_read_status(b, n, flags, &st, &v) != 0) {
                return 0;
        }
        return proto_write_status(o, c, ID, flags, &st, &v);
}
static size_t r_keepalive_ok(uint16_t flags, const uint8_t *b, size_t n,
                             uint8_t *o, size_t c)
{
        uint32_t ttl, revoked;

        if (proto_read_keepalive_ok(b, n, flags, &ttl, &revoked) != 0) {
                return 0;
        }
        return proto_write_keepalive_ok(o, c, ID, flags, ttl, revoked);
}
static size_t r_list_reply(uint16_t flags, const uint8_t *b, size_t n,
                           uint8_t *o, size_t c)
{
        struct proto_lock_entry e[4];
        uint32_t count;
        bool more;

        if (proto_read_list_reply(b, n, flags, e, 4, &count, &more) != 0) {
                return 0;
        }
        return proto_write_list_reply(o, c, ID, flags, e, count, more);
}
static size_t r_watch_event(uint16_t flags, const uint8_t *b, size_t n,
                            uint8_t *o, size_t c)
{
        struct proto_watch_event e;

        (void)flags;
        if (proto_read_watch_event(b, n, &e) != 0) {
                return 0;
        }
        return proto_write_watch_event(o, c, ID, &e);
}
static size_t r_backup_chunk(uint16_t flags, const uint8_t *b, size_t n,
                             uint8_t *o, size_t c)
{
        struct proto_backup_chunk k;

        (void)flags;
        if (proto_read_backup_chunk(b, n, &k) != 0) {
                return 0;
        }
        return proto_write_backup_chunk(o, c, ID, &k);
}
static size_t r_acl_reply(uint16_t flags, const uint8_t *b, size_t n,
                          uint8_t *o, size_t c)
{
        struct proto_acl_reply r;

        (void)flags;
        if (proto_read_acl_reply(b, n, &r) != 0) {
                return 0;
        }
        return proto_write_acl_reply(o, c, ID, &r);
}

/* --- The recorded frames -------------------------------------------------- */

struct golden {
        const char *name;
        write_fn write;
        reread_fn reread; /* NULL: a frame with no body to read back */
        const char *hex;  /* header, then body */
};

static const struct golden goldens[] = {
    {"COMMAND", w_command, NULL,
     "02 01 00 00 09 00 00 00 88 77 66 55 44 33 22 11 "
     "01 02 03 04 05 06 07 08 09"},
    {"KEEPALIVE", w_keepalive, r_keepalive,
     "02 02 00 00 08 00 00 00 88 77 66 55 44 33 22 11 "
     "0d 0c 0b 0a 00 00 00 00"},
    {"KEEPALIVE REVOKED", w_keepalive_revoked, r_keepalive,
     "02 02 04 00 08 00 00 00 88 77 66 55 44 33 22 11 "
     "0d 0c 0b 0a 00 00 00 00"},
    {"QUERY", w_query, r_query,
     "02 03 00 00 05 00 00 00 88 77 66 55 44 33 22 11 "
     "04 64 62 2f 61"},
    {"QUERY NAMES", w_query_names, r_query,
     "02 03 01 00 05 00 00 00 88 77 66 55 44 33 22 11 "
     "04 64 62 2f 61"},
    {"QUERY HOLDERS", w_query_holders, r_query,
     "02 03 02 00 05 00 00 00 88 77 66 55 44 33 22 11 "
     "04 64 62 2f 61"},
    {"QUERY HOLDERS VALUES", w_query_values, r_query,
     "02 03 0a 00 05 00 00 00 88 77 66 55 44 33 22 11 "
     "04 64 62 2f 61"},
    {"QUERY HOLDERS VALUES LEFT", w_query_left, r_query,
     "02 03 4a 00 05 00 00 00 88 77 66 55 44 33 22 11 "
     "04 64 62 2f 61"},
    {"CHECK", w_check, r_check,
     "02 04 00 00 0d 00 00 00 88 77 66 55 44 33 22 11 "
     "99 00 00 00 00 00 00 00 04 64 62 2f 61"},
    {"STATUS", w_status, NULL,
     "02 05 00 00 00 00 00 00 88 77 66 55 44 33 22 11"},
    {"STATUS VERSIONS", w_status_versions, NULL,
     "02 05 10 00 00 00 00 00 88 77 66 55 44 33 22 11"},
    {"MEMBER_ADD", w_member_add, r_member_add,
     "02 06 00 00 24 00 00 00 88 77 66 55 44 33 22 11 "
     "04 00 00 00 00 00 00 00 0d 31 30 2e 30 2e 30 2e "
     "34 3a 37 30 30 31 0d 31 30 2e 30 2e 30 2e 34 3a "
     "38 30 30 31"},
    {"MEMBER_REMOVE", w_member_remove, NULL,
     "02 07 00 00 08 00 00 00 88 77 66 55 44 33 22 11 "
     "04 00 00 00 00 00 00 00"},
    {"TRANSFER", w_transfer, NULL,
     "02 08 00 00 08 00 00 00 88 77 66 55 44 33 22 11 "
     "02 00 00 00 00 00 00 00"},
    {"PING", w_ping, NULL, "02 09 00 00 00 00 00 00 88 77 66 55 44 33 22 11"},
    {"LIST", w_list, r_list,
     "02 0a 00 00 08 00 00 00 88 77 66 55 44 33 22 11 "
     "03 64 62 2f 19 00 00 00"},
    {"LIST NAMES", w_list_names, r_list,
     "02 0a 01 00 08 00 00 00 88 77 66 55 44 33 22 11 "
     "03 64 62 2f 19 00 00 00"},
    {"ATTACH", w_attach, NULL,
     "02 0b 00 00 18 00 00 00 88 77 66 55 44 33 22 11 "
     "2a 00 00 00 00 00 00 00 01 02 03 04 05 06 07 08 "
     "09 0a 0b 0c 0d 0e 0f 10"},
    {"WATCH", w_watch, r_watch,
     "02 0c 00 00 11 00 00 00 88 77 66 55 44 33 22 11 "
     "01 2c 01 00 00 00 00 00 00 02 00 00 00 03 64 62 "
     "2f"},
    {"UNWATCH", w_unwatch, r_unwatch,
     "02 0d 00 00 08 00 00 00 88 77 66 55 44 33 22 11 "
     "77 00 00 00 00 00 00 00"},
    {"BACKUP", w_backup, r_backup,
     "02 0e 00 00 10 00 00 00 88 77 66 55 44 33 22 11 "
     "03 00 00 00 00 00 00 00 00 10 00 00 00 00 00 00"},
    {"ACL LIST", w_acl_list, r_acl,
     "02 0f 00 00 03 00 00 00 88 77 66 55 44 33 22 11 "
     "00 00 00"},
    {"ACL SET", w_acl_set, r_acl,
     "02 0f 00 00 09 00 00 00 88 77 66 55 44 33 22 11 "
     "01 02 06 43 4e 3d 77 65 62"},
    /* Rules on name prefixes, written from docs/protocol.md's layout. */
    {"ACL RULE_SET", w_acl_rule_set, r_acl,
     "02 0f 00 00 12 00 00 00 88 77 66 55 44 33 22 11 "
     "03 03 06 74 65 61 6d 2d 61 02 07 74 65 61 6d 2d "
     "61 2f"},
    /* Quotas, written from docs/protocol.md's layout: limits in kind
     * order (sessions, locks, waiters, watches, rate). */
    {"ACL QUOTA_SET", w_acl_quota_set, r_acl,
     "02 0f 00 00 1c 00 00 00 88 77 66 55 44 33 22 11 "
     "05 00 05 43 4e 3d 63 69 00 00 00 00 2c 01 00 00 "
     "14 00 00 00 00 00 00 00 e8 03 00 00"},
    {"ACL QUOTA_REMOVE", w_acl_quota_remove, r_acl,
     "02 0f 00 00 04 00 00 00 88 77 66 55 44 33 22 11 "
     "06 00 01 2a"},
    {"RESULT", w_result, r_result,
     "02 40 00 00 2d 00 00 00 88 77 66 55 44 33 22 11 "
     "f7 ff ff ff 09 05 01 00 00 00 00 00 00 2a 00 00 "
     "00 00 00 00 00 01 02 03 04 05 06 07 08 00 01 00 "
     "00 00 00 00 00 01 00 00 00 04 03 02 01"},
    {"RESULT NAMES", w_result_names, r_result,
     "02 40 01 00 33 00 00 00 88 77 66 55 44 33 22 11 "
     "f7 ff ff ff 09 05 01 00 00 00 00 00 00 2a 00 00 "
     "00 00 00 00 00 01 02 03 04 05 06 07 08 00 01 00 "
     "00 00 00 00 00 01 00 00 00 04 03 02 01 05 77 65 "
     "62 2d 31"},
    {"NOT_LEADER", w_not_leader, r_not_leader,
     "02 41 00 00 17 00 00 00 88 77 66 55 44 33 22 11 "
     "02 00 00 00 00 00 00 00 0e 31 32 37 2e 30 2e 30 "
     "2e 31 3a 38 30 30 32"},
    {"ERROR", w_error, r_error,
     "02 42 00 00 0e 00 00 00 88 77 66 55 44 33 22 11 "
     "fd ff ff ff 09 62 61 64 20 66 72 61 6d 65"},
    {"STATUS_REPLY", w_status_reply, r_status_reply,
     "02 43 00 00 8a 00 00 00 88 77 66 55 44 33 22 11 "
     "01 00 00 00 00 00 00 00 02 03 00 00 00 00 00 00 "
     "00 01 00 00 00 00 00 00 00 0a 00 00 00 00 00 00 "
     "00 09 00 00 00 00 00 00 00 0b 00 00 00 00 00 00 "
     "00 04 00 00 00 00 00 00 00 05 00 00 00 00 00 00 "
     "00 06 00 00 00 00 00 00 00 02 01 00 00 00 00 00 "
     "00 00 00 0e 31 32 37 2e 30 2e 30 2e 31 3a 37 30 "
     "30 31 0e 31 32 37 2e 30 2e 30 2e 31 3a 38 30 30 "
     "31 02 00 00 00 00 00 00 00 01 0e 31 32 37 2e 30 "
     "2e 30 2e 31 3a 37 30 30 32 00"},
    {"STATUS_REPLY VERSIONS", w_status_reply_versions, r_status_reply,
     "02 43 10 00 96 00 00 00 88 77 66 55 44 33 22 11 "
     "01 00 00 00 00 00 00 00 02 03 00 00 00 00 00 00 "
     "00 01 00 00 00 00 00 00 00 0a 00 00 00 00 00 00 "
     "00 09 00 00 00 00 00 00 00 0b 00 00 00 00 00 00 "
     "00 04 00 00 00 00 00 00 00 05 00 00 00 00 00 00 "
     "00 06 00 00 00 00 00 00 00 02 01 00 00 00 00 00 "
     "00 00 00 0e 31 32 37 2e 30 2e 30 2e 31 3a 37 30 "
     "30 31 0e 31 32 37 2e 30 2e 30 2e 31 3a 38 30 30 "
     "31 02 00 00 00 00 00 00 00 01 0e 31 32 37 2e 30 "
     "2e 30 2e 31 3a 37 30 30 32 00 05 30 2e 32 2e 30 "
     "06 00 03 00 01 00"},
    {"KEEPALIVE_OK", w_keepalive_ok, r_keepalive_ok,
     "02 44 00 00 04 00 00 00 88 77 66 55 44 33 22 11 "
     "98 3a 00 00"},
    {"KEEPALIVE_OK REVOKED", w_keepalive_ok_revoked, r_keepalive_ok,
     "02 44 04 00 08 00 00 00 88 77 66 55 44 33 22 11 "
     "98 3a 00 00 03 00 00 00"},
    {"PONG", w_pong, NULL, "02 45 00 00 00 00 00 00 88 77 66 55 44 33 22 11"},
    {"LIST_REPLY", w_list_reply, r_list_reply,
     "02 46 00 00 4f 00 00 00 88 77 66 55 44 33 22 11 "
     "02 00 00 00 01 04 64 62 2f 61 07 00 00 00 00 00 "
     "00 00 08 00 00 00 00 00 00 00 09 00 00 00 00 00 "
     "00 00 01 00 00 00 02 00 00 00 04 64 62 2f 62 08 "
     "07 06 05 04 03 02 01 0b 00 00 00 00 00 00 00 0c "
     "00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"},
    {"LIST_REPLY NAMES", w_list_reply_names, r_list_reply,
     "02 46 01 00 56 00 00 00 88 77 66 55 44 33 22 11 "
     "02 00 00 00 01 04 64 62 2f 61 07 00 00 00 00 00 "
     "00 00 08 00 00 00 00 00 00 00 09 00 00 00 00 00 "
     "00 00 01 00 00 00 02 00 00 00 05 77 65 62 2d 31 "
     "04 64 62 2f 62 08 07 06 05 04 03 02 01 0b 00 00 "
     "00 00 00 00 00 0c 00 00 00 00 00 00 00 00 00 00 "
     "00 00 00 00 00 00"},
    {"LIST_REPLY HOLDERS", w_list_reply_holders, r_list_reply,
     "02 46 02 00 70 00 00 00 88 77 66 55 44 33 22 11 "
     "02 00 00 00 00 04 64 62 2f 61 07 00 00 00 00 00 "
     "00 00 08 00 00 00 00 00 00 00 09 00 00 00 00 00 "
     "00 00 01 00 00 00 02 00 00 00 05 77 65 62 2d 31 "
     "01 03 00 00 00 05 00 00 00 00 f1 53 65 04 64 62 "
     "2f 62 08 07 06 05 04 03 02 01 0b 00 00 00 00 00 "
     "00 00 0c 00 00 00 00 00 00 00 00 00 00 00 00 00 "
     "00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"},
    {"LIST_REPLY HOLDERS VALUES", w_list_reply_values, r_list_reply,
     "02 46 0a 00 74 00 00 00 88 77 66 55 44 33 22 11 "
     "02 00 00 00 00 04 64 62 2f 61 07 00 00 00 00 00 "
     "00 00 08 00 00 00 00 00 00 00 09 00 00 00 00 00 "
     "00 00 01 00 00 00 02 00 00 00 05 77 65 62 2d 31 "
     "01 03 00 00 00 05 00 00 00 00 f1 53 65 02 76 31 "
     "04 64 62 2f 62 08 07 06 05 04 03 02 01 0b 00 00 "
     "00 00 00 00 00 0c 00 00 00 00 00 00 00 00 00 00 "
     "00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 "
     "00 00 00 00"},
    {"LIST_REPLY HOLDERS VALUES LEFT", w_list_reply_left, r_list_reply,
     "02 46 4a 00 7c 00 00 00 88 77 66 55 44 33 22 11 "
     "02 00 00 00 00 04 64 62 2f 61 07 00 00 00 00 00 "
     "00 00 08 00 00 00 00 00 00 00 09 00 00 00 00 00 "
     "00 00 01 00 00 00 02 00 00 00 05 77 65 62 2d 31 "
     "01 03 00 00 00 05 00 00 00 00 f1 53 65 02 76 31 "
     "40 1f 00 00 04 64 62 2f 62 08 07 06 05 04 03 02 "
     "01 0b 00 00 00 00 00 00 00 0c 00 00 00 00 00 00 "
     "00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 "
     "00 00 00 00 00 00 00 00 ff ff ff ff"},
    {"WATCH_EVENT", w_watch_event, r_watch_event,
     "02 47 00 00 3c 00 00 00 88 77 66 55 44 33 22 11 "
     "2d 01 00 00 00 00 00 00 01 00 00 00 03 09 02 07 "
     "00 00 00 00 00 00 00 08 00 00 00 00 00 00 00 09 "
     "00 00 00 00 00 00 00 01 00 00 00 09 64 62 2f 6c "
     "65 61 64 65 72 06 68 6f 73 74 2d 31"},
    {"BACKUP_CHUNK", w_backup_chunk, r_backup_chunk,
     "02 48 00 00 56 00 00 00 88 77 66 55 44 33 22 11 "
     "03 00 00 00 00 00 00 00 f4 01 00 00 00 00 00 00 "
     "04 00 00 00 00 00 00 00 7b 68 e5 cf 8b 01 00 00 "
     "64 00 00 00 00 00 00 00 5a 00 00 00 00 00 00 00 "
     "01 00 00 00 00 00 00 00 02 00 00 00 00 00 00 00 "
     "03 00 00 00 00 00 00 00 04 00 00 00 00 00 00 00 "
     "de ad be ef 00 01"},
    {"ACL_REPLY", w_acl_reply, r_acl_reply,
     "02 49 00 00 1c 00 00 00 88 77 66 55 44 33 22 11 "
     "01 01 02 02 00 00 03 08 43 4e 3d 61 64 6d 69 6e "
     "00 01 09 43 4e 3d 72 65 61 64 65 72"},
    {"ACL_REPLY PREFIX", w_acl_reply_prefix, r_acl_reply,
     "02 49 00 00 38 00 00 00 88 77 66 55 44 33 22 11 "
     "02 01 02 02 00 00 03 08 43 4e 3d 61 64 6d 69 6e "
     "00 01 09 43 4e 3d 72 65 61 64 65 72 02 00 01 05 "
     "05 43 4e 3d 63 69 00 02 03 06 74 65 61 6d 2d 61 "
     "07 74 65 61 6d 2d 61 2f"},
    /* Format 3: format 2's fields (no prefix rule: m = 0), then two
     * quotas of subject, 5 limits and 3 used. */
    {"ACL_REPLY QUOTA", w_acl_reply_quota, r_acl_reply,
     "02 49 00 00 68 00 00 00 88 77 66 55 44 33 22 11 "
     "03 01 02 02 00 00 03 08 43 4e 3d 61 64 6d 69 6e "
     "00 01 09 43 4e 3d 72 65 61 64 65 72 00 00 02 00 "
     "01 2a 02 00 00 00 00 00 00 00 00 00 00 00 00 00 "
     "00 00 32 00 00 00 00 00 00 00 00 00 00 00 00 00 "
     "00 00 05 43 4e 3d 63 69 00 00 00 00 2c 01 00 00 "
     "14 00 00 00 00 00 00 00 00 00 00 00 01 00 00 00 "
     "0c 00 00 00 03 00 00 00"},
};

/* --- Running the cases ---------------------------------------------------- */

/* The recorded bytes of `g`, decoded from hex (spaces ignored). */
static size_t unhex(const char *hex, uint8_t *out, size_t cap)
{
        size_t n = 0;
        unsigned v;

        while (*hex != '\0') {
                if (*hex == ' ') {
                        hex++;
                        continue;
                }
                assert_true(n < cap);
                assert_int_equal(sscanf(hex, "%2x", &v), 1);
                out[n++] = (uint8_t)v;
                hex += 2;
        }
        return n;
}

/* Print what was written, for a case whose bytes differ. */
static void print_hex(const char *name, const uint8_t *b, size_t n)
{
        size_t i;

        printf("%s: wrote %zu bytes:\n    \"", name, n);
        for (i = 0; i < n; i++) {
                printf("%02x%s", b[i], i + 1 < n ? " " : "");
        }
        printf("\"\n");
}

static void check_bytes(const char *name, const uint8_t *got, size_t n,
                        const uint8_t *want, size_t want_len)
{
        if (n != want_len || memcmp(got, want, n) != 0) {
                print_hex(name, got, n);
                fail_msg("%s: the frame differs from its recorded bytes", name);
        }
}

static void golden_case(void **state)
{
        const struct golden *g = *state;
        uint8_t want[CAP], got[CAP];
        struct proto_header h;
        size_t want_len, n;

        want_len = unhex(g->hex, want, sizeof want);
        memset(got, 0xA5, sizeof got);
        n = g->write(got, sizeof got);
        check_bytes(g->name, got, n, want, want_len);

        /* The header agrees with itself: a receiver accepts it as is. */
        assert_true(want_len >= PROTO_HEADER_SIZE);
        assert_int_equal(proto_header_decode(&h, want, PROTO_MAX_BODY), 0);
        assert_int_equal(h.length, want_len - PROTO_HEADER_SIZE);
        if (g->reread == NULL) {
                return;
        }
        memset(got, 0xA5, sizeof got);
        n = g->reread(h.flags, want + PROTO_HEADER_SIZE, h.length, got,
                      sizeof got);
        check_bytes(g->name, got, n, want, want_len);
}

int main(void)
{
        struct CMUnitTest tests[sizeof goldens / sizeof goldens[0]];
        size_t i;

        /* One cmocka test per case, named for its message and flags. */
        for (i = 0; i < sizeof goldens / sizeof goldens[0]; i++) {
                tests[i] = (struct CMUnitTest){goldens[i].name, golden_case,
                                               NULL, NULL, (void *)&goldens[i]};
        }
        return cmocka_run_group_tests_name("proto_golden", tests, NULL, NULL);
}
