/* The SESSIONS read: a page of live sessions, or one, with what the state
 * machine records of each and the leader's own knowledge of its lease
 * (which a QUERY of every holder can ask for too). */
#ifndef SERVER_SESSVIEW_H
#define SERVER_SESSVIEW_H

#include <stdint.h>

#include "core.h"

struct lockfsm;
struct pending;

/*
 * Answer the SESSIONS `p` (p->key_a the id, p->key_b the mode, p->limit)
 * at `now` from `f`, after its read barrier, and forget `p`: a
 * SESSIONS_REPLY, or for one session that is not live a RESULT with its
 * status (BATON_EEXPIRED, BATON_ECLOSED, BATON_ENOSESSION).
 */
void sessview_answer(struct gateway *g, const struct gateway_now *now,
                     const struct lockfsm *f, struct pending *p);

/* The leader's lease of session `id` (of `ttl_ms`) at `now`: ms until it
 * expires it (0 once its EXPIRE is out, at most the TTL), or
 * PROTO_SESSION_UNKNOWN when it keeps none (not serving). */
uint32_t sessview_left_ms(const struct gateway *g,
                          const struct gateway_now *now, uint64_t id,
                          uint32_t ttl_ms);

#endif /* SERVER_SESSVIEW_H */
