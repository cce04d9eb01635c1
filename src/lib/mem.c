/* A pluggable allocator, so callers can inject allocation failures in tests. */
#include "mem.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void *libc_alloc(void *ctx, size_t size)
{
        (void)ctx;
        return malloc(size);
}

static void libc_free(void *ctx, void *ptr)
{
        (void)ctx;
        free(ptr);
}

const struct mem mem_libc = {libc_alloc, libc_free, NULL, NULL};

void *mem_alloc(const struct mem *m, size_t size)
{
        return m->alloc(m->ctx, size == 0 ? 1 : size);
}

void *mem_calloc(const struct mem *m, size_t n, size_t size)
{
        void *p;

        if (size != 0 && n > SIZE_MAX / size) {
                return NULL;
        }
        p = mem_alloc(m, n * size);
        if (p != NULL) {
                memset(p, 0, n * size);
        }
        return p;
}

void mem_free(const struct mem *m, void *ptr)
{
        if (ptr != NULL) {
                m->free(m->ctx, ptr);
        }
}
