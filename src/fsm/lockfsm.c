/* The lock state machine: a pure function of its state and a committed entry.
 * Here: its life cycle, applying entries (dispatching each command to
 * sessions, once and lookup), snapshots and the invariant check. */
#include "lockfsm.h"

#include <assert.h>
#include <string.h>

#include "../../include/baton/errors.h"
#include "entry.h"
#include "grant.h"
#include "holdtime.h"
#include "lookup.h"
#include "multi.h"
#include "once.h"
#include "quota.h"
#include "sessions.h"
#include "snapshot.h"
#include "state.h"
#include "step.h"

void lockfsm_limits_default(struct lockfsm_limits *l)
{
        l->max_sessions = 65536;
        l->max_locks_per_session = 1024;
        l->max_waiters_per_lock = 4096;
        l->max_inflight = 32;
        l->max_tombstones = 4096;
        l->min_ttl_ms = 1;
        l->max_ttl_ms = 3600 * 1000;
        l->max_permits = 4096;
        l->max_holders_per_lock = 65536;
        l->max_names_per_acquire = COMMAND_MULTI_MAX;
        l->max_lock_delay_ms = 60000;
        l->max_hold_ms = 86400 * 1000;
}

static bool limits_valid(const struct lockfsm_limits *l)
{
        return l->max_sessions > 0 && l->max_locks_per_session > 0 &&
               l->max_inflight > 0 && l->max_inflight <= 255 &&
               l->min_ttl_ms > 0 && l->min_ttl_ms <= l->max_ttl_ms &&
               l->max_permits > 0 && l->max_holders_per_lock > 0 &&
               l->max_names_per_acquire > 0 &&
               l->max_names_per_acquire <= COMMAND_MULTI_MAX &&
               l->max_hold_ms > 0;
}

struct lockfsm *lockfsm_create(const struct lockfsm_limits *limits,
                               const struct mem *mem)
{
        struct lockfsm_limits defaults;
        struct lockfsm *f;

        if (mem == NULL) {
                mem = &mem_libc;
        }
        if (limits == NULL) {
                lockfsm_limits_default(&defaults);
                limits = &defaults;
        }
        if (!limits_valid(limits)) {
                return NULL;
        }
        f = mem_alloc(mem, sizeof *f);
        if (f == NULL) {
                return NULL;
        }
        if (state_init(f, limits, mem) != 0) {
                mem_free(mem, f);
                return NULL;
        }
        return f;
}

void lockfsm_destroy(struct lockfsm *f)
{
        const struct mem *mem;

        if (f == NULL) {
                return;
        }
        mem = f->mem;
        state_close(f);
        mem_free(mem, f);
}

void lockfsm_set_event_cb(struct lockfsm *f, lockfsm_event_cb cb, void *data)
{
        f->cb = cb;
        f->cb_data = data;
}

uint64_t lockfsm_last_index(const struct lockfsm *f)
{
        return f->last_index;
}

/* Apply one command of the entry at `index`. 0, or BATON_ENOMEM with
 * nothing changed. */
static int apply_one(struct lockfsm *f, uint64_t index, const struct command *c,
                     struct lockfsm_result *res)
{
        struct step st = {f, index, 0, c};
        struct session *s;
        int rv = 0;

