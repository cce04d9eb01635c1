/* The reference model of the lock state machine for test_model. */
#include "model.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "../../include/baton.h"
#include "modelquota.h"

void on_event(void *data, const struct lockfsm_event *e)
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
        v->mode = e->mode;
        v->permits = e->permits;
        v->value_len = e->value_len;
        if (e->value_len > 0) {
                memcpy(v->value, e->value, e->value_len);
        }
        if (e->name != NULL) {
                v->name_len = e->name_len;
                memcpy(v->name, e->name, e->name_len);
        }
        if (e->result != NULL) {
                v->has_result = true;
                v->result = *e->result;
        }
}

/* Every field docs/fsm.md does not name for an outcome is zero. */
struct lockfsm_result rejected(int status)
{
        struct lockfsm_result r;

        memset(&r, 0, sizeof r);
        r.status = status;
        r.kind = PROTO_KIND_REJECTED;
        return r;
}

struct lockfsm_result outcome(uint8_t kind, uint64_t session, uint64_t owner)
{
        struct lockfsm_result r;

        memset(&r, 0, sizeof r);
        r.kind = kind;
        r.session = session;
        r.owner = owner;
        return r;
}

/* A writer: a lock's, or an election's candidate or leader. */
static bool m_writer(uint8_t mode)
{
        return mode == COMMAND_MODE_EXCLUSIVE || mode == COMMAND_MODE_ELECTION;
}

const struct mhold *m_first_holder(const struct mlock *l)
{
        for (unsigned i = 0; i < l->nh; i++) {
                if (m_writer(l->h[i].mode)) {
                        return &l->h[i];
                }
        }
        return l->nh > 0 ? &l->h[0] : NULL;
}

/* What HOLDER, CURRENT and a CHECK's ESTALE say about a lock: `h`'s grant
 * (none: zeros) and the count of waiters. */
void m_holder_fields(struct lockfsm_result *r, const struct mlock *l,
                     const struct mhold *h)
{
        if (h != NULL) {
                r->session = h->session;
                r->owner = h->owner;
                r->token = h->token;
                r->count = h->count;
        }
        r->waiters = l->nw;
}

/* An acquire or campaign by the holder of `h` itself: EHELD with the
 * hold's fields, so that the caller can tell it is already its own. */
struct lockfsm_result m_rejected_held(const struct mhold *h)
{
        struct lockfsm_result r = rejected(BATON_EHELD);

        r.session = h->session;
        r.owner = h->owner;
        r.token = h->token;
        r.count = h->count;
        return r;
}

struct msess *m_session(struct model *m, uint64_t id)
{
        for (unsigned i = 0; i < m->ns; i++) {
                if (m->s[i].id == id) {
                        return &m->s[i];
                }
        }
        return NULL;
}

const struct mtomb *m_tomb(const struct model *m, uint64_t id)
{
        for (unsigned i = 0; i < m->nt; i++) {
                if (m->t[i].session == id) {
                        return &m->t[i];
                }
        }
        return NULL;
}

/* The answer for a session that is not live: its tombstone or none. */
struct lockfsm_result m_not_live(const struct model *m, uint64_t id)
{
        const struct mtomb *t = m_tomb(m, id);

        return rejected(t != NULL ? t->status : BATON_ENOSESSION);
}

struct mlock *m_lock(struct model *m, const char *name, size_t len)
{
        for (unsigned i = 0; i < m->nl; i++) {
                if (m->l[i].name_len == len &&
                    memcmp(m->l[i].name, name, len) == 0) {
                        return &m->l[i];
                }
        }
        return NULL;
}

/* Locks a session holds plus locks it waits for: what the limit counts. */
unsigned m_nlocks(const struct model *m, uint64_t sid)
{
        unsigned n = 0;

        for (unsigned i = 0; i < m->nl; i++) {
                for (unsigned j = 0; j < m->l[i].nh; j++) {
                        n += m->l[i].h[j].session == sid;
                }
                for (unsigned j = 0; j < m->l[i].nw; j++) {
                        n += m->l[i].w[j].session == sid;
                }
        }
        return n;
}

struct mout *m_out(struct msess *s, uint64_t seq)
{
        for (unsigned i = 0; i < s->nout; i++) {
                if (s->out[i].seq == seq) {
                        return &s->out[i];
                }
        }
        return NULL;
}

