/* Checkers S9 and S10 of a chaos run (checks.c): the nodes' apply logs
 * agree, and ended sessions and leases. */
#ifndef CHAOS_CHECK_CHECK_NODES_H
#define CHAOS_CHECK_CHECK_NODES_H

#include "checks.h"

/* S9: every index two nodes logged has the same events. */
void check_s9(const struct run *r, struct check_result *res);

/* S10: no expiry before a lease a worker was told, and only refusals after
 * a session's END. */
void check_s10(const struct run *r, struct check_result *res);

#endif /* CHAOS_CHECK_CHECK_NODES_H */
