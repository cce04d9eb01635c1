/* The request core's raft requests in batond: the request ops of struct
 * gateway_host (proposals, barriers, membership changes, probes and
 * leadership transfers) as the raft node's requests, whose answers go
 * back into the core with the time. */
#ifndef SERVER_COREREQ_H
#define SERVER_COREREQ_H

#include "../gateway/gateway.h"

/*
 * Fill the request ops of `ops` (entry_alloc, entry_free, propose,
 * barrier, change, probe, transfer), whose `data` is the struct corehost
 * (corehost.h) of the node they ask. Each maps to node.h's call of the
 * same meaning, keeping the node's request in the gateway_req's host
 * words, and each answer becomes one gateway_on_done() of the host's core,
 * with the clocks read then: node_request_cb for a proposal, barrier or
 * change; node_probe_cb for a probe; node_transfer_for()'s callback for a
 * transfer (status 0). The node answers every request it took, also when
 * it closes, which it does after the core closed: those answers still go
 * to the core, whose records are then only freed (gateway.h). Used only
 * from the loop's thread.
 */
void corereq_init(struct gateway_host *ops);

#endif /* SERVER_COREREQ_H */
