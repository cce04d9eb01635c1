/* The commands of the reference model of the lock state machine, built
 * from the model's inner steps (model.h). */
#include "modelcmd.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <string.h>

#include "../../include/baton.h"
#include "modelquota.h"

/* The hold of (session, owner) on `l` in `mode` (-1: any), or NULL. */
static struct mhold *m_hold(struct mlock *l, uint64_t session, uint64_t owner,
                            int mode)
{
        for (unsigned i = 0; i < l->nh; i++) {
                if (l->h[i].session == session && l->h[i].owner == owner &&
                    (mode < 0 || l->h[i].mode == mode)) {
                        return &l->h[i];
                }
        }
        return NULL;
}

/* Whether (session, owner) of `c` waits for `l`. */
static bool m_waits(const struct mlock *l, const struct command *c)
{
        for (unsigned i = 0; i < l->nw; i++) {
                if (l->w[i].session == c->session &&
                    l->w[i].owner == c->owner) {
                        return true;
                }
        }
        return false;
}

/* An owner of `c` that holds `l` already (in any mode) or waits for it:
 * its refusal in `*r`, EHELD with the hold's fields or EWAITING, and
 * true. */
static bool m_again(struct mlock *l, const struct command *c,
                    struct lockfsm_result *r)
{
        const struct mhold *h = m_hold(l, c->session, c->owner, -1);

        if (h != NULL) {
                *r = m_rejected_held(h);
                return true;
        }
        if (m_waits(l, c)) {
                *r = rejected(BATON_EWAITING);
                return true;
        }
        return false;
}

/* Not granted now: queued, or a try refused busy with the first holder's
 * fields. Between holders the lock belongs to its queue; with no queue
 * even a try waits for the next entry. */
static bool m_later(const struct mlock *l, const struct command *c, bool *now,
                    struct lockfsm_result *r)
{
        const struct mhold *f;

        *now = false;
        if (c->wait_ms == COMMAND_WAIT_TRY &&
            (l->nh > 0 || l->nw > 0 || l->blocked)) {
                *r = rejected(BATON_EBUSY);
                f = m_first_holder(l);
                if (f != NULL) {
                        r->session = f->session;
                        r->owner = f->owner;
                        r->token = f->token;
                        r->count = f->count;
                }
                return true;
        }
        return false;
}

/* A lock that exists: re-entry, the other mode of an owner holding one, a
 * reader joining readers, else the queue, which a try refuses. Returns
 * true with `*r` when that answers it; else `*now` says grant or queue. */
static bool m_admit(struct model *m, struct mlock *l, uint64_t index,
                    const struct command *c, bool *now,
                    struct lockfsm_result *r)
{
        struct mhold *h = m_hold(l, c->session, c->owner, c->mode);

        *now = true;
        if (h != NULL) {
                if (h->count == UINT32_MAX) {
                        *r = rejected(BATON_EOVERFLOW);
                        return true;
                }
                h->count++;
                *r = outcome(PROTO_KIND_REENTERED, c->session, c->owner);
                r->token = h->token;
                r->count = h->count;
                return true;
        }
        if (m_waits(l, c)) {
                *r = rejected(BATON_EWAITING);
                return true;
        }
        if (m_hold(l, c->session, c->owner, -1) != NULL) {
                if (c->mode == COMMAND_MODE_EXCLUSIVE &&
                    (l->nh > 1 || (l->last_grant == index && l->entry_ended))) {
                        *r = rejected(BATON_EUPGRADE);
                        return true;
                }
                if (l->blocked) {
                        *r = rejected(BATON_EBUSY);
                        return true;
                }
                return false;
        }
        if (l->blocked && !(m->bugs & BUG_NODELAY)) {
                return m_later(l, c, now, r); /* its lock-delay */
        }
        if (c->mode == COMMAND_MODE_SHARED && l->nh > 0 && m_writers(l) == 0 &&
            (l->nw == 0 || (m->bugs & BUG_STARVE)) &&
            m_entry_allows(m, l, index, COMMAND_MODE_SHARED)) {
                return false;
        }
        return m_later(l, c, now, r);
}

