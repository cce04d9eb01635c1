/* The lock state machine: a pure function of its state and a committed entry.
 */
#include "lockfsm.h"

#include <assert.h>
#include <string.h>

#include "../../include/baton.h"
#include "entry.h"
#include "snapshot.h"
#include "state.h"

void lockfsm_limits_default(struct lockfsm_limits *l)
{
        l->max_sessions = 65536;
        l->max_locks_per_session = 1024;
        l->max_waiters_per_lock = 4096;
        l->max_inflight = 32;
        l->max_tombstones = 4096;
        l->min_ttl_ms = 1;
        l->max_ttl_ms = 3600 * 1000;
}

static bool limits_valid(const struct lockfsm_limits *l)
{
        return l->max_sessions > 0 && l->max_locks_per_session > 0 &&
               l->max_inflight > 0 && l->max_inflight <= 255 &&
               l->min_ttl_ms > 0 && l->min_ttl_ms <= l->max_ttl_ms;
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

/* The context of one command's apply, so helpers can emit events. */
struct step {
        struct lockfsm *f;
        uint64_t index; /* the entry's: every token made here */
        uint64_t stamp; /* the command's: ids and order (state.h) */
        const struct command *c;
};

static void emit(const struct step *st, uint8_t type, const struct hold *h,
                 int status)
{
        struct lockfsm_event ev;

        if (st->f->cb == NULL) {
                return;
        }
        memset(&ev, 0, sizeof ev);
        ev.type = type;
        ev.cause = st->c->type;
        ev.index = st->index;
        ev.status = status;
        if (h != NULL) {
                ev.session = h->session->id;
                ev.seq = h->seq;
                ev.owner = h->owner;
                ev.token = h->waiting ? 0 : h->token;
                /* A grant that began as a waiter still holds its wait_ms,
                 * which snapshots drop: report it only while waiting, so a
                 * restored replica emits the same events. */
                ev.wait_ms = h->waiting ? h->wait_ms : 0;
                ev.name = h->lock->name;
                ev.name_len = h->lock->name_len;
        }
        st->f->cb(st->f->cb_data, &ev);
}

static void emit_session(const struct step *st, uint8_t type,
                         const struct session *s)
{
        struct lockfsm_event ev;

        if (st->f->cb == NULL) {
                return;
        }
        memset(&ev, 0, sizeof ev);
        ev.type = type;
        ev.cause = st->c->type;
        ev.index = st->index;
        ev.session = s->id;
        ev.nonce = s->nonce;
        st->f->cb(st->f->cb_data, &ev);
}

static void emit_result(const struct step *st, const struct lockfsm_result *r)
{
        const struct command *c = st->c;
        struct lockfsm_event ev;

        if (st->f->cb == NULL) {
                return;
        }
        memset(&ev, 0, sizeof ev);
        ev.type = LOCKFSM_EV_RESULT;
        ev.cause = c->type;
        ev.index = st->index;
        ev.session = c->type == COMMAND_OPEN ? r->session : c->session;
        ev.seq = c->seq;
        ev.owner = c->owner;
        ev.token = r->token;
        ev.nonce = c->nonce;
        ev.status = r->status;
        if (c->type != COMMAND_OPEN) {
                ev.name = c->name;
                ev.name_len = c->name_len;
        }
        ev.result = r;
        st->f->cb(st->f->cb_data, &ev);
}

static void reject(struct lockfsm_result *res, int status)
{
        memset(res, 0, sizeof *res);
        res->status = status;
        res->kind = PROTO_KIND_REJECTED;
}

/* Fill the result describing a grant (or a waiter) as its owner sees it. */
static void describe(struct lockfsm_result *res, uint8_t kind,
                     const struct hold *h)
{
        memset(res, 0, sizeof *res);
        res->kind = kind;
        res->session = h->session->id;
        res->owner = h->owner;
        res->token = h->waiting ? 0 : h->token;
        res->count = h->waiting ? 0 : h->count;
}

/* Rewrites a waiter's remembered ACQUIRE outcome once the waiter resolves,
 * so a retried ACQUIRE learns what became of it. */
static void resolve_memo(struct hold *w, uint8_t kind, int status)
{
        struct memo *m = state_memo_find(w->session, w->seq);

        if (m == NULL) {
                return;
        }
        describe(&m->res, kind, w);
        m->res.status = status;
}

static struct hold *find_holder(const struct lock *l, uint64_t session,
                                uint64_t owner)
{
        struct queue *q;

        QUEUE_FOREACH(q, &l->holders)
        {
                struct hold *h = QUEUE_DATA(q, struct hold, lock_link);
                if (h->session->id == session && h->owner == owner) {
                        return h;
                }
        }
        return NULL;
}

/* A session's waits are bounded by max_locks_per_session and usually few,
 * so they are the short list to search. */
static struct hold *find_wait(const struct session *s, const struct lock *l,
                              bool by_seq, uint64_t key)
{
        struct queue *q;

        QUEUE_FOREACH(q, &s->waits)
        {
                struct hold *h = QUEUE_DATA(q, struct hold, session_link);
                if (h->lock == l && (by_seq ? h->seq : h->owner) == key) {
                        return h;
                }
        }
        return NULL;
}

/* Whether the entry being applied has granted `l` already. */
static bool granted_in_entry(const struct lock *l)
{
        return !queue_empty(&l->entry_link);
}

/* Make `h` a grant of its lock with this entry's index as its token. The
 * caller made sure the entry has not granted the lock yet. */
static void grant(const struct step *st, struct hold *h)
{
        assert(!granted_in_entry(h->lock));
        h->token = st->index;
        h->count = 1;
        state_grant_attach(st->f, h);
        queue_push_tail(&st->f->touched, &h->lock->entry_link);
}

/* Hand a lock without holders to the head of its queue. */
static void grant_head(const struct step *st, struct lock *l)
{
        struct hold *w =
            QUEUE_DATA(queue_head(&l->waiters), struct hold, lock_link);

        state_hold_detach(st->f, w);
        grant(st, w);
        emit(st, LOCKFSM_EV_GRANT, w, 0);
        resolve_memo(w, PROTO_KIND_GRANTED, 0);
}

/* End a grant; hand the lock to the next waiter or drop it when free. A
 * lock this entry has granted already is neither handed on nor dropped
 * now: a second grant would repeat its token, so the entry's end defers
 * it to the next entry (lockfsm_apply). */
static void release_grant(const struct step *st, struct hold *g)
{
        struct lockfsm *f = st->f;
        struct lock *l = g->lock;

        state_hold_detach(f, g);
        emit(st, LOCKFSM_EV_RELEASE, g, 0);
        mem_free(f->mem, g);
        if (l->n_holders > 0 || granted_in_entry(l)) {
                return;
        }
        if (queue_empty(&l->waiters)) {
                state_lock_drop(f, l);
                return;
        }
        /* Every waiter belongs to a live session (ending one removes its
         * waits first), so the head of the queue is the next owner. */
        grant_head(st, l);
}

/* Remove a waiter that leaves without a grant. */
static void drop_wait(const struct step *st, struct hold *w, int status)
{
        state_hold_detach(st->f, w);
        emit(st, LOCKFSM_EV_UNQUEUE, w, status);
        mem_free(st->f->mem, w);
}

/* CLOSE and EXPIRE: waits go first, so a released lock is never handed to
 * the session that is ending. */
static void end_session(const struct step *st, struct session *s, int reason,
                        struct lockfsm_result *res)
{
        uint64_t id = s->id;

        while (!queue_empty(&s->waits)) {
                drop_wait(st,
                          QUEUE_DATA(queue_head(&s->waits), struct hold,
                                     session_link),
                          reason);
        }
        while (!queue_empty(&s->grants)) {
                release_grant(st, QUEUE_DATA(queue_head(&s->grants),
                                             struct hold, session_link));
        }
        emit_session(st, LOCKFSM_EV_END, s);
        state_session_end(st->f, s, reason);
        memset(res, 0, sizeof *res);
        res->kind =
            reason == BATON_ECLOSED ? PROTO_KIND_CLOSED : PROTO_KIND_EXPIRED;
        res->session = id;
}

static int do_open(const struct step *st, struct lockfsm_result *res)
{
        struct lockfsm *f = st->f;
        const struct command *c = st->c;
        struct session *s;

        if (c->nonce != 0 &&
            (s = state_session_by_nonce(f, c->nonce)) != NULL) {
                memset(res, 0, sizeof *res);
                res->kind = PROTO_KIND_OPENED;
                res->session = s->id;
                res->duplicate = true;
                return 0;
        }
        if (c->ttl_ms < f->limits.min_ttl_ms ||
            c->ttl_ms > f->limits.max_ttl_ms) {
                reject(res, BATON_ETTL);
                return 0;
        }
        if (f->n_sessions >= f->limits.max_sessions) {
                reject(res, BATON_ETOOMANYSESSIONS);
                return 0;
        }
        s = state_session_alloc(f);
        if (s == NULL) {
                return BATON_ENOMEM;
        }
        if (state_session_reserve(f) != 0) {
                state_session_free(f, s);
                return BATON_ENOMEM;
        }
        s->id = st->stamp;
        s->nonce = c->nonce;
        s->ttl_ms = c->ttl_ms;
        s->name_len = c->name_len;
        if (c->name_len > 0) {
                memcpy(s->name, c->name, c->name_len);
        }
        state_session_link(f, s);
        emit_session(st, LOCKFSM_EV_OPEN, s);
        memset(res, 0, sizeof *res);
        res->kind = PROTO_KIND_OPENED;
        res->session = s->id;
        return 0;
}

/* Reject a command for a session that is not live. */
static void reject_dead(const struct lockfsm *f, uint64_t session,
                        struct lockfsm_result *res)
{
        int reason = state_tomb(f, session);

        reject(res, reason != 0 ? reason : BATON_ENOSESSION);
}

/* Memory an ACQUIRE may need, allocated before anything changes. */
struct prep {
        struct lock *lock; /* when the lock does not exist yet */
        struct hold *hold;
};

static int acquire_prepare(struct lockfsm *f, const struct command *c,
                           struct prep *p)
{
        p->lock = NULL;
        p->hold = state_hold_alloc(f);
        if (p->hold == NULL) {
                return BATON_ENOMEM;
        }
        if (state_lock(f, c->name, c->name_len) != NULL) {
                return 0;
        }
        p->lock = state_lock_alloc(f, c->name, c->name_len);
        if (p->lock == NULL || state_lock_reserve(f) != 0) {
                state_lock_free(f, p->lock);
                mem_free(f->mem, p->hold);
                return BATON_ENOMEM;
        }
        return 0;
}

static void do_acquire(const struct step *st, struct session *s, struct prep *p,
                       struct lockfsm_result *res)
{
        struct lockfsm *f = st->f;
        const struct command *c = st->c;
        struct lock *l = state_lock(f, c->name, c->name_len);
        struct hold *h;

        if (c->mode != COMMAND_MODE_EXCLUSIVE) {
                reject(res, BATON_EUNSUPPORTED);
                return;
        }
        if (l != NULL) {
                h = find_holder(l, s->id, c->owner);
                if (h != NULL) {
                        if (h->count == UINT32_MAX) {
                                reject(res, BATON_EOVERFLOW);
                                return;
                        }
                        h->count++;
                        describe(res, PROTO_KIND_REENTERED, h);
                        return;
                }
                if (find_wait(s, l, false, c->owner) != NULL) {
                        reject(res, BATON_EWAITING);
                        return;
                }
                /* A lock between holders (handed on by this entry, or
                 * waiting for the next one to grant its queue's head)
                 * belongs to its queue: a try finds it busy. Only when no
                 * one waits is it free, and then a try waits one entry
                 * too rather than take this entry's token twice. */
                if (c->wait_ms == COMMAND_WAIT_TRY && l->n_holders > 0) {
                        h = QUEUE_DATA(queue_head(&l->holders), struct hold,
                                       lock_link);
                        describe(res, PROTO_KIND_REJECTED, h);
                        res->status = BATON_EBUSY;
                        return;
                }
                if (c->wait_ms == COMMAND_WAIT_TRY && l->n_waiters > 0) {
                        reject(res, BATON_EBUSY);
                        return;
                }
        }
        if (s->n_holds >= f->limits.max_locks_per_session) {
                reject(res, BATON_ETOOMANYLOCKS);
                return;
        }
        if (l != NULL && l->n_waiters >= f->limits.max_waiters_per_lock) {
                reject(res, BATON_ETOOMANYWAITERS);
                return;
        }
        h = p->hold;
        p->hold = NULL;
        h->session = s;
        h->owner = c->owner;
        h->seq = c->seq;
        if (l == NULL) {
                l = p->lock;
                p->lock = NULL;
                l->created = st->stamp;
                l->mode = c->mode;
                state_lock_link(f, l);
                h->lock = l;
                grant(st, h);
                emit(st, LOCKFSM_EV_GRANT, h, 0);
                describe(res, PROTO_KIND_GRANTED, h);
                return;
        }
        h->lock = l;
        h->queued_at = st->stamp;
        h->wait_ms = c->wait_ms;
        state_wait_attach(f, h);
        emit(st, LOCKFSM_EV_QUEUE, h, 0);
        describe(res, PROTO_KIND_QUEUED, h);
        res->count = l->n_waiters;
}

static void do_release(const struct step *st, struct session *s,
                       struct lockfsm_result *res)
{
        const struct command *c = st->c;
        struct lock *l = state_lock(st->f, c->name, c->name_len);
        struct hold *h = l != NULL ? find_holder(l, s->id, c->owner) : NULL;

        if (h == NULL) {
                reject(res, BATON_ENOTHOLDER);
                return;
        }
        if (h->token != c->token) {
                reject(res, BATON_ESTALE);
                return;
        }
        h->count--;
        describe(res, PROTO_KIND_RELEASED, h);
        if (h->count == 0) {
                release_grant(st, h);
        }
}

/* CANCEL (by the client) and TIMEOUT (by the leader) of a waiting ACQUIRE. */
static void do_unwait(const struct step *st, struct session *s, int status,
                      struct lockfsm_result *res)
{
        const struct command *c = st->c;
        struct lock *l = state_lock(st->f, c->name, c->name_len);
        struct hold *w = l != NULL ? find_wait(s, l, true, c->target) : NULL;

        if (w == NULL) {
                reject(res, BATON_ENOTWAITING);
                return;
        }
        resolve_memo(w, PROTO_KIND_REJECTED, status);
        describe(res, PROTO_KIND_CANCELLED, w);
        drop_wait(st, w, status);
}

/* Number of remembered outcomes left once `ack` takes effect. */
static unsigned memo_after_ack(const struct session *s, uint64_t ack)
{
        unsigned i, n = 0;

        for (i = 0; i < s->n_memo; i++) {
                n += s->memo[i].seq >= ack;
        }
        return n;
}

/* CLOSE, ACQUIRE, RELEASE, CANCEL: the exactly-once steps of docs/fsm.md. */
static int do_client(const struct step *st, struct lockfsm_result *res)
{
        struct lockfsm *f = st->f;
        const struct command *c = st->c;
        struct session *s = state_session(f, c->session);
        struct prep p = {NULL, NULL};
        struct memo *m;
        bool full;

        if (s == NULL) {
                if (c->type == COMMAND_CLOSE &&
                    state_tomb(f, c->session) == BATON_ECLOSED) {
                        memset(res, 0, sizeof *res);
                        res->kind = PROTO_KIND_CLOSED;
                        res->session = c->session;
                        res->duplicate = true;
                        return 0;
                }
                reject_dead(f, c->session, res);
                return 0;
        }
        if (c->seq == 0 || c->seq < c->ack) {
                reject(res, BATON_EINVAL);
                return 0;
        }
        if (c->seq < s->floor) {
                reject(res, BATON_ESEQ);
                return 0;
        }
        m = state_memo_find(s, c->seq);
        /* A CLOSE needs no slot: its outcome lives in the tombstone. */
        full = m == NULL && c->type != COMMAND_CLOSE &&
               memo_after_ack(s, c->ack) >= f->limits.max_inflight;
        /* Allocate before the ack or anything else changes state. */
        if (m == NULL && !full && c->type == COMMAND_ACQUIRE &&
            acquire_prepare(f, c, &p) != 0) {
                return BATON_ENOMEM;
        }
        state_memo_ack(s, c->ack);
        if (m != NULL) {
                m = state_memo_find(s, c->seq); /* the ack moved the slots */
                *res = m->res;
                res->duplicate = true;
                return 0;
        }
        if (full) {
                reject(res, BATON_EINFLIGHT);
                return 0;
        }
        switch (c->type) {
        case COMMAND_CLOSE:
                /* The tombstone remembers a close; the session is gone. */
                end_session(st, s, BATON_ECLOSED, res);
                return 0;
        case COMMAND_ACQUIRE:
                do_acquire(st, s, &p, res);
                mem_free(f->mem, p.hold);
                if (p.lock != NULL) {
                        state_lock_free(f, p.lock);
                }
                break;
        case COMMAND_RELEASE:
                do_release(st, s, res);
                break;
        default:
                assert(c->type == COMMAND_CANCEL);
                do_unwait(st, s, BATON_ECANCELLED, res);
                break;
        }
        state_memo_put(s, c->seq, res);
        return 0;
}

void lockfsm_check_token(const struct lockfsm *f, const char *name, size_t len,
                         uint64_t token, struct lockfsm_result *res)
{
        lockfsm_query(f, name, len, res);
        if (res->kind == PROTO_KIND_HOLDER && res->token == token) {
                res->kind = PROTO_KIND_CURRENT;
                return;
        }
        res->status = BATON_ESTALE;
        res->kind = PROTO_KIND_REJECTED;
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
                rv = do_open(&st, res);
                break;
        case COMMAND_EXPIRE:
        case COMMAND_TIMEOUT:
                s = state_session(f, c->session);
                if (s == NULL) {
                        reject_dead(f, c->session, res);
                } else if (c->type == COMMAND_EXPIRE) {
                        end_session(&st, s, BATON_EEXPIRED, res);
                } else {
                        do_unwait(&st, s, BATON_ETIMEDOUT, res);
                }
                break;
        case COMMAND_QUERY:
                lockfsm_query(f, c->name, c->name_len, res);
                break;
        case COMMAND_CHECK:
                lockfsm_check_token(f, c->name, c->name_len, c->token, res);
                break;
        case COMMAND_CLOSE:
        case COMMAND_ACQUIRE:
        case COMMAND_RELEASE:
        case COMMAND_CANCEL:
                rv = do_client(&st, res);
                break;
        default:
                reject(res, BATON_EMALFORMED);
                break;
        }
        if (rv != 0) {
                return rv;
        }
        f->stamp = st.stamp;
        emit_result(&st, res);
        return 0;
}

