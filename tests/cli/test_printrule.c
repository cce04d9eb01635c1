/*
 * batonctl's output of the rules on lock names (src/cli/printrule.c) and
 * of the quotas per identity (src/cli/printquota.c), text and JSON, byte
 * for byte: what `rule list`, `rule add` and `rule remove` print,
 * including prefixes with quotes, backslashes and bytes that are not
 * UTF-8, and what `quota list`, `quota set` and `quota remove` print. No
 * cluster: the printers are called on fixed inputs. Prints TAP (not cmocka,
 * whose own print_error() would clash with batonctl's).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../include/baton.h"
#include "../../src/cli/printquota.h"
#include "../../src/cli/printrule.h"
#include "../lib/tap.h"

static struct tap tap;

/* Whether what `out` (an open_memstream over *buf) got is `want`; one
 * case, `what`, showing both when they differ. Closes `out`, frees the
 * text. */
static void expect(FILE *out, char **buf, const char *want, const char *what)
{
        fclose(out);
        if (!tap_ok(&tap, *buf != NULL && strcmp(*buf, want) == 0, "%s",
                    what)) {
                tap_diag("want: %s", want);
                tap_diag("got:  %s", *buf != NULL ? *buf : "(nothing)");
        }
        free(*buf);
        *buf = NULL;
}

/* A stream for one case's output, into *buf. */
static FILE *stream(char **buf, size_t *size)
{
        FILE *out = open_memstream(buf, size);

        if (out == NULL) {
                perror("open_memstream");
                exit(1);
        }
        return out;
}

static struct baton_acl_prefix_rule rules[] = {
    {"deploy-bot", 0, "", BATON_PERM_MANAGE | BATON_PERM_READ},
    {"ci", 0, "build/", BATON_PERM_READ},
    {"team-a", 1, "team-a/", BATON_PERM_LOCK | BATON_PERM_READ},
    {"ops", 1, "say \"hi\"\\now", 7},
    {"x", 0, "a\xff", BATON_PERM_READ},
};

static void rule_list_text(void)
{
        struct baton_rules list = {.n = 4, .rules = rules};
        char *buf = NULL;
        size_t size;
        FILE *out;

        out = stream(&buf, &size);
        print_rules(out, false, &list);
        expect(out, &buf,
               "rule = deploy-bot \"\" manage\n"
               "rule = ci \"build/\" read\n"
               "rule = group:team-a \"team-a/\" lock\n"
               "rule = group:ops \"say \\\"hi\\\"\\\\now\" lock,manage\n",
               "rule list: a config line a rule, group:NAME for a group, the "
               "prefix quoted with \" and \\ escaped, perms by name");
        list.n = 0;
        list.rules = NULL;
        out = stream(&buf, &size);
        print_rules(out, false, &list);
        expect(out, &buf, "(no rules on names: every name is open)\n",
               "rule list without rules: one line saying names are open");
}

static void rule_list_json(void)
{
        struct baton_rules list = {.n = 3, .rules = rules};
        char *buf = NULL;
        size_t size;
        FILE *out;

        out = stream(&buf, &size);
        print_rules(out, true, &list);
        expect(out, &buf,
               "{\"rules\":["
               "{\"subject\":\"deploy-bot\",\"group\":false,\"prefix\":\"\","
               "\"perms\":[\"read\",\"manage\"]},"
               "{\"subject\":\"ci\",\"group\":false,\"prefix\":\"build/\","
               "\"perms\":[\"read\"]},"
               "{\"subject\":\"team-a\",\"group\":true,\"prefix\":\"team-a/\","
               "\"perms\":[\"read\",\"lock\"]}]}\n",
               "rule list --json: subject, group, prefix and every "
               "permission, read included");
        list.n = 1;
        list.rules = &rules[3];
        out = stream(&buf, &size);
        print_rules(out, true, &list);
        expect(out, &buf,
               "{\"rules\":[{\"subject\":\"ops\",\"group\":true,"
               "\"prefix\":\"say \\\"hi\\\"\\\\now\","
               "\"perms\":[\"read\",\"lock\",\"manage\"]}]}\n",
               "rule list --json: quotes and backslashes escaped as JSON");
        list.rules = &rules[4];
        out = stream(&buf, &size);
        print_rules(out, true, &list);
        expect(out, &buf,
               "{\"rules\":[{\"subject\":\"x\",\"group\":false,"
               "\"prefix\":\"a\xef\xbf\xbd\",\"prefix_hex\":\"61ff\","
               "\"perms\":[\"read\"]}]}\n",
               "rule list --json: a prefix that is not UTF-8 has its bytes in "
               "prefix_hex");
        list.n = 0;
        out = stream(&buf, &size);
        print_rules(out, true, &list);
        expect(out, &buf, "{\"rules\":[]}\n",
               "rule list --json without rules: an empty array");
}