void m_remember(struct msess *s, uint64_t seq, const struct lockfsm_result *r)
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
void m_set_out(struct model *m, uint64_t sid, uint64_t seq,
               const struct lockfsm_result *r)
{
        struct msess *s = m_session(m, sid);
        struct mout *o = s != NULL ? m_out(s, seq) : NULL;

        if (o != NULL) {
                o->res = *r;
        }
}

struct ev *m_ev(struct evlog *log, uint8_t type, uint64_t index, uint8_t cause)
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

void m_ev_name(struct ev *v, const struct mlock *l)
{
        v->name_len = l->name_len;
        memcpy(v->name, l->name, l->name_len);
}

void m_remove_waiter(struct mlock *l, unsigned i)
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

unsigned m_writers(const struct mlock *l)
{
        unsigned n = 0;

        for (unsigned i = 0; i < l->nh; i++) {
                n += m_writer(l->h[i].mode);
        }
        return n;
}

/* Whether `k` more permits of semaphore `l` are free. */
bool m_permits_free(const struct model *m, const struct mlock *l, uint32_t k)
{
        uint32_t used = 0;

        for (unsigned i = 0; i < l->nh; i++) {
                used += l->h[i].permits;
        }
        return used + k <= l->limit + ((m->bugs & BUG_OVERGRANT) ? 1 : 0);
}

/* Whether the head of the queue fits the lock: a writer when no one
 * holds it, a reader when no writer does, a semaphore's waiter when its
 * permits are free. */
static bool m_fits(const struct model *m, const struct mlock *l)
{
        if (l->nw == 0 || (l->blocked && !(m->bugs & BUG_NODELAY)) ||
            l->nh >= LIM_HOLDERS) {
                return false;
        }
        if (l->semaphore) {
                return m_permits_free(m, l, l->w[0].permits);
        }
        return l->w[0].mode == COMMAND_MODE_SHARED ? m_writers(l) == 0
                                                   : l->nh == 0;
}

/* Whether this entry may still admit `mode`: a writer only to a lock it
 * has not granted yet, a reader or a semaphore's waiter to one it granted
 * to no writer. */
bool m_entry_allows(const struct model *m, const struct mlock *l,
                    uint64_t index, uint8_t mode)
{
        return l->last_grant != index || (m->bugs & BUG_TWICE) ||
               (!m_writer(mode) && !l->entry_writer);
}

/* The locks (indices into m->l, so in lock age order) where the
 * multi-lock of (session, seq) waits: their number. */
static unsigned m_group(const struct model *m, uint64_t session, uint64_t seq,
                        unsigned *li)
{
        unsigned n = 0;

        for (unsigned i = 0; i < m->nl; i++) {
                for (unsigned j = 0; j < m->l[i].nw; j++) {
                        const struct mwaiter *w = &m->l[i].w[j];
                        if (w->multi && w->session == session &&
                            w->seq == seq) {
                                li[n++] = i;
                        }
                }
        }
        return n;
}

/* Whether the multi-lock of (session, seq) can be taken: at the head of
 * each of its queues, fitting each lock, and with `entry`, allowed by
 * this entry on each. */
static bool m_group_ready(const struct model *m, uint64_t session, uint64_t seq,
                          uint64_t index, bool entry)
{
        unsigned li[CAP_LOCKS];
        unsigned n = m_group(m, session, seq, li);

        for (unsigned i = 0; i < n; i++) {
                const struct mlock *l = &m->l[li[i]];
                if (l->w[0].session != session || l->w[0].seq != seq ||
                    !m_fits(m, l) ||
                    (entry && !m_entry_allows(m, l, index, l->w[0].mode))) {
                        return false;
                }
        }
        return true;
}

/* Whether the head of the queue could be admitted: it fits, and a
 * multi-lock's name only with all the others. */
static bool m_admissible(const struct model *m, const struct mlock *l)
{
        return m_fits(m, l) &&
               (!l->w[0].multi ||
                m_group_ready(m, l->w[0].session, l->w[0].seq, 0, false));
}