        st.stamp = f->stamp + 1 > index ? f->stamp + 1 : index;
        memset(res, 0, sizeof *res);
        switch (c->type) {
        case COMMAND_OPEN:
                rv = sessions_open(&st, res);
                break;
        case COMMAND_EXPIRE:
        case COMMAND_REVOKE:
        case COMMAND_TIMEOUT:
                s = state_session(f, c->session);
                if (s == NULL) {
                        sessions_reject_dead(f, c->session, res);
                } else if (c->type != COMMAND_TIMEOUT) {
                        sessions_end(&st, s, BATON_EEXPIRED, res);
                } else {
                        grant_unwait(&st, s, BATON_ETIMEDOUT, res);
                }
                break;
        case COMMAND_QUERY:
        case COMMAND_CHECK:
                lookup_apply(f, c, res);
                break;
        case COMMAND_UNBLOCK:
                grant_unblock(&st, res);
                break;
        case COMMAND_REVOKE_LOCK:
                grant_revoke(&st, res);
                break;
        case COMMAND_EXPIRE_HOLD:
                holdtime_expire(&st, res);
                break;
        case COMMAND_CLOCK:
                /* Time only moves on, whoever leads. */
                f->clock_ms =
                    c->time_ms > f->clock_ms ? c->time_ms : f->clock_ms;
                res->kind = PROTO_KIND_UPDATED;
                break;
        case COMMAND_CLOSE:
        case COMMAND_ACQUIRE:
        case COMMAND_MULTI:
        case COMMAND_RELEASE:
        case COMMAND_CANCEL:
        case COMMAND_PROCLAIM:
        case COMMAND_SET_VALUE:
        case COMMAND_EXTEND:
                rv = once_apply(&st, res);
                break;
        default:
                step_reject(res, BATON_EMALFORMED);
                break;
        }
        if (rv != 0) {
                return rv;
        }
        /* A MULTI that created locks took a stamp for each (multi.c). */
        f->stamp = st.stamp > f->stamp ? st.stamp : f->stamp;
        step_emit_result(&st, res);
        return 0;
}

/* Answer a command that did not decode; it changes nothing but the stamp. */
static void apply_malformed(struct lockfsm *f, uint64_t index, int status,
                            struct lockfsm_result *res)
{
        struct command c;

        memset(&c, 0, sizeof c);
        f->stamp = f->stamp + 1 > index ? f->stamp + 1 : index;
        step_reject(res, status);
        step_emit_result(&(struct step){f, index, f->stamp, &c}, res);
}

/* The start of every entry: the locks an earlier entry could not hand on
 * go to the heads of their queues, with this entry's index. Cannot fail. */
static void entry_begin(struct lockfsm *f, uint64_t index)
{
        static const struct command cause = {.type = COMMAND_BATCH};
        struct step st = {f, index, f->stamp, &cause};

        struct lock *l;

        assert(index > f->last_index && f->touched.head == NULL);
        f->entry_index = index;
        f->entry_done = 0;
        while ((l = lockchain_pop(&f->deferred)) != NULL) {
                l->deferred = false;
                grant_next(&st, l);
        }
}

/* Queue `l` for the next entry's start (entry_end() puts the queue in
 * lock age order: the order a restored replica, which finds them lock by
 * lock, hands them on too). */
static void defer_one(struct lockfsm *f, struct lock *l)
{
        if (l->deferred || l->touched) {
                return; /* deferred, or in touched: entry_end reaches it */
        }
        lockchain_push(&f->deferred, l);
        l->deferred = true;
}

/* Defer `l`, whose queue's head can be admitted; when that head is a
 * multi-lock's name, every lock of the multi-lock can admit its head, so
 * all of them, as a restore finds them. */
static void defer(struct lockfsm *f, struct lock *l)
{
        const struct hold *head =
            RQUEUE_DATA(rqueue_head(&l->waiters), struct hold, lock_link);
        struct lock *locks[COMMAND_MULTI_MAX];
        unsigned i, n;

        if (!head->multi) {
                defer_one(f, l);
                return;
        }
        n = multi_locks(head, locks);
        for (i = 0; i < n; i++) {
                defer_one(f, locks[i]);
        }
}

/* The end of every entry: of the locks it granted, those it freed again
 * are dropped, and those whose queue's head it could not admit (a writer
 * after this entry's grant, or readers after its writer) are deferred to
 * the next entry. */
static void entry_end(struct lockfsm *f, uint64_t index)
{
        struct lock *l;

        /* entry_begin() took every deferred lock; only this defers. */
        assert(f->deferred.head == NULL);
        while ((l = lockchain_pop(&f->touched)) != NULL) {
                l->touched = false;
                if (l->n_holders == 0 && l->n_waiters == 0 && !l->blocked) {
                        state_lock_drop(f, l);
                } else if (grant_admissible(f, l)) {
                        defer(f, l);
                }
        }
        lockchain_sort(&f->deferred);
        f->last_index = index;
        f->entry_index = 0;
}

