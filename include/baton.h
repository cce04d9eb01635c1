/*
 * Baton: a Raft-replicated distributed lock service.
 *
 * This is the only public header. It defines the error codes that every Baton
 * component reports (the server, the client library and the command line
 * tool) and the functions of libbaton.
 */
#ifndef BATON_H
#define BATON_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef BATON_API
#define BATON_API __attribute__((visibility("default")))
#endif

/*
 * Error codes. Every Baton function returns 0 on success or one of these
 * negative codes. The numbers are part of the wire protocol and never change
 * meaning; new codes are only ever appended, at the end of this list.
 *
 * BATON_ERROR_MAP is the one list of them: X(NAME, number, text) per code,
 * where BATON_<NAME> is the code, "text" what baton_strerror() returns and
 * "BATON_<NAME>" what baton_errname() returns. Expand it with a macro of
 * your own to build a table of them.
 */
/* clang-format off */
#define BATON_ERROR_MAP(X) \
        X(ENOMEM,            -1, "out of memory") \
        X(EINVAL,            -2, "invalid argument") \
        X(EMALFORMED,        -3, "malformed command or frame") \
        X(EVERSION,          -4, "unsupported encoding version") \
        X(ENAME,             -5, "invalid lock name (must be 1..255 bytes without NUL)") \
        X(ENOSESSION,        -6, "no such session") \
        X(EEXPIRED,          -7, "session expired") \
        X(ECLOSED,           -8, "session closed") \
        X(EBUSY,             -9, "lock is held by another owner") \
        X(ENOTHOLDER,       -10, "not the holder of this lock") \
        X(ESTALE,           -11, "stale token: not the current grant") \
        X(ETIMEDOUT,        -12, "wait timed out") \
        X(ECANCELLED,       -13, "wait cancelled") \
        X(ENOTWAITING,      -14, "not waiting for this lock") \
        X(EWAITING,         -15, "already waiting for this lock") \
        X(ETOOMANYSESSIONS, -16, "too many sessions") \
        X(ETOOMANYLOCKS,    -17, "too many locks held or awaited by this session") \
        X(ETOOMANYWAITERS,  -18, "too many waiters for this lock") \
        X(EINFLIGHT,        -19, "too many unacknowledged requests in this session") \
        X(ESEQ,             -20, "sequence number already acknowledged") \
        X(ETTL,             -21, "session TTL out of range") \
        X(EUNSUPPORTED,     -22, "lock mode not supported") \
        X(EOVERFLOW,        -23, "reentrancy count overflow") \
        X(ECORRUPT,         -24, "snapshot corrupt or truncated") \
        X(ENOTFOUND,        -25, "no such lock") \
        X(ENOTLEADER,       -26, "not the leader") \
        X(EUNKNOWN,         -27, "outcome unknown: retry with the same sequence number") \
        X(ETOOBIG,          -28, "frame too large") \
        X(ETOOMANYCONNS,    -29, "too many connections") \
        X(EUNAVAILABLE,     -30, "cluster unavailable: no leader") \
        X(ESHUTDOWN,        -31, "node is shutting down") \
        X(EIO,              -32, "I/O error") \
        X(ENOSPC,           -33, "no space left on device") \
        X(ECANTCHANGE,      -34, "a membership change is already in progress") \
        X(ENOANSWER,        -35, "timed out waiting for an answer") \
        X(ETLS,             -36, "TLS handshake failed or certificate refused") \
        X(EPERM,            -37, "permission denied") \
        X(EUPGRADE,         -38, "cannot upgrade to the write lock: other readers hold it") \
        X(EKIND,            -39, "the name is in use by another kind of lock") \
        X(EPERMITS,         -40, "the semaphore exists with another number of permits") \
        X(ETOOMANYPERMITS,  -41, "more permits than the cluster allows (max-permits)") \
        X(EHELD,            -42, "the owner already holds this semaphore, or a name of the multi-lock") \
        X(ETOOMANYHOLDERS,  -43, "too many holders of this lock (max-holders-per-lock)") \
        X(ETOOMANYNAMES,    -44, "more names in one multi-lock than the cluster allows (max-names-per-acquire)") \
        X(EDELAY,           -45, "lock-delay above the cluster's max-lock-delay-ms") \
        X(ECOMPACTED,       -46, "the watch's events from there on are no longer kept: read the state again") \
        X(ESLOW,            -47, "the watcher fell too far behind and was cut off") \
        X(ETOOMANYWATCHES,  -48, "too many watches on this connection or node (max-watches-per-connection, max-watches)") \
        X(ENOBACKUP,        -49, "no such backup on this node: finished, idle for a minute, or another connection's") \
        X(ENOTREADY,        -50, "not ready: the node is making a snapshot or serving other backups; ask again shortly") \
        X(ENOMEMBER,        -51, "no such member") \
        X(EIDINUSE,         -52, "a member with this id exists already") \
        X(EISLEADER,        -53, "that member is the leader already") \
        X(EUNREACHABLE,     -54, "the member cannot be reached") \
        X(ECONNECT,         -55, "cannot connect to any node of the cluster") \
        X(ENOTVOTER,        -56, "that member does not vote, so it cannot lead") \
        X(EADDRINUSE,       -57, "another member has this address")
/* clang-format on */

#define BATON_ERROR_ENUM_(name, code, text) BATON_##name = code,
enum { BATON_ERROR_MAP(BATON_ERROR_ENUM_) };
#undef BATON_ERROR_ENUM_

/*
 * Deprecated: the former name of BATON_ENOANSWER, too close to
 * BATON_ETIMEDOUT, which means something else (a wait for a lock ran out;
 * BATON_ENOANSWER: no answer came from the cluster in time, so the outcome
 * is unknown). Kept so that existing code compiles; it will go in a later
 * major version.
 */