/* A new grant of `l` with this entry's index, with its GRANT event. */
struct mhold *m_grant(struct model *m, struct mlock *l, uint64_t index,
                      uint8_t cause, const struct mwaiter *w, struct evlog *log)
{
        struct mhold *h = &l->h[l->nh++];
        struct ev *v;

        if (l->last_grant != index) {
                l->entry_writer = false;
                l->entry_ended = false;
        }
        l->last_grant = index;
        l->entry_writer |= m_writer(w->mode);
        memset(h, 0, sizeof *h);
        h->value_len = w->value_len;
        memcpy(h->value, w->value, w->value_len);
        /* A hold time runs from the grant. */
        h->hold_ms = w->hold_ms;
        h->armed = w->hold_ms > 0 ? index : 0;
        h->session = w->session;
        h->owner = w->owner;
        h->seq = w->seq;
        h->mode = w->mode;
        h->permits = w->permits;
        h->token = index;
        h->count = 1;
        h->attached = ++m->attached;
        h->granted_s = (uint32_t)(m->clock_ms / 1000);
        v = m_ev(log, LOCKFSM_EV_GRANT, index, cause);
        v->session = w->session;
        v->seq = w->seq;
        v->owner = w->owner;
        v->token = index;
        v->mode = w->mode;
        v->permits = w->permits;
        v->value_len = w->value_len;
        memcpy(v->value, w->value, w->value_len);
        m_ev_name(v, l);
        return h;
}

/* Grant the head of `l`'s queue; its queued ACQUIRE learns it. */
static void m_grant_head(struct model *m, struct mlock *l, uint64_t index,
                         uint8_t cause, struct evlog *log)
{
        struct mwaiter w = l->w[0];
        struct lockfsm_result g;

        m_remove_waiter(l, 0);
        m_grant(m, l, index, cause, &w, log);
        g = outcome(PROTO_KIND_GRANTED, w.session, w.owner);
        g.token = index;
        g.count = 1;
        m_set_out(m, w.session, w.seq, &g);
}

static void m_grant_next(struct model *m, struct mlock *l, uint64_t index,
                         uint8_t cause, struct evlog *log, bool groups);

/* The multi-lock at the head of `l` takes all its names, in lock age
 * order; then each of its other locks admits the single waiters behind
 * it, never another multi-lock (the entry's end leaves that one to the
 * next entry). */
static void m_grant_group(struct model *m, struct mlock *l, uint64_t index,
                          uint8_t cause, struct evlog *log)
{
        unsigned li[CAP_LOCKS];
        unsigned n = m_group(m, l->w[0].session, l->w[0].seq, li);

        for (unsigned i = 0; i < n; i++) {
                m_grant_head(m, &m->l[li[i]], index, cause, log);
        }
        for (unsigned i = 0; i < n; i++) {
                if (&m->l[li[i]] != l) {
                        m_grant_next(m, &m->l[li[i]], index, cause, log, false);
                }
        }
}

/* Admit the head of the queue while it can be: a writer alone, or readers
 * up to the next writer, or (with `groups`) a multi-lock whose every name
 * can be admitted. */
static void m_grant_next(struct model *m, struct mlock *l, uint64_t index,
                         uint8_t cause, struct evlog *log, bool groups)
{
        while (m_admissible(m, l) &&
               m_entry_allows(m, l, index, l->w[0].mode)) {
                if (!l->w[0].multi) {
                        m_grant_head(m, l, index, cause, log);
                } else if (groups && m_group_ready(m, l->w[0].session,
                                                   l->w[0].seq, index, true)) {
                        m_grant_group(m, l, index, cause, log);
                } else {
                        break;
                }
        }
}

/* A holder or a waiter has left: admit whom the queue's head allows, or
 * delete the lock when no one holds or waits; unless this entry granted
 * it already, when its end settles it. */
void m_settle(struct model *m, struct mlock *l, uint64_t index, uint8_t cause,
              struct evlog *log)
{
        m_grant_next(m, l, index, cause, log, true);
        if (l->nh == 0 && l->nw == 0 && !l->blocked && l->last_grant != index) {
                m_delete_lock(m, l);
        }
}

