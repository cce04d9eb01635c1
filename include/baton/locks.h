/*
 * Locks through a libbaton handle: exclusive and shared (read/write)
 * locks, semaphores and multi-locks, their release, the queries of who
 * holds what, and the fence a resource server checks tokens with.
 */
#ifndef BATON_LOCKS_H
#define BATON_LOCKS_H

#include <stddef.h>
#include <stdint.h>

#include "api.h"
#include "client.h"

#ifdef __cplusplus
extern "C" {
#endif

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

/* The longest value a grant carries (a lock's, a reader's, a semaphore
 * grant's, or what an election's leader advertises). */
#define BATON_VALUE_MAX 255

/**
 * How baton_acquire_with() takes a name. Zero it, then set what differs
 * from an exclusive lock without a value.
 */
struct baton_acquire_options {
        /* BATON_MODE_EXCLUSIVE (0: as baton_acquire()), BATON_MODE_SHARED
         * (as baton_acquire_shared()) or BATON_MODE_PERMITS (as
         * baton_sem_acquire(), with `limit` and `permits`). */
        int mode;
        uint32_t limit;   /* BATON_MODE_PERMITS: the semaphore's permits */
        uint32_t permits; /* BATON_MODE_PERMITS: the permits to take */
        /* The grant's value: NULL or "" for none, else a C string of at
         * most BATON_VALUE_MAX bytes (where the holder is, a job id...),
         * which holder queries (baton_holders_values()) and watch events
         * report while the grant lasts. A waiter's value is the grant's
         * once granted; a reentrant acquire keeps the grant's value. */
        const char *value;
        /* The most the grant may be held, ms from its grant: then the
         * cluster ends it as a revoke would (on_lock_lost runs at the next
         * keepalive), unless baton_extend() restarted the time. 0: no
         * limit (held until released or the session ends). At most the
         * cluster's max-hold-ms (BATON_EINVAL above). A reentrant acquire
         * keeps the grant's. Not for an election (see baton_campaign()). */
        uint32_t hold_ms;
        /* Zero (BATON_EINVAL otherwise): room for later options. */
        uint32_t reserved32;
        uint64_t reserved[3];
};

/**
 * Acquire `name` as `opts` says (NULL: as baton_acquire()): the exclusive
 * lock, the read lock or a semaphore's permits, with a value and a hold
 * time. Waiting,
 * the session, reentrancy, the token and the errors are those of
 * baton_acquire(), baton_acquire_shared() and baton_sem_acquire() for
 * each mode, and: BATON_EINVAL (a mode other than those three, `value`
 * over BATON_VALUE_MAX bytes, a hold time over the cluster's max-hold-ms,
 * a reserved field not zero). A value or a hold time needs a cluster of
 * release 0.3.0 or later (an older leader refuses it, and no node applies
 * what it cannot read). Thread-safe.
 */
BATON_API int baton_acquire_with(baton_client *c, const char *name,
                                 uint64_t owner, int64_t wait_ms,
                                 const struct baton_acquire_options *opts,
                                 uint64_t *token);

/**
 * Set the value of the grant of `name` that `owner` holds with `token` to
 * `value` (NULL or "": none; at most BATON_VALUE_MAX bytes), keeping the
 * grant and its token: fenced as a release is, so a holder that lost the
 * grant cannot change its successor's. Works for every kind of grant,
 * an election's leadership included (as baton_proclaim()). Never opens a
 * session. Errors: BATON_ESTALE (the owner holds `name` with another
 * token), BATON_ENOTHOLDER (it holds no grant of `name`; a waiter does
 * not), BATON_EINVAL (`value` too long), BATON_EEXPIRED, BATON_ENAME,
 * BATON_ENOANSWER. Thread-safe.
 */
BATON_API int baton_set_value(baton_client *c, const char *name, uint64_t owner,
                              uint64_t token, const char *value);

/**
 * Restart the hold time of the grant of `name` that `owner` holds with
 * `token`, which was acquired with one (struct baton_acquire_options'
 * hold_ms): from the moment the cluster applies this, it is held for at
 * most `hold_ms` (1.. the cluster's max-hold-ms). Too late once the
 * cluster ended the grant (BATON_ENOTHOLDER). Never opens a session.
 * Errors: BATON_ESTALE (another token), BATON_ENOTHOLDER (no grant of
 * `name`, or it ended), BATON_EINVAL (`hold_ms` 0 or above the cluster's
 * max-hold-ms, or a grant acquired without a hold time), BATON_EEXPIRED,
 * BATON_ENAME, BATON_ENOANSWER. Thread-safe.
 */
BATON_API int baton_extend(baton_client *c, const char *name, uint64_t owner,
                           uint64_t token, uint32_t hold_ms);

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
 * baton_set_value() for a grant of ANOTHER session `session`, proven by
 * its `secret`, as baton_release_in() releases one (the same seq rule,
 * the same errors, and BATON_EINVAL for a `value` over BATON_VALUE_MAX
 * bytes). Thread-safe.
 */
BATON_API int baton_set_value_in(baton_client *c, uint64_t session,
                                 const uint8_t secret[BATON_SECRET_SIZE],
                                 const char *name, uint64_t owner,
                                 uint64_t token, const char *value);

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

/** A held lock and its holder's value, as baton_list_values() reports
 * them. */
struct baton_lock_value {
        struct baton_lock_info lock;
        /* The value of the grant `lock` describes (its session and token),
         * NUL-terminated; "" when it has none. */
        char value[BATON_VALUE_MAX + 1];
};

/**
 * baton_list() with each lock's value: the same listing, answers and
 * errors. Needs a cluster of release 0.3.0 or later (an older one
 * refuses the request). Thread-safe.
 */
BATON_API int baton_list_values(baton_client *c, const char *prefix,
                                struct baton_lock_value *out, size_t cap,
                                size_t *n, int *more);

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

/** A grant and its value, as baton_holders_values() reports them. */
struct baton_grant_value {
        struct baton_grant grant;
        /* The grant's value (baton_acquire_with(), baton_set_value(), an
         * election's campaign), NUL-terminated; "" when it has none. */
        char value[BATON_VALUE_MAX + 1];
};

/**
 * baton_holders() with each grant's value: the same query, answers and
 * errors. Thread-safe.
 */
BATON_API int baton_holders_values(baton_client *c, const char *name,
                                   struct baton_grant_value *out, size_t cap,
                                   size_t *n, int *more);

/**
 * Linearizable check that `token` is still the current grant of `name`
 * (for resources that cannot store tokens). Does not need a session. 0 if
 * it is, BATON_ESTALE if not, BATON_ENAME, or BATON_ENOANSWER. Thread-safe.
 */
BATON_API int baton_check(baton_client *c, const char *name, uint64_t token);

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

#endif /* BATON_LOCKS_H */
