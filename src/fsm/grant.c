/* Lock acquisition and release in the lock state machine: grants, the FIFO
 * queue of waiters, and handing a lock on to the head of its queue. */
#include "grant.h"

#include <assert.h>
#include <string.h>

#include "../../include/baton/errors.h"
#include "../proto/proto.h"
#include "multi.h"
#include "quota.h"

/* The chaos suite's negative control tests/chaos/batond-overgrant is built
 * with BATON_CHAOS_BUG_OVERGRANT: its semaphores grant one permit more
 * than they have, which the suite's checkers must catch. */
#ifdef BATON_CHAOS_BUG_OVERGRANT
#define PERMIT_SLACK 1
#else
#define PERMIT_SLACK 0
#endif

/* Rewrites a waiter's remembered ACQUIRE outcome once the waiter resolves,
 * so a retried ACQUIRE learns what became of it. */
static void resolve_memo(struct hold *w, uint8_t kind, int status)
{
        struct memo *m = state_memo_find(hold_session(w), w->seq);
        struct lockfsm_result res;

        if (m == NULL) {
                return;
        }
        step_describe(&res, kind, w);
        res.status = status;
        state_memo_set(m, &res);
}

struct hold *grant_find_holder(const struct lock *l, uint64_t session,
                               uint64_t owner, int mode)
{
        struct rqueue *q;

        RQUEUE_FOREACH(q, &l->holders)
        {
                struct hold *h = RQUEUE_DATA(q, struct hold, lock_link);
                if (hold_session(h)->id == session && h->owner == owner &&
                    (mode == GRANT_ANY_MODE || h->mode == mode)) {
                        return h;
                }
        }
        return NULL;
}

struct hold *grant_find_wait(const struct session *s, const struct lock *l,
                             bool by_seq, uint64_t key)
{
        struct rqueue *q;

        RQUEUE_FOREACH(q, &s->waits)
        {
                struct hold *h = RQUEUE_DATA(q, struct hold, session_link);
                if (hold_lock(h) == l && (by_seq ? h->seq : h->owner) == key) {
                        return h;
                }
        }
        return NULL;
}

/* Whether the entry being applied has granted `l` already. */
static bool granted_in_entry(const struct lock *l)
{
        return l->touched;
}

bool grant_entry_allows(const struct lock *l, uint8_t mode)
{
        return !granted_in_entry(l) ||
               (mode != COMMAND_MODE_EXCLUSIVE && !l->entry_writer);
}

/* Make `h` a grant of its lock with this entry's index as its token. */
static void grant(const struct step *st, struct hold *h)
{
        struct lock *l = hold_lock(h);

        if (l->deferred) {
                /* A multi-lock took it before the entry's start reached
                 * it: it is this entry's now, like any lock it grants. */
                lockchain_remove(&st->f->deferred, l);
                l->deferred = false;
        }
        h->token = st->index;
        h->count = 1;
        h->granted_s = (uint32_t)(st->f->clock_ms / 1000);
        /* A hold time runs from the grant, not from the ACQUIRE. */
        if (hold_clock(h).hold_ms > 0) {
                hold_clock_set(
                    h, (struct hold_clock){hold_clock(h).hold_ms, st->index});
        }
        state_grant_attach(st->f, h);
        if (!granted_in_entry(l)) {
                l->entry_writer = false;
                l->entry_ended = false;
                l->touched = true;
                lockchain_push(&st->f->touched, l);
        }
        l->entry_writer |= h->mode == COMMAND_MODE_EXCLUSIVE;
}

bool grant_fits(const struct lockfsm *f, const struct hold *w)
{
        const struct lock *l = hold_lock(w);

        if (l->blocked || l->n_holders >= f->limits.max_holders_per_lock ||
            rqueue_head(&l->waiters) != &w->lock_link) {
                return false;
        }
        switch (w->mode) {
        case COMMAND_MODE_SEMAPHORE:
                return l->used + w->permits <= l->limit + PERMIT_SLACK;
        case COMMAND_MODE_SHARED:
                return l->n_writers == 0;
        default:
                return l->n_holders == 0;
        }
}

bool grant_admissible(const struct lockfsm *f, const struct lock *l)
{
        const struct hold *w;

        if (l->n_waiters == 0) {
                return false;
        }
        w = RQUEUE_DATA(rqueue_head(&l->waiters), struct hold, lock_link);
        return grant_fits(f, w) && (!w->multi || multi_ready(f, w, false));
}

void grant_new(const struct step *st, struct hold *h)
{
        grant(st, h);
        step_emit(st, LOCKFSM_EV_GRANT, h, 0);
}

