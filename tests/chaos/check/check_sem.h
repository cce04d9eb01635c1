/* Checker S12 of a chaos run (checks.c): no more holders of a semaphore's
 * permits inside the fenced register's pool than it has permits, from the
 * semaphore workload's ENTER and LEAVE requests. */
#ifndef CHAOS_CHECK_CHECK_SEM_H
#define CHAOS_CHECK_CHECK_SEM_H

#include "checks.h"

/* S12: never more permits inside a pool than its semaphore has, counting
 * the holders whose grants were current at one index; holders whose grants
 * had ended (stale, the register not yet told) are counted apart. */
void check_s12(const struct run *r, struct check_result *res);

#endif /* CHAOS_CHECK_CHECK_SEM_H */
