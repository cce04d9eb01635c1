/* batonctl's operands of the access list's commands (acl, rule, quota),
 * checked for args_parse() (args.h), which has found the command. */
#ifndef CLI_ARGSACL_H
#define CLI_ARGSACL_H

#include "args.h"
#include "commands.h"

/* The operands kept; more only count (the first extra one is named). */
#define ARGS_MAX_OPERANDS (1 + ARGS_NAMES_MAX)

/* The operands in order, with what follows "--" appended (except for lock,
 * where that is the command to run). */
struct operands {
        const char *v[ARGS_MAX_OPERANDS];
        unsigned n;
};

/* Record in a->errmsg the first thing found wrong; later ones are
 * dropped. */
void args_bad(struct args *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The command `c` (acl, rule or quota) and its operands `ops` (the
 * subcommand first) into `a`: a->command the subcommand's, and what it
 * names; or the error in a->errmsg. */
void args_acl(struct args *a, const struct commands_entry *c,
              const struct operands *ops);
void args_rule(struct args *a, const struct commands_entry *c,
               const struct operands *ops);
void args_quota(struct args *a, const struct commands_entry *c,
                const struct operands *ops);

#endif /* CLI_ARGSACL_H */
