/* The deciding part of libbaton behind one handle: which node to reach and
 * when, which request goes out (again) with which seq, what each answer
 * means for the session, the lock table and the caller, and the local
 * lease. It takes calls, frames, connection events and the time as
 * arguments and leaves effects for its host; it does no I/O, reads no
 * clock, takes no lock and runs no user callback. */
#ifndef CLIENT_CORE_H
#define CLIENT_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "coreenv.h"
#include "link.h"
#include "locks.h"
#include "notify.h"
#include "registry.h"
#include "session.h"

/*
 * The parts are the core's own modules, reached through it: the link's
 * decisions and its outbox (link.h), the requests on their way
 * (registry.h), the session and its lease (session.h), the lock table and
 * the queue of the user's callbacks. Its host (libbaton's handle, or a
 * simulation) carries out the link's attempts (link_dial(),
 * link_conn_up(), link_conn_frame(), link_conn_failed()), writes the
 * outbox, acts on the registry's flags (`changed`, `loop_needed`,
 * `write_now`), runs the callbacks it pops, and waits between a call's
 * steps (session_ensure_step(), session_submit_step()).
 *
 * Threading: none of its own. Any thread may call it while it holds the
 * host's lock; a simulation calls it from its one thread.
 */
struct core {
        struct link link;         /* decisions and the outbox */
        struct registry registry; /* requests on their way, and the flags */
        struct session session;
        struct locks locks;
        struct notify notify; /* the user's callbacks, queued */
};

struct core_config {
        uint32_t ttl_ms;
        uint32_t lock_delay_ms;
        /* Both borrowed for the core's life: the name sent with each OPEN,
         * and the 1.. "host:port" endpoints. */
        const char *client_name;
        const char (*endpoints)[LINK_ADDR_MAX];
        unsigned n_endpoints;
        /* The host's hook for the events of a WATCH request
         * (registry_owner.watch_event; `data` is the core's session). */
        void (*watch_event)(void *data, struct request *r,
                            const struct proto_watch_event *e, void **shared);
};

/* Set up `k` with `cfg` and `env` (borrowed for the core's life). 0 or
 * BATON_ENOMEM; nothing to clean up on failure. */
int core_init(struct core *k, const struct core_config *cfg,
              const struct core_env *env);

/* Free every request, notice and hold (the host has let go of the link). */
void core_close(struct core *k);

/* The lease as of `now`: what an API call does first (session_tick()). */
void core_lease_tick(struct core *k, int64_t now);

/* Whether the core wants a connection: a request on its way, or a session
 * to keep alive. */
bool core_wants_link(const struct core *k);

/* The connection attempt the core wants at `now`, as a level: it dials a
 * new one (link_dial(), k->link.peer its address) when it wants a link,
 * none is in hand and the backoff allows. The id of the attempt in hand,
 * 0 for none: the host carries out that one and gives up any other. */
uint64_t core_dial(struct core *k, int64_t now);

/* The background round on an established connection at `now`: silence,
 * the PING, what is pending into the outbox (registry_step()). */
void core_tick(struct core *k, int64_t now);

/* When core_lease_tick() or core_tick() next has work (CLOCK_NEVER:
 * none); a connection attempt's own timers are the host's. */
int64_t core_next_tick(const struct core *k);

/* The next of the user's callbacks to run (transferred, or NULL). */
struct notify_event *core_next_notice(struct core *k);

/* --- The acquire calls, stepped ------------------------------------------
 * baton_acquire() and its kin run as an operation of the core on their
 * caller's stack (acqop.h): acqop_step() decides what goes out next (the
 * ACQUIRE, and when the cluster forgot its outcome the CANCEL, QUERY, try
 * and RELEASE that recover it) and what the call answers; the host waits
 * between the steps, asking acqop_verdict() whether to give up. */
#include "acqop.h"

/* What a call waiting since pass `mark` on `r` (NULL: nothing of its own
 * went out) answers now: registry_unreachable(), or at its deadline
 * (`expired`) registry_no_answer(), with the detail in `why`. */
int core_verdict(const struct core *k, uint64_t mark, const struct request *r,
                 bool expired, char *why, size_t size);

/* --- Belief: what the core believes of its lease and locks --------------
 *
 * For a simulation's client-view checker: read without ticking, so that a
 * core is judged by what its client would report at a time of the
 * checker's choosing, whether or not its loop has run since. Changes as
 * they happen go to the environment's tracer (struct core_tracer,
 * coreenv.h). */

/* The session's lease as seen at a time (core_belief()). */
struct core_belief {
        /* The session open or being validated; 0: none. */
        uint64_t session;
        /* enum baton_session_state at that time. */
        int state;
        /* The send time of the last acknowledged keepalive (of the OPEN
         * for a new session), and the first ms of JEOPARDY (acked_sent +
         * TTL/2 + 1) and of EXPIRED (acked_sent + TTL - margin) it gives. */
        int64_t acked_sent;
        int64_t jeopardy_at;
        int64_t expires_at;
        /* Opened late: not live until a keepalive is acknowledged,
         * whatever the times say. */
        bool validating;
};

/*
 * What baton_session_state() would report at `t` (no earlier than the
 * core's last input), into `b`, changing nothing: LIVE before
 * jeopardy_at, JEOPARDY before expires_at, EXPIRED from then or once the
 * cluster said the session ended (session 0); a session validating keeps
 * the state reported before it. With no session the times are 0.
 */
void core_belief(const struct core *k, int64_t t, struct core_belief *b);

/* Call `cb` with each hold of the session open (name, owner, mode, token,
 * count; borrowed for the call), in the order they were first granted;
 * none with no session. `cb` must not call into the core. */
void core_holds(const struct core *k,
                void (*cb)(void *data, const struct locks_hold *h), void *data);

#endif /* CLIENT_CORE_H */
