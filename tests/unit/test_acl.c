/*
 * The replicated access list (src/fsm/acl.h): its rule table (the first
 * seed stands, set and remove need a table and keep an admin, node
 * identities get role none unless named), its rules on name prefixes
 * (who gets what on which names, what a listing by prefix reaches, set
 * and remove, the limits, the permissions' text), its encodings (format
 * 1 byte for byte without prefix rules, format 2 with them) and the ACL
 * command's, and its round trip through a snapshot of the server's state
 * machine, restored inline and on the worker (tests/lib/replica.h).
 *
 * Long because the table is one module with one encoding: its role rules,
 * prefix rules, limits and formats share the fixtures and golden bytes
 * here, and a split would repeat them.
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

/* --- Rules on name prefixes ---------------------------------------------- */

/* A RULE_SET (`perms` 1..7) or RULE_REMOVE (`perms` 0) of the rule of
 * `kind` for `subject` on `prefix`, whose table is written into `list`
 * (2 + ACL_PREFIX_LEN_MAX bytes). */
static struct command rule(uint8_t mode, uint8_t kind, const char *subject,
                           const char *prefix, uint8_t perms, uint8_t *list)
{
        struct command c = change(mode, subject, perms);
        size_t len = strlen(prefix);

        list[0] = kind;
        list[1] = (uint8_t)len;
        memcpy(list + 2, prefix, len);
        c.list = list;
        c.list_len = (uint16_t)(2 + len);
        return c;
}

/* Apply `c` to `a` as a replica does: encoded, decoded, applied. */
static int apply_encoded(struct acl *a, const struct command *c)
{
        static uint8_t buf[ACL_ENCODED_MAX + 64];
        struct command d;
        size_t len = command_encode(c, buf, sizeof buf);

        assert_true(len > 0);
        assert_int_equal(command_decode(&d, buf, len), 0);
        return acl_apply(a, &d);
}

/* Put rule (kind, subject, prefix) with `perms`, which must succeed. */
static void put_rule(struct acl *a, uint8_t kind, const char *subject,
                     const char *prefix, uint8_t perms)
{
        assert_int_equal(acl_rule_put(a, kind, subject, strlen(subject), prefix,
                                      strlen(prefix), perms),
                         0);
}

/* The permissions of `who` on the NUL-terminated `name`. */
static uint8_t perms_on(const struct acl *a, const struct acl_who *who,
                        const char *name)
{
        return acl_name_perms(a, who, name, strlen(name));
}

/* Whether `who` reaches the NUL-terminated `prefix` with `perm`. */
static bool reaches(const struct acl *a, const struct acl_who *who,
                    const char *prefix, uint8_t perm)
{
        return acl_prefix_reaches(a, who, prefix, strlen(prefix), perm);
}

/* A client's groups, from a literal of NUL-terminated names: its bytes
 * up to its last NUL. */
#define GROUPS(names) (names), sizeof(names) - 1

static const struct acl_who alice = {"alice", NULL, 0};
static const struct acl_who bob = {"bob", NULL, 0};

/* While a table has no rule on a prefix, or there is no table, every
 * name is open to everyone; the last rule's removal opens them again. */
static void test_names_open_without_rules(void **state)
{
        struct acl a;
        uint8_t list[2 + ACL_PREFIX_LEN_MAX];
        struct command c;

        (void)state;
        acl_init(&a);
        assert_false(acl_has_prefix_rules(&a));
        assert_int_equal(perms_on(&a, &alice, "team-a/x"), ACL_PERM_ALL);
        assert_true(reaches(&a, &alice, "", ACL_PERM_MANAGE));
        usual(&a);
        assert_false(acl_has_prefix_rules(&a));
        assert_int_equal(perms_on(&a, &alice, "team-a/x"), ACL_PERM_ALL);
        assert_int_equal(perms_on(&a, &bob, "anything"), ACL_PERM_ALL);
        assert_true(reaches(&a, &bob, "team-b/", ACL_PERM_LOCK));
        c = rule(COMMAND_ACL_RULE_SET, ACL_RULE_PREFIX, "alice", "team-a/",
                 ACL_PERM_LOCK, list);
        assert_int_equal(apply_encoded(&a, &c), 0);
        assert_true(acl_has_prefix_rules(&a));
        assert_int_equal(perms_on(&a, &bob, "anything"), 0);
        c = rule(COMMAND_ACL_RULE_REMOVE, ACL_RULE_PREFIX, "alice", "team-a/",
                 0, list);
        assert_int_equal(apply_encoded(&a, &c), 0);
        assert_false(acl_has_prefix_rules(&a));
        assert_int_equal(perms_on(&a, &bob, "anything"), ACL_PERM_ALL);
}

static void test_name_perms(void **state)
{
        const struct acl_who carol = {"carol", GROUPS("ops\0team-b\0")};
        const struct acl_who dave = {"dave", GROUPS("team-bb\0")};
        const struct acl_who erin = {"erin", GROUPS("team\0")};
        const struct acl_who alice_b = {"alice", GROUPS("team-b\0")};
        const struct acl_who named_group = {"team-b", NULL, 0};
        const struct acl_who frank = {"frank", GROUPS("auditors\0")};
        const struct acl_who mgr = {"mgr", NULL, 0};
        struct acl a;

        (void)state;
        usual(&a);
        put_rule(&a, ACL_RULE_PREFIX, "alice", "team-a/", ACL_PERM_LOCK);
        /* An identity's rule: lock (with read) under its prefix only. */
        assert_int_equal(perms_on(&a, &alice, "team-a/x"),
                         ACL_PERM_READ | ACL_PERM_LOCK);
        assert_int_equal(perms_on(&a, &alice, "team-a/"),
                         ACL_PERM_READ | ACL_PERM_LOCK);
        assert_int_equal(perms_on(&a, &alice, "team-b/x"), 0);
        assert_int_equal(perms_on(&a, &alice, "team-a"), 0);
        /* Shorter than the prefix, though the bytes after it would
         * continue it. */
        assert_int_equal(acl_name_perms(&a, &alice, "team-a/x", 6), 0);
        assert_int_equal(perms_on(&a, &alice, "xteam-a/x"), 0);
        assert_int_equal(perms_on(&a, &bob, "team-a/x"), 0);
        assert_int_equal(perms_on(&a, &bob, "team-b/x"), 0);
        assert_int_equal(perms_on(&a, &bob, "x"), 0);

        /* A group's rule reaches a member, wherever its group is in the
         * list, and not a group whose name only starts or is started by
         * the rule's. */
        put_rule(&a, ACL_RULE_GROUP_PREFIX, "team-b", "team-b/", ACL_PERM_READ);
        assert_int_equal(perms_on(&a, &carol, "team-b/x"), ACL_PERM_READ);
        assert_int_equal(perms_on(&a, &carol, "team-a/x"), 0);
        assert_int_equal(perms_on(&a, &dave, "team-b/x"), 0);
        assert_int_equal(perms_on(&a, &erin, "team-b/x"), 0);
        assert_int_equal(perms_on(&a, &bob, "team-b/x"), 0);
        /* A group's rule does not name an identity, nor an identity's a
         * group. */
        assert_int_equal(perms_on(&a, &named_group, "team-b/x"), 0);
        put_rule(&a, ACL_RULE_PREFIX, "ops", "ops/", ACL_PERM_LOCK);
        assert_int_equal(perms_on(&a, &carol, "ops/x"), 0);

        /* Rules add up: an identity's and its group's, on one name and
         * on names under each other. */
        assert_int_equal(perms_on(&a, &alice_b, "team-b/x"), ACL_PERM_READ);
        assert_int_equal(perms_on(&a, &alice_b, "team-a/x"),
                         ACL_PERM_READ | ACL_PERM_LOCK);
        put_rule(&a, ACL_RULE_GROUP_PREFIX, "team-b", "shared/",
                 ACL_PERM_MANAGE);
        put_rule(&a, ACL_RULE_PREFIX, "alice", "shared/", ACL_PERM_LOCK);
        assert_int_equal(perms_on(&a, &alice_b, "shared/x"), ACL_PERM_ALL);
        assert_int_equal(perms_on(&a, &alice, "shared/x"),
                         ACL_PERM_READ | ACL_PERM_LOCK);
        assert_int_equal(perms_on(&a, &carol, "shared/x"),
                         ACL_PERM_READ | ACL_PERM_MANAGE);
        put_rule(&a, ACL_RULE_PREFIX, "alice", "team-a/ro/", ACL_PERM_READ);
        put_rule(&a, ACL_RULE_PREFIX, "alice", "team-a/adm/", ACL_PERM_MANAGE);
        assert_int_equal(perms_on(&a, &alice, "team-a/ro/x"),
                         ACL_PERM_READ | ACL_PERM_LOCK);
        assert_int_equal(perms_on(&a, &alice, "team-a/adm/x"), ACL_PERM_ALL);

        /* Prefix "" covers every name. */
        put_rule(&a, ACL_RULE_GROUP_PREFIX, "auditors", "", ACL_PERM_READ);
        assert_int_equal(perms_on(&a, &frank, "x"), ACL_PERM_READ);
        assert_int_equal(perms_on(&a, &frank, "team-a/x"), ACL_PERM_READ);
        assert_int_equal(perms_on(&a, &frank, "\xc3\xa9t\xc3\xa9"),
                         ACL_PERM_READ);

        /* manage alone gives read and manage, not lock. */
        put_rule(&a, ACL_RULE_PREFIX, "mgr", "m/", ACL_PERM_MANAGE);
        assert_int_equal(perms_on(&a, &mgr, "m/x"),
                         ACL_PERM_READ | ACL_PERM_MANAGE);
        assert_int_equal(perms_on(&a, &mgr, "m/x") & ACL_PERM_LOCK, 0);
        assert_int_equal(perms_on(&a, &mgr, "n/x"), 0);
}

