/* Watches through libbaton's real client cores in test_simclient: some
 * simulated clients watch names and prefixes with the core's own WATCH
 * requests, and the check that each watch was delivered, in order and
 * with no gap, exactly the events of node 0's feed for what it watches. */
#ifndef TESTS_SIM_SIMWATCH_H
#define TESTS_SIM_SIMWATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../src/client/request.h"
#include "../../src/proto/watch.h"
#include "../lib/rng.h"
#include "../lib/simcluster.h"
#include "simclient.h"

/*
 * Clients 1..n_watchers each keep up to SIMWATCH_PER watches open beside
 * their locks, as baton_watch_open() makes them: a request_watch()
 * submitted to the core's registry, which sends it, resends it on every
 * new connection from the last event delivered (or, before any, from the
 * position its first WATCHING answer named) and delivers its events
 * through the core's watch_event hook. Each watch is of one of the lock
 * names or of a prefix ("" is every name), from now, from the last event
 * an earlier watch of the client was given (as a reader resumes), or from
 * an older position (which a node may no longer keep: BATON_ECOMPACTED).
 * A watch is closed after a while as baton_watch_close() closes it (an
 * UNWATCH, the request dropped); one the core ended is dropped, and the
 * client opens another.
 *
 * The check, watch by watch, against node 0's feed (simnode.watched,
 * every event as batond's watchfeed makes it; no node ever installs a
 * snapshot in the simulation, so node 0's feed has every event): from
 * the watch's start position (the one it asked for, or its first
 * WATCHING's), the events of its name or prefix, in order; the watch
 * must have been delivered exactly their first k, byte for byte as
 * WATCH_EVENT bodies, whether it is still open at the end, was closed,
 * or ended with BATON_ECOMPACTED, after which nothing may come. Any other
 * end fails, as does an event before a start or after an end. With
 * `whole` (the run healed, and node 0 applied no event for a while after
 * its first `whole` ones), a watch still open must have started and been
 * given every such event among those.
 */

#define SIMWATCH_MAX     768 /* watches over a run */
#define SIMWATCH_PER     2   /* open at once per watching client */
#define SIMWATCH_CLIENTS 32
#define SIMWATCH_CLOSED  1 /* status: the client closed it */

struct simwatch_got {
        uint64_t index;
        uint32_t ord;
        size_t at, len; /* its body, in `bodies` */
};

struct simwatch {
        unsigned client;   /* 1.. */
        struct request *r; /* the WATCH in the core; NULL once let go */
        char name[16];
        uint8_t name_len;
        bool prefix;
        bool started; /* its start position is known */
        uint64_t from_index;
        uint32_t from_ord;
        int status;     /* 0 open; SIMWATCH_CLOSED; or why the core ended it */
        uint32_t sends; /* of its WATCH, when last seen */
        int64_t close_at; /* in the client's clock */
        struct simwatch_got *got;
        size_t n_got, cap_got;
        uint8_t *bodies;
        size_t n_bodies, cap_bodies;
};

struct simwatches {
        struct rng rng;
        unsigned n_watchers; /* clients 1..n_watchers watch */
        bool stopping;       /* no new watch opens */
        /* The check: an open watch must have been given every event of
         * the first `whole` of node 0's feed (0: only a prefix). */
        size_t whole;
        struct simwatch w[SIMWATCH_MAX];
        unsigned n;
        int64_t next_at[SIMWATCH_CLIENTS]; /* the client's next open */
        uint64_t high_index;               /* the highest index delivered */
        /* The last event each client was given, to resume from. */
        uint64_t last_index[SIMWATCH_CLIENTS];
        uint32_t last_ord[SIMWATCH_CLIENTS];
        /* Counts. */
        unsigned opened, compacted, closed, resumed, caught_up;
        uint64_t events;
        char errmsg[256]; /* the first thing that went wrong in the hooks */
};

/* No watch yet; clients 1..n_watchers will watch; draws from `seed`. */
void simwatches_init(struct simwatches *ws, unsigned n_watchers, uint64_t seed);
/* Free what the watches recorded (let_go() them first). */
void simwatches_free(struct simwatches *ws);

/* In the client's step, at its clock `now`: drop the watches its core
 * ended, close those due, open one when due. */
void simwatch_step(struct simwatches *ws, struct simclient *cl, int64_t now);
/* When the client's step next has a watch to open or close (INT64_MAX:
 * none). */
int64_t simwatch_next(const struct simwatches *ws, const struct simclient *cl);
/* The core's hook: event `e` of `r`, or `e` NULL: `r` ended. */
void simwatch_event(struct simwatches *ws, struct simclient *cl,
                    struct request *r, const struct proto_watch_event *e);
/* After each frame the client's core took in: a WATCH from now that its
 * node has just started has its start position. */
void simwatch_frame(struct simwatches *ws, struct simclient *cl);
/* Whether every watch still open is running: its node said WATCHING on
 * its client's current connection. */
bool simwatches_settled(const struct simwatches *ws);
/* Forget the cores' requests (before they are closed). */
void simwatches_let_go(struct simwatches *ws);

/* The check above, against node `n`'s feed: 0, or -1 with `reason`. */
int simwatches_check(struct simwatches *ws, const struct simnode *n,
                     char *reason, size_t cap);
/* The negative controls: one delivered event, not a watch's last, taken
 * out of the record, or (`last`) the last one an open watch was given;
 * false when no watch had one to take. */
bool simwatches_break(struct simwatches *ws, bool last);
/* `d` folded with every watch's events and end. */
uint64_t simwatches_digest(const struct simwatches *ws, uint64_t d);

#endif /* TESTS_SIM_SIMWATCH_H */
