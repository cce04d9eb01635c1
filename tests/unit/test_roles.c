/* Unit tests for batond's roles: the role lines of the config, the role of
 * an identity, which requests each role allows, and a connection's side:
 * the role its TLS identity gives it and the sessions it attached to. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "../../include/baton.h"
#include "../../src/proto/proto.h"
#include "../../src/server/config/config.h"
#include "../../src/server/net/conn.h"
#include "../../src/server/config/roles.h"

/* Parse flags into a default config: 0 or the error. */
static int parse(struct config *c, int argc, char **argv, char *errmsg)
{
        config_defaults(c);
        return config_parse_args(c, argc, argv, errmsg, CONFIG_ERRMSG_MAX);
}

/* role lines map identities, blanks inside an identity included; others
 * get default-role, which is lock unless set. */
static void table(void **state)
{
        struct config c;
        char errmsg[CONFIG_ERRMSG_MAX];
        char *argv[] = {"batond",
                        "--role",
                        "ops admin",
                        "--role",
                        "  Jane Doe   read ",
                        "--role=batch none"};

        (void)state;
        assert_int_equal(parse(&c, 6, argv, errmsg), 0);
        assert_int_equal(c.n_roles, 3);
        assert_int_equal(roles_for(&c, "ops"), ROLES_ADMIN);
        assert_int_equal(roles_for(&c, "Jane Doe"), ROLES_READ);
        assert_int_equal(roles_for(&c, "batch"), ROLES_NONE);
        assert_int_equal(roles_for(&c, "someone"), ROLES_LOCK);
        assert_int_equal(roles_for(&c, ""), ROLES_LOCK);
        assert_int_equal(roles_for(&c, "OPS"), ROLES_LOCK);
}

static void default_role(void **state)
{
        struct config c;
        char errmsg[CONFIG_ERRMSG_MAX];
        char *argv[] = {"batond", "--default-role", "none", "--role",
                        "ops admin"};

        (void)state;
        assert_int_equal(parse(&c, 5, argv, errmsg), 0);
        assert_int_equal(roles_for(&c, "ops"), ROLES_ADMIN);
        assert_int_equal(roles_for(&c, "other"), ROLES_NONE);
}

/* The one lookup: the config's lines until the cluster's list is applied,
 * the list alone afterwards; a node identity gets none from both unless
 * named. */
static void decide(void **state)
{
        struct config c;
        struct acl applied, lines;
        char errmsg[CONFIG_ERRMSG_MAX];
        char *argv[] = {"batond", "--role", "ops admin"};

        (void)state;
        assert_int_equal(parse(&c, 3, argv, errmsg), 0);
        roles_config_acl(&c, &lines);
        acl_init(&applied);
        assert_int_equal(roles_decide(&applied, &lines, &c, "ops"),
                         ROLES_ADMIN);
        assert_int_equal(roles_decide(&applied, &lines, &c, "x"), ROLES_LOCK);
        assert_int_equal(roles_decide(&applied, &lines, &c, "node-3"),
                         ROLES_NONE);
        assert_int_equal(roles_for(&c, "node-3"), ROLES_NONE);
        assert_int_equal(roles_for(&c, "node-x"), ROLES_LOCK);
        acl_start(&applied, ROLES_READ);
        assert_int_equal(acl_put(&applied, "alice", 5, ROLES_ADMIN), 0);
        assert_int_equal(acl_put(&applied, "node-2", 6, ROLES_LOCK), 0);
        assert_int_equal(roles_decide(&applied, &lines, &c, "ops"),
                         ROLES_READ); /* the config's line no longer counts */
        assert_int_equal(roles_decide(&applied, &lines, &c, "alice"),
                         ROLES_ADMIN);
        assert_int_equal(roles_decide(&applied, &lines, &c, "node-3"),
                         ROLES_NONE);
        assert_int_equal(roles_decide(&applied, &lines, &c, "node-2"),
                         ROLES_LOCK);
}

/* `--role VALUE` fails with a message that starts with `what`. */
static void expect_bad(const char *flag, const char *value, const char *what)
{
        struct config c;
        char errmsg[CONFIG_ERRMSG_MAX];
        char *argv[] = {"batond", (char *)flag, (char *)value};

        errmsg[0] = '\0';
        assert_int_equal(parse(&c, 3, argv, errmsg), BATON_EINVAL);
        if (strstr(errmsg, what) == NULL) {
                fail_msg("got '%s', want '%s'", errmsg, what);
        }
}