/* Answer a command that did not decode; it changes nothing but the stamp. */
static void apply_malformed(struct lockfsm *f, uint64_t index, int status,
                            struct lockfsm_result *res)
{
        struct command c;

        memset(&c, 0, sizeof c);
        f->stamp = f->stamp + 1 > index ? f->stamp + 1 : index;
        reject(res, status);
        emit_result(&(struct step){f, index, f->stamp, &c}, res);
}

/* The start of every entry: the locks an earlier entry could not hand on
 * go to the heads of their queues, with this entry's index. Cannot fail. */
static void entry_begin(struct lockfsm *f, uint64_t index)
{
        static const struct command cause = {.type = COMMAND_BATCH};
        struct step st = {f, index, f->stamp, &cause};

        assert(index > f->last_index && queue_empty(&f->touched));
        f->entry_index = index;
        f->entry_done = 0;
        while (!queue_empty(&f->deferred)) {
                struct lock *l = QUEUE_DATA(queue_head(&f->deferred),
                                            struct lock, entry_link);
                queue_remove(&l->entry_link);
                f->n_deferred--;
                grant_head(&st, l);
        }
}

/* Queue `l` for the next entry's start, in lock age order: the order a
 * restored replica, which finds them lock by lock, hands them on too. */
static void defer(struct lockfsm *f, struct lock *l)
{
        struct queue *at = queue_tail(&f->deferred);

        while (at != &f->deferred &&
               QUEUE_DATA(at, struct lock, entry_link)->created > l->created) {
                at = at->prev;
        }
        queue_insert_after(at, &l->entry_link);
        f->n_deferred++;
}

