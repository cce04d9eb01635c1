/* Unit tests for the bounds-checked little-endian byte cursors. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "../../src/lib/cursor.h"

#define CANARY 0xA5

/* Every value written comes back unchanged and in order. */
static void round_trip_all_widths(void **state)
{
        static const uint8_t blob[5] = {'h', 'e', 'l', 'l', 'o'};
        uint8_t buf[64];
        struct wcursor w;
        struct rcursor r;
        const uint8_t *p;

        (void)state;
        wcursor_init(&w, buf, sizeof buf);
        wcursor_u8(&w, 0x00);
        wcursor_u8(&w, 0xff);
        wcursor_u16(&w, 0xbeef);
        wcursor_u16(&w, UINT16_MAX);
        wcursor_u32(&w, 0xdeadbeefU);
        wcursor_u32(&w, UINT32_MAX);
        wcursor_u64(&w, 0x0123456789abcdefULL);
        wcursor_u64(&w, UINT64_MAX);
        wcursor_bytes(&w, blob, sizeof blob);
        assert_false(w.bad);
        assert_int_equal(w.len, 1 + 1 + 2 + 2 + 4 + 4 + 8 + 8 + 5);

        rcursor_init(&r, buf, w.len);
        assert_int_equal(rcursor_u8(&r), 0x00);
        assert_int_equal(rcursor_u8(&r), 0xff);
        assert_int_equal(rcursor_u16(&r), 0xbeef);
        assert_int_equal(rcursor_u16(&r), UINT16_MAX);
        assert_int_equal(rcursor_u32(&r), 0xdeadbeefU);
        assert_int_equal(rcursor_u32(&r), UINT32_MAX);
        assert_true(rcursor_u64(&r) == 0x0123456789abcdefULL);
        assert_true(rcursor_u64(&r) == UINT64_MAX);
        p = rcursor_bytes(&r, sizeof blob);
        assert_non_null(p);
        assert_memory_equal(p, blob, sizeof blob);
        assert_false(r.bad);
        assert_int_equal(r.left, 0);
}

/* Values whose bytes are all distinct survive a round trip at every width. */
static void round_trip_many_values(void **state)
{
        uint64_t x = 0x9e3779b97f4a7c15ULL;
        int i;

        (void)state;
        for (i = 0; i < 1000; i++) {
                uint8_t buf[15];
                struct wcursor w;
                struct rcursor r;

                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                wcursor_init(&w, buf, sizeof buf);
                wcursor_u8(&w, (uint8_t)x);
                wcursor_u16(&w, (uint16_t)(x >> 8));
                wcursor_u32(&w, (uint32_t)(x >> 16));
                wcursor_u64(&w, x);
                assert_false(w.bad);
                assert_int_equal(w.len, sizeof buf);

                rcursor_init(&r, buf, sizeof buf);
                assert_int_equal(rcursor_u8(&r), (uint8_t)x);
                assert_int_equal(rcursor_u16(&r), (uint16_t)(x >> 8));
                assert_int_equal(rcursor_u32(&r), (uint32_t)(x >> 16));
                assert_true(rcursor_u64(&r) == x);
                assert_false(r.bad);
                assert_int_equal(r.left, 0);
        }
}

/* The bytes on the wire are little-endian regardless of the host. */
static void write_layout_is_little_endian(void **state)
{
        static const uint8_t expected[] = {
            0x7f,                                           /* u8 */
            0x34, 0x12,                                     /* u16 */
            0x78, 0x56, 0x34, 0x12,                         /* u32 */
            0xef, 0xcd, 0xab, 0x89, 0x67, 0x45, 0x23, 0x01, /* u64 */
        };
        uint8_t buf[sizeof expected];
        struct wcursor w;

        (void)state;
        memset(buf, 0, sizeof buf);
        wcursor_init(&w, buf, sizeof buf);
        wcursor_u8(&w, 0x7f);
        wcursor_u16(&w, 0x1234);
        wcursor_u32(&w, 0x12345678U);
        wcursor_u64(&w, 0x0123456789abcdefULL);
        assert_false(w.bad);
        assert_int_equal(w.len, sizeof expected);
        assert_memory_equal(buf, expected, sizeof expected);
}

