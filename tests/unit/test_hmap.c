/* Unit tests for the intrusive chained hash map and its hash functions. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../../include/baton.h"
#include "../../src/lib/hmap.h"
#include "../lib/failalloc.h"

/* A keyed entry as a module using the map would embed it. */
struct item {
        uint64_t key;
        struct hnode node;
};

/* The entry with `key` under `hash`, comparing keys as real callers do. */
static struct item *find(const struct hmap *m, uint64_t hash, uint64_t key)
{
        struct hnode *n;

        for (n = hmap_first(m, hash); n != NULL; n = hmap_next(n)) {
                struct item *it = HMAP_DATA(n, struct item, node);
                if (it->key == key) {
                        return it;
                }
        }
        return NULL;
}

/* Number of nodes reachable under `hash`. */
static size_t chain_len(const struct hmap *m, uint64_t hash)
{
        struct hnode *n;
        size_t len = 0;

        for (n = hmap_first(m, hash); n != NULL; n = hmap_next(n)) {
                assert_true(n->hash == hash);
                len++;
        }
        return len;
}

/* Reserve room for one more node, then insert it. */
static void add(struct hmap *m, struct item *it, uint64_t hash)
{
        assert_int_equal(hmap_reserve(m, m->count + 1), 0);
        hmap_insert(m, &it->node, hash);
}

/* Remove the even entries of items[0..n), check that exactly the odd ones
 * are found, then remove the rest: the map is empty again. */
static void remove_evens_then_odds(struct hmap *m, struct item *items, size_t n)
{
        size_t i;

        for (i = 0; i < n; i += 2) {
                hmap_remove(m, &items[i].node);
        }
        assert_int_equal(m->count, n / 2);
        for (i = 0; i < n; i++) {
                struct item *got =
                    find(m, hash_u64(items[i].key), items[i].key);
                if (i % 2 == 0) {
                        assert_null(got);
                } else {
                        assert_ptr_equal(got, &items[i]);
                }
        }
        for (i = 1; i < n; i += 2) {
                hmap_remove(m, &items[i].node);
        }
        assert_int_equal(m->count, 0);
}

/* True when n is a non-zero power of two. */
static bool pow2(size_t n)
{
        return n != 0 && (n & (n - 1)) == 0;
}

/* A fresh map holds nothing, finds nothing and closes without buckets. */
static void empty_map(void **state)
{
        struct failalloc fa;
        struct hmap m;

        (void)state;
        failalloc_init(&fa);
        hmap_init(&m, &fa.mem);
        assert_int_equal(m.count, 0);
        assert_int_equal(m.n_buckets, 0);
        assert_null(hmap_first(&m, 0));
        assert_null(hmap_first(&m, hash_u64(7)));
        hmap_close(&m);
        assert_int_equal(fa.calls, 0);
        assert_int_equal(fa.live, 0);
}

/* Many distinct keys can be inserted, found, removed and not found again. */
static void insert_find_remove_many(void **state)
{
        enum { N = 2000 };
        struct item *items = calloc(N, sizeof *items);
        struct hmap m;
        size_t i;

        (void)state;
        assert_non_null(items);
        hmap_init(&m, &mem_libc);
        for (i = 0; i < N; i++) {
                items[i].key = i * 3 + 1;
                add(&m, &items[i], hash_u64(items[i].key));
                assert_int_equal(m.count, i + 1);
        }
        for (i = 0; i < N; i++) {
                assert_ptr_equal(find(&m, hash_u64(items[i].key), items[i].key),
                                 &items[i]);
        }
        /* Keys that were never inserted are not found. */
        for (i = 0; i < N; i++) {
                uint64_t key = i * 3 + 2;
                assert_null(find(&m, hash_u64(key), key));
        }
        remove_evens_then_odds(&m, items, N);
        for (i = 0; i < N; i++) {
                assert_null(find(&m, hash_u64(items[i].key), items[i].key));
        }
        hmap_close(&m);
        free(items);
}

