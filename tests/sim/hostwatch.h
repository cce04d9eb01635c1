/* A watcher of every lock on one simulated node, through batond's request
 * core (simhost.h), and the check of what it was sent against the node's
 * own feed of watch events. */
#ifndef TESTS_SIM_HOSTWATCH_H
#define TESTS_SIM_HOSTWATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../lib/simcluster.h"
#include "simhost.h"

/*
 * The watcher asks its node for a WATCH of the prefix "" (every lock),
 * from now at first, then from the last event it saw whenever its
 * connection went (the node killed) and it connected again; when the node
 * cannot serve that position (BATON_ECOMPACTED, a fresh core after a
 * restart) or ends the watch, it watches from now again. Each WATCHING
 * answer starts a segment at the position it names. Events come with the
 * watch's id (kept ones, on a resume) or with id 0 (new ones, for every
 * watch of the connection after its position: docs/protocol.md).
 *
 * What it was sent must be, segment by segment, exactly the node's own
 * feed (simnode.watched: every event's WATCH_EVENT, made by the core's
 * own watchfeed.h as the node applied it) right after the segment's
 * start, byte for byte and with nothing skipped; and a segment still
 * watching at the end must have reached the end of the feed.
 */

struct hostwatch_event {
        uint64_t index;
        uint32_t ord;
        unsigned segment;
        size_t at, len; /* its body, in `bodies` */
};

struct hostwatch_segment {
        uint64_t index; /* the position it starts after */
        uint32_t ord;
};

struct hostwatch {
        struct simhost *h;
        unsigned node;
        struct simconn *conn;
        uint64_t next_id;
        uint64_t watch_id; /* the WATCH out or running; 0: none */
        bool watching;     /* WATCHING answered, not ended */
        bool resume;       /* ask from (index, ord) rather than from now */
        uint64_t index;    /* the last event seen */
        uint32_t ord;
        uint64_t retry_at;
        struct hostwatch_event *got;
        size_t n_got, cap_got;
        uint8_t *bodies;
        size_t n_bodies, cap_bodies;
        struct hostwatch_segment *segs;
        size_t n_segs, cap_segs;
        unsigned compacted; /* resumptions the node could not serve */
        char errmsg[200];   /* a frame it could not make sense of */
};

/* A watcher of node `node` of `h` (borrowed for the watcher's life). */
void hostwatch_init(struct hostwatch *w, struct simhost *h, unsigned node);
/* Read what came, and ask again when it is time. */
void hostwatch_drive(struct hostwatch *w, uint64_t now);
/* The watcher closes its connection, to resume on a new one at once. */
void hostwatch_drop(struct hostwatch *w, uint64_t now);
/* The check above, against node `n`'s feed. 0, or -1 with `reason`. */
int hostwatch_check(const struct hostwatch *w, const struct simnode *n,
                    char *reason, size_t cap);
void hostwatch_close(struct hostwatch *w);

/* One event of a node's feed: its position and its WATCH_EVENT body (in
 * the node's record). */
struct hostwatch_feed_event {
        uint64_t index;
        uint32_t ord;
        const uint8_t *body;
        size_t len;
};

/* Node `n`'s feed, decoded, in order (free() it); NULL (and *count 0) when
 * out of memory. */
struct hostwatch_feed_event *hostwatch_feed(const struct simnode *n,
                                            size_t *count);
/* The first of the `n` events of feed `f` after position (index, ord). */
size_t hostwatch_feed_after(const struct hostwatch_feed_event *f, size_t n,
                            uint64_t index, uint32_t ord);

#endif /* TESTS_SIM_HOSTWATCH_H */
