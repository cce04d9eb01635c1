/* The operations checker S7 gives the linearizability search: the lock
 * operations of the history, per lock, in the form of lincheck.h. */
#ifndef CHAOS_CHECK_LINOPS_H
#define CHAOS_CHECK_LINOPS_H

#include <stddef.h>

#include "lincheck.h"
#include "run.h"

/* The operations of one lock: a slice of struct linops.ops. */
struct linops_key {
        int key; /* the lock's id in the run's names */
        size_t first, n;
};

/*
 * How the history becomes operations (every operation of a lock, never a
 * chunk of them: the model needs a lock's whole history):
 *
 * - acquire ok: ACQUIRE, known, with its token; index = token.
 * - acquire info (or no completion): ACQUIRE, unknown, token 0 - unless the
 *   apply logs hold a GRANT of that lock to that session, applied after the
 *   invoke and not reported to any acquire: then that token and index.
 * - acquire fail BATON_EBUSY: BUSY (index: the RESULT refusing it, found
 *   by session, lock and apply time, so the fast path can order it). Other
 *   fails are dropped: the worker
 *   logs fail only for refusals that changed nothing (tests/chaos/ops.c).
 * - For every grant given to an unknown acquire this way, a RELEASE command
 *   of it in the apply logs that no history release reports was the
 *   library's background release of a grant its caller gave up on
 *   (include/baton.h, baton_acquire): an unknown RELEASE, invoked with the
 *   acquire.
 * - release ok: RELEASE, known (index: the RELEASE event of that lock and
 *   token, else 0). release info: RELEASE, unknown. release fail: dropped.
 * - holder ok: HOLDER with the observed session and token (index: index=).
 * - close ok / info: CLOSE, known / unknown, on every lock the session
 *   acquired or released (index: the session's END). The worker logs every
 *   close as info: destroying a handle reports nothing.
 * - A process that never logs a close still closes its session when it
 *   destroys its handle (after an info, and at exit): an unknown CLOSE of
 *   its last session after its last operation.
 * - One EXPIRE per session and lock it touched, unknown, from the largest
 *   lease= its worker reported (the cluster never expires a session before
 *   it), or from the session's first invoke when the plan says
 *   clock_fault=1 or no lease was reported (index: an END with cause
 *   EXPIRE).
 *
 * - A grant the leader ended when its hold time ran out (a RELEASE event
 *   with cause EXPIRE_HOLD, the hold workload's): an unknown RELEASE of it
 *   by its session, invoked at the grant's first apply.
 *
 * Synthetic operations (EXPIRE, a hold's expiry, the CLOSE at handle
 * destruction, the library's background RELEASE) run beside their worker, so
 * each gets a process id of its own, from 2^62 up.
 */
struct linops {
        struct lincheck_op *ops; /* grouped by lock, each by invoke time */
        size_t n, cap;
        struct linops_key *keys;
        size_t n_keys;
        size_t n_attributed; /* unknown acquires given a grant */
        size_t n_synthetic;  /* operations the history does not show */
};

/* Build the operations of `r` into `out` (free with linops_free()). */
void linops_build(struct linops *out, const struct run *r);

void linops_free(struct linops *l);

#endif /* CHAOS_CHECK_LINOPS_H */
