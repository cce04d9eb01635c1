/* An AppendEntries handed to raft in parts, each RAFT_CHANGE entry first
 * in a part of its own, so that libraft 0.22.1 records a follower's new
 * configuration at the change's own index (heard.h says why). batond's
 * receive path (heard.c) and the simulation's (tests/lib/simwire.c) both
 * split through here. */
#ifndef SERVER_CHANGESPLIT_H
#define SERVER_CHANGESPLIT_H

#include <raft.h>

/* How a part's copy of its entries' bytes is laid out: as raft's uv
 * backend decodes a message (each buffer 8-byte aligned, an empty one
 * NULL), or as raft_fixture's in-memory network hands one over (packed). */
enum changesplit_layout { CHANGESPLIT_UV, CHANGESPLIT_FIXTURE };

/* Hand the AppendEntries `msg` to raft's `recv` split before each
 * RAFT_CHANGE entry after its first, each part in order, as if the leader
 * had sent smaller messages: raft sees the same entries in the same
 * order. Each part but the first gets its own batch (raft frees a
 * message's batch through its first entry); without memory for one, the
 * rest goes whole. Returns the number of splits made. */
unsigned changesplit_deliver(struct raft_io *io, struct raft_message *msg,
                             enum changesplit_layout layout,
                             raft_io_recv_cb recv);

#endif /* SERVER_CHANGESPLIT_H */
