/* What a node's raft instance says of itself, in the wire's words: the
 * fields of a STATUS reply and who is a member. batond's node and the
 * simulation's nodes both answer from here. */
#ifndef SERVER_RAFTVIEW_H
#define SERVER_RAFTVIEW_H

#include <raft.h>
#include <stdbool.h>
#include <stdint.h>

#include "../../proto/status.h"

/* The client address of member `id` as the caller knows it (never NULL;
 * "" when unknown). The string must outlive the STATUS reply it goes in. */
typedef const char *(*raftview_address_fn)(void *data, uint64_t id);

/* Fill `st` from `r`: role, term, leader, commit, applied and last index,
 * and up to PROTO_MAX_MEMBERS members with their raft address (borrowed
 * from r's configuration) and client address (`address(data, id)`). The
 * rest of `st` is zeroed. */
void raftview_status(struct raft *r, raftview_address_fn address, void *data,
                     struct proto_status *st);

/* Whether r's configuration has a member with `id`, or, when `raft_address`
 * is not NULL, a member at that raft address. */
bool raftview_has_member(const struct raft *r, uint64_t id,
                         const char *raft_address);

#endif /* SERVER_RAFTVIEW_H */
