/* A randomized model-based test of the lock state machine: a small reference
 * model, written from docs/fsm.md, runs in lockstep with lockfsm.
 *
 * To reproduce a failure, BATON_MODEL_SEED=S runs seed S alone (and compares
 * the whole state after every step); BATON_MODEL_TRACE=1 prints every entry
 * with both answers; BATON_MODEL_STEPS=N changes the length of a sequence;
 * BATON_MODEL_STATS=1 prints how often each outcome came up, to see that the
 * generator still reaches every rule. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../include/baton.h"
#include "../../src/fsm/command.h"
#include "../../src/fsm/entry.h"
#include "../../src/fsm/lockfsm.h"
#include "../lib/rng.h"
#include "../../src/lib/mem.h"

/*
 * Small limits, so that every limit error is hit often: six sessions with
 * two owners each compete for four locks, and a session may remember only
 * four outcomes before it must acknowledge some.
 */
enum {
        LIM_SESSIONS = 6,
        LIM_LOCKS = 3,
        LIM_WAITERS = 3,
        LIM_INFLIGHT = 4,
        LIM_TOMBS = 4,
        LIM_MIN_TTL = 100,
        LIM_MAX_TTL = 10000,
};

/* How much work the seed ranges do, and how often the machine is
 * snapshotted, restored and replayed in lockstep. */
enum {
        STEPS = 200,
        SEEDS_PER_CASE = 500,
        CHECKPOINT = 16,
        STATE_EVERY = 4, /* snapshot-vs-model comparisons; each costs a lot */
        NEGATIVE_SEEDS = 200,
};

/* Capacities of the model's plain arrays. A broken model variant (the
 * negative controls) can keep locks a correct one would free, so the lock
 * table is larger than the limits need. */
enum {
        CAP_LOCKS = 64,
        CAP_EVENTS = 64,
        CAP_KNOWN = 256,
        CAP_HIST = 8,
        CAP_TOKENS = 16,
};

/* The deliberately wrong model variants used by the negative controls. */
enum {
        BUG_FORGET = 1 << 0,      /* retries run again: no exactly-once */
        BUG_DEAD_WAITER = 1 << 1, /* EXPIRE keeps the session's waiters */
        BUG_TWICE = 1 << 2,       /* an entry hands a lock on twice */
};

/* ------------------------------------------------------------------------ */
/* Seeded randomness: splitmix64, so a seed names one sequence forever. */

static bool chance(struct rng *r, unsigned pct)
{
        return rng_below(r, 100) < pct;
}

/* ------------------------------------------------------------------------ */
/* Events, as the machine reports them and as the model predicts them. */

struct ev {
        uint8_t type;
        uint8_t cause;
        uint64_t index;
        uint64_t session;
        uint64_t seq;
        uint64_t owner;
        uint64_t token;
        uint64_t nonce;
        uint32_t wait_ms;
        int status;
        uint8_t name_len;
        char name[COMMAND_NAME_MAX];
        bool has_result;
        struct lockfsm_result result;
};

struct evlog {
        struct ev ev[CAP_EVENTS];
        unsigned n;
        bool overflow;
};

static void on_event(void *data, const struct lockfsm_event *e)
{
        struct evlog *log = data;
        struct ev *v;

        if (log->n == CAP_EVENTS) {
                log->overflow = true;
                return;
        }
        v = &log->ev[log->n++];
        memset(v, 0, sizeof *v);
        v->type = e->type;
        v->cause = e->cause;
        v->index = e->index;
        v->session = e->session;
        v->seq = e->seq;
        v->owner = e->owner;
        v->token = e->token;
        v->nonce = e->nonce;
        v->wait_ms = e->wait_ms;
        v->status = e->status;
        if (e->name != NULL) {
                v->name_len = e->name_len;
                memcpy(v->name, e->name, e->name_len);
        }
        if (e->result != NULL) {
                v->has_result = true;
                v->result = *e->result;
        }
}

/* ------------------------------------------------------------------------ */
/* The reference model: plain arrays and linear scans, nothing clever. */

struct mout {
        uint64_t seq;
        struct lockfsm_result res;
};

struct msess {
        uint64_t id;
        uint64_t nonce;
        uint64_t floor;
        uint32_t ttl;
        uint8_t client_len;
        char client[COMMAND_CLIENT_NAME_MAX];
        struct mout out[LIM_INFLIGHT]; /* ordered by seq */
        unsigned nout;
};

struct mtomb {
        uint64_t session;
        int status; /* BATON_EEXPIRED or BATON_ECLOSED */
};

struct mwaiter {
        uint64_t session;
        uint64_t owner;
        uint64_t seq;
        uint64_t queued_at;
        uint32_t wait_ms;
};

/* A lock exists while held, or between holders: freed by an entry that
 * granted it already, it waits (count 0, holder fields 0) for the next
 * entry to hand it to the head of its queue, or is deleted at the entry's
 * end when no one waits. */
struct mlock {
        uint8_t name_len;
        char name[COMMAND_NAME_MAX];
        uint64_t created;
        uint64_t last_grant; /* index of the entry that granted it last */
        uint64_t session;
        uint64_t owner;
        uint64_t seq; /* of the ACQUIRE that was granted */
        uint64_t token;
        uint32_t count;
        struct mwaiter w[LIM_WAITERS]; /* FIFO */
        unsigned nw;
};

struct model {
        unsigned bugs;
        uint64_t stamp;               /* the last command's (lockfsm.h) */
        bool overflow;                /* a broken variant outgrew the arrays */
        unsigned long ties;           /* ends whose grants shared a token */
        struct msess s[LIM_SESSIONS]; /* live, ordered by id */
        unsigned ns;
        struct mtomb t[LIM_TOMBS]; /* oldest first */
        unsigned nt;
        struct mlock l[CAP_LOCKS]; /* ordered by age (created) */
        unsigned nl;
};

/* Every field docs/fsm.md does not name for an outcome is zero. */
static struct lockfsm_result rejected(int status)
{
        struct lockfsm_result r;

        memset(&r, 0, sizeof r);
        r.status = status;
        r.kind = LOCKFSM_REJECTED;
        return r;
}

static struct lockfsm_result outcome(uint8_t kind, uint64_t session,
                                     uint64_t owner)
{
        struct lockfsm_result r;

        memset(&r, 0, sizeof r);
        r.kind = kind;
        r.session = session;
        r.owner = owner;
        return r;
}

/* What HOLDER, CURRENT and a CHECK's ESTALE say about a lock. */
static void holder_fields(struct lockfsm_result *r, const struct mlock *l)
{
        r->session = l->session;
        r->owner = l->owner;
        r->token = l->token;
        r->count = l->count;
        r->waiters = l->nw;
}

static struct msess *m_session(struct model *m, uint64_t id)
{
        for (unsigned i = 0; i < m->ns; i++) {
                if (m->s[i].id == id) {
                        return &m->s[i];
                }
        }
        return NULL;
}

static const struct mtomb *m_tomb(const struct model *m, uint64_t id)
{
        for (unsigned i = 0; i < m->nt; i++) {
                if (m->t[i].session == id) {
                        return &m->t[i];
                }
        }
        return NULL;
}

/* The answer for a session that is not live: its tombstone or none. */
static struct lockfsm_result not_live(const struct model *m, uint64_t id)
{
        const struct mtomb *t = m_tomb(m, id);

        return rejected(t != NULL ? t->status : BATON_ENOSESSION);
}

static struct mlock *m_lock(struct model *m, const char *name, size_t len)
{
        for (unsigned i = 0; i < m->nl; i++) {
                if (m->l[i].name_len == len &&
                    memcmp(m->l[i].name, name, len) == 0) {
                        return &m->l[i];
                }
        }
        return NULL;
}

static struct mlock *m_lock_created(struct model *m, uint64_t created)
{
        for (unsigned i = 0; i < m->nl; i++) {
                if (m->l[i].created == created) {
                        return &m->l[i];
                }
        }
        return NULL;
}

/* Locks a session holds plus locks it waits for: what the limit counts. */
static unsigned m_nlocks(const struct model *m, uint64_t sid)
{
        unsigned n = 0;

        for (unsigned i = 0; i < m->nl; i++) {
                n += m->l[i].session == sid;
                for (unsigned j = 0; j < m->l[i].nw; j++) {
                        n += m->l[i].w[j].session == sid;
                }
        }
        return n;
}

static struct mout *m_out(struct msess *s, uint64_t seq)
{
        for (unsigned i = 0; i < s->nout; i++) {
                if (s->out[i].seq == seq) {
                        return &s->out[i];
                }
        }
        return NULL;
}

static void m_remember(struct msess *s, uint64_t seq,
                       const struct lockfsm_result *r)
{
        unsigned i = s->nout;

        assert_true(s->nout < LIM_INFLIGHT);
        while (i > 0 && s->out[i - 1].seq > seq) {
                s->out[i] = s->out[i - 1];
                i--;
        }
        s->out[i].seq = seq;
        s->out[i].res = *r;
        s->out[i].res.duplicate = false;
        s->nout++;
}

/* A queued ACQUIRE's remembered outcome follows its waiter; if the client
 * has acknowledged it already there is nothing left to update. */
static void m_set_out(struct model *m, uint64_t sid, uint64_t seq,
                      const struct lockfsm_result *r)
{
        struct msess *s = m_session(m, sid);
        struct mout *o = s != NULL ? m_out(s, seq) : NULL;

        if (o != NULL) {
                o->res = *r;
        }
}

static struct ev *m_ev(struct evlog *log, uint8_t type, uint64_t index,
                       uint8_t cause)
{
        struct ev *v;

        if (log->n == CAP_EVENTS) {
                log->overflow = true;
                return &log->ev[CAP_EVENTS - 1];
        }
        v = &log->ev[log->n++];
        memset(v, 0, sizeof *v);
        v->type = type;
        v->index = index;
        v->cause = cause;
        return v;
}

static void ev_name(struct ev *v, const struct mlock *l)
{
        v->name_len = l->name_len;
        memcpy(v->name, l->name, l->name_len);
}

static void m_remove_waiter(struct mlock *l, unsigned i)
{
        memmove(&l->w[i], &l->w[i + 1], (l->nw - i - 1) * sizeof l->w[0]);
        l->nw--;
}

static void m_delete_lock(struct model *m, struct mlock *l)
{
        unsigned i = (unsigned)(l - m->l);

        memmove(&m->l[i], &m->l[i + 1], (m->nl - i - 1) * sizeof m->l[0]);
        m->nl--;
}

