/* LIST and LIST_REPLY frames in every shape: plain, with client names
 * (PROTO_FLAG_NAMES), and every holder of one lock (PROTO_FLAG_HOLDERS,
 * the reply to such a QUERY), with their values (PROTO_FLAG_VALUES) and
 * time left (PROTO_FLAG_LEFT). */
#include <stdbool.h>
#include <string.h>

#include "../../include/baton/errors.h"
#include "../proto/command.h"
#include "fields.h"
#include "frame.h"
#include "list.h"

_Static_assert(COMMAND_NAME_MAX == 255, "LIST entries hold any lock name");
_Static_assert(PROTO_LIST_ENTRY_MAX == PROTO_LIST_ENTRY_SIZE(255),
               "LIST entry sizes agree");
_Static_assert(PROTO_LIST_ENTRY_MIN == PROTO_LIST_ENTRY_SIZE(1),
               "LIST entry sizes agree");

struct list_body {
        struct proto_string prefix;
        uint32_t limit;
};

static const struct fields_entry list_fields[] = {
    FIELD(struct list_body, STRING, prefix),
    FIELD(struct list_body, U32, limit),
};

/* LIST_REPLY: u32 n, u8 more, then n of entry_fields. */
static const struct fields_entry entry_fields[] = {
    FIELD(struct proto_lock_entry, STRING, name),
    FIELD(struct proto_lock_entry, U64, session),
    FIELD(struct proto_lock_entry, U64, owner),
    FIELD(struct proto_lock_entry, U64, token),
    FIELD(struct proto_lock_entry, U32, count),
    FIELD(struct proto_lock_entry, U32, waiters),
};

/* A LIST_REPLY entry's PROTO_FLAG_NAMES tail. */
static const struct fields_entry entry_names_fields[] = {
    FIELD(struct proto_lock_entry, STRING, client_name),
};

/* A LIST_REPLY entry's PROTO_FLAG_HOLDERS tail, after the names one. */
static const struct fields_entry entry_holders_fields[] = {
    FIELD(struct proto_lock_entry, U8, mode),
    FIELD(struct proto_lock_entry, U32, permits),
    FIELD(struct proto_lock_entry, U32, limit),
    FIELD(struct proto_lock_entry, U32, granted_s),
};

/* Its PROTO_FLAG_VALUES tail, after the holders one. */
static const struct fields_entry entry_values_fields[] = {
    FIELD(struct proto_lock_entry, STRING, value),
};

/* Its PROTO_FLAG_LEFT tail, last. */
static const struct fields_entry entry_left_fields[] = {
    FIELD(struct proto_lock_entry, U32, left_ms),
};

/* A grant's value: 0..COMMAND_VALUE_MAX bytes, no NUL. */
static bool valid_value(const struct proto_string *s)
{
        return s->len == 0 ||
               (s->p != NULL && memchr(s->p, '\0', s->len) == NULL);
}

/* A LIST prefix: 0..COMMAND_NAME_MAX bytes, no NUL. */
static bool valid_prefix(const char *prefix, size_t len)
{
        return len <= COMMAND_NAME_MAX &&
               (len == 0 ||
                (prefix != NULL && memchr(prefix, '\0', len) == NULL));
}

size_t proto_write_list(uint8_t *out, size_t cap, uint64_t id, uint16_t flags,
                        const char *prefix, size_t prefix_len, uint32_t limit)
{
        struct list_body b = {{prefix, (uint8_t)prefix_len}, limit};
        struct wcursor w;

        if (!valid_prefix(prefix, prefix_len) || limit == 0 ||
            limit > PROTO_LIST_MAX || !proto_flags_allowed(PROTO_LIST, flags)) {
                return 0;
        }
        proto_frame_begin(&w, out, cap, PROTO_LIST, flags, id);
        fields_put(&w, FIELDS(list_fields), &b);
        return proto_frame_finish(&w);
}

