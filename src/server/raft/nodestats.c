/* What a node's raft says for metrics: the leader changes it saw, the
 * voters it has and reaches, its appends' times (node.h). */
#include <raft.h>

#include "node.h"
#include "nodecore.h"

void node_watch_leader(struct node *n)
{
        struct node_core *c = n->core;
        raft_id leader = 0;
        const char *address = NULL;

        raft_leader(&c->raft, &leader, &address);
        if (leader != 0 && leader != c->leader_seen) {
                c->leader_seen = leader;
                c->leader_changes++;
        }
}

/* The voters of c's configuration, and, on a leader, how many of them
 * (itself included) sent it a message within an election timeout. */
static void count_voters(const struct node *n, struct node_raft_stats *s)
{
        struct node_core *c = n->core;
        const struct raft_configuration *conf = &c->raft.configuration;
        struct raft_io *io = &c->heard.io;
        uint64_t now = io->time(io);
        uint64_t bound = n->cfg->election_timeout_ms;
        uint64_t since = now > bound ? now - bound : 0;
        unsigned i;

        for (i = 0; i < conf->n; i++) {
                const struct raft_server *v = &conf->servers[i];

                if (v->role != RAFT_VOTER) {
                        continue;
                }
                s->voters++;
                if (v->id == n->cfg->id ||
                    heard_from_since(&c->heard, v->id, since)) {
                        s->reachable++;
                }
        }
}

void node_raft_stats(const struct node *n, struct node_raft_stats *s)
{
        struct node_core *c = n->core;
        raft_id leader = 0;
        const char *address = NULL;

        s->voters = 0;
        s->reachable = 0;
        raft_leader(&c->raft, &leader, &address);
        s->has_leader = leader != 0;
        s->leader_changes = c->leader_changes;
        s->leader = raft_state(&c->raft) == RAFT_LEADER;
        s->disk_writes = &c->disk.took;

        count_voters(n, s);
}

uint64_t node_last_snapshot(const struct node *n)
{
        return raftfsm_last_snapshot(&n->core->rf);
}
