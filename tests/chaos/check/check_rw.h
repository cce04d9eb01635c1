/* Checker S11 of a chaos run (checks.c): read/write exclusion at the
 * fenced register, from the rwlock workload's ENTER and LEAVE requests. */
#ifndef CHAOS_CHECK_CHECK_RW_H
#define CHAOS_CHECK_CHECK_RW_H

#include "checks.h"

/* S11: no reader inside the register with a writer, no two writers, unless
 * fencing had turned the older one out after its grant ended. */
void check_s11(const struct run *r, struct check_result *res);

#endif /* CHAOS_CHECK_CHECK_RW_H */
