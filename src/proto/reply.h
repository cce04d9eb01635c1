/* The answers any request may get: RESULT, NOT_LEADER and ERROR frames. */
#ifndef PROTO_REPLY_H
#define PROTO_REPLY_H

#include <stddef.h>
#include <stdint.h>

#include "proto.h"

#define PROTO_MESSAGE_MAX 255 /* ERROR text */

/*
 * RESULT: i32 status, u8 kind (enum proto_kind), u64 index, u64 session,
 * u64 owner, u64 token, u32 count, u32 waiters; with PROTO_FLAG_NAMES (the
 * answer to a QUERY that asked for names) then string client_name.
 */
struct proto_result {
        int32_t status;
        uint8_t kind;
        uint64_t index;
        uint64_t session;
        uint64_t owner;
        uint64_t token;
        uint32_t count;
        uint32_t waiters;
        /* Only in the PROTO_FLAG_NAMES shape: the holder's client name. */
        struct proto_string client_name;
};

/* RESULT in the shape `flags` say (0 or PROTO_FLAG_NAMES); 0 also for a
 * client name over PROTO_CLIENT_NAME_MAX bytes or with a NUL when it is
 * written. */
size_t proto_write_result(uint8_t *out, size_t cap, uint64_t id, uint16_t flags,
                          const struct proto_result *r);
/* RESULT in the shape its header's `flags` say: the client name is borrowed
 * from the body, and empty without PROTO_FLAG_NAMES. 0 or
 * BATON_EMALFORMED. */
int proto_read_result(const uint8_t *body, size_t len, uint16_t flags,
                      struct proto_result *r);

/* NOT_LEADER: u64 leader id (0: unknown), string the leader's client
 * address (`address` may be NULL: empty). */
size_t proto_write_not_leader(uint8_t *out, size_t cap, uint64_t id,
                              uint64_t leader_id, const char *address);
int proto_read_not_leader(const uint8_t *body, size_t len, uint64_t *leader_id,
                          struct proto_string *address);

/* ERROR: i32 status, string message (at most PROTO_MESSAGE_MAX bytes). */
size_t proto_write_error(uint8_t *out, size_t cap, uint64_t id, int status,
                         const char *message);
int proto_read_error(const uint8_t *body, size_t len, int *status,
                     struct proto_string *message);

#endif /* PROTO_REPLY_H */