static void test_prefix_reaches(void **state)
{
        const struct acl_who carol = {"carol", GROUPS("ops\0team-b\0")};
        const struct acl_who dave = {"dave", GROUPS("team-bb\0")};
        struct acl a;

        (void)state;
        usual(&a);
        /* Open names: everyone reaches everything. */
        assert_true(reaches(&a, &bob, "", ACL_PERM_READ));
        assert_true(reaches(&a, &bob, "x/", ACL_PERM_MANAGE));
        put_rule(&a, ACL_RULE_PREFIX, "alice", "team-a/", ACL_PERM_LOCK);
        /* A listing of everything reaches alice's names... */
        assert_true(reaches(&a, &alice, "", ACL_PERM_READ));
        assert_true(reaches(&a, &alice, "", ACL_PERM_LOCK));
        /* ...as does one under her prefix or one that starts it... */
        assert_true(reaches(&a, &alice, "team-a/sub", ACL_PERM_READ));
        assert_true(reaches(&a, &alice, "team-a/", ACL_PERM_READ));
        assert_true(reaches(&a, &alice, "team-a", ACL_PERM_READ));
        assert_true(reaches(&a, &alice, "team", ACL_PERM_READ));
        assert_true(
            acl_prefix_reaches(&a, &alice, "team-b/", 4, ACL_PERM_READ));
        /* ...and not one beside it, or one that nobody gave bob. */
        assert_false(reaches(&a, &alice, "team-b/", ACL_PERM_READ));
        assert_false(reaches(&a, &alice, "team-ab", ACL_PERM_READ));
        assert_false(reaches(&a, &alice, "x", ACL_PERM_READ));
        assert_false(reaches(&a, &bob, "", ACL_PERM_READ));
        assert_false(reaches(&a, &bob, "team-a/", ACL_PERM_READ));
        /* The permission asked for must be the rule's. */
        assert_true(reaches(&a, &alice, "team-a/sub", ACL_PERM_LOCK));
        assert_false(reaches(&a, &alice, "team-a/sub", ACL_PERM_MANAGE));
        put_rule(&a, ACL_RULE_PREFIX, "alice", "ro/", ACL_PERM_READ);
        assert_true(reaches(&a, &alice, "ro/x", ACL_PERM_READ));
        assert_false(reaches(&a, &alice, "ro/x", ACL_PERM_LOCK));
        assert_false(reaches(&a, &alice, "r", ACL_PERM_LOCK));
        /* A group's rule reaches its members only. */
        put_rule(&a, ACL_RULE_GROUP_PREFIX, "team-b", "team-b/", ACL_PERM_READ);
        assert_true(reaches(&a, &carol, "", ACL_PERM_READ));
        assert_true(reaches(&a, &carol, "team-b/x", ACL_PERM_READ));
        assert_false(reaches(&a, &carol, "team-b/x", ACL_PERM_LOCK));
        assert_false(reaches(&a, &carol, "team-a/", ACL_PERM_READ));
        assert_false(reaches(&a, &dave, "", ACL_PERM_READ));
}

/* RULE_SET and RULE_REMOVE as a replica applies them. */
static void test_rule_apply(void **state)
{
        uint8_t list[2 + ACL_PREFIX_LEN_MAX];
        struct acl a, seed;
        struct command c;

        (void)state;
        acl_init(&a);
        c = rule(COMMAND_ACL_RULE_SET, ACL_RULE_PREFIX, "alice", "team-a/",
                 ACL_PERM_LOCK, list);
        assert_int_equal(apply_encoded(&a, &c), BATON_EBUSY); /* no table */
        c = rule(COMMAND_ACL_RULE_REMOVE, ACL_RULE_PREFIX, "alice", "team-a/",
                 0, list);
        assert_int_equal(apply_encoded(&a, &c), BATON_EBUSY);
        assert_false(a.seeded);
        assert_int_equal(a.n_prefix, 0);
        usual(&seed);
        c = seed_of(&seed);
        assert_int_equal(acl_apply(&a, &c), 0);

        /* lock given: read and lock stored. */
        c = rule(COMMAND_ACL_RULE_SET, ACL_RULE_PREFIX, "alice", "team-a/",
                 ACL_PERM_LOCK, list);
        assert_int_equal(apply_encoded(&a, &c), 0);
        assert_int_equal(a.n_prefix, 1);
        assert_int_equal(a.prefix[0].kind, ACL_RULE_PREFIX);
        assert_int_equal(a.prefix[0].perms, ACL_PERM_READ | ACL_PERM_LOCK);
        assert_string_equal(a.prefix[0].subject, "alice");
        assert_string_equal(a.prefix[0].prefix, "team-a/");
        /* The same rule again changes its permissions. */
        c = rule(COMMAND_ACL_RULE_SET, ACL_RULE_PREFIX, "alice", "team-a/",
                 ACL_PERM_MANAGE, list);
        assert_int_equal(apply_encoded(&a, &c), 0);
        assert_int_equal(a.n_prefix, 1);
        assert_int_equal(a.prefix[0].perms, ACL_PERM_READ | ACL_PERM_MANAGE);
        c = rule(COMMAND_ACL_RULE_SET, ACL_RULE_PREFIX, "alice", "team-a/",
                 ACL_PERM_READ, list);
        assert_int_equal(apply_encoded(&a, &c), 0);
        assert_int_equal(a.n_prefix, 1);
        assert_int_equal(a.prefix[0].perms, ACL_PERM_READ);
        /* Another prefix, or a group of the same name, is another rule. */
        c = rule(COMMAND_ACL_RULE_SET, ACL_RULE_PREFIX, "alice", "team-a",
                 ACL_PERM_ALL, list);
        assert_int_equal(apply_encoded(&a, &c), 0);
        c = rule(COMMAND_ACL_RULE_SET, ACL_RULE_GROUP_PREFIX, "alice",
                 "team-a/", ACL_PERM_LOCK, list);
        assert_int_equal(apply_encoded(&a, &c), 0);
        assert_int_equal(a.n_prefix, 3);
        /* The identities' rules are another list. */
        assert_int_equal(a.n, 2);
        assert_int_equal(acl_role(&a, "alice", NULL), ACL_LOCK);

        /* Removes: the rule of that kind, subject and prefix only. */
        c = rule(COMMAND_ACL_RULE_REMOVE, ACL_RULE_PREFIX, "alice", "team-a/",
                 0, list);
        assert_int_equal(apply_encoded(&a, &c), 0);
        assert_int_equal(a.n_prefix, 2);
        assert_int_equal(apply_encoded(&a, &c), BATON_ENOTFOUND);
        assert_int_equal(a.n_prefix, 2);
        c = rule(COMMAND_ACL_RULE_REMOVE, ACL_RULE_PREFIX, "alice", "team-a/x",
                 0, list);
        assert_int_equal(apply_encoded(&a, &c), BATON_ENOTFOUND);
        c = rule(COMMAND_ACL_RULE_REMOVE, ACL_RULE_PREFIX, "alic", "team-a", 0,
                 list);
        assert_int_equal(apply_encoded(&a, &c), BATON_ENOTFOUND);
        assert_int_equal(a.n_prefix, 2);
        c = rule(COMMAND_ACL_RULE_REMOVE, ACL_RULE_GROUP_PREFIX, "alice",
                 "team-a/", 0, list);
        assert_int_equal(apply_encoded(&a, &c), 0);
        assert_int_equal(a.n_prefix, 1);
        assert_int_equal(a.prefix[0].kind, ACL_RULE_PREFIX);
        assert_string_equal(a.prefix[0].prefix, "team-a");
        assert_int_equal(a.prefix[0].perms, ACL_PERM_ALL);
        assert_int_equal(a.n, 2);
}