/* The end of every entry: of the locks it granted, those it freed again
 * are dropped, or deferred to the next entry when someone waits. */
static void entry_end(struct lockfsm *f, uint64_t index)
{
        while (!queue_empty(&f->touched)) {
                struct lock *l = QUEUE_DATA(queue_head(&f->touched),
                                            struct lock, entry_link);
                queue_remove(&l->entry_link);
                if (l->n_holders > 0) {
                        continue;
                }
                if (l->n_waiters == 0) {
                        state_lock_drop(f, l);
                } else {
                        defer(f, l);
                }
        }
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
        } else if (f->entry_done == 0 && queue_empty(&f->touched)) {
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
        return f->n_deferred;
}

void lockfsm_query(const struct lockfsm *f, const char *name, size_t len,
                   struct lockfsm_result *res)
{
        struct lock *l = state_lock(f, name, len);
        struct hold *h;

        memset(res, 0, sizeof *res);
        if (l == NULL || l->n_holders == 0) {
                /* Free, or between holders until the next entry. */
                res->kind = PROTO_KIND_FREE;
                res->waiters = l != NULL ? l->n_waiters : 0;
                return;
        }
        h = QUEUE_DATA(queue_head(&l->holders), struct hold, lock_link);
        describe(res, PROTO_KIND_HOLDER, h);
        res->waiters = l->n_waiters;
}

