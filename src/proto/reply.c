/* RESULT, NOT_LEADER and ERROR frames: the answers any request may get. */
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include "../../include/baton/errors.h"
#include "fields.h"
#include "frame.h"
#include "reply.h"

_Static_assert(PROTO_MESSAGE_MAX <= UINT8_MAX, "messages are u8 strings");
_Static_assert(INT_MAX == INT32_MAX, "a status is an i32 on the wire");

/* NOT_LEADER */
struct not_leader_body {
        uint64_t leader_id;
        struct proto_string address;
};

static const struct fields_entry not_leader_fields[] = {
    FIELD(struct not_leader_body, U64, leader_id),
    FIELD(struct not_leader_body, STRING, address),
};

/* ERROR */
struct error_body {
        int32_t status;
        struct proto_string message;
};

static const struct fields_entry error_fields[] = {
    FIELD(struct error_body, I32, status),
    FIELD(struct error_body, STRING, message),
};

/* RESULT */
static const struct fields_entry result_fields[] = {
    FIELD(struct proto_result, I32, status),
    FIELD(struct proto_result, U8, kind),
    FIELD(struct proto_result, U64, index),
    FIELD(struct proto_result, U64, session),
    FIELD(struct proto_result, U64, owner),
    FIELD(struct proto_result, U64, token),
    FIELD(struct proto_result, U32, count),
    FIELD(struct proto_result, U32, waiters),
};

/* RESULT's PROTO_FLAG_NAMES tail. */
static const struct fields_entry result_names_fields[] = {
    FIELD(struct proto_result, STRING, client_name),
};

size_t proto_write_result(uint8_t *out, size_t cap, uint64_t id, uint16_t flags,
                          const struct proto_result *r)
{
        struct wcursor w;

        if (!proto_flags_allowed(PROTO_RESULT, flags) ||
            ((flags & PROTO_FLAG_NAMES) &&
             !proto_valid_client(&r->client_name))) {
                return 0;
        }
        proto_frame_begin(&w, out, cap, PROTO_RESULT, flags, id);
        fields_put(&w, FIELDS(result_fields), r);
        if (flags & PROTO_FLAG_NAMES) {
                fields_put(&w, FIELDS(result_names_fields), r);
        }
        return proto_frame_finish(&w);
}

size_t proto_write_not_leader(uint8_t *out, size_t cap, uint64_t id,
                              uint64_t leader_id, const char *address)
{
        size_t len = proto_cstr_len(address, PROTO_ADDRESS_MAX);
        struct not_leader_body b = {leader_id, {address, (uint8_t)len}};
        struct wcursor w;

        if (len == SIZE_MAX) {
                return 0;
        }
        proto_frame_begin(&w, out, cap, PROTO_NOT_LEADER, 0, id);
        fields_put(&w, FIELDS(not_leader_fields), &b);
        return proto_frame_finish(&w);
}

size_t proto_write_error(uint8_t *out, size_t cap, uint64_t id, int status,
                         const char *message)
{
        size_t len = proto_cstr_len(message, PROTO_MESSAGE_MAX);
        struct error_body b = {(int32_t)status, {message, (uint8_t)len}};
        struct wcursor w;

        if (len == SIZE_MAX) {
                return 0;
        }
        proto_frame_begin(&w, out, cap, PROTO_ERROR, 0, id);
        fields_put(&w, FIELDS(error_fields), &b);
        return proto_frame_finish(&w);
}

int proto_read_result(const uint8_t *body, size_t len, uint16_t flags,
                      struct proto_result *res)
{
        struct rcursor r;

        rcursor_init(&r, body, len);
        fields_get(&r, FIELDS(result_fields), res);
        if (!(flags & PROTO_FLAG_NAMES)) {
                res->client_name.p = NULL;
                res->client_name.len = 0;
                return proto_read_done(&r) ? 0 : BATON_EMALFORMED;
        }
        fields_get(&r, FIELDS(result_names_fields), res);
        if (!proto_read_done(&r) || !proto_valid_client(&res->client_name)) {
                return BATON_EMALFORMED;
        }
        return 0;
}

int proto_read_not_leader(const uint8_t *body, size_t len, uint64_t *leader_id,
                          struct proto_string *address)
{
        struct not_leader_body b;
        struct rcursor r;

        rcursor_init(&r, body, len);
        fields_get(&r, FIELDS(not_leader_fields), &b);
        *leader_id = b.leader_id;
        *address = b.address;
        if (!proto_read_done(&r) ||
            !proto_valid_text(address, PROTO_ADDRESS_MAX)) {
                return BATON_EMALFORMED;
        }
        return 0;
}

int proto_read_error(const uint8_t *body, size_t len, int *status,
                     struct proto_string *message)
{
        struct error_body b;
        struct rcursor r;

        rcursor_init(&r, body, len);
        fields_get(&r, FIELDS(error_fields), &b);
        *status = b.status;
        *message = b.message;
        if (!proto_read_done(&r) ||
            !proto_valid_text(message, PROTO_MESSAGE_MAX)) {
                return BATON_EMALFORMED;
        }
        return 0;
}