/* Bad rules are refused and change nothing, put or applied. */
static void test_rule_refused(void **state)
{
        char long_text[ACL_IDENTITY_MAX + 2];
        uint8_t list[2 + ACL_PREFIX_LEN_MAX];
        struct acl a, before;
        struct command c;

        (void)state;
        usual(&a);
        put_rule(&a, ACL_RULE_GROUP_PREFIX, "team-b", "team-b/", ACL_PERM_READ);
        before = a;
        memset(long_text, 'x', sizeof long_text);
        /* Kinds: an identity's role is not a prefix rule. */
        assert_int_equal(acl_rule_put(&a, ACL_RULE_IDENTITY, "alice", 5, "a/",
                                      2, ACL_PERM_READ),
                         BATON_EINVAL);
        assert_int_equal(
            acl_rule_put(&a, 3, "alice", 5, "a/", 2, ACL_PERM_READ),
            BATON_EINVAL);
        /* Subjects: empty, with a NUL, too long, none. */
        assert_int_equal(
            acl_rule_put(&a, ACL_RULE_PREFIX, "", 0, "a/", 2, ACL_PERM_READ),
            BATON_EINVAL);
        assert_int_equal(acl_rule_put(&a, ACL_RULE_PREFIX, "al\0ce", 5, "a/", 2,
                                      ACL_PERM_READ),
                         BATON_EINVAL);
        assert_int_equal(acl_rule_put(&a, ACL_RULE_PREFIX, long_text,
                                      ACL_IDENTITY_MAX + 1, "a/", 2,
                                      ACL_PERM_READ),
                         BATON_EINVAL);
        assert_int_equal(
            acl_rule_put(&a, ACL_RULE_PREFIX, NULL, 5, "a/", 2, ACL_PERM_READ),
            BATON_EINVAL);
        /* Prefixes: too long, with a NUL. */
        assert_int_equal(acl_rule_put(&a, ACL_RULE_PREFIX, "alice", 5,
                                      long_text, ACL_PREFIX_LEN_MAX + 1,
                                      ACL_PERM_READ),
                         BATON_EINVAL);
        assert_int_equal(acl_rule_put(&a, ACL_RULE_PREFIX, "alice", 5, "te\0m/",
                                      5, ACL_PERM_READ),
                         BATON_EINVAL);
        assert_int_equal(acl_rule_put(&a, ACL_RULE_PREFIX, "alice", 5, NULL, 2,
                                      ACL_PERM_READ),
                         BATON_EINVAL);
        /* Permissions: none, or a bit that is none of them. */
        assert_int_equal(
            acl_rule_put(&a, ACL_RULE_PREFIX, "alice", 5, "a/", 2, 0),
            BATON_EINVAL);
        assert_int_equal(
            acl_rule_put(&a, ACL_RULE_PREFIX, "alice", 5, "a/", 2, 8),
            BATON_EINVAL);
        assert_int_equal(
            acl_rule_put(&a, ACL_RULE_PREFIX, "alice", 5, "a/", 2, 0xff),
            BATON_EINVAL);
        /* Nor does a bad change of an existing rule touch it. */
        assert_int_equal(acl_rule_put(&a, ACL_RULE_GROUP_PREFIX, "team-b", 6,
                                      "team-b/", 7, 8),
                         BATON_EINVAL);
        assert_true(acl_equal(&a, &before));
        /* The same through acl_apply (commands no decode would let by). */
        c = rule(COMMAND_ACL_RULE_SET, 3, "alice", "a/", ACL_PERM_READ, list);
        assert_int_equal(acl_apply(&a, &c), BATON_EINVAL);
        c = rule(COMMAND_ACL_RULE_SET, ACL_RULE_PREFIX, "alice", "a/", 8, list);
        assert_int_equal(acl_apply(&a, &c), BATON_EINVAL);
        c = rule(COMMAND_ACL_RULE_SET, ACL_RULE_PREFIX, "alice", "a/", 0, list);
        assert_int_equal(acl_apply(&a, &c), BATON_EINVAL);
        c = rule(COMMAND_ACL_RULE_SET, ACL_RULE_PREFIX, "", "a/", ACL_PERM_READ,
                 list);
        assert_int_equal(acl_apply(&a, &c), BATON_EINVAL);
        c = rule(COMMAND_ACL_RULE_SET, ACL_RULE_PREFIX, "alice", "te-m/",
                 ACL_PERM_READ, list);
        list[4] = '\0';
        assert_int_equal(acl_apply(&a, &c), BATON_EINVAL);
        assert_true(acl_equal(&a, &before));
        /* The longest subject and prefix are fine. */
        assert_int_equal(acl_rule_put(&a, ACL_RULE_PREFIX, long_text,
                                      ACL_IDENTITY_MAX, long_text,
                                      ACL_PREFIX_LEN_MAX, ACL_PERM_READ),
                         0);
        assert_int_equal(a.n_prefix, 2);
}

/* Full at ACL_PREFIX_MAX rules: a new rule is refused, a change of one
 * is not. */
static void test_rules_full_by_count(void **state)
{
        uint8_t buf[ACL_ENCODED_MAX];
        struct acl *a = malloc(sizeof *a);
        struct acl *before = malloc(sizeof *before);
        char subject[16];
        size_t len;
        unsigned i;

        (void)state;
        assert_non_null(a);
        assert_non_null(before);
        usual(a);
        for (i = 0; i < ACL_PREFIX_MAX; i++) {
                snprintf(subject, sizeof subject, "s%03u", i);
                put_rule(a, ACL_RULE_PREFIX, subject, "p/", ACL_PERM_READ);
        }
        assert_int_equal(a->n_prefix, ACL_PREFIX_MAX);
        *before = *a;
        assert_int_equal(
            acl_rule_put(a, ACL_RULE_PREFIX, "s999", 4, "p/", 2, ACL_PERM_READ),
            BATON_EINVAL);
        assert_int_equal(
            acl_rule_put(a, ACL_RULE_PREFIX, "s000", 4, "q/", 2, ACL_PERM_READ),
            BATON_EINVAL);
        assert_true(acl_equal(a, before));
        put_rule(a, ACL_RULE_PREFIX, "s000", "p/", ACL_PERM_LOCK);
        assert_int_equal(a->n_prefix, ACL_PREFIX_MAX);
        assert_int_equal(a->prefix[0].perms, ACL_PERM_READ | ACL_PERM_LOCK);
        /* It encodes and decodes whole; one rule more does not decode. */
        len = acl_encode(a, buf, sizeof buf);
        assert_true(len <= ACL_ENCODED_LIMIT);
        assert_int_equal(acl_decode(before, buf, len), 0);
        assert_true(acl_equal(a, before));
        {
                const uint8_t more[] = {ACL_RULE_PREFIX,
                                        ACL_PERM_READ,
                                        4,
                                        's',
                                        '9',
                                        '9',
                                        '9',
                                        2,
                                        'p',
                                        '/'};
                size_t at = len - 10 * ACL_PREFIX_MAX - 2;
                assert_int_equal(buf[at] | buf[at + 1] << 8, ACL_PREFIX_MAX);
                buf[at] = (ACL_PREFIX_MAX + 1) & 0xff;
                buf[at + 1] = (ACL_PREFIX_MAX + 1) >> 8;
                memcpy(buf + len, more, sizeof more);
                assert_int_equal(acl_decode(before, buf, len + sizeof more),
                                 BATON_ECORRUPT);
        }
        free(a);
        free(before);
}

/* Rule `i` of the longest subject and prefix, unlike any other. */
static void longest(unsigned i, char *text)
{
        memset(text, 'a' + (int)(i % 26), ACL_IDENTITY_MAX);
        text[0] = (char)('A' + (int)(i / 26));
        text[1] = (char)('a' + (int)(i % 26));
        text[ACL_IDENTITY_MAX] = '\0';
}

/* The bytes of a prefix rule of the longest subject and prefix. */
#define LONGEST_RULE (4 + ACL_IDENTITY_MAX + ACL_PREFIX_LEN_MAX)

/* Start `a` (admin default, no identities) with as many rules of the
 * longest subject and prefix as fit: 116 of 514 bytes, after the 5 bytes
 * of the header and the 2 of the rules' count. Returns its length. */
static size_t fill_longest(struct acl *a)
{
        char text[ACL_IDENTITY_MAX + 1];
        size_t len;
        unsigned i = 0;

        acl_start(a, ACL_ADMIN);
        for (;;) {
                longest(i, text);
                if (acl_rule_put(a, ACL_RULE_PREFIX, text, ACL_IDENTITY_MAX,
                                 text, ACL_PREFIX_LEN_MAX,
                                 ACL_PERM_READ) != 0) {
                        break;
                }
                i++;
        }
        assert_int_equal(i, (ACL_ENCODED_LIMIT - 7) / LONGEST_RULE);
        assert_int_equal(a->n_prefix, i);
        len = acl_encode(a, NULL, 0);
        assert_int_equal(len, 7 + i * LONGEST_RULE);
        return len;
}

