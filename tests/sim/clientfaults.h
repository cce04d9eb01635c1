/* The faults of a test_simclient run: simnet's, between the clients and
 * the nodes, and the nodes' kills, its own or test_sim's raft-link faults
 * (faults.c). */
#ifndef TESTS_SIM_CLIENTFAULTS_H
#define TESTS_SIM_CLIENTFAULTS_H

#include <stdint.h>

#include "clientworld.h"

/*
 * Every 0.2 to 0.8 s simnet_pick()'s fault strikes (cuts, partitions of
 * a client from a node, a node's clients isolated, pauses of a client,
 * latency spikes, healed 0.2 to 3 s later); every 3 to 6 s a client is
 * cut off from every node for 1.2 to 2 TTLs. The nodes: without
 * `raft_faults`, the serving leader is killed every 2 to 5 s and a kill
 * simnet picks kills a node while none is down, each revived 0.5 to 2.5
 * s later; with it, test_sim's faults strike the raft links instead
 * (drive_faults(): kills of the leader or any node, its isolation,
 * partitions, one-way and two-way link cuts, saturated links, latency,
 * election timeouts), simhost dropping and starting the cores to match.
 */

/* What is due at virtual time `now`: heals, then new faults. */
void clientfaults_drive(struct world *wd, uint64_t now);
/* Heal everything and revive every node, at the run's end. */
void clientfaults_heal(struct world *wd, uint64_t now);

#endif /* TESTS_SIM_CLIENTFAULTS_H */
