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
 * machines' lockfsm_snapshot() bytes and access lists. 0 when identical;
 * -1 with the reason in c->errmsg.
 */
int simsnap_roundtrip(struct simcluster *c, unsigned i);

/* A raftfsm of the cluster's limits, attached to no raft, for restores
 * (raftfsm_close() it). 0, or -1 with the reason in c->errmsg. */
int simsnap_fresh(struct simcluster *c, struct raftfsm *fresh);

/*
 * Node i's state as its snapshot would be now (raftfsm_backup(): the
 * image it keeps and the entries applied since, replayed on restore),
 * restored through fsm->restore into `into` (simsnap_fresh()'s, restored
 * into any number of times: each restore replaces its whole state): the
 * index it is at, and the digest of the access list the restore made
 * (simacl.h), which must be the one every node had after applying that
 * index. Any time during a run. 0; 1 when the node has no snapshot to
 * hand now (an image still being made: BATON_EBUSY); -1 with the reason
 * in c->errmsg.
 */
int simsnap_restore_acl(struct simcluster *c, unsigned i, struct raftfsm *into,
                        uint64_t *index, uint64_t *digest);

/* In verbose runs, says when an InstallSnapshot goes out and where every
 * node stands (simcluster_step() calls it). */
void simsnap_trace_install(struct simcluster *c);

#endif /* TESTS_SIMSNAP_H */