/* Full at ACL_ENCODED_LIMIT bytes: a rule that would pass it is refused,
 * one that meets it exactly is not, and the table still travels in one
 * seed. */
static void test_rules_full_by_bytes(void **state)
{
        static uint8_t buf[ACL_ENCODED_MAX + 64];
        struct acl *a = malloc(sizeof *a);
        struct acl *before = malloc(sizeof *before);
        char text[ACL_IDENTITY_MAX + 1];
        size_t len, room, rest;
        struct command c;

        (void)state;
        assert_non_null(a);
        assert_non_null(before);
        len = fill_longest(a);
        /* What is left: a rule of the longest subject and a prefix of
         * `rest` bytes. */
        room = ACL_ENCODED_LIMIT - len;
        assert_true(room >= 4 + ACL_IDENTITY_MAX && room < LONGEST_RULE);
        rest = room - 4 - ACL_IDENTITY_MAX;
        *before = *a;
        /* One byte too many... */
        memset(text, 'z', sizeof text);
        assert_int_equal(acl_rule_put(a, ACL_RULE_PREFIX, text,
                                      ACL_IDENTITY_MAX, text, rest + 1,
                                      ACL_PERM_READ),
                         BATON_EINVAL);
        assert_true(acl_equal(a, before));
        /* ...and exactly what fits. */
        assert_int_equal(acl_rule_put(a, ACL_RULE_PREFIX, text,
                                      ACL_IDENTITY_MAX, text, rest,
                                      ACL_PERM_READ),
                         0);
        assert_int_equal(acl_encode(a, NULL, 0), ACL_ENCODED_LIMIT);
        *before = *a;
        assert_int_equal(acl_rule_put(a, ACL_RULE_GROUP_PREFIX, "g", 1, "", 0,
                                      ACL_PERM_READ),
                         BATON_EINVAL);
        /* Nor does an identity's rule get in. */
        assert_int_equal(acl_put(a, "late", 4, ACL_READ), BATON_EINVAL);
        c = change(COMMAND_ACL_SET, "late", ACL_READ);
        assert_int_equal(apply_encoded(a, &c), BATON_EINVAL);
        assert_true(acl_equal(a, before));
        /* A full table's rules still change. */
        longest(0, text);
        assert_int_equal(acl_rule_put(a, ACL_RULE_PREFIX, text,
                                      ACL_IDENTITY_MAX, text,
                                      ACL_PREFIX_LEN_MAX, ACL_PERM_ALL),
                         0);
        assert_int_equal(acl_encode(a, NULL, 0), ACL_ENCODED_LIMIT);
        /* The full table is one seed. */
        c = seed_of(a);
        assert_int_equal(c.list_len, ACL_ENCODED_LIMIT);
        len = command_encode(&c, buf, sizeof buf);
        assert_true(len > 0);
        assert_int_equal(command_decode(&c, buf, len), 0);
        acl_init(before);
        assert_int_equal(acl_apply(before, &c), 0);
        assert_true(acl_equal(a, before));
        free(a);
        free(before);
}

/* Identities' rules count against ACL_ENCODED_LIMIT too: past it, the
 * table would not decode, so a replica could load neither its seed nor
 * a snapshot of it. */
static void test_identities_full_by_bytes(void **state)
{
        static uint8_t buf[ACL_ENCODED_MAX + 1024];
        struct acl *a = malloc(sizeof *a);
        struct acl *b = malloc(sizeof *b);
        char id[ACL_IDENTITY_MAX + 1];
        size_t room, len;
        struct command c;

        (void)state;
        assert_non_null(a);
        assert_non_null(b);
        room = ACL_ENCODED_LIMIT - fill_longest(a);
        /* Room for one identity of the longest and a shorter one. */
        assert_true(room > 2 * 3 + ACL_IDENTITY_MAX &&
                    room < 2 * (3 + ACL_IDENTITY_MAX));
        memset(id, 'i', sizeof id);
        assert_int_equal(acl_put(a, id, ACL_IDENTITY_MAX, ACL_LOCK), 0);
        room -= 3 + ACL_IDENTITY_MAX;
        *b = *a;
        /* One byte too many, by a SET or a seed's acl_put()... */
        memset(id, 'j', sizeof id);
        id[room - 3 + 1] = '\0';
        c = change(COMMAND_ACL_SET, id, ACL_READ);
        assert_int_equal(apply_encoded(a, &c), BATON_EINVAL);
        assert_int_equal(acl_put(a, id, room - 3 + 1, ACL_READ), BATON_EINVAL);
        assert_true(acl_equal(a, b));
        /* ...and exactly what fits. */
        id[room - 3] = '\0';
        c = change(COMMAND_ACL_SET, id, ACL_READ);
        assert_int_equal(apply_encoded(a, &c), 0);
        len = acl_encode(a, buf, sizeof buf);
        assert_int_equal(len, ACL_ENCODED_LIMIT);
        assert_int_equal(acl_decode(b, buf, len), 0);
        assert_true(acl_equal(a, b));
        /* Full: a role still changes, a new identity does not get in. */
        c = change(COMMAND_ACL_SET, id, ACL_ADMIN);
        assert_int_equal(apply_encoded(a, &c), 0);
        c = change(COMMAND_ACL_SET, "k", ACL_READ);
        assert_int_equal(apply_encoded(a, &c), BATON_EINVAL);
        assert_int_equal(acl_encode(a, NULL, 0), ACL_ENCODED_LIMIT);
        free(a);
        free(b);
}

/* The encoding of the usual table (admin admin, reader read, default
 * lock), as a release before prefix rules writes it. */
static const uint8_t usual_format1[] = {
    1, 2, 2, 0,   0, /* format, default lock, 2 rules, reserved */
    0, 3, 5, 'a', 'd', 'm', 'i', 'n',      /* admin: admin */
    0, 1, 6, 'r', 'e', 'a', 'd', 'e', 'r', /* reader: read */
};

/* The usual table with bob's lock on "b/" and group ops' read on "". */
static const uint8_t usual_format2[] = {
    2, 2, 2, 0,   0,                       /* format 2 */
    0, 3, 5, 'a', 'd', 'm', 'i', 'n',      /* admin: admin */
    0, 1, 6, 'r', 'e', 'a', 'd', 'e', 'r', /* reader: read */
    2, 0,                                  /* 2 prefix rules */
    1, 3, 3, 'b', 'o', 'b', 2,   'b', '/', /* bob: lock on b/ */
    2, 1, 3, 'o', 'p', 's', 0,             /* group ops: read */
};

static void test_encoding_formats(void **state)
{
        uint8_t buf[ACL_ENCODED_MAX], list[2 + ACL_PREFIX_LEN_MAX];
        struct acl a, b;
        struct command c;
        size_t len;

        (void)state;
        /* Without prefix rules: format 1, byte for byte. */
        usual(&a);
        len = acl_encode(&a, buf, sizeof buf);
        assert_int_equal(len, sizeof usual_format1);
        assert_memory_equal(buf, usual_format1, len);
        acl_start(&b, ACL_ADMIN);
        len = acl_encode(&b, buf, sizeof buf);
        assert_int_equal(len, 5);
        assert_memory_equal(buf, "\x01\x03\x00\x00\x00", 5);
        /* With them: format 2; without them again: format 1. */
        put_rule(&a, ACL_RULE_GROUP_PREFIX, "ops", "", ACL_PERM_READ);
        put_rule(&a, ACL_RULE_PREFIX, "bob", "b/", ACL_PERM_LOCK);
        len = acl_encode(&a, buf, sizeof buf);
        assert_int_equal(len, sizeof usual_format2);
        assert_memory_equal(buf, usual_format2, len);
        assert_int_equal(acl_encode(&a, NULL, 0), len);
        assert_int_equal(acl_decode(&b, buf, len), 0);
        assert_true(acl_equal(&a, &b));
        assert_int_equal(acl_decode(&b, usual_format2, sizeof usual_format2),
                         0);
        assert_true(acl_equal(&a, &b));
        assert_int_equal(acl_decode(&b, usual_format1, sizeof usual_format1),
                         0);
        assert_false(acl_equal(&a, &b));
        assert_int_equal(
            acl_rule_put(&b, ACL_RULE_PREFIX, "bob", 3, "b/", 2, ACL_PERM_LOCK),
            0);
        assert_false(acl_equal(&a, &b)); /* ops' rule is missing */
        assert_int_equal(acl_rule_put(&b, ACL_RULE_GROUP_PREFIX, "ops", 3, "",
                                      0, ACL_PERM_ALL),
                         0);
        assert_false(acl_equal(&a, &b)); /* ops' permissions differ */
        assert_int_equal(acl_rule_put(&b, ACL_RULE_GROUP_PREFIX, "ops", 3, "",
                                      0, ACL_PERM_READ),
                         0);
        assert_true(acl_equal(&a, &b));
        c = rule(COMMAND_ACL_RULE_REMOVE, ACL_RULE_PREFIX, "bob", "b/", 0,
                 list);
        assert_int_equal(apply_encoded(&a, &c), 0);
        len = acl_encode(&a, buf, sizeof buf);
        assert_int_equal(buf[0], 2);
        c = rule(COMMAND_ACL_RULE_REMOVE, ACL_RULE_GROUP_PREFIX, "ops", "", 0,
                 list);
        assert_int_equal(apply_encoded(&a, &c), 0);
        len = acl_encode(&a, buf, sizeof buf);
        assert_int_equal(len, sizeof usual_format1);
        assert_memory_equal(buf, usual_format1, len);
}