/* The head waiter gets the lock with this entry's index as its token. */
static void m_grant_head(struct model *m, struct mlock *l, uint64_t index,
                         uint8_t cause, struct evlog *log)
{
        struct mwaiter w;
        struct lockfsm_result g;
        struct ev *v;

        w = l->w[0];
        m_remove_waiter(l, 0);
        l->last_grant = index;
        l->session = w.session;
        l->owner = w.owner;
        l->seq = w.seq;
        l->token = index;
        l->count = 1;
        v = m_ev(log, LOCKFSM_EV_GRANT, index, cause);
        v->session = w.session;
        v->seq = w.seq;
        v->owner = w.owner;
        v->token = index;
        ev_name(v, l);
        g = outcome(LOCKFSM_GRANTED, w.session, w.owner);
        g.token = index;
        g.count = 1;
        m_set_out(m, w.session, w.seq, &g);
}

/* The holder has left: the head waiter gets the lock, or the lock
 * disappears; unless this entry granted it already, when it stays between
 * holders for the entry's end to settle. */
static void m_handover(struct model *m, struct mlock *l, uint64_t index,
                       uint8_t cause, struct evlog *log)
{
        l->session = 0;
        l->owner = 0;
        l->seq = 0;
        l->token = 0;
        l->count = 0;
        if (l->last_grant == index && !(m->bugs & BUG_TWICE)) {
                return;
        }
        if (l->nw == 0) {
                m_delete_lock(m, l);
                return;
        }
        m_grant_head(m, l, index, cause, log);
}

/* Every entry starts by handing on the locks left between holders, in lock
 * age order, and ends by deleting those it freed with no one waiting. */
static void m_entry_begin(struct model *m, uint64_t index, struct evlog *log)
{
        for (unsigned i = 0; i < m->nl; i++) {
                if (m->l[i].count == 0) {
                        m_grant_head(m, &m->l[i], index, COMMAND_BATCH, log);
                }
        }
}

static void m_entry_end(struct model *m)
{
        for (unsigned i = m->nl; i-- > 0;) {
                if (m->l[i].count == 0 && m->l[i].nw == 0) {
                        m_delete_lock(m, &m->l[i]);
                }
        }
}

/* Each command takes a stamp: max(last + 1, the entry's index). */
static uint64_t m_stamp(struct model *m, uint64_t index)
{
        m->stamp = m->stamp + 1 > index ? m->stamp + 1 : index;
        return m->stamp;
}

/* CLOSE and EXPIRE: waits leave in queue order, then grants are handed over
 * by token and then lock age, then the session ends with a tombstone. */
static void m_end(struct model *m, uint64_t sid, int status, uint64_t index,
                  uint8_t cause, struct evlog *log)
{
        uint64_t order[CAP_LOCKS];
        unsigned n = 0;
        struct msess *s;
        struct ev *v;

        while (!((m->bugs & BUG_DEAD_WAITER) && cause == COMMAND_EXPIRE)) {
                struct mlock *best = NULL;
                unsigned bi = 0;

                for (unsigned i = 0; i < m->nl; i++) {
                        for (unsigned j = 0; j < m->l[i].nw; j++) {
                                if (m->l[i].w[j].session == sid &&
                                    (best == NULL ||
                                     m->l[i].w[j].queued_at <
                                         best->w[bi].queued_at)) {
                                        best = &m->l[i];
                                        bi = j;
                                }
                        }
                }
                if (best == NULL) {
                        break;
                }
                v = m_ev(log, LOCKFSM_EV_UNQUEUE, index, cause);
                v->session = sid;
                v->seq = best->w[bi].seq;
                v->owner = best->w[bi].owner;
                v->status = status;
                ev_name(v, best);
                m_remove_waiter(best, bi);
        }

        /* Collect first, so that a grant made while ending cannot be
         * released again by the same loop. */
        for (unsigned i = 0; i < m->nl; i++) {
                if (m->l[i].session == sid) {
                        order[n++] = m->l[i].created;
                }
        }
        for (unsigned i = 1; i < n; i++) {
                for (unsigned j = i; j > 0; j--) {
                        struct mlock *a = m_lock_created(m, order[j - 1]);
                        struct mlock *b = m_lock_created(m, order[j]);
                        uint64_t tmp;

                        if (a->token < b->token ||
                            (a->token == b->token && a->created < b->created)) {
                                break;
                        }
                        tmp = order[j];
                        order[j] = order[j - 1];
                        order[j - 1] = tmp;
                }
        }
        for (unsigned i = 1; i < n; i++) {
                m->ties += m_lock_created(m, order[i - 1])->token ==
                           m_lock_created(m, order[i])->token;
        }
        for (unsigned i = 0; i < n; i++) {
                struct mlock *l = m_lock_created(m, order[i]);

                v = m_ev(log, LOCKFSM_EV_RELEASE, index, cause);
                v->session = sid;
                v->owner = l->owner;
                v->token = l->token;
                ev_name(v, l);
                m_handover(m, l, index, cause, log);
        }

        s = m_session(m, sid);
        memmove(s, s + 1, (size_t)(&m->s[m->ns] - (s + 1)) * sizeof *s);
        m->ns--;
        if (m->nt == LIM_TOMBS) {
                memmove(&m->t[0], &m->t[1], (LIM_TOMBS - 1) * sizeof m->t[0]);
                m->nt--;
        }
        m->t[m->nt].session = sid;
        m->t[m->nt].status = status;
        m->nt++;
        v = m_ev(log, LOCKFSM_EV_END, index, cause);
        v->session = sid;
}

static struct lockfsm_result m_open(struct model *m, uint64_t index,
                                    const struct command *c, struct evlog *log)
{
        struct msess *s;
        struct lockfsm_result r;
        struct ev *v;

        for (unsigned i = 0; c->nonce != 0 && i < m->ns; i++) {
                if (m->s[i].nonce == c->nonce) {
                        r = outcome(LOCKFSM_OPENED, m->s[i].id, 0);
                        r.duplicate = true;
                        return r;
                }
        }
        if (c->ttl_ms < LIM_MIN_TTL || c->ttl_ms > LIM_MAX_TTL) {
                return rejected(BATON_ETTL);
        }
        if (m->ns == LIM_SESSIONS) {
                return rejected(BATON_ETOOMANYSESSIONS);
        }
        s = &m->s[m->ns++];
        memset(s, 0, sizeof *s);
        s->id = m->stamp;
        s->nonce = c->nonce;
        s->ttl = c->ttl_ms;
        s->client_len = c->name_len;
        memcpy(s->client, c->name, c->name_len);
        v = m_ev(log, LOCKFSM_EV_OPEN, index, COMMAND_OPEN);
        v->session = s->id;
        v->nonce = c->nonce;
        r = outcome(LOCKFSM_OPENED, s->id, 0);
        return r;
}

static struct lockfsm_result m_acquire(struct model *m, uint64_t index,
                                       const struct command *c,
                                       struct evlog *log)
{
        struct mlock *l = m_lock(m, c->name, c->name_len);
        struct mwaiter *w;
        struct lockfsm_result r;
        struct ev *v;

        if (c->mode != COMMAND_MODE_EXCLUSIVE) {
                return rejected(BATON_EUNSUPPORTED);
        }
        if (l != NULL && l->count > 0 && l->session == c->session &&
            l->owner == c->owner) {
                if (l->count == UINT32_MAX) {
                        return rejected(BATON_EOVERFLOW);
                }
                l->count++;
                r = outcome(LOCKFSM_REENTERED, c->session, c->owner);
                r.token = l->token;
                r.count = l->count;
                return r;
        }
        for (unsigned i = 0; l != NULL && i < l->nw; i++) {
                if (l->w[i].session == c->session &&
                    l->w[i].owner == c->owner) {
                        return rejected(BATON_EWAITING);
                }
        }
        if (l == NULL) {
                if (m_nlocks(m, c->session) >= LIM_LOCKS) {
                        return rejected(BATON_ETOOMANYLOCKS);
                }
                if (m->nl == CAP_LOCKS) {
                        m->overflow = true;
                        return rejected(BATON_ENOMEM);
                }
                l = &m->l[m->nl++];
                memset(l, 0, sizeof *l);
                l->name_len = c->name_len;
                memcpy(l->name, c->name, c->name_len);
                l->created = m->stamp;
                l->last_grant = index;
                l->session = c->session;
                l->owner = c->owner;
                l->seq = c->seq;
                l->token = index;
                l->count = 1;
                v = m_ev(log, LOCKFSM_EV_GRANT, index, COMMAND_ACQUIRE);
                v->session = c->session;
                v->seq = c->seq;
                v->owner = c->owner;
                v->token = index;
                ev_name(v, l);
                r = outcome(LOCKFSM_GRANTED, c->session, c->owner);
                r.token = index;
                r.count = 1;
                return r;
        }
        /* Between holders the lock belongs to its queue; with no queue
         * even a try waits for the next entry. */
        if (c->wait_ms == COMMAND_WAIT_TRY && (l->count > 0 || l->nw > 0)) {
                r = rejected(BATON_EBUSY);
                r.session = l->session;
                r.owner = l->owner;
                r.token = l->token;
                r.count = l->count;
                return r;
        }
        if (m_nlocks(m, c->session) >= LIM_LOCKS) {
                return rejected(BATON_ETOOMANYLOCKS);
        }
        if (l->nw == LIM_WAITERS) {
                return rejected(BATON_ETOOMANYWAITERS);
        }
        w = &l->w[l->nw++];
        w->session = c->session;
        w->owner = c->owner;
        w->seq = c->seq;
        w->queued_at = m->stamp;
        w->wait_ms = c->wait_ms;
        v = m_ev(log, LOCKFSM_EV_QUEUE, index, COMMAND_ACQUIRE);
        v->session = c->session;
        v->seq = c->seq;
        v->owner = c->owner;
        v->wait_ms = c->wait_ms;
        ev_name(v, l);
        r = outcome(LOCKFSM_QUEUED, c->session, c->owner);
        r.count = l->nw;
        return r;
}

static struct lockfsm_result m_release(struct model *m, uint64_t index,
                                       const struct command *c,
                                       struct evlog *log)
{
        struct mlock *l = m_lock(m, c->name, c->name_len);
        struct lockfsm_result r;
        struct ev *v;

