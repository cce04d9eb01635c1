/* The binary protocol's request frame each HTTP call maps onto, so that
 * the request core serves HTTP exactly as it serves libbaton's frames. */
#ifndef SERVER_APIFRAME_H
#define SERVER_APIFRAME_H

#include <stddef.h>
#include <stdint.h>

#include "apicall.h"

/* The largest frame apiframe_write() writes (a MULTI of 16 long names). */
#define APIFRAME_MAX (16 + 8 + COMMAND_ANY_MAX_SIZE)

/*
 * The frame of `call` with request id `id` into `out` (`cap` bytes): its
 * length, or 0 when the call cannot be encoded. A session's write carries
 * `seq` and acknowledges every seq below it (ack = seq), as a client with
 * one request at a time would. An OPEN carries `nonce` and the SHA-256
 * `hash` of the secret the node made for it (ATTACH_HASH_SIZE bytes,
 * borrowed); the other calls ignore both.
 */
size_t apiframe_write(const struct api_call *call, uint64_t id, uint64_t seq,
                      uint64_t nonce, const uint8_t *hash, uint8_t *out,
                      size_t cap);

#endif /* SERVER_APIFRAME_H */