static void bad_lines(void **state)
{
        char longid[300];
        struct config c;
        char errmsg[CONFIG_ERRMSG_MAX];
        char value[32];
        unsigned i;

        (void)state;
        expect_bad("--role", "admin", "expected 'IDENTITY ROLE'");
        expect_bad("--role", "ops root", "'root' is not a role");
        expect_bad("--role", "ops ADMIN", "'ADMIN' is not a role");
        expect_bad("--default-role", "root", "'root' is not a role");
        memset(longid, 'x', 256);
        strcpy(longid + 256, " read");
        expect_bad("--role", longid, "identity too long");
        /* A duplicate identity: which line was meant? */
        {
                char *argv[] = {"batond", "--role", "ops admin", "--role",
                                "ops read"};
                assert_int_equal(parse(&c, 5, argv, errmsg), BATON_EINVAL);
                assert_non_null(strstr(errmsg, "given twice"));
        }
        /* At most CONFIG_MAX_ROLES lines. */
        config_defaults(&c);
        for (i = 0; i < CONFIG_MAX_ROLES; i++) {
                snprintf(value, sizeof value, "client-%u lock", i);
                assert_int_equal(roles_add(&c, value, errmsg, sizeof errmsg),
                                 0);
        }
        assert_int_equal(roles_add(&c, "one-more lock", errmsg, sizeof errmsg),
                         BATON_EINVAL);
        assert_non_null(strstr(errmsg, "too many roles"));
}

/* quota lines: SUBJECT KIND=N ..., the subject any text before the
 * trailing KIND=N words (* the default); they join the seed's table; a
 * bad kind, number or line is refused by name. */
static void quota_lines(void **state)
{
        struct config c;
        struct acl lines;
        char errmsg[CONFIG_ERRMSG_MAX];
        char *argv[] = {"batond",
                        "--quota",
                        "* sessions=10 rate=none locks=100",
                        "--quota",
                        " Jane Doe  waiters=4 watches=0 ",
                        "--quota",
                        "batch rate=4294967295"};
        const uint32_t *l;
        unsigned i;

        (void)state;
        assert_int_equal(parse(&c, 7, argv, errmsg), 0);
        assert_int_equal(c.n_quotas, 3);
        assert_string_equal(c.quotas[0].subject, "*");
        assert_int_equal(c.quotas[0].limit[ACL_QUOTA_SESSIONS], 10);
        assert_int_equal(c.quotas[0].limit[ACL_QUOTA_LOCKS], 100);
        assert_int_equal(c.quotas[0].limit[ACL_QUOTA_RATE], 0);
        assert_string_equal(c.quotas[1].subject, "Jane Doe");
        assert_int_equal(c.quotas[1].limit[ACL_QUOTA_WAITERS], 4);
        assert_int_equal(c.quotas[2].limit[ACL_QUOTA_RATE], UINT32_MAX);
        roles_config_acl(&c, &lines);
        assert_int_equal(lines.n_quota, 3);
        l = acl_quota_of(&lines, acl_principal("Jane Doe", 8));
        assert_non_null(l);
        assert_int_equal(l[ACL_QUOTA_WAITERS], 4);
        assert_int_equal(l[ACL_QUOTA_SESSIONS], 0);
        /* Anyone else: the default. */
        l = acl_quota_of(&lines, acl_principal("bob", 3));
        assert_non_null(l);
        assert_int_equal(l[ACL_QUOTA_SESSIONS], 10);

        expect_bad("--quota", "alice", "expected 'SUBJECT KIND=N ...'");
        expect_bad("--quota", "locks=3", "expected 'SUBJECT KIND=N ...'");
        expect_bad("--quota", "alice locks=0", "limiting something");
        expect_bad("--quota", "alice lock=3", "'lock=3' is not KIND=N");
        expect_bad("--quota", "alice locks=-1", "N is 0..4294967295");
        expect_bad("--quota", "alice locks=4294967296", "N is 0..4294967295");
        expect_bad("--quota", "alice locks=3x", "N is 0..4294967295");
        {
                char *twice[] = {"batond", "--quota", "alice locks=1",
                                 "--quota", "alice sessions=1"};
                assert_int_equal(parse(&c, 5, twice, errmsg), BATON_EINVAL);
                assert_non_null(strstr(errmsg, "given twice"));
        }
        config_defaults(&c);
        for (i = 0; i < CONFIG_MAX_QUOTAS; i++) {
                char line[32];
                snprintf(line, sizeof line, "id-%u locks=1", i);
                assert_int_equal(quotas_add(&c, line, errmsg, sizeof errmsg),
                                 0);
        }
        assert_int_equal(
            quotas_add(&c, "one-more locks=1", errmsg, sizeof errmsg),
            BATON_EINVAL);
        assert_non_null(strstr(errmsg, "too many quotas"));
}

