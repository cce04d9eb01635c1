/* Field tables: a body of fixed shape written down once, walked by one
 * encoder and one decoder. */
#ifndef PROTO_FIELDS_H
#define PROTO_FIELDS_H

#include <stddef.h>
#include <stdint.h>

#include "../lib/cursor.h"

/*
 * A table lists a body's fields in wire order: each a kind and the offset
 * of its member in the struct that holds the decoded body, so the two
 * directions agree by construction. Integers are little-endian; a STRING
 * member is a struct proto_string (proto.h), on the wire a u8 length and
 * that many bytes, borrowed from the body when read.
 */
enum fields_kind {
        FIELDS_U8,
        FIELDS_U16,
        FIELDS_U32,
        FIELDS_I32,
        FIELDS_U64,
        FIELDS_STRING,
};

struct fields_entry {
        enum fields_kind kind;
        size_t offset;
};

/* One table row: FIELD(struct proto_result, U64, token). */
#define FIELD(type, kind, member)                                              \
        {                                                                      \
                FIELDS_##kind, offsetof(type, member)                          \
        }
/* A table and its length, as the walkers take them. */
#define FIELDS(table) (table), (sizeof(table) / sizeof((table)[0]))

/* Write the `n` fields of `f` from the struct at `src` (borrowed). */
void fields_put(struct wcursor *w, const struct fields_entry *f, size_t n,
                const void *src);

/* Read the `n` fields of `f` into the struct at `dst`; a short body marks
 * the cursor bad, for the caller to check once. Strings borrow the body;
 * their validity is the caller's. */
void fields_get(struct rcursor *r, const struct fields_entry *f, size_t n,
                void *dst);

#endif /* PROTO_FIELDS_H */
