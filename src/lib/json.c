/* JSON strings for Baton's machine-readable output, written to a caller's
 * buffer through a write cursor (no I/O): batonctl --json and the apply log.
 */
#include "json.h"

#include <stdint.h>

static const char hex_digits[] = "0123456789abcdef";

/* U+FFFD REPLACEMENT CHARACTER in UTF-8. */
static const char replacement[3] = {'\xef', '\xbf', '\xbd'};

static void put_byte(struct wcursor *w, char c)
{
        wcursor_bytes(w, &c, 1);
}

/* \u00XX for the byte or code point `c` (below 0x100). */
static void put_u00(struct wcursor *w, unsigned c)
{
        char e[6] = {
            '\\', 'u', '0', '0', hex_digits[(c >> 4) & 15], hex_digits[c & 15]};

        wcursor_bytes(w, e, sizeof e);
}

/* One ASCII character of text: quote and backslash escaped, control
 * characters in their short form where JSON has one. */
static void put_ascii(struct wcursor *w, unsigned char c)
{
        char e[2] = {'\\', 0};

        switch (c) {
        case '"':
        case '\\':
                e[1] = (char)c;
                break;
        case '\b':
                e[1] = 'b';
                break;
        case '\t':
                e[1] = 't';
                break;
        case '\n':
                e[1] = 'n';
                break;
        case '\f':
                e[1] = 'f';
                break;
        case '\r':
                e[1] = 'r';
                break;
        default:
                if (c < 0x20 || c == 0x7f) {
                        put_u00(w, c);
                } else {
                        put_byte(w, (char)c);
                }
                return;
        }
        wcursor_bytes(w, e, sizeof e);
}

/* The length of the valid UTF-8 sequence at p (`left` bytes available), or
 * 0 if none starts there. The second byte's range rules out overlong forms
 * (E0, F0), surrogates (ED) and code points above U+10FFFF (F4). */
static size_t sequence(const uint8_t *p, size_t left)
{
        uint8_t lo = 0x80, hi = 0xbf;
        size_t len, i;

        if (p[0] < 0x80) {
                return 1;
        }
        if (p[0] < 0xc2) { /* a continuation byte, or an overlong lead */
                return 0;
        }
        if (p[0] < 0xe0) {
                len = 2;
        } else if (p[0] < 0xf0) {
                len = 3;
                lo = p[0] == 0xe0 ? 0xa0 : lo;
                hi = p[0] == 0xed ? 0x9f : hi;
        } else if (p[0] < 0xf5) {
                len = 4;
                lo = p[0] == 0xf0 ? 0x90 : lo;
                hi = p[0] == 0xf4 ? 0x8f : hi;
        } else {
                return 0;
        }
        if (len > left || p[1] < lo || p[1] > hi) {
                return 0;
        }
        for (i = 2; i < len; i++) {
                if (p[i] < 0x80 || p[i] > 0xbf) {
                        return 0;
                }
        }
        return len;
}

bool json_text(struct wcursor *w, const void *s, size_t n)
{
        const uint8_t *p = s;
        bool exact = true;
        size_t i = 0;

        put_byte(w, '"');
        while (i < n) {
                size_t len = sequence(p + i, n - i);

                if (len == 0) {
                        wcursor_bytes(w, replacement, sizeof replacement);
                        exact = false;
                        len = 1;
                } else if (len == 1) {
                        put_ascii(w, p[i]);
                } else if (p[i] == 0xc2 && p[i + 1] < 0xa0) {
                        put_u00(w, p[i + 1]); /* C1 control, U+0080..9F */
                } else {
                        wcursor_bytes(w, p + i, len);
                }
                i += len;
        }
        put_byte(w, '"');
        return exact;
}

void json_bytes(struct wcursor *w, const void *s, size_t n)
{
        const uint8_t *p = s;
        size_t i;

        put_byte(w, '"');
        for (i = 0; i < n; i++) {
                if (p[i] == '"' || p[i] == '\\') {
                        put_byte(w, '\\');
                        put_byte(w, (char)p[i]);
                } else if (p[i] < 0x20 || p[i] >= 0x7f) {
                        put_u00(w, p[i]);
                } else {
                        put_byte(w, (char)p[i]);
                }
        }
        put_byte(w, '"');
}

void json_hex(struct wcursor *w, const void *s, size_t n)
{
        const uint8_t *p = s;
        size_t i;

        put_byte(w, '"');
        for (i = 0; i < n; i++) {
                char h[2] = {hex_digits[p[i] >> 4], hex_digits[p[i] & 15]};
                wcursor_bytes(w, h, sizeof h);
        }
        put_byte(w, '"');
}