/* Whatever order rules come in, the table and its bytes are one. */
static void test_rules_sorted(void **state)
{
        static const struct {
                uint8_t kind;
                const char *subject, *prefix;
        } sorted[] = {
            {ACL_RULE_PREFIX, "a", ""},
            {ACL_RULE_PREFIX, "a", "a"},
            {ACL_RULE_PREFIX, "a", "a/"},
            {ACL_RULE_PREFIX, "a", "b"},
            {ACL_RULE_PREFIX, "a", "\xc3\xa9"},
            {ACL_RULE_PREFIX, "ab", ""},
            {ACL_RULE_PREFIX, "b", "a"},
            {ACL_RULE_PREFIX, "z", "a"},
            {ACL_RULE_PREFIX, "\xc3\xa9", "a"},
            {ACL_RULE_GROUP_PREFIX, "a", "x"},
            {ACL_RULE_GROUP_PREFIX, "b", ""},
        };
        enum { N = sizeof sorted / sizeof sorted[0] };
        static const unsigned orders[][N] = {
            {10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0},
            {5, 0, 10, 3, 8, 1, 6, 9, 2, 7, 4},
            {9, 1, 3, 5, 7, 0, 2, 4, 6, 8, 10},
        };
        uint8_t first[512], buf[512];
        size_t first_len = 0, len;
        struct acl a, b;
        unsigned k, i;

        (void)state;
        for (k = 0; k < sizeof orders / sizeof orders[0]; k++) {
                usual(&a);
                for (i = 0; i < N; i++) {
                        unsigned j = orders[k][i];
                        put_rule(&a, sorted[j].kind, sorted[j].subject,
                                 sorted[j].prefix, ACL_PERM_READ);
                }
                assert_int_equal(a.n_prefix, N);
                for (i = 0; i < N; i++) {
                        assert_int_equal(a.prefix[i].kind, sorted[i].kind);
                        assert_string_equal(a.prefix[i].subject,
                                            sorted[i].subject);
                        assert_string_equal(a.prefix[i].prefix,
                                            sorted[i].prefix);
                }
                len = acl_encode(&a, buf, sizeof buf);
                assert_true(len < sizeof buf);
                if (k == 0) {
                        memcpy(first, buf, len);
                        first_len = len;
                        b = a;
                }
                assert_int_equal(len, first_len);
                assert_memory_equal(buf, first, len);
                assert_true(acl_equal(&a, &b));
        }
        /* Each rule is still found where it is, to change or remove. */
        for (i = 0; i < N; i++) {
                uint8_t list[2 + ACL_PREFIX_LEN_MAX];
                struct command c =
                    rule(COMMAND_ACL_RULE_REMOVE, sorted[i].kind,
                         sorted[i].subject, sorted[i].prefix, 0, list);
                assert_int_equal(apply_encoded(&a, &c), 0);
        }
        assert_int_equal(a.n_prefix, 0);
}

/* Decode `bytes` with one byte at `at` set to `value`. */
static int decode_with(const uint8_t *bytes, size_t len, size_t at,
                       uint8_t value)
{
        uint8_t buf[256];
        struct acl a;

        assert_true(len <= sizeof buf && at < len);
        memcpy(buf, bytes, len);
        buf[at] = value;
        return acl_decode(&a, buf, len);
}

/* Format 2 is read as acl_rule_put() builds it, and nothing else. */
static void test_decode_format2_refused(void **state)
{
        /* alice: read on a/ and on b/, in order. */
        static const uint8_t two[] = {
            2, 3, 0, 0,   0, /* format 2, default admin, no identities */
            2, 0,            /* 2 prefix rules */
            1, 1, 5, 'a', 'l', 'i', 'c', 'e', 2, 'a', '/',
            1, 1, 5, 'a', 'l', 'i', 'c', 'e', 2, 'b', '/',
        };
        static const uint8_t swapped[] = {
            2, 3, 0, 0,   0,   2,   0,                     /* as `two`... */
            1, 1, 5, 'a', 'l', 'i', 'c', 'e', 2, 'b', '/', /* ...b/ first */
            1, 1, 5, 'a', 'l', 'i', 'c', 'e', 2, 'a', '/',
        };
        static const uint8_t twice[] = {
            2, 3, 0, 0,   0,   2,   0,                     /* as `two`... */
            1, 1, 5, 'a', 'l', 'i', 'c', 'e', 2, 'a', '/', /* ...a/ twice */
            1, 3, 5, 'a', 'l', 'i', 'c', 'e', 2, 'a', '/',
        };
        static const uint8_t kinds_swapped[] = {
            2, 3, 0, 0,   0,   2,   0, /* two rules */
            2, 1, 3, 'o', 'p', 's', 0, /* group ops: read on ""... */
            1, 1, 3, 'b', 'o', 'b', 0, /* ...before an identity's */
        };
        static const uint8_t none[] = {2, 3, 0, 0, 0, 0, 0};
        static const uint8_t no_subject[] = {
            2, 3, 0, 0, 0,   1,   0, /* one rule */
            1, 1, 0, 2, 'a', '/',    /* "": read on a/ */
        };
        const size_t perms_at = 8, kind_at = 7;
        uint8_t buf[256];
        struct acl a, b;

        (void)state;
        assert_int_equal(acl_decode(&a, two, sizeof two), 0);
        assert_int_equal(a.n_prefix, 2);
        assert_int_equal(a.n, 0);
        assert_int_equal(a.default_role, ACL_ADMIN);
        b = a;
        /* Out of order, twice the same rule, no rule in its section. */
        assert_int_equal(acl_decode(&a, swapped, sizeof swapped),
                         BATON_ECORRUPT);
        assert_int_equal(acl_decode(&a, twice, sizeof twice), BATON_ECORRUPT);
        assert_int_equal(acl_decode(&a, kinds_swapped, sizeof kinds_swapped),
                         BATON_ECORRUPT);
        assert_int_equal(acl_decode(&a, none, sizeof none), BATON_ECORRUPT);
        /* Permissions without read, or past the three; bad kinds; an
         * empty subject. */
        assert_int_equal(decode_with(two, sizeof two, perms_at, 0),
                         BATON_ECORRUPT);
        assert_int_equal(decode_with(two, sizeof two, perms_at, ACL_PERM_LOCK),
                         BATON_ECORRUPT);
        assert_int_equal(
            decode_with(two, sizeof two, perms_at, ACL_PERM_MANAGE),
            BATON_ECORRUPT);
        assert_int_equal(decode_with(two, sizeof two, perms_at, 9),
                         BATON_ECORRUPT);
        assert_int_equal(decode_with(two, sizeof two, perms_at, ACL_PERM_ALL),
                         0);
        assert_int_equal(decode_with(two, sizeof two, kind_at, 0),
                         BATON_ECORRUPT);
        assert_int_equal(decode_with(two, sizeof two, kind_at, 3),
                         BATON_ECORRUPT);
        assert_int_equal(acl_decode(&a, no_subject, sizeof no_subject),
                         BATON_ECORRUPT);
        /* Trailing bytes, a short table, formats. */
        memcpy(buf, two, sizeof two);
        buf[sizeof two] = 0;
        assert_int_equal(acl_decode(&a, buf, sizeof two + 1), BATON_ECORRUPT);
        assert_int_equal(acl_decode(&a, two, sizeof two - 1), BATON_ECORRUPT);
        assert_int_equal(acl_decode(&a, two, 5), BATON_ECORRUPT);
        assert_int_equal(decode_with(two, sizeof two, 0, 1), BATON_ECORRUPT);
        assert_int_equal(decode_with(two, sizeof two, 0, 0), BATON_ECORRUPT);
        /* Format 3 needs its quotas after the prefix rules. */
        assert_int_equal(decode_with(two, sizeof two, 0, 3), BATON_ECORRUPT);
        assert_int_equal(decode_with(two, sizeof two, 0, 4), BATON_EVERSION);
        assert_int_equal(decode_with(usual_format1, sizeof usual_format1, 0, 4),
                         BATON_EVERSION);
        /* Format 1 has no section to add to. */
        memcpy(buf, usual_format1, sizeof usual_format1);
        memcpy(buf + sizeof usual_format1, two + 5, sizeof two - 5);
        assert_int_equal(
            acl_decode(&a, buf, sizeof usual_format1 + sizeof two - 5),
            BATON_ECORRUPT);
        assert_true(acl_equal(&a, &b)); /* unchanged by each refusal */
}

