/* What the request core asks batond's host about the raft node and its
 * state machine: the query ops of struct gateway_host, answered from the
 * node (node.h) and from what this build is. */
#ifndef SERVER_COREQUERY_H
#define SERVER_COREQUERY_H

#include "../gateway/gateway.h"
#include "../raft/node.h"

/*
 * The core's host ops with the node they ask. `ops` comes first, so that
 * a query op finds its node from the ops the core hands back; the host
 * fills the other ops and `ops.data` itself. Caller-allocated.
 */
struct corequery {
        struct gateway_host ops;
        struct node *node;
};

/*
 * Fill the query ops of `q->ops` (lockfsm, lockfsm_nowait, leader,
 * last_applied, last_index, status, restores, acl, acl_epoch, directory,
 * has_member, digest_to_propose) with calls of `node`'s, which is
 * borrowed for as long as they are used. Each answer is node.h's, as the
 * core used to ask it itself: nothing is cached, so each says what the
 * node knows at the moment the core asks (gateway.h says what the core
 * may assume of each). Used only from the loop's thread.
 */
void corequery_init(struct corequery *q, struct node *node);

#endif /* SERVER_COREQUERY_H */