/* Begin the entry at `index`, or pick up the one BATON_ENOMEM stopped. */
static void entry_enter(struct lockfsm *f, uint64_t index)
{
        if (f->entry_index != 0) {
                /* Raft applies the stopped entry again, nothing else. */
                assert(index == f->entry_index);
                return;
        }
        entry_begin(f, index);
}

/* Finish the entry, or leave it for raft's retry after BATON_ENOMEM; an
 * entry stopped before it changed anything is forgotten altogether, so the
 * machine is exactly as it was (and can be snapshotted). */
static int entry_leave(struct lockfsm *f, uint64_t index, int rv)
{
        if (rv == 0) {
                entry_end(f, index);
        } else if (f->entry_done == 0 && f->touched.head == NULL) {
                f->entry_index = 0;
        }
        return rv;
}

int lockfsm_apply_command(struct lockfsm *f, uint64_t index,
                          const struct command *c, struct lockfsm_result *res)
{
        entry_enter(f, index);
        return entry_leave(f, index, apply_one(f, index, c, res));
}

/* A batch: its commands in order, resuming after the last one done. */
static int apply_batch(struct lockfsm *f, uint64_t index, const void *buf,
                       size_t len, struct lockfsm_result *res)
{
        struct lockfsm_result one;
        struct entry_reader r;
        const uint8_t *p;
        size_t n;
        int rv = entry_reader_init(&r, buf, len);

        if (rv != 0) {
                apply_malformed(f, index, rv, res);
                return 0;
        }
        while (entry_reader_next(&r, &p, &n)) {
                struct command c;
                if (r.next <= f->entry_done) {
                        continue;
                }
                rv = command_decode(&c, p, n);
                if (rv != 0) {
                        apply_malformed(f, index, rv, &one);
                } else if ((rv = apply_one(f, index, &c, &one)) != 0) {
                        return rv;
                }
                f->entry_done = r.next;
        }
        memset(res, 0, sizeof *res);
        res->kind = PROTO_KIND_APPLIED;
        res->count = r.count;
        return 0;
}

int lockfsm_apply(struct lockfsm *f, uint64_t index, const void *buf,
                  size_t len, struct lockfsm_result *res)
{
        struct command c;
        int rv;

        entry_enter(f, index);
        if (entry_is_batch(buf, len)) {
                rv = apply_batch(f, index, buf, len, res);
        } else if ((rv = command_decode(&c, buf, len)) != 0) {
                /* Answer the undecodable entry; it changes nothing. */
                apply_malformed(f, index, rv, res);
                rv = 0;
        } else {
                rv = apply_one(f, index, &c, res);
        }
        return entry_leave(f, index, rv);
}

uint64_t lockfsm_deferred(const struct lockfsm *f)
{
        return f->deferred.n;
}

void lockfsm_stats(const struct lockfsm *f, struct lockfsm_stats *st)
{
        st->sessions = f->n_sessions;
        st->locks = f->n_locks;
        st->grants = f->n_grants;
        st->waiters = f->n_waiters;
        st->tombstones = f->tomb_count;
        st->record_bytes = pool_live_bytes(&f->pool);
        st->slab_bytes = pool_slab_bytes(&f->pool);
}

int lockfsm_snapshot(const struct lockfsm *f, void **buf, size_t *len)
{
        if (f->entry_index != 0) {
                return BATON_EBUSY; /* an entry stopped half-way */
        }
        return snapshot_encode(f, buf, len);
}

void lockfsm_snapshot_free(const struct lockfsm *f, void *buf)
{
        mem_free(f->mem, buf);
}

int lockfsm_restore(struct lockfsm *f, const void *buf, size_t len)
{
        return lockfsm_restore_with(f, buf, len, NULL, NULL);
}

