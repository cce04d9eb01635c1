/* Session ownership on the leader: which connection may act in which
 * session, and ATTACH, which proves it. */
#ifndef SERVER_OWNERS_H
#define SERVER_OWNERS_H

#include <stdbool.h>

#include "gateway.h"

struct pending;

/*
 * A client request about to be served (this node serves, now or once it
 * does: gateway_on_ready()), in arrival order. ATTACH is answered here,
 * from the applied state: a serving leader has applied every OPEN whose
 * answer any client saw, and a session's hash never changes. KEEPALIVE,
 * CLOSE, ACQUIRE, RELEASE and CANCEL on a connection not attached to their
 * session are answered here too: BATON_EPERM while the session is live
 * (logged), else the session's status. True when `p` goes on to be served;
 * false when it was answered (and freed).
 */
bool owners_admit(struct gateway *g, struct pending *p);

#endif /* SERVER_OWNERS_H */
