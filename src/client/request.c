/* One request of libbaton on its way to the cluster. */
#include "request.h"

#include <stdlib.h>
#include <string.h>

#include "../proto/reply.h"
#include "../proto/query.h"
#include "../proto/member.h"
#include "../proto/status.h"
#include "../proto/keepalive.h"
#include "../proto/list.h"
#include "../proto/watch.h"

/* A request with room for a frame of `cap` bytes. */
static struct request *alloc_room(uint8_t type, size_t cap)
{
        struct request *r = calloc(1, sizeof *r + cap);

        if (r != NULL) {
                queue_init(&r->link);
                r->type = type;
                r->kind = REQUEST_CALL;
                r->frame_cap = cap;
        }
        return r;
}

static struct request *alloc(uint8_t type)
{
        return alloc_room(type, REQUEST_FRAME_MAX);
}

struct request *request_command(const struct command *k, int *rv)
{
        uint8_t body[COMMAND_ANY_MAX_SIZE];
        struct request *r;
        size_t n = command_encode(k, body, sizeof body);

        if (n == 0) {
                *rv = command_validate(k) == BATON_ENAME ? BATON_ENAME
                                                         : BATON_EINVAL;
                return NULL;
        }
        r = alloc_room(PROTO_COMMAND, PROTO_HEADER_SIZE + n);
        if (r == NULL) {
                *rv = BATON_ENOMEM;
                return NULL;
        }
        r->cmd = k->type;
        r->session = k->session;
        r->seq = k->seq;
        r->owner = k->owner;
        r->mode = k->mode;
        r->permits = k->permits;
        r->limit = k->limit;
        if (k->type == COMMAND_MULTI) {
                /* Its first name is the one a CANCEL of it names. */
                size_t at = 0;
                const char *first;
                uint8_t mode;
                (void)command_list_next(k, &at, &mode, &first, &r->name_len);
                memcpy(r->name, first, r->name_len);
        } else if (k->type != COMMAND_OPEN && k->name_len > 0) {
                r->name_len = k->name_len;
                memcpy(r->name, k->name, k->name_len);
        }
        r->len = proto_write_command(r->frame, r->frame_cap, 0, body, n);
        if (r->len == 0) {
                request_free(r);
                *rv = BATON_EINVAL;
                return NULL;
        }
        *rv = 0;
        return r;
}

int request_command_of(const struct request *r, struct command *k)
{
        if (r->type != PROTO_COMMAND || r->len < PROTO_HEADER_SIZE) {
                return BATON_EINVAL;
        }
        return command_decode(k, r->frame + PROTO_HEADER_SIZE,
                              r->len - PROTO_HEADER_SIZE);
}

struct request *request_empty(uint8_t type)
{
        struct request *r = alloc(type);

        if (r != NULL) {
                r->len =
                    type == PROTO_STATUS
                        ? proto_write_status_request(r->frame, r->frame_cap, 0,
                                                     0)
                        : proto_write_empty(r->frame, r->frame_cap, 0, type);
        }
        return r;
}

struct request *request_u64(uint8_t type, uint64_t v)
{
        struct request *r = alloc(type);

        if (r == NULL) {
                return NULL;
        }
        if (type == PROTO_KEEPALIVE) {
                r->len = proto_write_keepalive(r->frame, r->frame_cap, 0, 0, v);
                r->session = v;
        } else {
                r->len = proto_write_id(r->frame, r->frame_cap, 0, type, v);
        }
        if (r->len == 0) {
                /* Not a type of one u64: never send an empty frame. */
                free(r);
                return NULL;
        }
        return r;
}

struct request *request_keepalive(uint64_t session)
{
        struct request *r = alloc(PROTO_KEEPALIVE);

        if (r != NULL) {
                r->len = proto_write_keepalive(r->frame, r->frame_cap, 0,
                                               PROTO_FLAG_REVOKED, session);
                r->session = session;
        }
        return r;
}

