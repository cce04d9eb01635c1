/* KEEPALIVE and KEEPALIVE_OK frames, in both shapes: plain, and with
 * PROTO_FLAG_REVOKED, which asks for and carries the count of the
 * session's grants an administrator has revoked. */
#include <stdbool.h>

#include "../../include/baton/errors.h"
#include "frame.h"
#include "keepalive.h"

size_t proto_write_keepalive(uint8_t *out, size_t cap, uint64_t id,
                             uint16_t flags, uint64_t session)
{
        struct wcursor w;

        if (!proto_flags_allowed(PROTO_KEEPALIVE, flags)) {
                return 0;
        }
        proto_frame_begin(&w, out, cap, PROTO_KEEPALIVE, flags, id);
        wcursor_u64(&w, session);
        return proto_frame_finish(&w);
}

size_t proto_write_keepalive_ok(uint8_t *out, size_t cap, uint64_t id,
                                uint16_t flags, uint32_t ttl_ms,
                                uint32_t revoked)
{
        struct wcursor w;

        if (!proto_flags_allowed(PROTO_KEEPALIVE_OK, flags)) {
                return 0;
        }
        proto_frame_begin(&w, out, cap, PROTO_KEEPALIVE_OK, flags, id);
        wcursor_u32(&w, ttl_ms);
        if (flags & PROTO_FLAG_REVOKED) {
                wcursor_u32(&w, revoked);
        }
        return proto_frame_finish(&w);
}

int proto_read_keepalive_ok(const uint8_t *body, size_t len, uint16_t flags,
                            uint32_t *ttl_ms, uint32_t *revoked)
{
        struct rcursor r;

        rcursor_init(&r, body, len);
        *ttl_ms = rcursor_u32(&r);
        *revoked = flags & PROTO_FLAG_REVOKED ? rcursor_u32(&r) : 0;
        return !r.bad && r.left == 0 ? 0 : BATON_EMALFORMED;
}