void grant_take(const struct step *st, struct hold *w)
{
        state_hold_detach(st->f, w);
        grant(st, w);
        step_emit(st, LOCKFSM_EV_GRANT, w, 0);
        resolve_memo(w, PROTO_KIND_GRANTED, 0);
}

void grant_admit(const struct step *st, struct lock *l, bool groups)
{
        while (grant_admissible(st->f, l)) {
                struct hold *w = RQUEUE_DATA(rqueue_head(&l->waiters),
                                             struct hold, lock_link);
                if (!grant_entry_allows(l, w->mode)) {
                        return; /* the entry's end defers it */
                }
                if (!w->multi) {
                        grant_take(st, w);
                } else if (groups && multi_ready(st->f, w, true)) {
                        multi_grant(st, w);
                } else {
                        return; /* the entry's end defers it */
                }
        }
}

void grant_next(const struct step *st, struct lock *l)
{
        grant_admit(st, l, true);
}

void grant_settle(const struct step *st, struct lock *l)
{
        grant_next(st, l);
        if (l->n_holders == 0 && l->n_waiters == 0 && !l->blocked &&
            !granted_in_entry(l)) {
                state_lock_drop(st->f, l);
        }
}

void grant_lost(const struct step *st, struct hold *g)
{
        struct lock *l = hold_lock(g);
        /* The cluster's, which the entry carries, or the session's own,
         * whichever is longer. */
        uint32_t delay = st->c->delay_ms > hold_session(g)->lock_delay_ms
                             ? st->c->delay_ms
                             : hold_session(g)->lock_delay_ms;

        if (delay > 0 && l->mode == COMMAND_MODE_EXCLUSIVE && !l->blocked) {
                l->blocked = true;
                l->delay_ms = delay;
                step_emit_lock(st, LOCKFSM_EV_BLOCK, l);
        }
        grant_end(st, g);
}

void grant_revoke(const struct step *st, struct lockfsm_result *res)
{
        const struct command *c = st->c;
        struct lock *l = state_lock(st->f, c->name, c->name_len);
        struct session *s = state_session(st->f, c->session);
        struct rqueue *q, *next;
        unsigned left = 0;

        if (l == NULL || s == NULL || c->token == 0) {
                step_reject(res, BATON_ENOTHOLDER);
                return;
        }
        RQUEUE_FOREACH(q, &l->holders)
        {
                const struct hold *h = RQUEUE_DATA(q, struct hold, lock_link);
                left += hold_session(h) == s && h->token == c->token;
        }
        if (left == 0) {
                step_reject(res, BATON_ENOTHOLDER);
                return;
        }
        memset(res, 0, sizeof *res);
        res->kind = PROTO_KIND_RELEASED;
        res->session = s->id;
        res->token = c->token;
        /* Ending a grant can hand the lock on (new grants go last) or,
         * with the last of them, drop the lock: count first, and stop at
         * the last one before touching the list again. */
        for (q = rqueue_head(&l->holders); left > 0; q = next) {
                struct hold *h = RQUEUE_DATA(q, struct hold, lock_link);
                next = rqueue_next(q);
                if (hold_session(h) == s && h->token == c->token) {
                        res->owner = h->owner;
                        s->revoked++;
                        left--;
                        grant_lost(st, h);
                }
        }
}

void grant_unblock(const struct step *st, struct lockfsm_result *res)
{
        const struct command *c = st->c;
        struct lock *l = state_lock(st->f, c->name, c->name_len);

        if (l == NULL || !l->blocked || l->created != c->target) {
                step_reject(res, BATON_ENOTFOUND); /* over, or another's */
                return;
        }
        l->blocked = false;
        step_emit_lock(st, LOCKFSM_EV_UNBLOCK, l);
        l->delay_ms = 0;
        memset(res, 0, sizeof *res);
        res->kind = PROTO_KIND_FREE;
        res->waiters = l->n_waiters;
        grant_settle(st, l);
}

void grant_end(const struct step *st, struct hold *g)
{
        struct lock *l = hold_lock(g);

        l->entry_ended |= g->token == st->index;
        state_hold_detach(st->f, g);
        step_emit(st, LOCKFSM_EV_RELEASE, g, 0);
        state_hold_free(st->f, g);
        grant_settle(st, l);
}

