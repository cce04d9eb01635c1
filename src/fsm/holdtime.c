/* Hold times in the lock state machine (holdtime.h). */
#include "holdtime.h"

#include <string.h>

#include "../../include/baton/errors.h"
#include "../proto/proto.h"
#include "grant.h"
#include "lockfsm.h"

void holdtime_extend(const struct step *st, struct session *s,
                     struct lockfsm_result *res)
{
        const struct command *c = st->c;
        struct hold *h = grant_named(st, s, res);

        if (h == NULL) {
                return;
        }
        /* Only a grant taken with a hold time has one to restart: one
         * without (and no room for its clock) is held until released. */
        if (hold_clock(h).hold_ms == 0 ||
            c->hold_ms > st->f->limits.max_hold_ms) {
                step_reject(res, BATON_EINVAL);
                return;
        }
        hold_clock_set(h, (struct hold_clock){c->hold_ms, st->index});
        step_emit(st, LOCKFSM_EV_EXTEND, h, 0);
        step_describe(res, PROTO_KIND_UPDATED, h);
}

/* The grant of session `s` on `l` that the ACQUIRE of seq `seq` made, or
 * NULL. */
static struct hold *grant_of(const struct lock *l, const struct session *s,
                             uint64_t seq)
{
        struct rqueue *q;

        RQUEUE_FOREACH(q, &l->holders)
        {
                struct hold *h = RQUEUE_DATA(q, struct hold, lock_link);
                if (hold_session(h) == s && h->seq == seq) {
                        return h;
                }
        }
        return NULL;
}

void holdtime_expire(const struct step *st, struct lockfsm_result *res)
{
        const struct command *c = st->c;
        struct lock *l = state_lock(st->f, c->name, c->name_len);
        struct session *s = state_session(st->f, c->session);
        struct hold *h =
            l != NULL && s != NULL ? grant_of(l, s, c->target) : NULL;
        struct hold_clock k;

        if (h == NULL) {
                step_reject(res, BATON_ENOTHOLDER);
                return;
        }
        k = hold_clock(h);
        if (k.hold_ms == 0 || k.armed != c->token) {
                /* Restarted by an EXTEND after the leader proposed this:
                 * the leader times the new clock. */
                step_reject(res, BATON_ENOTHOLDER);
                return;
        }
        memset(res, 0, sizeof *res);
        res->kind = PROTO_KIND_RELEASED;
        res->session = s->id;
        res->owner = h->owner;
        res->token = h->token;
        /* Told to its client as a revoke is: the session lives on. */
        s->revoked++;
        grant_lost(st, h);
}

void lockfsm_foreach_timed(const struct lockfsm *f,
                           void (*cb)(void *data, uint64_t session,
                                      uint64_t seq, const char *name,
                                      size_t name_len, uint32_t hold_ms),
                           void *data)
{
        struct rqueue *lq, *hq;

        RQUEUE_FOREACH(lq, &f->lists->lock_list)
        {
                const struct lock *l = RQUEUE_DATA(lq, struct lock, link);
                RQUEUE_FOREACH(hq, &l->holders)
                {
                        const struct hold *h =
                            RQUEUE_DATA(hq, struct hold, lock_link);
                        uint32_t hold_ms = hold_clock(h).hold_ms;
                        if (hold_ms > 0) {
                                cb(data, hold_session(h)->id, h->seq, l->name,
                                   l->name_len, hold_ms);
                        }
                }
        }
}

bool lockfsm_hold_clock(const struct lockfsm *f, uint64_t session, uint64_t seq,
                        const char *name, size_t len, uint32_t *hold_ms,
                        uint64_t *armed)
{
        const struct lock *l = state_lock(f, name, len);
        const struct session *s = state_session(f, session);
        const struct hold *h =
            l != NULL && s != NULL ? grant_of(l, s, seq) : NULL;
        struct hold_clock k;

        if (h == NULL) {
                return false;
        }
        k = hold_clock(h);
        *hold_ms = k.hold_ms;
        *armed = k.armed;
        return true;
}
