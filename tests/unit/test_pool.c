/* Unit tests for the pool of small records carved from slabs. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "../../src/lib/pool.h"
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
        /* Without sanitizers, (SLAB - 8) / 104 = 39 records a slab. */
        per = (SLAB - 8) / ((101 + POOL_REDZONE + 7) / 8 * 8);
        assert_int_equal(fa.calls, (1000 + per - 1) / per);
        assert_int_equal(pool_slab_bytes(&p), fa.calls * SLAB);
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
        assert_int_equal(fa.calls, 1);
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
        first = pool_alloc(&p, SLAB - 8 - 64); /* too big: asked of mem */
        assert_int_equal(fa.calls, 1);
        assert_int_equal(pool_slab_bytes(&p), 0);
        pool_free(&p, first, SLAB - 8 - 64);
        first = pool_alloc(&p, 64);
        big = pool_alloc(&p, POOL_MAX);
        while (p.left >= POOL_MAX) {
                assert_non_null(pool_alloc(&p, POOL_MAX));
        }
        tail = p.left >= 8 + POOL_REDZONE ? p.next : NULL;
        assert_non_null(pool_alloc(&p, POOL_MAX)); /* a second slab */
        assert_int_equal(pool_slab_bytes(&p), 2 * SLAB);
        if (tail != NULL) {
                size_t n = (size_t)(first + SLAB - 8 - tail);
                assert_ptr_equal(pool_alloc(&p, n - POOL_REDZONE), tail);
        }
        (void)big;
        finish(&fa, &p);
}

/* A pool without slabs, and records over POOL_MAX, ask mem for each. */
static void without_slabs_each_record_is_asked(void **state)
{
        struct failalloc fa;
        struct pool p;
        void *a, *b;

        (void)state;
        start(&fa, &p, 0);
        assert_false(pool_frees_all(&p));
        a = pool_alloc(&p, 16);
        b = pool_alloc(&p, 16);
        assert_int_equal(fa.calls, 2);
        assert_int_equal(fa.live, 2);
        pool_free(&p, a, 16);
        pool_free(&p, b, 16);
        assert_int_equal(fa.live, 0);
        pool_close(&p);

        pool_init(&p, &fa.mem, SLAB);
        assert_true(pool_frees_all(&p));
        a = pool_alloc(&p, POOL_MAX + 1);
        assert_int_equal(fa.live, 1);
        pool_free(&p, a, POOL_MAX + 1);
        assert_int_equal(fa.live, 0);
        pool_close(&p);
}

/* A slab that cannot be had fails that record and nothing else. */
static void failed_slab_fails_one_record(void **state)
{
        struct failalloc fa;
        struct pool p;
        char *a;

        (void)state;
        start(&fa, &p, SLAB);
        failalloc_arm(&fa, 0, false);
        assert_null(pool_alloc(&p, 24));
        failalloc_disarm(&fa);
        a = pool_alloc(&p, 24);
        assert_non_null(a);
        memset(a, 7, 24);
        while (p.left >= 24) {
                assert_non_null(pool_alloc(&p, 24));
        }
        failalloc_arm(&fa, 0, false);
        assert_null(pool_alloc(&p, 24));
        failalloc_disarm(&fa);
        assert_int_equal(a[23], 7);
        assert_non_null(pool_alloc(&p, 24));
        finish(&fa, &p);
}

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
            cmocka_unit_test(without_slabs_each_record_is_asked),
            cmocka_unit_test(failed_slab_fails_one_record),
            cmocka_unit_test(random_records_never_overlap),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
