/* How long raft's appends into the data directory take: raft_uv's append,
 * from the call to its callback (the write and its sync), timed. */
#ifndef SERVER_DISKWRITE_H
#define SERVER_DISKWRITE_H

#include <raft.h>

#include "../base/histogram.h"

/*
 * raft_uv writes a batch of entries with RWF_DSYNC (or a write then a
 * sync) on its own threads and calls back on the loop, so what the loop
 * sees is the append-to-callback latency: the disk's, plus the time the
 * callback waited for the loop, plus the wait behind a segment raft_uv
 * was still preparing. libraft gives no way to time the write alone.
 */
struct diskwrite {
        int (*append)(struct raft_io *io, struct raft_io_append *req,
                      const struct raft_entry entries[], unsigned n,
                      raft_io_append_cb cb); /* raft_uv's own */
        struct histogram took; /* appends that completed, failed ones too */
};

struct node_core;

/* Wrap c->heard.io's append (set up by raft_uv_init(), not yet handed to
 * raft) so that each one is timed into c->disk.took. */
void diskwrite_wrap(struct node_core *c);

#endif /* SERVER_DISKWRITE_H */
