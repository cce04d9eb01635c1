/* Multi-locks in the lock state machine: several names taken all at once
 * by one entry, or waited for as one waiter (docs/fsm.md, "Multi-locks"). */
#ifndef FSM_MULTI_H
#define FSM_MULTI_H

#include <stdbool.h>
#include <stdint.h>

#include "../proto/command.h"
#include "state.h"
#include "step.h"
#include "types.h"

/*
 * A MULTI names n distinct read/write locks, each in its own mode. It is
 * granted at once when each name could be granted at once on its own, all
 * with this entry's index; otherwise a try is refused busy and a blocking
 * one queues a waiter on every name (holds with `multi` set, sharing the
 * MULTI's seq and stamp), admitted only when every one of them is at the
 * head of its queue and fits (grant_fits()). Because every queue is in
 * stamp order, the oldest waiting multi-lock waits for holders only, never
 * for another waiter: multi-lockers cannot deadlock one another.
 */

/* Memory a MULTI may need: a hold per name, and each lock that does not
 * exist yet. */
struct multi_prep {
        unsigned n;
        struct hold *hold[COMMAND_MULTI_MAX];
        struct lock *lock[COMMAND_MULTI_MAX]; /* NULL: the lock exists */
};

/* Allocate what a MULTI of `c` may need before anything changes. 0 or
 * BATON_ENOMEM (nothing allocated). multi_prep_free() frees what
 * multi_acquire() leaves. */
int multi_prepare(struct lockfsm *f, const struct command *c,
                  struct multi_prep *p);
void multi_prep_free(struct lockfsm *f, struct multi_prep *p);

/* MULTI for live session `s`: grant every name, queue on every name, or
 * refuse, taking from `p` what it keeps. */
void multi_acquire(const struct step *st, struct session *s,
                   struct multi_prep *p, struct lockfsm_result *res);

/* Whether the multi-lock that waiter `w` is a name of can be admitted:
 * every name of it fits; with `entry`, the entry being applied may grant
 * each too (grant_entry_allows()). */
bool multi_ready(const struct lockfsm *f, const struct hold *w, bool entry);

/* The locks of the multi-lock `w` is a name of, in lock age order: their
 * number, at most COMMAND_MULTI_MAX. */
unsigned multi_locks(const struct hold *w, struct lock **out);

/* Grant every name of the multi-lock `w` is a name of (multi_ready()). */
void multi_grant(const struct step *st, struct hold *w);

/* Remove every name of the multi-lock `w` is a name of, which leaves
 * without a grant (UNQUEUE events with `status`), and hand each lock on. */
void multi_drop(const struct step *st, struct hold *w, int status);

/* The invariants of a session's multi-lock waits, for lockfsm_check():
 * NULL, or a description of the first one broken. */
const char *multi_check(const struct session *s);

#endif /* FSM_MULTI_H */
