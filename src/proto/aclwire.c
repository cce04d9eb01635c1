/* The access list requests and their answer on the client protocol. */
#include <string.h>

#include "../../include/baton/errors.h"
#include "../lib/cursor.h"
#include "../lib/quotaname.h"
#include "frame.h"
#include "aclwire.h"

/* Buffers sized for the largest request hold a QUOTA_SET too. */
_Static_assert(2 + 1 + PROTO_ACL_IDENTITY_MAX + 4 * PROTO_QUOTA_KINDS <=
                   PROTO_ACL_REQUEST_MAX,
               "PROTO_ACL_REQUEST_MAX covers a QUOTA_SET");

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

const char *proto_quota_name(int kind)
{
        return quotaname(kind);
}

static bool prefix_kind_ok(uint8_t kind)
{
        return kind == PROTO_ACL_KIND_PREFIX ||
               kind == PROTO_ACL_KIND_GROUP_PREFIX;
}

/* Whether any of `limits` is set: a quota limits something. */
static bool limits_any(const uint32_t limits[PROTO_QUOTA_KINDS])
{
        unsigned k;

        for (k = 0; k < PROTO_QUOTA_KINDS; k++) {
                if (limits[k] != 0) {
                        return true;
                }
        }
        return false;
}

static bool request_ok(const struct proto_acl_request *r)
{
        /* The ops before prefix rules carry no kind and no prefix, and
         * only a QUOTA_SET carries limits. */
        bool plain = r->kind == 0 && r->prefix.len == 0;
        bool limited = limits_any(r->limits);
        bool rule = prefix_kind_ok(r->kind) && identity_ok(&r->identity) &&
                    prefix_ok(&r->prefix);

        if (limited && r->op != PROTO_ACL_QUOTA_SET) {
                return false;
        }
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
        case PROTO_ACL_QUOTA_SET:
                return plain && limited && r->role == 0 &&
                       identity_ok(&r->identity);
        case PROTO_ACL_QUOTA_REMOVE:
                return plain && r->role == 0 && identity_ok(&r->identity);
        default:
                return false;
        }
}

static bool is_rule_op(uint8_t op)
{
        return op == PROTO_ACL_RULE_SET || op == PROTO_ACL_RULE_REMOVE;
}

/* `n` u32s in a row, as a quota's limits and use go. */
static void put_u32s(struct wcursor *w, const uint32_t *v, unsigned n)
{
        unsigned i;

        for (i = 0; i < n; i++) {
                wcursor_u32(w, v[i]);
        }
}

/* Read what put_u32s() writes. */
static void get_u32s(struct rcursor *c, uint32_t *v, unsigned n)
{
        unsigned i;

        for (i = 0; i < n; i++) {
                v[i] = rcursor_u32(c);
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
        if (is_rule_op(r->op)) {
                wcursor_u8(&w, r->kind);
                wcursor_u8(&w, r->prefix.len);
                wcursor_bytes(&w, r->prefix.p, r->prefix.len);
        }
        if (r->op == PROTO_ACL_QUOTA_SET) {
                put_u32s(&w, r->limits, PROTO_QUOTA_KINDS);
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
        if (r->op == PROTO_ACL_QUOTA_SET) {
                get_u32s(&c, r->limits, PROTO_QUOTA_KINDS);
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

static bool quota_ok(const struct proto_acl_quota *q)
{
        return identity_ok(&q->subject) && limits_any(q->limits);
}

/* The oldest format that holds what `r` lists: the bytes a release
 * before prefix rules reads while there are none, and those a release
 * before quotas reads while there are none. */
static uint8_t reply_format(const struct proto_acl_reply *r)
{
        if (r->n_quota > 0) {
                return 3;
        }
        return r->n_prefix > 0 ? 2 : 1;
}

/* Whether every count and entry of `r` is one the reader takes. */
static bool reply_ok(const struct proto_acl_reply *r)
{
        unsigned i;

        if (r->n > PROTO_ACL_RULES_MAX || r->n_prefix > PROTO_ACL_PREFIX_MAX ||
            r->n_quota > PROTO_ACL_QUOTA_MAX) {
                return false;
        }
        for (i = 0; i < r->n_prefix; i++) {
                if (!prefix_rule_ok(&r->prefix[i])) {
                        return false;
                }
        }
        for (i = 0; i < r->n_quota; i++) {
                if (!quota_ok(&r->quotas[i])) {
                        return false;
                }
        }
        return true;
}

size_t proto_write_acl_reply(uint8_t *out, size_t cap, uint64_t id,
                             const struct proto_acl_reply *r)
{
        uint8_t format = reply_format(r);
        struct wcursor w;
        unsigned i;

        if (!reply_ok(r)) {
                return 0;
        }
        proto_frame_begin(&w, out, cap, PROTO_ACL_REPLY, 0, id);
        wcursor_u8(&w, format);
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
        if (format >= 2) {
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
        if (format >= 3) {
                wcursor_u16(&w, r->n_quota);
        }
        for (i = 0; i < r->n_quota; i++) {
                const struct proto_acl_quota *q = &r->quotas[i];
                wcursor_u8(&w, q->subject.len);
                wcursor_bytes(&w, q->subject.p, q->subject.len);
                put_u32s(&w, q->limits, PROTO_QUOTA_KINDS);
                put_u32s(&w, q->used, PROTO_QUOTA_USED);
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
        if (format >= 3) {
                r->n_quota = rcursor_u16(&c);
                if (c.bad || r->n_quota > PROTO_ACL_QUOTA_MAX) {
                        return BATON_EMALFORMED;
                }
        }
        for (i = 0; i < r->n_quota; i++) {
                struct proto_acl_quota *q = &r->quotas[i];
                q->subject.len = rcursor_u8(&c);
                q->subject.p = (const char *)rcursor_bytes(&c, q->subject.len);
                get_u32s(&c, q->limits, PROTO_QUOTA_KINDS);
                get_u32s(&c, q->used, PROTO_QUOTA_USED);
                if (c.bad || !quota_ok(q)) {
                        return BATON_EMALFORMED;
                }
        }
        return proto_read_done(&c) ? 0 : BATON_EMALFORMED;
}
