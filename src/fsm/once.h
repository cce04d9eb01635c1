/* The exactly-once memory of the lock state machine: client commands
 * (CLOSE, ACQUIRE, RELEASE, CANCEL) checked against their session's
 * remembered outcomes before they run. */
#ifndef FSM_ONCE_H
#define FSM_ONCE_H

#include "step.h"
#include "types.h"

/* Apply a client command: a duplicate gets its remembered outcome, a new
 * one runs and is remembered. 0 or BATON_ENOMEM (nothing changed). */
int once_apply(const struct step *st, struct lockfsm_result *res);

#endif /* FSM_ONCE_H */
