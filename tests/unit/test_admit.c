/* The comparison of an ATTACH secret's hash with the session's
 * (admit_equal(), src/server/gateway/admit.c): equal only when every
 * byte is, wherever a difference lies. Linked with batond's rooms, as
 * admit.c needs the rest of the request core. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <string.h>

#include "../../src/proto/attach.h"
#include "../../src/server/gateway/admit.h"

/* A hash-sized pattern with every byte distinct. */
static void fill(uint8_t *p, size_t n, uint8_t seed)
{
        size_t i;

        for (i = 0; i < n; i++) {
                p[i] = (uint8_t)(seed + 37 * i);
        }
}

static void equal_bytes_are_equal(void **state)
{
        uint8_t a[ATTACH_HASH_SIZE], b[ATTACH_HASH_SIZE];

        (void)state;
        fill(a, sizeof a, 5);
        memcpy(b, a, sizeof b);
        assert_true(admit_equal(a, b, sizeof a));
        assert_true(admit_equal(b, a, sizeof a));
        assert_true(admit_equal(a, a, sizeof a));
        memset(a, 0, sizeof a);
        memset(b, 0, sizeof b);
        assert_true(admit_equal(a, b, sizeof a));
        /* Nothing to compare is equal. */
        assert_true(admit_equal(a, b, 0));
}

/* Any one bit flipped, at any byte, first and last included, either
 * side: not equal. */
static void one_bit_differs(void **state)
{
        uint8_t a[ATTACH_HASH_SIZE], b[ATTACH_HASH_SIZE];
        size_t i;
        int bit;

        (void)state;
        fill(a, sizeof a, 200);
        for (i = 0; i < sizeof a; i++) {
                for (bit = 0; bit < 8; bit++) {
                        memcpy(b, a, sizeof b);
                        b[i] ^= (uint8_t)(1u << bit);
                        assert_false(admit_equal(a, b, sizeof a));
                        assert_false(admit_equal(b, a, sizeof a));
                }
        }
}

/* Differences that cancel out under a sum or a plain xor of the bytes
 * still count, and so does a prefix that matches. */
static void differences_do_not_cancel(void **state)
{
        uint8_t a[ATTACH_HASH_SIZE], b[ATTACH_HASH_SIZE];

        (void)state;
        fill(a, sizeof a, 1);
        memcpy(b, a, sizeof b);
        b[3] ^= 0x10;
        b[20] ^= 0x10;
        assert_false(admit_equal(a, b, sizeof a));
        memcpy(b, a, sizeof b);
        b[0]++;
        b[1]--;
        assert_false(admit_equal(a, b, sizeof a));
        memset(b, 0xff, sizeof b);
        memset(a, 0, sizeof a);
        assert_false(admit_equal(a, b, sizeof a));
        /* Only the first n bytes count. */
        memcpy(b, a, sizeof b);
        b[ATTACH_HASH_SIZE - 1] = 1;
        assert_true(admit_equal(a, b, ATTACH_HASH_SIZE - 1));
        assert_false(admit_equal(a, b, ATTACH_HASH_SIZE));
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(equal_bytes_are_equal),
            cmocka_unit_test(one_bit_differs),
            cmocka_unit_test(differences_do_not_cancel),
        };
        return cmocka_run_group_tests_name("admit", tests, NULL, NULL);
}