struct request *request_read(uint8_t type, const char *name, uint8_t name_len,
                             uint64_t token)
{
        struct request *r = alloc(type);

        if (r == NULL) {
                return NULL;
        }
        r->name_len = name_len;
        memcpy(r->name, name, name_len);
        /* QUERY asks for the holder's client name: every server of
         * protocol version 2 gives it. */
        r->len = type == PROTO_QUERY
                     ? proto_write_query(r->frame, r->frame_cap, 0,
                                         PROTO_FLAG_NAMES, name, name_len)
                     : proto_write_check(r->frame, r->frame_cap, 0, name,
                                         name_len, token);
        return r;
}

/* The flags of a LIST, and of the reply it wants. */
static uint16_t list_flags(const struct request *r)
{
        return PROTO_FLAG_NAMES | (r->values != NULL ? PROTO_FLAG_VALUES : 0);
}

struct request *request_list(const char *prefix, uint8_t prefix_len,
                             uint32_t limit, bool values)
{
        struct request *r = alloc(PROTO_LIST);

        if (r == NULL) {
                return NULL;
        }
        r->list = calloc(limit, sizeof *r->list);
        if (values && r->list != NULL) {
                r->values = calloc(limit, sizeof *r->values);
        }
        if (r->list == NULL || (values && r->values == NULL)) {
                free(r->list);
                free(r);
                return NULL;
        }
        r->list_cap = limit;
        r->name_len = prefix_len; /* for a refusal to name */
        if (prefix_len > 0) {
                memcpy(r->name, prefix, prefix_len);
        }
        r->len = proto_write_list(r->frame, r->frame_cap, 0, list_flags(r),
                                  prefix, prefix_len, limit);
        return r;
}

/* The flags of a QUERY of every holder, and of the reply it wants. */
static uint16_t holders_flags(const struct request *r)
{
        return PROTO_FLAG_HOLDERS | (r->values != NULL ? PROTO_FLAG_VALUES : 0);
}

struct request *request_holders(const char *name, uint8_t name_len,
                                uint32_t limit, bool values)
{
        struct request *r = alloc(PROTO_QUERY);

        if (r == NULL) {
                return NULL;
        }
        r->grants = calloc(limit, sizeof *r->grants);
        if (r->grants == NULL) {
                free(r);
                return NULL;
        }
        if (values) {
                r->values = calloc(limit, sizeof *r->values);
                if (r->values == NULL) {
                        free(r->grants);
                        free(r);
                        return NULL;
                }
        }
        r->list_cap = limit;
        r->name_len = name_len;
        memcpy(r->name, name, name_len);
        r->len = proto_write_query(r->frame, r->frame_cap, 0, holders_flags(r),
                                   name, name_len);
        return r;
}

struct request *request_leader(const char *name, uint8_t name_len)
{
        struct request *r = alloc(PROTO_QUERY);

        if (r == NULL) {
                return NULL;
        }
        r->leader = calloc(1, sizeof *r->leader);
        if (r->leader == NULL) {
                free(r);
                return NULL;
        }
        r->name_len = name_len;
        memcpy(r->name, name, name_len);
        r->len = proto_write_query(r->frame, r->frame_cap, 0,
                                   PROTO_FLAG_HOLDERS | PROTO_FLAG_VALUES, name,
                                   name_len);
        return r;
}

struct request *request_watch(const char *name, uint8_t name_len, uint8_t flags,
                              uint64_t from_index, uint32_t from_ord)
{
        struct proto_watch w = {flags, from_index, from_ord, {name, name_len}};
        struct request *r = alloc(PROTO_WATCH);

        if (r == NULL) {
                return NULL;
        }
        r->kind = REQUEST_WATCH;
        r->watch_prefix = flags & PROTO_WATCH_PREFIX;
        r->name_len = name_len;
        if (name_len > 0) {
                memcpy(r->name, name, name_len);
        }
        r->len = proto_write_watch(r->frame, r->frame_cap, 0, &w);
        if (r->len == 0) {
                free(r);
                return NULL;
        }
        return r;
}

/* The WATCH body's position: u8 flags, then u64 from_index, u32 from_ord
 * (proto.h). */
