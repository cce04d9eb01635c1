/* Checker S15 of a chaos run: the unfenced register's writers (the
 * supervise workload's commands, run by batonctl lock -- CMD) never
 * overlap, in the order of their writes and in real time. */
#ifndef CHAOS_CHECK_CHECK_UNFENCED_H
#define CHAOS_CHECK_CHECK_UNFENCED_H

#include "checks.h"
#include "run.h"

/*
 * S15: per lock, in the unfenced register's log order, tokens never go
 * down (a write by an older holder after a newer holder's: two holders at
 * once); and, unless the plan ran a clock fault, no write's time (taken
 * before it) is after the first apply, on any node, of its grant's end
 * (the RELEASE of its token, or its session's END) or of the lock's next
 * GRANT: batonctl's promise that the command is dead before the cluster
 * can grant the lock to anyone else. A grant the apply logs do not hold:
 * UNKNOWN. No log: PASS.
 */
void check_s15(const struct run *r, struct check_result *res);

#endif /* CHAOS_CHECK_CHECK_UNFENCED_H */
