/* A watch's queue of events: each event a frame brings is kept once, as a
 * reference-counted copy shared by every watch it goes to, and each watch
 * keeps a bounded ring of pointers to such copies, so that a reader that
 * falls behind is cut off rather than given a gap. */
#ifndef CLIENT_WATCHQ_H
#define CLIENT_WATCHQ_H

#include <stdbool.h>

#include "../../include/baton.h"
#include "../proto/watch.h"

/* Undelivered events a watch keeps before it is cut off. */
#define WATCHQ_MAX 65536

/* One event as received, shared by every queue it was pushed to. */
struct watchq_item {
        unsigned refs; /* queues (and callbacks running) that hold it */
        struct baton_event ev;
};

/*
 * Undelivered events, oldest at ring[head]: n of cap slots. The ring
 * starts small and doubles up to WATCHQ_MAX as needed; one emptied after
 * it grew large is given back, so that a burst does not leave its memory
 * behind in every watch it went through. Zeroed: an empty queue.
 * Threading: none; libbaton guards it with the handle's mutex.
 */
struct watchq {
        struct watchq_item **ring;
        unsigned cap, head, n;
};

/*
 * Queue the event `e` (borrowed for the call) of a frame: `*shared` is the
 * frame's one copy of it, NULL before its first queue (then made here and
 * left there for the frame's other queues; each queue holds a reference).
 * False when the queue is full or out of memory: the watch must end
 * (BATON_ESLOW) rather than lose the event.
 */
bool watchq_push(struct watchq *q, const struct proto_watch_event *e,
                 void **shared);

/* The oldest queued event, taken off the queue (the caller holds its
 * reference: watchq_unref() it), or NULL. */
struct watchq_item *watchq_pop(struct watchq *q);

/* The oldest queued event copied into `ev` (only the bytes of its strings
 * in use) and let go; false when there is none. */
bool watchq_take(struct watchq *q, struct baton_event *ev);

/* Let go of one reference to `it`, freeing it with the last. */
void watchq_unref(struct watchq_item *it);

/* Let go of every queued event and the ring: the queue is empty again. */
void watchq_close(struct watchq *q);

#endif /* CLIENT_WATCHQ_H */
