/* The crash points around raft's disk and state machine (crashpoint.h):
 * raft_uv's appends and snapshot writes, the state machine's restores and
 * the membership entries it applies, each wrapped so that
 * batond-crashpoints can die right before or right after one. */
#ifndef SERVER_CRASHIO_H
#define SERVER_CRASHIO_H

#include "../base/crashpoint.h"

/*
 * The points: append-before (raft hands entries to the disk),
 * append-after (they are on disk, raft not told yet), snapshot-put-before,
 * snapshot-put-after (the same for a snapshot: one this node took, or one
 * a leader sent it before it is restored), restore-before, restore-after
 * (the state machine restores a snapshot: before it starts, after it took
 * it or handed it to its worker), member-applied (the state machine has
 * just applied a member entry: member add, remove, or the first leader's
 * record of the members).
 *
 * Only batond-crashpoints (BATON_CHAOS_CRASHPOINTS) has them: in batond
 * CRASHIO_WRAP is empty and struct crashio is not part of a node.
 */
#ifdef BATON_CHAOS_CRASHPOINTS

#include <raft.h>

struct node_core;

/* raft_uv's and the state machine's own functions, called by the wrappers. */
struct crashio {
        int (*append)(struct raft_io *io, struct raft_io_append *req,
                      const struct raft_entry entries[], unsigned n,
                      raft_io_append_cb cb);
        int (*snapshot_put)(struct raft_io *io, unsigned trailing,
                            struct raft_io_snapshot_put *req,
                            const struct raft_snapshot *snapshot,
                            raft_io_snapshot_put_cb cb);
        int (*apply)(struct raft_fsm *fsm, const struct raft_buffer *buf,
                     void **result);
        int (*restore)(struct raft_fsm *fsm, struct raft_buffer *buf);
};

/* Wrap c->heard.io (set up, not started) and c->rf.fsm (set up), before
 * raft_init() sees them. */
void crashio_wrap(struct node_core *c);
#define CRASHIO_WRAP(c) crashio_wrap(c)
#else
#define CRASHIO_WRAP(c) ((void)(c))
#endif

#endif /* SERVER_CRASHIO_H */
