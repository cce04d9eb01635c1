/*
 * The replicated access list (src/fsm/acl.h): its rule table (the first
 * seed stands, set and remove need a table and keep an admin, node
 * identities get role none unless named), its encoding and the ACL
 * command's, and its round trip through a snapshot of the server's state
 * machine, restored inline and on the worker (tests/lib/replica.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <raft.h>

#include "../../include/baton.h"
#include "../../src/fsm/acl.h"
#include "../../src/fsm/entry.h"
#include "../../src/fsm/lockfsm.h"
#include "../../src/proto/command.h"
#include "../../src/proto/proto.h"
#include "../../src/proto/aclwire.h"
#include "../../src/server/raft/raftfsm.h"
#include "../lib/replica.h"

static uint8_t table_buf[ACL_ENCODED_MAX];

/* A seed of `acl`'s rules (its encoding in table_buf). */
static struct command seed_of(const struct acl *acl)
{
        struct command c;

        memset(&c, 0, sizeof c);
        c.type = COMMAND_ACL;
        c.mode = COMMAND_ACL_SEED;
        c.list = table_buf;
        c.list_len = (uint16_t)acl_encode(acl, table_buf, sizeof table_buf);
        return c;
}

static struct command change(uint8_t mode, const char *id, uint8_t role)
{
        struct command c;

        memset(&c, 0, sizeof c);
        c.type = COMMAND_ACL;
        c.mode = mode;
        c.role = role;
        c.name = id;
        c.name_len = (uint8_t)strlen(id);
        c.address = "admin";
        c.address_len = 5;
        return c;
}

/* The tests' usual list: admin is admin, reader reads, default lock. */
static void usual(struct acl *a)
{
        acl_start(a, ACL_LOCK);
        assert_int_equal(acl_put(a, "reader", 6, ACL_READ), 0);
        assert_int_equal(acl_put(a, "admin", 5, ACL_ADMIN), 0);
}

static void test_seed_once(void **state)
{
        struct acl a, seed, other;
        struct command c;

        (void)state;
        acl_init(&a);
        assert_false(a.seeded);
        c = change(COMMAND_ACL_SET, "alice", ACL_READ);
        assert_int_equal(acl_apply(&a, &c), BATON_EBUSY); /* no table yet */
        assert_false(a.seeded);
        usual(&seed);
        c = seed_of(&seed);
        assert_int_equal(acl_apply(&a, &c), 0);
        assert_true(a.seeded);
        assert_true(acl_equal(&a, &seed));
        /* A second seed (another leader's) changes nothing. */
        acl_start(&other, ACL_ADMIN);
        c = seed_of(&other);
        assert_int_equal(acl_apply(&a, &c), 0);
        assert_true(acl_equal(&a, &seed));
        assert_int_equal(a.default_role, ACL_LOCK);
}

static void test_set_remove(void **state)
{
        struct acl a;
        struct command c;

        (void)state;
        usual(&a);
        c = change(COMMAND_ACL_SET, "alice", ACL_READ);
        assert_int_equal(acl_apply(&a, &c), 0);
        assert_int_equal(acl_role(&a, "alice", "node-{id}"), ACL_READ);
        c = change(COMMAND_ACL_SET, "alice", ACL_ADMIN); /* changes it */
        assert_int_equal(acl_apply(&a, &c), 0);
        assert_int_equal(acl_role(&a, "alice", "node-{id}"), ACL_ADMIN);
        assert_int_equal(a.n, 3);
        /* Kept sorted: admin, alice, reader. */
        assert_string_equal(a.rules[0].identity, "admin");
        assert_string_equal(a.rules[1].identity, "alice");
        assert_string_equal(a.rules[2].identity, "reader");
        c = change(COMMAND_ACL_REMOVE, "alice", 0);
        assert_int_equal(acl_apply(&a, &c), 0);
        assert_int_equal(acl_role(&a, "alice", "node-{id}"), ACL_LOCK);
        assert_int_equal(acl_apply(&a, &c), BATON_ENOTFOUND);
        assert_int_equal(a.n, 2);
}