/* Remove a waiter that leaves without a grant. */
void grant_drop_wait(const struct step *st, struct hold *w, int status)
{
        struct lock *l = hold_lock(w);

        if (w->multi) {
                multi_drop(st, w, status); /* every name of it */
                return;
        }
        state_hold_detach(st->f, w);
        step_emit(st, LOCKFSM_EV_UNQUEUE, w, status);
        state_hold_free(st->f, w);
        /* A writer leaving the head of the queue lets readers behind it
         * join the readers holding the lock. */
        grant_settle(st, l);
}

int grant_prepare(struct lockfsm *f, const struct command *c,
                  struct grant_prep *p)
{
        p->lock = NULL;
        /* Room for the grant's value: an election's candidate's, or any
         * other grant's data (a version 4 ACQUIRE's); and for its hold
         * clock if it has a hold time, set when it is granted. */
        p->hold = state_hold_alloc(f, c->value_len, c->hold_ms > 0);
        if (p->hold == NULL) {
                return BATON_ENOMEM;
        }
        if (c->hold_ms > 0) {
                hold_clock_set(p->hold, (struct hold_clock){c->hold_ms, 0});
        }
        if (state_lock(f, c->name, c->name_len) != NULL) {
                return 0;
        }
        p->lock = state_lock_alloc(f, c->name, c->name_len);
        if (p->lock == NULL || state_lock_reserve(f, 1) != 0) {
                state_lock_free(f, p->lock);
                state_hold_free(f, p->hold);
                return BATON_ENOMEM;
        }
        return 0;
}

/* How an ACQUIRE of a lock that exists goes, if the limits allow. */
enum admit {
        ADMIT_DONE,  /* answered already: re-entered or refused */
        ADMIT_NOW,   /* granted now */
        ADMIT_QUEUE, /* queued */
};

/* An ACQUIRE that cannot be granted now: queued, or a try refused busy
 * (with the holder's fields when someone holds the lock). A lock freed by
 * the entry that granted it queues even a try, which the next entry
 * grants (lockfsm.h); a lock in its lock-delay does not. */
static enum admit admit_later(const struct command *c, const struct lock *l,
                              struct lockfsm_result *res)
{
        if (c->wait_ms != COMMAND_WAIT_TRY ||
            (l->n_holders == 0 && l->n_waiters == 0 && !l->blocked)) {
                return ADMIT_QUEUE;
        }
        if (l->n_holders > 0) {
                step_describe(res, PROTO_KIND_REJECTED, state_first_holder(l));
                res->status = BATON_EBUSY;
        } else {
                step_reject(res, BATON_EBUSY);
        }
        return ADMIT_DONE;
}

/* Re-entry, the other mode for an owner holding one (downgrade, upgrade),
 * a reader joining readers, else the queue, which a try refuses. */
static enum admit admit_existing(const struct step *st, struct session *s,
                                 struct lock *l, struct lockfsm_result *res)
{
        const struct command *c = st->c;
        struct hold *h = grant_find_holder(l, s->id, c->owner, c->mode);

        if (h != NULL) {
                if (h->count == UINT32_MAX) {
                        step_reject(res, BATON_EOVERFLOW);
                        return ADMIT_DONE;
                }
                h->count++;
                step_describe(res, PROTO_KIND_REENTERED, h);
                return ADMIT_DONE;
        }
        if (grant_find_wait(s, l, false, c->owner) != NULL) {
                step_reject(res, BATON_EWAITING);
                return ADMIT_DONE;
        }
        if (grant_find_holder(l, s->id, c->owner, GRANT_ANY_MODE) != NULL) {
                /* A writer may always read too; a reader may write only
                 * alone: two readers waiting to write would wait for each
                 * other forever, so that is refused, never queued. So is
                 * a sole reader's upgrade in an entry that granted the
                 * lock to someone who left since: the writer's token
                 * would be that reader's. */
                if (c->mode == COMMAND_MODE_EXCLUSIVE &&
                    (l->n_holders > 1 ||
                     (granted_in_entry(l) && l->entry_ended))) {
                        step_reject(res, BATON_EUPGRADE);
                        return ADMIT_DONE;
                }
                if (l->blocked) {
                        /* No new grant in a lock-delay, and an owner that
                         * holds never waits too. */
                        step_reject(res, BATON_EBUSY);
                        return ADMIT_DONE;
                }
                return ADMIT_NOW;
        }
        if (l->blocked) {
                return admit_later(c, l, res); /* its lock-delay */
        }
        if (c->mode == COMMAND_MODE_SHARED && l->n_holders > 0 &&
            l->n_writers == 0 && l->n_waiters == 0 &&
            grant_entry_allows(l, COMMAND_MODE_SHARED)) {
                return ADMIT_NOW;
        }
        /* A lock between holders (handed on by this entry, or waiting for
         * the next one to grant its queue's head) belongs to its queue: a
         * try finds it busy. Only when no one waits is it free, and then a
         * try waits one entry too rather than take this entry's token
         * twice. */
        return admit_later(c, l, res);
}

