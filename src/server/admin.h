/* Cluster administration: MEMBER_ADD, MEMBER_REMOVE and TRANSFER, carried
 * out through the node's configuration changes and leadership transfer. */
#ifndef SERVER_ADMIN_H
#define SERVER_ADMIN_H

#include <stdint.h>

#include "../proto/proto.h"
#include "conn.h"
#include "gateway.h"

/*
 * Each takes one frame of its type from `c` (borrowed; `body` only during
 * the call). A malformed body fails the connection; a node that does not
 * serve answers NOT_LEADER. Otherwise the request owns a record of its own
 * until raft has finished with it, and is answered with a bare status: 0,
 * or the BATON_E* code that stopped it (logged), BATON_EUNKNOWN when
 * leadership was lost on the way. A client that leaves meanwhile loses
 * only the answer.
 */

/* Record the member's addresses in the directory (a MEMBER entry), add it
 * as a spare, then make it a voter once it has caught up. The new node runs
 * with join = true. An id of 0, or an id or raft address already in the
 * configuration, is BATON_EINVAL, refused before anything is recorded. */
void admin_member_add(struct gateway *g, struct conn *c,
                      const struct proto_header *h, const uint8_t *body);

/* Take the member out of raft's configuration, then out of the directory
 * (best effort). */
void admin_member_remove(struct gateway *g, struct conn *c,
                         const struct proto_header *h, const uint8_t *body);

/* Hand leadership to the member named (0: any voter); answered at once
 * with whether the transfer started (node_transfer()). */
void admin_transfer(struct gateway *g, struct conn *c,
                    const struct proto_header *h, const uint8_t *body);

#endif /* SERVER_ADMIN_H */
