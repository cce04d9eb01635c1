/* Checker S17 of a chaos run: grants with a hold time end on time. */
#ifndef CHAOS_CHECK_CHECK_HOLD_H
#define CHAOS_CHECK_CHECK_HOLD_H

#include "checks.h"

/* How late past its hold a grant may end: the EXPIRE_HOLD's proposal and
 * commit (an fsync on a majority) and the leader's timer. */
#define CHECK_HOLD_SLACK_MS 1000

/* How early an EXPIRE_HOLD may end a grant, against the first apply of
 * the entry its clock dates from: the leader times holds by its event
 * loop's clock, which is taken before the loop's callbacks run. */
#define CHECK_HOLD_EARLY_MS 50

/*
 * S17, per GRANT with a hold time in the merged apply log (the hold
 * workload's), with its clock dating from the first apply of the GRANT or
 * of the grant's last EXTEND before its end:
 *
 * - an end by EXPIRE_HOLD is not applied anywhere before the clock's
 *   start + hold_ms - CHECK_HOLD_EARLY_MS (a holder may count on the whole
 *   of its hold);
 * - its end (any RELEASE of it, or its session's END) is first applied no
 *   later than hold_ms + CHECK_HOLD_SLACK_MS after the later of the clock's
 *   start and the first apply of the latest term begun before the end (a
 *   new leader restarts every hold in full: it cannot know how much its
 *   predecessor counted). This bound is checked only where no fault that
 *   slows a live leader overlaps the window (every nemesis but the kills,
 *   the partitions and those that strike a client alone, and any clock
 *   fault); such grants are counted, not judged.
 *
 * A grant still held at the end is counted; L3 judges it.
 */
void check_s17(const struct run *r, struct check_result *res);

#endif /* CHAOS_CHECK_CHECK_HOLD_H */
