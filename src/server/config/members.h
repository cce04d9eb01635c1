/* The member list of batond's configuration: addresses, and the list as a
 * whole. */
#ifndef SERVER_MEMBERS_H
#define SERVER_MEMBERS_H

#include <stdbool.h>
#include <stddef.h>

#include "settings.h"

/*
 * Check one address, "host:port" or "[ipv6]:port" (`raft`: a raft address,
 * which may not be IPv6). Returns 0, or BATON_EINVAL with a message in
 * `msg` that quotes the address and says what is accepted.
 */
int members_parse_address(const char *s, bool raft, char *msg, size_t size);

/* Check the raft and client addresses of one member (NUL-terminated
 * strings). 0 or BATON_EINVAL, as above, naming which address is wrong. */
int members_parse_pair(const char *raft, const char *client, char *msg,
                       size_t size);

/* Append one "ID RAFT_ADDRESS CLIENT_ADDRESS" line to c->members: 0, or
 * BATON_EINVAL with a message (bad id, address, duplicate id, too many). */
int members_add(struct config *c, const char *value, char *msg, size_t size);

/*
 * Check the list as a whole: at least one member, ids non-zero and
 * unique, addresses valid and all distinct (the metrics address too), and
 * c->id one of them. Returns 0 or BATON_EINVAL with a message naming the
 * key.
 */
int members_check(const struct config *c, char *errmsg, size_t errmsg_size);

/*
 * This node's listen addresses, after members_check(): client_listen and
 * raft_listen, when empty, become the member line's client and raft
 * addresses; then no two of this node's listeners (client, raft, metrics)
 * may be the same address, nor share a port where one is a wildcard
 * (0.0.0.0 or [::], which take the port on every address). Returns 0 or
 * BATON_EINVAL with a message naming the keys.
 */
int members_listen(struct config *c, char *errmsg, size_t errmsg_size);

#endif /* SERVER_MEMBERS_H */
