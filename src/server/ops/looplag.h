/* Event-loop lag: how late a periodic timer fires, so that a loop busy
 * with one long task (a snapshot, a log to drop) shows in the metrics. */
#ifndef SERVER_LOOPLAG_H
#define SERVER_LOOPLAG_H

#include <stdint.h>

#include <uv.h>

#include "../base/histogram.h"

/* The timer's period: lag is measured with this resolution. */
#define LOOPLAG_PERIOD_MS 10

/* A lag this long is said in the log as well, with the time it ended, so
 * that an operator (or a benchmark) can tell what froze the loop from
 * what the log says happened just before: the heartbeats of a follower
 * start to be missed around here. */
#define LOOPLAG_WARN_MS 100

struct looplag {
        uv_timer_t timer;
        uint64_t due_ns;      /* when the timer should fire next */
        struct histogram lag; /* how late each firing was */
};

/* Start measuring on `loop`. The timer does not keep the loop alive. */
void looplag_start(struct looplag *l, uv_loop_t *loop);

/* Stop and close the timer (its close completes on the loop). */
void looplag_close(struct looplag *l);

#endif /* SERVER_LOOPLAG_H */
