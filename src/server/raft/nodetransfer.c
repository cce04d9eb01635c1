/* A node's leadership transfers: node_transfer(), node_transfer_for(), the
 * handover the monitor steps, and the one a diverged node starts when it
 * is elected (node.h, nodecore.h). */
#include <raft.h>
#include <uv.h>

#include "../../../include/baton/errors.h"
#include "../base/log.h"
#include "handover.h"
#include "node.h"
#include "nodecore.h"

/* The transfer ended (raft's callback), or took too long (the timer):
 * whichever comes first runs the caller's callback, once. */
void nodetransfer_done(struct node *n, bool timed_out)
{
        void (*cb)(struct node *) = n->transfer_cb;
        void (*cb_for)(struct node *, void *) = n->transfer_for_cb;
        void *data = n->transfer_data;

        n->transfer_cb = NULL;
        n->transfer_for_cb = NULL;
        n->transfer_data = NULL;
        n->handover = false;
        uv_timer_stop(&n->transfer_timer);
        if (cb == NULL && cb_for == NULL) {
                return;
        }
        if (timed_out) {
                log_warn("leadership transfer did not finish in %u ms; "
                         "going on without it",
                         NODE_TRANSFER_BOUND(n->cfg));
        }
        if (cb_for != NULL) {
                cb_for(n, data);
        } else {
                cb(n);
        }
}

static void on_transfer(struct raft_transfer *req)
{
        nodetransfer_done(req->data, false);
}

static void on_transfer_timeout(uv_timer_t *t)
{
        nodetransfer_done(t->data, true);
}

/* Run from the monitor while a handover waits: once a voter holds the
 * whole log (or the wait is over), libraft takes the transfer from here.
 * Nothing is proposed meanwhile, so followers catch up and stay caught up;
 * the voter's stored log then matches what TimeoutNow carries. */
void nodetransfer_step(struct node *n)
{
        struct node_core *c = n->core;
        uint64_t to;
        int rv;

        if (raft_state(&c->raft) != RAFT_LEADER) {
                nodetransfer_done(n, false); /* someone else leads already */
                return;
        }
        to = handover_caught_up(&c->raft, n->handover_to);
        if (to == 0 &&
            uv_now(n->loop) - n->handover_since < NODE_HANDOVER_WAIT(n->cfg)) {
                return;
        }
        n->handover = false;
        c->transfer.data = n;
        rv = raft_transfer(&c->raft, &c->transfer,
                           to != 0 ? to : n->handover_to, on_transfer);
        if (rv != 0) {
                log_warn("leadership transfer: %s", raft_strerror(rv));
                nodetransfer_done(n, false);
        }
}

int node_transfer(struct node *n, uint64_t to, void (*cb)(struct node *n))
{
        int rv = node_transfer_for(n, to, NULL, NULL);

        if (rv == 0) {
                n->transfer_cb = cb;
        }
        return rv;
}

int node_transfer_for(struct node *n, uint64_t to,
                      void (*cb)(struct node *n, void *data), void *data)
{
        struct node_core *c = n->core;

        if (raft_state(&c->raft) != RAFT_LEADER || n->transfer_cb != NULL ||
            n->transfer_for_cb != NULL || n->handover ||
            raft_transferee(&c->raft) != 0) {
                return BATON_ENOTLEADER;
        }
        if (!handover_possible(&c->raft, to)) {
                return BATON_EINVAL;
        }
        n->transfer_for_cb = cb;
        n->transfer_data = data;
        n->handover = true;
        n->handover_to = to;
        n->handover_since = uv_now(n->loop);
        /* libraft 0.22.1 never runs the callback when the node ends up
         * candidate or without a leader (every peer stopping too): bound
         * the wait so that a SIGTERM always ends the process. */
        uv_timer_start(&n->transfer_timer, on_transfer_timeout,
                       NODE_TRANSFER_BOUND(n->cfg), 0);
        return 0;
}

/*
 * Elected, with a state the digests showed is not the leader's
 * (fsmdigest.h): it must not serve from that state, nor propose its
 * digests, which would make every other replica look diverged. It says
 * so once a term and hands leadership to a caught-up voter; with none
 * (a one-node cluster, or no voter caught up within the handover's
 * bound), it leads without serving until it restarts, which a diverged
 * node needs anyway (docs/operations.md).
 */
void nodetransfer_diverged(struct node *n, uint64_t term)
{
        int rv;

        if (n->diverged_term == term) {
                return;
        }
        n->diverged_term = term;
        rv = node_transfer(n, 0, NULL);
        log_error("elected in term %llu, but this node's state diverged from "
                  "the leader's at entry %llu: not serving; %s",
                  (unsigned long long)term,
                  (unsigned long long)n->core->digest.diverged_index,
                  rv == 0 ? "handing leadership over"
                          : "no voter to hand leadership to");
}
