/* The seqs this node has handed out to the HTTP API's session writes and
 * not seen answered yet, per session, so that two writes of one session
 * in flight at once never share a seq (which would make the second one
 * a repeat of the first: exactly once, docs/protocol.md). */
#ifndef SERVER_APISEQ_H
#define SERVER_APISEQ_H

#include <stdint.h>

#include "../../fsm/lockfsm.h"
#include "../../lib/hmap.h"

struct apiseqs {
        struct hmap map; /* struct apiseq by session */
};

void apiseqs_init(struct apiseqs *s);
void apiseqs_close(struct apiseqs *s);

/*
 * A seq for a new write of `session`: `given` (an Idempotency-Key; 0:
 * none), else one above every seq the state machine `f` has applied for
 * the session (lockfsm_session_next_seq()) and every seq out here. The
 * seq is out until apiseqs_put(). 0 when out of memory.
 */
uint64_t apiseqs_take(struct apiseqs *s, const struct lockfsm *f,
                      uint64_t session, uint64_t given);

/* A write of `session` that apiseqs_take() numbered was answered. */
void apiseqs_put(struct apiseqs *s, uint64_t session);

#endif /* SERVER_APISEQ_H */