size_t proto_write_list_reply(uint8_t *out, size_t cap, uint64_t id,
                              uint16_t flags, const struct proto_lock_entry *e,
                              uint32_t n, bool more)
{
        bool holders = flags & PROTO_FLAG_HOLDERS;
        bool names = holders || (flags & PROTO_FLAG_NAMES);
        bool values = flags & PROTO_FLAG_VALUES;
        bool left = flags & PROTO_FLAG_LEFT;
        struct wcursor w;
        uint32_t i;

        if ((n > 0 && e == NULL) ||
            !proto_flags_allowed(PROTO_LIST_REPLY, flags)) {
                return 0;
        }
        for (i = 0; i < n; i++) {
                if (!proto_valid_name(e[i].name.p, e[i].name.len) ||
                    (names && !proto_valid_client(&e[i].client_name)) ||
                    (values && !valid_value(&e[i].value))) {
                        return 0;
                }
        }
        proto_frame_begin(&w, out, cap, PROTO_LIST_REPLY, flags, id);
        wcursor_u32(&w, n);
        wcursor_u8(&w, more ? 1 : 0);
        for (i = 0; i < n; i++) {
                fields_put(&w, FIELDS(entry_fields), &e[i]);
                if (names) {
                        fields_put(&w, FIELDS(entry_names_fields), &e[i]);
                }
                if (holders) {
                        fields_put(&w, FIELDS(entry_holders_fields), &e[i]);
                }
                if (values) {
                        fields_put(&w, FIELDS(entry_values_fields), &e[i]);
                }
                if (left) {
                        fields_put(&w, FIELDS(entry_left_fields), &e[i]);
                }
        }
        return proto_frame_finish(&w);
}

int proto_read_list(const uint8_t *body, size_t len,
                    struct proto_string *prefix, uint32_t *limit)
{
        struct list_body b;
        struct rcursor r;

        rcursor_init(&r, body, len);
        fields_get(&r, FIELDS(list_fields), &b);
        *prefix = b.prefix;
        *limit = b.limit;
        if (!proto_read_done(&r) || *limit == 0 || *limit > PROTO_LIST_MAX) {
                return BATON_EMALFORMED;
        }
        return valid_prefix(prefix->p, prefix->len) ? 0 : BATON_ENAME;
}

int proto_read_list_reply(const uint8_t *body, size_t len, uint16_t flags,
                          struct proto_lock_entry *e, size_t cap, uint32_t *n,
                          bool *more)
{
        bool holders = flags & PROTO_FLAG_HOLDERS;
        bool names = holders || (flags & PROTO_FLAG_NAMES);
        bool values = flags & PROTO_FLAG_VALUES;
        bool left = flags & PROTO_FLAG_LEFT;
        struct rcursor r;
        uint32_t count, i;
        uint8_t flag;

        *n = 0;
        *more = false;
        rcursor_init(&r, body, len);
        count = rcursor_u32(&r);
        flag = rcursor_u8(&r);
        /* Every entry takes at least PROTO_LIST_ENTRY_MIN bytes, so a count
         * the body cannot hold is refused before any entry is read. */
        if (r.bad || flag > 1 || count > cap ||
            count > r.left / PROTO_LIST_ENTRY_MIN) {
                return BATON_EMALFORMED;
        }
        for (i = 0; i < count; i++) {
                fields_get(&r, FIELDS(entry_fields), &e[i]);
                e[i].client_name.p = NULL;
                e[i].client_name.len = 0;
                if (names) {
                        fields_get(&r, FIELDS(entry_names_fields), &e[i]);
                }
                e[i].mode = 0;
                e[i].permits = e[i].limit = 0;
                e[i].granted_s = 0;
                if (holders) {
                        fields_get(&r, FIELDS(entry_holders_fields), &e[i]);
                }
                e[i].value.p = NULL;
                e[i].value.len = 0;
                if (values) {
                        fields_get(&r, FIELDS(entry_values_fields), &e[i]);
                }
                e[i].left_ms = 0;
                if (left) {
                        fields_get(&r, FIELDS(entry_left_fields), &e[i]);
                }
                if (r.bad || !proto_valid_name(e[i].name.p, e[i].name.len) ||
                    !proto_valid_client(&e[i].client_name) ||
                    !valid_value(&e[i].value)) {
                        return BATON_EMALFORMED;
                }
        }
        if (!proto_read_done(&r)) {
                return BATON_EMALFORMED;
        }
        *n = count;
        *more = flag == 1;
        return 0;
}