#define BATON_ETIMEOUT BATON_ENOANSWER

/**
 * Return a static, human-readable description of a Baton error code.
 *
 * Never returns NULL: unknown codes get a generic text. Thread-safe.
 */
BATON_API const char *baton_strerror(int code);

/**
 * Return the name of a Baton error code as a static string: "BATON_EBUSY"
 * for BATON_EBUSY, "BATON_OK" for 0, and "BATON_E?" for a number that is
 * not a code (a newer server's, say). For logs and machine-readable
 * output, where the text of baton_strerror() may change. Thread-safe.
 */
BATON_API const char *baton_errname(int code);

/**
 * Return what the last libbaton call on the calling thread that failed
 * with `code` knew of the cause: the endpoint and the system's reason for
 * a connection that failed ("127.0.0.1:7101: connection refused"), the
 * TLS verification result, the path and errno text of a file, the range
 * the cluster accepts. For BATON_ECONNECT and BATON_ETLS of a call that
 * reached no node, every endpoint with its reason ("cannot connect to any
 * node: 127.0.0.1:7101: connection refused; nosuchhost.invalid:8601: name
 * does not resolve"); for BATON_ENOANSWER, what the nodes answered
 * ("timed out waiting for an answer: no leader: ..."). The text stands
 * alone (it says what baton_strerror() says, and more) and has no
 * trailing newline.
 *
 * When the calling thread's last failing call returned another code, or
 * knew no more than the code says, returns baton_strerror(code). Never
 * returns NULL. The string is the calling thread's own and stays valid
 * until that thread's next libbaton call. Thread-safe: as with errno,
 * each thread sees the detail of its own calls, so call it on the thread
 * that made the failing call, before it makes another.
 */
BATON_API const char *baton_errmsg(int code);

/**
 * Return the version of the Baton release libbaton was built from, as a
 * static string ("MAJOR.MINOR.PATCH", e.g. "0.2.0"): the version the
 * program runs with, which may differ from the baton.h it was compiled
 * against. Never returns NULL. Thread-safe.
 */
BATON_API const char *baton_version(void);

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
 * Acquire the exclusive lock `name` (1..255 bytes, no NUL) for `owner`
 * (BATON_OWNER_THREAD: the calling thread). `wait_ms`: BATON_WAIT_TRY,
 * BATON_WAIT_FOREVER, or how long to wait in the lock's FIFO queue.
 * Reentrant: the same owner acquiring again raises a hold count and gets
 * the same token. Opens the session first if needed (single-flight; at
 * most request_timeout_ms): after an expiry that is a NEW session, a new
 * owner, and the old session's locks stay lost.
 *
 * The cluster times the wait (so "timed out" and "granted" are ordered in
 * its log, never both). The call returns at the latest after wait_ms +
 * request_timeout_ms (request_timeout_ms for a try; never for
 * BATON_WAIT_FOREVER), even when the cluster cannot answer; it then
 * returns BATON_ETIMEDOUT (BATON_ENOANSWER for a try) and the library
 * withdraws the request in the background (CANCEL
 * of the wait; release of a grant that raced it), so the caller never
 * ends up holding a lock it was told it did not get.
 *
 * On success stores the fencing token (the Raft index of the grant,
 * strictly increasing per lock) in `*token`, which may be NULL.
 * Errors: BATON_EBUSY (try, held by another owner), BATON_ETIMEDOUT (the
 * wait ran out), BATON_ENOANSWER (a try with no answer in time, or no
 * session could be opened within request_timeout_ms), BATON_ENAME,
 * BATON_EINVAL (wait_ms below -1 or not below 2^32 - 1), BATON_EEXPIRED
 * (the session ended), BATON_EWAITING (the owner already waits for this
 * lock in another thread), the session's refusal when opening it
 * (BATON_ETTL, BATON_ETOOMANYSESSIONS), limits (BATON_ETOOMANYLOCKS,
 * BATON_ETOOMANYWAITERS), BATON_EUPGRADE (the owner holds the read lock,
 * baton_acquire_shared(), and so do others). Thread-safe.
 */
BATON_API int baton_acquire(baton_client *c, const char *name, uint64_t owner,
                            int64_t wait_ms, uint64_t *token);

/**
 * Acquire `name` shared: the read lock of the read/write lock `name`,
 * which any number of owners hold together while no owner holds it
 * through baton_acquire() (the write lock). A reader is admitted at once
 * only when no writer holds the lock and no one waits; otherwise it
 * queues, FIFO, so a waiting writer is not starved by readers that come
 * after it. Readers queued together are granted together, each with the
 * token of the grant that admitted them (readers may share a token; a
 * writer never shares its token with another owner). An owner holding
 * the write lock may take the read lock too (downgrade: then release the
 * write lock); an owner holding the read lock may take the write lock
 * through baton_acquire() only as the lock's sole holder, else that call
 * fails at once with BATON_EUPGRADE. Reentrancy, waiting, the session and
 * the errors are as for baton_acquire(); release with baton_release()
 * and the token this call stored. Thread-safe.
 */
BATON_API int baton_acquire_shared(baton_client *c, const char *name,
                                   uint64_t owner, int64_t wait_ms,
                                   uint64_t *token);

