/* Unit tests for the open-addressing table of record pointers. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "../../include/baton.h"
#include "../../src/lib/hmap.h"
#include "../../src/lib/ptable.h"
#include "../lib/failalloc.h"

/* A keyed record as a module using the table would have it; `mask`
 * narrows its hash so that tests can make records collide. */
struct item {
        uint64_t key;
};

static uint64_t mask = ~(uint64_t)0;

/* The start of the records' region, which the table's slots count from:
 * each test's array of items. */
static char *base;

static uint64_t key_hash(uint64_t key)
{
        return hash_u64(key) & mask;
}

static uint64_t item_hash(const void *record)
{
        return key_hash(((const struct item *)record)->key);
}

static bool item_is(const void *record, const void *key)
{
        return ((const struct item *)record)->key == *(const uint64_t *)key;
}

static struct item *find(const struct ptable *t, uint64_t key)
{
        return ptable_find(t, key_hash(key), item_is, &key);
}

static void add(struct ptable *t, struct item *it)
{
        assert_int_equal(ptable_reserve(t, t->count + 1), 0);
        ptable_insert(t, it, key_hash(it->key));
}

static void drop(struct ptable *t, struct item *it)
{
        ptable_remove(t, it, key_hash(it->key));
}

static int reset_mask(void **state)
{
        (void)state;
        mask = ~(uint64_t)0;
        return 0;
}

static void empty_table(void **state)
{
        struct ptable t;
        uint64_t key = 7;

        (void)state;
        base = NULL; /* nothing is inserted */
        ptable_init(&t, &mem_libc, item_hash, &base);
        assert_null(ptable_find(&t, key_hash(key), item_is, &key));
        assert_int_equal(t.count, 0);
        ptable_close(&t);
}

static void insert_find_remove_many(void **state)
{
        enum { N = 100000 };
        struct item *items = calloc(N, sizeof *items);
        struct ptable t;
        size_t i;

        (void)state;
        assert_non_null(items);
        base = (char *)items;
        ptable_init(&t, &mem_libc, item_hash, &base);
        for (i = 0; i < N; i++) {
                items[i].key = i * 7919;
                add(&t, &items[i]);
        }
        assert_int_equal(t.count, N);
        for (i = 0; i < N; i++) {
                assert_ptr_equal(find(&t, items[i].key), &items[i]);
        }
        assert_null(find(&t, 3)); /* not a multiple of 7919 */
        for (i = 0; i < N; i += 2) {
                drop(&t, &items[i]);
        }
        for (i = 0; i < N; i++) {
                assert_ptr_equal(find(&t, items[i].key),
                                 i % 2 == 0 ? NULL : &items[i]);
        }
        assert_int_equal(t.count, N / 2);
        /* At most 3/4 full. */
        assert_true(t.n_slots - t.n_slots / 4 >= N);
        ptable_close(&t);
        free(items);
}

/* Records whose hashes are all equal, or equal in their home bits only:
 * one long cluster, found by key, and still found after removals from
 * its middle (which shift the records behind back). */
static void colliding_hashes(void **state)
{
        enum { N = 200 };
        static struct item items[N];
        struct ptable t;
        size_t i;
        int round;

        (void)state;
        for (round = 0; round < 2; round++) {
                /* Round 0: one hash for all. Round 1: one home slot, and
                 * tags that differ. */
                mask = round == 0 ? 0 : ~(uint64_t)0xffff;
                base = (char *)items;
                ptable_init(&t, &mem_libc, item_hash, &base);
                for (i = 0; i < N; i++) {
                        items[i].key = i + 1;
                        add(&t, &items[i]);
                }
                for (i = 0; i < N; i += 3) {
                        drop(&t, &items[i]);
                }
                for (i = 0; i < N; i++) {
                        assert_ptr_equal(find(&t, items[i].key),
                                         i % 3 == 0 ? NULL : &items[i]);
                }
                ptable_close(&t);
        }
        mask = ~(uint64_t)0;
}

/* A cluster that runs past the array's end wraps to its start; removing
 * records on either side of the wrap keeps the rest found. */
static uint64_t last_slot_hash(const void *record)
{
        (void)record;
        return 15; /* the last of 16 slots */
}

static void wrapping_cluster(void **state)
{
        static struct item items[10];
        struct ptable t;
        uint64_t key;
        size_t i, j;

        (void)state;
        for (j = 0; j < 10; j++) {
                base = (char *)items;
                ptable_init(&t, &mem_libc, last_slot_hash, &base);
                assert_int_equal(ptable_reserve(&t, 10), 0);
                assert_int_equal(t.n_slots, 16);
                for (i = 0; i < 10; i++) {
                        items[i].key = i;
                        ptable_insert(&t, &items[i], 15);
                }
                ptable_remove(&t, &items[j], 15);
                for (i = 0; i < 10; i++) {
                        key = i;
                        assert_ptr_equal(ptable_find(&t, 15, item_is, &key),
                                         i == j ? NULL : &items[i]);
                }
                ptable_close(&t);
        }
}