/* A semaphore that exists: its number of permits must be the one asked
 * for; an owner holds it once; a grant at once if the permits are free
 * and no one waits, else the queue, which a try refuses. */
static bool m_admit_permits(const struct model *m, struct mlock *l,
                            const struct command *c, bool *now,
                            struct lockfsm_result *r)
{
        *now = true;
        if (c->limit != l->limit) {
                *r = rejected(BATON_EPERMITS);
                return true;
        }
        if (m_again(l, c, r)) {
                return true;
        }
        if (l->nw == 0 && m_permits_free(m, l, c->permits)) {
                return false;
        }
        return m_later(l, c, now, r);
}

/* An election that exists: a campaign of its leader is EHELD with the
 * leadership's fields, of a waiting candidate EWAITING, else the queue,
 * which a try refuses while anyone leads or waits. */
static bool m_admit_candidate(struct mlock *l, const struct command *c,
                              bool *now, struct lockfsm_result *r)
{
        *now = true;
        if (m_again(l, c, r)) {
                return true;
        }
        return m_later(l, c, now, r);
}

/* What an ACQUIRE of a mode or semaphore is refused, whatever the lock's
 * holders; 0 if nothing. */
static int m_refusal(const struct mlock *l, const struct command *c)
{
        bool sem = c->mode == COMMAND_MODE_SEMAPHORE;
        bool elect = c->mode == COMMAND_MODE_ELECTION;

        if (c->mode > COMMAND_MODE_ELECTION || (sem && c->limit == 0)) {
                return BATON_EUNSUPPORTED;
        }
        if (c->hold_ms > LIM_HOLD_MS) {
                return BATON_EINVAL;
        }
        if (sem && (c->permits == 0 || c->permits > c->limit)) {
                return BATON_EINVAL;
        }
        if (sem && c->limit > LIM_PERMITS) {
                return BATON_ETOOMANYPERMITS;
        }
        if (l != NULL && (l->semaphore != sem || l->election != elect)) {
                return BATON_EKIND;
        }
        return 0;
}

/* A new lock at the end of the table (the youngest), created at
 * `created`; NULL (and the model marked overflowed) when the table is
 * full. */
static struct mlock *m_new_lock(struct model *m, const char *name, uint8_t len,
                                uint64_t created)
{
        struct mlock *l;

        if (m->nl == CAP_LOCKS) {
                m->overflow = true;
                return NULL;
        }
        l = &m->l[m->nl++];
        memset(l, 0, sizeof *l);
        l->name_len = len;
        memcpy(l->name, name, len);
        l->created = created;
        return l;
}

static struct lockfsm_result m_acquire(struct model *m, uint64_t index,
                                       const struct command *c,
                                       struct evlog *log)
{
        struct mlock *l = m_lock(m, c->name, c->name_len);
        struct mwaiter *w, req;
        struct lockfsm_result r;
        bool now = true;
        struct ev *v;
        int refused = m_refusal(l, c);

