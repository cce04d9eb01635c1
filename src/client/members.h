/* libbaton's membership calls (members.c implements them for
 * include/baton.h), and the lookup in a status's member list that they
 * and baton_status() share. */
#ifndef CLIENT_MEMBERS_H
#define CLIENT_MEMBERS_H

#include <stdint.h>

#include "../../include/baton.h"

/* The member of `st` (borrowed) with raft id `id`, or NULL when its list
 * has none. */
const struct baton_member *members_find(const struct baton_status *st,
                                        uint64_t id);

#endif /* CLIENT_MEMBERS_H */
