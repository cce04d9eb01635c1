/* The client protocol's frames: the header, the type names, the writing
 * and checking every family shares, and the bodies of no family (COMMAND,
 * PING, PONG and the one-u64 ones). */
#include "proto.h"
#include "frame.h"

#include <string.h>

#include "../../include/baton/errors.h"
#include "../proto/command.h"
#include "../lib/address.h"
#include "../lib/cursor.h"
#include "fields.h"

_Static_assert(COMMAND_ANY_MAX_SIZE <= PROTO_MAX_BODY,
               "a command fits a frame");
_Static_assert(PROTO_ADDRESS_MAX <= UINT8_MAX, "addresses are u8 strings");
_Static_assert(PROTO_ADDRESS_MAX == ADDRESS_MAX &&
                   COMMAND_ADDRESS_MAX == ADDRESS_MAX,
               "every address the parser accepts fits the wire");

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
        case PROTO_SESSIONS:
                return "SESSIONS";
        case PROTO_SESSIONS_REPLY:
                return "SESSIONS_REPLY";
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

/* ---- Header --------------------------------------------------------------
 */

static const struct fields_entry header_fields[] = {
    FIELD(struct proto_header, U8, version),
    FIELD(struct proto_header, U8, type),
    FIELD(struct proto_header, U16, flags),
    FIELD(struct proto_header, U32, length),
    FIELD(struct proto_header, U64, id),
};

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
        if (!known_type(h->type) || !proto_flags_allowed(h->type, h->flags)) {
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

size_t proto_cstr_len(const char *s, size_t max)
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

size_t proto_write_empty(uint8_t *out, size_t cap, uint64_t id, uint8_t type)
{
        struct wcursor w;

        if (type != PROTO_PING && type != PROTO_PONG) {
                return 0;
        }
        begin(&w, out, cap, type, id);
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

/* ---- Body readers --------------------------------------------------------
 */

bool proto_read_done(const struct rcursor *r)
{
        return !r->bad && r->left == 0;
}

bool proto_valid_text(const struct proto_string *s, size_t max)
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
