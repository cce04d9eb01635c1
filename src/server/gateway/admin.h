/* Cluster administration: MEMBER_ADD, MEMBER_REMOVE and TRANSFER, carried
 * out through the node's configuration changes and leadership transfer. */
#ifndef SERVER_ADMIN_H
#define SERVER_ADMIN_H

#include <stdint.h>

#include "../../proto/proto.h"
#include "gwconn.h"
#include "core.h"

/*
 * Each takes one frame of its type from `c` (borrowed; `body` only during
 * the call). A malformed body fails the connection; a node that does not
 * serve answers NOT_LEADER. Otherwise the request owns a record of its own
 * until raft has finished with it, and is answered with a RESULT: a bare
 * status (0, or the BATON_E* code that stopped it, logged), or for a
 * TRANSFER that happened, kind TRANSFERRED. BATON_EUNKNOWN when
 * leadership was lost on the way. A client that leaves meanwhile loses
 * only the answer. Every refusal below is decided from raft's
 * configuration and the member directory before anything changes.
 */

/*
 * Check that a node answers at the raft address as that member (through
 * the raft transport, trying for up to 2 s: else BATON_EUNREACHABLE,
 * nothing changed), record the
 * member's addresses in the directory (a MEMBER entry), add it as a
 * spare, then make it a voter once it has caught up. A member that stops
 * answering while it catches up is answered BATON_EUNREACHABLE and left a
 * spare. Refused before anything is recorded: an id of 0 or an address
 * the config's member lines would refuse (BATON_EINVAL), an id that is a
 * member with other addresses (BATON_EIDINUSE), an address another member
 * has (BATON_EADDRINUSE), another add under way (BATON_ECANTCHANGE). An
 * add of a member that is one already with these addresses carries on
 * where an earlier one stopped (a spare is promoted; a voter is answered 0
 * at once), and one that comes while the same add runs is answered with
 * it. The new node runs with join = true.
 */
void admin_member_add(struct gateway *g, struct gateway_conn *c,
                      const struct proto_header *h, const uint8_t *body);

/* Take the member out of raft's configuration, then out of the directory
 * (best effort). BATON_ENOMEMBER when it is not in the configuration. */
void admin_member_remove(struct gateway *g, struct gateway_conn *c,
                         const struct proto_header *h, const uint8_t *body);

/*
 * Hand leadership to the member named (0: any other voter), and answer
 * once it is done (gateway_host.transfer: at most three election timeouts):
 * TRANSFERRED with this node's id and the leader's now (0: none known
 * yet), or BATON_EUNREACHABLE when this node still leads. Refused at once:
 * this node (BATON_EISLEADER), an id that is not a member
 * (BATON_ENOMEMBER), a spare or standby, or no other voter for 0
 * (BATON_ENOTVOTER).
 */
void admin_transfer(struct gateway *g, struct gateway_conn *c,
                    const struct proto_header *h, const uint8_t *body);

#endif /* SERVER_ADMIN_H */
