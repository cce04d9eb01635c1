/* Unit tests for the JSON string writers: UTF-8 text, exact bytes, hex. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "../../src/lib/json.h"

#define CANARY 0xA5

/* json_text() of `n` bytes into a fresh buffer, NUL-terminated; checks
 * that a counting cursor gives the same length. */
static bool text(const char *s, size_t n, char *out, size_t cap)
{
        struct wcursor w, count;
        bool exact, counted;

        wcursor_init(&count, NULL, 0);
        counted = json_text(&count, s, n);
        wcursor_init(&w, out, cap - 1);
        exact = json_text(&w, s, n);
        assert_false(w.bad);
        assert_int_equal(w.len, count.len);
        assert_true(exact == counted);
        out[w.len] = '\0';
        return exact;
}

static void expect_text(const char *s, size_t n, const char *want,
                        bool want_exact)
{
        char out[512];
        bool exact = text(s, n, out, sizeof out);

        if (strcmp(out, want) != 0) {
                fail_msg("json_text: got %s, want %s", out, want);
        }
        assert_true(exact == want_exact);
}

#define EXPECT_TEXT(lit, want, exact)                                          \
        expect_text(lit, sizeof lit - 1, want, exact)

/* An independent UTF-8 check (RFC 3629 decoded by value, not by byte
 * ranges) for the exhaustive comparisons below. */
static bool ref_valid(const uint8_t *p, size_t n)
{
        size_t i = 0;

        while (i < n) {
                uint32_t cp, min;
                size_t len, k;

                if (p[i] < 0x80) {
                        i++;
                        continue;
                } else if ((p[i] & 0xe0) == 0xc0) {
                        len = 2, cp = p[i] & 0x1f, min = 0x80;
                } else if ((p[i] & 0xf0) == 0xe0) {
                        len = 3, cp = p[i] & 0x0f, min = 0x800;
                } else if ((p[i] & 0xf8) == 0xf0) {
                        len = 4, cp = p[i] & 0x07, min = 0x10000;
                } else {
                        return false;
                }
                if (i + len > n) {
                        return false;
                }
                for (k = 1; k < len; k++) {
                        if ((p[i + k] & 0xc0) != 0x80) {
                                return false;
                        }
                        cp = cp << 6 | (p[i + k] & 0x3f);
                }
                if (cp < min || cp > 0x10ffff ||
                    (cp >= 0xd800 && cp <= 0xdfff)) {
                        return false;
                }
                i += len;
        }
        return true;
}

/* Printable ASCII is copied; quote and backslash are escaped. */
static void text_ascii(void **state)
{
        (void)state;
        EXPECT_TEXT("", "\"\"", true);
        EXPECT_TEXT("a/b-c.d_e f~", "\"a/b-c.d_e f~\"", true);
        EXPECT_TEXT("say \"hi\"", "\"say \\\"hi\\\"\"", true);
        EXPECT_TEXT("C:\\dir", "\"C:\\\\dir\"", true);
}

/* Every control character is escaped: short forms where JSON has them,
 * \u00XX otherwise, including DEL, the C1 controls and NUL. */
static void text_controls(void **state)
{
        (void)state;
        EXPECT_TEXT("\b\t\n\f\r", "\"\\b\\t\\n\\f\\r\"", true);
        EXPECT_TEXT("a\x01z", "\"a\\u0001z\"", true);
        EXPECT_TEXT("\x1b[31m", "\"\\u001b[31m\"", true);
        EXPECT_TEXT("\x1f\x7f", "\"\\u001f\\u007f\"", true);
        EXPECT_TEXT("a\0b", "\"a\\u0000b\"", true);
        EXPECT_TEXT("\xc2\x80\xc2\x85\xc2\x9f", "\"\\u0080\\u0085\\u009f\"",
                    true);
        /* U+00A0, the first code point after the C1 block, is text. */
        EXPECT_TEXT("\xc2\xa0", "\"\xc2\xa0\"", true);
}