/**
 * Take `permits` of the `limit` permits of the semaphore `name` for
 * `owner`: at once if that many are free and no one waits, else in the
 * semaphore's FIFO queue, where a large request at the head is not
 * overtaken by smaller ones behind it. The first acquire creates the
 * semaphore with `limit` permits, which it keeps while anyone holds or
 * waits for it; an acquire naming another limit meanwhile fails with
 * BATON_EPERMITS. Each grant has its own fencing token (grants made by
 * one log entry share it). A grant is not reentrant: an owner holding
 * permits of `name` gets BATON_EHELD; release them with baton_release()
 * and the token, which frees all of them. `wait_ms`, the session and the
 * other errors are as for baton_acquire(), and: BATON_EINVAL (`permits` 0
 * or above `limit`), BATON_EKIND (`name` is a lock, not a semaphore; a
 * semaphore's name acquired through baton_acquire() gets it too),
 * BATON_ETOOMANYPERMITS (`limit` above the cluster's max-permits).
 * Thread-safe.
 */
BATON_API int baton_sem_acquire(baton_client *c, const char *name,
                                uint32_t limit, uint32_t permits,
                                uint64_t owner, int64_t wait_ms,
                                uint64_t *token);

/* The most names one multi-lock takes (the cluster may allow fewer). */
#define BATON_MULTI_MAX 16

/** One name of a multi-lock, and how it is taken. */
struct baton_lock_name {
        const char *name; /* 1..255 bytes, NUL-terminated */
        int mode;         /* BATON_MODE_EXCLUSIVE or BATON_MODE_SHARED */
};

/**
 * Take the `n` locks `names` (1..16, and at most the cluster's
 * max-names-per-acquire) all at once for `owner`, each exclusive or shared
 * (the read lock of baton_acquire_shared()): one log entry grants all of
 * them, with one fencing token, stored in `*token`. While any is taken
 * the call waits (`wait_ms` as baton_acquire()) as one waiter in every
 * name's FIFO queue, holding none of them, and takes all of them at once
 * when all are free: multi-lockers never deadlock one another, whatever
 * order they name their locks in. A try (BATON_WAIT_TRY) that finds one
 * busy fails with BATON_EBUSY and takes nothing. Not reentrant: an owner
 * that holds one of the names already gets BATON_EHELD. Each name is
 * then a grant of its own: release them all with baton_multi_release(),
 * or one by one with baton_release() and the token; each is lost (and
 * on_lock_lost runs for each) if the session ends. Errors as
 * baton_acquire(), and: BATON_EINVAL (`n` 0, a mode other than those two,
 * or a name twice), BATON_ETOOMANYNAMES (more names than the cluster
 * allows), BATON_EKIND (a name is a semaphore's). Thread-safe.
 */
BATON_API int baton_multi_acquire(baton_client *c,
                                  const struct baton_lock_name *names, size_t n,
                                  uint64_t owner, int64_t wait_ms,
                                  uint64_t *token);

/**
 * Release every name of a multi-lock granted to `owner` with `token`: one
 * baton_release() per name, each attempted even when another fails. 0,
 * or the first failure (as baton_release()'s). Thread-safe.
 */
BATON_API int baton_multi_release(baton_client *c,
                                  const struct baton_lock_name *names, size_t n,
                                  uint64_t owner, uint64_t token);

/* The longest value an election's candidate or leader advertises. */
#define BATON_VALUE_MAX 255

/**
 * Campaign in the election `name` for `owner`, advertising `value` (a
 * C string of at most BATON_VALUE_MAX bytes; NULL: empty) once it leads:
 * lead at once if no one does, else wait in the election's FIFO queue of
 * candidates, as baton_acquire() waits (`wait_ms` 0: BATON_EBUSY while
 * anyone leads; BATON_WAIT_FOREVER; else at most that long). On success
 * `*token` is the leadership's fencing token: the Raft index of the entry
 * that made this owner leader, higher than every earlier leader's, so a
 * resource that keeps the highest token it has seen refuses a deposed
 * leader's writes. Leadership is held as a lock is: lost when the session
 * expires or is revoked (on_lock_lost runs for it, and the lease states
 * apply), handed to the next candidate by baton_resign(). Not reentrant:
 * a second campaign of the leader's owner gets BATON_EHELD. Errors as
 * baton_acquire()'s, and: BATON_EINVAL (`value` too long), BATON_EKIND
 * (`name` is a lock or a semaphore; a lock's acquire of an election's name
 * gets it too). Thread-safe.
 */
BATON_API int baton_campaign(baton_client *c, const char *name,
                             const char *value, uint64_t owner, int64_t wait_ms,
                             uint64_t *token);

/**
 * As the leader of `name` that `token` names, advertise `value` (as in
 * baton_campaign()) from now on, keeping the leadership and its token.
 * Errors: BATON_ESTALE (the owner leads with another token: this one was
 * lost), BATON_ENOTHOLDER (it does not lead), BATON_EKIND, BATON_EINVAL,
 * BATON_EEXPIRED, BATON_ENAME, BATON_EPERM (a connection that could not
 * prove it owns the session), BATON_ENOANSWER. Thread-safe.
 */
BATON_API int baton_proclaim(baton_client *c, const char *name, uint64_t owner,
                             uint64_t token, const char *value);

/**
 * Give up the leadership of `name` that `token` names: the next candidate
 * leads in the same log entry, with a higher token. The same as
 * baton_release(), errors included. Thread-safe.
 */
BATON_API int baton_resign(baton_client *c, const char *name, uint64_t owner,
                           uint64_t token);

/** Who leads an election, as baton_leader() reports it. */
struct baton_leader {
        int held;            /* 0: no one leads (every other field 0) */
        uint64_t session;    /* the leader's session id */
        uint64_t owner;      /* its owner tag */
        uint64_t token;      /* the leadership's fencing token */
        uint32_t candidates; /* waiting to lead after it */
        /* The leader's wall clock when it became leader, s since the Unix
         * epoch (to within a second; 0: not known). */
        uint32_t since_s;
        char client_name[65]; /* the leader session's, NUL-terminated */
        char value[BATON_VALUE_MAX + 1]; /* what it advertises */
};