        if (l == NULL || l->count == 0 || l->session != c->session ||
            l->owner != c->owner) {
                return rejected(BATON_ENOTHOLDER);
        }
        if (c->token != l->token) {
                return rejected(BATON_ESTALE);
        }
        l->count--;
        r = outcome(LOCKFSM_RELEASED, c->session, c->owner);
        r.token = l->token;
        r.count = l->count;
        if (l->count == 0) {
                v = m_ev(log, LOCKFSM_EV_RELEASE, index, COMMAND_RELEASE);
                v->session = l->session;
                v->owner = l->owner;
                v->token = l->token;
                ev_name(v, l);
                m_handover(m, l, index, COMMAND_RELEASE, log);
        }
        return r;
}

/* CANCEL and TIMEOUT: the waiter leaves and its ACQUIRE learns why. */
static struct lockfsm_result m_unqueue(struct model *m, uint64_t index,
                                       const struct command *c, int why,
                                       struct evlog *log)
{
        struct mlock *l = m_lock(m, c->name, c->name_len);
        struct lockfsm_result gone = rejected(why);
        uint64_t owner;
        struct ev *v;

        for (unsigned i = 0; l != NULL && i < l->nw; i++) {
                if (l->w[i].session != c->session || l->w[i].seq != c->target) {
                        continue;
                }
                owner = l->w[i].owner;
                v = m_ev(log, LOCKFSM_EV_UNQUEUE, index, c->type);
                v->session = c->session;
                v->seq = c->target;
                v->owner = l->w[i].owner;
                v->status = why;
                ev_name(v, l);
                m_remove_waiter(l, i);
                gone.session = c->session;
                gone.owner = owner;
                m_set_out(m, c->session, c->target, &gone);
                return outcome(LOCKFSM_CANCELLED, c->session, owner);
        }
        return rejected(BATON_ENOTWAITING);
}

/* CLOSE, ACQUIRE, RELEASE and CANCEL: the exactly-once steps of
 * docs/fsm.md, then the command itself. */
static struct lockfsm_result m_client(struct model *m, uint64_t index,
                                      const struct command *c,
                                      struct evlog *log)
{
        struct msess *s = m_session(m, c->session);
        struct mout *o;
        struct lockfsm_result r;

        if (s == NULL) {
                const struct mtomb *t = m_tomb(m, c->session);

                if (t != NULL && t->status == BATON_ECLOSED &&
                    c->type == COMMAND_CLOSE) {
                        r = outcome(LOCKFSM_CLOSED, c->session, 0);
                        r.duplicate = true;
                        return r;
                }
                return not_live(m, c->session);
        }
        if (c->seq == 0 || c->seq < c->ack) {
                return rejected(BATON_EINVAL);
        }
        if (c->seq < s->floor) {
                return rejected(BATON_ESEQ);
        }
        if (c->ack > s->floor) {
                unsigned k = 0;

                s->floor = c->ack;
                for (unsigned i = 0; i < s->nout; i++) {
                        if (s->out[i].seq >= s->floor) {
                                s->out[k++] = s->out[i];
                        }
                }
                s->nout = k;
        }
        o = m_out(s, c->seq);
        if (o != NULL && !(m->bugs & BUG_FORGET)) {
                r = o->res;
                r.duplicate = true;
                return r;
        }
        /* CLOSE needs no slot: its outcome lives in the tombstone. */
        if (s->nout >= LIM_INFLIGHT && c->type != COMMAND_CLOSE) {
                return rejected(BATON_EINFLIGHT);
        }
        switch (c->type) {
        case COMMAND_CLOSE:
                m_end(m, c->session, BATON_ECLOSED, index, COMMAND_CLOSE, log);
                return outcome(LOCKFSM_CLOSED, c->session, 0);
        case COMMAND_ACQUIRE:
                r = m_acquire(m, index, c, log);
                break;
        case COMMAND_RELEASE:
                r = m_release(m, index, c, log);
                break;
        default:
                r = m_unqueue(m, index, c, BATON_ECANCELLED, log);
                break;
        }
        if (o != NULL) {
                o->res = r; /* BUG_FORGET ran a retry again */
        } else {
                m_remember(s, c->seq, &r);
        }
        return r;
}

static struct lockfsm_result m_query(struct model *m, const char *name,
                                     size_t len)
{
        struct mlock *l = m_lock(m, name, len);
        struct lockfsm_result r;

        if (l == NULL || l->count == 0) {
                r = outcome(LOCKFSM_FREE, 0, 0);
                r.waiters = l != NULL ? l->nw : 0;
                return r;
        }
        r = outcome(LOCKFSM_HOLDER, 0, 0);
        holder_fields(&r, l);
        return r;
}

static struct lockfsm_result m_apply(struct model *m, uint64_t index,
                                     const struct command *c, struct evlog *log)
{
        struct mlock *l;
        struct lockfsm_result r;

        m_stamp(m, index);
        switch (c->type) {
        case COMMAND_OPEN:
                return m_open(m, index, c, log);
        case COMMAND_EXPIRE:
                if (m_session(m, c->session) == NULL) {
                        return not_live(m, c->session);
                }
                m_end(m, c->session, BATON_EEXPIRED, index, COMMAND_EXPIRE,
                      log);
                return outcome(LOCKFSM_EXPIRED, c->session, 0);
        case COMMAND_TIMEOUT:
                if (m_session(m, c->session) == NULL) {
                        return not_live(m, c->session);
                }
                return m_unqueue(m, index, c, BATON_ETIMEDOUT, log);
        case COMMAND_QUERY:
                return m_query(m, c->name, c->name_len);
        case COMMAND_CHECK:
                l = m_lock(m, c->name, c->name_len);
                if (l != NULL && l->count > 0 && l->token == c->token) {
                        r = outcome(LOCKFSM_CURRENT, 0, 0);
                        holder_fields(&r, l);
                        return r;
                }
                r = rejected(BATON_ESTALE);
                if (l != NULL) {
                        holder_fields(&r, l);
                }
                return r;
        default:
                return m_client(m, index, c, log);
        }
}

/* ------------------------------------------------------------------------ */
/* The generator: random commands aimed at the interesting cases. */

static const char *const lock_names[] = {"alpha", "beta", "gamma", "delta"};
#define NLOCK_NAMES (sizeof lock_names / sizeof lock_names[0])

/* A past request; it owns its name, since the model's locks move. */
struct ghist {
        struct command c;
        char name[COMMAND_NAME_MAX];
};

/* What a client remembers about a session it opened. */
struct gsess {
        uint64_t id;
        uint64_t nonce;
        uint64_t next_seq;
        uint64_t ack;
        struct ghist hist[CAP_HIST]; /* recent requests, for retries */
        unsigned nhist;
        unsigned hpos;
};

struct gen {
        struct rng rng;
        char long_name[COMMAND_NAME_MAX];
        char name[COMMAND_NAME_MAX]; /* the current command's lock name */
        char client[COMMAND_CLIENT_NAME_MAX];
        struct gsess s[CAP_KNOWN];
        unsigned ns;
        uint64_t tokens[CAP_TOKENS]; /* recent grant tokens, to go stale */
        unsigned ntokens;
        unsigned tpos;
};

static void gen_init(struct gen *g, uint64_t seed)
{
        memset(g, 0, sizeof *g);
        g->rng.s = seed;
        memset(g->long_name, 'z', sizeof g->long_name);
}

static struct gsess *gen_sess(struct gen *g, uint64_t id)
{
        for (unsigned i = 0; i < g->ns; i++) {
                if (g->s[i].id == id) {
                        return &g->s[i];
                }
        }
        return NULL;
}

static void gen_name(struct gen *g, struct command *c)
{
        if (chance(&g->rng, 3)) {
                c->name = g->long_name;
                c->name_len = COMMAND_NAME_MAX;
                return;
        }
        /* One hot lock, so that queues fill up. */
        c->name =
            lock_names[chance(&g->rng, 30) ? 0
                                           : rng_below(&g->rng, NLOCK_NAMES)];
        c->name_len = (uint8_t)strlen(c->name);
}

/* The model's locks move when one is deleted: copy the name out. */
static void gen_copy_name(struct gen *g, struct command *c,
                          const struct mlock *l)
{
        memcpy(g->name, l->name, l->name_len);
        c->name = g->name;
        c->name_len = l->name_len;
}

static uint64_t gen_owner(struct gen *g)
{
        return chance(&g->rng, 3) ? 7 : 1 + rng_below(&g->rng, 2);
}

/* A token that is probably not the current grant of anything. */
static uint64_t gen_stale(struct gen *g, uint64_t current)
{
        uint32_t p = rng_below(&g->rng, 100);

        if (p < 50 && g->ntokens > 0) {
                return g->tokens[rng_below(&g->rng, g->ntokens)];
        }
        if (p < 80 && current > 1) {
                return current - 1 - rng_below(&g->rng, (uint32_t)current - 1);
        }
        return p < 90 ? current + 1 : rng_below(&g->rng, 3);
}

/* Mostly a live session, sometimes an ended one or one that never was. */
static uint64_t gen_session(struct gen *g, const struct model *m,
                            uint64_t index)
{
        uint32_t p = rng_below(&g->rng, 100);

        if (p < 82 && m->ns > 0) {
                return m->s[rng_below(&g->rng, m->ns)].id;
        }
        if (p < 94 && g->ns > 0) {
                return g->s[rng_below(&g->rng, g->ns)].id;
        }
        switch (rng_below(&g->rng, 4)) {
        case 0:
                return 0;
        case 1:
                return UINT64_MAX;
        case 2:
                return index;
        default:
                return 1 + rng_below(&g->rng, (uint32_t)index);
        }
}

/* Sequence numbers mostly fresh; sometimes zero, below the ack floor or
 * reused; acks that advance, lag behind or run ahead of the seq. */
static void gen_seq(struct gen *g, struct command *c)
{
        struct gsess *gs = gen_sess(g, c->session);
        uint32_t p = rng_below(&g->rng, 100);

        if (gs == NULL) {
                c->seq = 1 + rng_below(&g->rng, 5);
                c->ack = rng_below(&g->rng, 2);
                return;
        }
        c->ack = gs->ack;
        if (p < 88) {
                c->seq = gs->next_seq++;
        } else if (p < 92) {
                c->seq = 0;
        } else if (p < 96 && gs->ack > 1) {
                c->seq = 1 + rng_below(&g->rng, (uint32_t)gs->ack - 1);
                c->ack = rng_below(&g->rng, (uint32_t)c->seq + 1);
        } else {
                c->seq = 1 + rng_below(&g->rng, (uint32_t)gs->next_seq);
        }
        p = rng_below(&g->rng, 100);
        if (p < 55 && c->seq >= c->ack) {
                c->ack += rng_below(&g->rng, (uint32_t)(c->seq - c->ack + 1));
        } else if (p < 59) {
                c->ack = c->seq + 1 + rng_below(&g->rng, 3);
        } else if (p < 63 && c->ack > 0) {
                c->ack = rng_below(&g->rng, (uint32_t)c->ack);
        }
        if (c->ack <= c->seq && c->ack > gs->ack) {
                gs->ack = c->ack;
        }
}

