/* When a follower that saw its leader's connection close stands for
 * election: in turns by id among the voters left, a short step apart,
 * instead of after libraft's randomized election timeout. No I/O but the
 * timeout handed to raft (leaderloss_timeout_now()).
 *
 * libraft 0.22.1 (tag v0.22.1 of cowsql/raft) gives a pre-vote only when
 * the voter knows no leader (recvRequestVote in src/recv_request_vote.c:
 * a follower whose current_leader is set refuses, however long ago it
 * heard from it), and a follower forgets its leader only when it becomes
 * a candidate itself (convertToCandidate in src/convert.c). So when a
 * leader dies, the first follower to stand is refused by the others
 * until their own timers run out, and the follower that stands last is
 * the one that wins. A follower that stands early therefore needs the
 * others to stand too: each one that sees the leader's connection close
 * stands at its turn, rank * step after the close (rank: its place by id
 * among the voters but the leader), so that one (the last of a majority)
 * finds the others already candidates and gets their pre-votes, and no
 * two stand in the same instant, which would split the real vote (each
 * grants the other's pre-vote, then votes for itself). A second round,
 * survivors * step later, ends a split or a pre-vote refused for a
 * shorter log. Pre-vote stays: a follower whose leader is alive (the
 * connection was only reset) is refused by the leader and by every
 * follower that still hears it, and no term moves. */
#ifndef SERVER_LEADERLOSS_H
#define SERVER_LEADERLOSS_H

#include <stdbool.h>
#include <stdint.h>

#include <raft.h>

#include "heard.h"

/* Rounds of turns after a close (the second ends split votes). */
#define LEADERLOSS_ROUNDS 2

/* One close of the leader's connection being acted on. */
struct leaderloss {
        uint64_t leader;  /* whose connection closed; 0: none */
        uint64_t appends; /* heard's count of AppendEntries then */
        uint64_t since;   /* when (ms, the loop's clock) */
        unsigned rank;    /* this node's turn among the voters left */
        unsigned voters;  /* the voters left */
        unsigned round;   /* the next round */
};

/* This node's turn when `leader` is lost: its rank by id among the voters
 * of `conf` but `leader`, into *rank, and how many they are, into
 * *voters. false when this node is not one of them (a non-voter stands
 * for nothing). */
bool leaderloss_rank(const struct raft_configuration *conf, uint64_t self,
                     uint64_t leader, unsigned *rank, unsigned *voters);

/* When round `round` of this node's turns is due, in ms after the close,
 * with `step_ms` between turns. */
uint64_t leaderloss_due(const struct leaderloss *l, unsigned round,
                        unsigned step_ms);

/* Whether a turn stands: raft follows the lost leader still and heard
 * nothing from it since the close, or raft is a candidate (an election
 * that has not ended, perhaps split) in a round after the first. A
 * follower of someone else, or one that just voted, has a leader coming. */
bool leaderloss_stands(const struct leaderloss *l, struct raft *r,
                       const struct heard *h, unsigned round);

/* Make raft time out now as if its election timer had run out: the
 * election timeout briefly 1 ms and a tick (the legacy interface's
 * RAFT_TIMEOUT), then `election_ms` again (which re-draws the randomized
 * timeout of a follower or candidate, from when its timer last started).
 * raft stays a follower if it has entries still being stored, a snapshot
 * being installed, or heard a leader within the last 2 ms
 * (timeoutFollower in src/timeout.c). Never from inside a raft callback.
 * Returns whether raft's state changed or, for a candidate, a new
 * election started (its term or pre-vote round). */
bool leaderloss_timeout_now(struct raft *r, struct heard *h,
                            unsigned election_ms, unsigned heartbeat_ms);

#endif /* SERVER_LEADERLOSS_H */