#define WATCH_AT_INDEX (PROTO_HEADER_SIZE + 1)
#define WATCH_AT_ORD   (PROTO_HEADER_SIZE + 1 + 8)

void request_watch_seen(struct request *r, uint64_t index, uint32_t ord)
{
        unsigned i;

        for (i = 0; i < 8; i++) {
                r->frame[WATCH_AT_INDEX + i] = (uint8_t)(index >> (8 * i));
        }
        for (i = 0; i < 4; i++) {
                r->frame[WATCH_AT_ORD + i] = (uint8_t)(ord >> (8 * i));
        }
}

void request_watch_started(struct request *r, uint64_t index, uint32_t ord)
{
        unsigned i;

        for (i = 0; i < 8; i++) {
                if (r->frame[WATCH_AT_INDEX + i] != 0) {
                        return; /* it has a position already */
                }
        }
        request_watch_seen(r, index, ord);
}

bool request_watch_matches(const struct request *r,
                           const struct proto_watch_event *e)
{
        if (r->watch_prefix ? e->name.len < r->name_len
                            : e->name.len != r->name_len) {
                return false;
        }
        return r->name_len == 0 || memcmp(e->name.p, r->name, r->name_len) == 0;
}

bool request_watch_after(const struct request *r,
                         const struct proto_watch_event *e)
{
        uint64_t index = 0;
        uint32_t ord = 0;
        unsigned i;

        for (i = 0; i < 8; i++) {
                index |= (uint64_t)r->frame[WATCH_AT_INDEX + i] << (8 * i);
        }
        for (i = 0; i < 4; i++) {
                ord |= (uint32_t)r->frame[WATCH_AT_ORD + i] << (8 * i);
        }
        return e->index > index || (e->index == index && e->ord > ord);
}

bool request_watch_same(const struct request *a, const struct request *b)
{
        return a->watch_prefix == b->watch_prefix &&
               a->name_len == b->name_len &&
               memcmp(a->name, b->name, a->name_len) == 0;
}

struct request *request_member_add(uint64_t id, const char *raft_address,
                                   const char *client_address, int *rv)
{
        struct request *r = alloc(PROTO_MEMBER_ADD);

        if (r == NULL) {
                *rv = BATON_ENOMEM;
                return NULL;
        }
        r->len = proto_write_member_add(r->frame, r->frame_cap, 0, id,
                                        raft_address, client_address);
        if (r->len == 0) {
                request_free(r);
                *rv = BATON_EINVAL;
                return NULL;
        }
        *rv = 0;
        return r;
}

int request_take_status(struct request *r, const char *peer,
                        const uint8_t *body, uint32_t len)
{
        struct proto_status ps;
        int rv = proto_read_status(body, len, 0, &ps, NULL);

        if (rv != 0 || r->reply == NULL) {
                return rv != 0 ? rv : BATON_EINVAL;
        }
        proto_status_export(r->reply, peer, &ps);
        return 0;
}

/* Copy a client name out of the frame, NUL-terminated. */
static void take_client(char out[PROTO_CLIENT_NAME_MAX + 1],
                        const struct proto_string *s)
{
        if (s->len > 0) {
                memcpy(out, s->p, s->len);
        }
        out[s->len] = '\0';
}

/* A LIST_REPLY of every holder of the lock a QUERY named. */
static int take_grants(struct request *r, const uint8_t *body, uint32_t len)
{
        struct proto_lock_entry *e = calloc(r->list_cap, sizeof *e);
        uint32_t i, n;
        bool more;
        int rv;

        if (e == NULL) {
                return BATON_ENOMEM;
        }
        rv = proto_read_list_reply(body, len, holders_flags(r), e, r->list_cap,
                                   &n, &more);
        for (i = 0; rv == 0 && i < n; i++) {
                struct baton_grant *o = &r->grants[i];
                o->session = e[i].session;
                o->owner = e[i].owner;
                o->token = e[i].token;
                o->count = e[i].count;
                o->mode = e[i].mode;
                o->permits = e[i].permits;
                o->limit = e[i].limit;
                o->waiters = e[i].waiters;
                o->granted_s = e[i].granted_s;
                take_client(o->client_name, &e[i].client_name);
                if (r->values != NULL && e[i].value.len > 0) {
                        memcpy(r->values[i], e[i].value.p, e[i].value.len);
                }
        }
        if (rv == 0) {
                r->list_n = n;
                r->list_more = more;
        }
        free(e);
        return rv;
}

