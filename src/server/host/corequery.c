/* What the request core asks batond's host about the raft node and its
 * state machine: the query ops of struct gateway_host, answered from the
 * node (node.h) and from what this build is. */
#include "corequery.h"

#include <stddef.h>
#include <string.h>

#include "../../fsm/snapshot.h"
#include "../../proto/command.h"
#include "../raft/raftfsm.h"
#include "../snap/snaptail.h"

_Static_assert(offsetof(struct corequery, ops) == 0,
               "a query op finds its corequery from its ops");

static struct node *node_of(struct gateway_host *ops)
{
        return ((struct corequery *)ops)->node;
}

/* May take a restore and apply what was queued behind it, with its
 * events (raftfsm_lockfsm(); gateway.h). */
static const struct lockfsm *lockfsm_op(struct gateway_host *ops)
{
        return node_lockfsm(node_of(ops));
}

static const struct lockfsm *lockfsm_nowait_op(struct gateway_host *ops)
{
        return node_lockfsm_nowait(node_of(ops));
}

static void leader_op(struct gateway_host *ops, uint64_t *id,
                      const char **client_address)
{
        node_leader(node_of(ops), id, client_address);
}

static uint64_t last_applied_op(struct gateway_host *ops)
{
        return node_last_applied(node_of(ops));
}

static uint64_t last_index_op(struct gateway_host *ops)
{
        return node_last_index(node_of(ops));
}

/* What this node runs and writes, for a STATUS that asks for it. */
static void own_versions(struct proto_versions *v)
{
        static const char release[] = PACKAGE_VERSION;

        v->release.p = release;
        v->release.len = (uint8_t)strlen(release);
        v->command = COMMAND_VERSION;
        v->snapshot = SNAPSHOT_VERSION;
        v->container = SNAPTAIL_VERSION;
}

static void status_op(struct gateway_host *ops, struct proto_status *st,
                      struct proto_versions *v)
{
        node_status(node_of(ops), st);
        if (v != NULL) {
                own_versions(v);
        }
}

static void restores_op(struct gateway_host *ops, uint64_t *started,
                        bool *pending)
{
        struct raftfsm_restores rs;

        node_restores(node_of(ops), &rs);
        *started = rs.started;
        *pending = rs.pending;
}

static const struct acl *acl_op(struct gateway_host *ops)
{
        return node_acl(node_of(ops));
}

static uint64_t acl_epoch_op(struct gateway_host *ops)
{
        return node_acl_epoch(node_of(ops));
}

static const struct directory *directory_op(struct gateway_host *ops)
{
        return node_directory(node_of(ops));
}

static bool has_member_op(struct gateway_host *ops, uint64_t id)
{
        return node_has_member(node_of(ops), id, NULL);
}

/* Takes the digest it returns: true once per digest. */
static bool digest_op(struct gateway_host *ops, uint64_t *index,
                      uint64_t *digest)
{
        return node_digest_to_propose(node_of(ops), index, digest);
}

void corequery_init(struct corequery *q, struct node *node)
{
        struct gateway_host *ops = &q->ops;

        q->node = node;
        ops->lockfsm = lockfsm_op;
        ops->lockfsm_nowait = lockfsm_nowait_op;
        ops->leader = leader_op;
        ops->last_applied = last_applied_op;
        ops->last_index = last_index_op;
        ops->status = status_op;
        ops->restores = restores_op;
        ops->acl = acl_op;
        ops->acl_epoch = acl_epoch_op;
        ops->directory = directory_op;
        ops->has_member = has_member_op;
        ops->digest_to_propose = digest_op;
}
