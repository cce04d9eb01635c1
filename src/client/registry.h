/* The owner of every request of a handle that is on its way to the cluster:
 * it sends and resends them over the link, matches the answers, makes each
 * final exactly once, and withdraws those nobody waits for any more. */
#ifndef CLIENT_REGISTRY_H
#define CLIENT_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../lib/queue.h"
#include "../proto/attach.h"
#include "coreenv.h"
#include "link.h"
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
 * A request made while the connection is up and its outbox empty is put
 * in the outbox at once, and the registry flags `write_now`: its host
 * then writes it from the calling thread, since waking the background
 * thread to send it would cost a context switch and three system calls a
 * request. The background thread sends everything else: what a caller
 * could not put at once, resends, and the requests it makes itself (the
 * host says so in `on_loop`; it holds `mu` from making them to its next
 * send, so they go out in list order on that round).
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
 * mutex. The registry and the session neither wake nor wait: they flag
 * `changed` whenever a request becomes final or the session changes,
 * `loop_needed` whenever the background thread has work and `write_now`
 * when the outbox is the calling thread's to write, and the host acts on
 * the flags (effects_apply()) before it releases the mutex or waits, so
 * that a call leaves the registry consistent before anyone looks at it.
 * Waiting is the host's too (await.h): it waits on its condition variable
 * and asks the registry, each time it wakes, whether the wait is over.
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
        const struct core_env *env; /* borrowed: a retry's jitter */
        struct registry_owner owner;
        bool on_loop;         /* set by the host: the background thread holds
                                 the mutex and sends what is queued before it
                                 sleeps */
        bool changed;         /* a waiting caller should look again */
        bool loop_needed;     /* the background thread has work to do */
        bool write_now;       /* a caller's request was put in the outbox: the
                                 calling thread is to write it */
        struct request *ping; /* in flight */
        int hb_idle_ms;
        int hb_timeout_ms;
        uint64_t watch_names; /* the last WATCH name id given */
        /* Counters, for tests and curiosity. */
        unsigned long resends;
        unsigned long heartbeat_drops;
};

/* Borrow `link` and `env`, and register as the link's owner; the
 * heartbeat follows `ttl_ms`. */
void registry_init(struct registry *reg, struct link *link,
                   const struct core_env *env, uint32_t ttl_ms,
                   const struct registry_owner *owner);

/* Free every request, whatever its state (the handle is going away). */
void registry_close(struct registry *reg);

/*
 * Take `r` (transferred): AWAITED for the callers' kinds, BACKGROUND for
 * the library's; put it in the outbox now if the connection is up and its
 * outbox empty (dated `now`: the caller reads the clock, so that the
 * registry decides from its inputs alone) and flag `write_now`, else flag
 * `loop_needed`. Mutex held.
 */
void registry_submit(struct registry *reg, struct request *r, int64_t now);

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
 * sent that no node answered, BATON_ECONNECT / BATON_ETLS. Both write the
 * detail (what each endpoint answered) into `why` (`size` bytes) when
 * they return an error, for the host to record for the calling thread
 * (baton_errmsg()). Mutex held.
 */
uint64_t registry_mark(const struct registry *reg);
int registry_unreachable(const struct registry *reg, uint64_t mark,
                         const struct request *r, char *why, size_t size);
int registry_no_answer(const struct registry *reg, uint64_t mark,
                       const struct request *r, char *why, size_t size);

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

/* --- The background thread ----------------------------------------------- */

/* On an established connection: drop it if silent, ping when idle, put
 * what is pending in the link's outbox (the host then flushes it). */
void registry_step(struct registry *reg, int64_t now);

/* When registry_step() next has something to do on an established
 * connection (CLOCK_NEVER: nothing). */
int64_t registry_next_event(const struct registry *reg);

#endif /* CLIENT_REGISTRY_H */