/* Of a kind granted once per (session, owner), a semaphore's or an
 * election's: whether `res` already answers an ACQUIRE of `owner`, with
 * BATON_EHELD and the grant's fields when it holds `l` (a client that
 * lost the answer to its ACQUIRE learns its token this way), or
 * BATON_EWAITING when it waits for it. */
static bool admit_once(const struct session *s, const struct lock *l,
                       uint64_t owner, struct lockfsm_result *res)
{
        const struct hold *held =
            grant_find_holder(l, s->id, owner, GRANT_ANY_MODE);

        if (held != NULL) {
                step_describe(res, PROTO_KIND_REJECTED, held);
                res->status = BATON_EHELD;
                return true;
        }
        if (grant_find_wait(s, l, false, owner) != NULL) {
                step_reject(res, BATON_EWAITING);
                return true;
        }
        return false;
}

/* A semaphore's: its permits fixed at creation, one grant per (session,
 * owner), at once when the permits are free and no one waits (a large
 * request at the head is not overtaken), else the queue. */
static enum admit admit_permits(const struct step *st, struct session *s,
                                struct lock *l, struct lockfsm_result *res)
{
        const struct command *c = st->c;

        if (c->limit != l->limit) {
                step_reject(res, BATON_EPERMITS);
                return ADMIT_DONE;
        }
        if (admit_once(s, l, c->owner, res)) {
                return ADMIT_DONE;
        }
        if (l->n_waiters == 0 &&
            l->used + c->permits <= l->limit + PERMIT_SLACK) {
                return ADMIT_NOW;
        }
        return admit_later(c, l, res);
}

/* An election's candidate: one per (session, owner), never re-entered
 * (a second campaign of its leader is BATON_EHELD with the leadership's
 * token, as a semaphore's), else the queue, which a try refuses while
 * anyone leads. */
static enum admit admit_candidate(const struct step *st, struct session *s,
                                  struct lock *l, struct lockfsm_result *res)
{
        return admit_once(s, l, st->c->owner, res) ? ADMIT_DONE
                                                   : admit_later(st->c, l, res);
}

/* The kind of lock an ACQUIRE of `mode` takes: its own for a semaphore or
 * an election, else a read/write lock. */
static uint8_t lock_kind(uint8_t mode)
{
        return mode == COMMAND_MODE_SEMAPHORE || mode == COMMAND_MODE_ELECTION
                   ? mode
                   : COMMAND_MODE_EXCLUSIVE;
}

/* How an ACQUIRE of a lock that exists goes, by the lock's kind. */
static enum admit admit(const struct step *st, struct session *s,
                        struct lock *l, struct lockfsm_result *res)
{
        switch (l->mode) {
        case COMMAND_MODE_SEMAPHORE:
                return admit_permits(st, s, l, res);
        case COMMAND_MODE_ELECTION:
                return admit_candidate(st, s, l, res);
        default:
                return admit_existing(st, s, l, res);
        }
}

/* What an ACQUIRE is refused whatever the lock's holders: a mode unknown
 * (or a semaphore of no permits: a version 2 command's mode 2), permits
 * out of range, or a lock of the other kind. */
static int acquire_refusal(const struct lockfsm *f, const struct command *c,
                           const struct lock *l)
{
        if (c->mode > COMMAND_MODE_ELECTION ||
            (c->mode == COMMAND_MODE_SEMAPHORE && c->limit == 0)) {
                return BATON_EUNSUPPORTED;
        }
        if (c->hold_ms > f->limits.max_hold_ms) {
                return BATON_EINVAL;
        }
        if (c->mode == COMMAND_MODE_SEMAPHORE) {
                if (c->permits == 0 || c->permits > c->limit) {
                        return BATON_EINVAL;
                }
                if (c->limit > f->limits.max_permits) {
                        return BATON_ETOOMANYPERMITS;
                }
        }
        if (l != NULL && l->mode != lock_kind(c->mode)) {
                return BATON_EKIND;
        }
        return 0;
}

void grant_acquire(const struct step *st, struct session *s,
                   struct grant_prep *p, struct lockfsm_result *res)
{
        struct lockfsm *f = st->f;
        const struct command *c = st->c;
        struct lock *l = state_lock(f, c->name, c->name_len);
        enum admit how = ADMIT_NOW;
        struct hold *h;

