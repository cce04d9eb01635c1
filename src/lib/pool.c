/* Small records carved from slabs in one region of address space, for a
 * state machine that holds millions of them. */
#include "pool.h"

#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define POISON(p, n)   ASAN_POISON_MEMORY_REGION((p), (n))
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define POISON(p, n)   ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

/* The least address space a pool settles for when the process may not
 * map POOL_SPAN: a few slabs' worth is no pool worth having. */
#define MIN_SLABS 16

void pool_init(struct pool *p, const struct mem *mem, size_t slab_size)
{
        memset(p, 0, sizeof *p);
        p->mem = mem;
        p->slab_size = slab_size;
        p->span = POOL_SPAN;
}

void pool_cap(struct pool *p, size_t bytes)
{
        p->span = bytes / p->slab_size * p->slab_size;
}

void pool_close(struct pool *p)
{
        size_t span;

        if (p->base != NULL) {
                UNPOISON(p->base, p->n_slabs * p->slab_size);
                munmap(p->base, p->reserved);
        }
        span = p->span;
        pool_init(p, p->mem, p->slab_size);
        p->span = span;
}

/* Reserve the region: address space only, no memory, and less of it if
 * the process's limits refuse POOL_SPAN (a link still fits in 32 bits). */
static int reserve(struct pool *p)
{
        size_t span = p->span;

        for (;;) {
                void *a =
                    mmap(NULL, span, PROT_NONE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
                if (a != MAP_FAILED) {
                        p->base = a;
                        p->reserved = span;
                        return 0;
                }
                if (span / 2 < MIN_SLABS * p->slab_size) {
                        return -1;
                }
                span = span / 2 / p->slab_size * p->slab_size;
        }
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

/* Commit the region's next slab; what was left of the last goes on the
 * free list of its size, so that no room is lost. */
static int grow(struct pool *p)
{
        char *slab;

        if (p->base == NULL && reserve(p) != 0) {
                return -1;
        }
        if ((p->n_slabs + 1) * p->slab_size > p->reserved) {
                return -1;
        }
        slab = p->base + p->n_slabs * p->slab_size;
        if (mprotect(slab, p->slab_size, PROT_READ | PROT_WRITE) != 0) {
                return -1;
        }
        if (p->left >= 8) {
                push(p, p->next, p->left / 8);
        }
        p->next = slab;
        p->left = p->slab_size;
        p->n_slabs++;
        POISON(p->next, p->left);
        return 0;
}

void *pool_alloc(struct pool *p, size_t size)
{
        size_t c = class_of(size);
        void *r;

        if (size > POOL_MAX) {
                return mem_alloc(p->mem, size);
        }
        if (p->mem->admit != NULL && !p->mem->admit(p->mem->ctx, size)) {
                return NULL;
        }
        if (p->free[c] != NULL) {
                p->live += c * 8;
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
        p->live += c * 8;
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
        if (size > POOL_MAX) {
                mem_free(p->mem, ptr);
                return;
        }
        p->live -= class_of(size) * 8;
        push(p, ptr, class_of(size));
}

size_t pool_slab_bytes(const struct pool *p)
{
        return p->n_slabs * p->slab_size;
}

size_t pool_live_bytes(const struct pool *p)
{
        return p->live;
}

size_t pool_room(size_t size)
{
        return size > POOL_MAX ? 0 : class_of(size) * 8;
}
