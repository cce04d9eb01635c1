/* The lock state machine: a pure function of its state and a committed entry.
 */
#ifndef FSM_LOCKFSM_H
#define FSM_LOCKFSM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../lib/mem.h"
#include "../proto/command.h"
#include "../proto/proto.h"
#include "types.h"

/*
 * Semantics (docs/fsm.md has the full account):
 *
 * - A log entry carries one command or a batch of them (entry.h), applied
 *   in order. A lock's fencing token is the index of the entry that
 *   granted it. Grants of different locks by one entry share its index (a
 *   CLOSE handing several locks on, or a batch), as the nodes one
 *   ZooKeeper multi-op creates share a zxid; the same lock is never
 *   granted twice by one entry, so tokens strictly increase per lock. When
 *   an entry frees a lock it granted itself, the lock stays between
 *   holders: a try finds it busy if anyone waits, an acquire queues, and
 *   the next entry, whatever it carries, first hands it to the head of its
 *   queue. The leader proposes an empty batch when nothing else would
 *   follow (lockfsm_deferred()).
 * - Every command takes a stamp, max(previous stamp + 1, entry index): a
 *   session's id is its OPEN's stamp, so ids are unique and increasing,
 *   and equal the OPEN entry's index unless a batch ran the stamps ahead.
 * - A held lock with waiters queues them FIFO. When the holder releases,
 *   closes or expires, the next waiter is granted in the same apply step.
 *   Every queued waiter belongs to a live session: closing or expiring a
 *   session removes its waiters in the same step.
 * - Exactly once: client commands carry (session, seq, ack). The outcome of
 *   every seq >= ack is remembered (at most limits.max_inflight per session)
 *   and a duplicate gets the remembered outcome without changing anything;
 *   a queued ACQUIRE's remembered outcome follows the waiter (QUEUED, then
 *   GRANTED or TIMEDOUT/CANCELLED). A seq below the acknowledged floor is
 *   BATON_ESEQ. Ended sessions leave a tombstone (the last
 *   limits.max_tombstones of them) so late requests learn BATON_EEXPIRED
 *   or BATON_ECLOSED, and a retried CLOSE succeeds again.
 * - Nothing here reads a clock: the leader proposes EXPIRE and TIMEOUT.
 *   CLOCK, the leader's too, says its wall clock, which the grants after
 *   it record (for people, never for a decision).
 *   REVOKE, an operator's, ends a session as EXPIRE does; REVOKE_LOCK
 *   ends one grant so, its session living on (and counting it). When either
 *   carries a lock-delay, a read/write lock whose holder is lost that way
 *   grants no one until the leader's UNBLOCK.
 */

/* Fill `l` with the default limits (struct lockfsm_limits, types.h). */
void lockfsm_limits_default(struct lockfsm_limits *l);

struct lockfsm;

/*
 * Create an empty state machine. `limits` is copied (NULL: the defaults);
 * `mem` is borrowed for the life of the machine (NULL: libc). Returns NULL
 * when out of memory or when the limits are invalid.
 */
struct lockfsm *lockfsm_create(const struct lockfsm_limits *limits,
                               const struct mem *mem);
void lockfsm_destroy(struct lockfsm *f); /* accepts NULL */

/* Events are delivered synchronously from inside lockfsm_apply(). */
void lockfsm_set_event_cb(struct lockfsm *f, lockfsm_event_cb cb, void *data);

/*
 * Quotas per identity (src/fsm/quota.h; docs/security.md, "Quotas"): `cb`
 * gives the limits of the identity whose principal an OPEN carried, as
 * ACL_QUOTA_KINDS values in the order of enum acl_quota_kind
 * (src/fsm/acl.h; 0: no limit), or NULL for none. It is asked during
 * apply and must answer as of the entry being applied (the access list
 * after the entries before it), so that every replica refuses alike: an
 * OPEN past its sessions quota, and an ACQUIRE or MULTI past the locks
 * (grants and waits) or waiters quota, is BATON_EQUOTA with the quota's
 * kind in `waiters` and its limit in `count`. NULL (the default): no
 * quotas. A restore's state keeps the callback of the state it replaces.
 */
void lockfsm_set_quota_cb(struct lockfsm *f, lockfsm_quota_cb cb, void *data);

