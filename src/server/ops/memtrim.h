/* Giving the heap's free memory back to the kernel once the raft log has
 * shrunk, so that a node's resident memory comes down after a burst. */
#ifndef SERVER_MEMTRIM_H
#define SERVER_MEMTRIM_H

#include <stdint.h>

#include <uv.h>

#include "../base/histogram.h"

struct node;

/*
 * glibc gives freed memory back to the kernel only from the top of its
 * heap. A burst of commands (a million acquires, pipelined) stays in the
 * raft log until the snapshots after it let raft free the entries, and by
 * then newer allocations sit above them: at a million locks, 30-70 MB of
 * each node's heap was free and still resident. So once a snapshot has
 * moved the node's snapshot index and been written (raft frees the
 * entries it compacts then), a timer calls malloc_trim(),
 * which returns every whole free page. It runs on the loop, at most once
 * a period and only after a snapshot; the time each call takes is in
 * `took` (the metric baton_heap_trim_seconds).
 */
#define MEMTRIM_PERIOD_MS 1000

struct memtrim {
        uv_timer_t timer;
        const struct node *node;
        uint64_t trimmed_at; /* the snapshot index at the last trim */
        struct histogram took;
};

/* Start on `loop` for `node`. The timer does not keep the loop alive. */
void memtrim_start(struct memtrim *t, uv_loop_t *loop, const struct node *node);

/* Stop and close the timer (its close completes on the loop). */
void memtrim_close(struct memtrim *t);

#endif /* SERVER_MEMTRIM_H */