/* Nodes with the same hash but different keys are all reachable. */
static void colliding_hashes(void **state)
{
        enum { N = 64 };
        const uint64_t hash = 0x1234;
        struct item items[N];
        bool seen[N];
        struct hnode *n;
        struct hmap m;
        size_t i;

        (void)state;
        hmap_init(&m, &mem_libc);
        for (i = 0; i < N; i++) {
                items[i].key = 1000 + i;
                add(&m, &items[i], hash);
        }
        assert_int_equal(chain_len(&m, hash), N);
        memset(seen, 0, sizeof seen);
        for (n = hmap_first(&m, hash); n != NULL; n = hmap_next(n)) {
                struct item *it = HMAP_DATA(n, struct item, node);
                assert_true(it >= &items[0] && it < &items[N]);
                assert_false(seen[it - items]);
                seen[it - items] = true;
        }
        for (i = 0; i < N; i++) {
                assert_true(seen[i]);
                assert_ptr_equal(find(&m, hash, items[i].key), &items[i]);
        }
        /* A key that shares the hash but was never inserted is absent. */
        assert_null(find(&m, hash, 999));
        /* Other hashes see none of them. */
        assert_null(hmap_first(&m, hash + 1));
        hmap_close(&m);
}

/* Different hashes in the same bucket do not leak into each other's walk. */
static void same_bucket_different_hash(void **state)
{
        struct item a = {.key = 1}, b = {.key = 2}, c = {.key = 3};
        struct hmap m;

        (void)state;
        hmap_init(&m, &mem_libc);
        assert_int_equal(hmap_reserve(&m, 3), 0);
        /* The low bits agree, so all three share a bucket at any size the
         * map has here. */
        hmap_insert(&m, &a.node, 5);
        hmap_insert(&m, &b.node, 5 + ((uint64_t)1 << 40));
        hmap_insert(&m, &c.node, 5);
        assert_int_equal(chain_len(&m, 5), 2);
        assert_int_equal(chain_len(&m, 5 + ((uint64_t)1 << 40)), 1);
        assert_ptr_equal(find(&m, 5, 1), &a);
        assert_ptr_equal(find(&m, 5, 3), &c);
        assert_null(find(&m, 5, 2));
        assert_ptr_equal(find(&m, 5 + ((uint64_t)1 << 40), 2), &b);
        assert_null(find(&m, 5 + ((uint64_t)1 << 40), 1));
        /* Removing the odd one out leaves the others intact. */
        hmap_remove(&m, &b.node);
        assert_int_equal(chain_len(&m, 5), 2);
        assert_null(hmap_first(&m, 5 + ((uint64_t)1 << 40)));
        hmap_close(&m);
}

/* Removing the middle, then the head, then the tail of a chain. */
static void remove_from_chain(void **state)
{
        enum { N = 5 };
        struct item items[N];
        struct hnode *order[N];
        struct hnode *n;
        struct hmap m;
        size_t i;

        (void)state;
        hmap_init(&m, &mem_libc);
        for (i = 0; i < N; i++) {
                items[i].key = i;
                add(&m, &items[i], 77);
        }
        i = 0;
        for (n = hmap_first(&m, 77); n != NULL; n = hmap_next(n)) {
                order[i++] = n;
        }
        assert_int_equal(i, N);

        /* The middle of the chain. */
        hmap_remove(&m, order[2]);
        assert_int_equal(m.count, N - 1);
        assert_int_equal(chain_len(&m, 77), N - 1);
        n = hmap_first(&m, 77);
        assert_ptr_equal(n, order[0]);
        n = hmap_next(n);
        assert_ptr_equal(n, order[1]);
        n = hmap_next(n);
        assert_ptr_equal(n, order[3]);
        n = hmap_next(n);
        assert_ptr_equal(n, order[4]);
        assert_null(hmap_next(n));

        /* The head. */
        hmap_remove(&m, order[0]);
        assert_ptr_equal(hmap_first(&m, 77), order[1]);
        assert_int_equal(chain_len(&m, 77), N - 2);

        /* The tail. */
        hmap_remove(&m, order[4]);
        n = hmap_first(&m, 77);
        assert_ptr_equal(n, order[1]);
        assert_ptr_equal(hmap_next(n), order[3]);
        assert_null(hmap_next(hmap_next(n)));

        /* A removed node can be inserted again. */
        assert_int_equal(hmap_reserve(&m, m.count + 1), 0);
        hmap_insert(&m, order[2], 77);
        assert_int_equal(chain_len(&m, 77), 3);
        assert_ptr_equal(find(&m, 77, items[2].key), &items[2]);
        hmap_close(&m);
}

