/* One batond Raft node: raft_uv on a data dir, bootstrap, leadership. */
#ifndef SERVER_NODE_H
#define SERVER_NODE_H

#include <stdbool.h>
#include <stdint.h>

#include <raft.h>
#include <raft/uv.h>
#include <uv.h>

#include "config.h"
#include "raftfsm.h"

struct node;

/*
 * Leadership as the rest of batond sees it. A node *serves* once it is
 * leader and a barrier of its own term has been applied: only then is its
 * state machine known to hold every entry an earlier leader committed (the
 * no-op a new leader appends is not visible through raft's public calls;
 * docs/raft.md). `ready` and `lost` alternate, starting with `ready`.
 */
struct node_callbacks {
        void (*ready)(void *data);
        void (*lost)(void *data);
        void *data;
};

struct node {
        uv_loop_t *loop;
        const struct config *cfg;
        struct raft_uv_transport transport;
        /* raft_uv_tcp's own listen and connect, which the node wraps to
         * turn Nagle's algorithm off on peer connections. */
        int (*tcp_listen)(struct raft_uv_transport *t, raft_uv_accept_cb cb);
        int (*tcp_connect)(struct raft_uv_transport *t,
                           struct raft_uv_connect *req, raft_id id,
                           const char *address, raft_uv_connect_cb cb);
        raft_uv_accept_cb raft_accept;
        struct raft_io io;
        struct raft raft;
        struct raftfsm rf;
        uv_prepare_t monitor;
        struct raft_barrier barrier;
        bool barrier_pending;
        bool serving;
        raft_term serving_term;
        struct node_callbacks cb;
        struct raft_transfer transfer;
        uv_timer_t transfer_timer;
        void (*transfer_cb)(struct node *n);
        void (*close_cb)(struct node *n);
        char errmsg[256];
};

/*
 * Set up raft on cfg->data_dir (created if missing) with the settings of
 * `cfg` (borrowed for the node's life), bootstrap the configured members if
 * the directory is pristine, and start. Returns 0 or a BATON_E* code with
 * the reason in n->errmsg; on failure nothing is left to clean up.
 */
int node_start(struct node *n, uv_loop_t *loop, const struct config *cfg,
               const struct node_callbacks *cb);

/* Stop raft and close every handle; `cb` runs once everything is closed
 * (pending applies and barriers have been failed by then). */
void node_close(struct node *n, void (*cb)(struct node *n));

/* How long a leadership transfer may take before node_transfer() gives up
 * on it: three election timeouts, in milliseconds. */
#define NODE_TRANSFER_BOUND(cfg) (3 * (cfg)->election_timeout_ms)

/* Hand leadership to another voter, then run `cb` (SIGTERM path), at the
 * latest NODE_TRANSFER_BOUND() later, whether the transfer finished or
 * not. Returns BATON_ENOTLEADER when this node does not lead. */
int node_transfer(struct node *n, uint64_t to, void (*cb)(struct node *n));

bool node_serving(const struct node *n);

/* The known leader's id and client address ("" and 0 when unknown). */
void node_leader(struct node *n, uint64_t *id, const char **client_address);

/* The client address of a member, or "" when it is not known. */
const char *node_client_address(const struct node *n, uint64_t id);

/* Translate a libraft error code into the nearest BATON_E* code. */
int node_error(int raft_rv);

#endif /* SERVER_NODE_H */