/**
 * Linearizable read of who leads the election `name` (served by the
 * leader of the cluster after a barrier; needs no session). `*out` is
 * zeroed first. 0 (`out->held` says whether anyone leads), BATON_EKIND
 * (`name` is held as a lock or a semaphore), BATON_ENAME, BATON_EINVAL,
 * BATON_ENOMEM, BATON_ENOANSWER. Thread-safe.
 */
BATON_API int baton_leader(baton_client *c, const char *name,
                           struct baton_leader *out);

/** A watch: every change of a lock name, or of every name with a prefix,
 * in the order of the cluster's log (baton_watch_open()). */
typedef struct baton_watch baton_watch;

/* baton_watch_open() flags. */
#define BATON_WATCH_PREFIX 1 /* `name` is a prefix: every name it begins */

/* What happened, in struct baton_event. */
enum baton_event_kind {
        BATON_EVENT_GRANTED = 1,    /* a grant (or an election's leadership) */
        BATON_EVENT_RELEASED = 2,   /* a grant ended; `cause` says how */
        BATON_EVENT_PROCLAIMED = 3, /* an election's leader's new value */
};

/* What caused an event: the kind of log entry (a client's or the
 * leader's command) that made the change. */
enum baton_cause {
        BATON_CAUSE_CLOSE = 2,        /* the holder's session closed */
        BATON_CAUSE_EXPIRE = 3,       /* its session expired */
        BATON_CAUSE_ACQUIRE = 4,      /* granted at once */
        BATON_CAUSE_RELEASE = 5,      /* released (or handed on by one) */
        BATON_CAUSE_CANCEL = 6,       /* handed on as a waiter left */
        BATON_CAUSE_TIMEOUT = 7,      /* the same, by a wait running out */
        BATON_CAUSE_ENTRY = 11,       /* handed on at an entry's start */
        BATON_CAUSE_REVOKE = 12,      /* an administrator ended the session */
        BATON_CAUSE_UNBLOCK = 13,     /* a lock-delay ended */
        BATON_CAUSE_MULTI = 14,       /* a multi-lock granted at once */
        BATON_CAUSE_REVOKE_LOCK = 15, /* an administrator took the grant */
        BATON_CAUSE_PROCLAIM = 17,    /* the leader proclaimed */
};

/** One change, as a watch reports it. */
struct baton_event {
        int kind;  /* enum baton_event_kind */
        int cause; /* enum baton_cause */
        /* Where it is in the log: the Raft index of the entry that made
         * it, and its order among that entry's events (from 1). Events
         * come in (index, ord) order; pass the last one seen to
         * baton_watch_open() to go on from there. */
        uint64_t index;
        uint32_t ord;
        uint64_t session; /* the grant's session */
        uint64_t owner;   /* its owner tag */
        uint64_t token;   /* its fencing token */
        int mode;         /* enum baton_mode */
        uint32_t permits; /* a semaphore grant's */
        char name[256];   /* the lock name, NUL-terminated */
        /* An election's GRANTED and PROCLAIMED: the leader's value. */
        char value[BATON_VALUE_MAX + 1];
};

/**
 * Watch `name` (with BATON_WATCH_PREFIX in `flags`, every name that
 * begins with it; "" with it: every name) from the log position after
 * (`from_index`, `from_ord`), or from now when `from_index` is 0. Every
 * grant, release and proclaim comes in log order with no gap: when the
 * connection drops or the leader changes, the library resumes the watch
 * on the next node from the last event delivered. A node keeps a bounded
 * history of events (its watch-history key); a watch that must resume
 * from before it ends with BATON_ECOMPACTED: read the state again
 * (baton_holders(), baton_leader()) and open a new watch from now.
 * Needs no session. 0 with `*w` set (the server has started the watch),
 * or BATON_ENAME, BATON_EINVAL, BATON_ECOMPACTED, BATON_ETOOMANYWATCHES,
 * BATON_EPERM, BATON_ENOMEM, BATON_ENOANSWER. Thread-safe; one thread at
 * a time calls baton_watch_next() on a watch.
 */
BATON_API int baton_watch_open(baton_client *c, const char *name, int flags,
                               uint64_t from_index, uint32_t from_ord,
                               baton_watch **w);

/**
 * The next event of `w`, waiting up to `wait_ms` (BATON_WAIT_FOREVER:
 * until one comes): 0 with `*ev` filled, BATON_ETIMEDOUT when none came,
 * or why the watch ended (after every event before it was delivered):
 * BATON_ECOMPACTED, BATON_ESLOW (the server, or this library, which
 * keeps at most 65,536 undelivered events, cut off a watcher that fell
 * behind: resume from the last event), BATON_ETOOMANYWATCHES, BATON_ENOMEM,
 * or another status a server ended it with; BATON_EINVAL for a NULL
 * argument or a `wait_ms` below BATON_WAIT_FOREVER.
 */
BATON_API int baton_watch_next(baton_watch *w, struct baton_event *ev,
                               int64_t wait_ms);

/**
 * Events of a watch opened with baton_watch_open_cb(): `ev` (borrowed for
 * the call) with `status` 0 for each event, in order; then, once, `ev`
 * NULL and why the watch ended (as baton_watch_next() says it). It runs on
 * the handle's background thread, like on_lock_lost, with no lock of the
 * library held; as the other callbacks, it must not call back into the
 * handle (that thread brings the handle's answers), except
 * baton_watch_close() of its own watch. The handle's other callbacks and
 * its connection's traffic wait while it runs: keep it short.
 */
