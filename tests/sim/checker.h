/* The checker of a simulated run, once every fault is healed and the
 * cluster has converged: checks (a) to (g) of test_sim.c. */
#ifndef TESTS_SIM_CHECKER_H
#define TESTS_SIM_CHECKER_H

#include <stddef.h>

#include "sim.h"

/* 0 if the run passes every check, else -1 with the first failure in
 * `reason` (`cap` bytes). */
int check_run(struct sim *s, char *reason, size_t cap);

#endif /* TESTS_SIM_CHECKER_H */