static void test_perms_text(void **state)
{
        static const char *const bad[] = {
            "",      "write", "lock,", ",lock",       "lock,,read",
            "Lock",  "lock ", " lock", "lock manage", ",",
            "read,", "locks", "loc",
        };
        char buf[24];
        uint8_t p;
        unsigned i;

        (void)state;
        assert_int_equal(acl_perms_parse("read", &p), 0);
        assert_int_equal(p, ACL_PERM_READ);
        assert_int_equal(acl_perms_parse("lock", &p), 0);
        assert_int_equal(p, ACL_PERM_READ | ACL_PERM_LOCK);
        assert_int_equal(acl_perms_parse("manage", &p), 0);
        assert_int_equal(p, ACL_PERM_READ | ACL_PERM_MANAGE);
        assert_int_equal(acl_perms_parse("lock,manage", &p), 0);
        assert_int_equal(p, ACL_PERM_ALL);
        assert_int_equal(acl_perms_parse("manage,lock", &p), 0);
        assert_int_equal(p, ACL_PERM_ALL);
        assert_int_equal(acl_perms_parse("read,lock", &p), 0);
        assert_int_equal(p, ACL_PERM_READ | ACL_PERM_LOCK);
        assert_int_equal(acl_perms_parse("read,lock,manage", &p), 0);
        assert_int_equal(p, ACL_PERM_ALL);
        for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
                p = 42;
                assert_int_equal(acl_perms_parse(bad[i], &p), BATON_EINVAL);
                assert_int_equal(p, 42);
        }
        assert_int_equal(acl_perms_parse(NULL, &p), BATON_EINVAL);
        assert_string_equal(acl_perms_name(1, buf, sizeof buf), "read");
        assert_string_equal(acl_perms_name(3, buf, sizeof buf), "lock");
        assert_string_equal(acl_perms_name(5, buf, sizeof buf), "manage");
        assert_string_equal(acl_perms_name(7, buf, sizeof buf), "lock,manage");
        /* Each name parses back to what a rule stores. */
        for (i = 1; i <= ACL_PERM_ALL; i++) {
                assert_int_equal(
                    acl_perms_parse(acl_perms_name((uint8_t)i, buf, sizeof buf),
                                    &p),
                    0);
                assert_int_equal(p, i | ACL_PERM_READ);
        }
}

/* A change of an identity's role keeps an admin unless the default is
 * one; it is decided before anything moves. */
static void test_last_admin_cases(void **state)
{
        uint8_t list[2 + ACL_PREFIX_LEN_MAX];
        struct acl a, before;
        struct command c;

        (void)state;
        /* The last admin may be set to admin again, not to less. */
        usual(&a);
        put_rule(&a, ACL_RULE_PREFIX, "admin", "", ACL_PERM_ALL);
        before = a;
        c = change(COMMAND_ACL_SET, "admin", ACL_READ);
        assert_int_equal(apply_encoded(&a, &c), BATON_EINVAL);
        c = change(COMMAND_ACL_SET, "admin", ACL_NONE);
        assert_int_equal(apply_encoded(&a, &c), BATON_EINVAL);
        c = change(COMMAND_ACL_SET, "admin", ACL_LOCK);
        assert_int_equal(apply_encoded(&a, &c), BATON_EINVAL);
        c = change(COMMAND_ACL_REMOVE, "admin", 0);
        assert_int_equal(apply_encoded(&a, &c), BATON_EINVAL);
        assert_true(acl_equal(&a, &before));
        c = change(COMMAND_ACL_SET, "admin", ACL_ADMIN);
        assert_int_equal(apply_encoded(&a, &c), 0);
        assert_true(acl_equal(&a, &before));
        /* Others' roles change freely. */
        c = change(COMMAND_ACL_SET, "reader", ACL_NONE);
        assert_int_equal(apply_encoded(&a, &c), 0);
        c = change(COMMAND_ACL_REMOVE, "reader", 0);
        assert_int_equal(apply_encoded(&a, &c), 0);
        /* A rule on every name with manage is not admin. */
        c = change(COMMAND_ACL_REMOVE, "admin", 0);
        assert_int_equal(apply_encoded(&a, &c), BATON_EINVAL);
        c = rule(COMMAND_ACL_RULE_REMOVE, ACL_RULE_PREFIX, "admin", "", 0,
                 list);
        assert_int_equal(apply_encoded(&a, &c), 0);

        /* Of two admins, one may go, then the other may not. */
        usual(&a);
        c = change(COMMAND_ACL_SET, "ops", ACL_ADMIN);
        assert_int_equal(apply_encoded(&a, &c), 0);
        c = change(COMMAND_ACL_SET, "admin", ACL_LOCK);
        assert_int_equal(apply_encoded(&a, &c), 0);
        assert_int_equal(acl_role(&a, "admin", NULL), ACL_LOCK);
        c = change(COMMAND_ACL_REMOVE, "ops", 0);
        assert_int_equal(apply_encoded(&a, &c), BATON_EINVAL);
        c = change(COMMAND_ACL_SET, "ops", ACL_READ);
        assert_int_equal(apply_encoded(&a, &c), BATON_EINVAL);
        assert_int_equal(acl_role(&a, "ops", NULL), ACL_ADMIN);

        /* With an admin default, the last admin rule may go. */
        acl_start(&a, ACL_ADMIN);
        assert_int_equal(acl_put(&a, "admin", 5, ACL_ADMIN), 0);
        c = change(COMMAND_ACL_SET, "admin", ACL_READ);
        assert_int_equal(apply_encoded(&a, &c), 0);
        c = change(COMMAND_ACL_SET, "admin", ACL_ADMIN);
        assert_int_equal(apply_encoded(&a, &c), 0);
        c = change(COMMAND_ACL_REMOVE, "admin", 0);
        assert_int_equal(apply_encoded(&a, &c), 0);
        assert_int_equal(a.n, 0);

        /* A table that gave nobody admin takes any change. */
        acl_start(&a, ACL_LOCK);
        assert_int_equal(acl_put(&a, "reader", 6, ACL_READ), 0);
        c = change(COMMAND_ACL_SET, "reader", ACL_NONE);
        assert_int_equal(apply_encoded(&a, &c), 0);
        c = change(COMMAND_ACL_REMOVE, "reader", 0);
        assert_int_equal(apply_encoded(&a, &c), 0);
        assert_int_equal(a.n, 0);
}

/* Write an ACL command as put_acl() does, with no check: `list` of
 * `list_len` bytes. Returns its length. */
static size_t raw_acl(uint8_t *buf, uint8_t mode, uint8_t role,
                      const char *name, size_t name_len, const uint8_t *list,
                      size_t list_len)
{
        size_t at = 0;

        buf[at++] = 3; /* version */
        buf[at++] = COMMAND_ACL;
        buf[at++] = 0;
        buf[at++] = 0;
        buf[at++] = mode;
        buf[at++] = role;
        buf[at++] = (uint8_t)name_len;
        memcpy(buf + at, name, name_len);
        at += name_len;
        buf[at++] = 5;
        memcpy(buf + at, "admin", 5);
        at += 5;
        buf[at++] = (uint8_t)(list_len & 0xff);
        buf[at++] = (uint8_t)(list_len >> 8);
        if (list_len > 0) {
                memcpy(buf + at, list, list_len);
        }
        at += list_len;
        while (at % 8 != 0) {
                buf[at++] = 0;
        }
        return at;
}

/* Whether the raw RULE command decodes. */
static int decode_raw(uint8_t mode, uint8_t role, const char *name,
                      size_t name_len, const uint8_t *list, size_t list_len)
{
        uint8_t buf[1024];
        struct command d;
        size_t len = raw_acl(buf, mode, role, name, name_len, list, list_len);

        return command_decode(&d, buf, len);
}

/* A QUOTA_SET or QUOTA_REMOVE command for `subject` (by "admin"). */
static struct command quota_cmd(uint8_t mode, const char *subject,
                                const uint32_t *limit, uint8_t *table)
{
        struct command c = {.type = COMMAND_ACL,
                            .mode = mode,
                            .name = subject,
                            .name_len = (uint8_t)strlen(subject),
                            .address = "admin",
                            .address_len = 5};
        unsigned k;

        if (mode == COMMAND_ACL_QUOTA_SET) {
                for (k = 0; k < ACL_QUOTA_KINDS; k++) {
                        table[4 * k] = (uint8_t)limit[k];
                        table[4 * k + 1] = (uint8_t)(limit[k] >> 8);
                        table[4 * k + 2] = (uint8_t)(limit[k] >> 16);
                        table[4 * k + 3] = (uint8_t)(limit[k] >> 24);
                }
                c.list = table;
                c.list_len = COMMAND_ACL_QUOTA_TABLE;
        }
        return c;
}

