/* batonctl's operands of the access list's commands: acl, rule and
 * quota, each a list, a change and a removal. */
#include "argsacl.h"

#include <stdint.h>
#include <string.h>

#include "../../include/baton.h"
#include "../lib/permname.h"
#include "../lib/quotaname.h"

/* The subcommand of acl or rule `c`: list 0, add 1, remove 2, with
 * a->command `first` + that and `want`[that] operands (with c's name and
 * the subcommand's); or -1, with the error said. */
static int list_add_remove(struct args *a, const struct commands_entry *c,
                           const struct operands *ops, int first,
                           const unsigned want[3])
{
        static const char *const subs[] = {"list", "add", "remove"};
        int i;

        for (i = 0; i < 3; i++) {
                if (strcmp(ops->v[1], subs[i]) == 0) {
                        break;
                }
        }
        if (i == 3) {
                args_bad(a,
                         "%s: unknown subcommand \"%s\" (list, add or remove)",
                         c->name, ops->v[1]);
                return -1;
        }
        a->command = first + i;
        if (ops->n != want[i]) {
                args_bad(a, "%s %s: %s (usage: batonctl %s)", c->name, subs[i],
                         ops->n < want[i] ? "too few arguments"
                                          : "too many arguments",
                         c->synopsis);
                return -1;
        }
        return i;
}

/* acl list | add IDENTITY ROLE | remove IDENTITY. */
void args_acl(struct args *a, const struct commands_entry *c,
              const struct operands *ops)
{
        static const char *const roles[] = {"none", "read", "lock", "admin"};
        static const unsigned want[] = {2, 4, 3};
        unsigned i;

        if (list_add_remove(a, c, ops, ARGS_ACL_LIST, want) < 0) {
                return;
        }
        a->identity = ops->n > 2 ? ops->v[2] : NULL;
        if (a->command != ARGS_ACL_ADD) {
                return;
        }
        for (i = 0; i < 4; i++) {
                if (strcmp(ops->v[3], roles[i]) == 0) {
                        a->role = (int)i;
                        return;
                }
        }
        args_bad(a, "acl add: \"%s\" is not a role (admin, lock, read or none)",
                 ops->v[3]);
}

/* rule list | add SUBJECT PREFIX PERMS | remove SUBJECT PREFIX. */
void args_rule(struct args *a, const struct commands_entry *c,
               const struct operands *ops)
{
        static const unsigned want[] = {2, 5, 4};
        const char *sub = ops->v[1], *subject;

        if (list_add_remove(a, c, ops, ARGS_RULE_LIST, want) <= 0) {
                return; /* wrong, or list */
        }
        a->subject = subject = ops->v[2];
        a->rule_prefix = ops->v[3];
        /* libbaton refuses these too, but as a full list would be. */
        if (strncmp(subject, "group:", 6) == 0) {
                subject += 6;
        }
        if (subject[0] == '\0' || strlen(subject) > BATON_ACL_IDENTITY_MAX) {
                args_bad(a,
                         "rule %s: SUBJECT \"%s\": an identity or group:NAME, "
                         "of 1 to %d bytes",
                         sub, a->subject, BATON_ACL_IDENTITY_MAX);
        } else if (strlen(a->rule_prefix) > BATON_ACL_PREFIX_MAX) {
                args_bad(a, "rule %s: PREFIX: %zu bytes, at most %d", sub,
                         strlen(a->rule_prefix), BATON_ACL_PREFIX_MAX);
        } else if (a->command == ARGS_RULE_ADD &&
                   permname_parse(ops->v[4], &a->perms) != 0) {
                args_bad(a,
                         "rule add: \"%s\" is not a permission (read, lock, "
                         "manage, or a list of them: lock,manage)",
                         ops->v[4]);
        }
}

/* quota list | set SUBJECT KIND=N... | remove SUBJECT. */
void args_quota(struct args *a, const struct commands_entry *c,
                const struct operands *ops)
{
        static const char *const subs[] = {"list", "set", "remove"};
        uint32_t limit[BATON_QUOTA_KINDS] = {0};
        const char *sub = ops->v[1];
        unsigned i, k;
        int rv;

        for (i = 0; i < 3 && strcmp(sub, subs[i]) != 0; i++) {
        }
        if (i == 3) {
                args_bad(
                    a, "quota: unknown subcommand \"%s\" (list, set or remove)",
                    sub);
                return;
        }
        a->command = ARGS_QUOTA_LIST + (int)i;
        if ((i == 0 && ops->n != 2) || (i == 1 && ops->n < 4) ||
            (i == 2 && ops->n != 3)) {
                args_bad(a, "quota %s: %s (usage: batonctl %s)", sub,
                         ops->n < (i == 0   ? 2u
                                   : i == 1 ? 4u
                                            : 3u)
                             ? "too few arguments"
                             : "too many arguments",
                         c->synopsis);
                return;
        }
        if (i == 0) {
                return;
        }
        a->subject = ops->v[2];
        if (a->subject[0] == '\0' ||
            strlen(a->subject) > BATON_ACL_IDENTITY_MAX) {
                args_bad(
                    a,
                    "quota %s: SUBJECT \"%s\": an identity or *, of 1 to %d "
                    "bytes",
                    sub, a->subject, BATON_ACL_IDENTITY_MAX);
                return;
        }
        for (i = 3; i < ops->n; i++) {
                rv = quotaname_parse_word(ops->v[i], strlen(ops->v[i]), limit);
                if (rv != 0) {
                        args_bad(a,
                                 rv == -1
                                     ? "quota set: \"%s\" is not KIND=N (KIND "
                                       "sessions, locks, waiters, watches or "
                                       "rate)"
                                     : "quota set: \"%s\": N is 0..4294967295 "
                                       "or none",
                                 ops->v[i]);
                        return;
                }
        }
        for (k = 0; k < BATON_QUOTA_KINDS; k++) {
                a->quota[k] = limit[k];
        }
}
