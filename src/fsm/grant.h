/* Lock acquisition and release in the lock state machine: grants, the FIFO
 * queue of waiters, and handing a lock on to the head of its queue. */
#ifndef FSM_GRANT_H
#define FSM_GRANT_H

#include <stdbool.h>
#include <stdint.h>

#include "../proto/command.h"
#include "lockfsm.h"
#include "state.h"
#include "step.h"

/* Memory an ACQUIRE may need, allocated before anything changes. */
struct grant_prep {
        struct lock *lock; /* when the lock does not exist yet */
        struct hold *hold;
};

/* Allocate what an ACQUIRE of `c` may need (a hold, and the lock when it
 * does not exist yet) before anything changes. 0 or BATON_ENOMEM (nothing
 * allocated). The caller frees what grant_acquire() leaves in `p`. */
int grant_prepare(struct lockfsm *f, const struct command *c,
                  struct grant_prep *p);

/* ACQUIRE for live session `s`: grant, re-enter, queue or refuse, taking
 * from `p` what it keeps. */
void grant_acquire(const struct step *st, struct session *s,
                   struct grant_prep *p, struct lockfsm_result *res);

/* RELEASE for live session `s`. */
void grant_release(const struct step *st, struct session *s,
                   struct lockfsm_result *res);

/* CANCEL (by the client, `status` BATON_ECANCELLED) or TIMEOUT (by the
 * leader, BATON_ETIMEDOUT) of a waiting ACQUIRE of live session `s`. */
void grant_unwait(const struct step *st, struct session *s, int status,
                  struct lockfsm_result *res);

/* Whether the head of `l`'s queue could be admitted now: a writer when no
 * one holds `l`, a reader when no writer does, a semaphore's waiter when
 * its permits are free; a reader or a semaphore's waiter only while `l`
 * has fewer than max_holders_per_lock grants. Between entries only a
 * deferred lock's can (lockfsm.c). */
bool grant_admissible(const struct lockfsm *f, const struct lock *l);

/* Admit the head of `l`'s queue while it can be: a writer alone, or a
 * reader and every reader behind it up to the next writer, each granted
 * with this entry's index, unless this entry granted `l` already in a way
 * that forbids it (docs/fsm.md, "One entry, one group"). */
void grant_next(const struct step *st, struct lock *l);

/* End a grant (freeing `g`); hand its lock on, or drop it when free. */
void grant_end(const struct step *st, struct hold *g);

/* End a grant lost involuntarily (its session expired or was revoked):
 * when that EXPIRE or REVOKE carries a delay, a read/write lock first
 * enters its lock-delay (BLOCK event). */
void grant_lost(const struct step *st, struct hold *g);

/* UNBLOCK: end the lock-delay of the lock the command names, if it is
 * the instance its target (creation stamp) names; hand it on. */
void grant_unblock(const struct step *st, struct lockfsm_result *res);

/* Remove (and free) a waiter that leaves without a grant. */
void grant_drop_wait(const struct step *st, struct hold *w, int status);

/* Any mode, for grant_find_holder(). */
#define GRANT_ANY_MODE (-1)

/* The grant of (session, owner) on `l` in `mode` (COMMAND_MODE_*, or
 * GRANT_ANY_MODE), or NULL. */
struct hold *grant_find_holder(const struct lock *l, uint64_t session,
                               uint64_t owner, int mode);

#endif /* FSM_GRANT_H */
