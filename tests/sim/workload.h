/* The simulated workload: client sessions issuing lock commands through
 * the current leader and retrying them, and an operator's REVOKEs. */
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

/* When due, an operator's REVOKE or REVOKE_LOCK, sent to the serving core
 * s->h; and reads the core's answers to the operator. */
void drive_operator(struct sim *s, raft_time now);

/* Hang up the operator's connection, before the cores shut down. */
void operator_close(struct sim *s);

#endif /* TESTS_SIM_WORKLOAD_H */