        if (refused != 0) {
                return rejected(refused);
        }
        if (l != NULL && (l->semaphore  ? m_admit_permits(m, l, c, &now, &r)
                          : l->election ? m_admit_candidate(l, c, &now, &r)
                                        : m_admit(m, l, index, c, &now, &r))) {
                return r;
        }
        if (now && l != NULL && l->nh >= LIM_HOLDERS) {
                return rejected(BATON_ETOOMANYHOLDERS);
        }
        if (m_nlocks(m, c->session) >= LIM_LOCKS) {
                return rejected(BATON_ETOOMANYLOCKS);
        }
        if (m_quota_holds(m, c->session, 1, !now, &r)) {
                return r;
        }
        if (!now && l->nw == LIM_WAITERS) {
                return rejected(BATON_ETOOMANYWAITERS);
        }
        memset(&req, 0, sizeof req);
        req.session = c->session;
        req.owner = c->owner;
        req.seq = c->seq;
        req.queued_at = m->stamp;
        req.wait_ms = c->wait_ms;
        req.mode = c->mode;
        req.permits = c->permits;
        req.hold_ms = c->hold_ms;
        req.value_len = c->value_len;
        if (c->value_len > 0) {
                memcpy(req.value, c->value, c->value_len);
        }
        if (l == NULL) {
                l = m_new_lock(m, c->name, c->name_len, m->stamp);
                if (l == NULL) {
                        return rejected(BATON_ENOMEM);
                }
                l->semaphore = c->mode == COMMAND_MODE_SEMAPHORE;
                l->election = c->mode == COMMAND_MODE_ELECTION;
                l->limit = c->limit;
        }
        if (now) {
                if (l->nh == CAP_HOLDERS) {
                        m->overflow = true;
                        return rejected(BATON_ENOMEM);
                }
                m_grant(m, l, index, COMMAND_ACQUIRE, &req, log);
                r = outcome(PROTO_KIND_GRANTED, c->session, c->owner);
                r.token = index;
                r.count = 1;
                return r;
        }
        w = &l->w[l->nw++];
        *w = req;
        v = m_ev(log, LOCKFSM_EV_QUEUE, index, COMMAND_ACQUIRE);
        v->session = c->session;
        v->seq = c->seq;
        v->owner = c->owner;
        v->wait_ms = c->wait_ms;
        v->mode = c->mode;
        v->permits = c->permits;
        v->value_len = c->value_len;
        if (c->value_len > 0) {
                memcpy(v->value, c->value, c->value_len);
        }
        m_ev_name(v, l);
        r = outcome(PROTO_KIND_QUEUED, c->session, c->owner);
        r.count = l->nw;
        return r;
}

/* One name of a MULTI, and how it can be had (docs/fsm.md, "Multi-locks"). */
struct mask {
        uint8_t mode;
        uint8_t len;
        const char *name;
        int how; /* 0 now, 1 from the next entry on, 2 busy */
};

/* The refusal of a MULTI's names before any lock is looked at: too many,
 * a mode that is not a lock's, a name twice; 0 if none. */
static int m_multi_names(const struct command *c, struct mask *a, unsigned *n)
{
        size_t at = 0;

        *n = 0;
        while (*n <= LIM_NAMES && command_list_next(c, &at, &a[*n].mode,
                                                    &a[*n].name, &a[*n].len)) {
                (*n)++;
        }
        if (c->n_names > LIM_NAMES) {
                return BATON_ETOOMANYNAMES;
        }
        for (unsigned i = 0; i < *n; i++) {
                if (a[i].mode > COMMAND_MODE_SHARED) {
                        return BATON_EUNSUPPORTED;
                }
                for (unsigned j = 0; j < i; j++) {
                        if (a[j].len == a[i].len &&
                            memcmp(a[j].name, a[i].name, a[i].len) == 0) {
                                return BATON_EINVAL;
                        }
                }
        }
        return 0;
}

/* How name `a` can be had by the MULTI `c`, or its refusal in `*r`. */
static bool m_multi_how(struct model *m, uint64_t index,
                        const struct command *c, struct mask *a,
                        struct lockfsm_result *r)
{
        struct mlock *l = m_lock(m, a->name, a->len);

        a->how = 0;
        if (l == NULL) {
                return false;
        }
        if (l->semaphore || l->election) {
                *r = rejected(BATON_EKIND);
                return true;
        }
        if (m_again(l, c, r)) {
                return true;
        }
        if (l->nh == 0 && l->nw == 0 && !l->blocked) {
                a->how = 1;
        } else if (a->mode == COMMAND_MODE_SHARED && l->nh > 0 &&
                   m_writers(l) == 0 && l->nw == 0 && !l->blocked &&
                   m_entry_allows(m, l, index, COMMAND_MODE_SHARED)) {
                if (l->nh >= LIM_HOLDERS) {
                        *r = rejected(BATON_ETOOMANYHOLDERS);
                        return true;
                }
        } else {
                a->how = 2;
        }
        return false;
}

/* MULTI: every name granted now with this entry's index, or a try refused
 * busy, or a waiter on every name; the locks it creates take a stamp
 * each. BUG_PARTIAL takes the names it can at once. */
