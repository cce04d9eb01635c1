/*
 * libbaton's calls on the access list against the scripted fake server
 * (fake.h): the bytes baton_rule_set() and baton_rule_remove() send (a
 * group named group:NAME, read added to lock and manage), the arguments
 * they refuse before sending anything, the leader's refusals in words, a
 * remove whose first answer was lost, a leader of a release without rules
 * on names, and baton_rule_list() and baton_acl_list() of a list with such
 * rules (format 2) and without (format 1), each in struct baton_acl's
 * layout of before these rules, and their refusals. Cases wait for frames
 * with deadlines, never bare sleeps.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../include/baton.h"
#include "../../src/proto/aclwire.h"
#include "../../src/proto/proto.h"
#include "../../src/proto/reply.h"
#include "fake.h"

/* What the hooks answer an ACL request with: a RESULT of each status in
 * turn (the last one again once they run out), or for a LIST a reply with
 * `n_prefix` prefix rules (with `list_status`, a RESULT of status[0]
 * instead), or an ERROR (a release that does not know the op). */
struct script {
        int status[4];
        unsigned n_status;
        unsigned answered;
        unsigned n_prefix;
        bool list_status;
        bool error;
};

static int answer_acl(struct fake *f, const struct fake_frame *fr)
{
        struct script *s = f->data;
        static uint8_t out[PROTO_HEADER_SIZE + PROTO_MAX_BODY];

        if (fr->h.type != PROTO_ACL) {
                return 0;
        }
        if (s->error) {
                fake_send(f, fr->conn, out,
                          proto_write_error(out, sizeof out, fr->h.id,
                                            BATON_EMALFORMED,
                                            "malformed ACL request"));
                fake_close_conn(f, fr->conn);
                return 1;
        }
        if (fr->body[0] == PROTO_ACL_LIST && !s->list_status) {
                static struct proto_acl_reply r;
                memset(&r, 0, sizeof r);
                r.seeded = 1;
                r.default_role = BATON_ACCESS_LOCK;
                r.n = 1;
                r.rules[0] = (struct proto_acl_rule){0, 3, {"admin", 5}};
                r.n_prefix = (uint16_t)s->n_prefix;
                if (s->n_prefix > 0) {
                        r.prefix[0] = (struct proto_acl_prefix_rule){
                            PROTO_ACL_KIND_PREFIX, 5, {"deploy", 6}, {"", 0}};
                }
                if (s->n_prefix > 1) {
                        r.prefix[1] = (struct proto_acl_prefix_rule){
                            PROTO_ACL_KIND_GROUP_PREFIX,
                            7,
                            {"team-a", 6},
                            {"team-a/", 7}};
                }
                fake_send(f, fr->conn, out,
                          proto_write_acl_reply(out, sizeof out, fr->h.id, &r));
                return 1;
        }
        fake_status(f, fr,
                    s->status[s->answered < s->n_status ? s->answered
                                                        : s->n_status - 1]);
        s->answered++;
        return 1;
}

/* The body of the next ACL frame in the log, read. */
static struct proto_acl_request next_acl(unsigned *from,
                                         struct fake_frame *keep)
{
        struct proto_acl_request r;

        *keep = fake_wait_frame(from, PROTO_ACL, 0);
        assert_int_equal(proto_read_acl(keep->body, keep->h.length, &r), 0);
        return r;
}

