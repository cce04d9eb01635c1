/* The owner of every request of a handle that is on its way to the cluster:
 * it sends and resends them over the link, matches the answers, makes each
 * final exactly once, and withdraws those nobody waits for any more. */
#ifndef CLIENT_REGISTRY_H
#define CLIENT_REGISTRY_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "../lib/queue.h"
#include "../proto/attach.h"
#include "coreenv.h"
#include "link.h"
#include "linkio.h"
#include "request.h"

/* How a request became final. */
enum registry_end {
        REGISTRY_ANSWERED = 1, /* the cluster answered */
        REGISTRY_FAILED,       /* failed here: r->status says why */
        REGISTRY_LOST,         /* a keepalive whose connection closed
                                  (BATON_EIO): it is never resent */
};

/*
 * What the registry tells its owner (the handle). Both run with the
 * handle's mutex held, on whichever thread made the request final (or sent
 * it), and may submit new requests, dated `now`: the time the answer is
 * handled, or the failure given, on CLOCK_MONOTONIC in ms.
 */
struct registry_owner {
        void *data;
        /* `r` became final (`how`: enum registry_end): DONE (a caller
         * collects it) or ENDED (freed when this returns). */
        void (*final)(void *data, struct request *r, int how, int64_t now);
        /* The withdrawn wait `r` went out on a connection: follow it with
         * a CANCEL there, so that the cluster does not grant it behind the
         * back of the caller who gave up. */
        void (*withdraw)(void *data, struct request *r, int64_t now);
        /* An event `e` (borrowed for the call) of the WATCH `r`; NULL
         * when `r` became final (the watch ended). `shared` is NULL for an
         * end, else a slot of the frame's, NULL at first and kept across
         * the calls for every watch of the frame: what the owner puts
         * there on the first call is handed to it again on the others, so
         * that it can keep one copy of an event however many watches it
         * goes to (the owner frees what it put there). */
        void (*watch_event)(void *data, struct request *r,
                            const struct proto_watch_event *e, void **shared);
};

/*
 * Sending: requests go out in the order of the list. After a lost
 * connection, a NOT_LEADER answer or BATON_EUNKNOWN, every pending request
 * is sent again, byte for byte, to whichever node the link reaches next;
 * exactly-once in the cluster makes that safe. Keepalives and pings are
 * dated by their send and never resent: a keepalive whose connection
 * closes ends with BATON_EIO, a ping is dropped.
 *
 * A request made while the connection is up and idle goes out from the
 * calling thread: waking the background thread to send it would cost a
 * context switch and three system calls a request. The background thread
 * sends everything else: what a caller could not send at once, resends,
 * and the requests it makes itself (it holds `mu` from making them to its
 * next send, so they go out in list order on that round).
 *
 * Silence: a PING goes out whenever nothing has arrived for hb_idle_ms; a
 * connection is dropped as silent when nothing at all has arrived for
 * hb_timeout_ms since the PING went out, or when a request that is not a
 * wait stays unanswered for TRY_MS.
 *
 * Ownership: the cluster lets a connection act in a session only once it
 * has proved it owns it (src/proto/attach.h). The registry keeps the
 * secrets of the sessions it acts in (REGISTRY_MAX_OWNED: the handle's own
 * and the detached ones it releases in) and puts an ATTACH on each new
 * connection ahead of the first KEEPALIVE or command of such a session;
 * the ATTACH's answer is not waited for (the cluster serves a connection's
 * requests in order, so a refusal answers the request behind it).
 *
 * Threading: every field, and every request, is guarded by the handle's
 * mutex `mu`. The registry and the session wake nobody themselves: they
 * flag `changed` whenever a request becomes final or the session changes,
 * and `loop_needed` whenever the background thread has work, and the host
 * does both in registry_effects() before it releases `mu` or waits on
 * `cv` (on CLOCK_MONOTONIC), so that a call leaves the registry consistent
 * before anyone looks at it.
 */
#define REGISTRY_MAX_OWNED 8

/* A session whose secret the registry holds. */
struct registry_owned {
        uint64_t session; /* 0: a free slot */
        uint64_t gen;     /* connection it was last attached on; 0: none */
        uint8_t secret[ATTACH_SECRET_SIZE];
};

struct registry {
        struct queue list; /* struct request, creation order */
        struct registry_owned owned[REGISTRY_MAX_OWNED];
        struct link *link;          /* borrowed: the transport */
        struct linkio *io;          /* borrowed: its socket, for a caller's
                                       own write and for the wake-up */
        const struct core_env *env; /* borrowed: a retry's jitter */
        pthread_mutex_t *mu;        /* borrowed: the handle's mutex */
        pthread_cond_t *cv;         /* borrowed: the handle's condition */
        struct registry_owner owner;
        bool on_loop;         /* the background thread holds `mu`: it
                                 sends what is queued before it sleeps */
        bool changed;         /* a caller waiting on `cv` should look again */
        bool loop_needed;     /* the background thread has work to do */
        struct request *ping; /* in flight */
        int hb_idle_ms;
        int hb_timeout_ms;
        uint64_t watch_names; /* the last WATCH name id given */
        /* Counters, for tests and curiosity. */
        unsigned long resends;
        unsigned long heartbeat_drops;
};

