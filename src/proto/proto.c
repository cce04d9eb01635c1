/* The client protocol: frame codec and incremental reader, with no I/O. */
#include "proto.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "../../include/baton.h"
#include "../proto/command.h"
#include "../lib/address.h"
#include "../lib/cursor.h"

/* The largest STATUS_REPLY body: fixed fields, then every member at its
 * largest (id, role, two strings of PROTO_ADDRESS_MAX bytes). */
#define STATUS_FIXED_SIZE (8 + 1 + 8 * 8 + 1)
#define MEMBER_MAX_SIZE   (8 + 1 + 2 * (1 + PROTO_ADDRESS_MAX))
#define STATUS_MAX_SIZE                                                        \
        (STATUS_FIXED_SIZE + PROTO_MAX_MEMBERS * MEMBER_MAX_SIZE)

_Static_assert(STATUS_MAX_SIZE <= PROTO_MAX_BODY, "status reply fits a frame");
_Static_assert(COMMAND_MAX_SIZE <= PROTO_MAX_BODY, "a command fits a frame");
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

/* Lock names follow command.h: 1..COMMAND_NAME_MAX bytes, no NUL. */
static bool valid_name(const char *name, size_t len)
{
        return len > 0 && len <= COMMAND_NAME_MAX && name != NULL &&
               memchr(name, '\0', len) == NULL;
}

/* ---- Header --------------------------------------------------------------
 */

static void put_header(struct wcursor *w, const struct proto_header *h)
{
        wcursor_u8(w, h->version);
        wcursor_u8(w, h->type);
        wcursor_u16(w, h->flags);
        wcursor_u32(w, h->length);
        wcursor_u64(w, h->id);
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
        h->version = rcursor_u8(&r);
        h->type = rcursor_u8(&r);
        h->flags = rcursor_u16(&r);
        h->length = rcursor_u32(&r);
        h->id = rcursor_u64(&r);
        if (h->version != PROTO_VERSION) {
                return BATON_EVERSION;
        }
        if (h->flags != 0 || !known_type(h->type)) {
                return BATON_EMALFORMED;
        }
        if (h->length > max_body) {
                return BATON_ETOOBIG;
        }
        return 0;
}

/* ---- Reader --------------------------------------------------------------
 */

void proto_reader_init(struct proto_reader *r, uint32_t max_body,
                       const struct mem *mem)
{
        memset(r, 0, sizeof *r);
        r->mem = mem != NULL ? mem : &mem_libc;
        r->max_body = max_body;
}

void proto_reader_close(struct proto_reader *r)
{
        mem_free(r->mem, r->body);
        r->body = NULL;
        r->body_cap = 0;
        r->body_len = 0;
        r->head_len = 0;
        r->ready = false;
}

/* Fails the reader for good: the stream has lost its framing. */
static long fail(struct proto_reader *r, int err)
{
        r->err = err;
        r->ready = false;
        return err;
}

/* Makes room for the body of r->h, whose length the header check has
 * already bounded by max_body. The buffer only ever grows, and is reused. */
static int reserve_body(struct proto_reader *r)
{
        size_t need = r->h.length;

        if (need <= r->body_cap) {
                return 0;
        }
        mem_free(r->mem, r->body);
        r->body = NULL;
        r->body_cap = 0;
        r->body = mem_alloc(r->mem, need);
        if (r->body == NULL) {
                return BATON_ENOMEM;
        }
        r->body_cap = need;
        return 0;
}