static void rule_set_sends_the_rule(void **state)
{
        struct script s = {.status = {0}, .n_status = 1};
        struct proto_acl_request r;
        struct fake_frame fr;
        baton_client *c;
        unsigned from = 0;

        (void)state;
        fake_set_hook(answer_acl, &s);
        c = fake_client(fake_server()->endpoints, 10000, 2000, NULL);
        assert_int_equal(
            baton_rule_set(c, "group:team-a", "team-a/", BATON_PERM_LOCK), 0);
        r = next_acl(&from, &fr);
        assert_int_equal(r.op, PROTO_ACL_RULE_SET);
        assert_int_equal(r.kind, PROTO_ACL_KIND_GROUP_PREFIX);
        assert_int_equal(r.role, BATON_PERM_LOCK | BATON_PERM_READ);
        assert_int_equal(r.identity.len, 6);
        assert_memory_equal(r.identity.p, "team-a", 6);
        assert_int_equal(r.prefix.len, 7);
        assert_memory_equal(r.prefix.p, "team-a/", 7);

        /* An identity, on every name; manage takes read along too. */
        assert_int_equal(baton_rule_set(c, "ci-bot", "", BATON_PERM_MANAGE), 0);
        r = next_acl(&from, &fr);
        assert_int_equal(r.kind, PROTO_ACL_KIND_PREFIX);
        assert_int_equal(r.role, BATON_PERM_MANAGE | BATON_PERM_READ);
        assert_memory_equal(r.identity.p, "ci-bot", 6);
        assert_int_equal(r.prefix.len, 0);
        assert_int_equal(baton_rule_set(c, "ro", "x", BATON_PERM_READ), 0);
        r = next_acl(&from, &fr);
        assert_int_equal(r.role, BATON_PERM_READ);

        assert_int_equal(baton_rule_remove(c, "group:team-a", "team-a/"), 0);
        r = next_acl(&from, &fr);
        assert_int_equal(r.op, PROTO_ACL_RULE_REMOVE);
        assert_int_equal(r.role, 0);
        assert_int_equal(r.kind, PROTO_ACL_KIND_GROUP_PREFIX);
        assert_memory_equal(r.prefix.p, "team-a/", 7);
        baton_client_destroy(c);
}

/* Bad arguments are BATON_EINVAL, named in baton_errmsg(), and nothing
 * is sent. */
static void rule_bad_arguments(void **state)
{
        char long_subject[BATON_ACL_IDENTITY_MAX + 2];
        char long_group[sizeof "group:" + BATON_ACL_IDENTITY_MAX + 1];
        char long_prefix[BATON_ACL_PREFIX_MAX + 2];
        baton_client *c;
        int rv;

        (void)state;
        memset(long_subject, 's', sizeof long_subject - 1);
        long_subject[sizeof long_subject - 1] = '\0';
        snprintf(long_group, sizeof long_group, "group:%s", long_subject);
        memset(long_prefix, 'p', sizeof long_prefix - 1);
        long_prefix[sizeof long_prefix - 1] = '\0';
        c = fake_client(fake_server()->endpoints, 10000, 2000, NULL);
#define REFUSED(call, word)                                                    \
        do {                                                                   \
                rv = (call);                                                   \
                assert_int_equal(rv, BATON_EINVAL);                            \
                if (strstr(baton_errmsg(rv), (word)) == NULL) {                \
                        fail_msg("%s: \"%s\" lacks \"%s\"", #call,             \
                                 baton_errmsg(rv), (word));                    \
                }                                                              \
        } while (0)
        REFUSED(baton_rule_set(c, NULL, "a/", BATON_PERM_READ), "subject");
        REFUSED(baton_rule_set(c, "", "a/", BATON_PERM_READ), "subject");
        REFUSED(baton_rule_set(c, "group:", "a/", BATON_PERM_READ), "group");
        REFUSED(baton_rule_set(c, long_subject, "a/", BATON_PERM_READ),
                "subject");
        REFUSED(baton_rule_set(c, long_group, "a/", BATON_PERM_READ), "group");
        REFUSED(baton_rule_set(c, "x", NULL, BATON_PERM_READ), "prefix");
        REFUSED(baton_rule_set(c, "x", long_prefix, BATON_PERM_READ), "prefix");
        REFUSED(baton_rule_set(c, "x", "a/", 0), "perms");
        REFUSED(baton_rule_set(c, "x", "a/", 8), "perms");
        REFUSED(baton_rule_set(c, "x", "a/", -1), "perms");
        REFUSED(baton_rule_remove(c, "", "a/"), "subject");
        REFUSED(baton_rule_remove(c, "x", long_prefix), "prefix");
#undef REFUSED
        /* The longest of each is taken. */
        long_subject[BATON_ACL_IDENTITY_MAX] = '\0';
        long_prefix[BATON_ACL_PREFIX_MAX] = '\0';
        assert_int_equal(fake_count_frames(PROTO_ACL, 0), 0);
        assert_int_equal(baton_rule_set(NULL, "x", "", 1), BATON_EINVAL);
        baton_client_destroy(c);
        {
                struct script s = {.status = {0}, .n_status = 1};
                fake_set_hook(answer_acl, &s);
                c = fake_client(fake_server()->endpoints, 10000, 2000, NULL);
                assert_int_equal(baton_rule_set(c, long_subject, long_prefix,
                                                BATON_PERM_READ),
                                 0);
                assert_int_equal(fake_count_frames(PROTO_ACL, 0), 1);
                baton_client_destroy(c);
        }
}

