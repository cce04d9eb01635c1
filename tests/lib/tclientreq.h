/* One request of a tclient (tclient.h) on the wire: sent, sent again
 * unchanged after BATON_EUNKNOWN, followed to the leader, moved off a
 * lost or silent connection, and answered. */
#ifndef TESTS_LIB_TCLIENTREQ_H
#define TESTS_LIB_TCLIENTREQ_H

#include <stdint.h>

#include "tclient.h"

/* An empty request, for its frame to be written into. */
void tclientreq_init(struct tclient_req *r);

/* Write frame id `id` into the header of `frame`. */
void tclientreq_patch_id(uint8_t *frame, uint64_t id);

/* Before `r` goes out on this connection: ATTACH to the owned session, if
 * `r` acts in it and this connection has not attached yet (the answer is
 * not waited for: the node serves a connection's frames in order). 0 or
 * BATON_EIO. */
int tclientreq_attach_first(struct tclient *c, const struct tclient_req *r,
                            int64_t deadline);

/*
 * Send `r` and wait for its answer until `deadline`, following NOT_LEADER,
 * moving to another endpoint when the connection is lost or silent for
 * try_ms, and sending the same frame again after BATON_EUNKNOWN. Returns 0
 * with the answer in r->ah / r->answer (RESULT, KEEPALIVE_OK, STATUS_REPLY
 * or PONG), an ERROR frame's status, BATON_ENOTLEADER when not following,
 * or BATON_ENOANSWER.
 */
int tclientreq_exchange(struct tclient *c, struct tclient_req *r,
                        int64_t deadline);

#endif /* TESTS_LIB_TCLIENTREQ_H */
