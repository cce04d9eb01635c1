/* When each node takes its snapshots: at indexes of its own, so that the
 * nodes of a cluster do not all write one at the same moment. */
#ifndef SERVER_SNAPPHASE_H
#define SERVER_SNAPPHASE_H

#include <stdint.h>

/*
 * raft takes a snapshot once `threshold` entries have been applied since
 * the last one. Every node applies the same log, so with one threshold
 * they all take their snapshots at the same indexes: each closes a log
 * segment (a stall of its loop) and writes the whole state to disk at the
 * same moment, and a commit, which needs the leader and a follower, waits
 * for both. With the state of a million locks that is 18-36 MB written by
 * every node at once, every 4,096 entries.
 *
 * So each node has a phase in [0, threshold), spread by its id, and takes
 * its snapshots at the indexes congruent to it modulo `threshold`: raft's
 * threshold after a snapshot at `index` is the distance to the next such
 * index. While one node writes, the others commit. Two snapshots are never
 * more than `threshold` entries apart, and on average exactly that.
 */

/* This node's phase, in [0, threshold): the fractional part of id times
 * the golden ratio's inverse, which spreads consecutive ids about evenly
 * for any number of them (ids 1, 2, 3: 0.62, 0.24, 0.85 of threshold). */
uint32_t snapphase_of(uint64_t id, uint32_t threshold);

/* The threshold to give raft after a snapshot (or a restore) at `index`:
 * the distance to the next index above it at this node's phase, in
 * [1, threshold]. A threshold of 0 gives 0. */
uint32_t snapphase_gap(uint64_t id, uint64_t index, uint32_t threshold);

#endif /* SERVER_SNAPPHASE_H */
