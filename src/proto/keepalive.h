/* Keeping a session alive: KEEPALIVE and KEEPALIVE_OK frames, plain or
 * with PROTO_FLAG_REVOKED, which asks for and carries the count of the
 * session's grants an administrator has revoked. */
#ifndef PROTO_KEEPALIVE_H
#define PROTO_KEEPALIVE_H

#include <stddef.h>
#include <stdint.h>

#include "proto.h"

/* KEEPALIVE: u64 session, with `flags` 0 or PROTO_FLAG_REVOKED (the body
 * is the same; proto_read_u64() reads it). */
size_t proto_write_keepalive(uint8_t *out, size_t cap, uint64_t id,
                             uint16_t flags, uint64_t session);

/* KEEPALIVE_OK: u32 ttl_ms (the session's deadline is now + ttl_ms); with
 * PROTO_FLAG_REVOKED then u32 revoked, how many of the session's grants
 * an administrator has revoked so far, wrapping (ignored without it). */
size_t proto_write_keepalive_ok(uint8_t *out, size_t cap, uint64_t id,
                                uint16_t flags, uint32_t ttl_ms,
                                uint32_t revoked);
/* KEEPALIVE_OK in the shape its header's `flags` say: `*revoked` is 0
 * without PROTO_FLAG_REVOKED. 0 or BATON_EMALFORMED. */
int proto_read_keepalive_ok(const uint8_t *body, size_t len, uint16_t flags,
                            uint32_t *ttl_ms, uint32_t *revoked);

#endif /* PROTO_KEEPALIVE_H */
