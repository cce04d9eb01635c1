/* The names of a node's raft roles (enum baton_node_role), as batonctl
 * status and the health endpoints print them. */
#ifndef LIB_ROLENAME_H
#define LIB_ROLENAME_H

/* "unavailable", "follower", "candidate" or "leader"; "unknown" for any
 * other value. */
const char *role_name(int role);

#endif /* LIB_ROLENAME_H */