typedef void (*baton_watch_cb)(void *data, const struct baton_event *ev,
                               int status);

/**
 * baton_watch_open() with the events delivered to `cb` (with `data`)
 * rather than read with baton_watch_next(); the cheaper form for many
 * watches: the watches of one handle keep one copy of each event between
 * them, which a callback is lent where baton_watch_next() copies it out,
 * and no thread of the caller's has to visit each watch.
 * baton_watch_next() then answers BATON_EINVAL. BATON_EINVAL for a NULL
 * `cb`; else as baton_watch_open().
 */
BATON_API int baton_watch_open_cb(baton_client *c, const char *name, int flags,
                                  uint64_t from_index, uint32_t from_ord,
                                  baton_watch_cb cb, void *data,
                                  baton_watch **w);

/** Stop the watch and free it (accepts NULL). Close every watch before
 * destroying its handle. Once it returns, a callback watch's callback
 * runs no more: called from another thread while the callback runs, it
 * waits for it; called from inside the callback, the watch is freed when
 * the callback returns. */
BATON_API void baton_watch_close(baton_watch *w);

/**
 * Release one hold of `name` by `owner` with the token it was granted
 * (compare-and-delete: a stale token changes nothing). Never opens a
 * session: a hold of a session that ended is refused with BATON_EEXPIRED
 * without asking the cluster. Errors: BATON_ESTALE, BATON_ENOTHOLDER,
 * BATON_EEXPIRED, BATON_ENAME, BATON_ENOANSWER (no answer within
 * request_timeout_ms: the same release goes on in the background until
 * the cluster answers it). Thread-safe.
 */
BATON_API int baton_release(baton_client *c, const char *name, uint64_t owner,
                            uint64_t token);

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
 * Release one hold of `name` by `owner` (an explicit tag: the one the
 * grant was acquired with, e.g. BATON_OWNER_DETACHED; not
 * BATON_OWNER_THREAD) with `token`, on behalf of ANOTHER session
 * `session`, typically one detached by another process with
 * baton_client_detach(), whose `secret` (BATON_SECRET_SIZE bytes,
 * borrowed for the call) proves the right to act in it: a wrong one is
 * BATON_EPERM. Does not need a session of this handle.
 *
 * The RELEASE carries `session` and a sequence number that must be above
 * every seq that session used: the realtime clock in nanoseconds. The
 * process that used the session is gone and its seqs count up from 1, and
 * seqs only need to be unique and above the session's acknowledged floor;
 * the command acknowledges itself (ack = seq), so the cluster forgets the
 * session's older outcomes. Like every request it is retried under the
 * same seq after a leader change or a lost connection, and so applied
 * exactly once. Two releases of the same session must not run at the same
 * nanosecond (a later one with a lower seq gets BATON_ESEQ).
 *
 * Errors: BATON_ESTALE, BATON_ENOTHOLDER, BATON_EEXPIRED or
 * BATON_ECLOSED (the session already ended: its locks are free),
 * BATON_ENOSESSION (the cluster knows no such session: it never existed,
 * or it ended before the last 4096 sessions that ended, whose ends the
 * cluster remembers), BATON_ENAME, BATON_EPERM (a wrong secret), BATON_EINVAL
 * (`session` 0, `secret` NULL, `owner` BATON_OWNER_THREAD), BATON_ESEQ (a
 * release of that session with a later seq came first), BATON_ENOANSWER (no
 * answer within request_timeout_ms: the same release goes on in the background
 * until the cluster answers it). Thread-safe.
 */
BATON_API int baton_release_in(baton_client *c, uint64_t session,
                               const uint8_t secret[BATON_SECRET_SIZE],
                               const char *name, uint64_t owner,
                               uint64_t token);

/** Who holds a lock, as baton_holder() reports it. */
struct baton_holder {
        int held;         /* 0: free (other fields 0 but waiters) */
        uint64_t session; /* the holder's session id */
        uint64_t owner;   /* its owner tag */
        uint64_t token;   /* the current fencing token */
        uint32_t count;   /* reentrant hold count */
        /* Queued waiters. A free lock has some only for a moment (between
         * two entries), in its lock-delay, or when a multi-lock waiting
         * for its other names heads its queue. */
        uint32_t waiters;
        uint64_t index; /* Raft index the answer was read at */
        /* The holder session's client name (struct baton_options'
         * client_name), NUL-terminated; "" when free. */
        char client_name[65];
};

/**
 * Linearizable holder query (served by the leader after a barrier). Does
 * not need a session. `*out` is zeroed first. 0 or BATON_ENAME,
 * BATON_EINVAL, BATON_ENOANSWER (no answer within request_timeout_ms).
 * Thread-safe.
 */
BATON_API int baton_holder(baton_client *c, const char *name,
                           struct baton_holder *out);

/** One held lock, as baton_list() reports it. */
struct baton_lock_info {
        char name[256];   /* NUL-terminated */
        uint64_t session; /* the holder's session id */
        uint64_t owner;   /* its owner tag */
        uint64_t token;   /* the current fencing token */
        uint32_t count;   /* reentrant hold count */
        uint32_t waiters; /* queued waiters */
        /* The holder session's client name, NUL-terminated. */
        char client_name[65];
};

/**
 * Linearizable listing of the held locks whose name starts with `prefix`
 * (NULL or "": every lock), oldest lock first (served by the leader after
 * a barrier). Does not open a session. Fills at most `cap` entries of `out`
 * (and at most 1000, or as many as fit a reply) and sets `*n`; `*more` (if
 * not NULL) is set to 1 when more locks matched than were returned.
 * 0 or BATON_ENAME (prefix over 255 bytes), BATON_EINVAL, BATON_ENOANSWER
 * (no answer within request_timeout_ms). Thread-safe.
 */
