/* Unit tests for the pool of small records carved from slabs. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "../../src/lib/pool.h"
#include "../../src/lib/rqueue.h"
#include "../lib/failalloc.h"

#define SLAB 4096

static void start(struct failalloc *fa, struct pool *p, size_t slab)
{
        failalloc_init(fa);
        pool_init(p, &fa->mem, slab);
}

/* Closing the pool gives back everything it took. */
static void finish(struct failalloc *fa, struct pool *p)
{
        pool_close(p);
        assert_int_equal(fa->live, 0);
}

/* Records of one size are packed at that size rounded to 8, so that a
 * slab holds as many as fit, and none overlaps another. */
static void records_are_packed(void **state)
{
        struct failalloc fa;
        struct pool p;
        char *r[1000];
        unsigned i, per;

        (void)state;
        start(&fa, &p, SLAB);
        for (i = 0; i < 1000; i++) {
                r[i] = pool_alloc(&p, 101);
                assert_non_null(r[i]);
                assert_int_equal((uintptr_t)r[i] % 8, 0);
                memset(r[i], (int)(i & 0xff), 101);
        }
        /* Without sanitizers, SLAB / 104 = 39 records a slab, each of
         * them admitted by mem, which allocated nothing. */
        per = SLAB / ((101 + POOL_REDZONE + 7) / 8 * 8);
        assert_int_equal(pool_slab_bytes(&p), (1000 + per - 1) / per * SLAB);
        assert_int_equal(pool_live_bytes(&p),
                         1000 * ((101 + POOL_REDZONE + 7) / 8 * 8));
        assert_int_equal(fa.admits, 1000);
        assert_int_equal(fa.live, 0);
        for (i = 0; i < 1000; i++) {
                unsigned j;
                for (j = 0; j < 101; j++) {
                        assert_int_equal((unsigned char)r[i][j], i & 0xff);
                }
        }
        finish(&fa, &p);
}

/* A freed record is handed out again for a size of its class, and only
 * for one. */
static void freed_records_come_back(void **state)
{
        struct failalloc fa;
        struct pool p;
        void *a, *b, *c;

        (void)state;
        start(&fa, &p, SLAB);
        a = pool_alloc(&p, 40);
        b = pool_alloc(&p, 40);
        pool_free(&p, a, 40);
        c = pool_alloc(&p, 48); /* another class: new room */
        assert_ptr_not_equal(c, a);
        assert_ptr_equal(pool_alloc(&p, 33), a); /* 33..40 share a class */
        pool_free(&p, b, 40);
        pool_free(&p, c, 48);
        assert_ptr_equal(pool_alloc(&p, 48), c);
        assert_ptr_equal(pool_alloc(&p, 40), b);
        assert_int_equal(pool_slab_bytes(&p), SLAB);
        finish(&fa, &p);
}

/* What a slab has left when a record does not fit is kept for smaller
 * records. */
static void slab_ends_are_kept(void **state)
{
        struct failalloc fa;
        struct pool p;
        char *first, *big, *tail;

        (void)state;
        start(&fa, &p, SLAB);
        first = pool_alloc(&p, 64);
        big = pool_alloc(&p, POOL_MAX);
        while (p.left >= POOL_MAX) {
                assert_non_null(pool_alloc(&p, POOL_MAX));
        }
        tail = p.left >= 8 + POOL_REDZONE ? p.next : NULL;
        assert_non_null(pool_alloc(&p, POOL_MAX)); /* a second slab */
        assert_int_equal(pool_slab_bytes(&p), 2 * SLAB);
        if (tail != NULL) {
                size_t n = (size_t)(first + SLAB - tail);
                assert_ptr_equal(pool_alloc(&p, n - POOL_REDZONE), tail);
        }
        (void)big;
        finish(&fa, &p);
}

/* Records over POOL_MAX are asked of mem, one by one; small ones only
 * admitted by it, and they are gone with the pool. */
static void large_records_are_asked_of_mem(void **state)
{
        struct failalloc fa;
        struct pool p;
        void *a, *b;

        (void)state;
        start(&fa, &p, SLAB);
        a = pool_alloc(&p, POOL_MAX + 1);
        b = pool_alloc(&p, 16);
        assert_int_equal(fa.live, 1);
        assert_int_equal(fa.calls, 2);
        assert_int_equal(fa.admits, 1);
        pool_free(&p, a, POOL_MAX + 1);
        assert_int_equal(fa.live, 0);
        (void)b;
        finish(&fa, &p);
}

/* Every record of a pool lies within reach of a 32-bit link of every
 * other (rqueue.h), across slabs. */
static void records_are_within_a_link(void **state)
{
        struct failalloc fa;
        struct pool p;
        struct rqueue *head, *q;
        unsigned i, n = 0;

        (void)state;
        start(&fa, &p, SLAB);
        head = pool_alloc(&p, sizeof *head);
        rqueue_init(head);
        for (i = 0; i < 5000; i++) {
                q = pool_alloc(&p, 8 + i % 200);
                assert_non_null(q);
                rqueue_push_tail(head, q);
        }
        assert_true(pool_slab_bytes(&p) > 10 * SLAB);
        while (!rqueue_empty(head)) {
                q = rqueue_head(head);
                assert_ptr_equal(rqueue_prev(q), head);
                rqueue_remove(q);
                pool_free(&p, q, 8 + n % 200);
                n++;
        }
        assert_int_equal(n, 5000);
        assert_int_equal(pool_live_bytes(&p), 8 + POOL_REDZONE);
        finish(&fa, &p);
}

