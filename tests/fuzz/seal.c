/* See seal.h. */
#include "seal.h"

#include <string.h>

#include "../../src/server/raft/fsmreplay.h"
#include "../../src/server/snap/snaptail.h"
#include "../../src/server/snap/snapzip.h"

uint64_t seal_le(const uint8_t *p, unsigned n)
{
        uint64_t v = 0;

        while (n-- > 0) {
                v = v << 8 | p[n];
        }
        return v;
}

void seal_state(uint8_t *p, size_t len)
{
        uint64_t h = 0xcbf29ce484222325ULL;
        size_t i;

        if (len < 8) {
                return;
        }
        for (i = 0; i < len - 8; i++) {
                h ^= p[i];
                h *= 0x100000001b3ULL;
        }
        for (i = 0; i < 8; i++) {
                p[len - 8 + i] = (uint8_t)(h >> (8 * i));
        }
}

void seal_image(uint8_t *p, size_t len)
{
        size_t at, n;

        if (len < 4 || snapzip_is_packed(p, len) || seal_le(p, 4) > len - 4) {
                return;
        }
        at = 4 + (size_t)seal_le(p, 4);
        if (len - at >= 8 && memcmp(p + at, FSMREPLAY_ACL_MAGIC, 4) == 0 &&
            (n = (size_t)seal_le(p + at + 4, 4)) <= len - at - 8) {
                at += 8 + n;
        }
        seal_state(p + at, len - at);
}

void seal_snapshot(uint8_t *p, size_t len)
{
        uint64_t image_len;
        uint32_t crc;

        if (!snaptail_is(p, len)) {
                seal_image(p, len);
                return;
        }
        if (len < SNAPTAIL_HEADER_SIZE_V1) {
                return;
        }
        image_len = seal_le(p + 24, 8);
        if (seal_le(p + 4, 4) == 1) {
                if (image_len <= len - SNAPTAIL_HEADER_SIZE_V1) {
                        seal_image(p + SNAPTAIL_HEADER_SIZE_V1,
                                   (size_t)image_len);
                }
                return;
        }
        if (len < SNAPTAIL_HEADER_SIZE ||
            image_len > len - SNAPTAIL_HEADER_SIZE) {
                return;
        }
        seal_image(p + SNAPTAIL_HEADER_SIZE, (size_t)image_len);
        crc = snaptail_crc(0, p + SNAPTAIL_HEADER_SIZE + image_len,
                           len - SNAPTAIL_HEADER_SIZE - (size_t)image_len);
        snaptail_seal(p, crc);
}
