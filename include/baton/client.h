/*
 * The libbaton handle: how a program connects to a cluster (options,
 * create, destroy), the session the handle keeps, and the constants the
 * calls share (owner tags, wait values). Every call of libbaton takes a
 * handle made here.
 */
#ifndef BATON_CLIENT_H
#define BATON_CLIENT_H

#include <stdint.h>

#include "api.h"
#include "errors.h"

#ifdef __cplusplus
extern "C" {
#endif

/* --- The client library (libbaton) ---------------------------------------
 *
 * One baton_client handle talks to one cluster. It owns one background
 * thread, which owns the connection: it finds the leader (following
 * NOT_LEADER answers), reconnects with jittered exponential backoff (but
 * every 20-60 ms for the first 3 s in which live nodes know no leader, so
 * that a client is back as soon as an election ends), sends keepalives,
 * receives grants, and notices a dead or paused server by its own
 * heartbeat well before the session TTL (TCP alone can take tens of
 * seconds after a partition heals).
 *
 * Every call is synchronous, thread-safe and bounded by a deadline. A
 * request lost to a leader change is retried under the same sequence
 * number, which the cluster applies exactly once: a retry never grants,
 * queues or releases twice. A request whose caller stopped waiting goes
 * on in the background until the cluster decides it, so that nothing is
 * decided behind the caller's back: a grant that arrives too late is
 * released, a wait is withdrawn with CANCEL. At most 31 requests of a
 * handle, blocking acquires aside, await their answers at once (the
 * cluster remembers 32 outcomes per session); further calls wait for a
 * slot, within their deadline. No function prints.
 *
 * The heartbeat: a PING whenever nothing has arrived for half the
 * heartbeat timeout, max(300, min(1000, ttl_ms / 5)) ms; a server that
 * then sends nothing at all for the timeout is abandoned for another node,
 * and avoided for 3 s. Frames still arriving, the PING's answer queued
 * behind them, are not silence.
 *
 * Callbacks run on the background thread with no lock held, in the order
 * of the events; none runs after baton_client_destroy() has returned.
 */

typedef struct baton_client baton_client;

/* Session states reported by baton_session_state() and the callback. */
enum baton_session_state {
        BATON_SESSION_NONE = 0,     /* no session opened yet */
        BATON_SESSION_LIVE = 1,     /* keepalives are acknowledged */
        BATON_SESSION_JEOPARDY = 2, /* no keepalive acknowledged for a
                                       while: locks may be lost soon */
        BATON_SESSION_EXPIRED = 3,  /* the lease ran out or the cluster
                                       expired it: every lock is lost */
};

/* The owner tag that means "the calling thread" (the default): the
 * thread's id (gettid) with the top bit set. Choose other tags below
 * 2^63. Reentrancy and ownership are per (session, owner tag). */
#define BATON_OWNER_THREAD 0

/* The owner tag of a detached acquire (batonctl acquire --detach): a
 * fixed tag, so that another process can name the grant to
 * baton_release_in(). */
#define BATON_OWNER_DETACHED 1

/* Bytes of a session's secret (baton_client_detach(), baton_release_in()).
 * libbaton draws it at random for each session it opens and sends only its
 * SHA-256; the cluster lets a connection act in the session only once the
 * connection has shown the secret. Whoever has it can release the
 * session's locks: keep it as private as the locks matter. */
#define BATON_SECRET_SIZE 16

/* wait_ms values of baton_acquire(). */
#define BATON_WAIT_TRY     0  /* answer BATON_EBUSY at once if held */
#define BATON_WAIT_FOREVER -1 /* wait until granted or the session ends */

/**
 * Options of a handle. Initialize with baton_options_init(), then change
 * what you need. Strings are copied by baton_client_create().
 */
struct baton_options {
        /** Session TTL in ms (default 10000). The cluster refuses TTLs
         * below twice its election timeout (BATON_ETTL). */
        uint32_t ttl_ms;
        /** Default deadline of a call that takes none, in ms (default
         * 5000). */
        uint32_t request_timeout_ms;
        /** Name shown to other clients in holder queries (default: the
         * host name and pid). At most 64 bytes. */
        const char *client_name;
        /** Called from the background thread on every session state
         * change. Must not call back into the handle. May be NULL. */
        void (*on_session)(baton_client *c, int state, void *data);
        /** Called from the background thread for each lock held through
         * the handle when the session is lost (the local lease ran out or
         * the cluster says it ended), with the token it was held under.
         * Not called for the locks baton_client_destroy() releases. Must
         * not call back into the handle. May be NULL. */
        void (*on_lock_lost)(baton_client *c, const char *name, uint64_t token,
                             void *data);
        /** Passed to the callbacks. */
        void *data;
        /** TLS: PEM files of the CA that signed the nodes' certificates,
         * of this client's certificate and of its key (paths, read by
         * baton_client_create()). All three or none; when none is set, the
         * environment variables BATON_CACERT, BATON_CERT and BATON_KEY give
         * them, and when those are not set either, connections are plain
         * (for nodes run with tls = off). Each node's certificate must name
         * the host of the endpoint it is reached at (an IP or DNS subject
         * alternative name). */
        const char *tls_ca;
        const char *tls_cert;
        const char *tls_key;
        /** The session's lock-delay in ms (default 0): when the session
         * expires or an administrator revokes it (not when it is closed,
         * and not on a release), each read/write lock it held is granted
         * to no one for this long, or for the cluster's lock-delay-ms if
         * that is longer (Chubby's and Consul's lock-delay), for
         * resources that cannot check fencing tokens. At most the
         * cluster's max-lock-delay-ms (BATON_EDELAY when the session
         * opens). Semaphores get none. */
        uint32_t lock_delay_ms;
};

/* The client endpoints of the local cluster that scripts/cluster starts
 * (3 nodes, ports 7101..7103): what baton_client_create() connects to when
 * given no endpoints and the environment variable BATON_ENDPOINTS is unset
 * or empty. batonctl and baton-bench use it when neither --endpoints nor
 * BATON_ENDPOINTS names a cluster. */
#define BATON_DEFAULT_ENDPOINTS "127.0.0.1:7101,127.0.0.1:7102,127.0.0.1:7103"

/** Fill `o` with the defaults. */
BATON_API void baton_options_init(struct baton_options *o);

/**
 * Create a handle for the cluster at `endpoints` ("host:port,host:port",
 * each numeric IPv4 or a host name, or "[ipv6]:port", 64 bytes at most;
 * NULL: the environment variable BATON_ENDPOINTS, read once here, unless
 * it is unset or empty, else BATON_DEFAULT_ENDPOINTS, the local cluster of
 * scripts/cluster). A host name is resolved (blocking the background
 * thread) each time the handle connects to it, and its addresses are
 * tried in turn. The library reads no other environment variable but the
 * three TLS ones (see struct baton_options). `opts` may be
 * NULL for the defaults. Starts the background
 * thread; connects lazily.
 *
 * Returns 0 and the handle in `*out`, or BATON_EINVAL (bad endpoints,
 * given or from BATON_ENDPOINTS, more
 * than 16, a zero TTL or timeout, a client name over 64 bytes, some but
 * not all of the three TLS files), BATON_ETLS (a TLS file that cannot be
 * read, or a key that does not match its certificate) or BATON_ENOMEM.
 * `endpoints` is copied. Free it with baton_client_destroy().
 *
 * Connection failures (docs/protocol.md, "Connection failures"): the
 * handle tries its endpoints in turn, each once per pass, without a pause
 * within a pass. When every endpoint of a pass fails in a way that
 * waiting a little cannot mend (connection refused or no connection
 * within a second, a name that does not resolve, TLS refused by either
 * side or spoken by one side only, a peer that is no Baton client port),
 * every call of the handle that is waiting and has sent nothing to the
 * cluster fails at once: with BATON_ETLS when TLS was the trouble at some
 * endpoint, else BATON_ECONNECT, and baton_errmsg() names each endpoint
 * with its reason. Where some endpoint refused the connection (nothing
 * listens there yet, as while nodes start), passes go on for a second
 * before one fails, so that a program that starts a cluster and then
 * asks it is answered by the cluster. Every call that talks to the cluster may
 * fail so. A request already sent keeps its unknown outcome until its deadline
 * (BATON_ENOANSWER), however the endpoints fail meanwhile, and a node
 * that answers "no leader" keeps a call waiting (BATON_ENOANSWER at the
 * deadline, its detail saying "no leader"). The background thread keeps
 * reconnecting for the session all along: an outage shorter than the TTL
 * ends no session.
 */
BATON_API int baton_client_create(baton_client **out, const char *endpoints,
                                  const struct baton_options *opts);

/**
 * Close the session (releasing every lock it holds, handing each to its
 * next waiter), stop the background thread and free the handle. Blocks at
 * most request_timeout_ms for the close (if the cluster cannot be reached,
 * the session expires on its own after its TTL). Requests still going on
 * in the background are abandoned; no callback runs after it returns.
 * Accepts NULL. No other call on the handle may run concurrently or after,
 * and it must not be called from a callback.
 */
BATON_API void baton_client_destroy(baton_client *c);

/**
 * Detach the handle's session, for a lease lock that outlives the process:
 * the handle stops keeping the session alive (no more keepalives) and
 * forgets it, so baton_client_destroy() does not close it and no
 * on_lock_lost callback runs for its locks. The cluster then expires the
 * session, releasing its locks, TTL after the last keepalive it
 * acknowledged, unless baton_release_in() releases them earlier. Stores
 * the session id in `*session` and its secret, which baton_release_in()
 * needs, in `secret` (BATON_SECRET_SIZE bytes); either may be NULL. Both
 * are zeroed when the call fails. The handle's session
 * state becomes BATON_SESSION_NONE (reported to on_session) and a later
 * call that needs a session opens a new one. Call it when no other call
 * of the handle is under way. 0, BATON_EINVAL, or BATON_ENOSESSION (no
 * live session). Thread-safe.
 */
BATON_API int baton_client_detach(baton_client *c, uint64_t *session,
                                  uint8_t secret[BATON_SECRET_SIZE]);

/**
 * The handle's session state (enum baton_session_state), brought up to
 * date with the clock first. LIVE while keepalives (every TTL/3) are
 * acknowledged; JEOPARDY when none has been for more than TTL/2 (dated
 * from the send of the last acknowledged one); EXPIRED when the local
 * lease ran out or the cluster said the session ended. An expired session
 * is never used again. Thread-safe.
 */
BATON_API int baton_session_state(baton_client *c);

/**
 * Milliseconds left of the local lease: from the send time of the last
 * acknowledged keepalive (for a new session, the first send of its OPEN),
 * plus the TTL, minus a safety margin of max(TTL/10, 200 ms). The leader
 * dates its deadline from the keepalive's arrival, and a new leader gives
 * every session a full TTL, so the cluster does not expire the session
 * before this lease runs out; the margin covers clock rate differences
 * and scheduling. 0 when the session is neither live nor in jeopardy.
 * Thread-safe.
 */
BATON_API int64_t baton_session_remaining_ms(baton_client *c);

/**
 * The id of the handle's latest session: the live one, or the last one
 * opened if it has ended (expired, closed or detached); 0 before the
 * first. It is the id the cluster's holder queries, listings and apply
 * logs name, so a program can log which session a call used, even one
 * that failed because that session ended. baton_session_state() tells
 * whether it is still live. Thread-safe.
 */
BATON_API uint64_t baton_session_id(baton_client *c);

/**
 * End the handle's session now and keep the handle: the cluster releases
 * every lock the session holds, each going to its next waiter at once (not
 * a TTL later), on_lock_lost runs for each, and the session state becomes
 * BATON_SESSION_EXPIRED; the next call that needs a session opens a new
 * one. Waits at most request_timeout_ms. When the cluster cannot be told
 * (BATON_ENOANSWER, BATON_ECONNECT, BATON_ETLS), the handle gives the
 * session up all the same: it sends no more keepalives, its locks are
 * reported lost, and the cluster frees them when the session's TTL runs
 * out. 0, BATON_EINVAL, BATON_ENOSESSION (no live session), or one of
 * those. Thread-safe; not from a callback of the background thread.
 */
BATON_API int baton_session_close(baton_client *c);

/**
 * A health check of the handle's owner, which ends the session when it
 * fails: the client-side half of a session bound to health (Consul ties
 * sessions to checks the same way). The cluster sees keepalives, not
 * whether the program behind them is well, so only the program can say.
 *
 * libbaton calls `check(c, data)` on a thread of its own every
 * `interval_ms` (at least 10; the first call one interval from now) while
 * the handle has a live session (or one in jeopardy). 0 means healthy; any
 * other value ends the session as baton_session_close() does. Return
 * non-zero only once the work done under the locks has stopped: the
 * session is closed after the call returns, so nobody else is granted the
 * locks before then. A check that takes long delays the next one, never
 * the keepalives. The check may call the handle (not baton_client_destroy,
 * nor baton_health_check).
 *
 * One check per handle: a second call replaces the first (after its run
 * under way, if any, has returned); `check` NULL stops it.
 * baton_client_destroy() stops it first. 0, or BATON_EINVAL (no handle,
 * interval below 10 ms) or BATON_ENOMEM (no thread).
 */
typedef int (*baton_health_fn)(baton_client *c, void *data);
BATON_API int baton_health_check(baton_client *c, baton_health_fn check,
                                 uint32_t interval_ms, void *data);

#ifdef __cplusplus
}
#endif

#endif /* BATON_CLIENT_H */
