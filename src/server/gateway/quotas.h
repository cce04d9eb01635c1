/* Quotas per identity (src/fsm/acl.h) at a node's gateway: the principal
 * an OPEN counts for, the watches an identity has open on this node, and
 * its requests per second here. */
#ifndef SERVER_QUOTAS_H
#define SERVER_QUOTAS_H

#include <stdbool.h>
#include <stdint.h>

#include "../../proto/proto.h"
#include "gateway.h"
#include "gwconn.h"
#include "pending.h"

struct gateway;

/*
 * A client of the admin role (and every client of a node without TLS) is
 * not subject to quotas, nor is anyone while the applied access list has
 * none. Everyone else's OPEN carries the principal of its certificate
 * identity (acl_principal()), which the state machine counts sessions,
 * locks and waits by and refuses at the limits, alike on every node;
 * what a client wrote there is never trusted. Watches and requests per
 * second are counted by each node for the connections it serves.
 */

/* The principal `c`'s OPENs count for: 0 when none (see above). */
uint64_t quotas_principal(struct gateway *g, const struct gateway_conn *c);

/* Set up and free the node's counts of requests per identity. */
void quotas_init(struct gateway *g);
void quotas_close(struct gateway *g);

/*
 * Whether request `h` of `c` may go on by its identity's quotas on this
 * node: its rate (every request but KEEPALIVE, ATTACH, UNWATCH and the
 * probes counts, against a bucket of `rate` tokens refilled at `rate`
 * per second, shared by the identity's connections here) and, for a
 * WATCH, its watches open here. false when refused: answered with a
 * RESULT of BATON_EQUOTA, the quota's kind in `waiters` and its limit in
 * `count`, logged and in the audit trail.
 */
bool quotas_admit(struct gateway *g, const struct gateway_now *now,
                  struct gateway_conn *c, const struct proto_header *h,
                  const uint8_t *body);

/* Write quotas_principal() into the OPEN `p` (its buffer holds
 * COMMAND_MAX_SIZE bytes): 0, or the status that answers it. */
int quotas_take_open(struct gateway *g, const struct gateway_conn *c,
                     struct pending *p);

#endif /* SERVER_QUOTAS_H */
