/* A node's state digests: node_digest() and node_digest_to_propose() over
 * its struct fsmdigest (node.h). */
#include "fsmdigest.h"
#include "node.h"
#include "nodecore.h"

const struct fsmdigest *node_digest(const struct node *n)
{
        return &n->core->digest;
}

bool node_digest_to_propose(struct node *n, uint64_t *index, uint64_t *digest)
{
        return fsmdigest_to_propose(&n->core->digest, index, digest);
}