/* Nobody could change the list again: refused, nothing changed. */
static void test_last_admin_kept(void **state)
{
        struct acl a, before;
        struct command c;

        (void)state;
        usual(&a);
        before = a;
        c = change(COMMAND_ACL_REMOVE, "admin", 0);
        assert_int_equal(acl_apply(&a, &c), BATON_EINVAL);
        c = change(COMMAND_ACL_SET, "admin", ACL_LOCK);
        assert_int_equal(acl_apply(&a, &c), BATON_EINVAL);
        assert_true(acl_equal(&a, &before));
        /* With a second admin, the first may go. */
        c = change(COMMAND_ACL_SET, "ops", ACL_ADMIN);
        assert_int_equal(acl_apply(&a, &c), 0);
        c = change(COMMAND_ACL_REMOVE, "admin", 0);
        assert_int_equal(acl_apply(&a, &c), 0);
}

static void test_node_identities(void **state)
{
        struct acl a;
        struct command c;

        (void)state;
        usual(&a);
        assert_true(acl_is_node("node-{id}", "node-4"));
        assert_true(acl_is_node("node-{id}", "node-12345678901234567890"));
        assert_true(acl_is_node("baton-{id}.example", "baton-7.example"));
        assert_false(acl_is_node("node-{id}", "node-"));
        assert_false(acl_is_node("node-{id}", "node-4x"));
        assert_false(acl_is_node("node-{id}", "xnode-4"));
        assert_false(acl_is_node("node-{id}", "alice"));
        assert_false(acl_is_node(NULL, "node-4"));
        /* A node's identity gets nothing, whatever the default... */
        assert_int_equal(acl_role(&a, "node-4", "node-{id}"), ACL_NONE);
        assert_int_equal(acl_role(&a, "node-99", "node-{id}"), ACL_NONE);
        assert_int_equal(acl_role(&a, "stranger", "node-{id}"), ACL_LOCK);
        /* ...unless a rule names it. */
        c = change(COMMAND_ACL_SET, "node-4", ACL_READ);
        assert_int_equal(acl_apply(&a, &c), 0);
        assert_int_equal(acl_role(&a, "node-4", "node-{id}"), ACL_READ);
        assert_int_equal(acl_role(&a, "node-5", "node-{id}"), ACL_NONE);
}

static void test_encoding(void **state)
{
        struct acl a, b;
        uint8_t buf[ACL_ENCODED_MAX];
        size_t len;
        char id[ACL_IDENTITY_MAX + 1];
        unsigned i;

        (void)state;
        acl_start(&a, ACL_READ);
        for (i = 0; i < ACL_MAX; i++) {
                memset(id, 'a' + (int)(i % 26), ACL_IDENTITY_MAX);
                snprintf(id, 8, "%05u", i);
                id[5] = 'x';
                assert_int_equal(acl_put(&a, id, ACL_IDENTITY_MAX, i % 4), 0);
        }
        assert_int_equal(acl_put(&a, "full", 4, ACL_READ), BATON_EINVAL);
        len = acl_encode(&a, buf, sizeof buf);
        /* The largest list of identities, well inside a table's limit. */
        assert_int_equal(len, 5 + ACL_MAX * (3 + ACL_IDENTITY_MAX));
        assert_true(len <= ACL_ENCODED_LIMIT);
        assert_int_equal(acl_decode(&b, buf, len), 0);
        assert_true(acl_equal(&a, &b));
        assert_int_equal(acl_decode(&b, buf, len - 1), BATON_ECORRUPT);
        buf[0] = ACL_FORMAT + 1;
        assert_int_equal(acl_decode(&b, buf, len), BATON_EVERSION);
        /* Rules out of order are not what acl_put() builds. */
        {
                const uint8_t sorted[] = {1,   2,   2,   0,   0,   0,  3, 5,
                                          'a', 'd', 'm', 'i', 'n', 0,  1, 6,
                                          'r', 'e', 'a', 'd', 'e', 'r'};
                const uint8_t unsorted[] = {1,   2,   2,   0,   0,   0,   1, 6,
                                            'r', 'e', 'a', 'd', 'e', 'r', 0, 3,
                                            5,   'a', 'd', 'm', 'i', 'n'};
                assert_int_equal(acl_decode(&b, sorted, sizeof sorted), 0);
                usual(&a);
                assert_true(acl_equal(&a, &b));
                assert_int_equal(acl_decode(&b, unsorted, sizeof unsorted),
                                 BATON_ECORRUPT);
        }
}

