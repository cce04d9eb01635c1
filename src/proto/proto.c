/* The client protocol: frame codec and incremental reader, with no I/O. */
#include "proto.h"
#include "frame.h"

#include <limits.h>
#include <string.h>

#include "../../include/baton/errors.h"
#include "../proto/command.h"
#include "../lib/address.h"
#include "../lib/cursor.h"
#include "fields.h"

/* The largest STATUS_REPLY body: fixed fields, then every member at its
 * largest (id, role, two strings of PROTO_ADDRESS_MAX bytes). */
#define STATUS_FIXED_SIZE (8 + 1 + 8 * 8 + 1)
#define MEMBER_MAX_SIZE   (8 + 1 + 2 * (1 + PROTO_ADDRESS_MAX))
#define STATUS_MAX_SIZE                                                        \
        (STATUS_FIXED_SIZE + PROTO_MAX_MEMBERS * MEMBER_MAX_SIZE)

_Static_assert(STATUS_MAX_SIZE <= PROTO_MAX_BODY, "status reply fits a frame");
_Static_assert(COMMAND_ANY_MAX_SIZE <= PROTO_MAX_BODY,
               "a command fits a frame");
_Static_assert(PROTO_ADDRESS_MAX <= UINT8_MAX, "addresses are u8 strings");
_Static_assert(PROTO_ADDRESS_MAX == ADDRESS_MAX &&
                   COMMAND_ADDRESS_MAX == ADDRESS_MAX,
               "every address the parser accepts fits the wire");
_Static_assert(PROTO_MESSAGE_MAX <= UINT8_MAX, "messages are u8 strings");
_Static_assert(COMMAND_NAME_MAX == 255, "LIST entries hold any lock name");
_Static_assert(PROTO_LIST_ENTRY_MAX == PROTO_LIST_ENTRY_SIZE(255),
               "LIST entry sizes agree");
_Static_assert(PROTO_LIST_ENTRY_MIN == PROTO_LIST_ENTRY_SIZE(1),
               "LIST entry sizes agree");
_Static_assert(INT_MAX == INT32_MAX, "a status is an i32 on the wire");

const char *proto_type_name(int type)
{
        switch (type) {
        case PROTO_COMMAND:
                return "COMMAND";
        case PROTO_KEEPALIVE:
                return "KEEPALIVE";
        case PROTO_QUERY:
                return "QUERY";
        case PROTO_CHECK:
                return "CHECK";
        case PROTO_STATUS:
                return "STATUS";
        case PROTO_MEMBER_ADD:
                return "MEMBER_ADD";
        case PROTO_MEMBER_REMOVE:
                return "MEMBER_REMOVE";
        case PROTO_TRANSFER:
                return "TRANSFER";
        case PROTO_PING:
                return "PING";
        case PROTO_LIST:
                return "LIST";
        case PROTO_ATTACH:
                return "ATTACH";
        case PROTO_WATCH:
                return "WATCH";
        case PROTO_UNWATCH:
                return "UNWATCH";
        case PROTO_WATCH_EVENT:
                return "WATCH_EVENT";
        case PROTO_BACKUP:
                return "BACKUP";
        case PROTO_BACKUP_CHUNK:
                return "BACKUP_CHUNK";
        case PROTO_ACL:
                return "ACL";
        case PROTO_ACL_REPLY:
                return "ACL_REPLY";
        case PROTO_RESULT:
                return "RESULT";
        case PROTO_NOT_LEADER:
                return "NOT_LEADER";
        case PROTO_ERROR:
                return "ERROR";
        case PROTO_STATUS_REPLY:
                return "STATUS_REPLY";
        case PROTO_KEEPALIVE_OK:
                return "KEEPALIVE_OK";
        case PROTO_PONG:
                return "PONG";
        case PROTO_LIST_REPLY:
                return "LIST_REPLY";
        default:
                return "UNKNOWN";
        }
}

/* Whether `type` is one of enum proto_type; proto_type_name is the list. */
static bool known_type(int type)
{
        return strcmp(proto_type_name(type), "UNKNOWN") != 0;
}

bool proto_valid_name(const char *name, size_t len)
{
        return len > 0 && len <= COMMAND_NAME_MAX && name != NULL &&
               memchr(name, '\0', len) == NULL;
}

/* ---- Bodies --------------------------------------------------------------
 *
 * Every body of fixed shape is one table (fields.h); bodies passed as
 * arguments get a private struct to describe.
 */

