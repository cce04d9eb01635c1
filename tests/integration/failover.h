/* The integration test's failover measurement (--failover-rounds): how
 * long a client waits for its next grant after kill -9 of the leader. */
#ifndef TESTS_INTEGRATION_FAILOVER_H
#define TESTS_INTEGRATION_FAILOVER_H

#include "scenario.h"

/*
 * Kills the serving leader of an `n`-node cluster `rounds` times
 * (restarting it on its data dir and waiting for every node to catch up
 * between rounds) and prints the time from kill() to the next granted
 * ACQUIRE, retried with the same seq across all endpoints with 300 ms
 * tries. Returns the exit status: 0, or 1 when a round failed or found a
 * release lost.
 */
int failover(struct run *r, unsigned n, unsigned rounds);

#endif /* TESTS_INTEGRATION_FAILOVER_H */
