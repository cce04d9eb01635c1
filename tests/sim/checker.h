/* The checker of a simulated run, once every fault is healed and the
 * cluster has converged: checks (a) to (c), (f) and (g) of test_sim.c
 * (answers.h has (d)). */
#ifndef TESTS_SIM_CHECKER_H
#define TESTS_SIM_CHECKER_H

#include <stddef.h>

#include "sim.h"

/* Checks (a), (b), (b') and (g) alone: the replicas agree, and raft did
 * nothing it must not; and the access lists agree at every index and
 * follow the log (aclcheck.h). They hold whoever proposed the entries (the
 * simulation's stand-in or batond's request core, tests/sim/simhost.h).
 * 0, or -1 with the first failure in `reason`. */
int check_replicas(struct sim *s, char *reason, size_t cap);

/* Check (c) and the exactly-once half of (f) over node 0's log, whoever
 * proposed it: entries of one command or batches of them (each command
 * with its own RESULT event), grants deferred to an entry's start. Counts
 * the multi-locks into `s`. 0, or -1 with the first failure in `reason`. */
int check_log(struct sim *s, char *reason, size_t cap);

#endif /* TESTS_SIM_CHECKER_H */