BATON_API int baton_list(baton_client *c, const char *prefix,
                         struct baton_lock_info *out, size_t cap, size_t *n,
                         int *more);

/* The kinds of grant baton_holders() reports. */
enum baton_mode {
        BATON_MODE_EXCLUSIVE = 0, /* a lock's writer (baton_acquire()) */
        BATON_MODE_SHARED = 1,    /* a reader (baton_acquire_shared()) */
        BATON_MODE_PERMITS = 2,   /* permits of a semaphore */
        BATON_MODE_LEADER = 3,    /* an election's leader (baton_campaign()) */
};

/** One grant of a lock or a semaphore, as baton_holders() reports it. */
struct baton_grant {
        uint64_t session; /* the holder's session id */
        uint64_t owner;   /* its owner tag */
        /* Its fencing token: the Raft index of the log entry that granted
         * it, which says when in the log's order it was granted. */
        uint64_t token;
        uint32_t count;   /* reentrant hold count */
        int mode;         /* enum baton_mode */
        uint32_t permits; /* BATON_MODE_PERMITS: the permits it holds */
        uint32_t limit;   /* a semaphore's number of permits; 0 for a lock */
        uint32_t waiters; /* the lock's queued waiters */
        /* The holder session's client name, NUL-terminated. */
        char client_name[65];
        /* When it was granted: the leader's wall clock, in s since the
         * Unix epoch, to within a second (the leader writes its clock
         * into the log at most once a second); 0 when not known (granted
         * before any such entry). */
        uint32_t granted_s;
};

/**
 * Linearizable list of every grant of the lock or semaphore `name`, oldest
 * first (served by the leader after a barrier): a writer, readers, or a
 * semaphore's holders with their permits. Does not open a session. Fills
 * at most `cap` entries of `out` (at most 1000, or as many as fit a reply)
 * and sets `*n` (0: free); `*more` (if not NULL) is set to 1 when more
 * grants hold it than were returned. 0 or BATON_ENAME, BATON_EINVAL (`out`
 * or `n` NULL, `cap` 0), BATON_ENOMEM, BATON_ENOANSWER (no answer within
 * request_timeout_ms). Thread-safe.
 */
BATON_API int baton_holders(baton_client *c, const char *name,
                            struct baton_grant *out, size_t cap, size_t *n,
                            int *more);

/**
 * Linearizable check that `token` is still the current grant of `name`
 * (for resources that cannot store tokens). Does not need a session. 0 if
 * it is, BATON_ESTALE if not, BATON_ENAME, or BATON_ENOANSWER. Thread-safe.
 */
BATON_API int baton_check(baton_client *c, const char *name, uint64_t token);

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

/* --- Cluster administration ----------------------------------------------- */

/**
 * A member's place in the configuration (struct baton_member's role). The
 * numbers are part of the wire protocol (STATUS).
 */
enum baton_member_role {
        BATON_MEMBER_STANDBY = 0, /* replicates the log, does not vote */
        BATON_MEMBER_VOTER = 1,   /* votes and counts towards a majority */
        BATON_MEMBER_SPARE = 2,   /* neither replicates nor votes */
};

/**
 * What one node is doing in its current term (struct baton_status's role).
 * The numbers are part of the wire protocol (STATUS).
 */
enum baton_node_role {
        BATON_ROLE_UNAVAILABLE = 0, /* starting or stopping */
        BATON_ROLE_FOLLOWER = 1,
        BATON_ROLE_CANDIDATE = 2,
        BATON_ROLE_LEADER = 3,
};

/** One member of the cluster, as STATUS reports it. */
struct baton_member {
        uint64_t id;
        int role; /* enum baton_member_role */
        char raft_address[65];
        char client_address[65];
};

/** One node's view of the cluster. */
struct baton_status {
        char endpoint[65]; /* the node that answered */
        uint64_t id;
        int role; /* enum baton_node_role */
        uint64_t term;
        uint64_t leader_id; /* 0: unknown */
        uint64_t commit_index;
        uint64_t applied_index;
        uint64_t last_index;
        uint64_t sessions;
        uint64_t locks;
        uint64_t waiters;
        unsigned n_members;
        struct baton_member members[16];
};

/**
 * Ask one node (`endpoint`, "host:port", one of the handle's or any other,
 * over a short connection of its own) for its status; NULL asks the
 * leader (the node the handle is connected to, or the leader it names).
 * Does not open a session. 0 or BATON_ENOANSWER, BATON_EUNAVAILABLE (no
 * leader known), BATON_ECONNECT or BATON_ETLS (no connection to
 * `endpoint`: baton_errmsg() says "cannot connect to 127.0.0.1:7102:
 * connection refused"), BATON_EIO (the node closed the connection after
 * answering), BATON_EINVAL. Thread-safe.
 */
BATON_API int baton_status(baton_client *c, const char *endpoint,
                           struct baton_status *out);

/**
 * A node's Baton release and the newest format of each thing it replicates
 * or keeps on disk (docs/operations.md, "Upgrades"). A node of another
 * release may join the cluster only while it reads everything the others
 * write.
 */
struct baton_node_version {
        char release[33];   /* "0.2.0", as `batond --version` says; "" from
                               a node older than 0.2.0, which does not say */
        unsigned protocol;  /* the client protocol version it answered in */
        unsigned command;   /* log entries (commands, batches): it reads
                               versions 1..command and writes none newer */
        unsigned snapshot;  /* snapshot images: it reads 1..snapshot and
                               writes snapshot */
        unsigned container; /* the snapshot container (image and tail): the
                               one version it reads and writes */
};

