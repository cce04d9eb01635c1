/* A digest of one simulated run's whole history, so that two runs of one
 * seed can be compared by more than their verdicts. */
#ifndef TESTS_SIM_DIGEST_H
#define TESTS_SIM_DIGEST_H

#include <stdint.h>

#include "sim.h"

/*
 * Field by field (never a struct's padding), each value chained through
 * hash_u64() (src/lib/hmap.h) and each byte string through 64-bit
 * FNV-1a: every entry each node applied (index, bytes, outcome, the
 * digest of its access list after an ACL entry), every
 * event it reported and the watch frames its watchers were told; where
 * each node's raft and store ended (term, vote, state, last, commit and
 * applied index, last snapshot); how often its messages were patched
 * (simwire.h); every proposal made through simcluster (node, index,
 * state, status, times, result); every final answer a client was told
 * (the request, the RESULT) and how often frames were sent again,
 * redirected, answered BATON_EUNKNOWN or cut; and the run's
 * steps, virtual time, faults, MULTI counts, violations and anomalies.
 * Call it once the run has converged (or failed to), before
 * simcluster_close().
 */
uint64_t digest_run(struct sim *s);

#endif /* TESTS_SIM_DIGEST_H */
