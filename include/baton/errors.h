/*
 * Baton's error codes: the one table of them (BATON_ERROR_MAP), the
 * BATON_E* constants it defines, and the functions that describe a code.
 * The server, the client library and the command line tool all report
 * these codes; a program may include this header alone to name them.
 */
#ifndef BATON_ERRORS_H
#define BATON_ERRORS_H

#include "api.h"

#ifdef __cplusplus
extern "C" {
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
        X(EADDRINUSE,       -57, "another member has this address") \
        X(EQUOTA,           -58, "a quota of this client's identity is used up")
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

#ifdef __cplusplus
}
#endif

#endif /* BATON_ERRORS_H */