static void gen_remember(struct gen *g, const struct command *c)
{
        struct gsess *gs = gen_sess(g, c->session);

        if (gs == NULL) {
                return;
        }
        gs->hist[gs->hpos].c = *c;
        if (c->name_len > 0) {
                memcpy(gs->hist[gs->hpos].name, c->name, c->name_len);
                gs->hist[gs->hpos].c.name = gs->hist[gs->hpos].name;
        }
        gs->hpos = (gs->hpos + 1) % CAP_HIST;
        if (gs->nhist < CAP_HIST) {
                gs->nhist++;
        }
}

static bool gen_retry(struct gen *g, struct command *c)
{
        struct gsess *gs;

        if (g->ns == 0) {
                return false;
        }
        gs = &g->s[rng_below(&g->rng, g->ns)];
        if (gs->nhist == 0) {
                return false;
        }
        *c = gs->hist[rng_below(&g->rng, gs->nhist)].c;
        if (chance(&g->rng, 30) && gs->ack <= c->seq) {
                c->ack = gs->ack;
        }
        return true;
}

/* Picks a random waiter of the model (of `sid` if non-zero). */
static bool gen_waiter(struct gen *g, struct model *m, uint64_t sid,
                       struct mlock **lp, struct mwaiter **wp)
{
        unsigned n = 0, k;

        for (unsigned i = 0; i < m->nl; i++) {
                for (unsigned j = 0; j < m->l[i].nw; j++) {
                        n += sid == 0 || m->l[i].w[j].session == sid;
                }
        }
        if (n == 0) {
                return false;
        }
        k = rng_below(&g->rng, n);
        for (unsigned i = 0; i < m->nl; i++) {
                for (unsigned j = 0; j < m->l[i].nw; j++) {
                        if (sid != 0 && m->l[i].w[j].session != sid) {
                                continue;
                        }
                        if (k-- == 0) {
                                *lp = &m->l[i];
                                *wp = &m->l[i].w[j];
                                return true;
                        }
                }
        }
        return false;
}

static void gen_open(struct gen *g, const struct model *m, struct command *c)
{
        uint32_t p = rng_below(&g->rng, 100);
        static const uint32_t bad_ttl[] = {0, LIM_MIN_TTL - 1, LIM_MAX_TTL + 1,
                                           UINT32_MAX};

        c->type = COMMAND_OPEN;
        if (p < 15 && m->ns > 0) {
                c->nonce = m->s[rng_below(&g->rng, m->ns)].nonce;
        } else if (p < 20) {
                c->nonce = 0;
        } else if (p < 25 && g->ns > 0) {
                c->nonce = g->s[rng_below(&g->rng, g->ns)].nonce;
        } else {
                c->nonce = rng_next(&g->rng);
        }
        c->ttl_ms = chance(&g->rng, 92)
                        ? LIM_MIN_TTL +
                              rng_below(&g->rng, LIM_MAX_TTL - LIM_MIN_TTL + 1)
                        : bad_ttl[rng_below(&g->rng, 4)];
        c->name_len = chance(&g->rng, 3) ? COMMAND_CLIENT_NAME_MAX
                                         : (uint8_t)rng_below(&g->rng, 9);
        for (unsigned i = 0; i < c->name_len; i++) {
                g->client[i] = (char)('a' + rng_below(&g->rng, 26));
        }
        c->name = g->client;
}

/* One well-formed command, in memory. */
static void gen_command(struct gen *g, struct model *m, uint64_t index,
                        struct command *c)
{
        uint32_t p = rng_below(&g->rng, 100);
        struct mlock *l;
        struct mwaiter *w;

        memset(c, 0, sizeof *c);
        if (m->ns < 2 && chance(&g->rng, 50)) {
                p = 0;
        }
        if (p < 9) {
                gen_open(g, m, c);
                return;
        }
        if (p < 18 && gen_retry(g, c)) {
                return;
        }
        if (p < 23) {
                c->type = COMMAND_EXPIRE;
                c->session = gen_session(g, m, index);
                /* Prefer holders with waiters: expiry with handover. */
                for (unsigned i = 0; chance(&g->rng, 50) && i < m->nl; i++) {
                        if (m->l[i].nw > 0) {
                                c->session = m->l[i].session;
                                break;
                        }
                }
                return;
        }
        if (p < 28) {
                c->type = COMMAND_TIMEOUT;
                if (chance(&g->rng, 75) && gen_waiter(g, m, 0, &l, &w)) {
                        c->session = w->session;
                        c->target = w->seq;
                        gen_copy_name(g, c, l);
                        return;
                }
                c->session = gen_session(g, m, index);
                c->target = 1 + rng_below(&g->rng, 8);
                gen_name(g, c);
                return;
        }
        if (p < 31) {
                c->type = COMMAND_QUERY;
                gen_name(g, c);
                return;
        }
        if (p < 36) {
                c->type = COMMAND_CHECK;
                gen_name(g, c);
                l = m_lock(m, c->name, c->name_len);
                c->token = l != NULL && chance(&g->rng, 50)
                               ? l->token
                               : gen_stale(g, l != NULL ? l->token : index);
                return;
        }
        if (p < 40) {
                c->type = COMMAND_CLOSE;
                c->session = gen_session(g, m, index);
        } else if (p < 45) {
                c->type = COMMAND_CANCEL;
                c->session = gen_session(g, m, index);
                if (chance(&g->rng, 70) &&
                    gen_waiter(g, m, c->session, &l, &w)) {
                        c->target = w->seq;
                        gen_copy_name(g, c, l);
                } else {
                        c->target = 1 + rng_below(&g->rng, 8);
                        gen_name(g, c);
                }
        } else if (p < 65) {
                c->type = COMMAND_RELEASE;
                if (m->nl > 0 && chance(&g->rng, 65)) {
                        l = &m->l[rng_below(&g->rng, m->nl)];
                        c->session = l->session;
                        c->owner = l->owner;
                        gen_copy_name(g, c, l);
                        c->token = chance(&g->rng, 88) ? l->token
                                                       : gen_stale(g, l->token);
                } else {
                        c->session = gen_session(g, m, index);
                        c->owner = gen_owner(g);
                        gen_name(g, c);
                        l = m_lock(m, c->name, c->name_len);
                        c->token = l != NULL && chance(&g->rng, 50)
                                       ? l->token
                                       : gen_stale(g, index);
                }
        } else {
                c->type = COMMAND_ACQUIRE;
                c->session = gen_session(g, m, index);
                c->owner = gen_owner(g);
                gen_name(g, c);
                p = rng_below(&g->rng, 100);
                c->wait_ms = p < 40   ? COMMAND_WAIT_TRY
                             : p < 70 ? COMMAND_WAIT_FOREVER
                                      : 1 + rng_below(&g->rng, 60000);
                p = rng_below(&g->rng, 100);
                c->mode = p < 97   ? COMMAND_MODE_EXCLUSIVE
                          : p < 99 ? COMMAND_MODE_SHARED
                                   : (uint8_t)(2 + rng_below(&g->rng, 254));
        }
        gen_seq(g, c);
        gen_remember(g, c);
}

/* Flip a byte of an encoded command now and then (usually part of a name,
 * sometimes into a NUL), keeping its length. */
static void gen_flip(struct gen *g, uint8_t *buf, size_t len)
{
        size_t i;

        if (!chance(&g->rng, 2)) {
                return;
        }
        i = chance(&g->rng, 25) ? len - 1 : rng_below(&g->rng, (uint32_t)len);
        buf[i] ^= chance(&g->rng, 25) && buf[i] != 0
                      ? buf[i]
                      : (uint8_t)(1 + rng_below(&g->rng, 255));
}

/* The bytes of the next entry: an encoded command, or now and then random
 * bytes or an encoding with one byte flipped. */
static size_t gen_entry(struct gen *g, struct model *m, uint64_t index,
                        uint8_t *buf, size_t cap)
{
        struct command c;
        size_t len;

        if (chance(&g->rng, 3) && chance(&g->rng, 40)) {
                len = rng_below(&g->rng, 41);
                for (size_t i = 0; i < len; i++) {
                        buf[i] = (uint8_t)rng_next(&g->rng);
                }
                if (len > 0 && chance(&g->rng, 75)) {
                        buf[0] = COMMAND_VERSION;
                }
                if (len > 1 && chance(&g->rng, 50)) {
                        buf[1] = (uint8_t)(1 + rng_below(&g->rng, 9));
                }
                return len;
        }
        gen_command(g, m, index, &c);
        len = command_encode(&c, buf, cap);
        assert_true(len > 0);
        gen_flip(g, buf, len);
        return len;
}

/* A RESULT event as lockfsm emits one for command `c` (zeroed for one
 * that did not decode). */
static void m_result_ev(struct evlog *log, uint64_t index,
                        const struct command *c, const struct lockfsm_result *r)
{
        struct ev *v = m_ev(log, LOCKFSM_EV_RESULT, index, c->type);

        v->session = c->type == COMMAND_OPEN ? r->session : c->session;
        v->seq = c->seq;
        v->owner = c->owner;
        v->token = r->token;
        v->nonce = c->nonce;
        v->status = r->status;
        if (c->type != COMMAND_OPEN && c->name != NULL) {
                v->name_len = c->name_len;
                memcpy(v->name, c->name, c->name_len);
        }
        v->has_result = true;
        v->result = *r;
}

/* The client learns from the model's answers, never from the machine's, so
 * a seed names the same commands whatever the implementation does. */
static void gen_observe(struct gen *g, const struct command *c,
                        const struct lockfsm_result *r, const struct ev *ev,
                        unsigned n)
{
        if (c->type == COMMAND_OPEN && r->status == 0 && !r->duplicate &&
            g->ns < CAP_KNOWN) {
                struct gsess *gs = &g->s[g->ns++];

                memset(gs, 0, sizeof *gs);
                gs->id = r->session;
                gs->nonce = c->nonce;
                gs->next_seq = 1;
        }
        for (unsigned i = 0; i < n; i++) {
                if (ev[i].type == LOCKFSM_EV_GRANT) {
                        g->tokens[g->tpos] = ev[i].token;
                        g->tpos = (g->tpos + 1) % CAP_TOKENS;
                        if (g->ntokens < CAP_TOKENS) {
                                g->ntokens++;
                        }
                }
        }
}

