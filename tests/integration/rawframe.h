/* Hand-made frames for the integration scenarios: requests the client
 * library would refuse to send, and the answers expected to them. */
#ifndef TESTS_INTEGRATION_RAWFRAME_H
#define TESTS_INTEGRATION_RAWFRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "scenario.h"

/* Writes a frame header into `out` (PROTO_HEADER_SIZE bytes); returns its
 * size. */
size_t header(uint8_t *out, uint8_t version, uint8_t type, uint16_t flags,
              uint32_t length, uint64_t id);

/* A COMMAND frame carrying an ACQUIRE whose name is `name_len` raw bytes
 * (which may be empty or hold a NUL: command_encode would refuse them),
 * zero-padded to 8 bytes as every command is. */
size_t raw_acquire(uint8_t *out, size_t cap, uint64_t id, uint64_t session,
                   uint64_t seq, const char *name, size_t name_len);

/* A QUERY (check: CHECK) frame with a raw name. */
size_t raw_read(uint8_t *out, size_t cap, uint64_t id, bool check,
                const char *name, size_t name_len);

/* Send a raw request and expect a RESULT with `status` for `id`. */
bool raw_result(struct ctx *x, struct tclient *c, const uint8_t *frame,
                size_t len, uint64_t id, int status, const char *what,
                int line);

/* PING on the same raw connection: it is still open and served. */
bool raw_ping(struct ctx *x, struct tclient *c, uint64_t id, int line);

/* Expect NOT_LEADER naming `leader` for a raw request on `raw`. */
bool redirected(struct ctx *x, struct tclient *raw, const uint8_t *f,
                size_t len, uint64_t id, unsigned leader, const char *what,
                int line);

#endif /* TESTS_INTEGRATION_RAWFRAME_H */
