/* The access list requests and their answer on the client protocol. */
#include <string.h>

#include "../../include/baton/errors.h"
#include "../lib/cursor.h"
#include "frame.h"
#include "aclwire.h"

/* An identity: 1..255 bytes, no NUL. */
static bool identity_ok(const struct proto_string *s)
{
        return s->len > 0 && s->p != NULL && memchr(s->p, '\0', s->len) == NULL;
}

static bool request_ok(const struct proto_acl_request *r)
{
        switch (r->op) {
        case PROTO_ACL_LIST:
                return r->role == 0 && r->identity.len == 0;
        case PROTO_ACL_SET:
                return r->role <= 3 && identity_ok(&r->identity);
        case PROTO_ACL_REMOVE:
                return r->role == 0 && identity_ok(&r->identity);
        default:
                return false;
        }
}

size_t proto_write_acl(uint8_t *out, size_t cap, uint64_t id,
                       const struct proto_acl_request *r)
{
        struct wcursor w;

        if (!request_ok(r)) {
                return 0;
        }
        proto_frame_begin(&w, out, cap, PROTO_ACL, 0, id);
        wcursor_u8(&w, r->op);
        wcursor_u8(&w, r->role);
        wcursor_u8(&w, r->identity.len);
        wcursor_bytes(&w, r->identity.p, r->identity.len);
        return proto_frame_finish(&w);
}

int proto_read_acl(const uint8_t *body, size_t len, struct proto_acl_request *r)
{
        struct rcursor c;

        memset(r, 0, sizeof *r);
        rcursor_init(&c, body, len);
        r->op = rcursor_u8(&c);
        r->role = rcursor_u8(&c);
        r->identity.len = rcursor_u8(&c);
        r->identity.p = (const char *)rcursor_bytes(&c, r->identity.len);
        if (!proto_read_done(&c) || !request_ok(r)) {
                return BATON_EMALFORMED;
        }
        return 0;
}

size_t proto_write_acl_reply(uint8_t *out, size_t cap, uint64_t id,
                             const struct proto_acl_reply *r)
{
        struct wcursor w;
        unsigned i;

        if (r->n > PROTO_ACL_RULES_MAX) {
                return 0;
        }
        proto_frame_begin(&w, out, cap, PROTO_ACL_REPLY, 0, id);
        wcursor_u8(&w, PROTO_ACL_FORMAT);
        wcursor_u8(&w, r->seeded);
        wcursor_u8(&w, r->default_role);
        wcursor_u16(&w, r->n);
        for (i = 0; i < r->n; i++) {
                wcursor_u8(&w, r->rules[i].kind);
                wcursor_u8(&w, r->rules[i].role);
                wcursor_u8(&w, r->rules[i].identity.len);
                wcursor_bytes(&w, r->rules[i].identity.p,
                              r->rules[i].identity.len);
        }
        return proto_frame_finish(&w);
}

int proto_read_acl_reply(const uint8_t *body, size_t len,
                         struct proto_acl_reply *r)
{
        struct rcursor c;
        uint8_t format;
        unsigned i;

        memset(r, 0, sizeof *r);
        rcursor_init(&c, body, len);
        format = rcursor_u8(&c);
        if (!c.bad && format > PROTO_ACL_FORMAT) {
                return BATON_EVERSION;
        }
        r->seeded = rcursor_u8(&c);
        r->default_role = rcursor_u8(&c);
        r->n = rcursor_u16(&c);
        if (c.bad || format != PROTO_ACL_FORMAT || r->n > PROTO_ACL_RULES_MAX) {
                return BATON_EMALFORMED;
        }
        for (i = 0; i < r->n; i++) {
                struct proto_acl_rule *x = &r->rules[i];
                x->kind = rcursor_u8(&c);
                x->role = rcursor_u8(&c);
                x->identity.len = rcursor_u8(&c);
                x->identity.p =
                    (const char *)rcursor_bytes(&c, x->identity.len);
                if (c.bad || !identity_ok(&x->identity)) {
                        return BATON_EMALFORMED;
                }
        }
        return proto_read_done(&c) ? 0 : BATON_EMALFORMED;
}
