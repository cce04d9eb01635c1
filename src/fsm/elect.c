/* Elections in the lock state machine: the part an election adds to a
 * lock, its leader's advertised value. */
#include "elect.h"

#include <stddef.h>
#include <string.h>

#include "../../include/baton/errors.h"
#include "../proto/proto.h"

int elect_prepare(struct lockfsm *f, const struct command *c,
                  struct grant_prep *p)
{
        p->lock = NULL;
        /* With room for a hold clock: the record it replaces may have
         * one to carry over. */
        p->hold = state_hold_alloc(f, c->value_len, true);
        return p->hold != NULL ? 0 : BATON_ENOMEM;
}

/* Put `n` (with room for a hold clock) where `h` is in its lock's and its
 * session's lists, with all of `h` but its value, its hold clock
 * included; `h` leaves both lists. */
static void replace(struct hold *h, struct hold *n)
{
        uint8_t value_len = n->value_len;

        memcpy(n, h, offsetof(struct hold, value));
        /* References are relative to the record that holds them. */
        hold_set_lock(n, hold_lock(h));
        hold_set_session(n, hold_session(h));
        n->value_len = value_len;
        n->timed = true;
        hold_clock_set(n, hold_clock(h));
        rqueue_init(&n->lock_link);
        rqueue_init(&n->session_link);
        rqueue_insert_after(&h->lock_link, &n->lock_link);
        rqueue_remove(&h->lock_link);
        rqueue_insert_after(&h->session_link, &n->session_link);
        rqueue_remove(&h->session_link);
}

void elect_proclaim(const struct step *st, struct session *s,
                    struct grant_prep *p, struct lockfsm_result *res)
{
        const struct command *c = st->c;
        struct lock *l = state_lock(st->f, c->name, c->name_len);
        struct hold *h;

        /* PROCLAIM is an election's; SET_VALUE any grant's. */
        if (l != NULL && l->mode != COMMAND_MODE_ELECTION &&
            c->type == COMMAND_PROCLAIM) {
                step_reject(res, BATON_EKIND);
                return;
        }
        /* By its token, as RELEASE names a grant: an owner that holds a
         * lock's read and write grants (an upgrade) names either. */
        h = grant_named(st, s, res);
        if (h == NULL) {
                return;
        }
        /* A value of another length needs a record of another size; the
         * one prepared serves every length, so apply cannot fail here. */
        replace(h, p->hold);
        state_hold_free(st->f, h);
        h = p->hold;
        p->hold = NULL;
        if (c->value_len > 0) {
                memcpy(h->value, c->value, c->value_len);
        }
        step_emit(st, LOCKFSM_EV_PROCLAIM, h, 0);
        step_describe(res, PROTO_KIND_PROCLAIMED, h);
}