/* While a doubling is under way, a cluster of the old array that ran past
 * its end and wrapped into the slots already moved is still found beyond
 * them; a record moved and then removed is not found. */
static void doubling_with_a_wrapped_cluster(void **state)
{
        static struct item items[14];
        struct ptable t;
        uint64_t key;
        size_t i;

        (void)state;
        base = (char *)items;
        ptable_init(&t, &mem_libc, last_slot_hash, &base);
        assert_int_equal(ptable_reserve(&t, 12), 0);
        for (i = 0; i < 12; i++) { /* slots 15, 0, 1, ..., 10 */
                items[i].key = i;
                ptable_insert(&t, &items[i], 15);
        }
        assert_int_equal(ptable_reserve(&t, 13), 0);
        items[12].key = 12;
        ptable_insert(&t, &items[12], 15); /* moves old slots 0..3 */
        assert_non_null(t.old);
        assert_int_equal(t.moved, 4);
        ptable_remove(&t, &items[1], 15); /* was in old slot 0: moved */
        assert_non_null(t.old);
        for (i = 0; i < 13; i++) {
                key = i;
                assert_ptr_equal(ptable_find(&t, 15, item_is, &key),
                                 i == 1 ? NULL : &items[i]);
        }
        ptable_close(&t);
}

/* A doubling moves nothing at the reserve and a few old slots at each
 * insert or remove after it; every record stays found throughout, also
 * those removed from the old array meanwhile. */
static void doubling_moves_a_few_slots_per_call(void **state)
{
        enum { N = 1100 }; /* 769 + the 255 calls of the move, and some */
        static struct item items[N];
        struct ptable t;
        size_t i, n_old, calls = 0;

        (void)state;
        base = (char *)items;
        ptable_init(&t, &mem_libc, item_hash, &base);
        for (i = 0; i < N; i++) {
                items[i].key = i;
        }
        /* Fill to the brim of 1,024 slots, then one more. */
        for (i = 0; i < 768; i++) {
                add(&t, &items[i]);
        }
        assert_int_equal(t.n_slots, 1024);
        assert_null(t.old);
        add(&t, &items[768]);
        assert_int_equal(t.n_slots, 2048);
        assert_non_null(t.old);
        n_old = t.n_old;
        assert_int_equal(n_old, 1024);
        assert_true(t.moved <= 4);
        for (i = 769; t.old != NULL; i++) {
                assert_true(i < N);
                if (i % 3 == 0) {
                        drop(&t, &items[i / 3]); /* mostly from old */
                } else {
                        add(&t, &items[i]);
                }
                calls++;
                assert_true(t.old == NULL || t.moved == 4 * (calls + 1));
                assert_ptr_equal(find(&t, items[i / 3 + 1].key),
                                 &items[i / 3 + 1]);
        }
        assert_int_equal(calls, n_old / 4 - 1);
        /* Exactly the added and not dropped records are found. */
        for (i = 0; i < N; i++) {
                bool added = i < 769 || (i < 769 + calls && i % 3 != 0);
                /* Call k, a multiple of 3, dropped record k / 3. */
                bool dropped = 3 * i >= 769 && 3 * i < 769 + calls;
                assert_ptr_equal(find(&t, items[i].key),
                                 added && !dropped ? &items[i] : NULL);
        }
        ptable_close(&t);
}

/* Random inserts and removes, with hashes narrowed to make long clusters,
 * checked against a plain array after every step. */
static void random_against_reference(void **state)
{
        enum { N = 6000 };
        struct item *items = calloc(N, sizeof *items);
        bool *in = calloc(N, sizeof *in);
        uint64_t seed = 88172645463325252ULL;
        struct ptable t;
        size_t step, i, count = 0, doublings = 0;

        (void)state;
        assert_non_null(items);
        assert_non_null(in);
        mask = ~(uint64_t)0x3f00; /* homes collide in groups of 64 */
        base = (char *)items;
        ptable_init(&t, &mem_libc, item_hash, &base);
        for (i = 0; i < N; i++) {
                items[i].key = i;
        }
        for (step = 0; step < 200000; step++) {
                uint32_t *was = t.old;
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                i = (size_t)(seed % N);
                if (!in[i]) {
                        add(&t, &items[i]);
                        in[i] = true;
                        count++;
                } else if (seed & 0x100) {
                        drop(&t, &items[i]);
                        in[i] = false;
                        count--;
                }
                doublings += was == NULL && t.old != NULL;
                assert_int_equal(t.count, count);
                i = (size_t)(seed >> 20) % N;
                assert_ptr_equal(find(&t, items[i].key),
                                 in[i] ? &items[i] : NULL);
        }
        for (i = 0; i < N; i++) {
                assert_ptr_equal(find(&t, items[i].key),
                                 in[i] ? &items[i] : NULL);
        }
        assert_true(doublings >= 5);
        ptable_close(&t);
        mask = ~(uint64_t)0;
        free(items);
        free(in);
}

