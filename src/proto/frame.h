/* Writing one frame of the client protocol, for the codec's own files. */
#ifndef PROTO_FRAME_H
#define PROTO_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../lib/cursor.h"
#include "proto.h"

/* Start a frame of `type` with `flags` and `id` in `out` (capacity `cap`):
 * its header, with the body's length left to proto_frame_finish(). */
void proto_frame_begin(struct wcursor *w, uint8_t *out, size_t cap,
                       uint8_t type, uint16_t flags, uint64_t id);

/* Write the body's length into the header: the frame's length, or 0 when
 * it did not fit `cap` or its body exceeds PROTO_MAX_BODY. */
size_t proto_frame_finish(struct wcursor *w);

/* Lock names follow command.h: 1..COMMAND_NAME_MAX bytes, no NUL. */
bool proto_valid_name(const char *name, size_t len);

/* A client name: 0..PROTO_CLIENT_NAME_MAX bytes, no NUL. */
bool proto_valid_client(const struct proto_string *s);

/* Addresses and messages: at most `max` bytes and no NUL, since the
 * writers take C strings and a peer that sends otherwise is broken. */
bool proto_valid_text(const struct proto_string *s, size_t max);

/* The length of an optional C string (NULL: 0), or SIZE_MAX when over
 * `max`. */
size_t proto_cstr_len(const char *s, size_t max);

/* Whether `flags` is a shape of frames of `type`: only QUERY, LIST and
 * their answers may ask for or carry client names (LIST and LIST_REPLY
 * with the holders' values too); only QUERY and
 * LIST_REPLY every holder, with their names and maybe values and time
 * left; only KEEPALIVE and KEEPALIVE_OK revoked grants; only STATUS and
 * STATUS_REPLY versions and alarms, each or both. Inline, since every
 * writer of a frame with flags asks, on the request path. */
static inline bool proto_flags_allowed(uint8_t type, uint16_t flags)
{
        if (flags == 0) {
                return true;
        }
        if ((flags & ~(PROTO_FLAG_VERSIONS | PROTO_FLAG_ALARMS)) == 0) {
                return type == PROTO_STATUS || type == PROTO_STATUS_REPLY;
        }
        if (flags == PROTO_FLAG_REVOKED) {
                return type == PROTO_KEEPALIVE || type == PROTO_KEEPALIVE_OK;
        }
        if ((flags & ~(PROTO_FLAG_VALUES | PROTO_FLAG_LEFT)) ==
            PROTO_FLAG_HOLDERS) {
                return type == PROTO_QUERY || type == PROTO_LIST_REPLY;
        }
        if (flags == (PROTO_FLAG_NAMES | PROTO_FLAG_VALUES)) {
                return type == PROTO_LIST || type == PROTO_LIST_REPLY;
        }
        return flags == PROTO_FLAG_NAMES &&
               (type == PROTO_QUERY || type == PROTO_LIST ||
                type == PROTO_RESULT || type == PROTO_LIST_REPLY);
}

/* Whether the whole body was read, exactly. */
bool proto_read_done(const struct rcursor *r);

#endif /* PROTO_FRAME_H */