/* A LIST_REPLY of every holder, with values, of the election a QUERY
 * named: its leader (the only holder an election has). */
static int take_leader(struct request *r, const uint8_t *body, uint32_t len)
{
        struct proto_lock_entry *e = calloc(PROTO_LIST_MAX, sizeof *e);
        struct baton_leader *o = r->leader;
        uint32_t n;
        bool more;
        int rv;

        if (e == NULL) {
                return BATON_ENOMEM;
        }
        rv = proto_read_list_reply(body, len,
                                   PROTO_FLAG_HOLDERS | PROTO_FLAG_VALUES, e,
                                   PROTO_LIST_MAX, &n, &more);
        if (rv == 0 && n > 0 && e[0].mode != COMMAND_MODE_ELECTION) {
                rv = BATON_EKIND;
        }
        if (rv == 0 && n > 0) {
                o->held = 1;
                o->session = e[0].session;
                o->owner = e[0].owner;
                o->token = e[0].token;
                o->candidates = e[0].waiters;
                o->since_s = e[0].granted_s;
                take_client(o->client_name, &e[0].client_name);
                if (e[0].value.len > 0) {
                        memcpy(o->value, e[0].value.p, e[0].value.len);
                }
                o->value[e[0].value.len] = '\0';
        }
        free(e);
        return rv;
}

int request_take_list(struct request *r, uint16_t flags, const uint8_t *body,
                      uint32_t len)
{
        struct proto_lock_entry *e;
        uint32_t i, n;
        bool more;
        int rv;

        if (r->leader != NULL &&
            flags == (PROTO_FLAG_HOLDERS | PROTO_FLAG_VALUES)) {
                return take_leader(r, body, len);
        }
        if (r->grants != NULL && flags == holders_flags(r)) {
                return take_grants(r, body, len);
        }
        if (r->list == NULL || flags != list_flags(r)) {
                return BATON_EMALFORMED;
        }
        e = calloc(r->list_cap, sizeof *e);
        if (e == NULL) {
                return BATON_ENOMEM;
        }
        rv = proto_read_list_reply(body, len, flags, e, r->list_cap, &n, &more);
        if (rv == 0) {
                for (i = 0; i < n; i++) {
                        struct baton_lock_info *o = &r->list[i];
                        memcpy(o->name, e[i].name.p, e[i].name.len);
                        o->name[e[i].name.len] = '\0';
                        o->session = e[i].session;
                        o->owner = e[i].owner;
                        o->token = e[i].token;
                        o->count = e[i].count;
                        o->waiters = e[i].waiters;
                        take_client(o->client_name, &e[i].client_name);
                        if (r->values != NULL && e[i].value.len > 0) {
                                memcpy(r->values[i], e[i].value.p,
                                       e[i].value.len);
                        }
                }
                r->list_n = n;
                r->list_more = more;
        }
        free(e);
        return rv;
}

void request_free(struct request *r)
{
        if (r == NULL) {
                return;
        }
        free(r->reply);
        free(r->list);
        free(r->grants);
        free(r->values);
        free(r->leader);
        free(r);
}

int request_take_result(struct request *r, uint16_t flags, const uint8_t *body,
                        uint32_t len, struct proto_result *res)
{
        int rv = proto_read_result(body, len, flags, res);

        if (rv != 0) {
                return rv;
        }
        /* The name lives in the frame: keep a copy with the request. */
        if (res->client_name.len > 0) {
                memcpy(r->client_name, res->client_name.p,
                       res->client_name.len);
        }
        r->client_name[res->client_name.len] = '\0';
        res->client_name.p = r->client_name;
        return 0;
}
