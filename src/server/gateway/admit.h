/* Who may do what, decided in one place before a request is routed: the
 * role a frame type needs, the administrator a revoke needs, and session
 * ownership on the leader, which ATTACH proves. */
#ifndef SERVER_ADMIT_H
#define SERVER_ADMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../proto/proto.h"
#include "gwconn.h"
#include "core.h"
#include "pending.h"

/*
 * The order a request goes through: admit_frame() as it arrives, on every
 * node; admit_revoke() for a REVOKE or REVOKE_LOCK once decoded; then
 * admit_route(), which on a serving leader checks session ownership before
 * the request is queued, and holds it on a leader not serving yet, where
 * admit_held() checks it once the leader serves (gateway_on_ready()).
 * A refusal is BATON_EPERM, counted in g->stats.refused and logged with
 * who was refused and why, and changes nothing else; a request in a
 * session that has ended is answered with that session's status.
 */

/* Whether c's role allows a request of h's type; if not, the request is
 * answered BATON_EPERM and the connection stays. A node that does not
 * serve sends a refused request the leader would answer to the leader
 * instead (NOT_LEADER), which decides from its own list: a follower that
 * has not applied the latest change yet (or a joining node catching up)
 * refuses no one the cluster allows. Either answer is counted by kind and
 * result (pending_count(); `body`, h->length bytes, tells a command's
 * kind). */
bool admit_frame(struct gateway *g, struct gateway_conn *c,
                 const struct proto_header *h, const uint8_t *body);

/* 0 when `c` may revoke: an administrator; or, where rules on names
 * exist (names.h), a client whose rules give it manage on the REVOKE_LOCK's
 * name, or on every lock a REVOKE's session holds or waits for (a session
 * that holds nothing is an administrator's to end). Else BATON_EPERM
 * (logged). */
int admit_revoke(struct gateway *g, struct gateway_conn *c,
                 const struct pending *p);

/* 0 when `c` may lock each name the client command `cmd` acts on (names.h;
 * OPEN and CLOSE act on none), else BATON_EPERM for the first it may not
 * (logged and audited with the rule that was missing). */
int admit_names(struct gateway *g, struct gateway_conn *c,
                const struct command *cmd);

/* Queue `p` where it waits: on `serving` when this node serves (unless it
 * is answered at once, at `now`: an ATTACH, or a request in a session its
 * connection does not own), on g->held when it leads but does not serve
 * yet; otherwise answer it NOT_LEADER. False when `p` was answered (then
 * it is gone). */
bool admit_route(struct pending *p, const struct gateway_now *now,
                 struct queue *serving);

/* The leader serves now: check what it held, in arrival order, as
 * admit_route() does, and queue what passes for the next proposal or read
 * barrier. */
void admit_held(struct gateway *g, const struct gateway_now *now);

/* Whether the `n` bytes at `a` and `b` are equal, in a time that does
 * not depend on where they differ (an ATTACH secret's hash against the
 * session's). */
bool admit_equal(const uint8_t *a, const uint8_t *b, size_t n);

#endif /* SERVER_ADMIT_H */