/* The leader's refusals, each with its words. */
static void rule_refusals(void **state)
{
        static const struct {
                int status;
                const char *words;
        } cases[] = {
            {BATON_ENOTFOUND, "no rule of 'group:ops' on \"db/\""},
            {BATON_EINVAL, "full"},
            {BATON_EBUSY, "try again"},
            {BATON_EPERM, "admin role"},
            {BATON_EUNSUPPORTED, "without TLS"},
        };
        baton_client *c;
        size_t i;
        int rv;

        (void)state;
        c = fake_client(fake_server()->endpoints, 10000, 2000, NULL);
        for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
                struct script s = {.status = {cases[i].status}, .n_status = 1};
                fake_set_hook(answer_acl, &s);
                rv = cases[i].status == BATON_ENOTFOUND
                         ? baton_rule_remove(c, "group:ops", "db/")
                         : baton_rule_set(c, "group:ops", "db/",
                                          BATON_PERM_LOCK);
                assert_int_equal(rv, cases[i].status);
                if (strstr(baton_errmsg(rv), cases[i].words) == NULL) {
                        fail_msg("%s: \"%s\" lacks \"%s\"", baton_errname(rv),
                                 baton_errmsg(rv), cases[i].words);
                }
        }
        baton_client_destroy(c);
}

/* A remove whose answer was lost (the leader stepped down: unknown), sent
 * again and answered "not found", took effect the first time: 0. A set is
 * sent again the same way. */
static void rule_remove_unknown_then_gone(void **state)
{
        struct script s = {.status = {BATON_EUNKNOWN, BATON_ENOTFOUND},
                           .n_status = 2};
        baton_client *c;

        (void)state;
        fake_set_hook(answer_acl, &s);
        c = fake_client(fake_server()->endpoints, 10000, 5000, NULL);
        assert_int_equal(baton_rule_remove(c, "alice", "a/"), 0);
        assert_int_equal(fake_count_frames(PROTO_ACL, 0), 2);
        s = (struct script){.status = {BATON_EUNKNOWN, 0}, .n_status = 2};
        assert_int_equal(baton_rule_set(c, "alice", "a/", BATON_PERM_READ), 0);
        assert_int_equal(fake_count_frames(PROTO_ACL, 0), 4);
        baton_client_destroy(c);
}

/* A leader of a release before rules on names refuses the op as
 * malformed and closes: the call says the release is the reason. */
static void rule_old_leader(void **state)
{
        struct script s = {.error = true};
        baton_client *c;
        int rv;

        (void)state;
        fake_set_hook(answer_acl, &s);
        c = fake_client(fake_server()->endpoints, 10000, 2000, NULL);
        rv = baton_rule_set(c, "group:ops", "db/", BATON_PERM_READ);
        assert_int_equal(rv, BATON_EMALFORMED);
        assert_non_null(strstr(baton_errmsg(rv), "rules on lock names"));
        baton_client_destroy(c);
}

/* struct baton_acl as releases before the rules on names had it: a
 * program built against their header allocates no more. */
_Static_assert(sizeof(struct baton_acl) ==
                       offsetof(struct baton_acl, rules) + sizeof(void *) &&
                   offsetof(struct baton_acl, rules) ==
                       offsetof(struct baton_acl, n_rules) + sizeof(void *),
               "struct baton_acl keeps its layout");

/* baton_acl_list() of a list with prefix rules: its role rules only, as
 * before such rules. */