static struct lockfsm_result m_multi(struct model *m, uint64_t index,
                                     const struct command *c, struct evlog *log)
{
        struct mask a[LIM_NAMES + 1];
        struct lockfsm_result r;
        uint64_t base = m->stamp;
        unsigned n, created = 0;
        bool now = true;
        int rv = m_multi_names(c, a, &n);

        if (rv != 0) {
                return rejected(rv);
        }
        for (unsigned i = 0; i < n; i++) {
                if (m_multi_how(m, index, c, &a[i], &r)) {
                        return r;
                }
                now &= a[i].how == 0;
        }
        if (m_nlocks(m, c->session) + n > LIM_LOCKS) {
                return rejected(BATON_ETOOMANYLOCKS);
        }
        for (unsigned i = 0; i < n && !now; i++) {
                struct mlock *l = m_lock(m, a[i].name, a[i].len);
                if (a[i].how == 2 && c->wait_ms == COMMAND_WAIT_TRY) {
                        r = rejected(BATON_EBUSY);
                        if (l->nh > 0) {
                                m_holder_fields(&r, l, m_first_holder(l));
                                r.waiters = 0;
                        }
                        return r;
                }
                if (l != NULL && l->nw == LIM_WAITERS) {
                        return rejected(BATON_ETOOMANYWAITERS);
                }
        }
        /* Each name is a grant or a wait of its own. */
        if (m_quota_holds(m, c->session, n, now ? 0 : n, &r)) {
                return r;
        }
        for (unsigned i = 0; i < n; i++) {
                struct mlock *l = m_lock(m, a[i].name, a[i].len);
                struct mwaiter req = {.session = c->session,
                                      .owner = c->owner,
                                      .seq = c->seq,
                                      .queued_at = base,
                                      .wait_ms = c->wait_ms,
                                      .mode = a[i].mode,
                                      .multi = true};
                struct ev *v;

                if (l == NULL) {
                        l = m_new_lock(m, a[i].name, a[i].len,
                                       base + created++);
                        if (l == NULL) {
                                return rejected(BATON_ENOMEM);
                        }
                        m->stamp = l->created;
                }
                if (now || ((m->bugs & BUG_PARTIAL) && a[i].how == 0)) {
                        m_grant(m, l, index, COMMAND_MULTI, &req, log);
                        continue;
                }
                l->w[l->nw++] = req;
                v = m_ev(log, LOCKFSM_EV_QUEUE, index, COMMAND_MULTI);
                v->session = c->session;
                v->seq = c->seq;
                v->owner = c->owner;
                v->wait_ms = c->wait_ms;
                v->mode = a[i].mode;
                m_ev_name(v, l);
        }
        r = outcome(now ? PROTO_KIND_GRANTED : PROTO_KIND_QUEUED, c->session,
                    c->owner);
        r.token = now ? index : 0;
        r.count = now ? 1 : m_lock(m, a[0].name, a[0].len)->nw;
        return r;
}

/* The grant of (session, owner) of `l` that `c`'s token names, the write
 * grant first when both of an owner's share it (how RELEASE and SET_VALUE
 * name one), or NULL; `*held`: whether the owner holds `l` at all. */
static struct mhold *m_grant_named(struct mlock *l, const struct command *c,
                                   bool *held)
{
        struct mhold *h = NULL;

        *held = false;
        for (unsigned i = 0; l != NULL && i < l->nh; i++) {
                struct mhold *o = &l->h[i];
                if (o->session != c->session || o->owner != c->owner) {
                        continue;
                }
                *held = true;
                if (o->token == c->token &&
                    (h == NULL || o->mode == COMMAND_MODE_EXCLUSIVE)) {
                        h = o;
                }
        }
        return h;
}

static struct lockfsm_result m_release(struct model *m, uint64_t index,
                                       const struct command *c,
                                       struct evlog *log)
{
        struct mlock *l = m_lock(m, c->name, c->name_len);
        struct lockfsm_result r;
        bool held;
        struct mhold *h = m_grant_named(l, c, &held);

        if (!held) {
                return rejected(BATON_ENOTHOLDER);
        }
        if (h == NULL) {
                return rejected(BATON_ESTALE);
        }
        h->count--;
        r = outcome(PROTO_KIND_RELEASED, c->session, c->owner);
        r.token = h->token;
        r.count = h->count;
        if (h->count == 0) {
                if (m->bugs & BUG_QUOTA_LEAK) {
                        m_session(m, c->session)->leaked++;
                }
                m_end_hold(m, l, (unsigned)(h - l->h), index, COMMAND_RELEASE,
                           log);
        }
        return r;
}