/* Valid multibyte sequences pass through unchanged. */
static void text_utf8_passes(void **state)
{
        (void)state;
        EXPECT_TEXT("caf\xc3\xa9", "\"caf\xc3\xa9\"", true);
        EXPECT_TEXT("\xe2\x82\xac 5", "\"\xe2\x82\xac 5\"", true);
        EXPECT_TEXT("\xe6\x97\xa5\xe6\x9c\xac", "\"\xe6\x97\xa5\xe6\x9c\xac\"",
                    true);
        EXPECT_TEXT("\xf0\x9f\x94\x92", "\"\xf0\x9f\x94\x92\"", true);
        /* The edges: U+0800, U+FFFF, U+10000, U+10FFFF, U+D7FF, U+E000. */
        EXPECT_TEXT("\xe0\xa0\x80\xef\xbf\xbf", "\"\xe0\xa0\x80\xef\xbf\xbf\"",
                    true);
        EXPECT_TEXT("\xf0\x90\x80\x80\xf4\x8f\xbf\xbf",
                    "\"\xf0\x90\x80\x80\xf4\x8f\xbf\xbf\"", true);
        EXPECT_TEXT("\xed\x9f\xbf\xee\x80\x80", "\"\xed\x9f\xbf\xee\x80\x80\"",
                    true);
}

/* Each byte outside a valid sequence becomes U+FFFD, and the string is
 * reported as not exact. */
static void text_invalid_replaced(void **state)
{
        (void)state;
        /* Latin-1 é. */
        EXPECT_TEXT("caf\xe9", "\"caf\xef\xbf\xbd\"", false);
        /* A lone continuation byte, a lead at the end. */
        EXPECT_TEXT("a\x80z", "\"a\xef\xbf\xbdz\"", false);
        EXPECT_TEXT("a\xc3", "\"a\xef\xbf\xbd\"", false);
        /* Truncated three-byte sequence: both bytes replaced. */
        EXPECT_TEXT("\xe2\x82z", "\"\xef\xbf\xbd\xef\xbf\xbdz\"", false);
        /* Overlong forms of '/' and NUL. */
        EXPECT_TEXT("\xc0\xaf", "\"\xef\xbf\xbd\xef\xbf\xbd\"", false);
        EXPECT_TEXT("\xe0\x80\x80", "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"",
                    false);
        /* A surrogate (U+D800) and U+110000. */
        EXPECT_TEXT("\xed\xa0\x80", "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"",
                    false);
        EXPECT_TEXT("\xf4\x90\x80\x80",
                    "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"",
                    false);
        /* Bytes that never occur in UTF-8. */
        EXPECT_TEXT("\xfe\xff", "\"\xef\xbf\xbd\xef\xbf\xbd\"", false);
        /* A valid sequence right after an invalid byte survives. */
        EXPECT_TEXT("\xff\xc3\xa9", "\"\xef\xbf\xbd\xc3\xa9\"", false);
}

/* Whether the quoted output of json_text() is valid UTF-8 with no raw
 * control character, and the original bytes when `exact`. */
static void check_output(const uint8_t *in, size_t n)
{
        char out[64];
        bool exact = text((const char *)in, n, out, sizeof out);
        size_t len = strlen(out), i;

        assert_true(ref_valid((const uint8_t *)out, len));
        for (i = 0; i < len; i++) {
                uint8_t c = (uint8_t)out[i];
                assert_true(c >= 0x20 && c != 0x7f);
                /* No raw C1 control (U+0080..U+009F) either. */
                assert_false(c == 0xc2 && i + 1 < len &&
                             (uint8_t)out[i + 1] < 0xa0);
        }
        if (exact != ref_valid(in, n)) {
                fail_msg("json_text: %02x %02x %02x %02x (%zu bytes): exact %d",
                         in[0], n > 1 ? in[1] : 0, n > 2 ? in[2] : 0,
                         n > 3 ? in[3] : 0, n, exact);
        }
}

/* Every string of up to three bytes, and every four-byte string with a
 * four-byte lead: json_text() is exact exactly when the reference decoder
 * accepts, and its output is always valid UTF-8. */
