/* Linearizable reads and keepalives: QUERY, CHECK, LIST and KEEPALIVE
 * (and ATTACH's body, which admit.h answers at once),
 * answered from this node's state machine once a raft barrier proves it
 * still leads. */
#ifndef SERVER_READS_H
#define SERVER_READS_H

#include <stdint.h>

#include "../../proto/proto.h"
#include "../net/conn.h"
#include "core.h"

/*
 * A KEEPALIVE, QUERY, CHECK, LIST or ATTACH frame from `c` (borrowed; `body`
 * only during the call): a malformed body fails the connection, a bad name is
 * answered BATON_ENAME; otherwise the read waits on g->reads (or g->held)
 * for the next reads_start(), or is redirected when this node does not
 * lead.
 */
void reads_on_frame(struct gateway *g, struct conn *c,
                    const struct proto_header *h, const uint8_t *body);

/*
 * Start one barrier for every read on g->reads (call once per loop
 * iteration, while serving). When it is applied, each read is answered from
 * the state machine as it is then, and a keepalive restarts its session's
 * lease deadline; when it fails, each is redirected. Out of memory, the
 * reads stay queued for the next call; refused by raft, they are
 * redirected at once.
 */
void reads_start(struct gateway *g);

#endif /* SERVER_READS_H */
