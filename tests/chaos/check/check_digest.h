/* Checker S16 of a chaos run: the replicas agree, as the nodes' state
 * digests say (src/server/raft/fsmdigest.h). */
#ifndef CHAOS_CHECK_CHECK_DIGEST_H
#define CHAOS_CHECK_CHECK_DIGEST_H

#include "checks.h"

/* The line a node logs when its digest differs from the leader's. */
#define CHECK_DIGEST_MISMATCH "state machine digest MISMATCH"

/* S16: no node logged a digest mismatch. The detail of a pass gives the
 * DIGEST entries the nodes applied, so that a run whose nodes compared
 * nothing says so. */
void check_s16(const struct run *r, struct check_result *res);

#endif /* CHAOS_CHECK_CHECK_DIGEST_H */
