/* What a watch is told of a state machine event, and where it stands in
 * the log: a pure function of the events in the order a node applies
 * them, so every node numbers the same events alike. */
#ifndef SERVER_WATCHFEED_H
#define SERVER_WATCHFEED_H

#include <stdbool.h>
#include <stdint.h>

#include "../../fsm/lockfsm.h"
#include "../../proto/proto.h"
#include "../../proto/watch.h"

/* The position of the last event numbered. */
struct watchfeed {
        uint64_t index;
        uint32_t ord;
};

/* Start numbering after every event of entry `index`. */
void watchfeed_init(struct watchfeed *f, uint64_t index);

/*
 * The watch event `ev` makes into `*out`, with its position (the entry's
 * index, and its order among that entry's watch events, from 1): true for
 * a GRANT, RELEASE or PROCLAIM; false for an event no watch is told of.
 * The name and value in `*out` are borrowed from `ev`.
 */
bool watchfeed_next(struct watchfeed *f, const struct lockfsm_event *ev,
                    struct proto_watch_event *out);

#endif /* SERVER_WATCHFEED_H */