static const struct fields_entry header_fields[] = {
    FIELD(struct proto_header, U8, version),
    FIELD(struct proto_header, U8, type),
    FIELD(struct proto_header, U16, flags),
    FIELD(struct proto_header, U32, length),
    FIELD(struct proto_header, U64, id),
};

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

/* LIST */
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

/* STATUS_REPLY: the fixed part, then n_members of member_fields. */
static const struct fields_entry status_fields[] = {
    FIELD(struct proto_status, U64, id),
    FIELD(struct proto_status, U8, role),
    FIELD(struct proto_status, U64, term),
    FIELD(struct proto_status, U64, leader_id),
    FIELD(struct proto_status, U64, commit_index),
    FIELD(struct proto_status, U64, applied_index),
    FIELD(struct proto_status, U64, last_index),
    FIELD(struct proto_status, U64, sessions),
    FIELD(struct proto_status, U64, locks),
    FIELD(struct proto_status, U64, waiters),
    FIELD(struct proto_status, U8, n_members),
};

/* STATUS_REPLY's PROTO_FLAG_VERSIONS tail, after the members. */
static const struct fields_entry versions_fields[] = {
    FIELD(struct proto_versions, STRING, release),
    FIELD(struct proto_versions, U16, command),
    FIELD(struct proto_versions, U16, snapshot),
    FIELD(struct proto_versions, U16, container),
};

static const struct fields_entry member_fields[] = {
    FIELD(struct proto_member, U64, id),
    FIELD(struct proto_member, U8, role),
    FIELD(struct proto_member, STRING, raft_address),
    FIELD(struct proto_member, STRING, client_address),
};

/* ---- Header --------------------------------------------------------------
 */

/* Only QUERY, LIST and their answers may ask for or carry client names;
 * only QUERY and LIST_REPLY every holder, with their names; only
 * KEEPALIVE and KEEPALIVE_OK revoked grants; only STATUS and STATUS_REPLY
 * versions. */
static bool allowed_flags(uint8_t type, uint16_t flags)
{
        if (flags == 0) {
                return true;
        }
        if (flags == PROTO_FLAG_VERSIONS) {
                return type == PROTO_STATUS || type == PROTO_STATUS_REPLY;
        }
        if (flags == PROTO_FLAG_REVOKED) {
                return type == PROTO_KEEPALIVE || type == PROTO_KEEPALIVE_OK;
        }
        if (flags == PROTO_FLAG_HOLDERS ||
            flags == (PROTO_FLAG_HOLDERS | PROTO_FLAG_VALUES)) {
                return type == PROTO_QUERY || type == PROTO_LIST_REPLY;
        }
        return flags == PROTO_FLAG_NAMES &&
               (type == PROTO_QUERY || type == PROTO_LIST ||
                type == PROTO_RESULT || type == PROTO_LIST_REPLY);
}

static void put_header(struct wcursor *w, const struct proto_header *h)
{
        fields_put(w, FIELDS(header_fields), h);
}

void proto_header_encode(const struct proto_header *h, uint8_t *out)
{
        struct wcursor w;

        wcursor_init(&w, out, PROTO_HEADER_SIZE);
        put_header(&w, h);
}

void proto_header_set_id(uint8_t *frame, uint64_t id)
{
        struct wcursor w;

        wcursor_init(&w, frame + 8, 8);
        wcursor_u64(&w, id);
}

int proto_header_decode(struct proto_header *h, const uint8_t *in,
                        uint32_t max_body)
{
        struct rcursor r;

        rcursor_init(&r, in, PROTO_HEADER_SIZE);
        fields_get(&r, FIELDS(header_fields), h);
        if (h->version != PROTO_VERSION) {
                return BATON_EVERSION;
        }
        if (!known_type(h->type) || !allowed_flags(h->type, h->flags)) {
                return BATON_EMALFORMED;
        }
        if (h->length > max_body) {
                return BATON_ETOOBIG;
        }
        return 0;
}

/* ---- Writers -------------------------------------------------------------
 *
 * Each writer walks header and body through one wcursor (a NULL `out` only
 * counts), then patches the body length into the header.
 */

void proto_frame_begin(struct wcursor *w, uint8_t *out, size_t cap,
                       uint8_t type, uint16_t flags, uint64_t id)
{
        struct proto_header h = {PROTO_VERSION, type, flags, 0, id};

        wcursor_init(w, out, cap);
        put_header(w, &h);
}

