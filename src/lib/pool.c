/* Small records carved from large slabs, for a state machine that holds
 * millions of them. */
#include "pool.h"

#include <stdint.h>
#include <string.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define POISON(p, n)   ASAN_POISON_MEMORY_REGION((p), (n))
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define POISON(p, n)   ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

/* Each slab begins with the previous slab's address; records follow. */
#define HEADER 8

void pool_init(struct pool *p, const struct mem *mem, size_t slab_size)
{
        memset(p, 0, sizeof *p);
        p->mem = mem;
        p->slab_size = slab_size < HEADER + POOL_MAX ? 0 : slab_size;
}

void pool_close(struct pool *p)
{
        while (p->slabs != NULL) {
                void *slab = p->slabs;
                UNPOISON(slab, p->slab_size);
                memcpy(&p->slabs, slab, sizeof p->slabs);
                mem_free(p->mem, slab);
        }
        pool_init(p, p->mem, p->slab_size);
}

bool pool_frees_all(const struct pool *p)
{
        return p->slab_size != 0;
}

/* The room a record of `size` bytes takes, in units of 8 bytes. */
static size_t class_of(size_t size)
{
        return (size + POOL_REDZONE + 7) / 8 + (size == 0);
}

static void push(struct pool *p, void *r, size_t c)
{
        UNPOISON(r, sizeof p->free[c]);
        memcpy(r, &p->free[c], sizeof p->free[c]);
        p->free[c] = r;
        POISON(r, c * 8);
}

/* A new slab; what was left of the last goes on the free list of its
 * size, so that no room is lost. */
static int grow(struct pool *p)
{
        char *slab = mem_alloc(p->mem, p->slab_size);

        if (slab == NULL) {
                return -1;
        }
        if (p->left >= 8) {
                push(p, p->next, p->left / 8);
        }
        memcpy(slab, &p->slabs, sizeof p->slabs);
        p->slabs = slab;
        p->next = slab + HEADER;
        p->left = p->slab_size - HEADER;
        p->n_slabs++;
        POISON(p->next, p->left);
        return 0;
}

void *pool_alloc(struct pool *p, size_t size)
{
        size_t c = class_of(size);
        void *r;

        if (p->slab_size == 0 || size > POOL_MAX) {
                return mem_alloc(p->mem, size);
        }
        if (p->free[c] != NULL) {
                r = p->free[c];
                UNPOISON(r, sizeof p->free[c]);
                memcpy(&p->free[c], r, sizeof p->free[c]);
                POISON(r, c * 8);
                UNPOISON(r, size);
                return r;
        }
        if (p->left < c * 8 && grow(p) != 0) {
                return NULL;
        }
        r = p->next;
        UNPOISON(r, size);
        p->next += c * 8;
        p->left -= c * 8;
        return r;
}

void pool_free(struct pool *p, void *ptr, size_t size)
{
        if (ptr == NULL) {
                return;
        }
        if (p->slab_size == 0 || size > POOL_MAX) {
                mem_free(p->mem, ptr);
                return;
        }
        push(p, ptr, class_of(size));
}

size_t pool_slab_bytes(const struct pool *p)
{
        return p->n_slabs * p->slab_size;
}