long proto_reader_feed(struct proto_reader *r, const uint8_t *buf, size_t len)
{
        size_t used = 0;
        size_t n;
        int rv;

        if (r->err != 0) {
                return r->err;
        }
        if (r->ready) {
                /* The caller is done with the previous frame. */
                r->ready = false;
                r->head_len = 0;
                r->body_len = 0;
        }
        if (len > LONG_MAX) {
                len = LONG_MAX;
        }
        if (r->head_len < PROTO_HEADER_SIZE) {
                n = PROTO_HEADER_SIZE - r->head_len;
                if (n > len) {
                        n = len;
                }
                if (n > 0) {
                        memcpy(r->head + r->head_len, buf, n);
                }
                r->head_len += n;
                used += n;
                if (r->head_len < PROTO_HEADER_SIZE) {
                        return (long)used;
                }
                rv = proto_header_decode(&r->h, r->head, r->max_body);
                if (rv != 0) {
                        return fail(r, rv);
                }
                rv = reserve_body(r);
                if (rv != 0) {
                        return fail(r, rv);
                }
                r->body_len = 0;
        }
        n = r->h.length - r->body_len;
        if (n > len - used) {
                n = len - used;
        }
        if (n > 0) {
                memcpy(r->body + r->body_len, buf + used, n);
        }
        r->body_len += n;
        used += n;
        if (r->body_len == r->h.length) {
                r->ready = true;
        }
        return (long)used;
}

/* ---- Writers -------------------------------------------------------------
 *
 * Each writer walks header and body through one wcursor (a NULL `out` only
 * counts), then patches the body length into the header.
 */

static void begin(struct wcursor *w, uint8_t *out, size_t cap, uint8_t type,
                  uint64_t id)
{
        struct proto_header h = {PROTO_VERSION, type, 0, 0, id};

        wcursor_init(w, out, cap);
        put_header(w, &h);
}

static size_t finish(struct wcursor *w)
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

static void put_string(struct wcursor *w, const char *s, size_t len)
{
        wcursor_u8(w, (uint8_t)len);
        wcursor_bytes(w, s, len);
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
        return finish(&w);
}

size_t proto_write_keepalive(uint8_t *out, size_t cap, uint64_t id,
                             uint64_t session)
{
        struct wcursor w;

        begin(&w, out, cap, PROTO_KEEPALIVE, id);
        wcursor_u64(&w, session);
        return finish(&w);
}

size_t proto_write_query(uint8_t *out, size_t cap, uint64_t id,
                         const char *name, size_t name_len)
{
        struct wcursor w;

        if (!valid_name(name, name_len)) {
                return 0;
        }
        begin(&w, out, cap, PROTO_QUERY, id);
        put_string(&w, name, name_len);
        return finish(&w);
}

size_t proto_write_check(uint8_t *out, size_t cap, uint64_t id,
                         const char *name, size_t name_len, uint64_t token)
{
        struct wcursor w;

        if (!valid_name(name, name_len)) {
                return 0;
        }
        begin(&w, out, cap, PROTO_CHECK, id);
        wcursor_u64(&w, token);
        put_string(&w, name, name_len);
        return finish(&w);
}

size_t proto_write_empty(uint8_t *out, size_t cap, uint64_t id, uint8_t type)
{
        struct wcursor w;

        if (type != PROTO_STATUS && type != PROTO_PING && type != PROTO_PONG) {
                return 0;
        }
        begin(&w, out, cap, type, id);
        return finish(&w);
}

size_t proto_write_member_add(uint8_t *out, size_t cap, uint64_t id,
                              uint64_t member, const char *raft_address,
                              const char *client_address)
{
        size_t raft_len = cstr_len(raft_address, PROTO_ADDRESS_MAX);
        size_t client_len = cstr_len(client_address, PROTO_ADDRESS_MAX);
        struct wcursor w;

        if (raft_len == 0 || raft_len == SIZE_MAX || client_len == 0 ||
            client_len == SIZE_MAX) {
                return 0;
        }
        begin(&w, out, cap, PROTO_MEMBER_ADD, id);
        wcursor_u64(&w, member);
        put_string(&w, raft_address, raft_len);
        put_string(&w, client_address, client_len);
        return finish(&w);
}

size_t proto_write_id(uint8_t *out, size_t cap, uint64_t id, uint8_t type,
                      uint64_t member)
{
        struct wcursor w;

        if (type != PROTO_MEMBER_REMOVE && type != PROTO_TRANSFER) {
                return 0;
        }
        begin(&w, out, cap, type, id);
        wcursor_u64(&w, member);
        return finish(&w);
}

