/* Small records carved from large slabs, for a state machine that holds
 * millions of them. */
#ifndef LIB_POOL_H
#define LIB_POOL_H

#include <stdbool.h>
#include <stddef.h>

#include "mem.h"

/*
 * A record from glibc's malloc costs its size and an 8-byte header,
 * rounded up to 16 bytes: a lock with a 33-byte name, 129 bytes, takes
 * 144. A pool hands
 * out records of up to POOL_MAX bytes at their size rounded up to 8, with
 * no header, from slabs of `slab_size` bytes asked of `mem`; a freed
 * record goes on a free list for its size, and the slabs go back to `mem`
 * only when the pool is closed (which frees every record at once, without
 * reading any). Larger records, and every record of a pool whose
 * slab_size is 0, are asked of `mem` one by one, so that an allocator
 * injecting failures sees every allocation.
 *
 * The caller passes each record's size to pool_free(): records carry no
 * header saying it. Records are aligned to 8 bytes. Under AddressSanitizer
 * a record is poisoned while free and followed by a poisoned redzone of
 * POOL_REDZONE bytes, and only its `size` bytes are open, so that a use
 * after free or past the end is reported as it would be with malloc. A
 * pool is not thread-safe.
 */
#define POOL_MAX 512

#if defined(__SANITIZE_ADDRESS__)
#define POOL_REDZONE 16
#else
#define POOL_REDZONE 0
#endif

struct pool {
        const struct mem *mem;
        size_t slab_size; /* 0: every record asked of mem */
        void *slabs;      /* the newest; each begins with the last's address */
        char *next;       /* the newest slab's room not handed out yet */
        size_t left;      /* bytes at `next` */
        size_t n_slabs;
        void *free[(POOL_MAX + POOL_REDZONE) / 8 + 1]; /* freed, by room / 8 */
};

/* `mem` is borrowed for the life of the pool. */
void pool_init(struct pool *p, const struct mem *mem, size_t slab_size);
/* Frees every slab, and with them every record still in them. Records
 * asked of mem one by one are the caller's to free first. */
void pool_close(struct pool *p);
/* Whether pool_close() frees every record this pool handed out. */
bool pool_frees_all(const struct pool *p);

/* NULL when mem fails. */
void *pool_alloc(struct pool *p, size_t size);
/* `size` as given to pool_alloc(); accepts NULL. */
void pool_free(struct pool *p, void *ptr, size_t size);

/* Bytes taken from mem in slabs. */
size_t pool_slab_bytes(const struct pool *p);

#endif /* LIB_POOL_H */
