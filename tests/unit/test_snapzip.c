/* Tests of snapshot compression: round trips, and refusal of damage. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "../../include/baton.h"
#include "../../src/server/snap/snapzip.h"
#include "../lib/failalloc.h"

/* Parts that look like a snapshot: repetitive, with some noise. */
static uint8_t *sample(size_t len, unsigned seed)
{
        uint8_t *p = malloc(len > 0 ? len : 1);
        size_t i;

        for (i = 0; i < len; i++) {
                p[i] = (uint8_t)(i % 7 == 0 ? (seed * 31 + i) >> 3 : i % 13);
        }
        return p;
}

static void round_trip(size_t a_len, size_t b_len)
{
        uint8_t *a = sample(a_len, 1), *b = sample(b_len, 2);
        struct iovec parts[2] = {{a, a_len}, {b, b_len}};
        void *packed, *raw;
        size_t packed_len, raw_len;

        assert_int_equal(
            snapzip_pack(&mem_libc, parts, 2, &packed, &packed_len), 0);
        assert_true(snapzip_is_packed(packed, packed_len));
        assert_int_equal(
            snapzip_unpack(&mem_libc, packed, packed_len, &raw, &raw_len), 0);
        assert_int_equal(raw_len, a_len + b_len);
        if (a_len > 0) {
                assert_memory_equal(raw, a, a_len);
        }
        if (b_len > 0) {
                assert_memory_equal((uint8_t *)raw + a_len, b, b_len);
        }
        if (a_len + b_len > 4096) {
                assert_true(packed_len < (a_len + b_len) / 2);
        }
        free(raw);
        free(packed);
        free(a);
        free(b);
}

static void test_round_trips(void **state)
{
        (void)state;
        round_trip(0, 0);
        round_trip(4, 0);
        round_trip(12, 300);
        round_trip(70000, 1 << 20);
}

/* Every truncation and every single-byte change of a packed snapshot is
 * refused (the frame carries a content checksum), never misread. */
static void test_damage_refused(void **state)
{
        uint8_t *a = sample(3000, 3);
        struct iovec part = {a, 3000};
        uint8_t *packed;
        void *raw;
        size_t len, raw_len, i;

        (void)state;
        assert_int_equal(
            snapzip_pack(&mem_libc, &part, 1, (void **)&packed, &len), 0);
        for (i = 0; i < len; i++) {
                assert_int_equal(
                    snapzip_unpack(&mem_libc, packed, i, &raw, &raw_len),
                    BATON_ECORRUPT);
        }
        for (i = 4; i < len; i++) {
                packed[i] ^= 0x5a;
                if (snapzip_unpack(&mem_libc, packed, len, &raw, &raw_len) ==
                    0) {
                        /* Only a change the frame cannot see may pass, and
                         * then it must decode to the original bytes. */
                        assert_int_equal(raw_len, 3000);
                        assert_memory_equal(raw, a, 3000);
                        free(raw);
                }
                packed[i] ^= 0x5a;
        }
        /* A claimed length far beyond what lz4 can expand to is refused
         * before anything is allocated. */
        packed[15] = 0x7f;
        assert_int_equal(snapzip_unpack(&mem_libc, packed, len, &raw, &raw_len),
                         BATON_ECORRUPT);
        assert_false(snapzip_is_packed("\x04\x22\x4d\x18", 4));
        free(packed);
        free(a);
}

static void test_allocation_failures(void **state)
{
        uint8_t *a = sample(5000, 4);
        struct iovec part = {a, 5000};
        struct failalloc fa;
        void *packed = NULL, *raw;
        size_t len, raw_len;

        (void)state;
        failalloc_init(&fa);
        failalloc_arm(&fa, 0, true);
        assert_int_equal(snapzip_pack(&fa.mem, &part, 1, &packed, &len),
                         BATON_ENOMEM);
        failalloc_disarm(&fa);
        assert_int_equal(snapzip_pack(&fa.mem, &part, 1, &packed, &len), 0);
        failalloc_arm(&fa, 0, true);
        assert_int_equal(snapzip_unpack(&fa.mem, packed, len, &raw, &raw_len),
                         BATON_ENOMEM);
        failalloc_disarm(&fa);
        mem_free(&fa.mem, packed);
        assert_int_equal(fa.live, 0);
        free(a);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_round_trips),
            cmocka_unit_test(test_damage_refused),
            cmocka_unit_test(test_allocation_failures),
        };
        return cmocka_run_group_tests_name("snapzip", tests, NULL, NULL);
}
