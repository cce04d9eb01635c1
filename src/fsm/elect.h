/* Values of grants in the lock state machine: an election's leader's
 * advertised value, changed by PROCLAIM (docs/fsm.md, "Elections"), and
 * any grant's data, changed by SET_VALUE ("Values"). */
#ifndef FSM_ELECT_H
#define FSM_ELECT_H

#include "grant.h"
#include "state.h"
#include "step.h"
#include "types.h"

/* Allocate the record a PROCLAIM or SET_VALUE of `c` needs (the holder's
 * hold, with room for the new value) into `p->hold` before anything
 * changes. 0 or BATON_ENOMEM. The caller frees what elect_proclaim()
 * leaves in `p`. */
int elect_prepare(struct lockfsm *f, const struct command *c,
                  struct grant_prep *p);

/*
 * PROCLAIM or SET_VALUE for live session `s`: the holder (session, owner)
 * of the grant of the named lock that the command's token names carries
 * the command's value from now on, keeping its grant and token
 * (PROCLAIMED, and a PROCLAIM event: a holder's value changed).
 * BATON_ENOTHOLDER when (session, owner) holds no grant of it (a waiter
 * does not), BATON_ESTALE when it holds one with another token; for a
 * PROCLAIM, BATON_EKIND when the name is a lock's or a semaphore's.
 */
void elect_proclaim(const struct step *st, struct session *s,
                    struct grant_prep *p, struct lockfsm_result *res);

#endif /* FSM_ELECT_H */