static void begin(struct wcursor *w, uint8_t *out, size_t cap, uint8_t type,
                  uint64_t id)
{
        proto_frame_begin(w, out, cap, type, 0, id);
}

bool proto_valid_client(const struct proto_string *s)
{
        return s->len <= PROTO_CLIENT_NAME_MAX &&
               (s->len == 0 ||
                (s->p != NULL && memchr(s->p, '\0', s->len) == NULL));
}

size_t proto_frame_finish(struct wcursor *w)
{
        size_t body;
        uint8_t le[4];
        int i;

        if (w->bad || w->len < PROTO_HEADER_SIZE) {
                return 0;
        }
        body = w->len - PROTO_HEADER_SIZE;
        if (body > PROTO_MAX_BODY) {
                return 0;
        }
        if (w->p != NULL) {
                for (i = 0; i < 4; i++) {
                        le[i] = (uint8_t)(body >> (8 * i));
                }
                memcpy(w->p + 4, le, sizeof le);
        }
        return w->len;
}

/* The length of an optional C string, or SIZE_MAX when over `max`. */
static size_t cstr_len(const char *s, size_t max)
{
        size_t i;

        if (s == NULL) {
                return 0;
        }
        /* Looks one byte past `max` so a long string is refused, not cut. */
        for (i = 0; i <= max; i++) {
                if (s[i] == '\0') {
                        return i;
                }
        }
        return SIZE_MAX;
}

size_t proto_write_command(uint8_t *out, size_t cap, uint64_t id,
                           const void *command, size_t command_len)
{
        struct wcursor w;

        if (command_len == 0 || command_len > PROTO_MAX_BODY ||
            command == NULL) {
                return 0;
        }
        begin(&w, out, cap, PROTO_COMMAND, id);
        wcursor_bytes(&w, command, command_len);
        return proto_frame_finish(&w);
}

static size_t write_query(uint8_t *out, size_t cap, uint64_t id, uint16_t flags,
                          const char *name, size_t name_len)
{
        struct proto_string b = {name, (uint8_t)name_len};
        struct wcursor w;

        if (!proto_valid_name(name, name_len)) {
                return 0;
        }
        proto_frame_begin(&w, out, cap, PROTO_QUERY, flags, id);
        fields_put(&w, FIELDS(query_fields), &b);
        return proto_frame_finish(&w);
}

size_t proto_write_query(uint8_t *out, size_t cap, uint64_t id,
                         const char *name, size_t name_len)
{
        return write_query(out, cap, id, 0, name, name_len);
}

size_t proto_write_query_names(uint8_t *out, size_t cap, uint64_t id,
                               const char *name, size_t name_len)
{
        return write_query(out, cap, id, PROTO_FLAG_NAMES, name, name_len);
}

size_t proto_write_query_holders(uint8_t *out, size_t cap, uint64_t id,
                                 const char *name, size_t name_len)
{
        return write_query(out, cap, id, PROTO_FLAG_HOLDERS, name, name_len);
}

size_t proto_write_query_values(uint8_t *out, size_t cap, uint64_t id,
                                const char *name, size_t name_len)
{
        return write_query(out, cap, id, PROTO_FLAG_HOLDERS | PROTO_FLAG_VALUES,
                           name, name_len);
}

size_t proto_write_check(uint8_t *out, size_t cap, uint64_t id,
                         const char *name, size_t name_len, uint64_t token)
{
        struct check_body b = {token, {name, (uint8_t)name_len}};
        struct wcursor w;

        if (!proto_valid_name(name, name_len)) {
                return 0;
        }
        begin(&w, out, cap, PROTO_CHECK, id);
        fields_put(&w, FIELDS(check_fields), &b);
        return proto_frame_finish(&w);
}

size_t proto_write_empty(uint8_t *out, size_t cap, uint64_t id, uint8_t type)
{
        struct wcursor w;

        if (type != PROTO_STATUS && type != PROTO_PING && type != PROTO_PONG) {
                return 0;
        }
        begin(&w, out, cap, type, id);
        return proto_frame_finish(&w);
}

