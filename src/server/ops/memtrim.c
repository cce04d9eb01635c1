/* Giving the heap's free memory back to the kernel once the raft log has
 * shrunk, so that a node's resident memory comes down after a burst. */
#include "memtrim.h"

#include <malloc.h>
#include <string.h>

#include "../raft/node.h"

static void on_tick(uv_timer_t *timer)
{
        struct memtrim *t = timer->data;
        uint64_t index = node_snapshot_index(t->node);
        uint64_t start;

        /* Raft frees the log behind a snapshot of the node's own once it
         * is written, in the callback that finalizes it. */
        if (index == t->trimmed_at || node_snapshot_writing(t->node)) {
                return;
        }
        t->trimmed_at = index;
        start = uv_hrtime();
        malloc_trim(0);
        histogram_add(&t->took, uv_hrtime() - start);
}

void memtrim_start(struct memtrim *t, uv_loop_t *loop, const struct node *node)
{
        memset(t, 0, sizeof *t);
        t->node = node;
        t->trimmed_at = node_snapshot_index(node);
        uv_timer_init(loop, &t->timer);
        t->timer.data = t;
        uv_timer_start(&t->timer, on_tick, MEMTRIM_PERIOD_MS,
                       MEMTRIM_PERIOD_MS);
        uv_unref((uv_handle_t *)&t->timer);
}

void memtrim_close(struct memtrim *t)
{
        uv_timer_stop(&t->timer);
        uv_close((uv_handle_t *)&t->timer, NULL);
}
