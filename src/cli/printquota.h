/* batonctl's output of the cluster's quotas per identity: text in the
 * config file's words for people, or JSON for scripts. */
#ifndef CLI_PRINTQUOTA_H
#define CLI_PRINTQUOTA_H

#include <stdbool.h>
#include <stdio.h>

#include "../../include/baton.h"

/*
 * The quotas: `quota = SUBJECT KIND=N ...` a quota, as a config file says
 * it (only the kinds it limits), then for an identity what it uses now,
 * `(in use: sessions=N locks=N waiters=N)`; or one line saying there are
 * none. Or one JSON object {"quotas":[...]}, each quota with "subject",
 * "limits" (an object of every kind, 0: no limit) and "used" (sessions,
 * locks and waiters; absent for "*").
 */
void print_quotas(FILE *out, bool json, const struct baton_quotas *quotas);

/* One line: `subject` now has the quota `limits` (BATON_QUOTA_KINDS of
 * them), or its quota was removed (`limits` NULL); or one JSON object. */
void print_quota_changed(FILE *out, bool json, const char *subject,
                         const unsigned *limits);

#endif /* CLI_PRINTQUOTA_H */
