/* Checkers S1, S8 and L3 of a chaos run (checks.c): one replay of the
 * merged apply log, lock by lock. */
#ifndef CHAOS_CHECK_CHECK_REPLAY_H
#define CHAOS_CHECK_CHECK_REPLAY_H

#include "checks.h"

/* S1 (no GRANT while an earlier grant is live), S8 (handoffs go to the
 * head of the queue; nothing for an ended session) and L3 (nothing held or
 * queued at the end of the log). */
void check_replay(const struct run *r, struct check_result *s1,
                  struct check_result *s8, struct check_result *l3);

#endif /* CHAOS_CHECK_CHECK_REPLAY_H */
