/* A node's replicated access list: node_acl(), node_acl_epoch() and
 * node_set_acl_cb() over its state machine (node.h). */
#include "node.h"
#include "nodecore.h"

const struct acl *node_acl(const struct node *n)
{
        return raftfsm_acl(&n->core->rf);
}

uint64_t node_acl_epoch(const struct node *n)
{
        return raftfsm_acl_epoch(&n->core->rf);
}

void node_set_acl_cb(struct node *n,
                     void (*cb)(void *data, uint64_t index,
                                const struct command *c, int status),
                     void *data)
{
        raftfsm_set_acl_cb(&n->core->rf, cb, data);
}
