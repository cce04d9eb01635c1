/* JSON strings for Baton's machine-readable output, written to a caller's
 * buffer through a write cursor (no I/O): batonctl --json and the apply log.
 */
#ifndef LIB_JSON_H
#define LIB_JSON_H

#include <stdbool.h>
#include <stddef.h>

#include "cursor.h"

/*
 * Write the `n` bytes at `s` (NULs included) as a quoted JSON string of
 * UTF-8 text. Valid UTF-8 sequences (RFC 3629: no overlong forms, no
 * surrogates, nothing above U+10FFFF) are copied as they are; '"' and '\\'
 * are escaped, and so is every control character (U+0000..U+001F as \n,
 * \t, \r, \b, \f or \u00XX; U+007F..U+009F as \u00XX). Each byte that is
 * not part of a valid sequence becomes U+FFFD. The result is valid UTF-8
 * and valid JSON whatever `s` holds.
 *
 * Returns true when the string carries `s` exactly, false when a byte was
 * replaced (a caller that must keep the exact bytes adds json_hex() of
 * them). A cursor that runs out of room is marked bad (see cursor.h); a
 * cursor over NULL only counts, to size a buffer.
 */
bool json_text(struct wcursor *w, const void *s, size_t n);

/*
 * Write the `n` bytes at `s` as a quoted JSON string in ASCII that keeps
 * every byte: 0x20..0x7e are copied ('"' and '\\' escaped), every other
 * byte is written as \u00XX. Its readers take each \u00XX back as the one
 * byte XX, not as the code point U+00XX: the apply log's format, which its
 * checkers compare byte for byte.
 */
void json_bytes(struct wcursor *w, const void *s, size_t n);

/* Write the `n` bytes at `s` as a quoted JSON string of 2n lowercase hex
 * digits. */
void json_hex(struct wcursor *w, const void *s, size_t n);

#endif /* LIB_JSON_H */
