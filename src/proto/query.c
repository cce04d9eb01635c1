/* QUERY and CHECK frames: asking about one lock. */
#include <stdint.h>
#include <string.h>

#include "../../include/baton/errors.h"
#include "fields.h"
#include "frame.h"
#include "query.h"

/* QUERY: one string, read straight into a struct proto_string. */
static const struct fields_entry query_fields[] = {
    {FIELDS_STRING, 0},
};

/* CHECK */
struct check_body {
        uint64_t token;
        struct proto_string name;
};

static const struct fields_entry check_fields[] = {
    FIELD(struct check_body, U64, token),
    FIELD(struct check_body, STRING, name),
};

size_t proto_write_query(uint8_t *out, size_t cap, uint64_t id, uint16_t flags,
                         const char *name, size_t name_len)
{
        struct proto_string b = {name, (uint8_t)name_len};
        struct wcursor w;

        if (!proto_valid_name(name, name_len) ||
            !proto_flags_allowed(PROTO_QUERY, flags)) {
                return 0;
        }
        proto_frame_begin(&w, out, cap, PROTO_QUERY, flags, id);
        fields_put(&w, FIELDS(query_fields), &b);
        return proto_frame_finish(&w);
}

size_t proto_write_check(uint8_t *out, size_t cap, uint64_t id,
                         const char *name, size_t name_len, uint64_t token)
{
        struct check_body b = {token, {name, (uint8_t)name_len}};
        struct wcursor w;

        if (!proto_valid_name(name, name_len)) {
                return 0;
        }
        proto_frame_begin(&w, out, cap, PROTO_CHECK, 0, id);
        fields_put(&w, FIELDS(check_fields), &b);
        return proto_frame_finish(&w);
}

int proto_read_query(const uint8_t *body, size_t len, struct proto_string *name)
{
        struct rcursor r;

        rcursor_init(&r, body, len);
        fields_get(&r, FIELDS(query_fields), name);
        if (!proto_read_done(&r)) {
                return BATON_EMALFORMED;
        }
        return proto_valid_name(name->p, name->len) ? 0 : BATON_ENAME;
}

int proto_read_check(const uint8_t *body, size_t len, struct proto_string *name,
                     uint64_t *token)
{
        struct check_body b;
        struct rcursor r;

        rcursor_init(&r, body, len);
        fields_get(&r, FIELDS(check_fields), &b);
        *token = b.token;
        *name = b.name;
        if (!proto_read_done(&r)) {
                return BATON_EMALFORMED;
        }
        return proto_valid_name(name->p, name->len) ? 0 : BATON_ENAME;
}
