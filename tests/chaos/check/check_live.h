/* Checkers L1, L2 and L4 of a chaos run (checks.c): progress after the
 * final heal and throughout, and the exits and logs of every process. */
#ifndef CHAOS_CHECK_CHECK_LIVE_H
#define CHAOS_CHECK_CHECK_LIVE_H

#include "checks.h"

/* L1: every worker completes an acquire and a release after the final
 * heal; records the recovery time in `st`. */
void check_l1(const struct run *r, struct check_result *res,
              struct check_stats *st);

/* L2: no long gap between ok completions outside faults; records the
 * longest in `st`. */
void check_l2(const struct run *r, struct check_result *res,
              struct check_stats *st);

/* L4: expected exits only, and no sanitizer or assertion reports. */
void check_l4(const struct run *r, struct check_result *res);

#endif /* CHAOS_CHECK_CHECK_LIVE_H */