size_t proto_write_member_add(uint8_t *out, size_t cap, uint64_t id,
                              uint64_t member, const char *raft_address,
                              const char *client_address)
{
        size_t raft_len = cstr_len(raft_address, PROTO_ADDRESS_MAX);
        size_t client_len = cstr_len(client_address, PROTO_ADDRESS_MAX);
        struct member_add_body b = {member,
                                    {raft_address, (uint8_t)raft_len},
                                    {client_address, (uint8_t)client_len}};
        struct wcursor w;

        if (raft_len == 0 || raft_len == SIZE_MAX || client_len == 0 ||
            client_len == SIZE_MAX) {
                return 0;
        }
        begin(&w, out, cap, PROTO_MEMBER_ADD, id);
        fields_put(&w, FIELDS(member_add_fields), &b);
        return proto_frame_finish(&w);
}

size_t proto_write_id(uint8_t *out, size_t cap, uint64_t id, uint8_t type,
                      uint64_t member)
{
        struct wcursor w;

        if (type != PROTO_MEMBER_REMOVE && type != PROTO_TRANSFER &&
            type != PROTO_UNWATCH) {
                return 0;
        }
        begin(&w, out, cap, type, id);
        wcursor_u64(&w, member);
        return proto_frame_finish(&w);
}

size_t proto_write_result(uint8_t *out, size_t cap, uint64_t id,
                          const struct proto_result *r)
{
        struct wcursor w;

        begin(&w, out, cap, PROTO_RESULT, id);
        fields_put(&w, FIELDS(result_fields), r);
        return proto_frame_finish(&w);
}

size_t proto_write_result_names(uint8_t *out, size_t cap, uint64_t id,
                                const struct proto_result *r)
{
        struct wcursor w;

        if (!proto_valid_client(&r->client_name)) {
                return 0;
        }
        proto_frame_begin(&w, out, cap, PROTO_RESULT, PROTO_FLAG_NAMES, id);
        fields_put(&w, FIELDS(result_fields), r);
        fields_put(&w, FIELDS(result_names_fields), r);
        return proto_frame_finish(&w);
}

size_t proto_write_not_leader(uint8_t *out, size_t cap, uint64_t id,
                              uint64_t leader_id, const char *address)
{
        size_t len = cstr_len(address, PROTO_ADDRESS_MAX);
        struct not_leader_body b = {leader_id, {address, (uint8_t)len}};
        struct wcursor w;

        if (len == SIZE_MAX) {
                return 0;
        }
        begin(&w, out, cap, PROTO_NOT_LEADER, id);
        fields_put(&w, FIELDS(not_leader_fields), &b);
        return proto_frame_finish(&w);
}

size_t proto_write_error(uint8_t *out, size_t cap, uint64_t id, int status,
                         const char *message)
{
        size_t len = cstr_len(message, PROTO_MESSAGE_MAX);
        struct error_body b = {(int32_t)status, {message, (uint8_t)len}};
        struct wcursor w;

        if (len == SIZE_MAX) {
                return 0;
        }
        begin(&w, out, cap, PROTO_ERROR, id);
        fields_put(&w, FIELDS(error_fields), &b);
        return proto_frame_finish(&w);
}

/* A member's addresses may be empty (not known yet), never too long. */
static bool valid_address(const struct proto_string *s)
{
        return s->len <= PROTO_ADDRESS_MAX && (s->len == 0 || s->p != NULL) &&
               (s->len == 0 || memchr(s->p, '\0', s->len) == NULL);
}

/* STATUS_REPLY with `flags`, and the versions tail when `v` is given. */
static size_t write_status(uint8_t *out, size_t cap, uint64_t id,
                           const struct proto_status *st,
                           const struct proto_versions *v)
{
        struct wcursor w;
        unsigned i;

        if (st->n_members > PROTO_MAX_MEMBERS) {
                return 0;
        }
        for (i = 0; i < st->n_members; i++) {
                if (!valid_address(&st->members[i].raft_address) ||
                    !valid_address(&st->members[i].client_address)) {
                        return 0;
                }
        }
        if (v != NULL &&
            (v->release.len == 0 || v->release.len > PROTO_RELEASE_MAX ||
             memchr(v->release.p, '\0', v->release.len) != NULL)) {
                return 0;
        }
        proto_frame_begin(&w, out, cap, PROTO_STATUS_REPLY,
                          v != NULL ? PROTO_FLAG_VERSIONS : 0, id);
        fields_put(&w, FIELDS(status_fields), st);
        for (i = 0; i < st->n_members; i++) {
                fields_put(&w, FIELDS(member_fields), &st->members[i]);
        }
        if (v != NULL) {
                fields_put(&w, FIELDS(versions_fields), v);
        }
        return proto_frame_finish(&w);
}