/* The table never writes into a record: records on read-only pages go
 * through growth, doublings under way, removals and backward shifts. */
static void records_are_never_written(void **state)
{
        enum { N = 20000 };
        size_t size = N * sizeof(struct item), i;
        struct item *items = mmap(NULL, size, PROT_READ | PROT_WRITE,
                                  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        struct ptable t;

        (void)state;
        assert_true(items != MAP_FAILED);
        for (i = 0; i < N; i++) {
                items[i].key = i;
        }
        assert_int_equal(mprotect(items, size, PROT_READ), 0);
        mask = ~(uint64_t)0xff0; /* clusters, so removals shift */
        base = (char *)items;
        ptable_init(&t, &mem_libc, item_hash, &base);
        for (i = 0; i < N; i++) {
                add(&t, &items[i]);
                if (i % 4 == 3) {
                        drop(&t, &items[i - 2]);
                }
        }
        for (i = 0; i < N; i++) {
                assert_ptr_equal(find(&t, i), i % 4 == 1 ? NULL : &items[i]);
        }
        ptable_close(&t);
        mask = ~(uint64_t)0;
        munmap(items, size);
}

static void reserve_sizes(void **state)
{
        struct ptable t;

        (void)state;
        base = NULL; /* nothing is inserted */
        ptable_init(&t, &mem_libc, item_hash, &base);
        assert_int_equal(ptable_reserve(&t, 0), 0);
        assert_int_equal(t.n_slots, 0);
        assert_int_equal(ptable_reserve(&t, 1), 0);
        assert_int_equal(t.n_slots, 16);
        assert_int_equal(ptable_reserve(&t, 12), 0);
        assert_int_equal(t.n_slots, 16);
        assert_int_equal(ptable_reserve(&t, 13), 0);
        assert_int_equal(t.n_slots, 32);
        assert_int_equal(ptable_reserve(&t, 1000), 0);
        assert_int_equal(t.n_slots, 2048); /* 1,536 fit */
        assert_int_equal(ptable_reserve(&t, SIZE_MAX), BATON_ENOMEM);
        assert_int_equal(t.n_slots, 2048);
        ptable_close(&t);
}

/* A failed reserve changes nothing, also while a doubling is under way;
 * closing frees both arrays. */
static void reserve_failure(void **state)
{
        enum { N = 13 };
        struct item items[N];
        struct failalloc fa;
        struct ptable t;
        size_t i;

        (void)state;
        failalloc_init(&fa);
        base = (char *)items;
        ptable_init(&t, &fa.mem, item_hash, &base);
        failalloc_arm(&fa, 0, true);
        assert_int_equal(ptable_reserve(&t, 1), BATON_ENOMEM);
        failalloc_disarm(&fa);
        assert_int_equal(t.n_slots, 0);
        for (i = 0; i < N; i++) {
                items[i].key = i;
                add(&t, &items[i]);
        }
        assert_non_null(t.old); /* 16 -> 32, under way */
        failalloc_arm(&fa, 0, true);
        assert_int_equal(ptable_reserve(&t, 1000), BATON_ENOMEM);
        failalloc_disarm(&fa);
        assert_non_null(t.old);
        assert_int_equal(t.count, N);
        for (i = 0; i < N; i++) {
                assert_ptr_equal(find(&t, i), &items[i]);
        }
        ptable_close(&t);
        assert_int_equal(fa.live, 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_teardown(empty_table, reset_mask),
            cmocka_unit_test_teardown(insert_find_remove_many, reset_mask),
            cmocka_unit_test_teardown(colliding_hashes, reset_mask),
            cmocka_unit_test_teardown(wrapping_cluster, reset_mask),
            cmocka_unit_test_teardown(doubling_moves_a_few_slots_per_call,
                                      reset_mask),
            cmocka_unit_test_teardown(doubling_with_a_wrapped_cluster,
                                      reset_mask),
            cmocka_unit_test_teardown(random_against_reference, reset_mask),
            cmocka_unit_test_teardown(records_are_never_written, reset_mask),
            cmocka_unit_test_teardown(reserve_sizes, reset_mask),
            cmocka_unit_test_teardown(reserve_failure, reset_mask),
        };
        return cmocka_run_group_tests_name("ptable", tests, NULL, NULL);
}
