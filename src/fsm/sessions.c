/* Sessions in the lock state machine: OPEN, CLOSE and EXPIRE, and the
 * lookups of live and ended sessions. */
#include "sessions.h"

#include <string.h>

#include "../../include/baton/errors.h"
#include "../proto/proto.h"
#include "grant.h"
#include "quota.h"
/* It defines lockfsm_session_status() and the other lookups of sessions,
 * declared in the machine's interface. */
#include "lockfsm.h"

/* CLOSE and EXPIRE: waits go first, so a released lock is never handed to
 * the session that is ending. */
void sessions_end(const struct step *st, struct session *s, int reason,
                  struct lockfsm_result *res)
{
        uint64_t id = s->id;

        while (!rqueue_empty(&s->waits)) {
                grant_drop_wait(st,
                                RQUEUE_DATA(rqueue_head(&s->waits), struct hold,
                                            session_link),
                                reason);
        }
        while (!rqueue_empty(&s->grants)) {
                struct hold *g = RQUEUE_DATA(rqueue_head(&s->grants),
                                             struct hold, session_link);
                if (reason == BATON_EEXPIRED) {
                        grant_lost(st, g); /* EXPIRE, REVOKE */
                } else {
                        grant_end(st, g);
                }
        }
        step_emit_session(st, LOCKFSM_EV_END, s);
        state_session_end(st->f, s, reason);
        memset(res, 0, sizeof *res);
        res->kind =
            reason == BATON_ECLOSED ? PROTO_KIND_CLOSED : PROTO_KIND_EXPIRED;
        res->session = id;
}

int sessions_open(const struct step *st, struct lockfsm_result *res)
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
                step_reject(res, BATON_ETTL);
                return 0;
        }
        if (c->delay_ms > f->limits.max_lock_delay_ms) {
                step_reject(res, BATON_EDELAY);
                return 0;
        }
        if (f->n_sessions >= f->limits.max_sessions) {
                step_reject(res, BATON_ETOOMANYSESSIONS);
                return 0;
        }
        if (quota_check_open(f, c->principal, res) != 0) {
                return 0;
        }
        s = state_session_alloc(f, c->name_len);
        if (s == NULL) {
                return BATON_ENOMEM;
        }
        /* The principal's record last: nothing can fail after it. */
        if (state_session_reserve(f) != 0 ||
            (c->principal != 0 &&
             (s->use = quota_use_get(f, c->principal)) == NULL)) {
                state_session_free(f, s);
                return BATON_ENOMEM;
        }
        s->id = st->stamp;
        s->nonce = c->nonce;
        s->ttl_ms = c->ttl_ms;
        s->lock_delay_ms = c->delay_ms;
        s->name_len = c->name_len;
        if (c->name_len > 0) {
                memcpy(s->name, c->name, c->name_len);
        }
        if (c->hash != NULL) {
                memcpy(s->hash, c->hash, sizeof s->hash);
        }
        state_session_link(f, s);
        step_emit_session(st, LOCKFSM_EV_OPEN, s);
        memset(res, 0, sizeof *res);
        res->kind = PROTO_KIND_OPENED;
        res->session = s->id;
        return 0;
}

/* Reject a command for a session that is not live. */
void sessions_reject_dead(const struct lockfsm *f, uint64_t session,
                          struct lockfsm_result *res)
{
        int reason = state_tomb(f, session);

        step_reject(res, reason != 0 ? reason : BATON_ENOSESSION);
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
        struct rqueue *q;

        RQUEUE_FOREACH(q, &f->lists->session_list)
        {
                const struct session *s = RQUEUE_DATA(q, struct session, link);
                cb(data, s->id, s->ttl_ms);
        }
}

uint32_t lockfsm_session_revoked(const struct lockfsm *f, uint64_t session)
{
        const struct session *s = state_session(f, session);

        return s != NULL ? s->revoked : 0;
}

uint32_t lockfsm_session_ttl(const struct lockfsm *f, uint64_t session)
{
        const struct session *s = state_session(f, session);

        return s != NULL ? s->ttl_ms : 0;
}