/* What the live sessions of `principal` have now: used[0] sessions,
 * used[1] holds (grants and waits), used[2] waits; zeros for none. */
void lockfsm_quota_use(const struct lockfsm *f, uint64_t principal,
                       uint32_t used[3]);

/*
 * Apply the log entry at `index` (strictly above every index applied
 * before): one command, or a batch (entry.h). Returns 0 with the outcome
 * in `*res`: a single command's (which can be an error status: a malformed
 * or refused command changes nothing and is answered, never fatal), or for
 * a batch kind PROTO_KIND_APPLIED with the number of commands in `count`,
 * each command's outcome going out as its RESULT event. Or BATON_ENOMEM:
 * the entry stopped before a command that changed nothing and delivered no
 * event; apply the same entry (same index, same bytes) again to finish it,
 * without repeating what was done. Nothing else may be applied, and no
 * snapshot taken, until then.
 */
int lockfsm_apply(struct lockfsm *f, uint64_t index, const void *buf,
                  size_t len, struct lockfsm_result *res);

/* The same, for an entry of one command, already decoded and validated. */
int lockfsm_apply_command(struct lockfsm *f, uint64_t index,
                          const struct command *c, struct lockfsm_result *res);

/* How many locks wait for the next entry, whatever it carries, to hand
 * them to the heads of their queues. */
uint64_t lockfsm_deferred(const struct lockfsm *f);

/* The index of the last entry applied or restored (0 for an empty machine). */
uint64_t lockfsm_last_index(const struct lockfsm *f);

/*
 * Read-only lookups on local state. They are linearizable only when the
 * caller knows its state is current (after a committed barrier).
 * lockfsm_query fills `res` as a QUERY entry would.
 */
void lockfsm_query(const struct lockfsm *f, const char *name, size_t len,
                   struct lockfsm_result *res);

/* Fill `res` as a CHECK entry would: CURRENT, or ESTALE with the current
 * holder (zeros if free). */
void lockfsm_check_token(const struct lockfsm *f, const char *name, size_t len,
                         uint64_t token, struct lockfsm_result *res);

/* 0 for a live session, else BATON_EEXPIRED, BATON_ECLOSED (from its
 * tombstone) or BATON_ENOSESSION. */
int lockfsm_session_status(const struct lockfsm *f, uint64_t session);

/* Visit every grant with a hold time (per lock, oldest first): its
 * session, the seq of the ACQUIRE that made it, its lock's name and its
 * hold_ms, so a new leader can start their clocks (in full: it cannot
 * know how much of them its predecessor had counted). The callback must
 * not change `f`. */
void lockfsm_foreach_timed(const struct lockfsm *f,
                           void (*cb)(void *data, uint64_t session,
                                      uint64_t seq, const char *name,
                                      size_t name_len, uint32_t hold_ms),
                           void *data);

/* The hold clock of the grant that `session`'s ACQUIRE of seq `seq` made
 * on the lock `name` (`len` bytes): true with its hold_ms (0: none) and
 * the index of the entry it dates from in `*armed`; false when there is
 * no such grant. */
bool lockfsm_hold_clock(const struct lockfsm *f, uint64_t session, uint64_t seq,
                        const char *name, size_t len, uint32_t *hold_ms,
                        uint64_t *armed);

/* Visit every live session (by id) and every waiter (per lock, FIFO), so a
 * new leader can start their clocks. Callbacks must not change `f`. */
void lockfsm_foreach_session(const struct lockfsm *f,
                             void (*cb)(void *data, uint64_t session,
                                        uint32_t ttl_ms),
                             void *data);
void lockfsm_foreach_waiter(const struct lockfsm *f,
                            void (*cb)(void *data, uint64_t session,
                                       uint64_t seq, const char *name,
                                       size_t name_len, uint32_t wait_ms),
                            void *data);

/*
 * Visit every held lock whose name starts with `prefix` (`len` bytes, 0:
 * every lock), in lock age order (the index of the entry that created the
 * lock), with its holder described as lockfsm_query() would (kind
 * PROTO_KIND_HOLDER). Stops when `cb` returns false. `name` and `holder` are
 * borrowed for the callback only, and the callback must not change `f`.
 */
