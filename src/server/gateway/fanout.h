/* The state machine's events fanned out on this node: each answers the
 * requests it settles, starts or stops a leader's deadline, and goes into
 * the apply log. */
#ifndef SERVER_FANOUT_H
#define SERVER_FANOUT_H

#include <stdint.h>

#include "../../fsm/lockfsm.h"

/*
 * node_set_event_cb() callback; `data` is the struct gateway. Runs inside
 * the apply of an entry, on every node (deadlines are set only while
 * serving, and dropped anywhere). A RESULT answers every request waiting
 * for its (session, seq), or (0, nonce) for OPEN, unless it only queued
 * it; a GRANT after a wait or an UNQUEUE answers the waiting ACQUIRE. `ev`
 * is borrowed for the call.
 */
void fanout_event(void *data, const struct lockfsm_event *ev);

/* node_set_entry_cb() callback (`data` is the struct gateway): where an
 * entry's events end, in the apply log. */
void fanout_entry(void *data, uint64_t index, uint8_t kind);

#endif /* SERVER_FANOUT_H */
