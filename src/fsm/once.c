/* The exactly-once memory of the lock state machine: client commands
 * (CLOSE, ACQUIRE, MULTI, RELEASE, PROCLAIM, SET_VALUE, EXTEND, CANCEL)
 * checked
 * against their
 * session's remembered outcomes before they run. */
#include "once.h"

#include <assert.h>
#include <string.h>

#include "../../include/baton/errors.h"
#include "../proto/proto.h"
#include "elect.h"
#include "grant.h"
#include "holdtime.h"
#include "multi.h"
#include "sessions.h"
#include "state.h"

#ifdef BATON_CHAOS_BUG_FORGET
/* A deliberate bug for test_simhost_forget, a negative control of the
 * simulation (in its own copy of the state machine): the exactly-once
 * memory is never consulted, so a retried (session, seq) runs again as
 * new and its new outcome overwrites the one remembered. Never built into
 * batond, where BUG_FORGET is 0 and once_apply() never takes that path. */
#define BUG_FORGET 1
#else
#define BUG_FORGET 0
#endif

/* Number of remembered outcomes left once `ack` takes effect. */
static unsigned memo_after_ack(const struct session *s, uint64_t ack)
{
        unsigned i, n = 0;

        for (i = 0; i < s->n_memo; i++) {
                n += s->memo[i].seq >= ack;
        }
        return n;
}

/* ACQUIRE, MULTI, RELEASE, PROCLAIM, SET_VALUE, EXTEND or CANCEL for live
 * session `s`, with what
 * was prepared for it (freeing what it did not keep). */
static void run(const struct step *st, struct session *s, struct grant_prep *p,
                struct multi_prep *mp, struct lockfsm_result *res)
{
        struct lockfsm *f = st->f;

        switch (st->c->type) {
        case COMMAND_ACQUIRE:
                grant_acquire(st, s, p, res);
                state_hold_free(f, p->hold);
                if (p->lock != NULL) {
                        state_lock_free(f, p->lock);
                }
                break;
        case COMMAND_MULTI:
                multi_acquire(st, s, mp, res);
                multi_prep_free(f, mp);
                break;
        case COMMAND_RELEASE:
                grant_release(st, s, res);
                break;
        case COMMAND_PROCLAIM:
        case COMMAND_SET_VALUE:
                elect_proclaim(st, s, p, res);
                state_hold_free(f, p->hold);
                break;
        case COMMAND_EXTEND:
                holdtime_extend(st, s, res);
                break;
        default:
                assert(st->c->type == COMMAND_CANCEL);
                grant_unwait(st, s, BATON_ECANCELLED, res);
                break;
        }
}

/* CLOSE, ACQUIRE, MULTI, RELEASE, PROCLAIM, SET_VALUE, EXTEND, CANCEL: the
 * exactly-once steps of
 * docs/fsm.md. */
int once_apply(const struct step *st, struct lockfsm_result *res)
{
        struct lockfsm *f = st->f;
        const struct command *c = st->c;
        struct session *s = state_session(f, c->session);
        struct grant_prep p = {NULL, NULL};
        struct multi_prep mp = {0};
        struct memo *m;
        unsigned kept;
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
                sessions_reject_dead(f, c->session, res);
                return 0;
        }
        if (c->seq == 0 || c->seq < c->ack) {
                step_reject(res, BATON_EINVAL);
                return 0;
        }
        if (c->seq < s->floor) {
                step_reject(res, BATON_ESEQ);
                return 0;
        }
        m = state_memo_find(s, c->seq);
        /* A retried (session, seq) forgotten: BUG_FORGET above. */
        bool again = BUG_FORGET && m != NULL;
        m = again ? NULL : m;
        /* A CLOSE needs no slot: its outcome lives in the tombstone. */
        kept = memo_after_ack(s, c->ack);
        full = m == NULL && c->type != COMMAND_CLOSE &&
               kept >= f->limits.max_inflight;
        /* Allocate before the ack or anything else changes state; a
         * larger memo array alone is no change (nothing reads its room).
         * Until the ack below, the array still holds every outcome. */
        if (m == NULL && !full && c->type != COMMAND_CLOSE) {
                unsigned need = kept + 1 > s->n_memo ? kept + 1 : s->n_memo;
                if (state_memo_reserve(f, s, need) != 0) {
                        return BATON_ENOMEM;
                }
                if ((c->type == COMMAND_ACQUIRE &&
                     grant_prepare(f, c, &p) != 0) ||
                    (c->type == COMMAND_MULTI &&
                     multi_prepare(f, c, &mp) != 0) ||
                    ((c->type == COMMAND_PROCLAIM ||
                      c->type == COMMAND_SET_VALUE) &&
                     elect_prepare(f, c, &p) != 0)) {
                        return BATON_ENOMEM;
                }
        }
        state_memo_ack(s, c->ack);
        if (m != NULL) {
                m = state_memo_find(s, c->seq); /* the ack moved the slots */
                state_memo_result(m, res);
                return 0;
        }
        if (full) {
                step_reject(res, BATON_EINFLIGHT);
                return 0;
        }
        if (c->type == COMMAND_CLOSE) {
                /* The tombstone remembers a close; the session is gone. */
                sessions_end(st, s, BATON_ECLOSED, res);
                return 0;
        }
        run(st, s, &p, &mp, res);
        if (again) {
                state_memo_set(state_memo_find(s, c->seq), res);
                return 0;
        }
        state_memo_put(s, c->seq, res);
        return 0;
}