/* Quotas: set through the log, each identity's own or the default's
 * found by principal, kept sorted, in format 3 (round trip, corruption
 * refused), replaced, removed, and the table's limits. */
static void test_quotas(void **state)
{
        static const uint32_t ten[ACL_QUOTA_KINDS] = {10, 0, 0, 0, 500};
        static const uint32_t none[ACL_QUOTA_KINDS] = {0};
        uint32_t two[ACL_QUOTA_KINDS] = {0, 2, 1, 0, 0};
        uint8_t table[COMMAND_ACL_QUOTA_TABLE], buf[ACL_ENCODED_MAX];
        struct acl *a = malloc(sizeof *a), *b = malloc(sizeof *b);
        struct command c, d;
        uint8_t enc[128];
        const uint32_t *l;
        size_t len;
        unsigned i;

        (void)state;
        acl_start(a, ACL_LOCK);
        c = quota_cmd(COMMAND_ACL_QUOTA_SET, "*", ten, table);
        assert_int_equal(acl_apply(a, &c), 0);
        c = quota_cmd(COMMAND_ACL_QUOTA_SET, "team-a", two, table);
        /* Through the codec, as the log carries it. */
        len = command_encode(&c, enc, sizeof enc);
        assert_true(len > 0);
        assert_int_equal(command_decode(&d, enc, len), 0);
        assert_int_equal(acl_apply(a, &d), 0);
        assert_true(acl_has_quotas(a));
        assert_int_equal(a->n_quota, 2);
        assert_string_equal(a->quota[0].subject, "*");
        assert_string_equal(a->quota[1].subject, "team-a");
        l = acl_quota_of(a, acl_principal("team-a", 6));
        assert_non_null(l);
        assert_int_equal(l[ACL_QUOTA_LOCKS], 2);
        assert_int_equal(l[ACL_QUOTA_SESSIONS], 0);
        l = acl_quota_of(a, acl_principal("team-b", 6));
        assert_int_equal(l[ACL_QUOTA_SESSIONS], 10);
        assert_int_equal(l[ACL_QUOTA_RATE], 500);
        assert_null(acl_quota_of(a, 0));
        assert_string_equal(acl_quota_name(ACL_QUOTA_WAITERS), "waiters");
        assert_string_equal(acl_quota_name(ACL_QUOTA_KINDS), "unknown");

        /* Format 3, decoded to the same table; a bit flipped is refused
         * or decodes to another table, never to this one by accident. */
        len = acl_encode(a, buf, sizeof buf);
        assert_int_equal(buf[0], 3);
        assert_int_equal(acl_decode(b, buf, len), 0);
        assert_true(acl_equal(a, b));
        for (i = 0; i + 1 < len; i++) {
                assert_int_not_equal(acl_decode(b, buf, i), 0);
        }
        /* Out of order, or a quota that limits nothing. */
        memcpy(enc, buf, len);
        enc[len - 4 * ACL_QUOTA_KINDS - 6] = '!'; /* "team-a": "!eam-a" < "*" */
        assert_int_equal(acl_decode(b, enc, len), BATON_ECORRUPT);
        memcpy(enc, buf, len);
        memset(enc + len - 4 * ACL_QUOTA_KINDS, 0, 4 * ACL_QUOTA_KINDS);
        assert_int_equal(acl_decode(b, enc, len), BATON_ECORRUPT);

        /* Replaced whole, then removed; a second remove is not found. */
        two[ACL_QUOTA_LOCKS] = 0;
        c = quota_cmd(COMMAND_ACL_QUOTA_SET, "team-a", two, table);
        assert_int_equal(acl_apply(a, &c), 0);
        l = acl_quota_of(a, acl_principal("team-a", 6));
        assert_int_equal(l[ACL_QUOTA_LOCKS], 0);
        assert_int_equal(l[ACL_QUOTA_WAITERS], 1);
        c = quota_cmd(COMMAND_ACL_QUOTA_SET, "team-a", none, table);
        assert_int_equal(acl_apply(a, &c), BATON_EINVAL);
        c = quota_cmd(COMMAND_ACL_QUOTA_REMOVE, "team-a", NULL, NULL);
        assert_int_equal(acl_apply(a, &c), 0);
        assert_int_equal(acl_apply(a, &c), BATON_ENOTFOUND);
        /* Its identity falls back to the default. */
        l = acl_quota_of(a, acl_principal("team-a", 6));
        assert_int_equal(l[ACL_QUOTA_SESSIONS], 10);
        c = quota_cmd(COMMAND_ACL_QUOTA_REMOVE, "*", NULL, NULL);
        assert_int_equal(acl_apply(a, &c), 0);
        assert_false(acl_has_quotas(a));
        assert_null(acl_quota_of(a, acl_principal("team-a", 6)));
        /* Without quotas (or rules) the encoding is format 1 again. */
        assert_int_equal(acl_encode(a, buf, sizeof buf) > 0 ? buf[0] : 0, 1);

        /* ACL_QUOTA_MAX quotas; one more is refused, a change is not. */
        for (i = 0; i < ACL_QUOTA_MAX; i++) {
                char id[16];
                snprintf(id, sizeof id, "id-%02u", i);
                assert_int_equal(acl_quota_put(a, id, strlen(id), ten), 0);
        }
        assert_int_equal(acl_quota_put(a, "more", 4, ten), BATON_EINVAL);
        assert_int_equal(acl_quota_put(a, "id-07", 5, two), 0);
        len = acl_encode(a, buf, sizeof buf);
        assert_int_equal(acl_decode(b, buf, len), 0);
        assert_true(acl_equal(a, b));
        /* Needs a table. */
        acl_init(b);
        c = quota_cmd(COMMAND_ACL_QUOTA_REMOVE, "x", NULL, NULL);
        assert_int_equal(acl_apply(b, &c), BATON_EBUSY);
        /* Malformed on the wire: a role, or a set without its limits. */
        c = quota_cmd(COMMAND_ACL_QUOTA_SET, "x", ten, table);
        c.role = 1;
        assert_int_equal(command_encode(&c, enc, sizeof enc), 0);
        c.role = 0;
        c.list_len = 4;
        assert_int_equal(command_encode(&c, enc, sizeof enc), 0);
        free(a);
        free(b);
}

/* Long because it is one table of golden bytes and every refusal of the
 * rule command's fields, each a line. */