int lockfsm_session_status(const struct lockfsm *f, uint64_t session)
{
        int reason;

        if (state_session(f, session) != NULL) {
                return 0;
        }
        reason = state_tomb(f, session);
        return reason != 0 ? reason : BATON_ENOSESSION;
}

void lockfsm_foreach_session(const struct lockfsm *f,
                             void (*cb)(void *data, uint64_t session,
                                        uint32_t ttl_ms),
                             void *data)
{
        struct queue *q;

        QUEUE_FOREACH(q, &f->session_list)
        {
                const struct session *s = QUEUE_DATA(q, struct session, link);
                cb(data, s->id, s->ttl_ms);
        }
}

void lockfsm_foreach_waiter(const struct lockfsm *f,
                            void (*cb)(void *data, uint64_t session,
                                       uint64_t seq, const char *name,
                                       size_t name_len, uint32_t wait_ms),
                            void *data)
{
        struct queue *lq, *wq;

        QUEUE_FOREACH(lq, &f->lock_list)
        {
                const struct lock *l = QUEUE_DATA(lq, struct lock, link);
                QUEUE_FOREACH(wq, &l->waiters)
                {
                        const struct hold *h =
                            QUEUE_DATA(wq, struct hold, lock_link);
                        cb(data, h->session->id, h->seq, l->name, l->name_len,
                           h->wait_ms);
                }
        }
}