/* Every growth keeps all nodes findable and the table a power of two. */
static void growth_keeps_nodes(void **state)
{
        enum { N = 3000 };
        struct item *items = calloc(N, sizeof *items);
        size_t grows = 0;
        struct hmap m;
        size_t i, j;

        (void)state;
        assert_non_null(items);
        hmap_init(&m, &mem_libc);
        for (i = 0; i < N; i++) {
                size_t before = m.n_buckets;

                items[i].key = hash_u64(i) ^ 0x5555;
                /* Every eighth key collides with its predecessor's hash. */
                add(&m, &items[i],
                    i % 8 == 7 ? items[i - 1].node.hash
                               : hash_u64(items[i].key));
                assert_true(pow2(m.n_buckets));
                assert_true(m.count <= m.n_buckets);
                if (m.n_buckets != before) {
                        grows++;
                        for (j = 0; j <= i; j++) {
                                assert_ptr_equal(
                                    find(&m, items[j].node.hash, items[j].key),
                                    &items[j]);
                        }
                }
        }
        /* 0 -> 16 -> 32 -> ... -> 4096. */
        assert_int_equal(grows, 9);
        assert_int_equal(m.n_buckets, 4096);
        for (i = 0; i < N; i++) {
                assert_ptr_equal(find(&m, items[i].node.hash, items[i].key),
                                 &items[i]);
        }
        hmap_close(&m);
        free(items);
}

/* Reserving ahead grows once; smaller reservations never shrink or allocate. */
static void reserve_sizes(void **state)
{
        struct failalloc fa;
        struct hmap m;
        unsigned long calls;

        (void)state;
        failalloc_init(&fa);
        hmap_init(&m, &fa.mem);
        assert_int_equal(hmap_reserve(&m, 0), 0);
        assert_int_equal(m.n_buckets, 16);
        assert_int_equal(fa.live, 1);
        assert_int_equal(hmap_reserve(&m, 16), 0);
        assert_int_equal(m.n_buckets, 16);
        assert_int_equal(hmap_reserve(&m, 17), 0);
        assert_int_equal(m.n_buckets, 32);
        assert_int_equal(hmap_reserve(&m, 1000), 0);
        assert_int_equal(m.n_buckets, 1024);
        assert_int_equal(fa.live, 1);
        calls = fa.calls;
        assert_int_equal(hmap_reserve(&m, 1), 0);
        assert_int_equal(hmap_reserve(&m, 1024), 0);
        assert_int_equal(m.n_buckets, 1024);
        assert_int_equal(fa.calls, calls);
        hmap_close(&m);
        assert_int_equal(fa.live, 0);
}

/* A failed first reserve leaves an empty map with no buckets. */
static void reserve_failure_on_empty_map(void **state)
{
        struct failalloc fa;
        struct hmap m;

        (void)state;
        failalloc_init(&fa);
        hmap_init(&m, &fa.mem);
        failalloc_arm(&fa, 0, false);
        assert_int_equal(hmap_reserve(&m, 1), BATON_ENOMEM);
        assert_true(fa.failed);
        assert_null(m.buckets);
        assert_int_equal(m.n_buckets, 0);
        assert_int_equal(m.count, 0);
        assert_null(hmap_first(&m, 1));
        assert_int_equal(fa.live, 0);
        /* The allocator recovers (not sticky) and so does the map. */
        assert_int_equal(hmap_reserve(&m, 1), 0);
        assert_int_equal(m.n_buckets, 16);
        hmap_close(&m);
        assert_int_equal(fa.live, 0);
}

