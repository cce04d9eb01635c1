/* Lock acquisition and release in the lock state machine: grants, the FIFO
 * queue of waiters, and handing a lock on to the head of its queue. */
#ifndef FSM_GRANT_H
#define FSM_GRANT_H

#include <stdbool.h>
#include <stdint.h>

#include "../proto/command.h"
#include "state.h"
#include "step.h"
#include "types.h"

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

/* Whether waiter `w` is the head of its lock's queue and could be
 * admitted on that lock's terms now: a writer when no one holds it, a
 * reader when no writer does, a semaphore's waiter when its permits are
 * free; none while the lock is in its lock-delay or has
 * max_holders_per_lock grants. */
bool grant_fits(const struct lockfsm *f, const struct hold *w);

/* Whether the head of `l`'s queue could be admitted now: it fits, and if
 * it is a name of a multi-lock, every other name of it fits too. Between
 * entries only a deferred lock's can (lockfsm.c). */
bool grant_admissible(const struct lockfsm *f, const struct lock *l);

/* Whether the entry being applied may still admit `mode` to `l`: a writer
 * only to a lock it has not granted yet (its token must be its own), a
 * reader or a semaphore's holder to one it has granted to no writer. */
bool grant_entry_allows(const struct lock *l, uint8_t mode);

/* Grant `h`, a new hold of a live session on its lock, with this entry's
 * index: GRANT event. */
void grant_new(const struct step *st, struct hold *h);

/* Grant waiter `w` with this entry's index: GRANT event, and its
 * remembered ACQUIRE outcome rewritten. */
void grant_take(const struct step *st, struct hold *w);

/* grant_next(), and with `groups` false it stops at a multi-lock's name
 * at the head instead of admitting the multi-lock (which grant_next()
 * does when all its names can be taken), so that granting one multi-lock
 * never recurses into another: the entry's end defers such a lock. */
void grant_admit(const struct step *st, struct lock *l, bool groups);

/* Admit the head of `l`'s queue while it can be: a writer alone, or a
 * reader and every reader behind it up to the next writer, each granted
 * with this entry's index, unless this entry granted `l` already in a way
 * that forbids it (docs/fsm.md, "One entry, one group"). */
void grant_next(const struct step *st, struct lock *l);

/* After a holder or a waiter left `l`: admit whom its queue's head
 * allows, or drop it when no one holds or waits. A lock this entry
 * granted stays until the entry's end, which drops or defers it. */
void grant_settle(const struct step *st, struct lock *l);

/* End a grant (freeing `g`); hand its lock on, or drop it when free. */
void grant_end(const struct step *st, struct hold *g);

/* End a grant lost involuntarily (its session expired or was revoked):
 * when that EXPIRE or REVOKE carries a delay, or the session has one of
 * its own, a read/write lock first enters its lock-delay (BLOCK event),
 * for the longer of the two. */
void grant_lost(const struct step *st, struct hold *g);

/* REVOKE_LOCK: end the grants of the lock the command names that its
 * session holds with its token, as lost ones (grant_lost()), counting
 * them in the session's `revoked`. RELEASED with count 0 and the token,
 * or BATON_ENOTHOLDER when there is none (a retry of one applied). */
void grant_revoke(const struct step *st, struct lockfsm_result *res);

/* UNBLOCK: end the lock-delay of the lock the command names, if it is
 * the instance its target (creation stamp) names; hand it on. */
void grant_unblock(const struct step *st, struct lockfsm_result *res);

/* Remove (and free) a waiter that leaves without a grant; a multi-lock's
 * name, with every other name of it. */
void grant_drop_wait(const struct step *st, struct hold *w, int status);

/* Any mode, for grant_find_holder(). */
#define GRANT_ANY_MODE (-1)

/* The grant of (session, owner) on `l` in `mode` (COMMAND_MODE_*, or
 * GRANT_ANY_MODE), or NULL. */
struct hold *grant_find_holder(const struct lock *l, uint64_t session,
                               uint64_t owner, int mode);

/* The grant of (session, owner) on `l` that `token` names (the write
 * grant first, when an owner's two grants share it), or NULL; `*held`
 * says whether the owner holds `l` at all: how RELEASE and SET_VALUE name
 * a grant. */
struct hold *grant_find_grant(const struct lock *l, uint64_t session,
                              uint64_t owner, uint64_t token, bool *held);

/* The grant of live session `s` that the command being applied names:
 * its lock's grant of (session, owner) with its token
 * (grant_find_grant()); NULL, `res` refused, when the owner holds no
 * grant of the lock (BATON_ENOTHOLDER) or one with another token
 * (BATON_ESTALE). How RELEASE, PROCLAIM, SET_VALUE and EXTEND name it. */
struct hold *grant_named(const struct step *st, const struct session *s,
                         struct lockfsm_result *res);

/* The wait of session `s` on `l` whose ACQUIRE had seq `key` (`by_seq`)
 * or whose owner is `key`, or NULL. A session's waits are bounded by
 * max_locks_per_session and usually few: the short list to search. */
struct hold *grant_find_wait(const struct session *s, const struct lock *l,
                             bool by_seq, uint64_t key);

#endif /* FSM_GRANT_H */
