/* A counting allocator that fails on demand, for allocation-failure tests. */
#include "failalloc.h"

#include <stdlib.h>

/* Whether this allocation is the one to fail. */
static bool fa_fails(struct failalloc *fa)
{
        fa->calls++;
        if (fa->countdown == 0 || (fa->sticky && fa->failed)) {
                fa->failed = true;
                fa->countdown = -1;
                return true;
        }
        if (fa->countdown > 0) {
                fa->countdown--;
        }
        return false;
}

static bool fa_admit(void *ctx, size_t size)
{
        struct failalloc *fa = ctx;

        (void)size;
        fa->admits++;
        return !fa_fails(fa);
}

static void *fa_alloc(void *ctx, size_t size)
{
        struct failalloc *fa = ctx;
        void *p;

        if (fa_fails(fa)) {
                return NULL;
        }
        p = malloc(size);
        if (p != NULL) {
                fa->live++;
        }
        return p;
}

static void fa_free(void *ctx, void *ptr)
{
        struct failalloc *fa = ctx;

        if (ptr != NULL) {
                fa->live--;
                free(ptr);
        }
}

void failalloc_init(struct failalloc *fa)
{
        fa->mem.alloc = fa_alloc;
        fa->mem.free = fa_free;
        fa->mem.ctx = fa;
        fa->mem.admit = fa_admit;
        fa->countdown = -1;
        fa->sticky = false;
        fa->failed = false;
        fa->calls = 0;
        fa->admits = 0;
        fa->live = 0;
}

void failalloc_arm(struct failalloc *fa, long n, bool sticky)
{
        fa->countdown = n;
        fa->sticky = sticky;
        fa->failed = false;
}

void failalloc_disarm(struct failalloc *fa)
{
        fa->countdown = -1;
        fa->sticky = false;
        fa->failed = false;
}
