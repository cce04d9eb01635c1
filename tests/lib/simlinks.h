/* Faults of a simulated cluster's nodes and links: kill and revive,
 * saturate, disconnect, isolate, heal; counted so that overlapping faults
 * heal independently. */
#ifndef TESTS_SIMLINKS_H
#define TESTS_SIMLINKS_H

#include "simcluster.h"

/*
 * Faults. Each call counts, and the fault lasts until as many undo calls:
 * overlapping faults heal independently.
 *
 * saturate(i, j) drops messages from i to j silently; disconnect(i, j)
 * makes i's sends to j fail with RAFT_NOCONNECTION. (libraft 0.15.0 turned
 * a failed send into an InstallSnapshot, and the simulation degraded
 * disconnects to drops; 0.22.1 ignores failed sends, and 1,500 seeds with
 * real disconnects sent none.)
 */
void simlinks_kill(struct simcluster *c, unsigned i);
void simlinks_revive(struct simcluster *c, unsigned i);
void simlinks_saturate(struct simcluster *c, unsigned i, unsigned j);
void simlinks_desaturate(struct simcluster *c, unsigned i, unsigned j);
void simlinks_disconnect(struct simcluster *c, unsigned i, unsigned j);
void simlinks_reconnect(struct simcluster *c, unsigned i, unsigned j);
/* Saturate (undo: desaturate) both directions between i and every other
 * node. */
void simlinks_isolate(struct simcluster *c, unsigned i);
void simlinks_unisolate(struct simcluster *c, unsigned i);
/* Undo every fault still in place, whatever its count. */
void simlinks_heal(struct simcluster *c);
/* Nodes killed or with any saturated/disconnected link right now. */
unsigned simlinks_n_down(struct simcluster *c);

#endif /* TESTS_SIMLINKS_H */
