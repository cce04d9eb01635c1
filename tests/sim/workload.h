/* The simulated workload: client sessions issuing lock commands through
 * the current leader and retrying them, and the EXPIRE and TIMEOUT
 * commands the leader proposes itself. */
#ifndef TESTS_SIM_WORKLOAD_H
#define TESTS_SIM_WORKLOAD_H

#include "sim.h"

/* The lock names the clients use. They are static so that a stored
 * command's name pointer stays valid; the last one has the longest length
 * allowed, COMMAND_NAME_MAX (255). */
extern const char *const lock_names[N_NAMES];

/* The simcluster listener: the events a leader applies are what batond
 * uses to answer clients that wait. `data` is the struct sim. */
void on_leader_event(void *data, unsigned node, const struct simevent *ev);

/* Lets client `cl` send its next request, or retry its outstanding one,
 * when its time has come. */
void drive_client(struct sim *s, struct client *cl, raft_time now);

/* Proposes the leader's own commands that are due: TIMEOUTs of waits
 * whose time ran out, and now and then an early TIMEOUT or an EXPIRE. */
void drive_server(struct sim *s, raft_time now);

#endif /* TESTS_SIM_WORKLOAD_H */
