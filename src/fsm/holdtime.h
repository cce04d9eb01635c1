/* Hold times in the lock state machine (docs/fsm.md, "Hold times"): a
 * grant acquired with one ends when the leader's clock says it ran out,
 * through an EXPIRE_HOLD entry, unless its holder restarted it with
 * EXTEND. Time reaches the machine only through the log: the machine
 * records which entry each clock dates from, and an EXPIRE_HOLD that
 * names an older one changes nothing. */
#ifndef FSM_HOLDTIME_H
#define FSM_HOLDTIME_H

#include "state.h"
#include "step.h"
#include "types.h"

/* Whether clock `k` fits hold `h` (a waiter if `waiting`) of a state
 * whose last entry is `last_index`: a waiter's and a clockless hold's date
 * from no entry; a grant's from its grant or later, and not after the
 * last entry. */
static inline bool holdtime_clock_ok(const struct hold *h, bool waiting,
                                     struct hold_clock k, uint64_t last_index)
{
        if (waiting || k.hold_ms == 0) {
                return k.armed == 0;
        }
        return k.armed >= h->token && k.armed <= last_index;
}

/* EXTEND for live session `s`: the grant of the command's owner that its
 * token names holds for at most its hold_ms from this entry (EXTEND
 * event). UPDATED with the grant's fields, or BATON_ENOTHOLDER (the owner
 * holds no grant of the name), BATON_ESTALE (another token), BATON_EINVAL
 * (the grant was acquired without a hold time). */
void holdtime_extend(const struct step *st, struct session *s,
                     struct lockfsm_result *res);

/* EXPIRE_HOLD: end the grant that the command's session's ACQUIRE of seq
 * `target` made on its lock, if its clock dates from entry `token`, as
 * REVOKE_LOCK ends a grant (lock-delay, the next waiter's higher token,
 * the session's `revoked` count). RELEASED with its token, or
 * BATON_ENOTHOLDER when there is no such grant or its clock restarted
 * since (a late or repeated expiry). */
void holdtime_expire(const struct step *st, struct lockfsm_result *res);

#endif /* FSM_HOLDTIME_H */
