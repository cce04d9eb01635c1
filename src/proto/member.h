/* Changing the cluster's membership: the MEMBER_ADD frame (MEMBER_REMOVE
 * and TRANSFER carry one u64: proto_write_id() in proto.h). */
#ifndef PROTO_MEMBER_H
#define PROTO_MEMBER_H

#include <stddef.h>
#include <stdint.h>

#include "proto.h"

/* MEMBER_ADD: u64 id, string raft address, string client address (each
 * 1..PROTO_ADDRESS_MAX bytes). */
size_t proto_write_member_add(uint8_t *out, size_t cap, uint64_t id,
                              uint64_t member, const char *raft_address,
                              const char *client_address);
/* The addresses borrowed from the body: 0 or BATON_EMALFORMED. */
int proto_read_member_add(const uint8_t *body, size_t len, uint64_t *member,
                          struct proto_string *raft_address,
                          struct proto_string *client_address);

#endif /* PROTO_MEMBER_H */
