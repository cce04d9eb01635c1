/* test_sim's clients keep their sessions alive at the request core
 * (tests/sim/simhost.h) of the node they believe leads with KEEPALIVE
 * frames, and now and then fall silent for longer than their TTL, so
 * that the core's own deadline expires the session. */
#ifndef TESTS_SIM_LEASES_H
#define TESTS_SIM_LEASES_H

#include "sim.h"

/* Fill the OPEN `cmd` of client `cl`: a TTL of 2 to 6 s, and the hash of
 * the client's secret, which an ATTACH on a keepalive connection proves. */
void leases_open(struct sim *s, struct client *cl, struct command *cmd);

/* Keep `cl`'s session alive when due: a KEEPALIVE every third of its TTL
 * to the node it believes leads (cl->node, which a NOT_LEADER answer
 * moves), over a connection attached to the session; one time in ten it
 * falls silent for one and a half TTLs instead. */
void leases_drive(struct sim *s, struct client *cl, raft_time now);

/* Hang up every client's keepalive connection. */
void leases_close(struct sim *s);

#endif /* TESTS_SIM_LEASES_H */