/* Ends hold `i` of `l`, with its RELEASE event, and settles the lock. */
void m_end_hold(struct model *m, struct mlock *l, unsigned i, uint64_t index,
                uint8_t cause, struct evlog *log)
{
        struct ev *v = m_ev(log, LOCKFSM_EV_RELEASE, index, cause);

        l->entry_ended |= l->h[i].token == index;
        v->session = l->h[i].session;
        v->owner = l->h[i].owner;
        v->seq = l->h[i].seq;
        v->token = l->h[i].token;
        v->mode = l->h[i].mode;
        v->permits = l->h[i].permits;
        m_ev_name(v, l);
        memmove(&l->h[i], &l->h[i + 1], (l->nh - i - 1) * sizeof l->h[0]);
        l->nh--;
        m_settle(m, l, index, cause, log);
}

/* Every entry starts by admitting the queues' heads an earlier entry
 * could not, in lock age order (a lock a multi-lock took on the way is
 * done), and ends by deleting the locks it freed with no one waiting. */
void m_entry_begin(struct model *m, uint64_t index, struct evlog *log)
{
        for (unsigned i = 0; i < m->nl; i++) {
                if (m->l[i].last_grant != index) {
                        m_grant_next(m, &m->l[i], index, COMMAND_BATCH, log,
                                     true);
                }
        }
}

/* The multi-lock of (session, seq) leaves every queue (UNQUEUE events in
 * lock age order, with `why`), then each of its locks settles. */
void m_drop_group(struct model *m, uint64_t session, uint64_t seq,
                  uint64_t index, uint8_t cause, int why, struct evlog *log)
{
        unsigned li[CAP_LOCKS];
        unsigned n = m_group(m, session, seq, li);
        char names[LIM_NAMES + 1][COMMAND_NAME_MAX];
        uint8_t lens[LIM_NAMES + 1];

        for (unsigned i = 0; i < n && i <= LIM_NAMES; i++) {
                struct mlock *l = &m->l[li[i]];
                for (unsigned j = 0; j < l->nw; j++) {
                        struct ev *v;
                        if (!l->w[j].multi || l->w[j].session != session ||
                            l->w[j].seq != seq) {
                                continue;
                        }
                        v = m_ev(log, LOCKFSM_EV_UNQUEUE, index, cause);
                        v->session = session;
                        v->seq = seq;
                        v->owner = l->w[j].owner;
                        v->mode = l->w[j].mode;
                        v->status = why;
                        m_ev_name(v, l);
                        m_remove_waiter(l, j);
                        break;
                }
                lens[i] = l->name_len;
                memcpy(names[i], l->name, l->name_len);
        }
        for (unsigned i = 0; i < n && i <= LIM_NAMES; i++) {
                struct mlock *l = m_lock(m, names[i], lens[i]);
                if (l != NULL) {
                        m_settle(m, l, index, cause, log);
                }
        }
}

void m_entry_end(struct model *m)
{
        for (unsigned i = m->nl; i-- > 0;) {
                if (m->l[i].nh == 0 && m->l[i].nw == 0 && !m->l[i].blocked) {
                        m_delete_lock(m, &m->l[i]);
                }
        }
}

/* Each command takes a stamp: max(last + 1, the entry's index). */
uint64_t m_stamp(struct model *m, uint64_t index)
{
        m->stamp = m->stamp + 1 > index ? m->stamp + 1 : index;
        return m->stamp;
}

/* Where the session's next grant to end is: the one with the lowest
 * (token, lock age, order granted). False when it holds nothing. */
static bool m_next_grant(struct model *m, uint64_t sid, unsigned *li,
                         unsigned *hi)
{
        const struct mhold *best = NULL;

        for (unsigned i = 0; i < m->nl; i++) {
                for (unsigned j = 0; j < m->l[i].nh; j++) {
                        const struct mhold *h = &m->l[i].h[j];
                        if (h->session != sid) {
                                continue;
                        }
                        if (best == NULL || h->token < best->token ||
                            (h->token == best->token &&
                             (m->l[i].created < m->l[*li].created ||
                              (m->l[i].created == m->l[*li].created &&
                               h->attached < best->attached)))) {
                                best = h;
                                *li = i;
                                *hi = j;
                        }
                }
        }
        return best != NULL;
}

/* CLOSE and EXPIRE: waits leave in queue order, then grants end by token,
 * then lock age, each lock settling as it goes, then the session ends
 * with a tombstone. */