void lockfsm_foreach_lock(const struct lockfsm *f, const char *prefix,
                          size_t len,
                          bool (*cb)(void *data, const char *name,
                                     size_t name_len,
                                     const struct lockfsm_result *holder),
                          void *data)
{
        struct lockfsm_result res;
        struct queue *q;

        QUEUE_FOREACH(q, &f->lock_list)
        {
                const struct lock *l = QUEUE_DATA(q, struct lock, link);
                const struct hold *h;

                if (l->n_holders == 0 || l->name_len < len ||
                    (len > 0 && memcmp(l->name, prefix, len) != 0)) {
                        continue;
                }
                h = QUEUE_DATA(queue_head(&l->holders), struct hold, lock_link);
                describe(&res, PROTO_KIND_HOLDER, h);
                res.waiters = l->n_waiters;
                if (!cb(data, l->name, l->name_len, &res)) {
                        return;
                }
        }
}

void lockfsm_stats(const struct lockfsm *f, struct lockfsm_stats *st)
{
        st->sessions = f->n_sessions;
        st->locks = f->n_locks;
        st->grants = f->n_grants;
        st->waiters = f->n_waiters;
        st->tombstones = f->tomb_count;
}

uint32_t lockfsm_session_ttl(const struct lockfsm *f, uint64_t session)
{
        const struct session *s = state_session(f, session);

        return s != NULL ? s->ttl_ms : 0;
}

