/* test_sim's clients' requests as frames: each goes to the request core
 * (simhost.h, reached through simpath.h) of the node the client believes
 * leads, follows NOT_LEADER, and is sent again, byte for byte, until a
 * final answer comes. */
#ifndef TESTS_SIM_FRAMES_H
#define TESTS_SIM_FRAMES_H

#include <stdbool.h>

#include "sim.h"

/*
 * A client has one connection, to the node it believes leads (at first
 * one drawn from the seed), and on each new connection first proves it
 * owns its session (ATTACH), as libbaton does. A request is a COMMAND
 * frame (QUERY and CHECK their own frames) with an id of its own; it is
 * sent again with the same id, session and seq, so that only the state
 * machine's exactly-once memory (src/fsm/once.c) keeps it from running
 * twice:
 *
 * - after NOT_LEADER, on a new connection to the node named (or to one
 *   drawn, when none is), as is everything else the client has out;
 * - after a RESULT of BATON_EUNKNOWN (the core lost its leadership with
 *   the request in flight), BATON_EUNAVAILABLE, BATON_ESHUTDOWN or
 *   BATON_ENOTREADY, on the same connection;
 * - after the connection closed (its node went down, or failed it, or the
 *   network cut it, refused the attempt or it was given up: simpath.h),
 *   on a new one to the next node;
 * - after silence: 1.5 s for a request that does not wait for a lock,
 *   the wait plus 2 s for one that does (8 s when it waits forever), on
 *   a new connection to a node drawn from the seed.
 *
 * Every other RESULT is the request's final answer: a queued ACQUIRE's
 * comes only once it is granted (its index the GRANT's) or left its
 * queue (timed out, cancelled, its session ended), as the core sends no
 * QUEUED answer.
 */

/* Start request `o` of client `cl` (o must not be busy): `cmd` (copied,
 * with a MULTI's list) is encoded into a frame with a fresh id, and sent
 * now. */
void frames_start(struct sim *s, struct client *cl, struct outreq *o,
                  const struct command *cmd);

/* Send busy request `o` again now, as it is: a client polling a request
 * that waits. */
void frames_resend(struct sim *s, struct client *cl, struct outreq *o);

/* Move request `src` into `dst` (a MULTI's list with it). */
void frames_move(struct outreq *dst, const struct outreq *src);

/* Reads what came for client `cl` and sends again what is due. True with
 * the next final answer: `*o` the busy request it answers (the caller
 * settles it) and `res` the answer (its client name cleared). */
bool frames_next(struct sim *s, struct client *cl, raft_time now,
                 struct outreq **o, struct proto_result *res);

/* Hang up the client's connection. */
void frames_close(struct client *cl);

#endif /* TESTS_SIM_FRAMES_H */