/* Apply what `next` yields to `f` (which reports to no one). */
static int replay(struct lockfsm *f, lockfsm_entry_iter next, void *it)
{
        struct lockfsm_result res;
        const void *p;
        uint64_t index;
        size_t n;
        int rv;

        while ((rv = next(it, &index, &p, &n)) == 1) {
                if (index <= f->last_index) {
                        return BATON_ECORRUPT;
                }
                rv = lockfsm_apply(f, index, p, n, &res);
                if (rv != 0) {
                        return rv;
                }
        }
        return rv;
}

int lockfsm_restore_with(struct lockfsm *f, const void *buf, size_t len,
                         lockfsm_entry_iter next, void *it)
{
        struct lockfsm fresh;
        int rv;

        rv = state_init(&fresh, &f->limits, f->mem);
        if (rv != 0) {
                return rv;
        }
        /* The tail's entries meet the quotas as the live state does. */
        fresh.quota_cb = f->quota_cb;
        fresh.quota_data = f->quota_data;
        rv = snapshot_decode(&fresh, buf, len);
        if (rv == 0 && next != NULL) {
                rv = replay(&fresh, next, it);
        }
        if (rv == 0 && lockfsm_check(&fresh) != NULL) {
                rv = BATON_ECORRUPT;
        }
        if (rv != 0) {
                state_close(&fresh);
                return rv;
        }
        fresh.cb = f->cb;
        fresh.cb_data = f->cb_data;
        state_close(f);
        state_move(f, &fresh);
        return 0;
}

/* Walks one session's lists; NULL or the first violation. */
static const char *check_session(const struct lockfsm *f,
                                 const struct session *s)
{
        const struct hold *prev = NULL;
        const char *err;
        uint32_t holds = 0;
        struct rqueue *q;
        unsigned i;

        if (state_session(f, s->id) != s) {
                return "session missing from its map";
        }
        if (s->nonce != 0 && state_session_by_nonce(f, s->nonce) != s) {
                return "session missing from the nonce map";
        }
        if (state_tomb(f, s->id) != 0) {
                return "live session has a tombstone";
        }
        RQUEUE_FOREACH(q, &s->grants)
        {
                const struct hold *h =
                    RQUEUE_DATA(q, struct hold, session_link);
                if (h->waiting || hold_session(h) != s || h->count == 0) {
                        return "bad grant in a session's list";
                }
                if (h->token > f->last_index) {
                        return "grant token above the last index";
                }
                /* One lock twice: one owner's write and read grants. */
                if (prev != NULL &&
                    (h->token < prev->token ||
                     (h->token == prev->token &&
                      hold_lock(h)->created < hold_lock(prev)->created))) {
                        return "session grants out of order";
                }
                prev = h;
                holds++;
        }
        prev = NULL;
        RQUEUE_FOREACH(q, &s->waits)
        {
                const struct hold *h =
                    RQUEUE_DATA(q, struct hold, session_link);
                if (!h->waiting || hold_session(h) != s) {
                        return "bad waiter in a session's list";
                }
                if (prev != NULL && !state_wait_after(h, prev)) {
                        return "session waits out of order";
                }
                prev = h;
                holds++;
        }
        if (holds != s->n_holds) {
                return "session hold count disagrees with its lists";
        }
        if ((err = multi_check(s)) != NULL) {
                return err;
        }
        if (s->n_memo > f->limits.max_inflight || s->n_memo > s->memo_cap) {
                return "too many remembered outcomes";
        }
        for (i = 0; i < s->n_memo; i++) {
                if (s->memo[i].seq < s->floor ||
                    (i > 0 && s->memo[i].seq <= s->memo[i - 1].seq)) {
                        return "remembered outcomes out of order";
                }
        }
        return NULL;
}

/* True when (session, owner) appears among a lock's holds before `h`, in
 * h's mode (or in any mode when `any_mode`). */
static bool seen_before(const struct rqueue *list, const struct hold *h,
                        bool any_mode)
{
        struct rqueue *q;

        RQUEUE_FOREACH(q, list)
        {
                const struct hold *o = RQUEUE_DATA(q, struct hold, lock_link);
                if (o == h) {
                        return false;
                }
                if (hold_session(o) == hold_session(h) &&
                    o->owner == h->owner && (any_mode || o->mode == h->mode)) {
                        return true;
                }
        }
        return false;
}