void m_end(struct model *m, uint64_t sid, int status, uint64_t index,
           uint8_t cause, uint32_t delay_ms, struct evlog *log)
{
        uint64_t last_token = 0;
        unsigned li = 0, hi = 0, n = 0;
        struct msess *s = m_session(m, sid);
        struct ev *v;

        /* An expiry or a revoke loses the locks: the longer of the
         * entry's delay and the session's own. */
        if (status == BATON_EEXPIRED && s->delay > delay_ms &&
            !(m->bugs & BUG_OWNDELAY)) {
                delay_ms = s->delay;
        }
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
                if (best->w[bi].multi) {
                        m_drop_group(m, sid, best->w[bi].seq, index, cause,
                                     status, log);
                        continue;
                }
                v = m_ev(log, LOCKFSM_EV_UNQUEUE, index, cause);
                v->session = sid;
                v->seq = best->w[bi].seq;
                v->owner = best->w[bi].owner;
                v->mode = best->w[bi].mode;
                v->permits = best->w[bi].permits;
                v->status = status;
                m_ev_name(v, best);
                m_remove_waiter(best, bi);
                m_settle(m, best, index, cause, log);
        }
        /* Grants made while ending go to other sessions, so this ends. */
        while (m_next_grant(m, sid, &li, &hi)) {
                struct mlock *l = &m->l[li];

                m->ties += n++ > 0 && l->h[hi].token == last_token;
                last_token = l->h[hi].token;
                if (delay_ms > 0 && !l->semaphore && !l->election &&
                    !l->blocked) {
                        /* Lost, not released: the lock-delay begins. */
                        l->blocked = true;
                        l->limit = delay_ms; /* its delay, as the machine */
                        v = m_ev(log, LOCKFSM_EV_BLOCK, index, cause);
                        v->seq = l->created;
                        v->wait_ms = delay_ms;
                        m_ev_name(v, l);
                }
                m_end_hold(m, l, hi, index, cause, log);
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

struct lockfsm_result m_open(struct model *m, uint64_t index,
                             const struct command *c, struct evlog *log)
{
        struct msess *s;
        struct lockfsm_result r;
        struct ev *v;

        for (unsigned i = 0; c->nonce != 0 && i < m->ns; i++) {
                if (m->s[i].nonce == c->nonce) {
                        r = outcome(PROTO_KIND_OPENED, m->s[i].id, 0);
                        r.duplicate = true;
                        return r;
                }
        }
        if (c->ttl_ms < LIM_MIN_TTL || c->ttl_ms > LIM_MAX_TTL) {
                return rejected(BATON_ETTL);
        }
        if (c->delay_ms > LIM_DELAY) {
                return rejected(BATON_EDELAY);
        }
        if (m->ns == LIM_SESSIONS) {
                return rejected(BATON_ETOOMANYSESSIONS);
        }
        if (m_quota_open(m, c->principal, &r)) {
                return r;
        }
        s = &m->s[m->ns++];
        memset(s, 0, sizeof *s);
        s->id = m->stamp;
        s->nonce = c->nonce;
        s->ttl = c->ttl_ms;
        s->delay = c->delay_ms;
        s->principal = c->principal;
        s->client_len = c->name_len;
        memcpy(s->client, c->name, c->name_len);
        if (c->hash != NULL) {
                memcpy(s->hash, c->hash, COMMAND_HASH_SIZE);
        }
        v = m_ev(log, LOCKFSM_EV_OPEN, index, COMMAND_OPEN);
        v->session = s->id;
        v->nonce = c->nonce;
        r = outcome(PROTO_KIND_OPENED, s->id, 0);
        return r;
}

void m_result_str(char *out, size_t cap, const struct lockfsm_result *r)
{
        snprintf(out, cap,
                 "{status=%d kind=%u dup=%d session=%" PRIu64 " owner=%" PRIu64
                 " token=%" PRIu64 " count=%" PRIu32 " waiters=%" PRIu32 "}",
                 r->status, r->kind, r->duplicate, r->session, r->owner,
                 r->token, r->count, r->waiters);
}

bool m_result_eq(const struct lockfsm_result *want,
                 const struct lockfsm_result *got, bool check_dup)
{
        return got->status == want->status && got->kind == want->kind &&
               (!check_dup || got->duplicate == want->duplicate) &&
               got->session == want->session && got->owner == want->owner &&
               got->token == want->token && got->count == want->count &&
               got->waiters == want->waiters;
}
