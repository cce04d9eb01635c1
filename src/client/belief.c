/* What libbaton's client core believes of its lease and locks, read
 * without ticking, for a simulation's checkers. */
#include "core.h"

void core_belief(const struct core *k, int64_t t, struct core_belief *b)
{
        const struct session *s = &k->session;

        b->session = s->id;
        b->state = session_lease_at(s, t);
        b->validating = s->validating;
        if (s->id == 0) {
                b->acked_sent = 0;
                b->jeopardy_at = 0;
                b->expires_at = 0;
                return;
        }
        b->acked_sent = s->acked_sent;
        b->jeopardy_at = session_jeopardy_at(s);
        b->expires_at = session_expires_at(s);
}

void core_holds(const struct core *k,
                void (*cb)(void *data, const struct locks_hold *h), void *data)
{
        if (k->session.id != 0) {
                locks_foreach(&k->locks, k->session.id, cb, data);
        }
}
