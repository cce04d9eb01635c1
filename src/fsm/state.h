/* The lock state machine's data model: sessions, locks, holds, tombstones. */
#ifndef FSM_STATE_H
#define FSM_STATE_H

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../lib/hmap.h"
#include "../lib/mem.h"
#include "../lib/pool.h"
#include "../lib/ptable.h"
#include "../lib/rqueue.h"
#include "../proto/command.h"
#include "lockchain.h"
#include "types.h"

struct quota_use; /* quota.h */

/*
 * One remembered outcome of a client request (the exactly-once memory): a
 * lockfsm_result without the duplicate flag, which a duplicate's answer
 * sets. Of `waiters` only a BATON_EQUOTA's quota kind (0..2): QUERY and
 * CHECK, whose answers carry a count there, are not remembered. Kept
 * small (40 bytes): a session pipelining N requests keeps N of these
 * until it acknowledges them.
 */
struct memo {
        uint64_t seq;
        uint64_t session; /* the holder a busy answer names, too */
        uint64_t owner;
        uint64_t token;
        uint32_t count;
        int16_t status;
        uint8_t kind;
        uint8_t quota; /* the answer's `waiters`: a BATON_EQUOTA's kind */
};

struct session {
        struct rqueue link; /* lockfsm.sessions, ordered by id */
        uint64_t id;        /* the OPEN command's stamp */
        uint64_t nonce;
        uint64_t floor; /* outcomes of seq < floor are forgotten */
        uint32_t ttl_ms;
        uint32_t n_holds; /* grants + waits, against max_locks_per_session */
        /* The lock-delay its OPEN asked for: each lock it loses to an
         * EXPIRE or a REVOKE waits at least this long (docs/fsm.md). */
        uint32_t lock_delay_ms;
        /* Grants of it an administrator has ended (REVOKE_LOCK), counted
         * so that its client, which sees the count in keepalive answers,
         * learns that one went (wrapping). */
        uint32_t revoked;
        struct rqueue grants; /* hold.session_link, by (token, lock age) */
        struct rqueue waits;  /* hold.session_link, by (queued_at, lock
                                age): a multi-lock's waits are adjacent */
        /* Outcomes by seq in memo[0..n_memo); the array holds memo_cap
         * and is sized to what the session has in flight, not to
         * max_inflight (state_memo_reserve). */
        struct memo *memo;
        uint8_t n_memo;
        uint8_t memo_cap;
        uint8_t name_len;
        /* OPEN's hash of the owner's secret, opaque; all zero for a
         * session opened before OPEN carried one (no secret matches). */
        uint8_t hash[COMMAND_HASH_SIZE];
        /* Its principal's counts for the quotas (quota.h), or NULL: an
         * OPEN without a principal counts nowhere. */
        struct quota_use *use;
        char name[]; /* name_len bytes, not NUL-terminated */
};

/*
 * A grant or a waiter. One record serves both so that handing a lock to its
 * next waiter needs no allocation: apply cannot fail half-way.
 */
struct hold {
        struct rqueue lock_link;    /* lock.holders or lock.waiters */
        struct rqueue session_link; /* session.grants or session.waits */
        /* Its lock and its session, as 32-bit references (rqueue.h):
         * hold_lock(), hold_session(). */
        int32_t lock_ref;
        int32_t session_ref;
        uint64_t owner;
        uint64_t seq; /* the ACQUIRE that created it */
        /* A waiter's fields and a grant's share their room: granting a
         * waiter overwrites what only a waiter needs. */
        union {
                struct {
                        uint64_t token; /* index of the granting entry */
                        uint32_t count; /* reentrant hold count */
                        /* The leader's wall clock when it was granted,
                         * in s since the Unix epoch, as the last CLOCK
                         * said (0: no CLOCK yet). */
                        uint32_t granted_s;
                }; /* a grant */
                struct {
                        uint64_t queued_at; /* the ACQUIRE's stamp */
                        uint32_t wait_ms;
                }; /* a waiter */
        };
        bool waiting : 1;
        /* A waiter that is one name of a multi-lock: its group is the
         * waits of its session with its seq (adjacent in session.waits),
         * admitted all at once or not at all (src/fsm/multi.h). */
        bool multi : 1;
        /* The record has room for a hold clock after its value
         * (hold_clock()): one ACQUIRE with a hold time, or a PROCLAIM or
         * SET_VALUE that replaced a record, allocated it with. */
        bool timed : 1;
        /* COMMAND_MODE_*: a writer, a reader, permits. An election's
         * candidates and leader are writers of a lock of that kind. */
        uint8_t mode;
        uint8_t value_len; /* its value's bytes; 0: none */
        uint32_t permits;  /* a semaphore's grant or waiter: permits; else 0 */
        /* Its value (docs/fsm.md, "Values"): what an election's candidate
         * or leader advertises, any other grant's data; value_len bytes
         * in the record's own allocation (not NUL-terminated). A
         * PROCLAIM or SET_VALUE of another length replaces the record
         * (src/fsm/elect.h). */
        char value[];
};

