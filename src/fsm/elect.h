/* Elections in the lock state machine: the part an election adds to a
 * lock, its leader's advertised value (docs/fsm.md, "Elections"). */
#ifndef FSM_ELECT_H
#define FSM_ELECT_H

#include "grant.h"
#include "state.h"
#include "step.h"
#include "types.h"

/* Allocate the record a PROCLAIM of `c` needs (the leader's hold, with
 * room for the new value) into `p->hold` before anything changes. 0 or
 * BATON_ENOMEM. The caller frees what elect_proclaim() leaves in `p`. */
int elect_prepare(struct lockfsm *f, const struct command *c,
                  struct grant_prep *p);

/*
 * PROCLAIM for live session `s`: the leader of the election the command
 * names, whose leadership its token names, advertises the command's value
 * from now on, keeping its leadership and token (PROCLAIMED, and a
 * PROCLAIM event). BATON_ENOTHOLDER when (session, owner) does not lead
 * it, BATON_ESTALE when it leads with another token, BATON_EKIND when the
 * name is a lock or a semaphore.
 */
void elect_proclaim(const struct step *st, struct session *s,
                    struct grant_prep *p, struct lockfsm_result *res);

#endif /* FSM_ELECT_H */
