/* Image-and-tail snapshots (snaptail.h). */
#include "snaptail.h"

#include <stdbool.h>
#include <string.h>

#include <raft.h>

#include "../../../include/baton/errors.h"
#include "../../lib/cursor.h"

#define MAGIC      "BTNI"
#define ENTRY_HEAD 12 /* u64 index, u32 length */

void snaptail_init(struct snaptail *t)
{
        memset(t, 0, sizeof *t);
}

void snaptail_reset(struct snaptail *t)
{
        raft_free(t->buf);
        snaptail_init(t);
}

int snaptail_add(struct snaptail *t, uint64_t index, const void *p, size_t n)
{
        struct wcursor w;

        if (n > UINT32_MAX) {
                return BATON_EINVAL;
        }
        if (t->len + ENTRY_HEAD + n > t->cap) {
                size_t cap = t->cap != 0 ? t->cap : 64 * 1024;
                uint8_t *b;
                while (cap < t->len + ENTRY_HEAD + n) {
                        cap *= 2;
                }
                b = raft_realloc(t->buf, cap);
                if (b == NULL) {
                        return BATON_ENOMEM;
                }
                t->buf = b;
                t->cap = cap;
        }
        wcursor_init(&w, t->buf + t->len, ENTRY_HEAD);
        wcursor_u64(&w, index);
        wcursor_u32(&w, (uint32_t)n);
        memcpy(t->buf + t->len + ENTRY_HEAD, p, n);
        t->len += ENTRY_HEAD + n;
        t->last = index;
        t->n++;
        return 0;
}

uint8_t *snaptail_detach(struct snaptail *t, size_t *len)
{
        uint8_t *b = t->buf;

        *len = t->len;
        snaptail_init(t);
        return b;
}

void snaptail_header(uint8_t out[SNAPTAIL_HEADER_SIZE], uint64_t image_index,
                     uint64_t last_index, uint64_t image_len)
{
        struct wcursor w;

        wcursor_init(&w, out, SNAPTAIL_HEADER_SIZE);
        wcursor_bytes(&w, MAGIC, 4);
        wcursor_u32(&w, SNAPTAIL_VERSION);
        wcursor_u64(&w, image_index);
        wcursor_u64(&w, last_index);
        wcursor_u64(&w, image_len);
        wcursor_u32(&w, 0);
        wcursor_u32(&w, 0);
}

uint32_t snaptail_crc(uint32_t crc, const void *p, size_t n)
{
        /* Half a byte at a time: 16 entries, no table to build. */
        static const uint32_t nib[16] = {
            0x00000000, 0x1db71064, 0x3b6e20c8, 0x26d930ac,
            0x76dc4190, 0x6b6b51f4, 0x4db26158, 0x5005713c,
            0xedb88320, 0xf00f9344, 0xd6d6a3e8, 0xcb61b38c,
            0x9b64c2b0, 0x86d3d2d4, 0xa00ae278, 0xbdbdf21c};
        const uint8_t *b = p;
        size_t i;

        crc = ~crc;
        for (i = 0; i < n; i++) {
                crc ^= b[i];
                crc = (crc >> 4) ^ nib[crc & 15];
                crc = (crc >> 4) ^ nib[crc & 15];
        }
        return ~crc;
}

void snaptail_seal(uint8_t out[SNAPTAIL_HEADER_SIZE], uint32_t tail_crc)
{
        struct wcursor w;

        wcursor_init(&w, out + 32, 8);
        wcursor_u32(&w, tail_crc);
        wcursor_u32(&w, snaptail_crc(0, out, 36));
}

bool snaptail_is(const void *p, size_t len)
{
        return len >= 4 && memcmp(p, MAGIC, 4) == 0;
}

uint32_t snaptail_peek_version(const void *p, size_t len)
{
        struct rcursor c;

        if (!snaptail_is(p, len) || len < 8) {
                return 0;
        }
        rcursor_init(&c, (const uint8_t *)p + 4, 4);
        return rcursor_u32(&c);
}

/* A version 2 header's checksums against the header and `tail`. */
static bool sealed(const uint8_t *p, const uint8_t *tail, size_t n)
{
        struct rcursor c;
        uint32_t tail_crc, head_crc;

        rcursor_init(&c, p + 32, 8);
        tail_crc = rcursor_u32(&c);
        head_crc = rcursor_u32(&c);
        return head_crc == snaptail_crc(0, p, 36) &&
               tail_crc == snaptail_crc(0, tail, n);
}

int snaptail_open(struct snaptail_reader *r, const void *p, size_t len)
{
        struct rcursor c;
        uint64_t image_len;
        uint32_t version;
        size_t head = SNAPTAIL_HEADER_SIZE;

        memset(r, 0, sizeof *r);
        if (!snaptail_is(p, len) || len < SNAPTAIL_HEADER_SIZE_V1) {
                return BATON_ECORRUPT;
        }
        rcursor_init(&c, (const uint8_t *)p + 4, SNAPTAIL_HEADER_SIZE_V1 - 4);
        version = rcursor_u32(&c);
        r->image_index = rcursor_u64(&c);
        r->last_index = rcursor_u64(&c);
        image_len = rcursor_u64(&c);
        if (version != SNAPTAIL_VERSION && version != 1) {
                return BATON_EVERSION;
        }
        if (version == 1) {
                head = SNAPTAIL_HEADER_SIZE_V1;
        }
        if (len < head || image_len > len - head ||
            r->last_index < r->image_index) {
                return BATON_ECORRUPT;
        }
        r->image = (const uint8_t *)p + head;
        r->image_len = (size_t)image_len;
        r->p = r->image + r->image_len;
        r->left = len - head - r->image_len;
        r->prev = r->image_index;
        if (version != 1 && !sealed(p, r->p, r->left)) {
                return BATON_ECORRUPT;
        }
        return 0;
}

int snaptail_next(void *it, uint64_t *index, const void **buf, size_t *len)
{
        struct snaptail_reader *r = it;
        struct rcursor c;
        uint32_t n;

        if (r->left == 0) {
                return r->prev == r->last_index ? 0 : BATON_ECORRUPT;
        }
        if (r->left < ENTRY_HEAD) {
                return BATON_ECORRUPT;
        }
        rcursor_init(&c, r->p, ENTRY_HEAD);
        *index = rcursor_u64(&c);
        n = rcursor_u32(&c);
        if (n > r->left - ENTRY_HEAD || *index <= r->prev ||
            *index > r->last_index) {
                return BATON_ECORRUPT;
        }
        *buf = r->p + ENTRY_HEAD;
        *len = n;
        r->p += ENTRY_HEAD + n;
        r->left -= ENTRY_HEAD + n;
        r->prev = *index;
        return 1;
}