/*
 * A grant's hold time (docs/fsm.md, "Hold times"): the most it may be
 * held, ms, and the index of the entry its clock dates from (its grant,
 * or its last EXTEND; 0 for a waiter). A hold without room for one
 * (`timed` false) has none: hold_ms 0. Kept unaligned after the value, in
 * the records that have room, so that holds without one cost nothing.
 */
struct hold_clock {
        uint32_t hold_ms; /* 0: no hold time */
        uint64_t armed;
};

#define HOLD_CLOCK_SIZE 12 /* u32 hold_ms, u64 armed */

static inline struct hold_clock hold_clock(const struct hold *h)
{
        struct hold_clock k = {0, 0};

        if (h->timed) {
                memcpy(&k.hold_ms, h->value + h->value_len, 4);
                memcpy(&k.armed, h->value + h->value_len + 4, 8);
        }
        return k;
}

/* Set the clock of `h`, which has room for one. */
static inline void hold_clock_set(struct hold *h, struct hold_clock k)
{
        assert(h->timed);
        memcpy(h->value + h->value_len, &k.hold_ms, 4);
        memcpy(h->value + h->value_len + 4, &k.armed, 8);
}

/*
 * A read/write lock: its holders are one writer, or readers, or (for one
 * owner that downgrades or upgrades) that owner's two grants; holds record
 * their mode. Or a semaphore (`mode` COMMAND_MODE_SEMAPHORE): holders and
 * waiters of `permits` each, at most `limit` of them granted. Room for
 * what comes later: lock-delay,
 * which keeps an expired holder's lock unavailable for a while, becomes a
 * lock with no holder and a leader-proposed UNBLOCK entry that ends the
 * delay, so time still only reaches the machine through the log.
 */
struct lock {
        struct rqueue link; /* lockfsm.locks, by created */
        struct rqueue holders;
        struct rqueue waiters; /* FIFO */
        uint64_t created;      /* the stamp of the command that created it */
        uint32_t n_holders;
        uint32_t n_waiters;
        union {
                uint32_t limit;    /* a semaphore's permits, fixed */
                uint32_t delay_ms; /* a blocked read/write lock's delay */
        };
        uint32_t used; /* a semaphore's permits its holders hold */
        /* Its link in lockfsm.touched or lockfsm.deferred (lockchain.h),
         * when `touched` or `deferred` says it is in one. */
        int32_t entry_next;
        /* The kind: COMMAND_MODE_EXCLUSIVE (a read/write lock) or
         * COMMAND_MODE_SEMAPHORE. */
        uint8_t mode;
        uint8_t name_len;
        /* Exclusive holders: 0 or 1 (two bits, so that lockfsm_check()
         * sees a second one). */
        uint8_t n_writers : 2;
        /* In lockfsm.touched: an entry that granted it is being applied. */
        bool touched : 1;
        /* While touched: the entry granted it to a writer, so it admits
         * no one else before the next entry; a grant the entry made has
         * ended, so no one may upgrade to a writer before the next entry
         * (the writer would share that grant's token). */
        bool entry_writer : 1;
        bool entry_ended : 1;
        /* In its lock-delay: a holder was lost to EXPIRE or REVOKE, and
         * no one is granted the lock until an UNBLOCK entry. A read/write
         * lock only; it exists while blocked even with no one in it. */
        bool blocked : 1;
        bool deferred : 1; /* in lockfsm.deferred */
        char name[];       /* name_len bytes, not NUL-terminated */
};

struct tomb {
        struct hnode by_id;
        uint64_t id;
        int reason; /* BATON_EEXPIRED or BATON_ECLOSED */
};

static inline struct lock *hold_lock(const struct hold *h)
{
        return rref_at(h, h->lock_ref);
}

static inline struct session *hold_session(const struct hold *h)
{
        return rref_at(h, h->session_ref);
}

static inline void hold_set_lock(struct hold *h, const struct lock *l)
{
        h->lock_ref = rref_of(h, l);
}

static inline void hold_set_session(struct hold *h, const struct session *s)
{
        h->session_ref = rref_of(h, s);
}

struct state_lists {
        struct rqueue session_list;
        struct rqueue lock_list;
};