static void test_command_round_trip(void **state)
{
        uint8_t buf[ACL_ENCODED_MAX + 64];
        struct command c, d;
        struct acl a, got;
        size_t len;

        (void)state;
        c = change(COMMAND_ACL_SET, "alice", ACL_READ);
        len = command_encode(&c, buf, sizeof buf);
        assert_true(len > 0 && len % 8 == 0);
        assert_int_equal(command_size(&c), len);
        assert_int_equal(command_decode(&d, buf, len), 0);
        assert_int_equal(d.type, COMMAND_ACL);
        assert_int_equal(d.mode, COMMAND_ACL_SET);
        assert_int_equal(d.role, ACL_READ);
        assert_memory_equal(d.name, "alice", 5);
        assert_memory_equal(d.address, "admin", 5);
        usual(&a);
        c = seed_of(&a);
        len = command_encode(&c, buf, sizeof buf);
        assert_true(len > 0);
        assert_int_equal(command_size(&c), len);
        assert_int_equal(command_decode(&d, buf, len), 0);
        assert_int_equal(d.mode, COMMAND_ACL_SEED);
        assert_int_equal(acl_decode(&got, d.list, d.list_len), 0);
        assert_true(acl_equal(&a, &got));
        /* A remove carries no role, a seed no identity. */
        c = change(COMMAND_ACL_REMOVE, "alice", ACL_READ);
        assert_int_equal(command_encode(&c, buf, sizeof buf), 0);
        c = seed_of(&a);
        c.name = "x";
        c.name_len = 1;
        assert_int_equal(command_encode(&c, buf, sizeof buf), 0);
}

