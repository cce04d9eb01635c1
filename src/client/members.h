/* libbaton's membership calls (members.c implements them for
 * include/baton.h), and the lookup in a status's member list that they
 * and baton_status() share. */
#ifndef CLIENT_MEMBERS_H
#define CLIENT_MEMBERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../include/baton.h"
#include "../proto/proto.h"
#include "../proto/reply.h"
#include "../proto/aclwire.h"

/* The member of `st` (borrowed) with raft id `id`, or NULL when its list
 * has none. */
const struct baton_member *members_find(const struct baton_status *st,
                                        uint64_t id);

/* The largest request members_ask() sends: an ACL RULE_SET with the
 * longest subject and prefix. */
#define MEMBERS_FRAME_MAX (PROTO_HEADER_SIZE + PROTO_ACL_REQUEST_MAX)

/* An answer of another type than RESULT that a request takes: `cb` gets
 * its body (borrowed for the call) and returns the call's result. */
struct members_reply {
        uint8_t type;
        int (*cb)(void *data, const uint8_t *body, size_t len);
        void *data;
};

/*
 * Send `frame` (`len` bytes, at most MEMBERS_FRAME_MAX; its id is set on
 * each send) to the leader over a connection of its own, as MEMBER_REMOVE
 * and TRANSFER are (members.c says when it goes again; `again`: also after
 * an unknown outcome). 0 with its RESULT in `*res` (or the result of
 * `reply`'s callback, when `reply` is not NULL and the answer is of its
 * type), or BATON_ENOANSWER, BATON_ETLS, BATON_ENOMEM, BATON_EINVAL.
 * `*unknown`: an earlier send may have been acted on.
 */
int members_ask(baton_client *c, const uint8_t *frame, size_t len, bool again,
                const struct members_reply *reply, struct proto_result *res,
                bool *unknown);

#endif /* CLIENT_MEMBERS_H */