struct lockfsm {
        struct lockfsm_limits limits;
        const struct mem *mem;
        /* Sessions, locks, holds and outcome arrays: at their size rounded
         * to 8 bytes, with no allocator's header (pool.h). */
        struct pool pool;
        lockfsm_event_cb cb;
        void *cb_data;
        uint64_t last_index;
        /* The last command's stamp: every command applied takes
         * max(stamp + 1, its entry's index), a number unique to it that
         * orders sessions, locks and waiters even when one entry carries
         * several commands. Equal to the index for one-command entries
         * until a batch runs ahead of the log. */
        uint64_t stamp;
        /* The leader's wall clock as the last CLOCK command said, in ms
         * since the Unix epoch (never going back). */
        uint64_t clock_ms;
        /* An entry being applied (its index, 0 between entries) and how
         * many of its commands are done, so that an entry stopped by
         * BATON_ENOMEM resumes where it stopped when raft retries it. */
        uint64_t entry_index;
        uint32_t entry_done;
        /* The lists' heads, a record of the pool like the records in
         * them: a link reaches only that far (rqueue.h). */
        struct state_lists *lists;
        struct lockchain touched;  /* locks granted by the current entry */
        struct lockchain deferred; /* locks whose next grant waits for an
                                      entry, by age */
        /* Records by key, in tables that never write into a record
         * (ptable.h): a session is in `nonces` when its nonce is not 0. */
        struct ptable sessions; /* by id */
        struct ptable nonces;
        struct ptable locks; /* by name */
        struct hmap tombs;   /* by id; room for max_tombstones reserved */
        uint64_t n_sessions;
        uint64_t n_locks;
        uint64_t n_grants;
        uint64_t n_waiters;
        /* Quotas (quota.h): the counts per principal, and the limits'
         * source. */
        struct hmap uses;
        lockfsm_quota_cb quota_cb;
        void *quota_data;
        struct tomb *tomb_ring; /* max_tombstones slots, oldest at head */
        uint32_t tomb_head;
        uint32_t tomb_count;
};

/* Set up an empty state. 0 or BATON_ENOMEM (nothing to clean up). */
int state_init(struct lockfsm *f, const struct lockfsm_limits *limits,
               const struct mem *mem);
/* Free everything the state owns. */
void state_close(struct lockfsm *f);
/* What the records reachable from the state's lists take in its pool:
 * equal to pool_live_bytes() unless a record leaked or was freed twice
 * (lockfsm_check()). */
size_t state_records_room(const struct lockfsm *f);
/* Move the contents of src into dst (which must be closed or fresh);
 * src is left owning nothing. */
void state_move(struct lockfsm *dst, struct lockfsm *src);

struct session *state_session(const struct lockfsm *f, uint64_t id);
struct session *state_session_by_nonce(const struct lockfsm *f, uint64_t n);
struct lock *state_lock(const struct lockfsm *f, const char *name, size_t len);
/* BATON_EEXPIRED / BATON_ECLOSED for an ended session, 0 if unknown. */
int state_tomb(const struct lockfsm *f, uint64_t id);

/*
 * Two-step creation: *_alloc allocates (may fail, changes nothing), and the
 * matching reserve must succeed before *_link inserts, which cannot fail.
 */
/* A session with room for a client name of `name_len` bytes. */
struct session *state_session_alloc(struct lockfsm *f, size_t name_len);
void state_session_free(struct lockfsm *f, struct session *s);
int state_session_reserve(struct lockfsm *f);
void state_session_link(struct lockfsm *f, struct session *s);
/* Unlink and free a session with no holds left, leaving a tombstone. */
void state_session_end(struct lockfsm *f, struct session *s, int reason);

struct lock *state_lock_alloc(struct lockfsm *f, const char *name, size_t len);
void state_lock_free(struct lockfsm *f, struct lock *l);
/* Room for `n` more locks. */
int state_lock_reserve(struct lockfsm *f, size_t n);
void state_lock_link(struct lockfsm *f, struct lock *l);
/* Unlink and free a lock with no holders and no waiters. */
void state_lock_drop(struct lockfsm *f, struct lock *l);

/* A hold with room for a value of `value_len` bytes, and for a hold
 * clock if `timed`, its links self-linked, every field zero but
 * value_len and timed. */
struct hold *state_hold_alloc(struct lockfsm *f, size_t value_len, bool timed);
/* Free a hold detached from every list. */
void state_hold_free(struct lockfsm *f, struct hold *h);
/* Attach a grant (token and count set) or a waiter (queued at the tail). */
void state_grant_attach(struct lockfsm *f, struct hold *h);
void state_wait_attach(struct lockfsm *f, struct hold *h);
/* Whether wait `a` comes after wait `b` in their session's list. */
bool state_wait_after(const struct hold *a, const struct hold *b);
/* The holder a lookup names: the writer if one holds `l`, else the
 * oldest holder; NULL if none. */
struct hold *state_first_holder(const struct lock *l);
/* Detach a grant or a waiter; the record is not freed. */
void state_hold_detach(struct lockfsm *f, struct hold *h);

void state_tomb_add(struct lockfsm *f, uint64_t id, int reason);

struct memo *state_memo_find(struct session *s, uint64_t seq);
/* Make room for `n` outcomes (at most max_inflight) before anything
 * changes: 0 or BATON_ENOMEM (the session unchanged). Shrinks an array
 * left large by a burst when it can, which is never an error. */
int state_memo_reserve(struct lockfsm *f, struct session *s, unsigned n);
/* Forget outcomes below `ack` and raise the floor. */
void state_memo_ack(struct session *s, uint64_t ack);
/* Remember an outcome; the caller reserved a slot for it. */
void state_memo_put(struct session *s, uint64_t seq,
                    const struct lockfsm_result *res);
/* A remembered outcome as the answer to a duplicate of its request. */
void state_memo_result(const struct memo *m, struct lockfsm_result *res);
/* Store `res` as the outcome `m` remembers (its seq unchanged). */
void state_memo_set(struct memo *m, const struct lockfsm_result *res);

#endif /* FSM_STATE_H */
