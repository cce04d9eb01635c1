/* One command's apply in the lock state machine: its context, and the events
 * and results it reports. */
#ifndef FSM_STEP_H
#define FSM_STEP_H

#include <stdint.h>

#include "../proto/command.h"
#include "state.h"
#include "types.h"

/* The context of one command's apply, so helpers can emit events. */
struct step {
        struct lockfsm *f;
        uint64_t index; /* the entry's: every token made here */
        uint64_t stamp; /* the command's: ids and order (state.h) */
        const struct command *c;
};

/* Report a hold's transition (GRANT, RELEASE, QUEUE, UNQUEUE) to the
 * event callback; `h` may be NULL. */
void step_emit(const struct step *st, uint8_t type, const struct hold *h,
               int status);

/* Report a session's transition (OPEN, END) to the event callback. */
/* A lock's own event (BLOCK, UNBLOCK): its name and creation stamp. */
void step_emit_lock(const struct step *st, uint8_t type, const struct lock *l);
void step_emit_session(const struct step *st, uint8_t type,
                       const struct session *s);

/* Report the outcome of the command being applied (a RESULT event). */
void step_emit_result(const struct step *st, const struct lockfsm_result *r);

/* Fill `res` with a refusal: kind REJECTED and `status`. */
void step_reject(struct lockfsm_result *res, int status);

/* Fill the result describing a grant (or a waiter) as its owner sees it. */
void step_describe(struct lockfsm_result *res, uint8_t kind,
                   const struct hold *h);

#endif /* FSM_STEP_H */
