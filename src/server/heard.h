/* What this node last heard from a leader: the commit index a leader sends
 * in every AppendEntries (heartbeats too), taken from raft's receive path
 * on the way in, so that GET /ready can tell how far this node's state
 * machine is behind the leader's commit index (libraft 0.22.1 keeps a
 * follower's own commit index at or below what it has stored, which says
 * nothing of a follower that is still receiving the log). */
#ifndef SERVER_HEARD_H
#define SERVER_HEARD_H

#include <stdint.h>

#include <raft.h>

struct heard {
        struct raft_io io; /* raft_uv's I/O, whose start() heard_wrap()s */
        int (*start)(struct raft_io *io, unsigned msecs, raft_io_tick_cb tick,
                     raft_io_recv_cb recv);
        raft_io_recv_cb recv;   /* raft's own */
        uint64_t term;          /* of the newest AppendEntries seen */
        uint64_t leader_commit; /* the highest commit index sent in `term` */
};

/* Wrap h->io, set up by raft_uv_init() and not yet started: every message
 * raft receives passes by heard first. */
void heard_wrap(struct heard *h);

/* The commit index a leader of `term` last sent, or 0 when none was heard
 * in that term. */
uint64_t heard_leader_commit(const struct heard *h, uint64_t term);

#endif /* SERVER_HEARD_H */
