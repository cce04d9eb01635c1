/* Multi-locks in the lock state machine: several names taken all at once
 * by one entry, or waited for as one waiter. */
#include "multi.h"

#include <string.h>

#include "../../include/baton/errors.h"
#include "../proto/proto.h"
#include "grant.h"
#include "quota.h"

int multi_prepare(struct lockfsm *f, const struct command *c,
                  struct multi_prep *p)
{
        const char *name;
        uint8_t mode, len;
        size_t at = 0;
        unsigned missing = 0;

        memset(p, 0, sizeof *p);
        while (p->n < COMMAND_MULTI_MAX &&
               command_list_next(c, &at, &mode, &name, &len)) {
                unsigned i = p->n++;
                p->hold[i] = state_hold_alloc(f, 0, false);
                if (p->hold[i] == NULL) {
                        goto fail;
                }
                if (state_lock(f, name, len) == NULL) {
                        p->lock[i] = state_lock_alloc(f, name, len);
                        if (p->lock[i] == NULL) {
                                goto fail;
                        }
                        missing++;
                }
        }
        if (state_lock_reserve(f, missing) == 0) {
                return 0;
        }
fail:
        multi_prep_free(f, p);
        return BATON_ENOMEM;
}

void multi_prep_free(struct lockfsm *f, struct multi_prep *p)
{
        unsigned i;

        for (i = 0; i < p->n; i++) {
                state_hold_free(f, p->hold[i]);
                state_lock_free(f, p->lock[i]);
        }
        p->n = 0;
}

/* How one name of a MULTI can be had. */
enum how {
        HOW_NOW,   /* granted at once, were it asked alone */
        HOW_LATER, /* free, but only from the next entry on */
        HOW_BUSY,  /* held, awaited or in its lock-delay */
};

/* One name of a MULTI, with its lock (NULL: none yet). */
struct ask {
        uint8_t mode;
        uint8_t len;
        const char *name;
        struct lock *lock;
        enum how how;
};

/* Refusals that do not depend on the locks: too many names, a mode that
 * is not a lock's, a name twice. */
static int check_asks(const struct lockfsm *f, const struct ask *a, unsigned n)
{
        unsigned i, j;

        if (n > f->limits.max_names_per_acquire) {
                return BATON_ETOOMANYNAMES;
        }
        for (i = 0; i < n; i++) {
                if (a[i].mode > COMMAND_MODE_SHARED) {
                        return BATON_EUNSUPPORTED;
                }
                for (j = 0; j < i; j++) {
                        if (a[j].len == a[i].len &&
                            memcmp(a[j].name, a[i].name, a[i].len) == 0) {
                                return BATON_EINVAL;
                        }
                }
        }
        return 0;
}

/* How name `a` of a MULTI of owner `owner` in session `s` can be had; or
 * a refusal in `res` (a semaphore's name, one the owner holds or awaits
 * already, a reader too many), returned as its status. */
static int classify(const struct step *st, const struct session *s,
                    uint64_t owner, struct ask *a, struct lockfsm_result *res)
{
        const struct lock *l = a->lock;
        const struct hold *held;

        a->how = HOW_NOW;
        if (l == NULL) {
                return 0;
        }
        if (l->mode != COMMAND_MODE_EXCLUSIVE) {
                return BATON_EKIND; /* a semaphore, an election */
        }
        held = grant_find_holder(l, s->id, owner, GRANT_ANY_MODE);
        if (held != NULL) {
                /* With the grant's fields, as a semaphore's EHELD. */
                step_describe(res, PROTO_KIND_REJECTED, held);
                res->status = BATON_EHELD;
                return BATON_EHELD;
        }
        if (grant_find_wait(s, l, false, owner) != NULL) {
                return BATON_EWAITING;
        }
        if (l->n_holders == 0 && l->n_waiters == 0 && !l->blocked) {
                a->how = HOW_LATER; /* freed by the entry that granted it */
        } else if (a->mode == COMMAND_MODE_SHARED && l->n_holders > 0 &&
                   l->n_writers == 0 && l->n_waiters == 0 && !l->blocked &&
                   grant_entry_allows(l, COMMAND_MODE_SHARED)) {
                if (l->n_holders >= st->f->limits.max_holders_per_lock) {
                        return BATON_ETOOMANYHOLDERS;
                }
        } else {
                a->how = HOW_BUSY;
        }
        return 0;
}

