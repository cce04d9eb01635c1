/* Lock acquisition and release in the lock state machine: grants, the FIFO
 * queue of waiters, and handing a lock on to the head of its queue. */
#include "grant.h"

#include <assert.h>

#include "../../include/baton.h"

/* Rewrites a waiter's remembered ACQUIRE outcome once the waiter resolves,
 * so a retried ACQUIRE learns what became of it. */
static void resolve_memo(struct hold *w, uint8_t kind, int status)
{
        struct memo *m = state_memo_find(w->session, w->seq);
        struct lockfsm_result res;

        if (m == NULL) {
                return;
        }
        step_describe(&res, kind, w);
        res.status = status;
        state_memo_set(m, &res);
}

struct hold *grant_find_holder(const struct lock *l, uint64_t session,
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
void grant_head(const struct step *st, struct lock *l)
{
        struct hold *w =
            QUEUE_DATA(queue_head(&l->waiters), struct hold, lock_link);

        state_hold_detach(st->f, w);
        grant(st, w);
        step_emit(st, LOCKFSM_EV_GRANT, w, 0);
        resolve_memo(w, PROTO_KIND_GRANTED, 0);
}

/* End a grant; hand the lock to the next waiter or drop it when free. A
 * lock this entry has granted already is neither handed on nor dropped
 * now: a second grant would repeat its token, so the entry's end defers
 * it to the next entry (lockfsm_apply). */
void grant_end(const struct step *st, struct hold *g)
{
        struct lockfsm *f = st->f;
        struct lock *l = g->lock;

        state_hold_detach(f, g);
        step_emit(st, LOCKFSM_EV_RELEASE, g, 0);
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
void grant_drop_wait(const struct step *st, struct hold *w, int status)
{
        state_hold_detach(st->f, w);
        step_emit(st, LOCKFSM_EV_UNQUEUE, w, status);
        mem_free(st->f->mem, w);
}

int grant_prepare(struct lockfsm *f, const struct command *c,
                  struct grant_prep *p)
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

void grant_acquire(const struct step *st, struct session *s,
                   struct grant_prep *p, struct lockfsm_result *res)
{
        struct lockfsm *f = st->f;
        const struct command *c = st->c;
        struct lock *l = state_lock(f, c->name, c->name_len);
        struct hold *h;

        if (c->mode != COMMAND_MODE_EXCLUSIVE) {
                step_reject(res, BATON_EUNSUPPORTED);
                return;
        }
        if (l != NULL) {
                h = grant_find_holder(l, s->id, c->owner);
                if (h != NULL) {
                        if (h->count == UINT32_MAX) {
                                step_reject(res, BATON_EOVERFLOW);
                                return;
                        }
                        h->count++;
                        step_describe(res, PROTO_KIND_REENTERED, h);
                        return;
                }
                if (find_wait(s, l, false, c->owner) != NULL) {
                        step_reject(res, BATON_EWAITING);
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
                        step_describe(res, PROTO_KIND_REJECTED, h);
                        res->status = BATON_EBUSY;
                        return;
                }
                if (c->wait_ms == COMMAND_WAIT_TRY && l->n_waiters > 0) {
                        step_reject(res, BATON_EBUSY);
                        return;
                }
        }
        if (s->n_holds >= f->limits.max_locks_per_session) {
                step_reject(res, BATON_ETOOMANYLOCKS);
                return;
        }
        if (l != NULL && l->n_waiters >= f->limits.max_waiters_per_lock) {
                step_reject(res, BATON_ETOOMANYWAITERS);
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
                step_emit(st, LOCKFSM_EV_GRANT, h, 0);
                step_describe(res, PROTO_KIND_GRANTED, h);
                return;
        }
        h->lock = l;
        h->queued_at = st->stamp;
        h->wait_ms = c->wait_ms;
        state_wait_attach(f, h);
        step_emit(st, LOCKFSM_EV_QUEUE, h, 0);
        step_describe(res, PROTO_KIND_QUEUED, h);
        res->count = l->n_waiters;
}

void grant_release(const struct step *st, struct session *s,
                   struct lockfsm_result *res)
{
        const struct command *c = st->c;
        struct lock *l = state_lock(st->f, c->name, c->name_len);
        struct hold *h =
            l != NULL ? grant_find_holder(l, s->id, c->owner) : NULL;

        if (h == NULL) {
                step_reject(res, BATON_ENOTHOLDER);
                return;
        }
        if (h->token != c->token) {
                step_reject(res, BATON_ESTALE);
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
        struct hold *w = l != NULL ? find_wait(s, l, true, c->target) : NULL;

        if (w == NULL) {
                step_reject(res, BATON_ENOTWAITING);
                return;
        }
        resolve_memo(w, PROTO_KIND_REJECTED, status);
        step_describe(res, PROTO_KIND_CANCELLED, w);
        grant_drop_wait(st, w, status);
}
