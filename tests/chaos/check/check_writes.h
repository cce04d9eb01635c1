/* Checkers S4 and S5 of a chaos run (checks.c): completions the log must
 * hold, and the fenced register's writes. */
#ifndef CHAOS_CHECK_CHECK_WRITES_H
#define CHAOS_CHECK_CHECK_WRITES_H

#include "checks.h"

/* S4: each ok release, close and write is in the logs. */
void check_s4(const struct run *r, struct check_result *res);

/* S5: per register key, tokens never go down and no update is lost. */
void check_s5(const struct run *r, struct check_result *res);

#endif /* CHAOS_CHECK_CHECK_WRITES_H */