/* Borrow `link`, `io` (its I/O), `env`, `mu` and `cv`, and register as the
 * link's owner; the heartbeat follows `ttl_ms`. */
void registry_init(struct registry *reg, struct link *link, struct linkio *io,
                   const struct core_env *env, pthread_mutex_t *mu,
                   pthread_cond_t *cv, uint32_t ttl_ms,
                   const struct registry_owner *owner);

/* Free every request, whatever its state (the handle is going away). */
void registry_close(struct registry *reg);

/*
 * Take `r` (transferred): AWAITED for the callers' kinds, BACKGROUND for
 * the library's; send it now if the connection is idle (dated `now`: the
 * caller reads the clock, so that the registry decides from its inputs
 * alone), else wake the background thread. Mutex held.
 */
void registry_submit(struct registry *reg, struct request *r, int64_t now);

/* Wait for `r` (AWAITED) to become DONE until `deadline`: 0, or what
 * registry_unreachable() or registry_no_answer() says (for r->mark, the
 * pass in progress when it was submitted). Mutex held; released while
 * waiting. */
int registry_await(struct registry *reg, struct request *r, int64_t deadline);

/*
 * What a waiting call answers when the cluster cannot be reached. A call
 * takes registry_mark() when it starts waiting (a request takes it when
 * it is submitted). registry_unreachable() is for each wake-up: when the
 * call's request `r` was never written to a connection (NULL: the call
 * waits for nothing of its own that went out) and a pass over the
 * endpoints since `mark` failed everywhere, the call may end at once with
 * BATON_ECONNECT or BATON_ETLS, since no node can have applied it; else 0.
 * A request that went out keeps its outcome unknown: only its answer or
 * the deadline ends the wait, whatever the endpoints do meanwhile.
 * registry_no_answer() is for the deadline: BATON_ENOANSWER (saying "no
 * leader" when the nodes that answered knew none), or for a request never
 * sent that no node answered, BATON_ECONNECT / BATON_ETLS. Both record
 * the detail (what each endpoint answered) for the calling thread
 * (baton_errmsg()). Mutex held.
 */
uint64_t registry_mark(const struct registry *reg);
int registry_unreachable(const struct registry *reg, uint64_t mark,
                         const struct request *r);
int registry_no_answer(const struct registry *reg, uint64_t mark,
                       const struct request *r);

/*
 * The caller stops waiting for `r` (AWAITED or DONE) at `now`. A command
 * that went out goes on in the background until it is final, so its seq
 * is never reused and the ack can pass it; a wait is withdrawn with a
 * CANCEL, and a grant that races either is released. Anything else is
 * freed.
 */
void registry_abandon(struct registry *reg, struct request *r, int64_t now);

/* Unlink and free `r` without a final answer (or after its caller
 * collected it), clearing the registry's pointers to it. Accepts NULL. */
void registry_drop(struct registry *reg, struct request *r);

/* Make every pending request of `session` final with `status`, at `now`. */
void registry_fail_session(struct registry *reg, uint64_t session, int status,
                           int64_t now);

/* The lowest seq of `session` that a pending request pins, or `next`. */
uint64_t registry_lowest_seq(const struct registry *reg, uint64_t session,
                             uint64_t next);

/* Hold the secret of `session` (copied), so that every connection that
 * carries its requests attaches to it first; a full table forgets the
 * slot in it longest. Mutex held. */
void registry_own(struct registry *reg, uint64_t session,
                  const uint8_t *secret);
/* Forget the secret of `session` (nothing when it is not held). */
void registry_disown(struct registry *reg, uint64_t session);

/* Whether any request is in the registry. */
bool registry_busy(const struct registry *reg);

/* Something callers wait for changed (a request became final, the
 * session changed): a waiting caller is to look again. */
void registry_changed(struct registry *reg);

/* The background thread has work: a request to send, a callback to run. */
void registry_need_loop(struct registry *reg);

/* --- The host's part, until waiting leaves the registry ------------------- */

/* Do what the flags ask, and clear them: broadcast `cv` when something
 * changed, wake the background thread when it has work. Mutex held; every
 * entry point of the host does it before it releases `mu`. */
void registry_effects(struct registry *reg);

/* Do the effects, then wait on `cv` until it is broadcast or `deadline`;
 * false once the deadline has passed (then without waiting). Mutex
 * held. */
bool registry_wait(struct registry *reg, int64_t deadline);

/* --- The background thread ----------------------------------------------- */

/* On an established connection: drop it if silent, ping when idle, put
 * what is pending in the link's outbox (the host then flushes it). */
void registry_step(struct registry *reg, int64_t now);

/* When registry_step() next has something to do on an established
 * connection (CLOCK_NEVER: nothing). */
int64_t registry_next_event(const struct registry *reg);

#endif /* CLIENT_REGISTRY_H */
