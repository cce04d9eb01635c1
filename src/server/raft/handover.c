/* Which voter a leader can hand leadership to at once (handover.h). */
#include "handover.h"

uint64_t handover_caught_up(struct raft *r, uint64_t to)
{
        const struct raft_configuration *conf = &r->configuration;
        raft_index last = raft_last_index(r), match;
        unsigned i;

        for (i = 0; i < conf->n; i++) {
                const struct raft_server *s = &conf->servers[i];
                if (s->id == r->id || s->role != RAFT_VOTER ||
                    (to != 0 && s->id != to)) {
                        continue;
                }
                /* Match indexes count entries a follower has stored and
                 * acknowledged, never ones merely sent. */
                if (raft_match_index(r, s->id, &match) == 0 && match == last) {
                        return s->id;
                }
        }
        return 0;
}

bool handover_possible(const struct raft *r, uint64_t to)
{
        const struct raft_configuration *conf = &r->configuration;
        unsigned i;

        for (i = 0; i < conf->n; i++) {
                const struct raft_server *s = &conf->servers[i];
                if (s->id != r->id && s->role == RAFT_VOTER &&
                    (to == 0 || s->id == to)) {
                        return true;
                }
        }
        return false;
}
