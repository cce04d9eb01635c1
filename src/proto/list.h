/* Listing locks: LIST and LIST_REPLY frames in every shape, plain, with
 * client names (PROTO_FLAG_NAMES), and every holder of one lock
 * (PROTO_FLAG_HOLDERS, the reply to such a QUERY), with their values
 * (PROTO_FLAG_VALUES) and time left (PROTO_FLAG_LEFT). */
#ifndef PROTO_LIST_H
#define PROTO_LIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto.h"

#define PROTO_LIST_MAX 1000 /* largest LIST limit */
/* LIST_REPLY: the fixed part, and the largest entry (a 255-byte name). */
#define PROTO_LIST_REPLY_FIXED 5
#define PROTO_LIST_ENTRY_MAX   (1 + 255 + 3 * 8 + 2 * 4)
/* The smallest entry (a 1-byte name), for bounding n by the body size. */
#define PROTO_LIST_ENTRY_MIN (1 + 1 + 3 * 8 + 2 * 4)

/* One lock of a LIST_REPLY; the name is borrowed. */
struct proto_lock_entry {
        struct proto_string name;
        uint64_t session;
        uint64_t owner;
        uint64_t token;
        uint32_t count;
        uint32_t waiters;
        /* Only in the PROTO_FLAG_NAMES shape: the holder's client name. */
        struct proto_string client_name;
        /* Only in the PROTO_FLAG_HOLDERS shape: the grant's mode and
         * permits, and the semaphore's limit (0 for a lock). */
        uint8_t mode;
        uint32_t permits;
        uint32_t limit;
        /* The leader's wall clock when the grant was made, s since the
         * Unix epoch (0: not known). */
        uint32_t granted_s;
        /* Only in the PROTO_FLAG_VALUES shape: the grant's value (empty
         * when it has none). */
        struct proto_string value;
        /* Only in the PROTO_FLAG_LEFT shape: the leader's lease of the
         * holder's session, ms until it expires it
         * (PROTO_SESSION_UNKNOWN, sesslist.h: it keeps none). */
        uint32_t left_ms;
};

/* The encoded size of one LIST_REPLY entry with a name of `name_len`. */
#define PROTO_LIST_ENTRY_SIZE(name_len) (1 + (size_t)(name_len) + 3 * 8 + 2 * 4)
/* The same in the PROTO_FLAG_NAMES shape, with a client name of
 * `client_len` bytes. */
#define PROTO_LIST_ENTRY_NAMES_SIZE(name_len, client_len)                      \
        (PROTO_LIST_ENTRY_SIZE(name_len) + 1 + (size_t)(client_len))
/* The same in the PROTO_FLAG_HOLDERS shape: mode, permits, limit and the
 * grant's time too. */
#define PROTO_LIST_ENTRY_HOLDERS_SIZE(name_len, client_len)                    \
        (PROTO_LIST_ENTRY_NAMES_SIZE(name_len, client_len) + 1 + 4 + 4 + 4)
/* A PROTO_FLAG_NAMES entry with PROTO_FLAG_VALUES too (a LIST's). */
#define PROTO_LIST_ENTRY_NAMES_VALUES_SIZE(name_len, client_len, value_len)    \
        (PROTO_LIST_ENTRY_NAMES_SIZE(name_len, client_len) + 1 +               \
         (size_t)(value_len))
/* The holders shape with PROTO_FLAG_VALUES too: a value of `value_len`
 * bytes. */
#define PROTO_LIST_ENTRY_VALUES_SIZE(name_len, client_len, value_len)          \
        (PROTO_LIST_ENTRY_HOLDERS_SIZE(name_len, client_len) + 1 +             \
         (size_t)(value_len))
/* What PROTO_FLAG_LEFT adds to each entry of either holders shape. */
#define PROTO_LIST_ENTRY_LEFT_SIZE 4

/* LIST: string prefix (0..255 bytes, no NUL; empty: every lock), u32 limit
 * (1..PROTO_LIST_MAX), with `flags` 0, PROTO_FLAG_NAMES, or that and
 * PROTO_FLAG_VALUES (the body is the same; the answer carries client
 * names, and values). */
size_t proto_write_list(uint8_t *out, size_t cap, uint64_t id, uint16_t flags,
                        const char *prefix, size_t prefix_len, uint32_t limit);
/* LIST: BATON_EMALFORMED for a truncated body, trailing bytes or a limit
 * outside 1..PROTO_LIST_MAX; BATON_ENAME for a prefix with a NUL. The
 * prefix is borrowed and may be empty. */
int proto_read_list(const uint8_t *body, size_t len,
                    struct proto_string *prefix, uint32_t *limit);

/*
 * LIST_REPLY: u32 n, u8 more (1: more locks matched than were sent), then
 * n entries, each string name, u64 session, u64 owner, u64 token, u32
 * count, u32 waiters, and in the shape `flags` say:
 *
 *   PROTO_FLAG_NAMES     then string client_name (0..PROTO_CLIENT_NAME_MAX)
 *   PROTO_FLAG_NAMES | PROTO_FLAG_VALUES
 *                        the same, then string value (the first holder's
 *                        grant's, as session and token are; 0..255 bytes)
 *   PROTO_FLAG_HOLDERS   then string client_name, u8 mode (COMMAND_MODE_*),
 *                        u32 permits (a semaphore grant's), u32 limit (the
 *                        semaphore's permits; 0 for a lock), u32 granted_s
 *                        (the leader's wall clock when it was granted, s
 *                        since the Unix epoch; 0: not known): one entry per
 *                        holder of the QUERY's lock, its name in each
 *   PROTO_FLAG_HOLDERS | PROTO_FLAG_VALUES
 *                        the same, then string value (the grant's, 0..255
 *                        bytes; empty when it has none)
 *   PROTO_FLAG_LEFT      with either holders shape: then u32 left_ms (the
 *                        leader's lease of the holder's session, ms until
 *                        it expires it; UINT32_MAX: not known)
 *
 * Writing the `n` entries of `e` gives 0 for a bad name (1..255 bytes, no
 * NUL), client name or value, or when the frame exceeds `cap` or
 * PROTO_MAX_BODY.
 */
size_t proto_write_list_reply(uint8_t *out, size_t cap, uint64_t id,
                              uint16_t flags, const struct proto_lock_entry *e,
                              uint32_t n, bool more);
/*
 * LIST_REPLY in the shape its header's `flags` say, into the caller's
 * array `e` of `cap` entries (strings borrowed from the body; the fields
 * of the shapes not sent are zero): `*n` entries are filled and `*more`
 * says whether the server left matches out. BATON_EMALFORMED when n
 * exceeds `cap` (pass the limit that was asked for), when n disagrees with
 * the body's size, for a bad name, a `more` other than 0 or 1, or
 * trailing bytes; then `*n` is 0.
 */
int proto_read_list_reply(const uint8_t *body, size_t len, uint16_t flags,
                          struct proto_lock_entry *e, size_t cap, uint32_t *n,
                          bool *more);

#endif /* PROTO_LIST_H */