/* rule lines: SUBJECT PREFIX PERMS, the prefix a word or quoted (""
 * too), a group as group:NAME; they join the seed's table; each bad
 * part is refused by name. */
static void rule_lines(void **state)
{
        struct config c;
        struct acl lines;
        char errmsg[CONFIG_ERRMSG_MAX];
        char *argv[] = {"batond",
                        "--rule",
                        "group:team-a team-a/ lock",
                        "--rule",
                        "  Jane Doe \"team b/\"  lock,manage ",
                        "--rule",
                        "auditor \"\" read"};
        struct acl_who jane = {"Jane Doe", NULL, 0};
        struct acl_who a = {"x", "team-a", 7};
        struct acl_who auditor = {"auditor", NULL, 0};
        unsigned i;

        (void)state;
        assert_int_equal(parse(&c, 7, argv, errmsg), 0);
        assert_int_equal(c.n_rules, 3);
        assert_int_equal(c.rules[0].kind, ACL_RULE_GROUP_PREFIX);
        assert_string_equal(c.rules[0].subject, "team-a");
        assert_string_equal(c.rules[0].prefix, "team-a/");
        assert_int_equal(c.rules[0].perms, ACL_PERM_READ | ACL_PERM_LOCK);
        assert_int_equal(c.rules[1].kind, ACL_RULE_PREFIX);
        assert_string_equal(c.rules[1].subject, "Jane Doe");
        assert_string_equal(c.rules[1].prefix, "team b/");
        assert_int_equal(c.rules[1].perms, ACL_PERM_ALL);
        assert_string_equal(c.rules[2].prefix, "");
        roles_config_acl(&c, &lines);
        assert_int_equal(lines.n_prefix, 3);
        assert_int_equal(acl_name_perms(&lines, &a, "team-a/job", 10),
                         ACL_PERM_READ | ACL_PERM_LOCK);
        assert_int_equal(acl_name_perms(&lines, &jane, "team b/x", 8),
                         ACL_PERM_ALL);
        assert_int_equal(acl_name_perms(&lines, &jane, "team-a/x", 8), 0);
        assert_int_equal(acl_name_perms(&lines, &auditor, "anything", 8),
                         ACL_PERM_READ);

        expect_bad("--rule", "lock", "expected 'SUBJECT PREFIX PERMS'");
        expect_bad("--rule", "team-a/ lock", "expected 'SUBJECT PREFIX PERMS'");
        expect_bad("--rule", "alice team-a/ write", "'write' is not a list");
        expect_bad("--rule", "alice team-a/ lock,", "'lock,' is not a list");
        expect_bad("--rule", "alice \"team-a/ lock", "unterminated");
        expect_bad("--rule", "alice \"a\\b\" lock", "no backslash");
        {
                char *twice[] = {"batond", "--rule", "alice x/ lock", "--rule",
                                 "alice x/ read"};
                assert_int_equal(parse(&c, 5, twice, errmsg), BATON_EINVAL);
                assert_non_null(strstr(errmsg, "given twice"));
        }
        config_defaults(&c);
        for (i = 0; i < CONFIG_MAX_RULES; i++) {
                char value[48];
                snprintf(value, sizeof value, "client-%u p/ lock", i);
                assert_int_equal(rules_add(&c, value, errmsg, sizeof errmsg),
                                 0);
        }
        assert_int_equal(rules_add(&c, "more p/ lock", errmsg, sizeof errmsg),
                         BATON_EINVAL);
        assert_non_null(strstr(errmsg, "too many rules"));
}

