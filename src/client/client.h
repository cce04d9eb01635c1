/* The handle behind include/baton.h's baton_client: the parts of libbaton
 * that one handle puts together. */
#ifndef CLIENT_CLIENT_H
#define CLIENT_CLIENT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "../../include/baton.h"
#include "core.h"
#include "health.h"
#include "linkio.h"
#include "loop.h"

#define CLIENT_MAX_ENDPOINTS 16

/*
 * Calls go one way, down: client.c (the public calls), await.c (their
 * waits) and loop.c (the background thread) use the core (core.h): its
 * session and registry, through its facade where it has one; the session
 * opens and keeps itself alive through the registry; the registry sends
 * over the link. Nothing calls up but through callbacks that an owner
 * registered: the link reports to the registry (struct link_cb), the registry
 * to outcome.c (struct registry_owner), which acts on the session, the registry
 * and the lock table.
 *
 * Locking: one mutex, `mu`, guards every field below but `loop.thread`,
 * and everything the handle's parts point to: the requests, the socket and
 * the link's buffers, the session, the lock table and the queue of
 * callbacks. The only other lock in libbaton is foreign_seq()'s own, for
 * a counter shared by every handle. Callers wait on `cv` (on
 * CLOCK_MONOTONIC, with `mu`), which is broadcast whenever a request
 * becomes final or the session changes: the registry and the session only
 * flag it (and that the background thread has work), and whoever holds
 * `mu` does what they flagged before releasing it (client_effects(), the
 * background thread's own before it sleeps or runs a callback).
 *
 * Threading: any thread holding `mu` may write frames to the socket: a
 * request made while the connection is up and idle goes out from the
 * caller's thread, with no wake-up of the background thread. Only the
 * background thread (loop.c) connects, reads, flushes what the socket did
 * not take at once, and closes; it drops `mu` only around poll() and
 * around the user's callbacks, so a caller never finds the socket closed
 * or half-written under it.
 */
struct baton_client {
        pthread_mutex_t mu;
        pthread_cond_t cv; /* on CLOCK_MONOTONIC */
        struct loop loop;
        struct baton_options opts;
        char client_name[COMMAND_CLIENT_NAME_MAX + 1];
        char endpoints[CLIENT_MAX_ENDPOINTS][LINK_ADDR_MAX];
        unsigned n_endpoints;
        struct core core;     /* the deciding part: link, requests, session,
                                 lock table, callbacks queued */
        struct linkio io;     /* the core's link's socket, TLS and eventfd */
        struct tls_ctx *tls;  /* NULL: plain connections */
        struct health health; /* baton_health_check() */
};

/* Send a read or admin request and wait for its answer, `c->mu` held. 0
 * with `r` done, or BATON_ENOANSWER / BATON_ETLS (`r` is the registry's
 * again). */
int client_roundtrip(struct baton_client *c, struct request *r,
                     int64_t deadline);

/* Send `r` (NULL: out of memory), wait for its answer and return its
 * status, for the calls whose answer is only a status. Takes `c->mu`. */
int client_ask(baton_client *c, struct request *r);

/* The calls' common steps, shared by client.c, admin.c and acquire.c. */
void client_lock(struct baton_client *c);   /* takes `c->mu` */
void client_unlock(struct baton_client *c); /* client_effects(), then gives
                                               it back */
/* What the registry and the session asked for while `c->mu` was held:
 * broadcast `cv` to the waiting callers, wake the background thread. Every
 * call does it before it releases `c->mu` or waits on `cv`. */
void client_effects(struct baton_client *c);
/* Submit a command in the session and wait for its final answer, `c->mu`
 * held: its status with `*res` filled, or BATON_ENOANSWER / BATON_ETLS
 * (it then goes on in the background). */
int client_run(struct baton_client *c, struct command *k, int64_t deadline,
               struct proto_result *res);
/* QUERY `name`, `c->mu` held: the RESULT's status with `*res` filled,
 * and the holder's client name copied into `holder` (NULL: not wanted;
 * res->client_name is then not to be read). */
int client_query(struct baton_client *c, const char *name, uint8_t len,
                 int64_t deadline, struct proto_result *res,
                 char holder[PROTO_CLIENT_NAME_MAX + 1]);
/* The status of the answered `r`, with the detail of a BATON_EQUOTA
 * refusal (which quota, of what limit) or of a BATON_EPERM one by the
 * rules on names (which permission, on what) recorded for the calling
 * thread. */
int client_status(const struct request *r);
/* What the user sees of an ended session: BATON_EEXPIRED for ENOSESSION. */
int client_user_status(int status);
/* The owner tag a call means (BATON_OWNER_THREAD: this thread's). */
uint64_t client_owner(uint64_t owner);
/* A lock name of 1..255 bytes: 0 with its length, or BATON_ENAME. */
int client_check_name(const char *name, uint8_t *len);
/* registry_owner.watch_event (watch.c): queue the event for its watch's
 * caller, one copy per frame in `*shared` for all the watches it goes to;
 * `e` NULL: the watch ended (its callback, if any, is told). */
void watch_on_event(void *data, struct request *r,
                    const struct proto_watch_event *e, void **shared);
/* For a call that acts on what the handle's session holds (release,
 * proclaim), which never opens a session, `c->mu` held: 0 when the
 * session is usable, else BATON_EEXPIRED (it expired) or
 * BATON_ENOTHOLDER (there is none). */
int client_holding_session(struct baton_client *c);
/* A command of `type` on `name` for `owner`, its other fields zero. */
void client_command(struct command *k, uint8_t type, const char *name,
                    uint8_t len, uint64_t owner);

#endif /* CLIENT_CLIENT_H */
