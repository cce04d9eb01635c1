/* Watches: clients told of every grant, release and proclaim of a lock
 * name or a name prefix, in log order, from the events this node's state
 * machine reports as it applies entries, resumable from any position the
 * node still keeps (docs/protocol.md, "Watches"). */
#ifndef SERVER_WATCHES_H
#define SERVER_WATCHES_H

#include <stdbool.h>
#include <stdint.h>

#include "../../fsm/lockfsm.h"
#include "../../lib/hmap.h"
#include "../../lib/queue.h"
#include "../../proto/proto.h"
#include "../../proto/watch.h"
#include "gwconn.h"
#include "watchfeed.h"

struct gateway;

/* Where a watch stands: it has seen every event up to (index, ord). */
struct watch_pos {
        uint64_t index;
        uint32_t ord;
};

struct watch_rec; /* one event of the history */

struct watches_limits {
        uint32_t max_watches;  /* on this node, at once */
        uint32_t max_per_conn; /* on one connection */
        uint32_t history;      /* events kept for resuming watches */
        uint32_t output_limit; /* a connection's queued output (bytes)
                                  past which its watches are cut off */
};

struct watches_stats {
        uint64_t events;    /* events recorded */
        uint64_t pushed;    /* WATCH_EVENT frames written */
        uint64_t cut_off;   /* watches ended BATON_ESLOW */
        uint64_t compacted; /* WATCHes refused BATON_ECOMPACTED */
        uint32_t active;    /* watches now */
};

/*
 * The events of the last `history` grants, releases and proclaims, and
 * the watches. Every event after position `base` (an index: everything
 * this node applied since it last restored a snapshot) and after `evicted`
 * (the newest event dropped from the ring) can be sent again; a WATCH from
 * an earlier position gets BATON_ECOMPACTED, never a silent gap.
 */
struct watches {
        struct gateway *g; /* whose answers and log lines these are */
        struct watches_limits limits;
        struct watch_rec **ring; /* history slots, oldest at head */
        uint32_t head;
        uint32_t n;
        struct watchfeed feed;    /* the newest event's position */
        struct watch_pos evicted; /* the newest dropped; {0, 0}: none */
        uint64_t base;            /* index from which every event is here */
        uint64_t restores;        /* the node's restores when base was set */
        struct hmap exact;        /* watches of one name, by its hash */
        struct queue prefixes;    /* watches of a prefix */
        struct queue all;         /* every watch */
        struct watches_stats stats;
#ifdef BATON_CHAOS_BUG_LEADERSKIP
        uint64_t bug_term; /* the term of the last entry seen */
        bool bug_skip;     /* the next event is dropped */
#endif
};

/* Empty history starting after index `base` (the state's at start), with
 * `restores` the node's count of snapshot restores so far, for `g`
 * (borrowed for w's life). 0 or BATON_ENOMEM. */
int watches_init(struct watches *w, struct gateway *g,
                 const struct watches_limits *limits, uint64_t base,
                 uint64_t restores);
void watches_close(struct watches *w);

/* The node restored a snapshot (its count is now `restores`) and is at
 * `applied`: events before are not all here; forget the history, and end
 * (BATON_ECOMPACTED) every watch that had not seen all of them. */
void watches_reset(struct watches *w, uint64_t restores, uint64_t applied);

/* A state machine event: kept, and pushed to every watch it matches. */
void watches_on_event(struct watches *w, const struct lockfsm_event *ev);

#ifdef BATON_CHAOS_BUG_LEADERSKIP
/* The chaos suite's negative control (tests/chaos/batond-leaderskip):
 * the node is applying an entry of `term`; when that is a new leader's,
 * the next watch event is dropped. Never built into batond. */
void watches_bug_term(struct watches *w, uint64_t term);
#endif

/*
 * WATCH `req` (frame `id`) from connection `c`, the node at `applied`:
 * answered with a RESULT of kind WATCHING (index and count: the position
 * the watch starts after) and every kept event after it that matches, or
 * refused (BATON_ECOMPACTED, BATON_ETOOMANYWATCHES, BATON_ENOMEM).
 */
void watches_open(struct watches *w, struct gateway_conn *c, uint64_t id,
                  const struct proto_watch *req, uint64_t applied);

/* UNWATCH of the watch `watch_id` of `c` (frame `id`): CANCELLED, or
 * BATON_ENOTFOUND. */
void watches_cancel(struct watches *w, struct gateway_conn *c, uint64_t id,
                    uint64_t watch_id);

/* Connection `c` is going: drop its watches. */
void watches_forget_conn(struct watches *w, struct gateway_conn *c);

#endif /* SERVER_WATCHES_H */