void lockfsm_foreach_lock(const struct lockfsm *f, const char *prefix,
                          size_t len,
                          bool (*cb)(void *data, const char *name,
                                     size_t name_len,
                                     const struct lockfsm_result *holder),
                          void *data);

/* Visit every lock in its lock-delay (name, the creation stamp an UNBLOCK
 * names, and the delay its EXPIRE or REVOKE carried), so a new leader can
 * time their ends. The callback must not change `f`. */
void lockfsm_foreach_blocked(const struct lockfsm *f,
                             void (*cb)(void *data, const char *name,
                                        size_t name_len, uint64_t created,
                                        uint32_t delay_ms),
                             void *data);

/* One grant of a lock, as lockfsm_foreach_holder() reports it. */
struct lockfsm_holder {
        uint64_t session;
        uint64_t owner;
        uint64_t token;   /* the index of the entry that granted it */
        uint32_t count;   /* reentrant holds */
        uint8_t mode;     /* COMMAND_MODE_* */
        uint32_t permits; /* a semaphore's grant: its permits */
        uint32_t limit;   /* a semaphore's permits; 0 for a lock */
        uint32_t waiters; /* the lock's queue */
        /* The leader's wall clock when it was granted, in s since the
         * Unix epoch, to within the leader's CLOCK interval; 0: before
         * any CLOCK. */
        uint32_t granted_s;
        /* The grant's value: what an election's leader advertises, any
         * other grant's data (docs/fsm.md, "Values"); value_len bytes,
         * borrowed for the callback only, 0 when it has none. */
        const char *value;
        uint8_t value_len;
};

/*
 * Visit every grant of the lock `name` (`len` bytes), oldest first, until
 * `cb` returns false; nothing if no one holds it. `h` is borrowed for the
 * callback only, which must not change `f`.
 */
void lockfsm_foreach_holder(
    const struct lockfsm *f, const char *name, size_t len,
    bool (*cb)(void *data, const struct lockfsm_holder *h), void *data);

struct lockfsm_stats {
        uint64_t sessions;
        uint64_t locks; /* locks held or awaited */
        uint64_t grants;
        uint64_t waiters;
        uint64_t tombstones;
        /* Memory the sessions, locks, holds and outcomes take: their
         * records' bytes, each rounded to 8, and the slabs holding them
         * (src/lib/pool.h). Tables and records too large for a slab are
         * not counted. */
        uint64_t record_bytes;
        uint64_t slab_bytes;
};

void lockfsm_stats(const struct lockfsm *f, struct lockfsm_stats *st);

/* How many grants of a live session an administrator has ended
 * (REVOKE_LOCK), wrapping; 0 if there is no such session. */
uint32_t lockfsm_session_revoked(const struct lockfsm *f, uint64_t session);

/* The TTL a live session asked for; 0 if there is no such session. */
uint32_t lockfsm_session_ttl(const struct lockfsm *f, uint64_t session);

/* The lowest seq a new request of `session` may take that no request
 * the state machine has applied took: above its acknowledged floor and
 * every outcome it remembers (1 for a session it does not know). For a
 * host that numbers a client's requests for it (the HTTP API). */
uint64_t lockfsm_session_next_seq(const struct lockfsm *f, uint64_t session);

/* The hash a live session's OPEN carried (COMMAND_HASH_SIZE bytes, all
 * zero for a session from before hashes, borrowed until `f` changes); NULL
 * if there is no such session. */
const uint8_t *lockfsm_session_hash(const struct lockfsm *f, uint64_t session);

/* The client name a live session's OPEN carried (`*len` bytes, 0..64, not
 * NUL-terminated, borrowed until `f` changes); NULL and 0 if there is no
 * such session. */
const char *lockfsm_session_name(const struct lockfsm *f, uint64_t session,
                                 uint8_t *len);

/* A live session, as lockfsm_foreach_session_from() reports it: what its
 * OPEN asked for and what it holds and awaits now. */
struct lockfsm_session_info {
        uint64_t id;
        uint32_t ttl_ms;
        uint32_t lock_delay_ms;
        uint32_t revoked;  /* grants an administrator ended (wrapping) */
        uint32_t n_grants; /* its grants */
        uint32_t n_waits;  /* its waits (a multi-lock's: one per name) */
        const char *name;  /* its client name, name_len bytes, borrowed */
        uint8_t name_len;
};