/* The client protocol's ACL request and answer (aclwire.c). */
static void test_wire(void **state)
{
        uint8_t buf[PROTO_HEADER_SIZE + ACL_ENCODED_MAX + 8];
        struct proto_acl_request rq = {
            .op = PROTO_ACL_SET, .role = ACL_READ, .identity = {"alice", 5}};
        struct proto_acl_request got;
        struct proto_acl_reply rp, back;
        struct proto_header h;
        size_t len;

        (void)state;
        len = proto_write_acl(buf, sizeof buf, 7, &rq);
        assert_int_equal(len, PROTO_HEADER_SIZE + 3 + 5);
        assert_int_equal(proto_header_decode(&h, buf, PROTO_MAX_BODY), 0);
        assert_int_equal(h.type, PROTO_ACL);
        assert_int_equal(
            proto_read_acl(buf + PROTO_HEADER_SIZE, h.length, &got), 0);
        assert_int_equal(got.op, PROTO_ACL_SET);
        assert_int_equal(got.role, ACL_READ);
        assert_memory_equal(got.identity.p, "alice", 5);
        /* Refused: a role out of range, a LIST with an identity, a
         * REMOVE with a role, an unknown op, a trailing byte. */
        rq.role = 4;
        assert_int_equal(proto_write_acl(buf, sizeof buf, 7, &rq), 0);
        rq = (struct proto_acl_request){.op = PROTO_ACL_LIST,
                                        .identity = {"x", 1}};
        assert_int_equal(proto_write_acl(buf, sizeof buf, 7, &rq), 0);
        rq = (struct proto_acl_request){
            .op = PROTO_ACL_REMOVE, .role = 1, .identity = {"x", 1}};
        assert_int_equal(proto_write_acl(buf, sizeof buf, 7, &rq), 0);
        {
                const uint8_t op9[] = {9, 0, 0};
                const uint8_t extra[] = {PROTO_ACL_LIST, 0, 0, 0};
                assert_int_equal(proto_read_acl(op9, sizeof op9, &got),
                                 BATON_EMALFORMED);
                assert_int_equal(proto_read_acl(extra, sizeof extra, &got),
                                 BATON_EMALFORMED);
        }
        memset(&rp, 0, sizeof rp);
        rp.seeded = 1;
        rp.default_role = ACL_LOCK;
        rp.n = 2;
        rp.rules[0] = (struct proto_acl_rule){0, ACL_ADMIN, {"admin", 5}};
        rp.rules[1] = (struct proto_acl_rule){0, ACL_READ, {"reader", 6}};
        len = proto_write_acl_reply(buf, sizeof buf, 7, &rp);
        assert_true(len > PROTO_HEADER_SIZE);
        assert_int_equal(proto_header_decode(&h, buf, PROTO_MAX_BODY), 0);
        assert_int_equal(h.type, PROTO_ACL_REPLY);
        assert_int_equal(
            proto_read_acl_reply(buf + PROTO_HEADER_SIZE, h.length, &back), 0);
        assert_int_equal(back.n, 2);
        assert_int_equal(back.default_role, ACL_LOCK);
        assert_memory_equal(back.rules[1].identity.p, "reader", 6);
        buf[PROTO_HEADER_SIZE] = PROTO_ACL_FORMAT + 1;
        assert_int_equal(
            proto_read_acl_reply(buf + PROTO_HEADER_SIZE, h.length, &back),
            BATON_EVERSION);
        buf[PROTO_HEADER_SIZE] = PROTO_ACL_FORMAT;
        assert_int_equal(
            proto_read_acl_reply(buf + PROTO_HEADER_SIZE, h.length - 1, &back),
            BATON_EMALFORMED);
}

/* Apply command `c` to replica `r` as raft would. */
static void apply(struct replica *r, const struct command *c)
{
        static uint8_t buf[ACL_ENCODED_MAX + 64];
        size_t len = command_encode(c, buf, sizeof buf);

        assert_true(len > 0);
        assert_int_equal(replica_apply_bytes(r, buf, len, NULL), 0);
}

/* The list goes into the snapshot and comes back from it, inline and on
 * the worker; a snapshot taken before any seed restores no list. */
static void check_round_trip(enum raftfsm_restore_mode mode)
{
        struct replica *a = replica_new(RAFTFSM_RESTORE_INLINE);
        struct replica *b = replica_new(mode);
        struct replica *c = replica_new(mode);
        struct raft_buffer buf;
        struct command cmd;
        struct acl seed;
        void *out;
        uint64_t epoch;

        assert_int_equal(raftfsm_encode(&a->rf, &out, &buf.len), 0);
        buf.base = out;
        assert_int_equal(c->rf.fsm.restore(&c->rf.fsm, &buf), 0);
        assert_int_equal(raftfsm_adopt(&c->rf, true), 0);
        assert_false(raftfsm_acl(&c->rf)->seeded);

        usual(&seed);
        cmd = seed_of(&seed);
        apply(a, &cmd);
        cmd = change(COMMAND_ACL_SET, "node-4", ACL_LOCK);
        apply(a, &cmd);
        cmd = change(COMMAND_ACL_REMOVE, "reader", 0);
        apply(a, &cmd);
        assert_true(raftfsm_acl(&a->rf)->seeded);
        assert_int_equal(raftfsm_acl(&a->rf)->n, 2);

        epoch = raftfsm_acl_epoch(&b->rf);
        assert_int_equal(raftfsm_encode(&a->rf, &out, &buf.len), 0);
        buf.base = out;
        assert_int_equal(b->rf.fsm.restore(&b->rf.fsm, &buf), 0);
        assert_int_equal(raftfsm_adopt(&b->rf, true), 0);
        assert_true(acl_equal(raftfsm_acl(&a->rf), raftfsm_acl(&b->rf)));
        assert_true(raftfsm_acl_epoch(&b->rf) != epoch);
        assert_int_equal(acl_role(raftfsm_acl(&b->rf), "node-4", "node-{id}"),
                         ACL_LOCK);
        replica_free(a);
        replica_free(b);
        replica_free(c);
}

