/* Answers to clients: where a request's answer goes, and the frames that
 * carry it into its connection's output. */
#ifndef SERVER_REPLY_H
#define SERVER_REPLY_H

#include <stddef.h>
#include <stdint.h>

#include "../../fsm/lockfsm.h"
#include "../../lib/queue.h"
#include "../../proto/proto.h"
#include "../../proto/reply.h"
#include "gwconn.h"

struct gateway;

/* Room reserved for one reply of a fixed-size kind. */
#define REPLY_MAX (PROTO_HEADER_SIZE + 512)

/*
 * Where a request's answer goes: the connection it came on while that is
 * open, and the id the answer repeats. It lives in the record that waits
 * for the answer (pending.h, admin.c). While `conn` is set, `link` is on
 * the connection's list (conn->waiting), so that reply_forget_conn() can
 * clear `conn` when the connection goes and no answer is written to it.
 */
struct reply_to {
        struct queue link;         /* conn->waiting while `conn` is set */
        struct gateway_conn *conn; /* borrowed; NULL: no client, or it left */
        uint64_t id;
};

/* Point `to` at connection `c` (NULL: nobody waits) and request `id`. */
void reply_to_init(struct reply_to *to, struct gateway_conn *c, uint64_t id);

/* Take `to` off its connection's list, before its record is freed. */
void reply_to_close(struct reply_to *to);

/* Connection `c` is going: clear every reply_to on its list. Requests
 * under way still run; only their answers are dropped. */
void reply_forget_conn(struct gateway_conn *c);

/* The host's connection ops (gateway_host: reserve, fail), for `g`'s
 * modules. */
uint8_t *reply_reserve(struct gateway *g, struct gateway_conn *c, size_t n);
void reply_fail(struct gateway *g, struct gateway_conn *c, uint64_t id,
                int status, const char *message);

/*
 * Every writer below puts one frame into c's output, or nothing when `c` is
 * NULL or its output cannot grow (out of memory, or closing: the client
 * then sees the connection end). A frame that does not encode is our bug:
 * the connection gets an ERROR frame and closes, rather than the client
 * waiting forever, and `g`'s log says so.
 */

/* Commit `n` bytes a proto_write_* call wrote at reply_reserve(g, c, ...) for
 * request `id`; n == 0 (it did not encode) fails the connection. */
void reply_frame(struct gateway *g, struct gateway_conn *c, uint64_t id,
                 size_t n);

void reply_status(struct gateway *g, struct gateway_conn *c, uint64_t id,
                  int status);

/* A RESULT with every field of `r` (borrowed), for answers that are no
 * state machine outcome (a TRANSFER's). */
void reply_result(struct gateway *g, struct gateway_conn *c, uint64_t id,
                  const struct proto_result *r);

/* A state machine outcome: the entry at `index` gave request `id` `res`. */
/* A QUERY's outcome in the PROTO_FLAG_NAMES shape, with the holder's
 * client name (`name_len` bytes, borrowed; may be NULL when 0). */
void reply_outcome_names(struct gateway *g, struct gateway_conn *c, uint64_t id,
                         uint64_t index, const struct lockfsm_result *res,
                         const char *name, uint8_t name_len);
void reply_outcome(struct gateway *g, struct gateway_conn *c, uint64_t id,
                   uint64_t index, const struct lockfsm_result *res);

#endif /* SERVER_REPLY_H */