size_t proto_write_result(uint8_t *out, size_t cap, uint64_t id,
                          const struct proto_result *r)
{
        struct wcursor w;

        begin(&w, out, cap, PROTO_RESULT, id);
        wcursor_u32(&w, (uint32_t)r->status);
        wcursor_u8(&w, r->kind);
        wcursor_u64(&w, r->index);
        wcursor_u64(&w, r->session);
        wcursor_u64(&w, r->owner);
        wcursor_u64(&w, r->token);
        wcursor_u32(&w, r->count);
        wcursor_u32(&w, r->waiters);
        return finish(&w);
}

size_t proto_write_not_leader(uint8_t *out, size_t cap, uint64_t id,
                              uint64_t leader_id, const char *address)
{
        size_t len = cstr_len(address, PROTO_ADDRESS_MAX);
        struct wcursor w;

        if (len == SIZE_MAX) {
                return 0;
        }
        begin(&w, out, cap, PROTO_NOT_LEADER, id);
        wcursor_u64(&w, leader_id);
        put_string(&w, address, len);
        return finish(&w);
}

size_t proto_write_error(uint8_t *out, size_t cap, uint64_t id, int status,
                         const char *message)
{
        size_t len = cstr_len(message, PROTO_MESSAGE_MAX);
        struct wcursor w;

        if (len == SIZE_MAX) {
                return 0;
        }
        begin(&w, out, cap, PROTO_ERROR, id);
        wcursor_u32(&w, (uint32_t)status);
        put_string(&w, message, len);
        return finish(&w);
}

/* A member's addresses may be empty (not known yet), never too long. */
static bool valid_address(const struct proto_string *s)
{
        return s->len <= PROTO_ADDRESS_MAX && (s->len == 0 || s->p != NULL) &&
               (s->len == 0 || memchr(s->p, '\0', s->len) == NULL);
}

size_t proto_write_status(uint8_t *out, size_t cap, uint64_t id,
                          const struct proto_status *st)
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
        begin(&w, out, cap, PROTO_STATUS_REPLY, id);
        wcursor_u64(&w, st->id);
        wcursor_u8(&w, st->role);
        wcursor_u64(&w, st->term);
        wcursor_u64(&w, st->leader_id);
        wcursor_u64(&w, st->commit_index);
        wcursor_u64(&w, st->applied_index);
        wcursor_u64(&w, st->last_index);
        wcursor_u64(&w, st->sessions);
        wcursor_u64(&w, st->locks);
        wcursor_u64(&w, st->waiters);
        wcursor_u8(&w, st->n_members);
        for (i = 0; i < st->n_members; i++) {
                const struct proto_member *m = &st->members[i];

                wcursor_u64(&w, m->id);
                wcursor_u8(&w, m->role);
                put_string(&w, m->raft_address.p, m->raft_address.len);
                put_string(&w, m->client_address.p, m->client_address.len);
        }
        return finish(&w);
}

size_t proto_write_keepalive_ok(uint8_t *out, size_t cap, uint64_t id,
                                uint32_t ttl_ms)
{
        struct wcursor w;

        begin(&w, out, cap, PROTO_KEEPALIVE_OK, id);
        wcursor_u32(&w, ttl_ms);
        return finish(&w);
}

/* A LIST prefix: 0..COMMAND_NAME_MAX bytes, no NUL. */
static bool valid_prefix(const char *prefix, size_t len)
{
        return len <= COMMAND_NAME_MAX &&
               (len == 0 ||
                (prefix != NULL && memchr(prefix, '\0', len) == NULL));
}

size_t proto_write_list(uint8_t *out, size_t cap, uint64_t id,
                        const char *prefix, size_t prefix_len, uint32_t limit)
{
        struct wcursor w;

        if (!valid_prefix(prefix, prefix_len) || limit == 0 ||
            limit > PROTO_LIST_MAX) {
                return 0;
        }
        begin(&w, out, cap, PROTO_LIST, id);
        put_string(&w, prefix, prefix_len);
        wcursor_u32(&w, limit);
        return finish(&w);
}