/* PROCLAIM: the leader that the token names advertises a new value;
 * SET_VALUE: the holder of any grant that the token names carries a new
 * value (docs/fsm.md, "Values"). */
static struct lockfsm_result m_proclaim(struct model *m, uint64_t index,
                                        const struct command *c,
                                        struct evlog *log)
{
        struct mlock *l = m_lock(m, c->name, c->name_len);
        struct lockfsm_result r;
        struct mhold *h;
        struct ev *v;
        bool held;

        if (l != NULL && !l->election && c->type == COMMAND_PROCLAIM) {
                return rejected(BATON_EKIND);
        }
        h = m_grant_named(l, c, &held);
        if (!held) {
                return rejected(BATON_ENOTHOLDER);
        }
        if (h == NULL && (m->bugs & BUG_PROCLAIM)) {
                /* The bug: a stale token's PROCLAIM takes all the same. */
                h = m_hold(l, c->session, c->owner, -1);
        }
        if (h == NULL) {
                return rejected(BATON_ESTALE);
        }
        h->value_len = c->value_len;
        if (c->value_len > 0) {
                memcpy(h->value, c->value, c->value_len);
        }
        v = m_ev(log, LOCKFSM_EV_PROCLAIM, index, c->type);
        v->session = h->session;
        v->seq = h->seq;
        v->owner = h->owner;
        v->token = h->token;
        v->mode = h->mode;
        v->permits = h->permits; /* a semaphore holder's */
        v->value_len = h->value_len;
        memcpy(v->value, h->value, h->value_len);
        m_ev_name(v, l);
        r = outcome(PROTO_KIND_PROCLAIMED, c->session, c->owner);
        r.token = h->token;
        r.count = h->count;
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
                if (l->w[i].multi) {
                        gone.session = c->session;
                        gone.owner = owner;
                        m_set_out(m, c->session, c->target, &gone);
                        m_drop_group(m, c->session, c->target, index, c->type,
                                     why, log);
                        return outcome(PROTO_KIND_CANCELLED, c->session, owner);
                }
                v = m_ev(log, LOCKFSM_EV_UNQUEUE, index, c->type);
                v->session = c->session;
                v->seq = c->target;
                v->owner = l->w[i].owner;
                v->mode = l->w[i].mode;
                v->permits = l->w[i].permits;
                v->status = why;
                m_ev_name(v, l);
                m_remove_waiter(l, i);
                gone.session = c->session;
                gone.owner = owner;
                m_set_out(m, c->session, c->target, &gone);
                m_settle(m, l, index, c->type, log);
                return outcome(PROTO_KIND_CANCELLED, c->session, owner);
        }
        return rejected(BATON_ENOTWAITING);
}

/* EXTEND: the grant the token names restarts its hold time, fenced as a
 * release (docs/fsm.md, "Hold times"). */
static struct lockfsm_result m_extend(struct model *m, uint64_t index,
                                      const struct command *c,
                                      struct evlog *log)
{
        struct mlock *l = m_lock(m, c->name, c->name_len);
        struct lockfsm_result r;
        struct mhold *h;
        struct ev *v;
        bool held;

        h = m_grant_named(l, c, &held);
        if (!held) {
                return rejected(BATON_ENOTHOLDER);
        }
        if (h == NULL) {
                return rejected(BATON_ESTALE);
        }
        if (h->hold_ms == 0 || c->hold_ms > LIM_HOLD_MS) {
                return rejected(BATON_EINVAL);
        }
        h->hold_ms = c->hold_ms;
        h->armed = index;
        v = m_ev(log, LOCKFSM_EV_EXTEND, index, COMMAND_EXTEND);
        v->session = h->session;
        v->seq = h->seq;
        v->owner = h->owner;
        v->token = h->token;
        v->mode = h->mode;
        v->permits = h->permits;
        m_ev_name(v, l);
        r = outcome(PROTO_KIND_UPDATED, c->session, c->owner);
        r.token = h->token;
        r.count = h->count;
        return r;
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
                        r = outcome(PROTO_KIND_CLOSED, c->session, 0);
                        r.duplicate = true;
                        return r;
                }
                return m_not_live(m, c->session);
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
                m_end(m, c->session, BATON_ECLOSED, index, COMMAND_CLOSE, 0,
                      log);
                return outcome(PROTO_KIND_CLOSED, c->session, 0);
        case COMMAND_ACQUIRE:
                r = m_acquire(m, index, c, log);
                break;
        case COMMAND_MULTI:
                r = m_multi(m, index, c, log);
                break;
        case COMMAND_RELEASE:
                r = m_release(m, index, c, log);
                break;
        case COMMAND_PROCLAIM:
        case COMMAND_SET_VALUE:
                r = m_proclaim(m, index, c, log);
                break;
        case COMMAND_EXTEND:
                r = m_extend(m, index, c, log);
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