/* Hand-written little-endian bytes decode to the expected integers. */
static void read_layout_is_little_endian(void **state)
{
        static const uint8_t bytes[] = {
            0x80,                                           /* u8 */
            0x01, 0x80,                                     /* u16 */
            0x04, 0x03, 0x02, 0x81,                         /* u32 */
            0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x82, /* u64 */
        };
        struct rcursor r;

        (void)state;
        rcursor_init(&r, bytes, sizeof bytes);
        assert_int_equal(rcursor_u8(&r), 0x80);
        assert_int_equal(rcursor_u16(&r), 0x8001);
        assert_int_equal(rcursor_u32(&r), 0x81020304U);
        assert_true(rcursor_u64(&r) == 0x8202030405060708ULL);
        assert_false(r.bad);
        assert_int_equal(r.left, 0);
}

/* A read that needs more bytes than remain fails and poisons the cursor. */
static void read_past_end_marks_bad(void **state)
{
        static const uint8_t bytes[] = {0x11, 0x22, 0x33};
        struct rcursor r;

        (void)state;
        rcursor_init(&r, bytes, sizeof bytes);
        assert_int_equal(rcursor_u16(&r), 0x2211);
        assert_false(r.bad);
        /* One byte is left: a u16 needs two. */
        assert_int_equal(rcursor_u16(&r), 0);
        assert_true(r.bad);
        /* The byte that was left is not consumed by the failed read. */
        assert_int_equal(r.left, 1);
}

/* Once bad, every getter returns 0 or NULL, even reads that would fit. */
static void read_after_bad_always_fails(void **state)
{
        static const uint8_t bytes[16] = {1, 2,  3,  4,  5,  6,  7,  8,
                                          9, 10, 11, 12, 13, 14, 15, 16};
        struct rcursor r;

        (void)state;
        rcursor_init(&r, bytes, sizeof bytes);
        assert_null(rcursor_bytes(&r, sizeof bytes + 1));
        assert_true(r.bad);
        assert_int_equal(rcursor_u8(&r), 0);
        assert_int_equal(rcursor_u16(&r), 0);
        assert_int_equal(rcursor_u32(&r), 0);
        assert_true(rcursor_u64(&r) == 0);
        assert_null(rcursor_bytes(&r, 1));
        assert_null(rcursor_bytes(&r, 0));
        assert_true(r.bad);
}

/* Each width fails on a buffer one byte too short for it. */
static void read_each_width_one_short(void **state)
{
        static const uint8_t bytes[8] = {0xff, 0xff, 0xff, 0xff,
                                         0xff, 0xff, 0xff, 0xff};
        struct rcursor r;

        (void)state;
        rcursor_init(&r, bytes, 0);
        assert_int_equal(rcursor_u8(&r), 0);
        assert_true(r.bad);

        rcursor_init(&r, bytes, 1);
        assert_int_equal(rcursor_u16(&r), 0);
        assert_true(r.bad);

        rcursor_init(&r, bytes, 3);
        assert_int_equal(rcursor_u32(&r), 0);
        assert_true(r.bad);

        rcursor_init(&r, bytes, 7);
        assert_true(rcursor_u64(&r) == 0);
        assert_true(r.bad);

        rcursor_init(&r, bytes, 4);
        assert_null(rcursor_bytes(&r, 5));
        assert_true(r.bad);
}

/* A read of exactly the remaining bytes succeeds and leaves nothing. */
static void read_exactly_to_end(void **state)
{
        static const uint8_t bytes[8] = {1, 0, 0, 0, 0, 0, 0, 0};
        struct rcursor r;

        (void)state;
        rcursor_init(&r, bytes, sizeof bytes);
        assert_true(rcursor_u64(&r) == 1);
        assert_false(r.bad);
        assert_int_equal(r.left, 0);
        /* The next read of any size but zero fails. */
        assert_int_equal(rcursor_u8(&r), 0);
        assert_true(r.bad);
}

/* Borrowed bytes point into the original buffer, not a copy. */
static void read_bytes_borrows(void **state)
{
        static const uint8_t bytes[] = {9, 8, 7, 6, 5};
        struct rcursor r;

        (void)state;
        rcursor_init(&r, bytes, sizeof bytes);
        assert_ptr_equal(rcursor_bytes(&r, 2), &bytes[0]);
        assert_ptr_equal(rcursor_bytes(&r, 3), &bytes[2]);
        assert_int_equal(r.left, 0);
        assert_false(r.bad);
}