/* One command's bytes, applied by the model as lockfsm_apply would: its
 * events and RESULT go to `log`, and the client learns from the answer. */
static struct lockfsm_result m_command(struct model *m, struct gen *g,
                                       uint64_t index, const uint8_t *p,
                                       size_t n, struct evlog *log)
{
        struct lockfsm_result r;
        struct command c;
        unsigned from = log->n;
        int dec = command_decode(&c, p, n);

        if (dec != 0) {
                memset(&c, 0, sizeof c);
                m_stamp(m, index);
                r = rejected(dec);
        } else {
                r = m_apply(m, index, &c, log);
        }
        m_result_ev(log, index, &c, &r);
        if (dec == 0) {
                gen_observe(g, &c, &r, &log->ev[from], log->n - from);
        }
        return r;
}

/* The model's answer to a whole entry, parsed the way lockfsm_apply
 * parses it: a batch's commands in order, or one command. */
static struct lockfsm_result m_entry(struct model *m, struct gen *g,
                                     uint64_t index, const uint8_t *buf,
                                     size_t len, struct evlog *log)
{
        struct lockfsm_result r;
        struct entry_reader rd;
        const uint8_t *p;
        size_t n;
        int rv;

        if (!entry_is_batch(buf, len)) {
                return m_command(m, g, index, buf, len, log);
        }
        rv = entry_reader_init(&rd, buf, len);
        if (rv != 0) {
                struct command none;

                memset(&none, 0, sizeof none);
                m_stamp(m, index);
                r = rejected(rv);
                m_result_ev(log, index, &none, &r);
                return r;
        }
        while (entry_reader_next(&rd, &p, &n)) {
                m_command(m, g, index, p, n, log);
        }
        r = outcome(LOCKFSM_APPLIED, 0, 0);
        r.count = rd.count;
        return r;
}

/* A batch of up to 8 commands, each generated from the model's state
 * after the ones before it were applied (so a batch can grant a lock and
 * release it again: the case of the one-grant-per-entry rule), or now and
 * then generated up front and then damaged, so its framing is tested. */
static size_t gen_batch(struct gen *g, struct model *m, uint64_t index,
                        uint8_t *buf, size_t cap, struct evlog *log,
                        struct lockfsm_result *want)
{
        unsigned k = rng_below(&g->rng, 9);
        bool damage = chance(&g->rng, 4);
        struct entry_writer w;
        size_t len;

        entry_writer_init(&w, buf, cap, index);
        for (unsigned i = 0; i < k; i++) {
                uint8_t cmd[COMMAND_MAX_SIZE];
                struct command c;
                size_t n;

                gen_command(g, m, index, &c);
                n = command_encode(&c, cmd, sizeof cmd);
                assert_true(n > 0);
                gen_flip(g, cmd, n);
                if (!entry_writer_add(&w, cmd, n)) {
                        break;
                }
                if (!damage) {
                        m_command(m, g, index, cmd, n, log);
                }
        }
        len = entry_writer_finish(&w);
        if (!damage) {
                *want = outcome(LOCKFSM_APPLIED, 0, 0);
                want->count = w.count;
                return len;
        }
        switch (rng_below(&g->rng, 4)) {
        case 0: /* a header byte: version, type, flags, count, term */
                buf[rng_below(&g->rng, ENTRY_HEADER_SIZE)] ^=
                    (uint8_t)(1 + rng_below(&g->rng, 255));
                break;
        case 1: /* a record's length */
                if (w.count > 0) {
                        buf[ENTRY_HEADER_SIZE] ^=
                            (uint8_t)(1 + rng_below(&g->rng, 255));
                }
                break;
        case 2: /* cut short, or run long */
                len = chance(&g->rng, 50) && len > 8 ? len - 8 : len + 8;
                memset(buf + len - 8, 0, len < cap ? 8 : 0);
                break;
        default: /* padding that is not zero */
                if (len > ENTRY_HEADER_SIZE) {
                        buf[len - 1] ^= 1;
                }
                break;
        }
        *want = m_entry(m, g, index, buf, len, log);
        return len;
}

/* ------------------------------------------------------------------------ */
/* The checker. */

/* The first disagreement found, with what it takes to reproduce it. */
struct mismatch {
        uint64_t seed;
        unsigned step;
        char cmd[640];
        char what[1024];
};

/* How often each outcome came up, so that a change to the generator that
 * stops reaching some rule shows (BATON_MODEL_STATS=1 prints it). */
struct tally {
        unsigned long steps;
        unsigned long undecodable;
        unsigned long status[32]; /* by -status */
        unsigned long kind[16];   /* successes by kind */
        unsigned long duplicates;
        unsigned long handovers;    /* GRANT events to a waiter */
        unsigned long multi_grants; /* entries with two or more GRANTs */
        unsigned long ties;         /* ends that ordered grants by age */
        unsigned long batches;      /* entries of several commands */
        unsigned long deferred;     /* entries that left a lock between
                                       holders for the next one */
        unsigned long begun;        /* entries that began with a grant */
};

/* Per-sequence memory of the events seen, for the invariants that span
 * entries: tokens per lock, and sessions that have ended. */
struct lasttoken {
        uint8_t name_len;
        char name[COMMAND_NAME_MAX];
        uint64_t token;
};

struct run {
        uint64_t seed;
        unsigned bugs;
        bool trace;
        bool every; /* compare the whole state after every step */
        struct model m;
        struct gen g;
        struct lockfsm *f; /* the machine under test */
        struct lockfsm *r; /* a replica restored from f's last snapshot */
        struct evlog fev;  /* events of f for this entry */
        struct evlog rev;  /* events of r */
        struct evlog mev;  /* events the model predicts */
        uint8_t buf[4096]; /* the last entry */
        size_t len;
        unsigned began; /* events of the last entry's start */
        struct lasttoken last[CAP_KNOWN];
        unsigned nlast;
        uint64_t opened[CAP_KNOWN];
        unsigned nopened;
        uint64_t ended[CAP_KNOWN];
        unsigned nended;
        struct mismatch *mm;
        struct tally *tally; /* NULL: not counted */
};