/* A failed growth leaves buckets, count and every node exactly as they were. */
static void reserve_failure_leaves_map_unchanged(void **state)
{
        enum { N = 16 };
        struct item items[N];
        struct hnode **buckets;
        struct failalloc fa;
        struct hmap m;
        size_t i;

        (void)state;
        failalloc_init(&fa);
        hmap_init(&m, &fa.mem);
        for (i = 0; i < N; i++) {
                items[i].key = i;
                /* Half of them collide. */
                add(&m, &items[i], i % 2 == 0 ? 99 : hash_u64(i));
        }
        assert_int_equal(m.n_buckets, 16);
        buckets = m.buckets;

        failalloc_arm(&fa, 0, true);
        assert_int_equal(hmap_reserve(&m, N + 1), BATON_ENOMEM);
        assert_int_equal(hmap_reserve(&m, 10 * N), BATON_ENOMEM);
        assert_ptr_equal(m.buckets, buckets);
        assert_int_equal(m.n_buckets, 16);
        assert_int_equal(m.count, N);
        assert_int_equal(fa.live, 1);
        assert_int_equal(chain_len(&m, 99), N / 2);
        for (i = 0; i < N; i++) {
                assert_ptr_equal(find(&m, items[i].node.hash, i), &items[i]);
        }
        /* A reserve that needs no growth still succeeds while failing. */
        assert_int_equal(hmap_reserve(&m, N), 0);

        /* Removal still works on the unchanged map. */
        hmap_remove(&m, &items[0].node);
        assert_null(find(&m, 99, 0));
        assert_int_equal(chain_len(&m, 99), N / 2 - 1);

        failalloc_disarm(&fa);
        assert_int_equal(hmap_reserve(&m, N + 1), 0);
        assert_int_equal(m.n_buckets, 32);
        assert_int_equal(fa.live, 1);
        for (i = 1; i < N; i++) {
                assert_ptr_equal(find(&m, items[i].node.hash, i), &items[i]);
        }
        hmap_close(&m);
        assert_int_equal(fa.live, 0);
}

/* After n good allocations the next growth fails; sticky keeps failing. */
static void reserve_failure_after_some_growth(void **state)
{
        enum { N = 40 };
        struct item items[N];
        struct failalloc fa;
        struct hmap m;
        size_t i;

        (void)state;
        failalloc_init(&fa);
        hmap_init(&m, &fa.mem);
        /* 16 and 32 buckets succeed; the growth to 64 fails. */
        failalloc_arm(&fa, 2, true);
        for (i = 0; i < 32; i++) {
                items[i].key = i;
                add(&m, &items[i], hash_u64(i));
        }
        assert_int_equal(m.n_buckets, 32);
        assert_false(fa.failed);
        assert_int_equal(hmap_reserve(&m, 33), BATON_ENOMEM);
        assert_true(fa.failed);
        assert_int_equal(hmap_reserve(&m, 33), BATON_ENOMEM);
        assert_int_equal(m.n_buckets, 32);
        assert_int_equal(m.count, 32);
        for (i = 0; i < 32; i++) {
                assert_ptr_equal(find(&m, hash_u64(i), i), &items[i]);
        }
        failalloc_disarm(&fa);
        for (i = 32; i < N; i++) {
                items[i].key = i;
                add(&m, &items[i], hash_u64(i));
        }
        assert_int_equal(m.n_buckets, 64);
        for (i = 0; i < N; i++) {
                assert_ptr_equal(find(&m, hash_u64(i), i), &items[i]);
        }
        hmap_close(&m);
        assert_int_equal(fa.live, 0);
}

/* A reservation too large to allocate fails cleanly instead of wrapping. */
static void reserve_too_large(void **state)
{
        struct item it = {.key = 1};
        struct failalloc fa;
        struct hmap m;

        (void)state;
        failalloc_init(&fa);
        hmap_init(&m, &fa.mem);
        add(&m, &it, 1);
        /* The bucket count reaches 2^(bits-1), whose byte size overflows. */
        assert_int_equal(hmap_reserve(&m, SIZE_MAX / 2 + 1), BATON_ENOMEM);
        assert_int_equal(m.n_buckets, 16);
        assert_int_equal(m.count, 1);
        assert_ptr_equal(find(&m, 1, 1), &it);
        hmap_close(&m);
        assert_int_equal(fa.live, 0);
}

