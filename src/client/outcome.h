/* What the final answer of a request means for the handle: the lock table,
 * the end of the session, and finishing what the library's requests and
 * those whose callers gave up started. It is the registry's owner. */
#ifndef CLIENT_OUTCOME_H
#define CLIENT_OUTCOME_H

#include "registry.h"

struct session;

/*
 * The hooks of struct registry_owner, with the handle's session as `data`
 * (its registry and lock table are the ones acted on). final: record the
 * answer of `r` and act on it: hand the OPEN and keepalives to the
 * session, mirror grants and releases in the lock table, end the session
 * if the answer says it is over, and finish what an ENDED request started
 * (a grant nobody waits for is released). withdraw: follow the wait `r`,
 * on the wire, with a CANCEL. The requests either submits are dated `now`.
 * Mutex held.
 */
void outcome_final(void *data, struct request *r, int how, int64_t now);
void outcome_withdraw(void *data, struct request *r, int64_t now);

/* The session's keepalive answer says one of its grants was revoked:
 * ask, for each hold, whether it is still among its lock's holders; one
 * that is not is forgotten, with an on_lock_lost callback. The questions
 * are dated `now`. Mutex held. */
void outcome_verify(struct session *s, int64_t now);

#endif /* CLIENT_OUTCOME_H */
