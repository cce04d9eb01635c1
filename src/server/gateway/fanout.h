/* The state machine's events fanned out on this node: each answers the
 * requests it settles, and starts or stops a leader's deadline. */
#ifndef SERVER_FANOUT_H
#define SERVER_FANOUT_H

#include <stdint.h>

#include "../../fsm/lockfsm.h"

struct gateway;
struct gateway_now;

/*
 * A state machine event (gateway_on_event()). Runs inside the apply of an
 * entry, on every node (deadlines are set only while serving, and dropped
 * anywhere). A RESULT answers every request waiting for its (session,
 * seq), or (0, nonce) for OPEN, unless it only queued it; a GRANT after a
 * wait or an UNQUEUE answers the waiting ACQUIRE. A deadline starts at
 * `now`, the time the host gave the event; `term` is its entry's (the
 * chaos control LEADERSKIP's alone). `ev` is borrowed for the call.
 */
void fanout_event(struct gateway *g, const struct gateway_now *now,
                  uint64_t term, const struct lockfsm_event *ev);

#endif /* SERVER_FANOUT_H */
