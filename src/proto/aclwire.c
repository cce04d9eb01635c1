/* The access list requests and their answer on the client protocol. */
#include <string.h>

#include "../../include/baton/errors.h"
#include "../lib/cursor.h"
#include "frame.h"
#include "aclwire.h"

/* An identity or a subject: 1..255 bytes, no NUL. */
static bool identity_ok(const struct proto_string *s)
{
        return s->len > 0 && s->p != NULL && memchr(s->p, '\0', s->len) == NULL;
}

/* A prefix: 0..255 bytes, no NUL. */
static bool prefix_ok(const struct proto_string *s)
{
        return s->len == 0 ||
               (s->p != NULL && memchr(s->p, '\0', s->len) == NULL);
}

static bool prefix_kind_ok(uint8_t kind)
{
        return kind == PROTO_ACL_KIND_PREFIX ||
               kind == PROTO_ACL_KIND_GROUP_PREFIX;
}

static bool request_ok(const struct proto_acl_request *r)
{
        /* The ops before prefix rules carry no kind and no prefix. */
        bool plain = r->kind == 0 && r->prefix.len == 0;
        bool rule = prefix_kind_ok(r->kind) && identity_ok(&r->identity) &&
                    prefix_ok(&r->prefix);

        switch (r->op) {
        case PROTO_ACL_LIST:
                return plain && r->role == 0 && r->identity.len == 0;
        case PROTO_ACL_SET:
                return plain && r->role <= 3 && identity_ok(&r->identity);
        case PROTO_ACL_REMOVE:
                return plain && r->role == 0 && identity_ok(&r->identity);
        case PROTO_ACL_RULE_SET:
                return rule && r->role >= 1 && r->role <= PROTO_ACL_PERMS_ALL;
        case PROTO_ACL_RULE_REMOVE:
                return rule && r->role == 0;
        default:
                return false;
        }
}

static bool is_rule_op(uint8_t op)
{
        return op == PROTO_ACL_RULE_SET || op == PROTO_ACL_RULE_REMOVE;
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
        if (is_rule_op(r->op)) {
                wcursor_u8(&w, r->kind);
                wcursor_u8(&w, r->prefix.len);
                wcursor_bytes(&w, r->prefix.p, r->prefix.len);
        }
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
        if (!c.bad && is_rule_op(r->op)) {
                r->kind = rcursor_u8(&c);
                r->prefix.len = rcursor_u8(&c);
                r->prefix.p = (const char *)rcursor_bytes(&c, r->prefix.len);
        }
        if (!proto_read_done(&c) || !request_ok(r)) {
                return BATON_EMALFORMED;
        }
        return 0;
}

static bool prefix_rule_ok(const struct proto_acl_prefix_rule *x)
{
        return prefix_kind_ok(x->kind) && x->perms >= 1 &&
               x->perms <= PROTO_ACL_PERMS_ALL && identity_ok(&x->subject) &&
               prefix_ok(&x->prefix);
}

size_t proto_write_acl_reply(uint8_t *out, size_t cap, uint64_t id,
                             const struct proto_acl_reply *r)
{
        struct wcursor w;
        unsigned i;

        if (r->n > PROTO_ACL_RULES_MAX || r->n_prefix > PROTO_ACL_PREFIX_MAX) {
                return 0;
        }
        for (i = 0; i < r->n_prefix; i++) {
                if (!prefix_rule_ok(&r->prefix[i])) {
                        return 0;
                }
        }
        proto_frame_begin(&w, out, cap, PROTO_ACL_REPLY, 0, id);
        /* Format 1 while there are no prefix rules: the bytes a release
         * before them reads. */
        wcursor_u8(&w, r->n_prefix > 0 ? 2 : 1);
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
        if (r->n_prefix > 0) {
                wcursor_u16(&w, r->n_prefix);
        }
        for (i = 0; i < r->n_prefix; i++) {
                const struct proto_acl_prefix_rule *x = &r->prefix[i];
                wcursor_u8(&w, x->kind);
                wcursor_u8(&w, x->perms);
                wcursor_u8(&w, x->subject.len);
                wcursor_bytes(&w, x->subject.p, x->subject.len);
                wcursor_u8(&w, x->prefix.len);
                wcursor_bytes(&w, x->prefix.p, x->prefix.len);
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
        if (c.bad || format < 1 || r->n > PROTO_ACL_RULES_MAX) {
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
        if (format >= 2) {
                r->n_prefix = rcursor_u16(&c);
                if (c.bad || r->n_prefix > PROTO_ACL_PREFIX_MAX) {
                        return BATON_EMALFORMED;
                }
        }
        for (i = 0; i < r->n_prefix; i++) {
                struct proto_acl_prefix_rule *x = &r->prefix[i];
                x->kind = rcursor_u8(&c);
                x->perms = rcursor_u8(&c);
                x->subject.len = rcursor_u8(&c);
                x->subject.p = (const char *)rcursor_bytes(&c, x->subject.len);
                x->prefix.len = rcursor_u8(&c);
                x->prefix.p = (const char *)rcursor_bytes(&c, x->prefix.len);
                if (c.bad || !prefix_rule_ok(x)) {
                        return BATON_EMALFORMED;
                }
        }
        return proto_read_done(&c) ? 0 : BATON_EMALFORMED;
}
