/* Unit tests for the entry's chains of locks (src/fsm/lockchain.h). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "../../src/fsm/lockchain.h"
#include "../../src/fsm/state.h"

/* Locks in one array, as a pool's region holds them: 8-byte aligned and
 * close together. Only `created` and the link matter here. */
#define N_LOCKS   1000
#define LOCK_ROOM 64

static char *region;

static struct lock *lock_at(size_t i)
{
        return (struct lock *)(void *)(region + i * LOCK_ROOM);
}

static int setup(void **state)
{
        (void)state;
        region = aligned_alloc(8, N_LOCKS * LOCK_ROOM);
        memset(region, 0, N_LOCKS * LOCK_ROOM);
        return region == NULL;
}

static int teardown(void **state)
{
        (void)state;
        free(region);
        return 0;
}

/* The chain's locks as indexes into the region, and its count. */
static size_t walk(const struct lockchain *c, size_t *out, size_t max)
{
        const struct lock *l;
        size_t n = 0;

        for (l = c->head; l != NULL; l = lockchain_next(l)) {
                assert_true(n < max);
                out[n++] = (size_t)((const char *)l - region) / LOCK_ROOM;
        }
        assert_int_equal(n, c->n);
        assert_ptr_equal(c->tail, n == 0 ? NULL : lock_at(out[n - 1]));
        return n;
}

static void push_pop_in_order(void **state)
{
        struct lockchain c;
        size_t got[8], i;

        (void)state;
        lockchain_init(&c);
        assert_null(lockchain_pop(&c));
        for (i = 0; i < 5; i++) {
                lockchain_push(&c, lock_at(4 - i)); /* 4, 3, 2, 1, 0 */
        }
        assert_int_equal(walk(&c, got, 8), 5);
        for (i = 0; i < 5; i++) {
                assert_int_equal(got[i], 4 - i);
        }
        for (i = 0; i < 5; i++) {
                assert_ptr_equal(lockchain_pop(&c), lock_at(4 - i));
        }
        assert_null(lockchain_pop(&c));
        assert_null(c.tail);
        assert_int_equal(c.n, 0);
        /* Usable again once emptied. */
        lockchain_push(&c, lock_at(9));
        assert_int_equal(walk(&c, got, 8), 1);
        assert_int_equal(got[0], 9);
}

/* Removing the head, a lock in the middle and the tail keeps the rest in
 * order, the tail right, and a removed lock can be pushed again. */
static void remove_anywhere(void **state)
{
        static const size_t order[] = {7, 3, 9, 1, 5};
        struct lockchain c;
        size_t got[8], i;

        (void)state;
        lockchain_init(&c);
        for (i = 0; i < 5; i++) {
                lockchain_push(&c, lock_at(order[i]));
        }
        lockchain_remove(&c, lock_at(9)); /* middle */
        lockchain_remove(&c, lock_at(7)); /* head */
        lockchain_remove(&c, lock_at(5)); /* tail */
        assert_int_equal(walk(&c, got, 8), 2);
        assert_int_equal(got[0], 3);
        assert_int_equal(got[1], 1);
        lockchain_push(&c, lock_at(9));
        assert_int_equal(walk(&c, got, 8), 3);
        assert_int_equal(got[2], 9);
        lockchain_remove(&c, lock_at(3));
        lockchain_remove(&c, lock_at(1));
        lockchain_remove(&c, lock_at(9));
        assert_int_equal(walk(&c, got, 8), 0);
        assert_null(c.head);
}

static uint64_t next_random(uint64_t *seed)
{
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        return *seed;
}

/* Sorting puts chains of every length in `created` order and keeps locks
 * with equal stamps in the order they were pushed. */
static void sort_is_ordered_and_stable(void **state)
{
        static size_t got[N_LOCKS];
        uint64_t seed = 88172645463325252ULL;
        struct lockchain c;
        size_t n, i, len;

        (void)state;
        for (len = 0; len <= N_LOCKS; len += len < 20 ? 1 : 97) {
                lockchain_init(&c);
                for (i = 0; i < len; i++) {
                        /* Few distinct stamps, so that many are equal. */
                        lock_at(i)->created = next_random(&seed) % 16;
                        lockchain_push(&c, lock_at(i));
                }
                lockchain_sort(&c);
                n = walk(&c, got, N_LOCKS);
                assert_int_equal(n, len);
                for (i = 1; i < n; i++) {
                        uint64_t a = lock_at(got[i - 1])->created;
                        uint64_t b = lock_at(got[i])->created;
                        assert_true(a < b || (a == b && got[i - 1] < got[i]));
                }
        }
}

/* A chain in order already is left as it is. */
static void sort_of_a_sorted_chain(void **state)
{
        struct lockchain c;
        size_t got[16], i;

        (void)state;
        lockchain_init(&c);
        for (i = 0; i < 16; i++) {
                lock_at(15 - i)->created = 100 + i;
                lockchain_push(&c, lock_at(15 - i));
        }
        lockchain_sort(&c);
        assert_int_equal(walk(&c, got, 16), 16);
        for (i = 0; i < 16; i++) {
                assert_int_equal(got[i], 15 - i);
        }
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(push_pop_in_order),
            cmocka_unit_test(remove_anywhere),
            cmocka_unit_test(sort_is_ordered_and_stable),
            cmocka_unit_test(sort_of_a_sorted_chain),
        };
        return cmocka_run_group_tests_name("lockchain", tests, setup, teardown);
}
