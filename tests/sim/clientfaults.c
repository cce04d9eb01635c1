/* The faults of a test_simclient run: simnet's, between the clients and
 * the nodes, and the nodes' kills, its own or test_sim's raft-link faults
 * (faults.c). */
#include "clientfaults.h"

#include "faults.h"
#include "sim.h"

static void push_undo(struct world *wd, const struct simnet_fault *f,
                      uint64_t at)
{
        if (wd->n_undo < N_UNDO) {
                wd->undo[wd->n_undo++] = (struct undo){*f, at};
        } else {
                simnet_undo(wd->sc.net, f, at);
        }
}

static void heal_due(struct world *wd, uint64_t now, bool all)
{
        unsigned i = 0;

        while (i < wd->n_undo) {
                if (all || wd->undo[i].at <= now) {
                        simnet_undo(wd->sc.net, &wd->undo[i].f, now);
                        wd->undo[i] = wd->undo[--wd->n_undo];
                        continue;
                }
                i++;
        }
}

/* Kills and revivals of nodes go through simhost (the raft node and its
 * core) and simclients_sync() (the network), not simnet alone: a kill
 * simnet picks kills the node so while no other is down; a pause of a
 * node is not drawn. */
static void net_fault(struct world *wd, uint64_t now)
{
        struct simnet_fault f;

        simnet_pick(wd->sc.net, &f);
        if (f.kind == SIMNET_KILL && wd->killed == wd->r->s.n &&
            f.node < wd->r->s.n && !wd->raft_faults) {
                /* Any node, the leader or not, while none is down. */
                simhost_kill(&wd->r->h, f.node);
                wd->killed = f.node;
                wd->kills++;
                wd->revive_at = now + rng_range(&wd->rng, 500, 2500);
                return;
        }
        if (f.kind == SIMNET_KILL || f.kind == SIMNET_PAUSE_NODE) {
                return;
        }
        if (simnet_apply(wd->sc.net, &f, now) != 0) {
                return;
        }
        wd->faults++;
        if (f.kind != SIMNET_CUT) {
                push_undo(wd, &f, now + rng_range(&wd->rng, 200, 3000));
        }
}

static void isolate_client(struct world *wd, uint64_t now)
{
        unsigned start = rng_below(&wd->rng, wd->sc.n), i;
        uint64_t client = 1 + start;
        uint64_t heal = now + rng_range(&wd->rng, TTL_MS * 6 / 5, TTL_MS * 2);

        /* Preferably a client holding a lock, which holds it on through
         * the isolation, as a long critical section would: the cluster
         * ends its session and grants the lock to another meanwhile. */
        for (i = 0; i < wd->sc.n; i++) {
                unsigned c = (start + i) % wd->sc.n;
                struct wclient *w = &wd->w[c];
                int64_t until = simclient_clock(&wd->sc.cl[c], heal) + 100;

                if (w->phase == HOLD) {
                        client = c + 1;
                        w->release_at =
                            w->release_at > until ? w->release_at : until;
                        break;
                }
        }

        for (i = 0; i < wd->sc.n_nodes; i++) {
                struct simnet_fault f = {.kind = SIMNET_PARTITION,
                                         .client = client,
                                         .node = i,
                                         .dirs = SIMNET_BOTH};
                if (simnet_apply(wd->sc.net, &f, now) == 0) {
                        push_undo(wd, &f, heal);
                }
        }
        wd->isolations++;
}

/* The run's own kills: the serving leader every 2 to 5 s, revived 0.5
 * to 2.5 s later. */
static void drive_kills(struct world *wd, uint64_t now)
{
        struct run *r = wd->r;

        if (wd->killed < r->s.n && now >= wd->revive_at) {
                simhost_revive(&r->h, wd->killed);
                wd->killed = r->s.n;
                wd->kill_at = now + rng_range(&wd->rng, 2000, 5000);
        }
        if (wd->killed == r->s.n && now >= wd->kill_at) {
                unsigned l = simhost_serving(&r->h);
                if (l < r->s.n) {
                        simhost_kill(&r->h, l);
                        wd->killed = l;
                        wd->kills++;
                        wd->revive_at = now + rng_range(&wd->rng, 500, 2500);
                } else {
                        wd->kill_at = now + 200;
                }
        }
}

void clientfaults_drive(struct world *wd, uint64_t now)
{
        struct run *r = wd->r;

        heal_due(wd, now, false);
        if (wd->raft_faults) {
                /* Its kills are test_sim's, which leave a majority up. */
                drive_faults(&r->s, now);
                simhost_sync(&r->h);
        } else {
                drive_kills(wd, now);
        }
        if (now >= wd->fault_at) {
                net_fault(wd, now);
                wd->fault_at = now + rng_range(&wd->rng, 200, 800);
        }
        if (now >= wd->isolate_at) {
                isolate_client(wd, now);
                wd->isolate_at = now + rng_range(&wd->rng, 3000, 6000);
        }
        simclients_sync(&wd->sc, now);
}

void clientfaults_heal(struct world *wd, uint64_t now)
{
        struct run *r = wd->r;

        heal_due(wd, now, true);
        if (wd->killed < r->s.n) {
                simhost_revive(&r->h, wd->killed);
                wd->killed = r->s.n;
        }
        while (r->s.n_faults > 0) {
                fault_undo(&r->s, &r->s.faults[--r->s.n_faults]);
        }
        simhost_sync(&r->h);
        simclients_sync(&wd->sc, now);
}