static void acl_list_leaves_out_rules(void **state)
{
        struct script s = {.n_prefix = 2};
        struct baton_acl acl;
        baton_client *c;

        (void)state;
        fake_set_hook(answer_acl, &s);
        c = fake_client(fake_server()->endpoints, 10000, 2000, NULL);
        assert_int_equal(baton_acl_list(c, &acl), 0);
        assert_int_equal(acl.seeded, 1);
        assert_int_equal(acl.default_role, BATON_ACCESS_LOCK);
        assert_int_equal(acl.n_rules, 1);
        assert_string_equal(acl.rules[0].identity, "admin");
        assert_int_equal(acl.rules[0].role, BATON_ACCESS_ADMIN);
        baton_acl_free(&acl);
        assert_null(acl.rules);
        assert_int_equal(acl.n_rules, 0);
        baton_acl_free(&acl); /* twice is harmless */
        baton_client_destroy(c);
}

/* baton_rule_list(): each rule with its subject, group flag, prefix and
 * perms; none from a list without any (format 1). */
static void rule_list_reads_the_rules(void **state)
{
        struct script s = {.n_prefix = 2};
        struct baton_rules r;
        baton_client *c;

        (void)state;
        fake_set_hook(answer_acl, &s);
        c = fake_client(fake_server()->endpoints, 10000, 2000, NULL);
        assert_int_equal(baton_rule_list(c, &r), 0);
        assert_int_equal(r.n, 2);
        assert_non_null(r.rules);
        assert_string_equal(r.rules[0].subject, "deploy");
        assert_int_equal(r.rules[0].group, 0);
        assert_string_equal(r.rules[0].prefix, "");
        assert_int_equal(r.rules[0].perms, BATON_PERM_MANAGE | BATON_PERM_READ);
        assert_string_equal(r.rules[1].subject, "team-a");
        assert_int_equal(r.rules[1].group, 1);
        assert_string_equal(r.rules[1].prefix, "team-a/");
        assert_int_equal(r.rules[1].perms, 7);
        baton_rules_free(&r);
        assert_null(r.rules);
        assert_int_equal(r.n, 0);
        baton_rules_free(&r); /* twice is harmless */
        baton_rules_free(NULL);

        s.n_prefix = 0;
        assert_int_equal(baton_rule_list(c, &r), 0);
        assert_int_equal(r.n, 0);
        assert_null(r.rules);
        baton_rules_free(&r);
        baton_client_destroy(c);
}

/* Both listings refused alike: not admin, a leader without the access
 * list, bad arguments; nothing left to free. */
static void lists_refused(void **state)
{
        struct script s = {
            .status = {BATON_EPERM}, .n_status = 1, .list_status = true};
        struct baton_acl acl;
        struct baton_rules r;
        baton_client *c;

        (void)state;
        fake_set_hook(answer_acl, &s);
        c = fake_client(fake_server()->endpoints, 10000, 2000, NULL);
        assert_int_equal(baton_acl_list(c, &acl), BATON_EPERM);
        assert_non_null(strstr(baton_errmsg(BATON_EPERM), "admin role"));
        assert_null(acl.rules);
        assert_int_equal(baton_rule_list(c, &r), BATON_EPERM);
        assert_non_null(strstr(baton_errmsg(BATON_EPERM), "admin role"));
        assert_null(r.rules);
        assert_int_equal(r.n, 0);

        s.error = true;
        assert_int_equal(baton_acl_list(c, &acl), BATON_EMALFORMED);
        assert_int_equal(baton_rule_list(c, &r), BATON_EMALFORMED);
        assert_non_null(
            strstr(baton_errmsg(BATON_EMALFORMED), "does not know ACL"));
        assert_null(r.rules);

        assert_int_equal(baton_rule_list(NULL, &r), BATON_EINVAL);
        assert_int_equal(baton_rule_list(c, NULL), BATON_EINVAL);
        baton_client_destroy(c);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup(rule_set_sends_the_rule, fake_reset),
            cmocka_unit_test_setup(rule_bad_arguments, fake_reset),
            cmocka_unit_test_setup(rule_refusals, fake_reset),
            cmocka_unit_test_setup(rule_remove_unknown_then_gone, fake_reset),
            cmocka_unit_test_setup(rule_old_leader, fake_reset),
            cmocka_unit_test_setup(acl_list_leaves_out_rules, fake_reset),
            cmocka_unit_test_setup(rule_list_reads_the_rules, fake_reset),
            cmocka_unit_test_setup(lists_refused, fake_reset),
        };

        return cmocka_run_group_tests_name("wire_acl", tests, fake_up,
                                           fake_down);
}