/* The first grant of `l` that (session, token) names: its index, or -1. */
static int m_grant_of(const struct mlock *l, uint64_t session, uint64_t token)
{
        for (unsigned i = 0; i < l->nh; i++) {
                if (l->h[i].session == session && l->h[i].token == token) {
                        return (int)i;
                }
        }
        return -1;
}

/* REVOKE_LOCK: the session's grants of the lock with the token end as
 * lost ones (the longer of the entry's and the session's lock-delay),
 * each counted in the session; its session lives on. */
static struct lockfsm_result m_revoke_lock(struct model *m, uint64_t index,
                                           const struct command *c,
                                           struct evlog *log)
{
        struct mlock *l = m_lock(m, c->name, c->name_len);
        struct msess *s = m_session(m, c->session);
        struct lockfsm_result r = rejected(BATON_ENOTHOLDER);
        unsigned n = 0;
        int i;

        for (unsigned k = 0; l != NULL && c->token != 0 && k < l->nh; k++) {
                n += l->h[k].session == c->session && l->h[k].token == c->token;
        }
        if (s == NULL || n == 0) {
                return r;
        }
        r = outcome(PROTO_KIND_RELEASED, c->session, 0);
        r.token = c->token;
        while (n-- > 0 && (l = m_lock(m, c->name, c->name_len)) != NULL &&
               (i = m_grant_of(l, c->session, c->token)) >= 0) {
                uint32_t delay =
                    c->delay_ms > s->delay ? c->delay_ms : s->delay;
                r.owner = l->h[i].owner;
                s->revoked++;
                if (delay > 0 && !l->semaphore && !l->election && !l->blocked) {
                        struct ev *v = m_ev(log, LOCKFSM_EV_BLOCK, index,
                                            COMMAND_REVOKE_LOCK);
                        l->blocked = true;
                        l->limit = delay;
                        v->seq = l->created;
                        v->wait_ms = delay;
                        m_ev_name(v, l);
                }
                m_end_hold(m, l, (unsigned)i, index, COMMAND_REVOKE_LOCK, log);
        }
        return r;
}

/* EXPIRE_HOLD: the grant the ACQUIRE of seq `target` made ends as a
 * revoked one, if its hold time still dates from entry `token`. */
static struct lockfsm_result m_expire_hold(struct model *m, uint64_t index,
                                           const struct command *c,
                                           struct evlog *log)
{
        struct mlock *l = m_lock(m, c->name, c->name_len);
        struct msess *s = m_session(m, c->session);
        struct lockfsm_result r;
        uint32_t delay;
        int i = -1;

        for (unsigned k = 0; l != NULL && s != NULL && k < l->nh; k++) {
                if (l->h[k].session == c->session && l->h[k].seq == c->target) {
                        i = (int)k;
                        break;
                }
        }
        if (i < 0 || l->h[i].hold_ms == 0 || l->h[i].armed != c->token) {
                return rejected(BATON_ENOTHOLDER);
        }
        r = outcome(PROTO_KIND_RELEASED, c->session, l->h[i].owner);
        r.token = l->h[i].token;
        s->revoked++;
        delay = c->delay_ms > s->delay ? c->delay_ms : s->delay;
        if (delay > 0 && !l->semaphore && !l->election && !l->blocked) {
                struct ev *v =
                    m_ev(log, LOCKFSM_EV_BLOCK, index, COMMAND_EXPIRE_HOLD);
                l->blocked = true;
                l->limit = delay;
                v->seq = l->created;
                v->wait_ms = delay;
                m_ev_name(v, l);
        }
        m_end_hold(m, l, (unsigned)i, index, COMMAND_EXPIRE_HOLD, log);
        return r;
}