/* A record mem's admit() refuses fails, and nothing else. */
static void refused_record_fails_alone(void **state)
{
        struct failalloc fa;
        struct pool p;
        char *a;

        (void)state;
        start(&fa, &p, SLAB);
        a = pool_alloc(&p, 24);
        memset(a, 7, 24);
        failalloc_arm(&fa, 0, false);
        assert_null(pool_alloc(&p, 24));
        failalloc_disarm(&fa);
        assert_int_equal(pool_live_bytes(&p), 24 + POOL_REDZONE);
        assert_non_null(pool_alloc(&p, 24));
        assert_int_equal(a[23], 7);
        finish(&fa, &p);
}

/* A pool whose region is full fails the record, and nothing else: freed
 * room is still handed out. */
static void full_region_fails_one_record(void **state)
{
        struct failalloc fa;
        struct pool p;
        char *a, *last = NULL;

        (void)state;
        start(&fa, &p, SLAB);
        pool_cap(&p, 2 * SLAB + SLAB / 2);
        a = pool_alloc(&p, 24);
        assert_non_null(a);
        memset(a, 7, 24);
        while (pool_slab_bytes(&p) < 2 * SLAB || p.left >= 24 + POOL_REDZONE) {
                last = pool_alloc(&p, 24);
                assert_non_null(last);
        }
        assert_null(pool_alloc(&p, 24));
        assert_int_equal(pool_slab_bytes(&p), 2 * SLAB);
        assert_int_equal(a[23], 7);
        pool_free(&p, last, 24);
        assert_ptr_equal(pool_alloc(&p, 24), last);
        finish(&fa, &p);
}

#if !defined(__SANITIZE_ADDRESS__)
/* The process's virtual size now, in bytes; 0 if unknown. */
static size_t vm_size(void)
{
        FILE *f = fopen("/proc/self/status", "r");
        char line[128];
        size_t kib = 0;

        while (f != NULL && fgets(line, sizeof line, f) != NULL) {
                if (sscanf(line, "VmSize: %zu kB", &kib) == 1) {
                        break;
                }
        }
        if (f != NULL) {
                fclose(f);
        }
        return kib * 1024;
}
#endif

#if !defined(__SANITIZE_ADDRESS__)
/* A process that may not map POOL_SPAN (ulimit -v) gets a smaller
 * region, which works as the full one does. (Not under AddressSanitizer,
 * which itself maps more than any such limit allows.) */
static void region_fits_an_address_space_limit(void **state)
{
        const rlim_t room = (rlim_t)1 << 30;
        struct failalloc fa;
        struct rlimit old, lim;
        struct pool p;
        size_t vm = vm_size();
        unsigned i;

        (void)state;
        assert_true(vm > 0);
        assert_int_equal(getrlimit(RLIMIT_AS, &old), 0);
        lim = old;
        if (lim.rlim_cur == RLIM_INFINITY || lim.rlim_cur > vm + room) {
                lim.rlim_cur = vm + room;
        }
        assert_int_equal(setrlimit(RLIMIT_AS, &lim), 0);
        start(&fa, &p, SLAB);
        for (i = 0; i < 1000; i++) {
                assert_non_null(pool_alloc(&p, 64));
        }
        assert_int_equal(setrlimit(RLIMIT_AS, &old), 0);
        assert_true(p.reserved < POOL_SPAN);
        assert_true(p.reserved >= 16 * SLAB);
        finish(&fa, &p);
}
#endif

/* Random sizes allocated and freed: every live record keeps its bytes. */
static void random_records_never_overlap(void **state)
{
        enum { N = 2000 };
        struct failalloc fa;
        struct pool p;
        char *r[N] = {0};
        size_t size[N] = {0};
        unsigned i, step;

        (void)state;
        srand(7);
        start(&fa, &p, SLAB);
        for (step = 0; step < 50000; step++) {
                i = (unsigned)rand() % N;
                if (r[i] != NULL) {
                        size_t j;
                        for (j = 0; j < size[i]; j++) {
                                assert_int_equal((unsigned char)r[i][j],
                                                 (i + j) & 0xff);
                        }
                        pool_free(&p, r[i], size[i]);
                        r[i] = NULL;
                } else {
                        size_t j;
                        size[i] = 1 + (size_t)rand() % (POOL_MAX + 100);
                        r[i] = pool_alloc(&p, size[i]);
                        assert_non_null(r[i]);
                        for (j = 0; j < size[i]; j++) {
                                r[i][j] = (char)((i + j) & 0xff);
                        }
                }
        }
        for (i = 0; i < N; i++) {
                if (size[i] > POOL_MAX) {
                        pool_free(&p, r[i], size[i]);
                }
        }
        finish(&fa, &p);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(records_are_packed),
                cmocka_unit_test(freed_records_come_back),
                cmocka_unit_test(slab_ends_are_kept),
                cmocka_unit_test(large_records_are_asked_of_mem),
                cmocka_unit_test(records_are_within_a_link),
                cmocka_unit_test(refused_record_fails_alone),
                cmocka_unit_test(full_region_fails_one_record),
#if !defined(__SANITIZE_ADDRESS__)
                cmocka_unit_test(region_fits_an_address_space_limit),
#endif
                cmocka_unit_test(random_records_never_overlap),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
