/* batond's request gateway: takes every client frame, and proposes lock
 * commands to raft in one batch entry per loop iteration (the write path). */
#ifndef SERVER_GATEWAY_H
#define SERVER_GATEWAY_H

#include <uv.h>

#include "../net/conn.h"
#include "../raft/node.h"
#include "core.h"

/* Set up on a started node (`node` and `cfg` borrowed for the gateway's
 * life). Installs itself as the node's event sink. 0 or a BATON_E* code
 * (the apply log could not be opened); on failure nothing is left to clean
 * up. */
int gateway_init(struct gateway *g, uv_loop_t *loop, struct node *node,
                 const struct config *cfg);
/* Answer everything pending (NOT_LEADER, or outcome unknown for what was
 * proposed), close the deadline timer and the apply log. */
void gateway_close(struct gateway *g);

/* conn_frame_cb (`data` is the gateway): answer or queue the request. */
void gateway_on_frame(void *data, struct conn *c, const struct proto_header *h,
                      const uint8_t *body);
/* conn_gone_cb: requests of `c` already proposed still run; only their
 * answers are dropped. */
void gateway_on_gone(void *data, struct conn *c);

/* node_callbacks (`data` is the gateway). ready: restart the leader's
 * clocks and queue what was held for proposal or a barrier. lost: drop the
 * clocks and answer what this node holds, as gateway_close() does. */
void gateway_on_ready(void *data);
void gateway_on_lost(void *data);
/* node_callbacks.restored: the node installed a leader's snapshot; every
 * watch that had not seen everything up to it ends (watches_reset()) now,
 * not at the next event the node applies, which may be long in coming. */
void gateway_on_restored(void *data);

/* End of a loop iteration: propose what arrived, start the read barrier. */
void gateway_flush(struct gateway *g);

#endif /* SERVER_GATEWAY_H */
