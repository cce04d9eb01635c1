/* When a follower that saw its leader's connection close stands (see
 * leaderloss.h). */
#include "leaderloss.h"

bool leaderloss_rank(const struct raft_configuration *conf, uint64_t self,
                     uint64_t leader, unsigned *rank, unsigned *voters)
{
        bool found = false;
        unsigned i;

        *rank = 0;
        *voters = 0;
        for (i = 0; i < conf->n; i++) {
                const struct raft_server *s = &conf->servers[i];

                if (s->role != RAFT_VOTER || s->id == leader) {
                        continue;
                }
                (*voters)++;
                if (s->id == self) {
                        found = true;
                } else if (s->id < self) {
                        (*rank)++;
                }
        }
        return found;
}

uint64_t leaderloss_due(const struct leaderloss *l, unsigned round,
                        unsigned step_ms)
{
        return ((uint64_t)round * l->voters + l->rank) * step_ms;
}

bool leaderloss_stands(const struct leaderloss *l, struct raft *r,
                       const struct heard *h, unsigned round)
{
        raft_id leader = 0;
        const char *address = NULL;

        switch (raft_state(r)) {
        case RAFT_FOLLOWER:
                raft_leader(r, &leader, &address);
                return leader == l->leader && h->appends == l->appends;
        case RAFT_CANDIDATE:
                return round > 0;
        default:
                return false;
        }
}

/* raft_set_election_timeout(), but for libraft 0.22.1's quirk: with an io
 * set, 150 ms beside a heartbeat of 15 ms is tripled, both of them
 * (raft_set_election_timeout in src/raft.c). */
static void set_election(struct raft *r, unsigned ms, unsigned heartbeat_ms)
{
        if (ms == 150 && heartbeat_ms == 15) {
                raft_set_heartbeat_timeout(r, 16);
                raft_set_election_timeout(r, ms);
                raft_set_heartbeat_timeout(r, heartbeat_ms);
                return;
        }
        raft_set_election_timeout(r, ms);
}

bool leaderloss_timeout_now(struct raft *r, struct heard *h,
                            unsigned election_ms, unsigned heartbeat_ms)
{
        unsigned short state = raft_state(r);
        raft_term term = raft_current_term(r);
        raft_time started = r->election_timer_start;

        if (h->tick == NULL) {
                return false;
        }
        set_election(r, 1, heartbeat_ms);
        h->tick(&h->io);
        set_election(r, election_ms, heartbeat_ms);
        return raft_state(r) != state || raft_current_term(r) != term ||
               (state == RAFT_CANDIDATE && r->election_timer_start != started);
}