size_t proto_write_status(uint8_t *out, size_t cap, uint64_t id,
                          const struct proto_status *st)
{
        return write_status(out, cap, id, st, NULL);
}

size_t proto_write_status_versions(uint8_t *out, size_t cap, uint64_t id,
                                   const struct proto_status *st,
                                   const struct proto_versions *v)
{
        return write_status(out, cap, id, st, v);
}

size_t proto_write_status_request(uint8_t *out, size_t cap, uint64_t id,
                                  uint16_t flags)
{
        struct wcursor w;

        if (flags != 0 && flags != PROTO_FLAG_VERSIONS) {
                return 0;
        }
        proto_frame_begin(&w, out, cap, PROTO_STATUS, flags, id);
        return proto_frame_finish(&w);
}

/* ---- Body readers --------------------------------------------------------
 */

bool proto_read_done(const struct rcursor *r)
{
        return !r->bad && r->left == 0;
}

/* Addresses and messages: at most `max` bytes and no NUL, since the writers
 * take C strings and a peer that sends otherwise is broken. */
static bool valid_text(const struct proto_string *s, size_t max)
{
        return s->len <= max &&
               (s->len == 0 || memchr(s->p, '\0', s->len) == NULL);
}

int proto_read_u64(const uint8_t *body, size_t len, uint64_t *v)
{
        struct rcursor r;

        rcursor_init(&r, body, len);
        *v = rcursor_u64(&r);
        return proto_read_done(&r) ? 0 : BATON_EMALFORMED;
}

int proto_read_u32(const uint8_t *body, size_t len, uint32_t *v)
{
        struct rcursor r;

        rcursor_init(&r, body, len);
        *v = rcursor_u32(&r);
        return proto_read_done(&r) ? 0 : BATON_EMALFORMED;
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
            !valid_text(raft_address, PROTO_ADDRESS_MAX) ||
            !valid_text(client_address, PROTO_ADDRESS_MAX)) {
                return BATON_EMALFORMED;
        }
        return 0;
}

int proto_read_result(const uint8_t *body, size_t len, struct proto_result *res)
{
        struct rcursor r;

        rcursor_init(&r, body, len);
        fields_get(&r, FIELDS(result_fields), res);
        res->client_name.p = NULL;
        res->client_name.len = 0;
        return proto_read_done(&r) ? 0 : BATON_EMALFORMED;
}

int proto_read_result_names(const uint8_t *body, size_t len,
                            struct proto_result *res)
{
        struct rcursor r;

        rcursor_init(&r, body, len);
        fields_get(&r, FIELDS(result_fields), res);
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
        if (!proto_read_done(&r) || !valid_text(address, PROTO_ADDRESS_MAX)) {
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
        if (!proto_read_done(&r) || !valid_text(message, PROTO_MESSAGE_MAX)) {
                return BATON_EMALFORMED;
        }
        return 0;
}

int proto_read_status(const uint8_t *body, size_t len, struct proto_status *st)
{
        struct proto_versions v;

        return proto_read_status_versions(body, len, 0, st, &v);
}

int proto_read_status_versions(const uint8_t *body, size_t len, uint16_t flags,
                               struct proto_status *st,
                               struct proto_versions *v)
{
        struct rcursor r;
        unsigned i;

        memset(st, 0, sizeof *st);
        memset(v, 0, sizeof *v);
        rcursor_init(&r, body, len);
        fields_get(&r, FIELDS(status_fields), st);
        if (r.bad || st->n_members > PROTO_MAX_MEMBERS) {
                st->n_members = 0;
                return BATON_EMALFORMED;
        }
        for (i = 0; i < st->n_members; i++) {
                struct proto_member *m = &st->members[i];

                fields_get(&r, FIELDS(member_fields), m);
                if (r.bad || !valid_text(&m->raft_address, PROTO_ADDRESS_MAX) ||
                    !valid_text(&m->client_address, PROTO_ADDRESS_MAX)) {
                        return BATON_EMALFORMED;
                }
        }
        if (flags & PROTO_FLAG_VERSIONS) {
                fields_get(&r, FIELDS(versions_fields), v);
                if (r.bad || v->release.len == 0 ||
                    !valid_text(&v->release, PROTO_RELEASE_MAX)) {
                        memset(v, 0, sizeof *v);
                        return BATON_EMALFORMED;
                }
        }
        return proto_read_done(&r) ? 0 : BATON_EMALFORMED;
}