/**
 * baton_status() and the versions of the node that answered, over a short
 * connection of its own (NULL `endpoint`: the leader, as for
 * baton_status()). A node older than 0.2.0 refuses the question; it is
 * asked baton_status()'s instead and `version` says so with an empty
 * `release` and zero formats. Returns what baton_status() returns; `out`
 * and `version` are filled on 0. Thread-safe.
 */
BATON_API int baton_status_version(baton_client *c, const char *endpoint,
                                   struct baton_status *out,
                                   struct baton_node_version *version);

/* What an online backup holds (batonctl snapshot save/inspect). Tokens
 * are the indexes of the entries that granted them, so every token handed
 * out up to the backup is at most `index`. */
struct baton_backup_info {
        uint64_t index;    /* the last entry the state includes */
        uint64_t term;     /* the leader's term when it was taken */
        uint64_t made_ms;  /* the leader's wall clock then, Unix ms */
        uint64_t size;     /* bytes of snapshot in the file */
        uint64_t sessions; /* counts of the state at `index` */
        uint64_t locks;
        uint64_t grants;
        uint64_t waiters;
};

/*
 * Take an online backup of the cluster's lock state and write it to `path`
 * (docs/operations.md, "Backup and restore"): the leader pins the state
 * after a read barrier (everything acknowledged before the call is in it),
 * the bytes come over a connection of their own, and the file (with a
 * SHA-256 of everything in it) appears at `path` only once whole and
 * synced; "PATH.part" holds it meanwhile. Needs an admin identity.
 * `timeout_ms` 0: ten minutes. 0, with `out` (may be NULL) filled, or
 * BATON_EPERM, BATON_ENOANSWER, BATON_EUNAVAILABLE, BATON_ECONNECT,
 * BATON_ETLS, BATON_EIO or BATON_ENOSPC (the file), BATON_ENOMEM,
 * BATON_EINVAL. Thread-safe; it
 * does not use the handle's connection.
 */
BATON_API int baton_backup_save(baton_client *c, const char *path,
                                uint32_t timeout_ms,
                                struct baton_backup_info *out);

/*
 * Read and check the backup file at `path` (its digest covers every
 * byte): 0 with `out` filled, BATON_ECORRUPT (truncated or changed),
 * BATON_EVERSION (a format this build does not read), BATON_EIO,
 * BATON_ENOMEM.
 */
BATON_API int baton_backup_inspect(const char *path,
                                   struct baton_backup_info *out);

/**
 * Add a member to the running cluster (it must run with join = true): the
 * leader checks that a node answers at `raft_address` as member `id`,
 * records its addresses, adds it and promotes it to voter once it has
 * caught up; 0 means it is a voter. Addresses as in batond's member lines:
 * "host:port" or "[ipv6]:port", but the raft address not IPv6 (libraft
 * 0.22.1 cannot use one).
 *
 * An add of a member that is one already with the same addresses carries
 * on where an earlier add stopped: so after BATON_ENOANSWER (the outcome
 * unknown) or BATON_EUNREACHABLE, the same call again finishes the add,
 * and baton_member_remove() undoes it.
 *
 * Errors, each with its detail in baton_errmsg(): BATON_EINVAL (id 0, a
 * malformed address, an IPv6 raft address: refused before anything is
 * sent), BATON_EIDINUSE (`id` is a member with other addresses),
 * BATON_EADDRINUSE (another member has one of the addresses),
 * BATON_EUNREACHABLE (no node answered at `raft_address` within 2 s:
 * nothing changed; or the node stopped answering while it caught up: it
 * is left a spare), BATON_ECANTCHANGE (another change runs),
 * BATON_ENOANSWER. Thread-safe.
 */
BATON_API int baton_member_add(baton_client *c, uint64_t id,
                               const char *raft_address,
                               const char *client_address);

/**
 * End the session `session` at once, as if its TTL had run out (Consul's
 * session destroy, Hazelcast's forceCloseSession): its locks are released
 * and handed to their queues with higher tokens, its waits are dropped,
 * and its client learns it as an expiry (on_lock_lost for each lock,
 * BATON_EEXPIRED for its calls). For an operator: the client's
 * certificate must have the admin role, and the apply log records its
 * identity. Does not need a session of this handle. 0, or BATON_EEXPIRED /
 * BATON_ECLOSED / BATON_ENOSESSION (the session had ended already, perhaps
 * by an earlier attempt of this call whose answer was lost), BATON_EPERM
 * (not an admin), BATON_EINVAL (`session` 0), BATON_ENOANSWER. Thread-safe.
 */
BATON_API int baton_session_revoke(baton_client *c, uint64_t session);

/**
 * Take the lock `name` away from the session `session` that holds it
 * with `token` (as baton_holders() lists them), its session living on:
 * that grant ends as if lost (the lock-delay applies), the lock goes to
 * its queue with a higher token, and the holder's client learns it at
 * its next keepalive (on_lock_lost for that lock; batonctl lock stops its
 * command). For an operator, as baton_session_revoke(): admin role, and
 * the apply log records who asked. Naming the token makes a retry safe:
 * it can never take away a later grant. 0, or BATON_ENOTHOLDER (no such
 * grant, perhaps taken away by an earlier attempt of this call),
 * BATON_EPERM, BATON_EINVAL (`session` or `token` 0), BATON_ENAME,
 * BATON_ENOANSWER. Thread-safe.
 */
BATON_API int baton_revoke(baton_client *c, const char *name, uint64_t session,
                           uint64_t token);