static void rule_changed(void)
{
        char *buf = NULL;
        size_t size;
        FILE *out;

        out = stream(&buf, &size);
        print_rule_changed(out, false, "group:team-a", "team-a/",
                           BATON_PERM_LOCK | BATON_PERM_READ);
        expect(out, &buf, "rule: group:team-a has lock on \"team-a/\"\n",
               "rule add: one line, the subject as given");
        out = stream(&buf, &size);
        print_rule_changed(out, false, "ci", "", 7);
        expect(out, &buf, "rule: ci has lock,manage on \"\"\n",
               "rule add of every permission on every name");
        out = stream(&buf, &size);
        print_rule_changed(out, false, "group:team-a", "team-a/", -1);
        expect(out, &buf, "rule: group:team-a on \"team-a/\" removed\n",
               "rule remove: one line");
        out = stream(&buf, &size);
        print_rule_changed(out, true, "group:team-a", "team-a/",
                           BATON_PERM_LOCK | BATON_PERM_READ);
        expect(out, &buf,
               "{\"subject\":\"team-a\",\"group\":true,\"prefix\":\"team-a/\","
               "\"perms\":[\"read\",\"lock\"]}\n",
               "rule add --json: the rule as rule list --json shows it");
        out = stream(&buf, &size);
        print_rule_changed(out, true, "ci", "a\"b", -1);
        expect(out, &buf,
               "{\"subject\":\"ci\",\"group\":false,\"prefix\":\"a\\\"b\","
               "\"removed\":true}\n",
               "rule remove --json: the rule and removed");
}

static struct baton_quota quotas[] = {
    {"*", {0, 100, 0, 0, 50}, {0, 0, 0}},
    {"carol", {2, 2, 1, 1, 0}, {1, 2, 0}},
};

static void quota_list(void)
{
        struct baton_quotas list = {.n = 2, .quotas = quotas};
        char *buf = NULL;
        size_t size;
        FILE *out;

        out = stream(&buf, &size);
        print_quotas(out, false, &list);
        expect(out, &buf,
               "quota = * locks=100 rate=50\n"
               "quota = carol sessions=2 locks=2 waiters=1 watches=1  "
               "(in use: sessions=1 locks=2 waiters=0)\n",
               "quota list: a config line a quota, only the kinds it limits, "
               "then an identity's use");
        out = stream(&buf, &size);
        print_quotas(out, true, &list);
        expect(out, &buf,
               "{\"quotas\":["
               "{\"subject\":\"*\",\"limits\":{\"sessions\":0,"
               "\"locks\":100,\"waiters\":0,\"watches\":0,\"rate\":50}},"
               "{\"subject\":\"carol\",\"limits\":{\"sessions\":2,"
               "\"locks\":2,\"waiters\":1,\"watches\":1,\"rate\":0},"
               "\"used\":{\"sessions\":1,\"locks\":2,\"waiters\":0}}]}\n",
               "quota list --json: every kind's limit, an identity's use, no "
               "use for *");
        list.n = 0;
        out = stream(&buf, &size);
        print_quotas(out, false, &list);
        expect(out, &buf,
               "(no quotas: identities are limited only by the cluster's own "
               "limits)\n",
               "quota list without quotas: one line saying so");
        out = stream(&buf, &size);
        print_quotas(out, true, &list);
        expect(out, &buf, "{\"quotas\":[]}\n",
               "quota list --json without quotas: an empty array");
}

static void quota_changed(void)
{
        static const unsigned limits[BATON_QUOTA_KINDS] = {0, 10, 0, 3, 0};
        char *buf = NULL;
        size_t size;
        FILE *out;

        out = stream(&buf, &size);
        print_quota_changed(out, false, "team-b", limits);
        expect(out, &buf, "quota: team-b has locks=10 watches=3\n",
               "quota set: one line, the limits given");
        out = stream(&buf, &size);
        print_quota_changed(out, false, "team-b", NULL);
        expect(out, &buf, "quota: team-b removed\n", "quota remove: one line");
        out = stream(&buf, &size);
        print_quota_changed(out, true, "a\"b", limits);
        expect(out, &buf,
               "{\"subject\":\"a\\\"b\",\"limits\":{\"sessions\":0,"
               "\"locks\":10,\"waiters\":0,\"watches\":3,\"rate\":0}}\n",
               "quota set --json: the subject escaped, every kind's limit");
        out = stream(&buf, &size);
        print_quota_changed(out, true, "team-b", NULL);
        expect(out, &buf, "{\"subject\":\"team-b\",\"removed\":true}\n",
               "quota remove --json: the subject and removed");
}

int main(void)
{
        rule_list_text();
        rule_list_json();
        rule_changed();
        quota_list();
        quota_changed();
        return tap_plan(&tap);
}
