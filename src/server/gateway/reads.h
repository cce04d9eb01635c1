/* Linearizable reads and keepalives: QUERY, CHECK, LIST and KEEPALIVE
 * (and ATTACH's body, which admit.h answers at once),
 * answered from this node's state machine once a raft barrier proves it
 * still leads; and BACKUP, whose first request waits for that barrier. */
#ifndef SERVER_READS_H
#define SERVER_READS_H

#include <stdint.h>

#include "../../proto/proto.h"
#include "gwconn.h"
#include "core.h"

/*
 * A KEEPALIVE, QUERY, CHECK, LIST or ATTACH frame from `c` (borrowed; `body`
 * only during the call), arrived at `now` (a keepalive's new lease is
 * dated from it): a malformed body fails the connection, a bad name is
 * answered BATON_ENAME; otherwise the read waits on g->reads (or g->held)
 * for the next reads_start(), or is redirected when this node does not
 * lead.
 */
void reads_on_frame(struct gateway *g, const struct gateway_now *now,
                    struct gateway_conn *c, const struct proto_header *h,
                    const uint8_t *body);

/*
 * Start one barrier for every read on g->reads (call once per loop
 * iteration, while serving), unless a read barrier is out: the reads then
 * wait for the call after it completes. When it is applied
 * (gateway_on_done()), each read is answered from the state machine as it
 * is then, and a keepalive restarts its session's lease deadline; when it
 * fails, each is redirected. Out of memory, the reads stay queued for the
 * next call; refused by raft, they are redirected at once.
 *
 * One barrier out at a time, as etcd's read loop keeps one ReadIndex out:
 * a barrier is a log entry every node writes and applies, and thirty
 * thousand keepalives a second on a busy leader asked for one every turn
 * of its loop (3,500 a second, four entries in five). A read waits at
 * most for the barrier out and its own.
 */
void reads_start(struct gateway *g);

/*
 * A BACKUP frame from `c` (borrowed; `body` only during the call), which
 * admit_frame() let through (an admin's). The first (backup 0, offset 0;
 * another offset is BATON_EINVAL) waits for the next read barrier as a
 * read does (a node that does not lead sends it on), so that the state
 * the host pins (gateway_host.backup_start) holds everything acknowledged
 * before it arrived; later ones go to the host at once (backup_chunk).
 * Whatever status the host returns is the answer. A malformed body fails
 * the connection.
 */
void reads_on_backup(struct gateway *g, const struct gateway_now *now,
                     struct gateway_conn *c, const struct proto_header *h,
                     const uint8_t *body);

#endif /* SERVER_READS_H */
