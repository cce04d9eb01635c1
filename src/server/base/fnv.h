/* 64-bit FNV-1a, the server's one hash of bytes that lands on disk or in
 * the log (a cluster's id, the state digests): the same value on every
 * node and every release, so it must never change. */
#ifndef BATON_SERVER_FNV_H
#define BATON_SERVER_FNV_H

#include <stddef.h>
#include <stdint.h>

/* FNV-1a's starting value. */
#define FNV1A64_OFFSET UINT64_C(0xcbf29ce484222325)

/* FNV-1a over `n` bytes at `p`, continuing from `h` (FNV1A64_OFFSET to
 * start). */
static inline uint64_t fnv1a64(uint64_t h, const void *p, size_t n)
{
        const unsigned char *b = p;
        size_t i;

        for (i = 0; i < n; i++) {
                h ^= b[i];
                h *= UINT64_C(0x100000001b3);
        }
        return h;
}

#endif