/* One writer at most, and then no holder but the writer's own read grant
 * (a downgrade or upgrade in progress). */
static const char *check_writers(const struct lock *l, uint32_t writers)
{
        const struct hold *w = state_first_holder(l);
        struct rqueue *q;

        if (writers != l->n_writers || writers > 1) {
                return "lock writer count disagrees, or two writers";
        }
        if (writers == 0) {
                return NULL;
        }
        RQUEUE_FOREACH(q, &l->holders)
        {
                const struct hold *h = RQUEUE_DATA(q, struct hold, lock_link);
                if (hold_session(h) != hold_session(w) ||
                    h->owner != w->owner) {
                        return "a writer holds a lock with someone else";
                }
        }
        return NULL;
}

/* A hold's mode fits its lock's kind: a semaphore's holds take 1..limit
 * permits each, a read/write lock's none, an election's are writers. Any
 * hold may have a value but a multi-lock's name, whose MULTI carries none;
 * a lock's and a semaphore's may have a hold time, but not a multi-lock's
 * nor an election's, whose ACQUIREs carry none. */
static bool fits_kind(const struct lock *l, const struct hold *h)
{
        if ((h->multi && h->value_len != 0) ||
            (hold_clock(h).hold_ms > 0 &&
             (h->multi || l->mode == COMMAND_MODE_ELECTION))) {
                return false;
        }
        if (l->mode == COMMAND_MODE_SEMAPHORE) {
                return h->mode == COMMAND_MODE_SEMAPHORE && h->permits > 0 &&
                       h->permits <= l->limit;
        }
        if (l->mode == COMMAND_MODE_ELECTION) {
                return h->mode == COMMAND_MODE_EXCLUSIVE && h->permits == 0 &&
                       !h->multi && l->limit == 0 && !l->blocked;
        }
        return l->mode == COMMAND_MODE_EXCLUSIVE &&
               (l->limit == 0 || l->blocked) && h->permits == 0 &&
               (h->mode == COMMAND_MODE_EXCLUSIVE ||
                h->mode == COMMAND_MODE_SHARED);
}

static const char *check_lock(const struct lockfsm *f, const struct lock *l)
{
        uint64_t last_queued = 0, used = 0;
        uint32_t n = 0, writers = 0;
        const char *err;
        struct rqueue *q;

        if (state_lock(f, l->name, l->name_len) != l) {
                return "lock missing from its map";
        }
        RQUEUE_FOREACH(q, &l->holders)
        {
                const struct hold *h = RQUEUE_DATA(q, struct hold, lock_link);
                if (h->waiting || hold_lock(h) != l) {
                        return "bad holder in a lock's list";
                }
                if (state_session(f, hold_session(h)->id) != hold_session(h)) {
                        return "holder of an ended session";
                }
                if (seen_before(&l->holders, h,
                                l->mode == COMMAND_MODE_SEMAPHORE)) {
                        return "owner holds a lock twice in one mode, or a "
                               "semaphore twice";
                }
                if (!fits_kind(l, h) ||
                    !holdtime_clock_ok(h, false, hold_clock(h),
                                       f->last_index)) {
                        return "holder in a mode its lock's kind has not, "
                               "or of a hold clock from no entry of it";
                }
                writers += h->mode == COMMAND_MODE_EXCLUSIVE;
                used += h->permits;
                n++;
        }
        if (n != l->n_holders) {
                return "lock without exactly its counted holders";
        }
        if (used != l->used || used > l->limit) {
                return "a semaphore's permits held disagree with its count, "
                       "or exceed its limit";
        }
        if (n == 0 && l->n_waiters == 0 && !l->blocked) {
                return "lock with neither holders nor waiters nor a delay";
        }
        if (l->blocked && l->mode != COMMAND_MODE_EXCLUSIVE) {
                return "a semaphore or an election in a lock-delay";
        }
        if (grant_admissible(f, l) != l->deferred || l->touched) {
                return "a lock is deferred if and only if its queue's head "
                       "can be admitted: not so";
        }
        if ((err = check_writers(l, writers)) != NULL) {
                return err;
        }
        n = 0;
        RQUEUE_FOREACH(q, &l->waiters)
        {
                const struct hold *h = RQUEUE_DATA(q, struct hold, lock_link);
                if (!h->waiting || hold_lock(h) != l || !fits_kind(l, h) ||
                    hold_clock(h).armed != 0) {
                        return "bad waiter in a lock's queue";
                }
                if (state_session(f, hold_session(h)->id) != hold_session(h)) {
                        return "waiter of an ended session";
                }
                if (h->queued_at <= last_queued) {
                        return "lock queue out of FIFO order";
                }
                if (grant_find_holder(l, hold_session(h)->id, h->owner,
                                      GRANT_ANY_MODE) != NULL ||
                    seen_before(&l->waiters, h, true)) {
                        return "owner both holds and waits, or waits twice";
                }
                last_queued = h->queued_at;
                n++;
        }
        if (n != l->n_waiters) {
                return "lock waiter count disagrees with its queue";
        }
        return NULL;
}

