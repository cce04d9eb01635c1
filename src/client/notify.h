/* The queue of user callbacks (session state changes, lost locks) that the
 * background thread delivers with the handle's mutex released. */
#ifndef CLIENT_NOTIFY_H
#define CLIENT_NOTIFY_H

#include <stdbool.h>
#include <stdint.h>

#include "../proto/command.h"
#include "../lib/queue.h"

enum notify_kind {
        NOTIFY_STATE = 1, /* on_session(state) */
        NOTIFY_LOST,      /* on_lock_lost(name, token) */
        NOTIFY_WATCH,     /* a watch's callback has events (or its end) */
};

struct baton_watch;

struct notify_event {
        struct queue link;
        int kind;
        int state;
        uint64_t token;
        struct baton_watch *watch;       /* NOTIFY_WATCH */
        char name[COMMAND_NAME_MAX + 1]; /* NUL-terminated */
};

struct notify {
        struct queue events; /* struct notify_event, oldest first */
        bool muted;          /* the handle is being destroyed */
        unsigned dropped;    /* events lost to allocation failure */
};

void notify_init(struct notify *n);
/* Free every undelivered event. */
void notify_close(struct notify *n);

/* Queue an event. A queue that cannot allocate drops the event and counts
 * it in `dropped`: a callback has no way to report failure. */
void notify_state(struct notify *n, int state);
void notify_lost(struct notify *n, const char *name, uint8_t name_len,
                 uint64_t token);

/* A watch with a callback has something to deliver: queue `e`, the
 * watch's own NOTIFY_WATCH event (never allocated nor freed here, so a
 * wake costs nothing and cannot fail), which must not be queued already.
 * False while the handle is being destroyed. */
bool notify_watch(struct notify *n, struct notify_event *e);
/* Take the queued `e` of a watch being freed off the queue. */
void notify_withdraw(struct notify *n, struct notify_event *e);

/* The oldest event, taken off the queue, or NULL. The caller frees it,
 * unless it is a NOTIFY_WATCH: that one belongs to its watch. */
struct notify_event *notify_pop(struct notify *n);

#endif /* CLIENT_NOTIFY_H */
