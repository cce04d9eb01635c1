/* What libbaton's deciding code asks of its environment: random numbers and
 * a session's secret bytes, so that a simulation can draw them from a seed
 * and replay a run exactly, while libbaton draws them from the kernel; and
 * an optional tracer that tells a simulation's checkers what it believes. */
#ifndef CLIENT_COREENV_H
#define CLIENT_COREENV_H

#include <stddef.h>
#include <stdint.h>

struct core_tracer;
struct locks_hold;

/*
 * Both are called in the middle of a decision (a backoff, a retry, an
 * OPEN), which needs the answer at once, with the handle's mutex held: a
 * call, not an effect left for the host. libbaton's is clock_env().
 */
struct core_env {
        void *data;
        /* A random non-zero number: the jitter of backoffs and retries, the
         * nonce of an OPEN. */
        uint64_t (*random)(void *data);
        /* `n` unguessable bytes into `buf`: a session's secret, whose hash
         * alone goes out. 0, or BATON_EIO when none can be had. */
        int (*secret)(void *data, uint8_t *buf, size_t n);
        /* Borrowed: told of every change of the lock table and of the
         * reported session state; NULL (libbaton's) for none. */
        const struct core_tracer *tracer;
};

/* Why a hold of the lock table changed (core_tracer.hold). */
enum core_hold_change {
        CORE_HOLD_SET = 1,   /* the cluster granted it (again): a new count
                                or token */
        CORE_HOLD_RELEASED,  /* the cluster answered a RELEASE of it */
        CORE_HOLD_ENDED,     /* lost with its session: expired, or ended by
                                the cluster or a CLOSE */
        CORE_HOLD_REVOKED,   /* lost to an administrator's revoke */
        CORE_HOLD_FORGOTTEN, /* the session was detached: dropped, still
                                held in the cluster */
};

/*
 * An observer of what the core believes, for a simulation's checkers (as
 * raft_tracer is for raft): each call comes with the `now` of the input
 * that made the change, the core consistent (the change made), and the
 * handle's mutex held; it may read the core but not call into it. A
 * simulation gives each client its own environment, so that `data` says
 * whose core it is.
 */
struct core_tracer {
        void *data;
        /* A hold changed: `h` (borrowed for the call) now has `count`
         * holds, 0 when it left the table. `now` is LOCKS_NO_TIME for a
         * change recorded without a time (libbaton records none such; a
         * simulation's tracer treats one as a failure). */
        void (*hold)(void *data, const struct locks_hold *h, int change,
                     uint32_t count, int64_t now);
        /* The state session_tick() reports changed to `state` (enum
         * baton_session_state) for `session`, the latest one opened. */
        void (*lease)(void *data, uint64_t session, int state, int64_t now);
};

/* `ms` scaled by a random factor in [0.5, 1.5) drawn from `env`, so that
 * clients retrying after the same event do not move in step; 0 (and no
 * draw) for `ms` <= 0. */
int64_t coreenv_jitter(const struct core_env *env, int64_t ms);

#endif /* CLIENT_COREENV_H */
