/* The simulated faults. */
#include "faults.h"

#include <inttypes.h>
#include <string.h>

#include "../lib/simlinks.h"

enum fault_kind {
        F_KILL_LEADER,
        F_KILL_NODE,
        F_ISOLATE_LEADER,
        F_PARTITION,
        F_DISCONNECT,
        F_SATURATE_ONEWAY,
        F_SPLIT_ALL,
        F_LATENCY,
        F_ELECTION,
        F_KINDS
};

static const char *const fault_names[F_KINDS] = {
    "kill-leader", "kill-node", "isolate-leader", "partition", "disconnect",
    "saturate",    "split-all", "latency",        "election",
};

/* ------------------------------------------------------------------------
 * Faults
 */

void fault_undo(struct sim *s, struct fault *ft)
{
        struct simcluster *c = &s->c;
        unsigned i;
        unsigned j;

        switch (ft->kind) {
        case F_KILL_LEADER:
        case F_KILL_NODE:
                simlinks_revive(c, ft->a);
                break;
        case F_ISOLATE_LEADER:
                simlinks_unisolate(c, ft->a);
                break;
        case F_PARTITION:
        case F_SPLIT_ALL:
                /* The pairs cut: minority x majority, or every pair. */
                for (i = 0; i < s->n; i++) {
                        for (j = 0; j < s->n; j++) {
                                if (ft->kind == F_PARTITION
                                        ? ((ft->mask >> i) & 1) &&
                                              !((ft->mask >> j) & 1)
                                        : i < j) {
                                        simlinks_desaturate(c, i, j);
                                        simlinks_desaturate(c, j, i);
                                }
                        }
                }
                break;
        case F_DISCONNECT:
                simlinks_reconnect(c, ft->a, ft->b);
                if (ft->both) {
                        simlinks_reconnect(c, ft->b, ft->a);
                }
                break;
        case F_SATURATE_ONEWAY:
                simlinks_desaturate(c, ft->a, ft->b);
                break;
        default:
                break;
        }
}

void drive_faults(struct sim *s, raft_time now)
{
        struct simcluster *c = &s->c;
        struct rng *r = &s->rng;
        unsigned f = (s->n - 1) / 2; /* nodes the cluster can lose */
        struct fault ft;
        unsigned leader;
        unsigned i;
        unsigned j;

        for (i = 0; i < s->n_faults;) {
                if (now >= s->faults[i].heal_at) {
                        say(s, "heal %s", fault_names[s->faults[i].kind]);
                        fault_undo(s, &s->faults[i]);
                        s->faults[i] = s->faults[--s->n_faults];
                } else {
                        i++;
                }
        }
        if (now < s->next_fault_at) {
                return;
        }
        s->next_fault_at = now + rng_range(r, 200, 1500);
        if (s->n_faults >= 2) {
                return;
        }
        memset(&ft, 0, sizeof ft);
        ft.kind = (int)rng_below(r, F_KINDS);
        ft.heal_at = now + rng_range(r, 300, 3000);
        leader = simcluster_leader(c);
        /* Faults that take nodes away must leave a majority up, except the
         * short, rare split of everyone. */
        if ((ft.kind <= F_PARTITION || ft.kind == F_SPLIT_ALL) &&
            simlinks_n_down(c) >= f) {
                return;
        }
        switch (ft.kind) {
        case F_KILL_LEADER:
        case F_ISOLATE_LEADER:
                if (leader == s->n) {
                        return;
                }
                ft.a = leader;
                if (ft.kind == F_KILL_LEADER) {
                        simlinks_kill(c, ft.a);
                } else {
                        simlinks_isolate(c, ft.a);
                }
                break;
        case F_KILL_NODE:
                ft.a = rng_below(r, s->n);
                simlinks_kill(c, ft.a);
                break;
        case F_PARTITION:
                for (i = 0, j = rng_range(r, 1, f); i < j; i++) {
                        ft.mask |= 1u << rng_below(r, s->n);
                }
                for (i = 0; i < s->n; i++) {
                        for (j = 0; j < s->n; j++) {
                                if (((ft.mask >> i) & 1) &&
                                    !((ft.mask >> j) & 1)) {
                                        simlinks_saturate(c, i, j);
                                        simlinks_saturate(c, j, i);
                                }
                        }
                }
                break;
        case F_SPLIT_ALL:
                if (!rng_chance(r, 25)) {
                        return;
                }
                ft.heal_at = now + rng_range(r, 200, 800);
                ft.mask = (1u << s->n) - 1;
                for (i = 0; i < s->n; i++) {
                        for (j = i + 1; j < s->n; j++) {
                                simlinks_saturate(c, i, j);
                                simlinks_saturate(c, j, i);
                        }
                }
                break;
        case F_DISCONNECT:
        case F_SATURATE_ONEWAY:
                ft.a = rng_below(r, s->n);
                ft.b = (ft.a + rng_range(r, 1, s->n - 1)) % s->n;
                if (ft.kind == F_SATURATE_ONEWAY) {
                        simlinks_saturate(c, ft.a, ft.b);
                } else {
                        ft.both = rng_chance(r, 50);
                        simlinks_disconnect(c, ft.a, ft.b);
                        if (ft.both) {
                                simlinks_disconnect(c, ft.b, ft.a);
                        }
                }
                break;
        case F_LATENCY:
                i = rng_below(r, s->n);
                raft_fixture_set_network_latency(&c->f, i, rng_range(r, 1, 60));
                say(s, "fault: latency of n%u changed%s", i,
                    simcluster_set_disk_latency(c, i, rng_range(r, 1, 30))
                        ? ""
                        : " (not its disk's: a write is in flight)");
                s->faults_total++;
                return;
        case F_ELECTION:
                i = rng_below(r, s->n);
                raft_fixture_set_randomized_election_timeout(
                    &c->f, i,
                    rng_range(r, c->cfg.election_timeout,
                              2 * c->cfg.election_timeout));
                say(s, "fault: election timeout of n%u changed", i);
                s->faults_total++;
                return;
        default:
                return;
        }
        say(s, "fault %s a=n%u b=n%u mask=%x for %" PRIu64 " ms",
            fault_names[ft.kind], ft.a, ft.b, ft.mask,
            (uint64_t)(ft.heal_at - now));
        s->faults[s->n_faults++] = ft;
        s->faults_total++;
}
