/* The messages a simulated node sends and receives, through shims around
 * its raft_io: patched where libraft 0.22.1 would act on bytes that no
 * seed decides, so that a seed replays exactly. */
#ifndef TESTS_SIMWIRE_H
#define TESTS_SIMWIRE_H

#include <stdbool.h>

#include <raft.h>

/*
 * Two places in libraft 0.22.1 let a run follow something other than its
 * seed (docs/raft.md, "The simulation"):
 *
 * 1. An uninitialised field on the wire. A follower that rejects an
 *    AppendEntries (or InstallSnapshot) because its own term is higher
 *    builds the result on its stack (recvAppendEntries(),
 *    recvInstallSnapshot(): "local term is higher -> reject") and sets
 *    rejected, term, version, features and capacity, but not
 *    last_log_index. The leader that receives it reads last_log_index at
 *    once (recvAppendEntriesResult() tests `last_log_index >= rejected`:
 *    valgrind's "Conditional jump or move depends on uninitialised
 *    value(s)") and, if it leads in that higher term by then and probes
 *    the follower at `rejected`, takes it as the follower's log hint:
 *    next_index = min(rejected, last_log_index + 1). What earlier calls
 *    had left on the stack there was seen to be a stack address, a
 *    library address or a small number. libraft after 0.22.1 sets it to 0
 *    on that path.
 *
 *    The shims note the AppendEntries or InstallSnapshot a node is
 *    receiving (raft answers from within the receive callback it gave
 *    io->start) and look at each message it sends meanwhile (io->send,
 *    which the fixture copies before it returns). A result sent back to
 *    the request's sender with a higher term than the request's is one of
 *    those rejections; its last_log_index becomes rejected - 1 (0 when
 *    rejected is 0): what the leader makes of any value at or above
 *    `rejected` itself, as a stale pointer always was. Not 0 as in later
 *    libraft: a leader that took 0 would probe the follower from index 1,
 *    which it may have compacted away, and the fixture cannot survive the
 *    InstallSnapshot that follows (see simcluster_may_append()).
 *
 * 2. A pointer's byte taken for a flag. recvRequestVoteResult() reads
 *    candidate_state.in_pre_vote before it checks that the node is a
 *    candidate. In a follower that byte is the second byte of
 *    follower_state.current_leader.address, a heap pointer (struct raft
 *    keeps the three states' fields in a union), so whether a follower
 *    with a leader takes the higher term of a stale vote result (the byte
 *    is 0) or ignores the result (any other value) depended on where
 *    malloc had put the leader's address: with address-space
 *    randomisation, on the process, and on what the process had run
 *    before. Valgrind sees nothing: the byte is defined. canonical/raft
 *    0.18.1 checks the state first, and ignores the result.
 *
 *    So before a follower with a leader receives a vote result with a
 *    higher term than its own, the shim lowers that term to the
 *    follower's: the result is ignored either way, as in canonical/raft
 *    and as whenever that byte was not 0. A follower without a leader has
 *    NULL there (the byte is 0 and the term is taken, always), and a
 *    leader the promotee id, 0 or a server id below 256 (the same): both
 *    are left alone.
 *
 * And one that batond's receive path works around (heard.h) and the
 * fixture's must too, now that the simulation changes the membership: a
 * follower that gets a configuration change (RAFT_CHANGE) after the first
 * entry of an AppendEntries records it at the index of the message's
 * first new entry, keeps the change "in progress" for good, and, made
 * leader, refuses every change (RAFT_CANTCHANGE). The shim splits such a
 * message before each change, as batond's heard.c does: raft gets the
 * same entries in the same order, in smaller messages.
 */
struct simwire {
        struct raft *raft;
        int (*start)(struct raft_io *io, unsigned msecs, raft_io_tick_cb tick,
                     raft_io_recv_cb recv);
        int (*send)(struct raft_io *io, struct raft_io_send *req,
                    const struct raft_message *message, raft_io_send_cb cb);
        raft_io_recv_cb recv; /* raft's, as given to io->start */
        /* The AppendEntries or InstallSnapshot being received, if any. */
        bool receiving;
        raft_id from;
        raft_term term;
        unsigned hints;   /* results given a last_log_index (1.) */
        unsigned lowered; /* vote results given the follower's term (2.) */
        unsigned splits;  /* AppendEntries split before a change (3.) */
};

/*
 * Wrap the methods of `raft`'s io (a fixture node's, after
 * raft_fixture_grow() and before raft_fixture_start()). `raft` is
 * borrowed until simwire_close(). At most SIMWIRE_MAX_IOS are attached at
 * a time. 0 or RAFT_NOMEM.
 */
#define SIMWIRE_MAX_IOS 16
int simwire_attach(struct simwire *w, struct raft *raft);

/* Forget `w`. Accepts one that was never attached. */
void simwire_close(struct simwire *w);

#endif /* TESTS_SIMWIRE_H */
