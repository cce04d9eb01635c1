/* batonctl's output of the rules on lock names (rule list, add, remove). */
#include "printrule.h"

#include <string.h>

#include "../lib/permname.h"
#include "print.h"

#define GROUP_TAG "group:" /* how a group is written: group:NAME */

/* A rule's prefix as text: in double quotes, `"` and `\` escaped with a
 * backslash, as a config file's rule line quotes it. */
static void put_prefix_text(FILE *out, const char *prefix)
{
        const char *p;

        fputc('"', out);
        for (p = prefix; *p != '\0'; p++) {
                if (*p == '"' || *p == '\\') {
                        fputc('\\', out);
                }
                fputc(*p, out);
        }
        fputc('"', out);
}

/* One rule as a JSON object: "subject", "group", "prefix" (and
 * "prefix_hex" after it when the prefix is not valid UTF-8, as with
 * "lock_hex"), then "perms", every permission by name, read included;
 * or "removed":true for `perms` < 0. */
static void put_rule_json(FILE *out, const char *subject, bool group,
                          const char *prefix, int perms)
{
        const char *sep = "";
        int bit;

        fputs("{\"subject\":", out);
        print_json_string(out, subject);
        fprintf(out, ",\"group\":%s,", group ? "true" : "false");
        print_json_exact(out, "prefix", prefix);
        if (perms < 0) {
                fputs(",\"removed\":true}", out);
                return;
        }
        fputs(",\"perms\":[", out);
        for (bit = BATON_PERM_READ; bit <= BATON_PERM_MANAGE; bit <<= 1) {
                if ((perms & bit) != 0) {
                        fprintf(out, "%s\"%s\"", sep, permname_bit(bit));
                        sep = ",";
                }
        }
        fputs("]}", out);
}

void print_rules(FILE *out, bool json, const struct baton_rules *rules)
{
        char perms[PERMNAME_MAX];
        unsigned i;

        if (json) {
                fputs("{\"rules\":[", out);
                for (i = 0; i < rules->n; i++) {
                        const struct baton_acl_prefix_rule *r =
                            &rules->rules[i];
                        fputs(i > 0 ? "," : "", out);
                        put_rule_json(out, r->subject, r->group != 0, r->prefix,
                                      r->perms);
                }
                fputs("]}\n", out);
                return;
        }
        if (rules->n == 0) {
                fputs("(no rules on names: every name is open)\n", out);
                return;
        }
        for (i = 0; i < rules->n; i++) {
                const struct baton_acl_prefix_rule *r = &rules->rules[i];
                fprintf(out, "rule = %s%s ", r->group ? GROUP_TAG : "",
                        r->subject);
                put_prefix_text(out, r->prefix);
                fprintf(out, " %s\n",
                        permname_format(r->perms, perms, sizeof perms));
        }
}

void print_rule_changed(FILE *out, bool json, const char *subject,
                        const char *prefix, int perms)
{
        bool group = strncmp(subject, GROUP_TAG, sizeof GROUP_TAG - 1) == 0;
        char names[PERMNAME_MAX];

        if (json) {
                put_rule_json(out,
                              group ? subject + sizeof GROUP_TAG - 1 : subject,
                              group, prefix, perms);
                fputc('\n', out);
                return;
        }
        fprintf(out, "rule: %s ", subject);
        if (perms < 0) {
                fputs("on ", out);
                put_prefix_text(out, prefix);
                fputs(" removed\n", out);
                return;
        }
        fprintf(out, "has %s on ", permname_format(perms, names, sizeof names));
        put_prefix_text(out, prefix);
        fputc('\n', out);
}
