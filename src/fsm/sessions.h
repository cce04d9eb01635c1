/* Sessions in the lock state machine: OPEN, CLOSE and EXPIRE, and the
 * lookups of live and ended sessions. */
#ifndef FSM_SESSIONS_H
#define FSM_SESSIONS_H

#include <stdint.h>

#include "state.h"
#include "step.h"
#include "types.h"

/* OPEN: a new session, or the one an OPEN with the same nonce made. 0 or
 * BATON_ENOMEM (nothing changed). */
int sessions_open(const struct step *st, struct lockfsm_result *res);

/* CLOSE and EXPIRE (`reason` BATON_ECLOSED or BATON_EEXPIRED): drop the
 * session's waits, release its grants, and leave a tombstone. */
void sessions_end(const struct step *st, struct session *s, int reason,
                  struct lockfsm_result *res);

/* Refuse a command for a session that is not live: EEXPIRED or ECLOSED from
 * its tombstone, else ENOSESSION. */
void sessions_reject_dead(const struct lockfsm *f, uint64_t session,
                          struct lockfsm_result *res);

#endif /* FSM_SESSIONS_H */