/* Zero-length reads succeed anywhere, consume nothing and keep it good. */
static void read_zero_length(void **state)
{
        static const uint8_t bytes[] = {0x42};
        struct rcursor r;

        (void)state;
        rcursor_init(&r, bytes, sizeof bytes);
        assert_ptr_equal(rcursor_bytes(&r, 0), &bytes[0]);
        assert_false(r.bad);
        assert_int_equal(r.left, 1);
        assert_int_equal(rcursor_u8(&r), 0x42);
        /* At the very end a zero-length read still succeeds. */
        assert_non_null(rcursor_bytes(&r, 0));
        assert_false(r.bad);
        assert_int_equal(r.left, 0);

        /* And on an empty buffer. */
        rcursor_init(&r, bytes, 0);
        assert_non_null(rcursor_bytes(&r, 0));
        assert_false(r.bad);
        assert_int_equal(r.left, 0);
}

/* Writing past capacity marks bad and never touches the byte after it. */
static void write_past_capacity_keeps_canary(void **state)
{
        uint8_t buf[6 + 1];
        const size_t cap = sizeof buf - 1;
        struct wcursor w;

        (void)state;
        memset(buf, 0, sizeof buf);
        buf[cap] = CANARY;
        wcursor_init(&w, buf, cap);
        wcursor_u32(&w, 0x04030201U);
        assert_false(w.bad);
        assert_int_equal(w.len, 4);
        /* Two bytes left: a u32 does not fit and must write nothing. */
        wcursor_u32(&w, 0xffffffffU);
        assert_true(w.bad);
        assert_int_equal(w.len, 4);
        assert_int_equal(buf[4], 0);
        assert_int_equal(buf[5], 0);
        assert_int_equal(buf[cap], CANARY);
}

/* Each width fails when exactly one byte short, without overflowing. */
static void write_each_width_one_short(void **state)
{
        static const size_t widths[] = {1, 2, 4, 8};
        uint8_t buf[8 + 1];
        size_t i;

        (void)state;
        for (i = 0; i < sizeof widths / sizeof widths[0]; i++) {
                const size_t cap = widths[i] - 1;
                struct wcursor w;

                memset(buf, 0, sizeof buf);
                buf[cap] = CANARY;
                wcursor_init(&w, buf, cap);
                switch (widths[i]) {
                case 1:
                        wcursor_u8(&w, 0xff);
                        break;
                case 2:
                        wcursor_u16(&w, 0xffff);
                        break;
                case 4:
                        wcursor_u32(&w, 0xffffffffU);
                        break;
                default:
                        wcursor_u64(&w, UINT64_MAX);
                        break;
                }
                assert_true(w.bad);
                assert_int_equal(w.len, 0);
                assert_int_equal(buf[cap], CANARY);
        }
}

/* Once bad, a write cursor refuses even writes that would fit. */
static void write_after_bad_always_fails(void **state)
{
        static const uint8_t big[9] = {0};
        uint8_t buf[8 + 1];
        struct wcursor w;

        (void)state;
        memset(buf, 0, sizeof buf);
        buf[8] = CANARY;
        wcursor_init(&w, buf, 8);
        wcursor_bytes(&w, big, sizeof big);
        assert_true(w.bad);
        assert_int_equal(w.len, 0);
        wcursor_u8(&w, 0x11);
        wcursor_u16(&w, 0x2222);
        wcursor_u32(&w, 0x33333333U);
        wcursor_u64(&w, 0x4444444444444444ULL);
        wcursor_bytes(&w, big, 1);
        wcursor_bytes(&w, big, 0);
        assert_true(w.bad);
        assert_int_equal(w.len, 0);
        assert_int_equal(buf[0], 0);
        assert_int_equal(buf[8], CANARY);
}

/* Filling the buffer exactly is fine; only the next byte fails. */
static void write_exactly_to_capacity(void **state)
{
        static const uint8_t expected[] = {0xaa, 0xbb, 0xcc};
        uint8_t buf[3 + 1];
        struct wcursor w;

        (void)state;
        memset(buf, 0, sizeof buf);
        buf[3] = CANARY;
        wcursor_init(&w, buf, 3);
        wcursor_u16(&w, 0xbbaa);
        wcursor_u8(&w, 0xcc);
        assert_false(w.bad);
        assert_int_equal(w.len, 3);
        assert_memory_equal(buf, expected, sizeof expected);
        wcursor_u8(&w, 0xdd);
        assert_true(w.bad);
        assert_int_equal(w.len, 3);
        assert_int_equal(buf[3], CANARY);
}

