/* Snapshots in a simulated cluster: InstallSnapshots counted and traced,
 * and a node's snapshot taken and restored through the raft glue. */
#ifndef TESTS_SIMSNAP_H
#define TESTS_SIMSNAP_H

#include "simcluster.h"

/* InstallSnapshot messages sent by any node so far (should stay 0). */
unsigned simsnap_n_install(struct simcluster *c);

/*
 * Take node i's snapshot through its struct raft_fsm (as raft does), restore
 * it into a fresh raftfsm through fsm->restore, and compare the two
 * machines' lockfsm_snapshot() bytes. 0 when identical; -1 with the reason
 * in c->errmsg.
 */
int simsnap_roundtrip(struct simcluster *c, unsigned i);

/* In verbose runs, says when an InstallSnapshot goes out and where every
 * node stands (simcluster_step() calls it). */
void simsnap_trace_install(struct simcluster *c);

#endif /* TESTS_SIMSNAP_H */