/* UNBLOCK: the lock-delay of that instance of the lock ends. */
static struct lockfsm_result m_unblock(struct model *m, uint64_t index,
                                       const struct command *c,
                                       struct evlog *log)
{
        struct mlock *l = m_lock(m, c->name, c->name_len);
        struct lockfsm_result r;
        struct ev *v;

        if (l == NULL || !l->blocked || l->created != c->target) {
                return rejected(BATON_ENOTFOUND);
        }
        l->blocked = false;
        l->limit = 0;
        v = m_ev(log, LOCKFSM_EV_UNBLOCK, index, COMMAND_UNBLOCK);
        v->seq = l->created;
        m_ev_name(v, l);
        r = outcome(PROTO_KIND_FREE, 0, 0);
        r.waiters = l->nw;
        m_settle(m, l, index, COMMAND_UNBLOCK, log);
        return r;
}

struct lockfsm_result m_query(struct model *m, const char *name, size_t len)
{
        struct mlock *l = m_lock(m, name, len);
        struct lockfsm_result r;

        if (l == NULL || l->nh == 0) {
                r = outcome(PROTO_KIND_FREE, 0, 0);
                r.waiters = l != NULL ? l->nw : 0;
                return r;
        }
        r = outcome(PROTO_KIND_HOLDER, 0, 0);
        m_holder_fields(&r, l, m_first_holder(l));
        return r;
}

struct lockfsm_result m_apply(struct model *m, uint64_t index,
                              const struct command *c, struct evlog *log)
{
        struct mlock *l;
        struct lockfsm_result r;

        m_stamp(m, index);
        switch (c->type) {
        case COMMAND_OPEN:
                return m_open(m, index, c, log);
        case COMMAND_EXPIRE:
        case COMMAND_REVOKE: /* an operator's expiry */
                if (m_session(m, c->session) == NULL) {
                        return m_not_live(m, c->session);
                }
                m_end(m, c->session, BATON_EEXPIRED, index, c->type,
                      c->delay_ms, log);
                return outcome(PROTO_KIND_EXPIRED, c->session, 0);
        case COMMAND_TIMEOUT:
                if (m_session(m, c->session) == NULL) {
                        return m_not_live(m, c->session);
                }
                return m_unqueue(m, index, c, BATON_ETIMEDOUT, log);
        case COMMAND_QUERY:
                return m_query(m, c->name, c->name_len);
        case COMMAND_UNBLOCK:
                return m_unblock(m, index, c, log);
        case COMMAND_REVOKE_LOCK:
                return m_revoke_lock(m, index, c, log);
        case COMMAND_EXPIRE_HOLD:
                return m_expire_hold(m, index, c, log);
        case COMMAND_MEMBER:
        case COMMAND_ACL:
        case COMMAND_DIGEST:
                /* Not the lock state's commands: each takes a stamp and
                 * changes nothing else; an ACL entry goes to the access
                 * list after it (m_quota_entry()). */
                return rejected(BATON_EMALFORMED);
        case COMMAND_CLOCK:
                if (c->time_ms > m->clock_ms) {
                        m->clock_ms = c->time_ms;
                }
                return outcome(PROTO_KIND_UPDATED, 0, 0);
        case COMMAND_CHECK:
                l = m_lock(m, c->name, c->name_len);
                for (unsigned i = 0; l != NULL && i < l->nh; i++) {
                        if (l->h[i].token == c->token) {
                                r = outcome(PROTO_KIND_CURRENT, 0, 0);
                                m_holder_fields(&r, l, &l->h[i]);
                                return r;
                        }
                }
                r = rejected(BATON_ESTALE);
                if (l != NULL) {
                        m_holder_fields(&r, l, m_first_holder(l));
                }
                return r;
        default:
                return m_client(m, index, c, log);
        }
}
