/* A counting allocator that fails on demand, for allocation-failure tests. */
#ifndef TESTS_FAILALLOC_H
#define TESTS_FAILALLOC_H

#include <stdbool.h>
#include <stddef.h>

#include "../../src/lib/mem.h"

struct failalloc {
        struct mem mem; /* pass &fa->mem to the code under test */
        /* Allocations left before one fails (<0: never); a pool's record
         * that mem.admit() refuses counts as an allocation. */
        long countdown;
        bool sticky;          /* once failed, keep failing */
        bool failed;          /* an allocation has failed since arming */
        unsigned long calls;  /* allocation calls so far, admits included */
        unsigned long admits; /* records a pool asked to admit (mem.h) */
        long live;            /* allocations not yet freed */
};

void failalloc_init(struct failalloc *fa);
/* Let `n` more allocations succeed, then fail the next one (and, if sticky,
 * every one after it). */
void failalloc_arm(struct failalloc *fa, long n, bool sticky);
void failalloc_disarm(struct failalloc *fa);

#endif /* TESTS_FAILALLOC_H */
