/* Bounds-checked little-endian reading and writing of byte buffers. */
#include "cursor.h"

#include <stdint.h>
#include <string.h>

void rcursor_init(struct rcursor *c, const void *buf, size_t len)
{
        c->p = buf;
        c->left = len;
        c->bad = false;
}

const uint8_t *rcursor_bytes(struct rcursor *c, size_t n)
{
        const uint8_t *p;

        if (c->bad || n > c->left || c->p == NULL) {
                c->bad = true;
                return NULL;
        }
        p = c->p;
        c->p += n;
        c->left -= n;
        return p;
}

/* Reads an n-byte little-endian integer; 0 once the cursor is bad. */
static uint64_t get_le(struct rcursor *c, size_t n)
{
        const uint8_t *p = rcursor_bytes(c, n);
        uint64_t v = 0;
        size_t i;

        if (p == NULL) {
                return 0;
        }
        for (i = 0; i < n; i++) {
                v |= (uint64_t)p[i] << (8 * i);
        }
        return v;
}

uint8_t rcursor_u8(struct rcursor *c)
{
        return (uint8_t)get_le(c, 1);
}

uint16_t rcursor_u16(struct rcursor *c)
{
        return (uint16_t)get_le(c, 2);
}

uint32_t rcursor_u32(struct rcursor *c)
{
        return (uint32_t)get_le(c, 4);
}

uint64_t rcursor_u64(struct rcursor *c)
{
        return get_le(c, 8);
}

void wcursor_init(struct wcursor *c, void *buf, size_t cap)
{
        c->p = buf;
        c->cap = buf == NULL ? SIZE_MAX : cap;
        c->len = 0;
        c->bad = false;
}

void wcursor_bytes(struct wcursor *c, const void *src, size_t n)
{
        if (c->bad || n > c->cap - c->len) {
                c->bad = true;
                return;
        }
        if (n > 0 && c->p != NULL) {
                memcpy(c->p + c->len, src, n);
        }
        c->len += n;
}

static void put_le(struct wcursor *c, uint64_t v, size_t n)
{
        uint8_t b[8];
        size_t i;

        for (i = 0; i < n; i++) {
                b[i] = (uint8_t)(v >> (8 * i));
        }
        wcursor_bytes(c, b, n);
}

void wcursor_u8(struct wcursor *c, uint8_t v)
{
        put_le(c, v, 1);
}

void wcursor_u16(struct wcursor *c, uint16_t v)
{
        put_le(c, v, 2);
}

void wcursor_u32(struct wcursor *c, uint32_t v)
{
        put_le(c, v, 4);
}

void wcursor_u64(struct wcursor *c, uint64_t v)
{
        put_le(c, v, 8);
}
