/* The simulated faults: kills, isolations, partitions, lost and saturated
 * links, latency and election timeouts, each healed after a while. */
#ifndef TESTS_SIM_FAULTS_H
#define TESTS_SIM_FAULTS_H

#include "sim.h"

/* Heals the faults that are due and, when it is time, injects a new one
 * that leaves a majority up (but for a short, rare split of everyone). */
void drive_faults(struct sim *s, raft_time now);

/* Heals fault `ft`. */
void fault_undo(struct sim *s, struct fault *ft);

#endif /* TESTS_SIM_FAULTS_H */
