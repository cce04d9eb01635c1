/* Small records carved from slabs in one region of address space, for a
 * state machine that holds millions of them. */
#ifndef LIB_POOL_H
#define LIB_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mem.h"

/*
 * A record from glibc's malloc costs its size and an 8-byte header,
 * rounded up to 16 bytes: a lock with a 33-byte name, 129 bytes, takes
 * 144. A pool hands out records of up to POOL_MAX bytes at their size
 * rounded up to 8, with no header, from slabs of `slab_size` bytes; a
 * freed record goes on a free list for its size, and the slabs are given
 * back only when the pool is closed (which frees every record at once,
 * without reading any). Larger records are asked of `mem` one by one.
 *
 * The slabs follow each other in one region of address space that the
 * pool reserves at its first slab (POOL_SPAN bytes, or less if the
 * process may not map that much) and commits a slab at a time. So any
 * two small records of a pool lie less than 16 GiB apart, and a link
 * between them fits in 32 bits (rqueue.h). The region's pages cost memory
 * only once committed; a pool whose region is full, or whose slab cannot
 * be committed, fails the record as malloc would. `mem` never sees the
 * small records: its admit() hook, when set, is asked before each one, so
 * that an allocator injecting failures can still fail any of them.
 *
 * The caller passes each record's size to pool_free(): records carry no
 * header saying it. Records are aligned to 8 bytes. Under AddressSanitizer
 * a record is poisoned while free and followed by a poisoned redzone of
 * POOL_REDZONE bytes, and only its `size` bytes are open, so that a use
 * after free or past the end is reported as it would be with malloc. A
 * pool is not thread-safe.
 */
#define POOL_MAX  512
#define POOL_SPAN ((size_t)16 << 30)

#if defined(__SANITIZE_ADDRESS__)
#define POOL_REDZONE 16
#else
#define POOL_REDZONE 0
#endif

struct pool {
        const struct mem *mem;
        size_t slab_size;
        size_t span;     /* address space to reserve at the first slab */
        char *base;      /* the region; NULL before the first slab */
        size_t reserved; /* bytes of address space at base */
        char *next;      /* the newest slab's room not handed out yet */
        size_t left;     /* bytes at `next` */
        size_t n_slabs;
        size_t live; /* the room of the small records handed out */
        void *free[(POOL_MAX + POOL_REDZONE) / 8 + 1]; /* freed, by room / 8 */
};

/* `mem` is borrowed for the life of the pool; `slab_size` is a multiple
 * of the page size, at least POOL_MAX. Reserves nothing yet. */
void pool_init(struct pool *p, const struct mem *mem, size_t slab_size);
/* Reserve at most `bytes` of address space (rounded down to slabs), for
 * a bounded pool; before the first allocation. */
void pool_cap(struct pool *p, size_t bytes);
/* Frees every slab, and with them every small record. Records asked of
 * mem (over POOL_MAX) are the caller's to free first. */
void pool_close(struct pool *p);

/* NULL when memory or the region runs out, or mem's admit() refuses. */
void *pool_alloc(struct pool *p, size_t size);
/* `size` as given to pool_alloc(); accepts NULL. */
void pool_free(struct pool *p, void *ptr, size_t size);

/* Bytes committed in slabs. */
size_t pool_slab_bytes(const struct pool *p);
/* Bytes the small records in use take: their sizes rounded to 8 (with
 * their redzones under AddressSanitizer). */
size_t pool_live_bytes(const struct pool *p);
/* What a record of `size` bytes adds to pool_live_bytes(): 0 for one
 * asked of mem (over POOL_MAX). */
size_t pool_room(size_t size);

#endif /* LIB_POOL_H */