/* A huge byte count cannot wrap the capacity check. */
static void write_huge_length_is_rejected(void **state)
{
        uint8_t buf[4 + 1];
        struct wcursor w;

        (void)state;
        memset(buf, 0, sizeof buf);
        buf[4] = CANARY;
        wcursor_init(&w, buf, 4);
        wcursor_u8(&w, 1);
        wcursor_bytes(&w, buf, SIZE_MAX);
        assert_true(w.bad);
        assert_int_equal(w.len, 1);
        assert_int_equal(buf[4], CANARY);
}

/* A huge read count cannot wrap the remaining-length check. */
static void read_huge_length_is_rejected(void **state)
{
        static const uint8_t bytes[4] = {1, 2, 3, 4};
        struct rcursor r;

        (void)state;
        rcursor_init(&r, bytes, sizeof bytes);
        assert_int_equal(rcursor_u8(&r), 1);
        assert_null(rcursor_bytes(&r, SIZE_MAX));
        assert_true(r.bad);
}

/* Zero-length writes succeed (even from NULL) and write nothing. */
static void write_zero_length(void **state)
{
        uint8_t buf[2 + 1];
        struct wcursor w;

        (void)state;
        memset(buf, 0, sizeof buf);
        buf[2] = CANARY;
        wcursor_init(&w, buf, 2);
        wcursor_bytes(&w, NULL, 0);
        assert_false(w.bad);
        assert_int_equal(w.len, 0);
        wcursor_u16(&w, 0x0102);
        /* Full: a zero-length write still fits. */
        wcursor_bytes(&w, NULL, 0);
        assert_false(w.bad);
        assert_int_equal(w.len, 2);
        assert_int_equal(buf[2], CANARY);

        /* And into a zero-capacity buffer. */
        wcursor_init(&w, buf, 0);
        wcursor_bytes(&w, "x", 0);
        assert_false(w.bad);
        assert_int_equal(w.len, 0);
        wcursor_u8(&w, 1);
        assert_true(w.bad);
        assert_int_equal(buf[0], 0x02);
}

/* A write cursor that stayed good holds exactly what a reader expects. */
static void write_then_read_bytes(void **state)
{
        uint8_t src[200];
        uint8_t buf[sizeof src];
        struct wcursor w;
        struct rcursor r;
        const uint8_t *p;
        size_t i;

        (void)state;
        for (i = 0; i < sizeof src; i++) {
                src[i] = (uint8_t)(i * 7 + 3);
        }
        wcursor_init(&w, buf, sizeof buf);
        wcursor_bytes(&w, src, 50);
        wcursor_bytes(&w, src + 50, 150);
        assert_false(w.bad);
        assert_int_equal(w.len, sizeof src);

        rcursor_init(&r, buf, w.len);
        p = rcursor_bytes(&r, 120);
        assert_non_null(p);
        assert_memory_equal(p, src, 120);
        p = rcursor_bytes(&r, 80);
        assert_non_null(p);
        assert_memory_equal(p, src + 120, 80);
        assert_int_equal(r.left, 0);
        assert_false(r.bad);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(round_trip_all_widths),
            cmocka_unit_test(round_trip_many_values),
            cmocka_unit_test(write_layout_is_little_endian),
            cmocka_unit_test(read_layout_is_little_endian),
            cmocka_unit_test(read_past_end_marks_bad),
            cmocka_unit_test(read_after_bad_always_fails),
            cmocka_unit_test(read_each_width_one_short),
            cmocka_unit_test(read_exactly_to_end),
            cmocka_unit_test(read_bytes_borrows),
            cmocka_unit_test(read_zero_length),
            cmocka_unit_test(read_huge_length_is_rejected),
            cmocka_unit_test(write_past_capacity_keeps_canary),
            cmocka_unit_test(write_each_width_one_short),
            cmocka_unit_test(write_after_bad_always_fails),
            cmocka_unit_test(write_exactly_to_capacity),
            cmocka_unit_test(write_huge_length_is_rejected),
            cmocka_unit_test(write_zero_length),
            cmocka_unit_test(write_then_read_bytes),
        };
        return cmocka_run_group_tests_name("cursor", tests, NULL, NULL);
}