        int rv = acquire_refusal(st->f, c, l);

        if (rv != 0) {
                step_reject(res, rv);
                return;
        }
        if (l != NULL && (how = admit(st, s, l, res)) == ADMIT_DONE) {
                return;
        }
        if (how == ADMIT_NOW && l != NULL &&
            l->n_holders >= f->limits.max_holders_per_lock) {
                step_reject(res, BATON_ETOOMANYHOLDERS);
                return;
        }
        if (s->n_holds >= f->limits.max_locks_per_session) {
                step_reject(res, BATON_ETOOMANYLOCKS);
                return;
        }
        if (quota_check_holds(f, s, 1, how == ADMIT_QUEUE, res) != 0) {
                return;
        }
        if (how == ADMIT_QUEUE &&
            l->n_waiters >= f->limits.max_waiters_per_lock) {
                step_reject(res, BATON_ETOOMANYWAITERS);
                return;
        }
        h = p->hold;
        p->hold = NULL;
        hold_set_session(h, s);
        h->owner = c->owner;
        h->seq = c->seq;
        /* An election's candidates are writers of a lock of that kind:
         * one leader at a time, and one leadership per entry. */
        h->mode =
            c->mode == COMMAND_MODE_ELECTION ? COMMAND_MODE_EXCLUSIVE : c->mode;
        h->permits = c->permits;
        if (c->value_len > 0) {
                memcpy(h->value, c->value, c->value_len);
        }
        if (l == NULL) {
                l = p->lock;
                p->lock = NULL;
                l->created = st->stamp;
                /* A read/write lock, a semaphore of `limit` permits, or
                 * an election. */
                l->mode = lock_kind(c->mode);
                l->limit = c->limit;
                state_lock_link(f, l);
        }
        hold_set_lock(h, l);
        if (how == ADMIT_NOW) {
                grant_new(st, h);
                step_describe(res, PROTO_KIND_GRANTED, h);
                return;
        }
        h->queued_at = st->stamp;
        h->wait_ms = c->wait_ms;
        state_wait_attach(f, h);
        step_emit(st, LOCKFSM_EV_QUEUE, h, 0);
        step_describe(res, PROTO_KIND_QUEUED, h);
        res->count = l->n_waiters;
}

struct hold *grant_find_grant(const struct lock *l, uint64_t session,
                              uint64_t owner, uint64_t token, bool *held)
{
        struct hold *found = NULL;
        struct rqueue *q;

        *held = false;
        RQUEUE_FOREACH(q, &l->holders)
        {
                struct hold *h = RQUEUE_DATA(q, struct hold, lock_link);
                if (hold_session(h)->id != session || h->owner != owner) {
                        continue;
                }
                *held = true;
                if (h->token == token &&
                    (found == NULL || h->mode == COMMAND_MODE_EXCLUSIVE)) {
                        found = h;
                }
        }
        return found;
}

struct hold *grant_named(const struct step *st, const struct session *s,
                         struct lockfsm_result *res)
{
        const struct command *c = st->c;
        struct lock *l = state_lock(st->f, c->name, c->name_len);
        bool held = false;
        struct hold *h =
            l != NULL ? grant_find_grant(l, s->id, c->owner, c->token, &held)
                      : NULL;

        if (!held) {
                step_reject(res, BATON_ENOTHOLDER);
        } else if (h == NULL) {
                step_reject(res, BATON_ESTALE);
        }
        return h;
}

void grant_release(const struct step *st, struct session *s,
                   struct lockfsm_result *res)
{
        struct hold *h = grant_named(st, s, res);

        if (h == NULL) {
                return;
        }
        h->count--;
        step_describe(res, PROTO_KIND_RELEASED, h);
        if (h->count == 0) {
                grant_end(st, h);
        }
}

/* CANCEL (by the client) and TIMEOUT (by the leader) of a waiting ACQUIRE. */
void grant_unwait(const struct step *st, struct session *s, int status,
                  struct lockfsm_result *res)
{
        const struct command *c = st->c;
        struct lock *l = state_lock(st->f, c->name, c->name_len);
        struct hold *w =
            l != NULL ? grant_find_wait(s, l, true, c->target) : NULL;

        if (w == NULL) {
                step_reject(res, BATON_ENOTWAITING);
                return;
        }
        resolve_memo(w, PROTO_KIND_REJECTED, status);
        step_describe(res, PROTO_KIND_CANCELLED, w);
        grant_drop_wait(st, w, status);
}
