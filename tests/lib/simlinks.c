/* Faults of a simulated cluster's nodes and links, counted so that
 * overlapping faults heal independently. */
#include "simlinks.h"

#include <assert.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../include/baton.h"

void simlinks_kill(struct simcluster *c, unsigned i)
{
        if (c->killed[i]++ == 0) {
                raft_fixture_kill(&c->f, i);
                simcluster_trace(c, "fault: kill n%u", i);
        }
}

void simlinks_revive(struct simcluster *c, unsigned i)
{
        assert(c->killed[i] > 0);
        if (--c->killed[i] == 0) {
                raft_fixture_revive(&c->f, i);
                simcluster_trace(c, "heal: revive n%u", i);
        }
}

/* Bring the fixture's view of the link i->j in line with the faults on it:
 * saturated (silent drop) or disconnected (sends fail) or neither. */
static void sync_link(struct simcluster *c, unsigned i, unsigned j)
{
        bool drop = c->saturated[i][j] > 0;
        bool fail = c->disconnected[i][j] > 0;

        if (drop != c->fx_saturated[i][j]) {
                c->fx_saturated[i][j] = drop;
                if (drop) {
                        raft_fixture_saturate(&c->f, i, j);
                } else {
                        raft_fixture_desaturate(&c->f, i, j);
                }
                simcluster_trace(c, "link n%u->n%u %s", i, j,
                                 drop ? "drops messages" : "delivers again");
        }
        if (fail != c->fx_disconnected[i][j]) {
                c->fx_disconnected[i][j] = fail;
                if (fail) {
                        raft_fixture_disconnect(&c->f, i, j);
                } else {
                        raft_fixture_reconnect(&c->f, i, j);
                }
                simcluster_trace(c, "link n%u->n%u %s", i, j,
                                 fail ? "fails sends" : "connected again");
        }
}

void simlinks_saturate(struct simcluster *c, unsigned i, unsigned j)
{
        if (c->saturated[i][j]++ == 0) {
                simcluster_trace(c, "fault: saturate n%u->n%u", i, j);
        }
        sync_link(c, i, j);
}

void simlinks_desaturate(struct simcluster *c, unsigned i, unsigned j)
{
        assert(c->saturated[i][j] > 0);
        if (--c->saturated[i][j] == 0) {
                simcluster_trace(c, "heal: desaturate n%u->n%u", i, j);
        }
        sync_link(c, i, j);
}

void simlinks_disconnect(struct simcluster *c, unsigned i, unsigned j)
{
        if (c->disconnected[i][j]++ == 0) {
                simcluster_trace(c, "fault: disconnect n%u->n%u", i, j);
        }
        sync_link(c, i, j);
}

void simlinks_reconnect(struct simcluster *c, unsigned i, unsigned j)
{
        assert(c->disconnected[i][j] > 0);
        if (--c->disconnected[i][j] == 0) {
                simcluster_trace(c, "heal: reconnect n%u->n%u", i, j);
        }
        sync_link(c, i, j);
}

void simlinks_isolate(struct simcluster *c, unsigned i)
{
        unsigned j;

        for (j = 0; j < c->cfg.n; j++) {
                if (j != i) {
                        simlinks_saturate(c, i, j);
                        simlinks_saturate(c, j, i);
                }
        }
}

void simlinks_unisolate(struct simcluster *c, unsigned i)
{
        unsigned j;

        for (j = 0; j < c->cfg.n; j++) {
                if (j != i) {
                        simlinks_desaturate(c, i, j);
                        simlinks_desaturate(c, j, i);
                }
        }
}

void simlinks_heal(struct simcluster *c)
{
        unsigned i;
        unsigned j;

        for (i = 0; i < c->cfg.n; i++) {
                for (j = 0; j < c->cfg.n; j++) {
                        if (c->saturated[i][j] > 0) {
                                c->saturated[i][j] = 1;
                                simlinks_desaturate(c, i, j);
                        }
                        if (c->disconnected[i][j] > 0) {
                                c->disconnected[i][j] = 1;
                                simlinks_reconnect(c, i, j);
                        }
                }
                if (c->killed[i] > 0) {
                        c->killed[i] = 1;
                        simlinks_revive(c, i);
                }
        }
}

unsigned simlinks_n_down(struct simcluster *c)
{
        unsigned n = 0;
        unsigned i;
        unsigned j;

        for (i = 0; i < c->cfg.n; i++) {
                bool down = c->killed[i] > 0;

                for (j = 0; j < c->cfg.n && !down; j++) {
                        down = c->saturated[i][j] > 0 ||
                               c->saturated[j][i] > 0 ||
                               c->disconnected[i][j] > 0 ||
                               c->disconnected[j][i] > 0;
                }
                n += down;
        }
        return n;
}
