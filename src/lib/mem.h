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
        /* Asked before each small record a pool carves from its own
         * memory (pool.h), which this allocator never sees: false fails
         * that record as if memory had run out. For allocators that
         * inject failures, so that each record's allocation can be made
         * to fail; NULL admits every record. */
        bool (*admit)(void *ctx, size_t size);
};

/* The libc allocator. */
extern const struct mem mem_libc;

void *mem_alloc(const struct mem *m, size_t size);
/* Zero-filled allocation of n * size bytes; NULL on overflow or failure. */
void *mem_calloc(const struct mem *m, size_t n, size_t size);
void mem_free(const struct mem *m, void *ptr);

#endif /* LIB_MEM_H */
