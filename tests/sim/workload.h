/* The simulated workload: client sessions sending lock commands to the
 * request core they believe leads, and an operator's REVOKEs. */
#ifndef TESTS_SIM_WORKLOAD_H
#define TESTS_SIM_WORKLOAD_H

#include "sim.h"

/* The lock names the clients use. They are static so that a stored
 * command's name pointer stays valid; the last one has the longest length
 * allowed, COMMAND_NAME_MAX (255). */
extern const char *const lock_names[N_NAMES];

/* Client `cl` reads the answers that came (frames.h), updating its view
 * of its session from each final one, which it records (answers.h), and
 * sends its next request when its time has come and it waits on none. */
void drive_client(struct sim *s, struct client *cl, raft_time now);

/* When due, an operator's REVOKE or REVOKE_LOCK, sent to the serving core
 * s->h; and reads the core's answers to the operator. */
void drive_operator(struct sim *s, raft_time now);

/* Hang up the operator's connection, before the cores shut down. */
void operator_close(struct sim *s);

#endif /* TESTS_SIM_WORKLOAD_H */