const char *lockfsm_check(const struct lockfsm *f)
{
        uint64_t n = 0, grants = 0, waiters = 0, last = 0;
        const char *err;
        const struct lock *l;
        struct rqueue *q;

        RQUEUE_FOREACH(q, &f->lists->session_list)
        {
                const struct session *s = RQUEUE_DATA(q, struct session, link);
                if (s->id <= last || s->id > f->stamp) {
                        return "sessions out of order";
                }
                last = s->id;
                if ((err = check_session(f, s)) != NULL) {
                        return err;
                }
                n++;
        }
        if (n != f->n_sessions || n != f->sessions.count ||
            n > f->limits.max_sessions) {
                return "session count disagrees";
        }
        n = 0;
        last = 0;
        RQUEUE_FOREACH(q, &f->lists->lock_list)
        {
                l = RQUEUE_DATA(q, struct lock, link);
                if (l->created <= last) {
                        return "locks out of order";
                }
                last = l->created;
                if ((err = check_lock(f, l)) != NULL) {
                        return err;
                }
                grants += l->n_holders;
                waiters += l->n_waiters;
                n++;
        }
        if (n != f->n_locks || n != f->locks.count) {
                return "lock count disagrees";
        }
        if (state_records_room(f) != pool_live_bytes(&f->pool)) {
                return "records in the pool that no list reaches, or "
                       "fewer than the lists hold";
        }
        if (f->touched.head != NULL || f->entry_index != 0) {
                return "an entry is half-applied";
        }
        n = 0;
        last = 0;
        for (l = f->deferred.head; l != NULL; l = lockchain_next(l)) {
                if (!l->deferred || !grant_admissible(f, l) ||
                    l->created <= last) {
                        return "deferred lock with no one to admit, or out "
                               "of order";
                }
                last = l->created;
                n++;
        }
        if (n != f->deferred.n) {
                return "deferred lock count disagrees";
        }
        if (grants != f->n_grants || waiters != f->n_waiters) {
                return "grant or waiter count disagrees";
        }
        if (f->tomb_count != f->tombs.count ||
            f->tomb_count > f->limits.max_tombstones) {
                return "tombstone count disagrees";
        }
        return quota_check_counts(f);
}

#ifdef BATON_CHAOS_BUG_DIVERGE
bool lockfsm_chaos_diverge(struct lockfsm *f)
{
        struct rqueue *q;

        RQUEUE_FOREACH(q, &f->lists->lock_list)
        {
                struct lock *l = RQUEUE_DATA(q, struct lock, link);
                if (l->n_holders > 0) {
                        RQUEUE_DATA(rqueue_head(&l->holders), struct hold,
                                    lock_link)
                            ->owner ^= 1;
                        return true;
                }
        }
        return false;
}
#endif