static bool diverge(struct run *run, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Records the first mismatch and returns false, so checks read as
 * `return diverge(...)`. */
static bool diverge(struct run *run, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(run->mm->what, sizeof run->mm->what, fmt, ap);
        va_end(ap);
        return false;
}

static void limits(struct lockfsm_limits *l)
{
        lockfsm_limits_default(l);
        l->max_sessions = LIM_SESSIONS;
        l->max_locks_per_session = LIM_LOCKS;
        l->max_waiters_per_lock = LIM_WAITERS;
        l->max_inflight = LIM_INFLIGHT;
        l->max_tombstones = LIM_TOMBS;
        l->min_ttl_ms = LIM_MIN_TTL;
        l->max_ttl_ms = LIM_MAX_TTL;
}

static struct lockfsm *machine(struct evlog *log)
{
        struct lockfsm_limits l;
        struct lockfsm *f;

        limits(&l);
        f = lockfsm_create(&l, NULL);
        assert_non_null(f);
        lockfsm_set_event_cb(f, on_event, log);
        return f;
}

static void describe(char *out, size_t cap, const uint8_t *buf, size_t len,
                     int dec, const struct command *c)
{
        int n;

        if (entry_is_batch(buf, len)) {
                struct entry_reader rd;
                int rv = entry_reader_init(&rd, buf, len);

                snprintf(out, cap, "BATCH of %zu bytes, %u commands%s", len,
                         rd.count, rv != 0 ? ", refused" : "");
                return;
        }
        if (dec != 0) {
                n = snprintf(out, cap, "undecodable (%d) %zu bytes:", dec, len);
                for (size_t i = 0; i < len && n > 0 && (size_t)n + 4 < cap;
                     i++) {
                        n +=
                            snprintf(out + n, cap - (size_t)n, " %02x", buf[i]);
                }
                return;
        }
        snprintf(out, cap,
                 "%s session=%" PRIu64 " seq=%" PRIu64 " ack=%" PRIu64
                 " owner=%" PRIu64 " token=%" PRIu64 " target=%" PRIu64
                 " nonce=%" PRIu64 " ttl=%" PRIu32 " wait=%" PRIu32
                 " mode=%u name=\"%.*s\"",
                 command_type_name(c->type), c->session, c->seq, c->ack,
                 c->owner, c->token, c->target, c->nonce, c->ttl_ms, c->wait_ms,
                 c->mode, c->name_len > 24 ? 24 : c->name_len,
                 c->name != NULL ? c->name : "");
}

static void result_str(char *out, size_t cap, const struct lockfsm_result *r)
{
        snprintf(out, cap,
                 "{status=%d kind=%u dup=%d session=%" PRIu64 " owner=%" PRIu64
                 " token=%" PRIu64 " count=%" PRIu32 " waiters=%" PRIu32 "}",
                 r->status, r->kind, r->duplicate, r->session, r->owner,
                 r->token, r->count, r->waiters);
}

static bool result_eq(const struct lockfsm_result *want,
                      const struct lockfsm_result *got, bool check_dup)
{
        return got->status == want->status && got->kind == want->kind &&
               (!check_dup || got->duplicate == want->duplicate) &&
               got->session == want->session && got->owner == want->owner &&
               got->token == want->token && got->count == want->count &&
               got->waiters == want->waiters;
}

static bool check_result(struct run *run, const char *what,
                         const struct lockfsm_result *want,
                         const struct lockfsm_result *got)
{
        char a[256], b[256];

        if (result_eq(want, got, true)) {
                return true;
        }
        result_str(a, sizeof a, want);
        result_str(b, sizeof b, got);
        return diverge(run, "%s: expected %s, got %s", what, a, b);
}

static const char *ev_type_name(uint8_t t)
{
        static const char *const names[] = {
            "?",     "RESULT",  "OPEN",  "END",
            "GRANT", "RELEASE", "QUEUE", "UNQUEUE",
        };
        return t < sizeof names / sizeof names[0] ? names[t] : "?";
}

static void ev_str(char *out, size_t cap, const struct ev *v)
{
        snprintf(out, cap,
                 "%s(session=%" PRIu64 " seq=%" PRIu64 " owner=%" PRIu64
                 " token=%" PRIu64 " status=%d wait=%" PRIu32 " name=\"%.*s\")",
                 ev_type_name(v->type), v->session, v->seq, v->owner, v->token,
                 v->status, v->wait_ms, v->name_len > 24 ? 24 : v->name_len,
                 v->name);
}

/* Replicas must agree on every field of every event. */
static bool ev_same(const struct ev *a, const struct ev *b)
{
        return a->type == b->type && a->cause == b->cause &&
               a->index == b->index && a->session == b->session &&
               a->seq == b->seq && a->owner == b->owner &&
               a->token == b->token && a->nonce == b->nonce &&
               a->wait_ms == b->wait_ms && a->status == b->status &&
               a->name_len == b->name_len &&
               memcmp(a->name, b->name, a->name_len) == 0 &&
               a->has_result == b->has_result &&
               (!a->has_result || result_eq(&a->result, &b->result, true));
}

/* The fields each event type is documented to carry. */
static bool ev_eq(const struct ev *a, const struct ev *b)
{
        bool lock =
            a->type == LOCKFSM_EV_GRANT || a->type == LOCKFSM_EV_RELEASE ||
            a->type == LOCKFSM_EV_QUEUE || a->type == LOCKFSM_EV_UNQUEUE;

        if (a->type != b->type || a->session != b->session) {
                return false;
        }
        if (lock && (a->owner != b->owner || a->name_len != b->name_len ||
                     memcmp(a->name, b->name, a->name_len) != 0)) {
                return false;
        }
        switch (a->type) {
        case LOCKFSM_EV_OPEN:
                return a->nonce == b->nonce;
        case LOCKFSM_EV_GRANT:
                return a->seq == b->seq && a->token == b->token;
        case LOCKFSM_EV_RELEASE:
                return a->token == b->token;
        case LOCKFSM_EV_QUEUE:
                return a->seq == b->seq && a->wait_ms == b->wait_ms;
        case LOCKFSM_EV_UNQUEUE:
                return a->seq == b->seq && a->status == b->status;
        default:
                return true;
        }
}

static bool known(const uint64_t *ids, unsigned n, uint64_t id)
{
        for (unsigned i = 0; i < n; i++) {
                if (ids[i] == id) {
                        return true;
                }
        }
        return false;
}

/* The machine's events must be the model's, one by one (RESULTs with
 * their outcomes), and keep the invariants that hold whatever the model
 * says: no event for a session after its END, every GRANT to a session
 * that opened, with the entry's index as its token, and tokens that
 * strictly increase per lock, so no entry grants a lock twice. `type` is
 * the command of a one-command entry, 0 otherwise. */
static bool check_events(struct run *run, uint64_t index, int type)
{
        const struct evlog *log = &run->fev;
        unsigned grants = 0;
        char a[256], b[256];

        if (log->overflow || run->mev.overflow) {
                return diverge(run, "more events than the log holds");
        }
        for (unsigned i = 0; i < log->n || i < run->mev.n; i++) {
                const struct ev *want = i < run->mev.n ? &run->mev.ev[i] : NULL;
                const struct ev *got = i < log->n ? &log->ev[i] : NULL;

                if (want != NULL && got != NULL && ev_eq(want, got) &&
                    want->cause == got->cause && got->index == index &&
                    got->has_result == want->has_result &&
                    (!want->has_result ||
                     (result_eq(&want->result, &got->result, true) &&
                      got->status == want->status))) {
                        continue;
                }
                snprintf(a, sizeof a, "nothing");
                snprintf(b, sizeof b, "nothing");
                if (want != NULL) {
                        ev_str(a, sizeof a, want);
                }
                if (got != NULL) {
                        ev_str(b, sizeof b, got);
                }
                if (want != NULL && got != NULL && want->has_result &&
                    got->has_result) {
                        size_t k = strlen(a), l = strlen(b);

                        result_str(a + k, sizeof a - k, &want->result);
                        result_str(b + l, sizeof b - l, &got->result);
                }
                return diverge(run,
                               "event %u of %u: expected %s (cause %u), got "
                               "%s (cause %u, index %" PRIu64 ")",
                               i, run->mev.n, a, want != NULL ? want->cause : 0,
                               b, got != NULL ? got->cause : 0,
                               got != NULL ? got->index : 0);
        }

        /* Invariants that hold whatever the model says. */
        for (unsigned i = 0; i < log->n; i++) {
                const struct ev *v = &log->ev[i];
                struct lasttoken *lt = NULL;

                if (v->type == LOCKFSM_EV_RESULT) {
                        continue; /* a refusal may name any session */
                }
                if (known(run->ended, run->nended, v->session)) {
                        return diverge(run,
                                       "%s event names session %" PRIu64
                                       " after its END",
                                       ev_type_name(v->type), v->session);
                }
                if (v->type == LOCKFSM_EV_OPEN && run->nopened < CAP_KNOWN) {
                        run->opened[run->nopened++] = v->session;
                }
                if (v->type == LOCKFSM_EV_END && run->nended < CAP_KNOWN) {
                        run->ended[run->nended++] = v->session;
                }
                if (v->type != LOCKFSM_EV_GRANT) {
                        continue;
                }
                grants += v->cause != COMMAND_BATCH;
                if (!known(run->opened, run->nopened, v->session)) {
                        return diverge(run,
                                       "GRANT to session %" PRIu64
                                       " that never opened",
                                       v->session);
                }
                if (v->token != index) {
                        return diverge(run,
                                       "GRANT token %" PRIu64
                                       " is not the entry's index",
                                       v->token);
                }
                for (unsigned j = 0; j < run->nlast; j++) {
                        if (run->last[j].name_len == v->name_len &&
                            memcmp(run->last[j].name, v->name, v->name_len) ==
                                0) {
                                lt = &run->last[j];
                        }
                }
                if (lt == NULL && run->nlast < CAP_KNOWN) {
                        lt = &run->last[run->nlast++];
                        lt->name_len = v->name_len;
                        memcpy(lt->name, v->name, v->name_len);
                        lt->token = 0;
                }
                if (lt != NULL && v->token <= lt->token) {
                        return diverge(
                            run,
                            "GRANT token %" PRIu64
                            " does not exceed the lock's last %" PRIu64,
                            v->token, lt->token);
                }
                if (lt != NULL) {
                        lt->token = v->token;
                }
        }
        if (grants > 1 && type != 0 && type != COMMAND_CLOSE &&
            type != COMMAND_EXPIRE) {
                return diverge(run,
                               "%u grants share token %" PRIu64 " outside "
                               "CLOSE/EXPIRE",
                               grants, index);
        }
        return true;
}

/* A bounds-checked little-endian reader for the snapshot format. */
struct rd {
        const uint8_t *p;
        size_t left;
        bool bad;
};

static uint64_t rd_n(struct rd *r, unsigned n)
{
        uint64_t v = 0;

        if (r->bad || r->left < n) {
                r->bad = true;
                return 0;
        }
        for (unsigned i = 0; i < n; i++) {
                v |= (uint64_t)r->p[i] << (8 * i);
        }
        r->p += n;
        r->left -= n;
        return v;
}

/* Compares a string field; false (and the reader bad) when it differs. */
static bool rd_str(struct rd *r, const char *want, size_t len)
{
        size_t n = (size_t)rd_n(r, 1);

        if (r->bad || n != len || r->left < n || memcmp(r->p, want, n) != 0) {
                return false;
        }
        r->p += n;
        r->left -= n;
        return true;
}

static uint64_t fnv1a(const uint8_t *p, size_t n)
{
        uint64_t h = 0xcbf29ce484222325ULL;

        for (size_t i = 0; i < n; i++) {
                h = (h ^ p[i]) * 0x100000001b3ULL;
        }
        return h;
}

#define WANT(cond, ...)                                                        \
        do {                                                                   \
                if (r.bad || !(cond)) {                                        \
                        return diverge(run, "snapshot: " __VA_ARGS__);         \
                }                                                              \
        } while (0)

/* Parses the machine's snapshot (the format of docs/fsm.md) and compares
 * every field with the model's state. */
static bool check_snapshot(struct run *run, const uint8_t *buf, size_t len,
                           uint64_t index)
{
        const struct model *m = &run->m;
        struct rd r = {buf, len, false};
        uint64_t v;

        WANT(len >= 8 && fnv1a(buf, len - 8) ==
                             rd_n(&(struct rd){buf + len - 8, 8, false}, 8),
             "bad checksum");
        r.left -= 8;
        WANT(rd_n(&r, 4) == 0x534e5442, "bad magic");
        WANT(rd_n(&r, 2) == 2, "bad version");
        WANT(rd_n(&r, 2) == 0, "bad flags");
        v = rd_n(&r, 8);
        WANT(v == index, "last_index %" PRIu64 ", expected %" PRIu64, v, index);
        v = rd_n(&r, 8);
        WANT(v == m->stamp, "stamp %" PRIu64 ", expected %" PRIu64, v,
             m->stamp);
        v = rd_n(&r, 4);
        WANT(v == m->nt, "%" PRIu64 " tombstones, expected %u", v, m->nt);
        for (unsigned i = 0; i < m->nt; i++) {
                v = rd_n(&r, 8);
                WANT(v == m->t[i].session,
                     "tombstone %u is %" PRIu64 ", expected %" PRIu64, i, v,
                     m->t[i].session);
                v = rd_n(&r, 1);
                WANT(v == (uint64_t)-m->t[i].status,
                     "tombstone %u reason %" PRIu64, i, v);
        }
        v = rd_n(&r, 4);
        WANT(v == m->ns, "%" PRIu64 " sessions, expected %u", v, m->ns);
        for (unsigned i = 0; i < m->ns; i++) {
                const struct msess *s = &m->s[i];

                v = rd_n(&r, 8);
                WANT(v == s->id, "session %u is %" PRIu64 ", expected %" PRIu64,
                     i, v, s->id);
                WANT(rd_n(&r, 8) == s->nonce, "session %" PRIu64 " nonce",
                     s->id);
                WANT(rd_n(&r, 4) == s->ttl, "session %" PRIu64 " ttl", s->id);
                v = rd_n(&r, 8);
                WANT(v == s->floor,
                     "session %" PRIu64 " floor %" PRIu64 ", expected %" PRIu64,
                     s->id, v, s->floor);
                WANT(rd_str(&r, s->client, s->client_len),
                     "session %" PRIu64 " client name", s->id);
                v = rd_n(&r, 1);
                WANT(v == s->nout,
                     "session %" PRIu64 " remembers %" PRIu64
                     " outcomes, expected %u",
                     s->id, v, s->nout);
                for (unsigned j = 0; j < s->nout; j++) {
                        const struct lockfsm_result *want = &s->out[j].res;
                        struct lockfsm_result got;
                        char a[256], b[256];

                        memset(&got, 0, sizeof got);
                        v = rd_n(&r, 8);
                        WANT(v == s->out[j].seq,
                             "session %" PRIu64 " remembers seq %" PRIu64
                             ", expected %" PRIu64,
                             s->id, v, s->out[j].seq);
                        got.kind = (uint8_t)rd_n(&r, 1);
                        got.status = (int)(int32_t)rd_n(&r, 4);
                        got.session = rd_n(&r, 8);
                        got.owner = rd_n(&r, 8);
                        got.token = rd_n(&r, 8);
                        got.count = (uint32_t)rd_n(&r, 4);
                        got.waiters = (uint32_t)rd_n(&r, 4);
                        if (!r.bad && !result_eq(want, &got, false)) {
                                result_str(a, sizeof a, want);
                                result_str(b, sizeof b, &got);
                        }
                        WANT(result_eq(want, &got, false),
                             "session %" PRIu64 " seq %" PRIu64
                             " remembers %s, expected %s",
                             s->id, s->out[j].seq, b, a);
                }
        }
        v = rd_n(&r, 4);
        WANT(v == m->nl, "%" PRIu64 " locks, expected %u", v, m->nl);
        for (unsigned i = 0; i < m->nl; i++) {
                const struct mlock *l = &m->l[i];

                WANT(rd_str(&r, l->name, l->name_len), "lock %u name", i);
                v = rd_n(&r, 8);
                WANT(v == l->created,
                     "lock \"%.*s\" created %" PRIu64 ", expected %" PRIu64,
                     l->name_len, l->name, v, l->created);
                WANT(rd_n(&r, 1) == COMMAND_MODE_EXCLUSIVE, "lock %u mode", i);
                WANT(rd_n(&r, 4) == (l->count > 0), "lock %u holder count", i);
                if (l->count > 0) {
                        WANT(rd_n(&r, 8) == l->session,
                             "lock %u holder session", i);
                        WANT(rd_n(&r, 8) == l->owner, "lock %u holder owner",
                             i);
                        WANT(rd_n(&r, 8) == l->seq, "lock %u holder seq", i);
                        WANT(rd_n(&r, 8) == l->token, "lock %u holder token",
                             i);
                        WANT(rd_n(&r, 4) == l->count, "lock %u hold count", i);
                }
                v = rd_n(&r, 4);
                WANT(v == l->nw, "lock %u has %" PRIu64 " waiters, expected %u",
                     i, v, l->nw);
                for (unsigned j = 0; j < l->nw; j++) {
                        const struct mwaiter *w = &l->w[j];

                        WANT(rd_n(&r, 8) == w->session,
                             "lock %u waiter %u session", i, j);
                        WANT(rd_n(&r, 8) == w->owner, "lock %u waiter %u owner",
                             i, j);
                        WANT(rd_n(&r, 8) == w->seq, "lock %u waiter %u seq", i,
                             j);
                        WANT(rd_n(&r, 8) == w->queued_at,
                             "lock %u waiter %u queued_at", i, j);
                        WANT(rd_n(&r, 4) == w->wait_ms,
                             "lock %u waiter %u wait_ms", i, j);
                }
        }
        WANT(r.left == 0, "%zu bytes left over", r.left);
        return true;
}

#undef WANT

/* Whether a lock has one of the names the generator makes up. */
static bool generated(const struct run *run, const struct mlock *l)
{
        if (l->name_len == COMMAND_NAME_MAX) {
                return memcmp(l->name, run->g.long_name, l->name_len) == 0;
        }
        for (unsigned i = 0; i < NLOCK_NAMES; i++) {
                if (l->name_len == strlen(lock_names[i]) &&
                    memcmp(l->name, lock_names[i], l->name_len) == 0) {
                        return true;
                }
        }
        return false;
}

/* Lookups that do not go through the log must agree with the model too. */
static bool check_lookups(struct run *run)
{
        struct lockfsm_result got;
        struct lockfsm_stats st;
        struct lockfsm_result want;
        uint64_t waiters = 0, held = 0;
        char what[300];

        /* The generator's names, then every lock the model holds (a
         * flipped byte can create a lock under any name). */
        for (unsigned i = 0; i <= NLOCK_NAMES + run->m.nl; i++) {
                const struct mlock *l =
                    i > NLOCK_NAMES ? &run->m.l[i - NLOCK_NAMES - 1] : NULL;
                const char *name = l != NULL         ? l->name
                                   : i < NLOCK_NAMES ? lock_names[i]
                                                     : run->g.long_name;
                size_t len = l != NULL         ? l->name_len
                             : i < NLOCK_NAMES ? strlen(name)
                                               : COMMAND_NAME_MAX;

                if (l != NULL && generated(run, l)) {
                        continue; /* queried already */
                }
                memset(&got, 0, sizeof got);
                lockfsm_query(run->f, name, len, &got);
                want = m_query(&run->m, name, len);
                if (result_eq(&want, &got, true)) {
                        continue;
                }
                snprintf(what, sizeof what, "lockfsm_query(\"%.*s\")",
                         (int)(len > 24 ? 24 : len), name);
                return check_result(run, what, &want, &got);
        }
        for (unsigned i = 0; i < run->m.nl; i++) {
                waiters += run->m.l[i].nw;
                held += run->m.l[i].count > 0;
        }
        lockfsm_stats(run->f, &st);
        if (st.sessions != run->m.ns || st.locks != run->m.nl ||
            st.grants != held || st.waiters != waiters ||
            st.tombstones != run->m.nt) {
                return diverge(run,
                               "stats sessions=%" PRIu64 " locks=%" PRIu64
                               " grants=%" PRIu64 " waiters=%" PRIu64
                               " tombstones=%" PRIu64 ", expected %u %u %u "
                               "%" PRIu64 " %u",
                               st.sessions, st.locks, st.grants, st.waiters,
                               st.tombstones, run->m.ns, run->m.nl,
                               (unsigned)held, waiters, run->m.nt);
        }
        for (unsigned i = 0; i < run->g.ns; i++) {
                const struct msess *s = m_session(&run->m, run->g.s[i].id);
                uint32_t ttl = lockfsm_session_ttl(run->f, run->g.s[i].id);

                if (ttl != (s != NULL ? s->ttl : 0)) {
                        return diverge(
                            run, "lockfsm_session_ttl(%" PRIu64 ") = %" PRIu32,
                            run->g.s[i].id, ttl);
                }
        }
        return true;
}

static bool snapshot(struct run *run, struct lockfsm *f, void **buf,
                     size_t *len)
{
        int rv = lockfsm_snapshot(f, buf, len);

        if (rv != 0) {
                return diverge(run, "lockfsm_snapshot: %d", rv);
        }
        return true;
}

/* Everything but last_index, the stamp and the checksum: what "changes
 * nothing" means for an entry that is applied but refused. */
static bool same_state(const uint8_t *a, size_t alen, const uint8_t *b,
                       size_t blen)
{
        return alen == blen && alen >= 32 && memcmp(a, b, 8) == 0 &&
               memcmp(a + 24, b + 24, alen - 32) == 0;
}

/* Snapshot f, check that r (replaying since the last checkpoint) has the
 * same bytes, then restore a fresh replica that must reproduce them. */
static bool checkpoint(struct run *run)
{
        void *a = NULL, *b = NULL, *c = NULL;
        size_t alen, blen, clen;
        bool ok = false;
        int rv;

        if (!snapshot(run, run->f, &a, &alen)) {
                goto out;
        }
        if (run->r != NULL) {
                if (!snapshot(run, run->r, &b, &blen)) {
                        goto out;
                }
                if (alen != blen || memcmp(a, b, alen) != 0) {
                        diverge(run, "the replica's snapshot differs from the "
                                     "machine's");
                        goto out;
                }
        }
        lockfsm_destroy(run->r);
        run->r = machine(&run->rev);
        rv = lockfsm_restore(run->r, a, alen);
        if (rv != 0) {
                diverge(run, "lockfsm_restore of a fresh snapshot: %d", rv);
                goto out;
        }
        if (lockfsm_last_index(run->r) != lockfsm_last_index(run->f)) {
                diverge(run, "restored last_index %" PRIu64,
                        lockfsm_last_index(run->r));
                goto out;
        }
        if (lockfsm_check(run->r) != NULL) {
                diverge(run, "lockfsm_check after restore: %s",
                        lockfsm_check(run->r));
                goto out;
        }
        if (!snapshot(run, run->r, &c, &clen)) {
                goto out;
        }
        if (alen != clen || memcmp(a, c, alen) != 0) {
                diverge(run,
                        "snapshot -> restore -> snapshot changed the bytes");
                goto out;
        }
        ok = true;
out:
        mem_free(&mem_libc, a);
        mem_free(&mem_libc, b);
        mem_free(&mem_libc, c);
        return ok;
}

/* Generates the next entry into run->buf and predicts on the model what
 * applying it does: every event in run->mev, RESULTs included, and what
 * lockfsm_apply returns. */
static struct lockfsm_result gen_and_predict(struct run *run, uint64_t index)
{
        struct lockfsm_result want;

        run->mev.n = 0;
        run->mev.overflow = false;
        m_entry_begin(&run->m, index, &run->mev);
        run->began = run->mev.n;
        if (chance(&run->g.rng, 25)) {
                run->len = gen_batch(&run->g, &run->m, index, run->buf,
                                     sizeof run->buf, &run->mev, &want);
        } else {
                run->len = gen_entry(&run->g, &run->m, index, run->buf,
                                     sizeof run->buf);
                want = m_entry(&run->m, &run->g, index, run->buf, run->len,
                               &run->mev);
        }
        m_entry_end(&run->m);
        return want;
}

/* One entry: the model, the machine and the replica apply it, then every
 * check runs. */
static bool step(struct run *run, uint64_t index)
{
        uint8_t *buf = run->buf;
        struct lockfsm_result res, rres, want;
        void *before = NULL, *after = NULL;
        size_t len, blen = 0, alen = 0;
        struct entry_reader rd;
        struct command c;
        const char *bad;
        bool ok = false, batch;
        int dec, rv;

        want = gen_and_predict(run, index);
        len = run->len;
        batch = entry_is_batch(buf, len);
        dec = batch ? entry_reader_init(&rd, buf, len)
                    : command_decode(&c, buf, len);
        if (dec != 0 && !snapshot(run, run->f, &before, &blen)) {
                return false;
        }
        if (run->tally != NULL) {
                struct tally *t = run->tally;
                unsigned grants = 0;

                t->steps++;
                t->undecodable += dec != 0;
                if (want.status < 0 && -want.status < 32) {
                        t->status[-want.status]++;
                } else if (want.kind < 16) {
                        t->kind[want.kind]++;
                }
                t->duplicates += want.duplicate;
                for (unsigned i = 0; i < run->mev.n; i++) {
                        const struct ev *v = &run->mev.ev[i];

                        grants += v->type == LOCKFSM_EV_GRANT;
                        t->handovers += v->type == LOCKFSM_EV_GRANT &&
                                        v->cause != COMMAND_ACQUIRE;
                }
                t->multi_grants += grants > 1;
                t->batches += batch;
                t->begun += run->began > 0;
                for (unsigned i = 0; i < run->m.nl; i++) {
                        if (run->m.l[i].count == 0) {
                                t->deferred++;
                                break;
                        }
                }
        }
        if (run->m.overflow || run->mev.overflow) {
                return diverge(run, "the model outgrew its arrays");
        }

        run->fev.n = 0;
        run->fev.overflow = false;
        memset(&res, 0xa5, sizeof res);
        rv = lockfsm_apply(run->f, index, buf, len, &res);
        if (run->trace) {
                char a[256], b[256];

                describe(run->mm->cmd, sizeof run->mm->cmd, buf, len, dec, &c);
                result_str(a, sizeof a, &res);
                result_str(b, sizeof b, &want);
                print_message("# %" PRIu64 ": %s\n#   -> %s\n#   model %s\n",
                              index, run->mm->cmd, a, b);
        }
        if (rv != 0) {
                diverge(run, "lockfsm_apply returned %d", rv);
                goto out;
        }
        if (!check_result(run, "result", &want, &res) ||
            !check_events(run, index, batch || dec != 0 ? 0 : c.type)) {
                goto out;
        }
        if (lockfsm_last_index(run->f) != index) {
                diverge(run, "lockfsm_last_index is %" PRIu64,
                        lockfsm_last_index(run->f));
                goto out;
        }
        bad = lockfsm_check(run->f);
        if (bad != NULL) {
                diverge(run, "lockfsm_check: %s", bad);
                goto out;
        }
        if (!check_lookups(run)) {
                goto out;
        }
        /* The whole state, parsed from the snapshot, catches what no
         * answer shows yet (a floor, a remembered outcome, a tombstone). */
        if ((run->every || dec != 0 || index % STATE_EVERY == 0) &&
            (!snapshot(run, run->f, &after, &alen) ||
             !check_snapshot(run, after, alen, index))) {
                goto out;
        }
        /* A refused entry changes nothing but its stamp, unless its start
         * handed on a lock an earlier entry left between holders. */
        if (dec != 0 && run->began == 0 &&
            !same_state(before, blen, after, alen)) {
                diverge(run, "an undecodable entry changed the state");
                goto out;
        }

        if (run->r != NULL) {
                run->rev.n = 0;
                run->rev.overflow = false;
                memset(&rres, 0xa5, sizeof rres);
                /* Half the time through the pre-decoded entry point, which
                 * must behave exactly like the byte one. */
                rv = !batch && dec == 0 && index % 2 == 1
                         ? lockfsm_apply_command(run->r, index, &c, &rres)
                         : lockfsm_apply(run->r, index, buf, len, &rres);
                if (rv != 0 || !result_eq(&res, &rres, true) ||
                    run->rev.n != run->fev.n) {
                        diverge(run,
                                "the restored replica diverged (rv %d, "
                                "%u events vs %u)",
                                rv, run->rev.n, run->fev.n);
                        goto out;
                }
                for (unsigned i = 0; i < run->fev.n; i++) {
                        if (!ev_same(&run->fev.ev[i], &run->rev.ev[i])) {
                                char a[256], b[256];

                                ev_str(a, sizeof a, &run->fev.ev[i]);
                                ev_str(b, sizeof b, &run->rev.ev[i]);
                                diverge(run,
                                        "event %u of the restored replica "
                                        "differs: %s (cause %u, nonce %" PRIu64
                                        ") vs the machine's %s (cause %u, "
                                        "nonce %" PRIu64 ")",
                                        i, b, run->rev.ev[i].cause,
                                        run->rev.ev[i].nonce, a,
                                        run->fev.ev[i].cause,
                                        run->fev.ev[i].nonce);
                                goto out;
                        }
                }
        }
        ok = true;
out:
        mem_free(&mem_libc, before);
        mem_free(&mem_libc, after);
        return ok;
}

/* Runs one seed; returns true and fills `mm` at the first mismatch. */
static bool run_seed(uint64_t seed, unsigned steps, unsigned bugs, bool trace,
                     bool every, struct tally *tally, struct mismatch *mm)
{
        struct run *run = calloc(1, sizeof *run);
        bool ok = true;

        assert_non_null(run);
        memset(mm, 0, sizeof *mm);
        mm->seed = seed;
        run->seed = seed;
        run->bugs = bugs;
        run->trace = trace;
        run->every = every;
        run->tally = tally;
        run->mm = mm;
        run->m.bugs = bugs;
        gen_init(&run->g, seed);
        run->f = machine(&run->fev);
        for (unsigned i = 0; ok && i < steps; i++) {
                mm->step = i;
                ok = step(run, (uint64_t)i + 1);
                if (ok && ((i + 1) % CHECKPOINT == 0 || i + 1 == steps)) {
                        ok = checkpoint(run);
                }
        }
        if (!ok) {
                struct command c;
                int dec = command_decode(&c, run->buf, run->len);

                describe(mm->cmd, sizeof mm->cmd, run->buf, run->len, dec, &c);
        }
        if (tally != NULL) {
                tally->ties += run->m.ties;
        }
        lockfsm_destroy(run->f);
        lockfsm_destroy(run->r);
        free(run);
        return !ok;
}

static unsigned env_steps(void)
{
        const char *s = getenv("BATON_MODEL_STEPS");

        return s != NULL ? (unsigned)strtoul(s, NULL, 10) : STEPS;
}

static void report(const struct mismatch *mm)
{
        print_error("seed %" PRIu64 " step %u (index %u): %s\n"
                    "  command: %s\n"
                    "  reproduce: BATON_MODEL_SEED=%" PRIu64
                    " BATON_MODEL_TRACE=1 ./tests/unit/test_model\n",
                    mm->seed, mm->step, mm->step + 1, mm->what, mm->cmd,
                    mm->seed);
}

static void print_tally(const struct tally *t)
{
        print_message("# %lu steps, %lu undecodable, %lu duplicates, "
                      "%lu handovers, %lu multi-grant entries, %lu ends "
                      "with tied tokens, %lu batches, %lu entries that "
                      "deferred a grant, %lu that began with one\n",
                      t->steps, t->undecodable, t->duplicates, t->handovers,
                      t->multi_grants, t->ties, t->batches, t->deferred,
                      t->begun);
        for (unsigned k = 1; k < 16; k++) {
                if (t->kind[k] > 0) {
                        print_message("#   kind %2u: %lu\n", k, t->kind[k]);
                }
        }
        for (unsigned e = 1; e < 32; e++) {
                if (t->status[e] > 0) {
                        print_message("#   %-36s %lu\n",
                                      baton_strerror(-(int)e), t->status[e]);
                }
        }
}

/* Runs seeds [first, first + count), or only BATON_MODEL_SEED if set (in
 * the first range; the others are skipped). */
static void run_range(uint64_t first, uint64_t count)
{
        const char *only = getenv("BATON_MODEL_SEED");
        bool trace = getenv("BATON_MODEL_TRACE") != NULL;
        bool stats = getenv("BATON_MODEL_STATS") != NULL;
        struct tally tally;
        struct mismatch mm;

        memset(&tally, 0, sizeof tally);
        if (only != NULL) {
                if (first != 0) {
                        skip();
                }
                first = strtoull(only, NULL, 10);
                count = 1;
        }
        for (uint64_t seed = first; seed < first + count; seed++) {
                if (run_seed(seed, env_steps(), 0, trace, only != NULL,
                             stats ? &tally : NULL, &mm)) {
                        report(&mm);
                        fail_msg("the machine disagrees with the model");
                }
        }
        if (stats) {
                print_tally(&tally);
        }
}

static void model_seeds_0_499(void **state)
{
        (void)state;
        run_range(0, SEEDS_PER_CASE);
}

static void model_seeds_500_999(void **state)
{
        (void)state;
        run_range(500, SEEDS_PER_CASE);
}

static void model_seeds_1000_1499(void **state)
{
        (void)state;
        run_range(1000, SEEDS_PER_CASE);
}

static void model_seeds_1500_1999(void **state)
{
        (void)state;
        run_range(1500, SEEDS_PER_CASE);
}

static void model_seeds_2000_2499(void **state)
{
        (void)state;
        run_range(2000, SEEDS_PER_CASE);
}

static void model_seeds_2500_2999(void **state)
{
        (void)state;
        run_range(2500, SEEDS_PER_CASE);
}

/* A checker that cannot fail proves nothing: run it against a deliberately
 * wrong model and require a mismatch within a few seeds. The mismatch counts
 * only if the correct model gets further on the same seed, so that a bug in
 * the machine cannot pass for the wrong model being caught. */
static void negative(unsigned bug, const char *name)
{
        struct mismatch mm, good;

        for (uint64_t seed = 0; seed < NEGATIVE_SEEDS; seed++) {
                if (!run_seed(seed, STEPS, bug, false, false, NULL, &mm)) {
                        continue;
                }
                if (run_seed(seed, STEPS, 0, false, false, NULL, &good) &&
                    good.step <= mm.step) {
                        continue;
                }
                print_message("# %s model caught at seed %" PRIu64
                              " step %u: %s\n",
                              name, mm.seed, mm.step, mm.what);
                return;
        }
        fail_msg("the checker did not tell the %s model from the machine",
                 name);
}

static void model_negative_forgetful(void **state)
{
        (void)state;
        negative(BUG_FORGET, "forgetful");
}

static void model_negative_dead_waiter(void **state)
{
        (void)state;
        negative(BUG_DEAD_WAITER, "dead-waiter");
}

static void model_negative_grant_twice(void **state)
{
        (void)state;
        negative(BUG_TWICE, "grant-twice");
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(model_seeds_0_499),
            cmocka_unit_test(model_seeds_500_999),
            cmocka_unit_test(model_seeds_1000_1499),
            cmocka_unit_test(model_seeds_1500_1999),
            cmocka_unit_test(model_seeds_2000_2499),
            cmocka_unit_test(model_seeds_2500_2999),
            cmocka_unit_test(model_negative_forgetful),
            cmocka_unit_test(model_negative_dead_waiter),
            cmocka_unit_test(model_negative_grant_twice),
        };

        return cmocka_run_group_tests_name("model", tests, NULL, NULL);
}