/* hmap_close frees every bucket array, and the map can be used again. */
static void close_frees_everything(void **state)
{
        enum { N = 500 };
        struct item items[N];
        struct failalloc fa;
        struct hmap m;
        size_t i;

        (void)state;
        failalloc_init(&fa);
        hmap_init(&m, &fa.mem);
        for (i = 0; i < N; i++) {
                items[i].key = i;
                add(&m, &items[i], hash_u64(i));
        }
        assert_true(fa.calls > 1);
        assert_int_equal(fa.live, 1);
        hmap_close(&m);
        assert_int_equal(fa.live, 0);
        assert_null(m.buckets);
        assert_int_equal(m.n_buckets, 0);
        assert_int_equal(m.count, 0);
        assert_null(hmap_first(&m, hash_u64(0)));

        /* Closing twice is harmless. */
        hmap_close(&m);
        assert_int_equal(fa.live, 0);

        /* Reuse after close. */
        add(&m, &items[0], hash_u64(0));
        assert_ptr_equal(find(&m, hash_u64(0), 0), &items[0]);
        assert_int_equal(fa.live, 1);
        hmap_close(&m);
        assert_int_equal(fa.live, 0);
}

/* hash_u64 is a fixed function: pinned values and no collisions. */
static void hash_u64_deterministic(void **state)
{
        uint64_t prev = 0;
        uint64_t i;

        (void)state;
        /* Values of the splitmix64 finaliser, computed independently. */
        assert_true(hash_u64(0) == 0);
        assert_true(hash_u64(1) == 0x5692161d100b05e5ULL);
        assert_true(hash_u64(42) == 0xa759ea27d4727622ULL);
        assert_true(hash_u64(UINT64_MAX) == 0xb4d055fcf2cbbd7bULL);
        for (i = 1; i < 10000; i++) {
                uint64_t h = hash_u64(i);
                assert_true(h == hash_u64(i));
                assert_true(h != prev);
                assert_true(h != i);
                prev = h;
        }
}

/* hash_bytes depends on the bytes only, never on where they are. */
static void hash_bytes_deterministic(void **state)
{
        static const char name[] = "lock/1";
        uint8_t all[256];
        char copy[sizeof name];
        size_t i;

        (void)state;
        for (i = 0; i < sizeof all; i++) {
                all[i] = (uint8_t)i;
        }
        memcpy(copy, name, sizeof name);
        assert_true(hash_bytes(name, 6) == hash_bytes(copy, 6));
        /* Pinned FNV-1a + finaliser values, computed independently. */
        assert_true(hash_bytes(NULL, 0) == 0xf52a15e9a9b5e89bULL);
        assert_true(hash_bytes("x", 0) == 0xf52a15e9a9b5e89bULL);
        assert_true(hash_bytes("a", 1) == 0x02c0bdbf481420f8ULL);
        assert_true(hash_bytes(name, 6) == 0xaf5417e428c24340ULL);
        assert_true(hash_bytes(all, sizeof all) == 0xef2687f0d4371fe2ULL);
        /* Length and each byte matter. */
        assert_true(hash_bytes(name, 5) != hash_bytes(name, 6));
        assert_true(hash_bytes("a", 1) != hash_bytes("b", 1));
        assert_true(hash_bytes("ab", 2) != hash_bytes("ba", 2));
        assert_true(hash_bytes(all, 1) != hash_bytes(all, 2));
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(empty_map),
            cmocka_unit_test(insert_find_remove_many),
            cmocka_unit_test(colliding_hashes),
            cmocka_unit_test(same_bucket_different_hash),
            cmocka_unit_test(remove_from_chain),
            cmocka_unit_test(growth_keeps_nodes),
            cmocka_unit_test(reserve_sizes),
            cmocka_unit_test(reserve_failure_on_empty_map),
            cmocka_unit_test(reserve_failure_leaves_map_unchanged),
            cmocka_unit_test(reserve_failure_after_some_growth),
            cmocka_unit_test(reserve_too_large),
            cmocka_unit_test(close_frees_everything),
            cmocka_unit_test(hash_u64_deterministic),
            cmocka_unit_test(hash_bytes_deterministic),
        };
        return cmocka_run_group_tests_name("hmap", tests, NULL, NULL);
}