static void text_exhaustive(void **state)
{
        uint8_t b[4];
        unsigned x;

        (void)state;
        for (x = 0; x < 0x100; x++) {
                b[0] = (uint8_t)x;
                check_output(b, 1);
        }
        for (x = 0; x < 0x10000; x++) {
                b[0] = (uint8_t)(x >> 8), b[1] = (uint8_t)x;
                check_output(b, 2);
        }
        for (x = 0x800000; x < 0x1000000; x++) {
                b[0] = (uint8_t)(x >> 16), b[1] = (uint8_t)(x >> 8),
                b[2] = (uint8_t)x;
                check_output(b, 3);
        }
        for (x = 0; x < 0x1000000; x += 7) {
                b[0] = (uint8_t)(0xf0 | (x >> 21)), b[1] = (uint8_t)(x >> 14),
                b[2] = (uint8_t)(x >> 7), b[3] = (uint8_t)(x | 0x80);
                if ((b[1] & 0xc0) == 0x80 && (b[2] & 0xc0) == 0x80) {
                        check_output(b, 4);
                }
        }
}

/* The exact-bytes form: the apply log's format, byte for byte. */
static void bytes_form(void **state)
{
        char buf[256];
        struct wcursor w;

        (void)state;
        wcursor_init(&w, buf, sizeof buf);
        json_bytes(&w, "a\"b\\c\n\x7f\x80\xc3\xa9\xff~ \0", 14);
        assert_false(w.bad);
        buf[w.len] = '\0';
        assert_string_equal(buf, "\"a\\\"b\\\\c\\u000a\\u007f\\u0080"
                                 "\\u00c3\\u00a9\\u00ff~ \\u0000\"");
        wcursor_init(&w, buf, sizeof buf);
        json_bytes(&w, "", 0);
        assert_int_equal(w.len, 2);
        assert_memory_equal(buf, "\"\"", 2);
}

static void hex_form(void **state)
{
        char buf[64];
        struct wcursor w;

        (void)state;
        wcursor_init(&w, buf, sizeof buf);
        json_hex(&w, "caf\xe9\x00\x0f", 6);
        assert_false(w.bad);
        buf[w.len] = '\0';
        assert_string_equal(buf, "\"636166e9000f\"");
        wcursor_init(&w, buf, sizeof buf);
        json_hex(&w, "", 0);
        assert_int_equal(w.len, 2);
}

/* A buffer one byte short marks the cursor bad and writes nothing past its
 * end, for each writer. */
static void short_buffer(void **state)
{
        const char *in = "caf\xc3\xa9\n\xe9";
        size_t n = strlen(in), k, need[3];
        uint8_t buf[64];
        struct wcursor w;
        int f;

        (void)state;
        for (f = 0; f < 3; f++) {
                wcursor_init(&w, NULL, 0);
                if (f == 0) {
                        json_text(&w, in, n);
                } else if (f == 1) {
                        json_bytes(&w, in, n);
                } else {
                        json_hex(&w, in, n);
                }
                need[f] = w.len;
                for (k = 0; k < need[f]; k++) {
                        memset(buf, CANARY, sizeof buf);
                        wcursor_init(&w, buf, k);
                        if (f == 0) {
                                json_text(&w, in, n);
                        } else if (f == 1) {
                                json_bytes(&w, in, n);
                        } else {
                                json_hex(&w, in, n);
                        }
                        assert_true(w.bad);
                        assert_true(w.len <= k);
                        assert_int_equal(buf[k], CANARY);
                }
        }
        assert_int_equal(need[0], 1 + 3 + 2 + 2 + 3 + 1);
        assert_int_equal(need[1], 1 + 3 + 6 * 4 + 1);
        assert_int_equal(need[2], 2 + 2 * n);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(text_ascii),
            cmocka_unit_test(text_controls),
            cmocka_unit_test(text_utf8_passes),
            cmocka_unit_test(text_invalid_replaced),
            cmocka_unit_test(text_exhaustive),
            cmocka_unit_test(bytes_form),
            cmocka_unit_test(hex_form),
            cmocka_unit_test(short_buffer),
        };
        return cmocka_run_group_tests_name("json", tests, NULL, NULL);
}