/* The matrix: each role's requests, and nothing more. */
static void allows(void **state)
{
        static const uint8_t reads[] = {
            PROTO_QUERY, PROTO_CHECK, PROTO_LIST,    PROTO_STATUS,
            PROTO_PING,  PROTO_WATCH, PROTO_UNWATCH, PROTO_SESSIONS};
        static const uint8_t locks[] = {PROTO_COMMAND, PROTO_KEEPALIVE,
                                        PROTO_ATTACH};
        static const uint8_t admins[] = {PROTO_MEMBER_ADD, PROTO_MEMBER_REMOVE,
                                         PROTO_TRANSFER, 14, 63};
        size_t i;

        (void)state;
        for (i = 0; i < sizeof reads; i++) {
                assert_false(roles_allows(ROLES_NONE, reads[i]));
                assert_true(roles_allows(ROLES_READ, reads[i]));
                assert_true(roles_allows(ROLES_LOCK, reads[i]));
                assert_true(roles_allows(ROLES_ADMIN, reads[i]));
        }
        for (i = 0; i < sizeof locks; i++) {
                assert_false(roles_allows(ROLES_NONE, locks[i]));
                assert_false(roles_allows(ROLES_READ, locks[i]));
                assert_true(roles_allows(ROLES_LOCK, locks[i]));
                assert_true(roles_allows(ROLES_ADMIN, locks[i]));
        }
        for (i = 0; i < sizeof admins; i++) {
                assert_false(roles_allows(ROLES_NONE, admins[i]));
                assert_false(roles_allows(ROLES_READ, admins[i]));
                assert_false(roles_allows(ROLES_LOCK, admins[i]));
                assert_true(roles_allows(ROLES_ADMIN, admins[i]));
        }
        /* A role out of range allows nothing. */
        assert_false(roles_allows(4, PROTO_PING));
        assert_false(roles_allows(-1, PROTO_PING));
        assert_string_equal(roles_name(ROLES_LOCK), "lock");
        assert_string_equal(roles_name(9), "unknown");
}

/* The hook the TLS handshake calls: a connection gets its identity's
 * role, and a set without a config gives nothing. */
static void authorize(void **state)
{
        static struct conn_set set;
        struct conn c;
        struct config cfg;
        char errmsg[CONFIG_ERRMSG_MAX];
        char *argv[] = {"batond",    "--role",         "ops admin", "--role",
                        "dash read", "--default-role", "none"};

        (void)state;
        assert_int_equal(parse(&cfg, 7, argv, errmsg), 0);
        memset(&c, 0, sizeof c);
        c.set = &set;
        set.cfg = &cfg;
        conn_authorize(&c, "ops");
        assert_string_equal(c.identity, "ops");
        assert_int_equal(c.gw.role, ROLES_ADMIN);
        conn_authorize(&c, "dash");
        assert_int_equal(c.gw.role, ROLES_READ);
        assert_false(roles_allows(c.gw.role, PROTO_COMMAND));
        conn_authorize(&c, "stranger");
        assert_int_equal(c.gw.role, ROLES_NONE);
        set.cfg = NULL;
        conn_authorize(&c, "ops");
        assert_int_equal(c.gw.role, ROLES_NONE);
}

/* The sessions a connection proved it owns: bounded, the oldest goes. */
static void attached(void **state)
{
        struct gateway_conn c;
        uint64_t s;

        (void)state;
        gateway_conn_init(&c, 1, "", false);
        assert_false(gateway_conn_attached(&c, 0));
        assert_false(gateway_conn_attached(&c, 5));
        gateway_conn_attach(&c, 5);
        gateway_conn_attach(&c, 5);
        assert_true(gateway_conn_attached(&c, 5));
        gateway_conn_attach(&c, 0);
        assert_false(gateway_conn_attached(&c, 0));
        for (s = 100; s < 100 + GATEWAY_MAX_ATTACHED - 1; s++) {
                gateway_conn_attach(&c, s);
        }
        assert_true(gateway_conn_attached(&c, 5));
        gateway_conn_attach(&c,
                            999); /* one more: 5, the oldest, is forgotten */
        assert_false(gateway_conn_attached(&c, 5));
        assert_true(gateway_conn_attached(&c, 999));
        assert_true(gateway_conn_attached(&c, 100));
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(table),       cmocka_unit_test(default_role),
            cmocka_unit_test(bad_lines),   cmocka_unit_test(allows),
            cmocka_unit_test(authorize),   cmocka_unit_test(attached),
            cmocka_unit_test(decide),      cmocka_unit_test(rule_lines),
            cmocka_unit_test(quota_lines), cmocka_unit_test(quota_lines),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