/* Apply `len` bytes to `r`. */
static void apply_raw(struct replica *r, const void *bytes, size_t len)
{
        assert_int_equal(replica_apply_bytes(r, bytes, len, NULL), 0);
}

/* A batch of three OPENs, which runs the stamps ahead of the index. */
static void three_opens(struct replica *r)
{
        uint8_t cmd[128], buf[1024];
        struct entry_writer w;
        struct command c;
        unsigned i;

        entry_writer_init(&w, buf, sizeof buf, 1);
        for (i = 0; i < 3; i++) {
                size_t len;
                memset(&c, 0, sizeof c);
                c.type = COMMAND_OPEN;
                c.nonce = 100 + i;
                c.ttl_ms = 60000;
                len = command_encode(&c, cmd, sizeof cmd);
                assert_true(entry_writer_add(&w, cmd, len));
        }
        apply_raw(r, buf, entry_writer_finish(&w));
}

/* The lock state of a node of this release after an ACL entry is that of
 * a node of a release without the access list, which applies it as a
 * command it cannot decode: the same stamps, so the same session ids
 * after it, in a cluster part-way through an upgrade. */
static void test_lock_state_as_older(void **state)
{
        struct replica *now = replica_new(RAFTFSM_RESTORE_INLINE);
        struct replica *old = replica_new(RAFTFSM_RESTORE_INLINE);
        uint8_t buf[ACL_ENCODED_MAX + 64], open[128];
        struct command c;
        struct acl seed;
        void *x, *y;
        size_t len, xl, yl, ol;

        (void)state;
        three_opens(now);
        three_opens(old);
        usual(&seed);
        c = seed_of(&seed);
        len = command_encode(&c, buf, sizeof buf);
        apply_raw(now, buf, len);
        buf[1] = 99; /* a type the older release does not know */
        apply_raw(old, buf, len);
        memset(&c, 0, sizeof c);
        c.type = COMMAND_OPEN;
        c.nonce = 200;
        c.ttl_ms = 60000;
        ol = command_encode(&c, open, sizeof open);
        apply_raw(now, open, ol);
        apply_raw(old, open, ol);
        assert_true(raftfsm_acl(&now->rf)->seeded);
        assert_int_equal(lockfsm_snapshot(raftfsm_lockfsm(&now->rf), &x, &xl),
                         0);
        assert_int_equal(lockfsm_snapshot(raftfsm_lockfsm(&old->rf), &y, &yl),
                         0);
        assert_int_equal(xl, yl);
        assert_memory_equal(x, y, xl);
        raft_free(x);
        raft_free(y);
        replica_free(now);
        replica_free(old);
}

static void test_snapshot_inline(void **state)
{
        (void)state;
        check_round_trip(RAFTFSM_RESTORE_INLINE);
}

static void test_snapshot_worker(void **state)
{
        (void)state;
        check_round_trip(RAFTFSM_RESTORE_THREAD);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_seed_once),
            cmocka_unit_test(test_set_remove),
            cmocka_unit_test(test_last_admin_kept),
            cmocka_unit_test(test_node_identities),
            cmocka_unit_test(test_encoding),
            cmocka_unit_test(test_command_round_trip),
            cmocka_unit_test(test_wire),
            cmocka_unit_test(test_lock_state_as_older),
            cmocka_unit_test(test_snapshot_inline),
            cmocka_unit_test(test_snapshot_worker),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