/* Attach name `i` of the MULTI as a grant (`now`) or a waiter, creating
 * its lock from `p` when it has none: the locks a MULTI creates take the
 * stamps from its own on, one each, so that lock ages stay distinct. */
static void attach(const struct step *st, struct session *s,
                   struct multi_prep *p, unsigned i, const struct ask *a,
                   bool now)
{
        const struct command *c = st->c;
        struct hold *h = p->hold[i];
        struct lock *l = a->lock;

        p->hold[i] = NULL;
        if (l == NULL) {
                l = p->lock[i];
                p->lock[i] = NULL;
                l->created =
                    st->f->stamp < st->stamp ? st->stamp : st->f->stamp + 1;
                st->f->stamp = l->created;
                l->mode = COMMAND_MODE_EXCLUSIVE; /* a read/write lock */
                state_lock_link(st->f, l);
        }
        hold_set_session(h, s);
        h->owner = c->owner;
        h->seq = c->seq;
        h->mode = a->mode;
        hold_set_lock(h, l);
        if (now) {
                grant_new(st, h);
                return;
        }
        h->multi = true;
        h->queued_at = st->stamp;
        h->wait_ms = c->wait_ms;
        state_wait_attach(st->f, h);
        step_emit(st, LOCKFSM_EV_QUEUE, h, 0);
}

/* What the MULTI may do after its names are classified: 0 with `*now`
 * (grant every name) or not (queue on every name), or a refusal. */
static int decide(const struct step *st, const struct session *s,
                  const struct ask *a, unsigned n, bool *now,
                  struct lockfsm_result *res)
{
        const struct lockfsm_limits *lim = &st->f->limits;
        unsigned i;

        *now = true;
        for (i = 0; i < n; i++) {
                *now &= a[i].how == HOW_NOW;
        }
        if (s->n_holds + n > lim->max_locks_per_session) {
                return BATON_ETOOMANYLOCKS;
        }
        for (i = 0; i < n && !*now; i++) {
                const struct lock *l = a[i].lock;
                if (a[i].how == HOW_BUSY &&
                    st->c->wait_ms == COMMAND_WAIT_TRY) {
                        if (l->n_holders == 0) {
                                return BATON_EBUSY;
                        }
                        step_describe(res, PROTO_KIND_REJECTED,
                                      state_first_holder(l));
                        res->status = BATON_EBUSY;
                        return BATON_EBUSY;
                }
                if (l != NULL && l->n_waiters >= lim->max_waiters_per_lock) {
                        return BATON_ETOOMANYWAITERS;
                }
        }
        /* Every name is a hold of its own, granted or awaited. */
        return quota_check_holds(st->f, s, n, *now ? 0 : n, res);
}

void multi_acquire(const struct step *st, struct session *s,
                   struct multi_prep *p, struct lockfsm_result *res)
{
        const struct command *c = st->c;
        struct ask a[COMMAND_MULTI_MAX];
        unsigned i, n = 0;
        struct hold *first;
        size_t at = 0;
        bool now;
        int rv;

        while (n < COMMAND_MULTI_MAX &&
               command_list_next(c, &at, &a[n].mode, &a[n].name, &a[n].len)) {
                a[n].lock = state_lock(st->f, a[n].name, a[n].len);
                n++;
        }
        step_reject(res, 0);
        rv = check_asks(st->f, a, n);
        for (i = 0; i < n && rv == 0; i++) {
                rv = classify(st, s, c->owner, &a[i], res);
        }
        if (rv == 0) {
                rv = decide(st, s, a, n, &now, res);
        }
        if (rv != 0) {
                if (res->status != rv) {
                        step_reject(res, rv);
                }
                return;
        }
        first = p->hold[0];
        for (i = 0; i < n; i++) {
                attach(st, s, p, i, &a[i], now);
        }
        /* Answered as an ACQUIRE of the first name. */
        step_describe(res, now ? PROTO_KIND_GRANTED : PROTO_KIND_QUEUED, first);
        if (!now) {
                res->count = hold_lock(first)->n_waiters;
        }
}

