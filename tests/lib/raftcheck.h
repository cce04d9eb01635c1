/* Watching a simulated cluster for what libraft must never do: commits
 * without a majority, a node shut down. */
#ifndef TESTS_RAFTCHECK_H
#define TESTS_RAFTCHECK_H

#include "simcluster.h"

/* Checks the cluster after a step for what libraft must never do (see
 * simcluster_step()): a leader committing an entry fewer than a majority
 * hold (recorded in c->bogus, for simcluster_bogus_commit()), a node shut
 * down (RAFT_UNAVAILABLE). Each counts in c->violations; the first is
 * described in c->violation. */
void raftcheck_step(struct simcluster *c);

#endif /* TESTS_RAFTCHECK_H */