uint64_t lockfsm_session_next_seq(const struct lockfsm *f, uint64_t session)
{
        const struct session *s = state_session(f, session);
        uint64_t next;
        unsigned i;

        if (s == NULL) {
                return 1;
        }
        next = s->floor > 0 ? s->floor : 1;
        for (i = 0; i < s->n_memo; i++) {
                if (s->memo[i].seq >= next) {
                        next = s->memo[i].seq + 1;
                }
        }
        return next;
}

const uint8_t *lockfsm_session_hash(const struct lockfsm *f, uint64_t session)
{
        const struct session *s = state_session(f, session);

        return s != NULL ? s->hash : NULL;
}

const char *lockfsm_session_name(const struct lockfsm *f, uint64_t session,
                                 uint8_t *len)
{
        const struct session *s = state_session(f, session);

        *len = s != NULL ? s->name_len : 0;
        return s != NULL ? s->name : NULL;
}

static uint32_t count_queue(const struct rqueue *h)
{
        const struct rqueue *q;
        uint32_t n = 0;

        RQUEUE_FOREACH(q, h)
        {
                n++;
        }
        return n;
}

static void describe(const struct session *s, struct lockfsm_session_info *out)
{
        out->id = s->id;
        out->ttl_ms = s->ttl_ms;
        out->lock_delay_ms = s->lock_delay_ms;
        out->revoked = s->revoked;
        out->n_grants = count_queue(&s->grants);
        out->n_waits = count_queue(&s->waits);
        out->name = s->name;
        out->name_len = s->name_len;
}

void lockfsm_foreach_session_from(
    const struct lockfsm *f, uint64_t after,
    bool (*cb)(void *data, const struct lockfsm_session_info *s), void *data)
{
        const struct session *at = after > 0 ? state_session(f, after) : NULL;
        const struct rqueue *head = &f->lists->session_list;
        const struct rqueue *q = at != NULL ? &at->link : head;
        struct lockfsm_session_info info;

        /* From the cursor's session when it lives, so that paging through
         * many sessions does not walk them all for every page. */
        for (q = rqueue_next(q); q != head; q = rqueue_next(q)) {
                const struct session *s = RQUEUE_DATA(q, struct session, link);
                if (s->id <= after) {
                        continue;
                }
                describe(s, &info);
                if (!cb(data, &info)) {
                        return;
                }
        }
}

int lockfsm_session_info(const struct lockfsm *f, uint64_t id,
                         struct lockfsm_session_info *out)
{
        const struct session *s = state_session(f, id);

        memset(out, 0, sizeof *out);
        if (s == NULL) {
                return lockfsm_session_status(f, id);
        }
        describe(s, out);
        return 0;
}

/* Report `h`, a grant or a wait of a session, to `cb`. */
static bool visit_hold(const struct hold *h,
                       bool (*cb)(void *data,
                                  const struct lockfsm_session_hold *h),
                       void *data)
{
        const struct lock *l = hold_lock(h);
        struct lockfsm_session_hold out;

        memset(&out, 0, sizeof out);
        out.waiting = h->waiting;
        out.mode =
            l->mode == COMMAND_MODE_ELECTION ? COMMAND_MODE_ELECTION : h->mode;
        out.owner = h->owner;
        if (h->waiting) {
                out.wait_ms = h->wait_ms;
        } else {
                out.token = h->token;
                out.count = h->count;
        }
        out.permits = h->permits;
        out.name = l->name;
        out.name_len = l->name_len;
        return cb(data, &out);
}

void lockfsm_foreach_session_hold(
    const struct lockfsm *f, uint64_t id,
    bool (*cb)(void *data, const struct lockfsm_session_hold *h), void *data)
{
        const struct session *s = state_session(f, id);
        const struct rqueue *q;

        if (s == NULL) {
                return;
        }
        RQUEUE_FOREACH(q, &s->grants)
        {
                if (!visit_hold(RQUEUE_DATA(q, struct hold, session_link), cb,
                                data)) {
                        return;
                }
        }
        RQUEUE_FOREACH(q, &s->waits)
        {
                if (!visit_hold(RQUEUE_DATA(q, struct hold, session_link), cb,
                                data)) {
                        return;
                }
        }
}
