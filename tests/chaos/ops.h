/* A chaos worker's operations: each libbaton or register call framed by its
 * history lines (invoke, then ok, fail or info), and the switch to a new
 * handle and incarnation after an outcome that is unknown. */
#ifndef CHAOS_OPS_H
#define CHAOS_OPS_H

#include <stdbool.h>
#include <stdint.h>

#include "../../include/baton.h"
#include "regclient.h"

#define OPS_KEY_CAP   256 /* a lock name and its NUL */
#define OPS_MULTI_MAX 4   /* names of one multi-lock the workers take */

/* The owner tags of the rwlock workload's grants, one per mode: the
 * apply log names each grant's mode, but one without modes (an older
 * batond's) names only the owner, which then tells the checkers the
 * readers' grants (tests/chaos/check/applylog.h). Every other workload
 * acquires as BATON_OWNER_THREAD (the thread id, top bit set). */
#define OPS_OWNER_WRITER 2
#define OPS_OWNER_READER 3

/* The owner tag of the semaphore workload's grants (one permit each). */
#define OPS_OWNER_SEM 4

/* The mode of a rwlock or semaphore workload's operation. */
enum ops_mode {
        OPS_PLAIN,  /* the other workloads': exclusive, no mode field */
        OPS_WRITER, /* exclusive, owner OPS_OWNER_WRITER, mode w */
        OPS_READER, /* shared, owner OPS_OWNER_READER, mode r */
        OPS_SEM,    /* a semaphore's permits, owner OPS_OWNER_SEM, mode s:
                       its register requests name the grant's session */
        OPS_MULTI,  /* a multi-lock, every name exclusive (the transfers
                       workload): mode=multi names=A,B on its acquires */
        OPS_LEADER, /* an election's candidate, its leadership held as an
                       exclusive grant (the election workload):
                       mode=leader value=V on its acquires (campaigns) and
                       releases (resignations) */
};

/* How an operation ended (docs/chaos.md: ok, fail, info). */
enum ops_outcome {
        OPS_OK,
        OPS_FAIL,
        OPS_INFO,
};

/* What a worker is, does and holds. Single-threaded: one worker process
 * runs one of these. */
struct ops_worker {
        int id;                /* J: w= */
        const char *endpoints; /* borrowed */
        uint32_t ttl_ms;
        uint32_t request_timeout_ms;
        int hist_fd;            /* the history, O_APPEND */
        baton_client *h;        /* the current handle */
        unsigned incarnation;   /* p = id * 1000 + incarnation */
        uint64_t session;       /* last session id the handle showed */
        struct regclient reg;   /* the counter, rwlock, semaphore workloads' */
        char key[OPS_KEY_CAP];  /* the lock of the latest operation */
        bool holding;           /* an acquire ok not yet released */
        char held[OPS_KEY_CAP]; /* the lock, or a multi-lock's first name */
        char held_names[OPS_MULTI_MAX][OPS_KEY_CAP]; /* a multi-lock's */
        size_t n_held_names;                         /* 0: a single lock */
        uint64_t token;                              /* of the held lock */
        uint64_t held_owner;   /* the owner tag it was acquired with */
        bool held_leader;      /* a leadership: resign, not release */
        uint64_t held_session; /* the session it was granted to */
        uint64_t held_epoch;   /* the workload's epoch at the grant */
        uint64_t n_ok, n_fail, n_info;
        uint64_t n_closes;
};

/* Open the first handle (incarnation 0). 0, or a BATON_E* code of
 * baton_client_create(). */
int ops_start(struct ops_worker *w);

/* Log a close of the session (invoke at `t`, then info once the handle is
 * destroyed), destroy the handle, and unless `last` continue as the next
 * incarnation with a new handle. Forgets any held lock: the close releases
 * it. */
void ops_close(struct ops_worker *w, uint64_t t, bool last);

/* baton_acquire() of `key`, waiting up to `wait_ms` (0: try). On ok the
 * worker holds it (w->held, w->token). `final` marks phase=final. */
enum ops_outcome ops_acquire(struct ops_worker *w, const char *key,
                             int64_t wait_ms, bool final);

/* The hold workload's acquire of `key`: baton_acquire_with() with
 * `hold_ms`, the most the grant is held (the cluster ends it then, unless
 * ops_extend() restarted it). The history says hold=MS. */
enum ops_outcome ops_acquire_hold(struct ops_worker *w, const char *key,
                                  int64_t wait_ms, uint32_t hold_ms);

