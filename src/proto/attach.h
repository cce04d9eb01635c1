/* Session ownership on the wire: the ATTACH request, and the sizes of a
 * session's secret and of the hash of it that OPEN carries. */
#ifndef PROTO_ATTACH_H
#define PROTO_ATTACH_H

#include <stddef.h>
#include <stdint.h>

/*
 * A session belongs to the client that opened it. That client draws
 * ATTACH_SECRET_SIZE random bytes and sends only their SHA-256
 * (ATTACH_HASH_SIZE bytes) in OPEN; the replicated state keeps the hash as
 * opaque bytes. On any later connection the client proves ownership with
 *
 *   ATTACH   u64 session, 16 bytes secret
 *
 * answered with a RESULT: status 0 (kind OPENED, `session` set) when
 * SHA-256(secret) is the session's hash, BATON_EPERM when it is not, or
 * the session's status when it is not live. Only then may the connection
 * send KEEPALIVE, CLOSE, ACQUIRE, RELEASE or CANCEL in that session.
 */
#define ATTACH_SECRET_SIZE 16
#define ATTACH_HASH_SIZE   32
#define ATTACH_BODY_SIZE   (8 + ATTACH_SECRET_SIZE)

/* Write an ATTACH frame with request id `id` into `out` (capacity `cap`):
 * its length, or 0 when it does not fit. `secret` is borrowed. */
size_t attach_write(uint8_t *out, size_t cap, uint64_t id, uint64_t session,
                    const uint8_t *secret);

/* The hash OPEN carries for `secret` (ATTACH_SECRET_SIZE bytes, borrowed):
 * its SHA-256 into `hash` (ATTACH_HASH_SIZE bytes). 0, or BATON_ENOMEM when
 * OpenSSL could not compute it (it allocates a digest context). */
int attach_hash(const uint8_t *secret, uint8_t *hash);

/* Read an ATTACH body: 0, or BATON_EMALFORMED when it is not exactly
 * ATTACH_BODY_SIZE bytes. The secret is copied into `secret`. */
int attach_read(const uint8_t *body, size_t len, uint64_t *session,
                uint8_t *secret);

#endif /* PROTO_ATTACH_H */
