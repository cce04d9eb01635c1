/* The MEMBER_ADD frame. */
#include <stdint.h>
#include <string.h>

#include "../../include/baton/errors.h"
#include "fields.h"
#include "frame.h"
#include "member.h"

/* MEMBER_ADD */
struct member_add_body {
        uint64_t member;
        struct proto_string raft_address;
        struct proto_string client_address;
};

static const struct fields_entry member_add_fields[] = {
    FIELD(struct member_add_body, U64, member),
    FIELD(struct member_add_body, STRING, raft_address),
    FIELD(struct member_add_body, STRING, client_address),
};

size_t proto_write_member_add(uint8_t *out, size_t cap, uint64_t id,
                              uint64_t member, const char *raft_address,
                              const char *client_address)
{
        size_t raft_len = proto_cstr_len(raft_address, PROTO_ADDRESS_MAX);
        size_t client_len = proto_cstr_len(client_address, PROTO_ADDRESS_MAX);
        struct member_add_body b = {member,
                                    {raft_address, (uint8_t)raft_len},
                                    {client_address, (uint8_t)client_len}};
        struct wcursor w;

        if (raft_len == 0 || raft_len == SIZE_MAX || client_len == 0 ||
            client_len == SIZE_MAX) {
                return 0;
        }
        proto_frame_begin(&w, out, cap, PROTO_MEMBER_ADD, 0, id);
        fields_put(&w, FIELDS(member_add_fields), &b);
        return proto_frame_finish(&w);
}

int proto_read_member_add(const uint8_t *body, size_t len, uint64_t *member,
                          struct proto_string *raft_address,
                          struct proto_string *client_address)
{
        struct member_add_body b;
        struct rcursor r;

        rcursor_init(&r, body, len);
        fields_get(&r, FIELDS(member_add_fields), &b);
        *member = b.member;
        *raft_address = b.raft_address;
        *client_address = b.client_address;
        if (!proto_read_done(&r) || raft_address->len == 0 ||
            client_address->len == 0 ||
            !proto_valid_text(raft_address, PROTO_ADDRESS_MAX) ||
            !proto_valid_text(client_address, PROTO_ADDRESS_MAX)) {
                return BATON_EMALFORMED;
        }
        return 0;
}