/* One grant or wait of a session, as lockfsm_foreach_session_hold()
 * reports it. */
struct lockfsm_session_hold {
        bool waiting;
        uint8_t mode; /* COMMAND_MODE_*, as lockfsm_holder's */
        uint64_t owner;
        uint64_t token;   /* a grant's; 0 for a wait */
        uint32_t count;   /* a grant's reentrant holds; 0 for a wait */
        uint32_t permits; /* a semaphore's grant or wait: permits */
        uint32_t wait_ms; /* a wait's: how long it asked to wait */
        const char *name; /* the lock's, name_len bytes, borrowed */
        uint8_t name_len;
};

/*
 * Visit the live sessions whose id is above `after` (0: every one), by id,
 * until `cb` returns false; `s` is borrowed for the callback only, which
 * must not change `f`.
 */
void lockfsm_foreach_session_from(
    const struct lockfsm *f, uint64_t after,
    bool (*cb)(void *data, const struct lockfsm_session_info *s), void *data);

/* Fill `out` with the live session `id`: 0, or lockfsm_session_status()'s
 * error when it is not live. */
int lockfsm_session_info(const struct lockfsm *f, uint64_t id,
                         struct lockfsm_session_info *out);

/* Visit the grants of the live session `id` (by token), then its waits (in
 * the order they queued), until `cb` returns false. `h` is borrowed for
 * the callback only, which must not change `f`. */
void lockfsm_foreach_session_hold(
    const struct lockfsm *f, uint64_t id,
    bool (*cb)(void *data, const struct lockfsm_session_hold *h), void *data);

/*
 * Walk the structure and check every invariant (holders and waiters belong
 * to live sessions, counts agree, queues ordered, maps consistent). Returns
 * NULL when all hold, or a static description of the first violation. For
 * tests and debug builds: O(state).
 */
const char *lockfsm_check(const struct lockfsm *f);

/*
 * Serialize the whole state deterministically: the same log gives the same
 * bytes on every replica. `*buf` is allocated with the machine's allocator
 * and owned by the caller (free it with lockfsm_snapshot_free()). 0,
 * BATON_ENOMEM, or BATON_EBUSY while an entry stopped by BATON_ENOMEM is
 * unfinished.
 */
int lockfsm_snapshot(const struct lockfsm *f, void **buf, size_t *len);

/* Free a buffer from lockfsm_snapshot() (accepts NULL). */
void lockfsm_snapshot_free(const struct lockfsm *f, void *buf);

/*
 * Replace the state by a snapshot's. 0, BATON_ECORRUPT (bad checksum,
 * truncated, inconsistent), BATON_EVERSION, BATON_ETOOMANYSESSIONS (more
 * sessions than limits.max_sessions: a node run with a lower limit than
 * the one that wrote it) or BATON_ENOMEM; on error the state is unchanged.
 * `buf` is borrowed.
 */
int lockfsm_restore(struct lockfsm *f, const void *buf, size_t len);

/*
 * The entries to apply after a snapshot's state, one per call: 1 with the
 * next entry's index and bytes (borrowed until the next call), 0 at the
 * end, or a negative BATON_E* code.
 */
typedef int (*lockfsm_entry_iter)(void *it, uint64_t *index, const void **buf,
                                  size_t *len);

/*
 * lockfsm_restore(), then lockfsm_apply() of every entry `next` yields,
 * before the state is replaced: a snapshot made of an older state and the
 * entries since (src/server/snap/snaptail.h) becomes the state at its last
 * entry, or nothing changes. No event is reported for those entries (a
 * restore reports none). Errors as lockfsm_restore(), and lockfsm_apply()'s.
 */
int lockfsm_restore_with(struct lockfsm *f, const void *buf, size_t len,
                         lockfsm_entry_iter next, void *it);

#ifdef BATON_CHAOS_BUG_DIVERGE
/* batond-diverge only (docs/chaos.md, "Negative controls"): alter the
 * holder of the oldest held lock's first grant (its owner tag), in this
 * replica alone: the holder's release is then refused here and nowhere
 * else, so the difference lasts. true when a lock was held. */
bool lockfsm_chaos_diverge(struct lockfsm *f);
#endif

#endif /* FSM_LOCKFSM_H */
