/* A budget of loop time per turn for work that can wait a turn (TLS
 * handshakes), so that a burst of it does not hold the loop. */
#ifndef SERVER_PACER_H
#define SERVER_PACER_H

#include <stdbool.h>
#include <stdint.h>

#include <uv.h>

#include "../../lib/queue.h"

/*
 * Ten thousand clients that lose their leader dial the next node at once,
 * and libuv reads every ready socket in one turn of the loop: at a few
 * hundred microseconds of CPU per TLS handshake, a node spent seconds in
 * one turn, sent no raft heartbeat meanwhile, and lost its leadership (or,
 * as a follower, stood for it) in the middle of the storm. A pacer lets
 * work of one kind take at most `budget_ns` of a turn: past it, the work
 * is deferred (pacer_defer()), and each later turn starts, before the loop
 * polls, by resuming what was deferred, oldest first, until the budget is
 * spent. While work waits the loop does not block in poll, so the pacer
 * costs throughput only when the loop has other work to do.
 *
 * What goes past the budget is the one call that crossed it: a pacer
 * bounds a turn to the budget plus one piece of work.
 */
struct pacer;

/* Do one deferred piece of work, `item` as given to pacer_defer() (and no
 * longer queued). The call spends from the budget by itself, through
 * pacer_spend(); it may defer the item again. */
typedef void (*pacer_resume_cb)(void *data, struct queue *item);

struct pacer {
        uv_prepare_t turn; /* each turn, before the poll: resume */
        uv_idle_t busy;    /* while work waits, poll does not block */
        struct queue waiting;
        uint64_t budget_ns;
        uint64_t spent_ns; /* this turn */
        uint64_t deferred; /* pieces deferred so far, for metrics */
        pacer_resume_cb resume;
        void *data;
};

/* Start pacing on `loop` with a budget of `budget_ns` per turn. 0, or a
 * negative UV_* code (nothing to close then). */
int pacer_init(struct pacer *p, uv_loop_t *loop, uint64_t budget_ns,
               pacer_resume_cb resume, void *data);

/* Whether this turn's budget has room for another piece. */
bool pacer_room(const struct pacer *p);

/* `ns` of the budget spent this turn. */
void pacer_spend(struct pacer *p, uint64_t ns);

/* Queue `item` (an unqueued link, borrowed until resumed or cancelled)
 * for a later turn; already waiting, it stays where it is. */
void pacer_defer(struct pacer *p, struct queue *item);

/* Take `item` out of the queue, if it waits (its owner is going away). */
void pacer_cancel(struct queue *item);

/* Stop; what still waits is dropped, not resumed. The handles close with
 * the loop's other handles (uv_close, no callback). */
void pacer_close(struct pacer *p);

#endif /* SERVER_PACER_H */
