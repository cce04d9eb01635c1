/* What this node last heard from a leader: the commit index a leader sends
 * in every AppendEntries (heartbeats too), taken from raft's receive path
 * on the way in, so that GET /ready can tell how far this node's state
 * machine is behind the leader's commit index (libraft 0.22.1 keeps a
 * follower's own commit index at or below what it has stored, which says
 * nothing of a follower that is still receiving the log).
 *
 * The same place keeps one message from raft: an InstallSnapshot that
 * arrives while this node writes a snapshot of its own. libraft 0.22.1
 * puts such an install on hold until its own write is done, then starts
 * it through a pointer it has just cleared (legacy.c, takeSnapshotCb):
 * the node dies with SIGSEGV. Dropped, the message is lost as any message
 * may be, and the leader sends the snapshot again after its
 * install-snapshot timeout (node.c sets 5 s). docs/raft.md.
 *
 * And one more: an InstallSnapshot that arrives while raft is still
 * installing an earlier one. libraft 0.22.1 ignores it, as it should, but
 * without freeing its data and configuration (replicationInstallSnapshot
 * returns early with async set, and recvInstallSnapshot then frees
 * nothing), so every resend during a slow install leaked the whole
 * snapshot. Dropped here, it is freed and ignored alike.
 *
 * And it reshapes one: an AppendEntries that carries a configuration
 * change (RAFT_CHANGE) after its first entry. libraft 0.22.1 records a
 * follower's uncommitted configuration at the index of the first new entry
 * of the message, not of the change itself (replicationAppend passes
 * `index` where 0.15 passed `index + i`), so the change, once applied,
 * never matches it and the follower keeps a configuration change "in
 * progress" forever: made leader, it refuses every member add and remove
 * (RAFT_CANTCHANGE) until it restarts. A follower that catches up in big
 * batches, as a newly added member does, gets such messages. Split before
 * each change, every change is the first entry of its message and is
 * recorded at its own index; raft sees the same entries in the same
 * order, as if the leader had sent smaller batches. docs/raft.md. */
#ifndef SERVER_HEARD_H
#define SERVER_HEARD_H

#include <stdbool.h>
#include <stdint.h>

#include <raft.h>

/* Peers whose last message is remembered: twice the members a cluster
 * may have, for the members removed and added meanwhile. */
#define HEARD_PEERS 32

struct heard {
        struct raft_io io; /* raft_uv's I/O, whose start() heard_wrap()s */
        int (*start)(struct raft_io *io, unsigned msecs, raft_io_tick_cb tick,
                     raft_io_recv_cb recv);
        raft_io_recv_cb recv;   /* raft's own */
        raft_io_tick_cb tick;   /* raft's own: a timeout event, now */
        uint64_t appends;       /* AppendEntries received, any term */
        uint64_t term;          /* of the newest AppendEntries seen */
        uint64_t leader_commit; /* the highest commit index sent in `term` */
        /* While *writing (the state machine writes a snapshot) or
         * *installing (raft installs one: &raft->snapshot.installing) is
         * true, InstallSnapshot messages are dropped and counted; NULL:
         * never. */
        const bool *writing;
        const bool *installing;
        uint64_t installs_dropped;
        uint64_t changes_split; /* AppendEntries split before a change */
        /* When a message of each peer last arrived (raft_io's clock, ms),
         * for the voters a leader reaches: the HEARD_PEERS last heard. */
        struct heard_peer {
                uint64_t id;
                uint64_t at;
        } peers[HEARD_PEERS];
        unsigned n_peers;
};

/* Wrap h->io, set up by raft_uv_init() and not yet started: every message
 * raft receives passes by heard first. */
void heard_wrap(struct heard *h);

/* The commit index a leader of `term` last sent, or 0 when none was heard
 * in that term. */
uint64_t heard_leader_commit(const struct heard *h, uint64_t term);

/* Whether a message of peer `id` arrived at `since` or later (raft_io's
 * clock, ms). */
bool heard_from_since(const struct heard *h, uint64_t id, uint64_t since);

#endif /* SERVER_HEARD_H */
