/* batonctl's output of the cluster's rules on lock names: text in the
 * config file's words for people, or JSON for scripts. */
#ifndef CLI_PRINTRULE_H
#define CLI_PRINTRULE_H

#include <stdbool.h>
#include <stdio.h>

#include "../../include/baton.h"

/* The rules on lock names: `rule = SUBJECT "PREFIX" PERMS` a rule, as a
 * config file says them (group:NAME for a group; the prefix quoted, `"`
 * and `\` escaped; PERMS as permname_format() writes them), or one line
 * saying there are none; or one JSON object {"rules":[...]}, each rule
 * with "subject", "group", "prefix" and "perms" (every permission by
 * name, read included). */
void print_rules(FILE *out, bool json, const struct baton_rules *rules);
/* One line: `subject` (as given: group:NAME for a group) has `perms` on
 * `prefix`, or its rule there was removed (perms -1); or one JSON
 * object. */
void print_rule_changed(FILE *out, bool json, const char *subject,
                        const char *prefix, int perms);

#endif /* CLI_PRINTRULE_H */