/* The rwlock workload's acquire of `key`: as OPS_WRITER, baton_acquire()
 * with owner OPS_OWNER_WRITER; as OPS_READER, baton_acquire_shared() with
 * owner OPS_OWNER_READER. The history says mode=exclusive or mode=shared. */
enum ops_outcome ops_acquire_rw(struct ops_worker *w, const char *key,
                                int64_t wait_ms, enum ops_mode mode);

/* The semaphore workload's acquire of `permits` of the `limit` permits of
 * semaphore `key`: baton_sem_acquire() with owner OPS_OWNER_SEM. The
 * history says mode=semaphore limit=N permits=K. `final` marks
 * phase=final. */
enum ops_outcome ops_acquire_sem(struct ops_worker *w, const char *key,
                                 int64_t wait_ms, uint32_t limit,
                                 uint32_t permits, bool final);

/* The transfers workload's acquire of the `n` locks `names` (1 to
 * OPS_MULTI_MAX, each exclusive) all at once: baton_multi_acquire(), one
 * token for all of them. The history logs one acquire with key= the first
 * name, mode=multi and names=A,B,... (the checkers make one operation per
 * name of it). `final` marks phase=final. */
enum ops_outcome ops_acquire_multi(struct ops_worker *w,
                                   const char *const *names, size_t n,
                                   int64_t wait_ms, bool final);

/* The election workload's campaign for `key`: baton_campaign() with owner
 * BATON_OWNER_THREAD, advertising `value` (no spaces), waiting up to
 * `wait_ms`. Logged as an acquire with mode=leader value=V, so that the
 * per-lock checkers take a leadership for an exclusive grant whose token
 * is the leadership's. On ok the worker holds it; ops_release() resigns
 * it (baton_resign()), logged as a release with mode=leader. `final`
 * marks phase=final. */
enum ops_outcome ops_campaign(struct ops_worker *w, const char *key,
                              int64_t wait_ms, const char *value, bool final);

/* baton_proclaim() of `value` (no spaces) by the held leadership: logged
 * as f=proclaim with token= and value=. A refusal (or BATON_ECONNECT /
 * BATON_ETLS: never sent) changed nothing and is a fail; no answer, or a
 * session that ended during the call, is an info (it may still be
 * applied), after which the worker goes on as its next incarnation, as
 * after any info. */
enum ops_outcome ops_proclaim(struct ops_worker *w, const char *value);

/* baton_extend() of the held grant to `hold_ms` from now: logged as
 * f=extend with token= and hold=, its outcomes as ops_proclaim()'s. */
enum ops_outcome ops_extend(struct ops_worker *w, uint32_t hold_ms);

/* baton_release() of the held lock, baton_resign() of a held leadership,
 * or baton_multi_release() of a held
 * multi-lock (logged as one release with names=, as its acquire); the
 * worker holds nothing after it, whatever the outcome. A multi-lock's
 * release that fails for another reason than a session over before the
 * call is info: baton_multi_release() tells only the first failure, and
 * the other names may have been released. */
enum ops_outcome ops_release(struct ops_worker *w, bool final);

/* baton_holder() of `key`, into `*out` (may be NULL). A query changes
 * nothing, so an error is logged as fail, never info. */
enum ops_outcome ops_holder(struct ops_worker *w, const char *key,
                            struct baton_holder *out);

/* Register READ of `key` with the held token: its value and version.
 * `mode` OPS_PLAIN sends the counter's READ, the others name the mode
 * (OPS_SEM also the session of the grant). */
enum ops_outcome ops_read(struct ops_worker *w, const char *key,
                          enum ops_mode mode, uint64_t *value,
                          uint64_t *version);

/* Register ENTER of `key` in `mode` (OPS_WRITER, OPS_READER or OPS_SEM)
 * with the held token: the holder says it is inside; the answer carries the
 * value and version, as a READ's. */
enum ops_outcome ops_enter(struct ops_worker *w, const char *key,
                           enum ops_mode mode, uint64_t *value,
                           uint64_t *version);

/* Register LEAVE of `key` in `mode` with the held token. */
enum ops_outcome ops_leave(struct ops_worker *w, const char *key,
                           enum ops_mode mode);

/* Register WRITE of `value` to `key` with the held token, based on the
 * version read before. */
enum ops_outcome ops_write(struct ops_worker *w, const char *key,
                           uint64_t value, uint64_t based_on);

/* After an operation: if the handle's session expired, log its close and
 * go on as the next incarnation. */
void ops_check_session(struct ops_worker *w);

#endif /* CHAOS_OPS_H */
