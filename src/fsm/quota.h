/* Quotas per identity in the lock state machine: what each principal's
 * sessions hold and await, and the refusals at their limits. */
#ifndef FSM_QUOTA_H
#define FSM_QUOTA_H

#include <stdint.h>

#include "state.h"
#include "types.h"

/*
 * A session opened with a principal (OPEN's, src/proto/command.h) points
 * at its principal's record, which counts what the principal's live
 * sessions have: sessions, holds (grants and waits, as a session's
 * n_holds) and waits. A record lives while the principal has a live
 * session, so attaching and detaching holds never allocates. The limits
 * come from the host (lockfsm_set_quota_cb(): the access list's quotas,
 * src/fsm/acl.h) at apply, so every replica decides alike.
 */
struct quota_use {
        struct hnode node; /* lockfsm.uses, by principal */
        uint64_t principal;
        uint32_t sessions;
        uint32_t holds;
        uint32_t waits;
};

/* Free every record (the state is being closed). */
void quota_close(struct lockfsm *f);

/*
 * The record of `principal` (not 0), made if there is none: NULL when out
 * of memory (nothing changed). A record made here counts nothing until a
 * session links to it (state_session_link()); quota_unuse() drops one
 * that no session took.
 */
struct quota_use *quota_use_get(struct lockfsm *f, uint64_t principal);

/* Drop `u` if no session counts in it. */
void quota_unuse(struct lockfsm *f, struct quota_use *u);

/* The record of `principal`, or NULL. */
const struct quota_use *quota_use_find(const struct lockfsm *f,
                                       uint64_t principal);

/* 0, or BATON_EQUOTA (in `res`, with the quota's kind in `waiters` and its
 * limit in `count`) when a session of `principal` may not open now. */
int quota_check_open(const struct lockfsm *f, uint64_t principal,
                     struct lockfsm_result *res);

/* The same for `holds` more holds of session `s`, `waits` of them waits
 * (a grant: 1 and 0; a wait: 1 and 1; a multi-lock: its names). */
int quota_check_holds(const struct lockfsm *f, const struct session *s,
                      uint32_t holds, uint32_t waits,
                      struct lockfsm_result *res);

/* Check the records against the sessions (lockfsm_check()): each counted
 * session's record is in the map, and the records' counts add up to the
 * counted sessions'. NULL or the first violation. */
const char *quota_check_counts(const struct lockfsm *f);

#endif /* FSM_QUOTA_H */
