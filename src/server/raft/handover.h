/* Which voter a leader can hand leadership to at once: one that has stored
 * every entry of the leader's log, the only kind libraft 0.22.1's
 * TimeoutNow makes a candidate (node_transfer(), docs/raft.md). */
#ifndef SERVER_HANDOVER_H
#define SERVER_HANDOVER_H

#include <stdbool.h>
#include <stdint.h>

#include <raft.h>

/* On a leader: `to` if that voter has stored the leader's whole log (0:
 * the first voter other than this node that has), else 0. */
uint64_t handover_caught_up(struct raft *r, uint64_t to);

/* Whether `to` is a voter other than this node (0: whether one exists). */
bool handover_possible(const struct raft *r, uint64_t to);

#endif /* SERVER_HANDOVER_H */
