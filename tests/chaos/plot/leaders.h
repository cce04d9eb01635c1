/* Who led when, and when each node was down, read from the nodes' logs
 * (RUN/nodes/nI/node.log) and the run's exits, on the monotonic clock. */
#ifndef CHAOS_PLOT_LEADERS_H
#define CHAOS_PLOT_LEADERS_H

#include <stddef.h>
#include <stdint.h>

#include "../check/nemlog.h"

/* Node logs looked for: nodes/n1 to nodes/n<this>. */
#define LEADERS_MAX_NODES 16

/* A node serving as leader from `start` to `end`. */
struct leaders_span {
        int node; /* from 1 */
        uint64_t term;
        int64_t start, end;
};

/* A node's process gone: from its exit to its restart. */
struct leaders_down {
        int node;
        int64_t start, end;
};

struct leaders {
        int n_nodes; /* the highest node directory nI found */
        struct leaders_span *spans;
        size_t n_spans, cap_spans;
        struct leaders_down *downs;
        size_t n_downs, cap_downs;
        /* Node logs stamp lines with the wall clock: the offset (wall ns
         * minus monotonic ns) is the smallest seen between a
         * "=== scripts/chaos: t=<mono> start:" line and the node's first
         * line after it; false when no log had such a pair. */
        bool have_offset;
        int64_t offset;
};

/*
 * Read RUN_DIR/nodes/nI/node.log and nl's exits (proc=nodeI). A leader's
 * span starts at its "serving as leader in term N" line and ends at the
 * first of: its "stopped serving" line, its node's exit, the start of a
 * leader of a higher term, `t_end`. A down span runs from a node's exit to
 * its next start line (or `t_end`). Missing logs give no spans. 0, or -1
 * with a message in `errmsg` when a log exists but cannot be read.
 */
int leaders_load(struct leaders *l, const char *run_dir,
                 const struct nemlog *nl, int64_t t_end, char *errmsg,
                 size_t cap);

/* Free what leaders_load() allocated (accepts a zeroed struct). */
void leaders_free(struct leaders *l);

#endif /* CHAOS_PLOT_LEADERS_H */
