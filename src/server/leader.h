/* What the serving leader does on its own: keep the clocks of sessions and
 * waits, propose EXPIRE and TIMEOUT when they run out, and record the
 * bootstrap members in a new cluster's directory. */
#ifndef SERVER_LEADER_H
#define SERVER_LEADER_H

#include "deadlines.h"
#include "gateway.h"

/*
 * This node has just started serving: seed the member directory if it is
 * empty, and restart every clock from now, since a new leader cannot know
 * its predecessor's: every session gets a full TTL and every waiter its
 * full wait. The proposals are queued on g->unsent.
 */
void leader_start(struct gateway *g);

/* deadlines_fire_cb (`data` is the struct gateway): queue EXPIRE for a
 * session whose lease ran out (d->seq == 0), or TIMEOUT for a wait. */
void leader_on_deadline(void *data, const struct deadline *d);

#endif /* SERVER_LEADER_H */