size_t proto_write_list_reply(uint8_t *out, size_t cap, uint64_t id,
                              const struct proto_lock_entry *e, uint32_t n,
                              bool more)
{
        struct wcursor w;
        uint32_t i;

        if (n > 0 && e == NULL) {
                return 0;
        }
        for (i = 0; i < n; i++) {
                if (!valid_name(e[i].name.p, e[i].name.len)) {
                        return 0;
                }
        }
        begin(&w, out, cap, PROTO_LIST_REPLY, id);
        wcursor_u32(&w, n);
        wcursor_u8(&w, more ? 1 : 0);
        for (i = 0; i < n; i++) {
                put_string(&w, e[i].name.p, e[i].name.len);
                wcursor_u64(&w, e[i].session);
                wcursor_u64(&w, e[i].owner);
                wcursor_u64(&w, e[i].token);
                wcursor_u32(&w, e[i].count);
                wcursor_u32(&w, e[i].waiters);
        }
        return finish(&w);
}

/* ---- Body readers --------------------------------------------------------
 */

/* Borrows a u8-length string from the body; validity is the caller's. */
static void get_string(struct rcursor *r, struct proto_string *s)
{
        s->len = rcursor_u8(r);
        s->p = (const char *)rcursor_bytes(r, s->len);
}

/* Whether the whole body was read, exactly. */
static bool done(const struct rcursor *r)
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
        return done(&r) ? 0 : BATON_EMALFORMED;
}

int proto_read_u32(const uint8_t *body, size_t len, uint32_t *v)
{
        struct rcursor r;

        rcursor_init(&r, body, len);
        *v = rcursor_u32(&r);
        return done(&r) ? 0 : BATON_EMALFORMED;
}

int proto_read_query(const uint8_t *body, size_t len, struct proto_string *name)
{
        struct rcursor r;

        rcursor_init(&r, body, len);
        get_string(&r, name);
        if (!done(&r)) {
                return BATON_EMALFORMED;
        }
        return valid_name(name->p, name->len) ? 0 : BATON_ENAME;
}

int proto_read_check(const uint8_t *body, size_t len, struct proto_string *name,
                     uint64_t *token)
{
        struct rcursor r;

        rcursor_init(&r, body, len);
        *token = rcursor_u64(&r);
        get_string(&r, name);
        if (!done(&r)) {
                return BATON_EMALFORMED;
        }
        return valid_name(name->p, name->len) ? 0 : BATON_ENAME;
}

int proto_read_member_add(const uint8_t *body, size_t len, uint64_t *member,
                          struct proto_string *raft_address,
                          struct proto_string *client_address)
{
        struct rcursor r;

        rcursor_init(&r, body, len);
        *member = rcursor_u64(&r);
        get_string(&r, raft_address);
        get_string(&r, client_address);
        if (!done(&r) || raft_address->len == 0 || client_address->len == 0 ||
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
        res->status = (int32_t)rcursor_u32(&r);
        res->kind = rcursor_u8(&r);
        res->index = rcursor_u64(&r);
        res->session = rcursor_u64(&r);
        res->owner = rcursor_u64(&r);
        res->token = rcursor_u64(&r);
        res->count = rcursor_u32(&r);
        res->waiters = rcursor_u32(&r);
        return done(&r) ? 0 : BATON_EMALFORMED;
}

int proto_read_not_leader(const uint8_t *body, size_t len, uint64_t *leader_id,
                          struct proto_string *address)
{
        struct rcursor r;

        rcursor_init(&r, body, len);
        *leader_id = rcursor_u64(&r);
        get_string(&r, address);
        if (!done(&r) || !valid_text(address, PROTO_ADDRESS_MAX)) {
                return BATON_EMALFORMED;
        }
        return 0;
}

int proto_read_error(const uint8_t *body, size_t len, int *status,
                     struct proto_string *message)
{
        struct rcursor r;