static void test_rule_command_codec(void **state)
{
        /* alice gets lock and manage on team-a/. */
        static const uint8_t golden[] = {
            3, 18,  0,   0,             /* version 3, ACL, no flags */
            3, 7,                       /* mode RULE_SET, permissions */
            5, 'a', 'l', 'i', 'c', 'e', /* subject */
            5, 'a', 'd', 'm', 'i', 'n', /* who asked */
            9, 0,                       /* the table: 9 bytes */
            1, 7,   't', 'e', 'a', 'm', '-', 'a', '/', /* identity, prefix */
            0, 0,   0,                                 /* padding */
        };
        static const uint8_t list_ok[] = {ACL_RULE_GROUP_PREFIX, 2, 'b', '/'};
        uint8_t buf[1024], list[2 + ACL_PREFIX_LEN_MAX];
        char subject[ACL_IDENTITY_MAX + 1];
        struct command c, d;
        size_t len;

        (void)state;
        c = rule(COMMAND_ACL_RULE_SET, ACL_RULE_PREFIX, "alice", "team-a/",
                 ACL_PERM_ALL, list);
        len = command_encode(&c, buf, sizeof buf);
        assert_int_equal(len, sizeof golden);
        assert_memory_equal(buf, golden, len);
        assert_int_equal(command_size(&c), len);
        assert_int_equal(
            raw_acl(buf, COMMAND_ACL_RULE_SET, 7, "alice", 5, list, 9), len);
        assert_memory_equal(buf, golden, len);
        assert_int_equal(command_decode(&d, golden, sizeof golden), 0);
        assert_int_equal(d.type, COMMAND_ACL);
        assert_int_equal(d.mode, COMMAND_ACL_RULE_SET);
        assert_int_equal(d.role, ACL_PERM_ALL);
        assert_int_equal(d.name_len, 5);
        assert_memory_equal(d.name, "alice", 5);
        assert_int_equal(d.address_len, 5);
        assert_memory_equal(d.address, "admin", 5);
        assert_int_equal(d.list_len, 9);
        assert_memory_equal(d.list, "\x01\x07team-a/", 9);

        /* A remove, of a group's rule on every name. */
        c = rule(COMMAND_ACL_RULE_REMOVE, ACL_RULE_GROUP_PREFIX, "team-b", "",
                 0, list);
        len = command_encode(&c, buf, sizeof buf);
        assert_true(len > 0 && len % 8 == 0);
        assert_int_equal(command_size(&c), len);
        assert_int_equal(command_decode(&d, buf, len), 0);
        assert_int_equal(d.mode, COMMAND_ACL_RULE_REMOVE);
        assert_int_equal(d.role, 0);
        assert_memory_equal(d.name, "team-b", 6);
        assert_int_equal(d.list_len, 2);
        assert_memory_equal(d.list, "\x02\x00", 2);

        /* The longest subject and prefix. */
        memset(subject, 's', ACL_IDENTITY_MAX);
        subject[ACL_IDENTITY_MAX] = '\0';
        c = rule(COMMAND_ACL_RULE_SET, ACL_RULE_PREFIX, subject, subject,
                 ACL_PERM_READ, list);
        len = command_encode(&c, buf, sizeof buf);
        assert_true(len > 0);
        assert_int_equal(command_decode(&d, buf, len), 0);
        assert_int_equal(d.name_len, ACL_IDENTITY_MAX);
        assert_int_equal(d.list_len, 2 + ACL_PREFIX_LEN_MAX);
        assert_memory_equal(d.list + 2, subject, ACL_PREFIX_LEN_MAX);

        /* The raw writer agrees with the codec on what is valid... */
        assert_int_equal(decode_raw(COMMAND_ACL_RULE_SET, 1, "bob", 3, list_ok,
                                    sizeof list_ok),
                         0);
        assert_int_equal(decode_raw(COMMAND_ACL_RULE_REMOVE, 0, "bob", 3,
                                    list_ok, sizeof list_ok),
                         0);
        /* ...and these are refused: permissions out of range in a set, a
         * role in a remove... */
        assert_int_equal(decode_raw(COMMAND_ACL_RULE_SET, 0, "bob", 3, list_ok,
                                    sizeof list_ok),
                         BATON_EMALFORMED);
        assert_int_equal(decode_raw(COMMAND_ACL_RULE_SET, 8, "bob", 3, list_ok,
                                    sizeof list_ok),
                         BATON_EMALFORMED);
        assert_int_equal(decode_raw(COMMAND_ACL_RULE_REMOVE, 1, "bob", 3,
                                    list_ok, sizeof list_ok),
                         BATON_EMALFORMED);
        /* ...kinds that are not a prefix rule's... */
        {
                uint8_t l[] = {0, 2, 'b', '/'};
                assert_int_equal(
                    decode_raw(COMMAND_ACL_RULE_SET, 1, "bob", 3, l, sizeof l),
                    BATON_EMALFORMED);
                l[0] = 3;
                assert_int_equal(
                    decode_raw(COMMAND_ACL_RULE_SET, 1, "bob", 3, l, sizeof l),
                    BATON_EMALFORMED);
        }
        /* ...a table whose length is not 2 and the prefix's... */
        {
                const uint8_t longer[] = {1, 2, 'b', '/', 'x'};
                const uint8_t shorter[] = {1, 3, 'b', '/'};
                const uint8_t kind_only[] = {1};
                assert_int_equal(decode_raw(COMMAND_ACL_RULE_SET, 1, "bob", 3,
                                            longer, sizeof longer),
                                 BATON_EMALFORMED);
                assert_int_equal(decode_raw(COMMAND_ACL_RULE_SET, 1, "bob", 3,
                                            shorter, sizeof shorter),
                                 BATON_EMALFORMED);
                assert_int_equal(decode_raw(COMMAND_ACL_RULE_SET, 1, "bob", 3,
                                            kind_only, sizeof kind_only),
                                 BATON_EMALFORMED);
                assert_int_equal(
                    decode_raw(COMMAND_ACL_RULE_REMOVE, 0, "bob", 3, NULL, 0),
                    BATON_EMALFORMED);
        }
        /* ...a NUL in the prefix or the subject, no subject, another
         * mode. */
        {
                const uint8_t nul[] = {1, 3, 'b', 0, '/'};
                assert_int_equal(decode_raw(COMMAND_ACL_RULE_SET, 1, "bob", 3,
                                            nul, sizeof nul),
                                 BATON_EMALFORMED);
        }
        assert_int_equal(decode_raw(COMMAND_ACL_RULE_SET, 1, "b\0b", 3, list_ok,
                                    sizeof list_ok),
                         BATON_EMALFORMED);
        assert_int_equal(
            decode_raw(COMMAND_ACL_RULE_SET, 1, "", 0, list_ok, sizeof list_ok),
            BATON_EMALFORMED);
        assert_int_equal(decode_raw(COMMAND_ACL_RULE_REMOVE, 0, "", 0, list_ok,
                                    sizeof list_ok),
                         BATON_EMALFORMED);
        assert_int_equal(decode_raw(5, 1, "bob", 3, list_ok, sizeof list_ok),
                         BATON_EMALFORMED);
        /* The encoder refuses what the decoder would. */
        c = rule(COMMAND_ACL_RULE_SET, ACL_RULE_PREFIX, "bob", "b/", 8, list);
        assert_int_equal(command_encode(&c, buf, sizeof buf), 0);
        assert_int_equal(command_validate(&c), BATON_EMALFORMED);
        c = rule(COMMAND_ACL_RULE_REMOVE, ACL_RULE_PREFIX, "bob", "b/", 1,
                 list);
        assert_int_equal(command_encode(&c, buf, sizeof buf), 0);
        c = rule(COMMAND_ACL_RULE_SET, 3, "bob", "b/", 1, list);
        assert_int_equal(command_encode(&c, buf, sizeof buf), 0);
        c = rule(COMMAND_ACL_RULE_SET, ACL_RULE_PREFIX, "", "b/", 1, list);
        assert_int_equal(command_encode(&c, buf, sizeof buf), 0);
        c = rule(COMMAND_ACL_RULE_SET, ACL_RULE_PREFIX, "bob", "b/", 1, list);
        c.list_len = 3;
        assert_int_equal(command_encode(&c, buf, sizeof buf), 0);
        c.list = NULL;
        c.list_len = 0;
        assert_int_equal(command_encode(&c, buf, sizeof buf), 0);
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
        const struct acl_who carol = {"carol", GROUPS("team-b\0")};
        uint8_t list[2 + ACL_PREFIX_LEN_MAX];
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
        cmd = rule(COMMAND_ACL_RULE_SET, ACL_RULE_GROUP_PREFIX, "team-b",
                   "team-b/", ACL_PERM_LOCK, list);
        apply(a, &cmd);
        assert_true(raftfsm_acl(&a->rf)->seeded);
        assert_int_equal(raftfsm_acl(&a->rf)->n, 2);
        assert_int_equal(raftfsm_acl(&a->rf)->n_prefix, 1);

        epoch = raftfsm_acl_epoch(&b->rf);
        assert_int_equal(raftfsm_encode(&a->rf, &out, &buf.len), 0);
        buf.base = out;
        assert_int_equal(b->rf.fsm.restore(&b->rf.fsm, &buf), 0);
        assert_int_equal(raftfsm_adopt(&b->rf, true), 0);
        assert_true(acl_equal(raftfsm_acl(&a->rf), raftfsm_acl(&b->rf)));
        assert_true(raftfsm_acl_epoch(&b->rf) != epoch);
        assert_int_equal(acl_role(raftfsm_acl(&b->rf), "node-4", "node-{id}"),
                         ACL_LOCK);
        assert_int_equal(perms_on(raftfsm_acl(&b->rf), &carol, "team-b/x"),
                         ACL_PERM_READ | ACL_PERM_LOCK);
        assert_int_equal(perms_on(raftfsm_acl(&b->rf), &carol, "team-a/x"), 0);
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
            cmocka_unit_test(test_names_open_without_rules),
            cmocka_unit_test(test_name_perms),
            cmocka_unit_test(test_prefix_reaches),
            cmocka_unit_test(test_rule_apply),
            cmocka_unit_test(test_rule_refused),
            cmocka_unit_test(test_rules_full_by_count),
            cmocka_unit_test(test_rules_full_by_bytes),
            cmocka_unit_test(test_identities_full_by_bytes),
            cmocka_unit_test(test_encoding_formats),
            cmocka_unit_test(test_rules_sorted),
            cmocka_unit_test(test_decode_format2_refused),
            cmocka_unit_test(test_perms_text),
            cmocka_unit_test(test_last_admin_cases),
            cmocka_unit_test(test_rule_command_codec),
            cmocka_unit_test(test_quotas),
            cmocka_unit_test(test_lock_state_as_older),
            cmocka_unit_test(test_snapshot_inline),
            cmocka_unit_test(test_snapshot_worker),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
