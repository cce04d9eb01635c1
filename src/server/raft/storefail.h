/* The writes whose failure libraft 0.22.1 passes over in silence: storing
 * the term and vote (metadata1, metadata2) and storing a snapshot's files;
 * batond stops at the first one that fails, with one line saying which.
 *
 * The term and vote: raft_io's set_term() and set_vote() write the other
 * metadata file over itself and fdatasync it, on the loop. When that fails,
 * the legacy layer returns from the event early (legacyHandleEvent): the
 * messages, entries and snapshot of that step are dropped, while raft
 * keeps the new term (and vote) in memory, and tickCb()/recvCb() then
 * assert the return away (Debian's libraft has NDEBUG). The node goes on
 * answering the new leader on a term its disk does not hold, and the
 * entries that step dropped are never written: the next ones are written
 * where they should have been. Seen: a follower whose term sync failed
 * acknowledged every grant of the new leader, and after a power cut its
 * directory held entries of a term above its metadata's (batond refused
 * it, exit status 3: wiped, it had lost them all).
 *
 * A snapshot: raft_uv writes each of its two files as an O_TMPFILE file
 * and syncs it (a failure there is retried on a timer, which is safe:
 * each try writes new files; stallwatch.h says so), then links them and
 * syncs the directory and removes what the snapshot replaces. A failure
 * of those last steps completes the put with an error, which libraft
 * 0.22.1 takes for a cancellation (takeSnapshotCb, legacyPersistSnapshotCb
 * assert it away): a snapshot it took is forgotten with the installs held
 * behind it, and a snapshot a leader sent leaves raft "installing" for
 * good, so the follower ignores every later one and never catches up.
 *
 * After a failed sync, a sync that works proves nothing of what the failed
 * one held (fsyncgate), so nothing is retried here: the node stops (exit
 * status 1) before raft takes another step, having answered nothing on
 * the strength of the failed write, and the next start makes what raft's
 * files read as durable before raft loads them (disksettle.h). */
#ifndef SERVER_STOREFAIL_H
#define SERVER_STOREFAIL_H

#include <raft.h>

/* raft_uv's own functions, which the wrappers call. */
struct storefail {
        const char *dir; /* borrowed: the data directory, for the line */
        const struct raft *raft; /* borrowed: its term, for the line */
        int (*set_term)(struct raft_io *io, raft_term term);
        int (*set_vote)(struct raft_io *io, raft_id server_id);
        int (*snapshot_put)(struct raft_io *io, unsigned trailing,
                            struct raft_io_snapshot_put *req,
                            const struct raft_snapshot *snapshot,
                            raft_io_snapshot_put_cb cb);
};

struct node_core;

/* Wrap c->heard.io (set up by raft_uv_init(), not yet handed to raft) so
 * that a failed store of the term and vote, or of a snapshot, stops
 * batond; `dir` is borrowed for as long as the node runs. */
void storefail_wrap(struct node_core *c, const char *dir);

#endif /* SERVER_STOREFAIL_H */