/**
 * Remove a member (a voter, or a spare an add left). 0 or BATON_ENOMEMBER
 * (no member has that id; baton_errmsg() lists the members),
 * BATON_ECANTCHANGE, BATON_EINVAL (id 0), BATON_ENOANSWER. Thread-safe.
 */
BATON_API int baton_member_remove(baton_client *c, uint64_t id);

/**
 * Ask the leader to hand leadership to member `id` (0: any other voter),
 * and wait until it has moved, over a connection of its own (sent again
 * only to a node that did not act on it). The leader first waits, for up
 * to two election timeouts, until the member has stored its whole log,
 * then hands over; the call returns once the leader knows its successor,
 * at most three election timeouts after the start (or the handle's
 * request timeout, if shorter). On 0, `*from` (may be NULL) is the member
 * that led and `*to` (may be NULL) the one leading now: another than `id`
 * if it won the election instead. When the node that led stepped down
 * before the election ended, the call asks the cluster's status until a
 * leader is known (within the request timeout), so `*to` is where
 * leadership actually went; 0 only if no leader was known by then (both
 * 0 from a node of an earlier release, which answers when the transfer
 * starts).
 *
 * Errors, each with its detail in baton_errmsg(): BATON_ENOMEMBER (no
 * such member), BATON_EISLEADER (it leads already), BATON_ENOTVOTER (a
 * spare or a standby, which cannot lead; for 0: no other voter),
 * BATON_EUNREACHABLE (it did not take over in time: down, or too far
 * behind; the leader kept leading, though a node that was only paused may
 * take over when it resumes), BATON_ENOANSWER. Thread-safe.
 */
BATON_API int baton_transfer_to(baton_client *c, uint64_t id, uint64_t *from,
                                uint64_t *to);

/** baton_transfer_to(c, id, NULL, NULL). */
BATON_API int baton_transfer(baton_client *c, uint64_t id);

/**
 * The roles of the cluster's access list (docs/security.md, "Roles"):
 * each allows what the one below it does, and more.
 */
enum baton_access_role {
        BATON_ACCESS_NONE = 0,  /* nothing */
        BATON_ACCESS_READ = 1,  /* status, queries, lists, watches */
        BATON_ACCESS_LOCK = 2,  /* and sessions, locks, keepalives */
        BATON_ACCESS_ADMIN = 3, /* and members, transfers, backups, the list */
};

#define BATON_ACL_IDENTITY_MAX 255 /* bytes of a certificate identity */

/** One rule of the access list: an identity and its role. */
struct baton_acl_rule {
        char identity[BATON_ACL_IDENTITY_MAX + 1]; /* NUL-terminated */
        int role;                                  /* enum baton_access_role */
};

/** The cluster's access list, as baton_acl_list() fills it. */
struct baton_acl {
        /* 0: the cluster has no list yet (its first leader is seeding it);
         * the rules and default are then the leader's config's, which
         * decide meanwhile. */
        int seeded;
        int default_role; /* of identities no rule names (not nodes') */
        unsigned n_rules;
        struct baton_acl_rule *rules; /* by identity; baton_acl_free() */
};

/**
 * Read the cluster's access list from the leader into `*out` (its rules
 * allocated; free them with baton_acl_free()). Admin role. 0 or
 * BATON_EPERM, BATON_ENOANSWER, BATON_ETLS, BATON_ENOMEM, BATON_EVERSION
 * (a newer list format), BATON_EINVAL. Thread-safe.
 */
BATON_API int baton_acl_list(baton_client *c, struct baton_acl *out);

/** Free what baton_acl_list() allocated in `acl` (accepts NULL). */
BATON_API void baton_acl_free(struct baton_acl *acl);

/**
 * Give certificate identity `identity` (1..BATON_ACL_IDENTITY_MAX bytes)
 * the role `role` (enum baton_access_role) in the cluster's access list,
 * through the log (the apply log records who asked); every node applies
 * it to every connection's next request. Admin role. A node identity
 * (tls-peer-identity) needs a rule to act as a client. 0 (also when the
 * identity had that role already) or BATON_EINVAL (bad identity or role,
 * the list is full, or it would leave no admin: baton_errmsg() says
 * which), BATON_EBUSY (the cluster's first list is not applied yet: try
 * again), BATON_EUNSUPPORTED (the cluster runs without TLS: no list),
 * BATON_EPERM, BATON_ENOANSWER, BATON_ETLS. Thread-safe.
 */
BATON_API int baton_acl_set(baton_client *c, const char *identity, int role);

/**
 * Take `identity`'s rule out of the access list: it gets the default
 * role again (a node identity, none). 0 or BATON_ENOTFOUND (no rule
 * names it), BATON_EINVAL (it would leave no admin), BATON_EBUSY,
 * BATON_EUNSUPPORTED, BATON_EPERM, BATON_ENOANSWER, BATON_ETLS.
 * Thread-safe.
 */
BATON_API int baton_acl_remove(baton_client *c, const char *identity);

/**
 * A fence for resource servers written in C: remembers the highest token
 * seen for a name and admits only tokens not lower than it. Caller-
 * allocated; not thread-safe (lock it yourself if shared).
 */
struct baton_fence {
        uint64_t highest;
};

/** Start with nothing seen. */
BATON_API void baton_fence_init(struct baton_fence *f);

/**
 * Admit `token` if it is not lower than every token admitted before (and
 * remember it); BATON_ESTALE otherwise. Returns 0 or BATON_ESTALE.
 */
BATON_API int baton_fence_admit(struct baton_fence *f, uint64_t token);

#ifdef __cplusplus
}
#endif

#endif /* BATON_H */