/* The wait after `h` in its session's list if it is a name of the same
 * multi-lock, else NULL; the same before it. */
static struct hold *sibling(const struct hold *h, bool next)
{
        const struct rqueue *end = &hold_session(h)->waits;
        struct rqueue *q = next ? rqueue_next(&h->session_link)
                                : rqueue_prev(&h->session_link);
        struct hold *o;

        if (q == end) {
                return NULL;
        }
        o = RQUEUE_DATA(q, struct hold, session_link);
        return o->multi && o->seq == h->seq ? o : NULL;
}

/* The names of the multi-lock `w` is a name of, in their session's order
 * (lock age): their number, at most COMMAND_MULTI_MAX. */
static unsigned members(const struct hold *w, struct hold **out)
{
        struct hold *h = (struct hold *)w, *prev;
        unsigned n = 0;

        while ((prev = sibling(h, false)) != NULL) {
                h = prev;
        }
        for (; h != NULL && n < COMMAND_MULTI_MAX; h = sibling(h, true)) {
                out[n++] = h;
        }
        return n;
}

unsigned multi_locks(const struct hold *w, struct lock **out)
{
        struct hold *m[COMMAND_MULTI_MAX];
        unsigned i, n = members(w, m);

        for (i = 0; i < n; i++) {
                out[i] = hold_lock(m[i]);
        }
        return n;
}

bool multi_ready(const struct lockfsm *f, const struct hold *w, bool entry)
{
        struct hold *m[COMMAND_MULTI_MAX];
        unsigned i, n = members(w, m);

        for (i = 0; i < n; i++) {
                if (!grant_fits(f, m[i]) ||
                    (entry &&
                     !grant_entry_allows(hold_lock(m[i]), m[i]->mode))) {
                        return false;
                }
        }
        return true;
}

void multi_grant(const struct step *st, struct hold *w)
{
        struct hold *m[COMMAND_MULTI_MAX];
        struct lock *trigger = hold_lock(w);
        unsigned i, n = members(w, m);

        for (i = 0; i < n; i++) {
                grant_take(st, m[i]);
        }
        /* Readers queued behind a name on another lock join now; another
         * multi-lock at that lock's head waits for the entry's end, which
         * defers it, so that one grant never recurses into the next. */
        for (i = 0; i < n; i++) {
                if (hold_lock(m[i]) != trigger) {
                        grant_admit(st, hold_lock(m[i]), false);
                }
        }
}

void multi_drop(const struct step *st, struct hold *w, int status)
{
        struct hold *m[COMMAND_MULTI_MAX];
        struct lock *locks[COMMAND_MULTI_MAX];
        unsigned i, n = members(w, m);

        for (i = 0; i < n; i++) {
                locks[i] = hold_lock(m[i]);
                state_hold_detach(st->f, m[i]);
                step_emit(st, LOCKFSM_EV_UNQUEUE, m[i], status);
                state_hold_free(st->f, m[i]);
        }
        for (i = 0; i < n; i++) {
                grant_settle(st, locks[i]);
        }
}

const char *multi_check(const struct session *s)
{
        const struct hold *prev = NULL;
        struct rqueue *q;

        RQUEUE_FOREACH(q, &s->waits)
        {
                const struct hold *h =
                    RQUEUE_DATA(q, struct hold, session_link);
                /* Only a multi-lock's names share an ACQUIRE's stamp. */
                if (prev != NULL && prev->queued_at == h->queued_at &&
                    (!prev->multi || !h->multi || prev->seq != h->seq ||
                     prev->owner != h->owner || prev->wait_ms != h->wait_ms)) {
                        return "a multi-lock's waits disagree, or a wait "
                               "shares another's stamp";
                }
                if (h->multi && h->mode > COMMAND_MODE_SHARED) {
                        return "a multi-lock waits for a semaphore";
                }
                prev = h;
        }
        return NULL;
}