const char *lockfsm_session_name(const struct lockfsm *f, uint64_t session,
                                 uint8_t *len)
{
        const struct session *s = state_session(f, session);

        *len = s != NULL ? s->name_len : 0;
        return s != NULL ? s->name : NULL;
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
        struct lockfsm fresh;
        int rv;

        rv = state_init(&fresh, &f->limits, f->mem);
        if (rv != 0) {
                return rv;
        }
        rv = snapshot_decode(&fresh, buf, len);
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
        uint32_t holds = 0;
        struct queue *q;
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
        QUEUE_FOREACH(q, &s->grants)
        {
                const struct hold *h = QUEUE_DATA(q, struct hold, session_link);
                if (h->waiting || h->session != s || h->count == 0) {
                        return "bad grant in a session's list";
                }
                if (h->token > f->last_index) {
                        return "grant token above the last index";
                }
                if (prev != NULL &&
                    (h->token < prev->token ||
                     (h->token == prev->token &&
                      h->lock->created <= prev->lock->created))) {
                        return "session grants out of order";
                }
                prev = h;
                holds++;
        }
        prev = NULL;
        QUEUE_FOREACH(q, &s->waits)
        {
                const struct hold *h = QUEUE_DATA(q, struct hold, session_link);
                if (!h->waiting || h->session != s) {
                        return "bad waiter in a session's list";
                }
                if (prev != NULL && h->queued_at <= prev->queued_at) {
                        return "session waits out of order";
                }
                prev = h;
                holds++;
        }
        if (holds != s->n_holds) {
                return "session hold count disagrees with its lists";
        }
        if (s->n_memo > f->limits.max_inflight) {
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

/* True when (session, owner) appears among a lock's holds before `h`. */
static bool seen_before(const struct queue *list, const struct hold *h)
{
        struct queue *q;

        QUEUE_FOREACH(q, list)
        {
                const struct hold *o = QUEUE_DATA(q, struct hold, lock_link);
                if (o == h) {
                        return false;
                }
                if (o->session == h->session && o->owner == h->owner) {
                        return true;
                }
        }
        return false;
}

static const char *check_lock(const struct lockfsm *f, const struct lock *l)
{
        uint64_t last_queued = 0;
        uint32_t n = 0;
        struct queue *q;

        if (state_lock(f, l->name, l->name_len) != l) {
                return "lock missing from its map";
        }
        QUEUE_FOREACH(q, &l->holders)
        {
                const struct hold *h = QUEUE_DATA(q, struct hold, lock_link);
                if (h->waiting || h->lock != l) {
                        return "bad holder in a lock's list";
                }
                if (state_session(f, h->session->id) != h->session) {
                        return "holder of an ended session";
                }
                if (seen_before(&l->holders, h)) {
                        return "owner holds a lock twice";
                }
                n++;
        }
        if (n != l->n_holders) {
                return "lock without exactly its counted holders";
        }
        if (n == 0 && (l->n_waiters == 0 || queue_empty(&l->entry_link))) {
                return "lock without holders is neither waited for nor "
                       "deferred";
        }
        if (l->mode == COMMAND_MODE_EXCLUSIVE && n > 1) {
                return "exclusive lock with more than one holder";
        }
        n = 0;
        QUEUE_FOREACH(q, &l->waiters)
        {
                const struct hold *h = QUEUE_DATA(q, struct hold, lock_link);
                if (!h->waiting || h->lock != l) {
                        return "bad waiter in a lock's queue";
                }
                if (state_session(f, h->session->id) != h->session) {
                        return "waiter of an ended session";
                }
                if (h->queued_at <= last_queued) {
                        return "lock queue out of FIFO order";
                }
                if (find_holder(l, h->session->id, h->owner) != NULL ||
                    seen_before(&l->waiters, h)) {
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
        struct queue *q;

        QUEUE_FOREACH(q, &f->session_list)
        {
                const struct session *s = QUEUE_DATA(q, struct session, link);
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
        QUEUE_FOREACH(q, &f->lock_list)
        {
                const struct lock *l = QUEUE_DATA(q, struct lock, link);
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
        if (!queue_empty(&f->touched) || f->entry_index != 0) {
                return "an entry is half-applied";
        }
        n = 0;
        last = 0;
        QUEUE_FOREACH(q, &f->deferred)
        {
                const struct lock *l = QUEUE_DATA(q, struct lock, entry_link);
                if (l->n_holders != 0 || l->created <= last) {
                        return "deferred lock held, or out of order";
                }
                last = l->created;
                n++;
        }
        if (n != f->n_deferred) {
                return "deferred lock count disagrees";
        }
        if (grants != f->n_grants || waiters != f->n_waiters) {
                return "grant or waiter count disagrees";
        }
        if (f->tomb_count != f->tombs.count ||
            f->tomb_count > f->limits.max_tombstones) {
                return "tombstone count disagrees";
        }
        return NULL;
}