        rcursor_init(&r, body, len);
        *status = (int32_t)rcursor_u32(&r);
        get_string(&r, message);
        if (!done(&r) || !valid_text(message, PROTO_MESSAGE_MAX)) {
                return BATON_EMALFORMED;
        }
        return 0;
}

int proto_read_status(const uint8_t *body, size_t len, struct proto_status *st)
{
        struct rcursor r;
        unsigned i;

        memset(st, 0, sizeof *st);
        rcursor_init(&r, body, len);
        st->id = rcursor_u64(&r);
        st->role = rcursor_u8(&r);
        st->term = rcursor_u64(&r);
        st->leader_id = rcursor_u64(&r);
        st->commit_index = rcursor_u64(&r);
        st->applied_index = rcursor_u64(&r);
        st->last_index = rcursor_u64(&r);
        st->sessions = rcursor_u64(&r);
        st->locks = rcursor_u64(&r);
        st->waiters = rcursor_u64(&r);
        st->n_members = rcursor_u8(&r);
        if (r.bad || st->n_members > PROTO_MAX_MEMBERS) {
                st->n_members = 0;
                return BATON_EMALFORMED;
        }
        for (i = 0; i < st->n_members; i++) {
                struct proto_member *m = &st->members[i];

                m->id = rcursor_u64(&r);
                m->role = rcursor_u8(&r);
                get_string(&r, &m->raft_address);
                get_string(&r, &m->client_address);
                if (r.bad || !valid_text(&m->raft_address, PROTO_ADDRESS_MAX) ||
                    !valid_text(&m->client_address, PROTO_ADDRESS_MAX)) {
                        return BATON_EMALFORMED;
                }
        }
        return done(&r) ? 0 : BATON_EMALFORMED;
}

int proto_read_list(const uint8_t *body, size_t len,
                    struct proto_string *prefix, uint32_t *limit)
{
        struct rcursor r;

        rcursor_init(&r, body, len);
        get_string(&r, prefix);
        *limit = rcursor_u32(&r);
        if (!done(&r) || *limit == 0 || *limit > PROTO_LIST_MAX) {
                return BATON_EMALFORMED;
        }
        return valid_prefix(prefix->p, prefix->len) ? 0 : BATON_ENAME;
}

int proto_read_list_reply(const uint8_t *body, size_t len,
                          struct proto_lock_entry *e, size_t cap, uint32_t *n,
                          bool *more)
{
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
                get_string(&r, &e[i].name);
                e[i].session = rcursor_u64(&r);
                e[i].owner = rcursor_u64(&r);
                e[i].token = rcursor_u64(&r);
                e[i].count = rcursor_u32(&r);
                e[i].waiters = rcursor_u32(&r);
                if (r.bad || !valid_name(e[i].name.p, e[i].name.len)) {
                        return BATON_EMALFORMED;
                }
        }
        if (!done(&r)) {
                return BATON_EMALFORMED;
        }
        *n = count;
        *more = flag == 1;
        return 0;
}

static void copy_string(char *dst, size_t cap, const struct proto_string *s)
{
        size_t n = s->len < cap - 1 ? s->len : cap - 1;

        if (n > 0) {
                memcpy(dst, s->p, n);
        }
        dst[n] = '\0';
}

void proto_status_export(struct baton_status *out, const char *endpoint,
                         const struct proto_status *ps)
{
        unsigned i;

        memset(out, 0, sizeof *out);
        snprintf(out->endpoint, sizeof out->endpoint, "%s",
                 endpoint != NULL ? endpoint : "");
        out->id = ps->id;
        out->role = ps->role;
        out->term = ps->term;
        out->leader_id = ps->leader_id;
        out->commit_index = ps->commit_index;
        out->applied_index = ps->applied_index;
        out->last_index = ps->last_index;
        out->sessions = ps->sessions;
        out->locks = ps->locks;
        out->waiters = ps->waiters;
        out->n_members = ps->n_members;
        for (i = 0; i < ps->n_members; i++) {
                out->members[i].id = ps->members[i].id;
                out->members[i].role = ps->members[i].role;
                copy_string(out->members[i].raft_address,
                            sizeof out->members[i].raft_address,
                            &ps->members[i].raft_address);
                copy_string(out->members[i].client_address,
                            sizeof out->members[i].client_address,
                            &ps->members[i].client_address);
        }
}
