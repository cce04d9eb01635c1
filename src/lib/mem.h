/* A pluggable allocator, so callers can inject allocation failures in tests. */
#ifndef LIB_MEM_H
#define LIB_MEM_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Allocation functions with a context pointer. Modules that must stay
 * consistent under allocation failure (the state machine) allocate only
 * through one of these, never through malloc directly.
 */
struct mem {
        void *(*alloc)(void *ctx, size_t size); /* NULL on failure */
        void (*free)(void *ctx, void *ptr);     /* accepts NULL */
        void *ctx;
        /* Ask this allocator for every record on its own, even where the
         * caller would carve small records from larger blocks (pool.h):
         * for allocators that inject failures, so that each record's
         * allocation can be made to fail. */
        bool each;
};

/* The libc allocator. */
extern const struct mem mem_libc;

void *mem_alloc(const struct mem *m, size_t size);
/* Zero-filled allocation of n * size bytes; NULL on overflow or failure. */
void *mem_calloc(const struct mem *m, size_t n, size_t size);
void mem_free(const struct mem *m, void *ptr);

#endif /* LIB_MEM_H */
