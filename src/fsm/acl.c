/* The replicated access list: which role each client identity has. */
#include "acl.h"

#include <string.h>

#include "../../include/baton/errors.h"
#include "../lib/cursor.h"

static const char *const names[] = {
    [ACL_NONE] = "none",
    [ACL_READ] = "read",
    [ACL_LOCK] = "lock",
    [ACL_ADMIN] = "admin",
};

const char *acl_role_name(int role)
{
        if (role < 0 || (size_t)role >= sizeof names / sizeof names[0]) {
                return "unknown";
        }
        return names[role];
}

void acl_init(struct acl *a)
{
        memset(a, 0, sizeof *a);
}

void acl_start(struct acl *a, uint8_t default_role)
{
        acl_init(a);
        a->seeded = true;
        a->default_role = default_role;
}

/* Rule order: kind, then identity bytes, then length. */
static int compare(uint8_t kind, const char *id, size_t len,
                   const struct acl_rule *r)
{
        size_t n = len < r->len ? len : r->len;
        int c;

        if (kind != r->kind) {
                return kind < r->kind ? -1 : 1;
        }
        c = memcmp(id, r->identity, n);
        if (c != 0) {
                return c;
        }
        return len == r->len ? 0 : (len < r->len ? -1 : 1);
}

/* Where the rule (kind, id) is or would go. */
static unsigned position(const struct acl *a, uint8_t kind, const char *id,
                         size_t len, bool *found)
{
        unsigned i = 0;
        int c = 1;

        while (i < a->n && (c = compare(kind, id, len, &a->rules[i])) > 0) {
                i++;
        }
        *found = i < a->n && c == 0;
        return i;
}

static bool identity_ok(const char *id, size_t len)
{
        return id != NULL && len > 0 && len <= ACL_IDENTITY_MAX &&
               memchr(id, '\0', len) == NULL;
}

int acl_put(struct acl *a, const char *identity, size_t len, uint8_t role)
{
        bool found;
        unsigned i;
        struct acl_rule *r;

        if (!identity_ok(identity, len) || role > ACL_ADMIN) {
                return BATON_EINVAL;
        }
        i = position(a, ACL_RULE_IDENTITY, identity, len, &found);
        if (!found) {
                if (a->n == ACL_MAX) {
                        return BATON_EINVAL;
                }
                memmove(&a->rules[i + 1], &a->rules[i],
                        (a->n - i) * sizeof a->rules[0]);
                a->n++;
        }
        r = &a->rules[i];
        memset(r, 0, sizeof *r);
        r->kind = ACL_RULE_IDENTITY;
        r->role = role;
        r->len = (uint8_t)len;
        memcpy(r->identity, identity, len);
        return 0;
}

/* Whether someone can still change the list: a rule or the default gives
 * admin. */
static bool has_admin(const struct acl *a)
{
        unsigned i;

        if (a->default_role == ACL_ADMIN) {
                return true;
        }
        for (i = 0; i < a->n; i++) {
                if (a->rules[i].role == ACL_ADMIN) {
                        return true;
                }
        }
        return false;
}

static int apply_change(struct acl *a, const struct command *c)
{
        struct acl next = *a;
        bool found;
        unsigned i;
        int rv;

        if (c->mode == COMMAND_ACL_SET) {
                rv = acl_put(&next, c->name, c->name_len, c->role);
                if (rv != 0) {
                        return rv;
                }
        } else {
                i = position(&next, ACL_RULE_IDENTITY, c->name, c->name_len,
                             &found);
                if (!found) {
                        return BATON_ENOTFOUND;
                }
                memmove(&next.rules[i], &next.rules[i + 1],
                        (next.n - i - 1) * sizeof next.rules[0]);
                next.n--;
        }
        if (has_admin(a) && !has_admin(&next)) {
                return BATON_EINVAL;
        }
        *a = next;
        return 0;
}

int acl_apply(struct acl *a, const struct command *c)
{
        struct acl fresh;
        int rv;

        if (c->type != COMMAND_ACL) {
                return BATON_EINVAL;
        }
        if (c->mode == COMMAND_ACL_SEED) {
                if (a->seeded) {
                        return 0; /* a later seed: the first one stands */
                }
                rv = acl_decode(&fresh, c->list, c->list_len);
                if (rv != 0) {
                        return BATON_ECORRUPT;
                }
                *a = fresh;
                return 0;
        }
        if (!a->seeded) {
                return BATON_EBUSY;
        }
        return apply_change(a, c);
}

const struct acl_rule *acl_find(const struct acl *a, const char *identity)
{
        size_t len = strlen(identity);
        bool found;
        unsigned i = position(a, ACL_RULE_IDENTITY, identity, len, &found);

        return found ? &a->rules[i] : NULL;
}

bool acl_is_node(const char *pattern, const char *identity)
{
        const char *at;
        size_t pre, post, len, i;

        if (pattern == NULL || (at = strstr(pattern, "{id}")) == NULL) {
                return false;
        }
        pre = (size_t)(at - pattern);
        post = strlen(at + 4);
        len = strlen(identity);
        if (len <= pre + post || memcmp(identity, pattern, pre) != 0 ||
            memcmp(identity + len - post, at + 4, post) != 0) {
                return false;
        }
        for (i = pre; i < len - post; i++) {
                if (identity[i] < '0' || identity[i] > '9') {
                        return false;
                }
        }
        return true;
}

uint8_t acl_role(const struct acl *a, const char *identity,
                 const char *node_pattern)
{
        const struct acl_rule *r = acl_find(a, identity);

        if (r != NULL) {
                return r->role;
        }
        return acl_is_node(node_pattern, identity) ? ACL_NONE : a->default_role;
}

bool acl_equal(const struct acl *a, const struct acl *b)
{
        unsigned i;

        if (a->seeded != b->seeded || a->default_role != b->default_role ||
            a->n != b->n) {
                return false;
        }
        for (i = 0; i < a->n; i++) {
                const struct acl_rule *x = &a->rules[i], *y = &b->rules[i];
                if (x->kind != y->kind || x->role != y->role ||
                    x->len != y->len ||
                    memcmp(x->identity, y->identity, x->len)) {
                        return false;
                }
        }
        return true;
}

size_t acl_encode(const struct acl *a, uint8_t *buf, size_t cap)
{
        struct wcursor w;
        unsigned i;

        wcursor_init(&w, buf, cap);
        wcursor_u8(&w, ACL_FORMAT);
        wcursor_u8(&w, a->default_role);
        wcursor_u16(&w, (uint16_t)a->n);
        wcursor_u8(&w, 0);
        for (i = 0; i < a->n; i++) {
                const struct acl_rule *r = &a->rules[i];
                wcursor_u8(&w, r->kind);
                wcursor_u8(&w, r->role);
                wcursor_u8(&w, r->len);
                wcursor_bytes(&w, r->identity, r->len);
        }
        return w.len;
}

int acl_decode(struct acl *a, const uint8_t *buf, size_t len)
{
        struct acl fresh;
        struct rcursor r;
        unsigned i, n;
        uint8_t format;

        rcursor_init(&r, buf, len);
        format = rcursor_u8(&r);
        if (!r.bad && format > ACL_FORMAT) {
                return BATON_EVERSION;
        }
        acl_start(&fresh, rcursor_u8(&r));
        n = rcursor_u16(&r);
        if (r.bad || format != ACL_FORMAT || rcursor_u8(&r) != 0 ||
            fresh.default_role > ACL_ADMIN || n > ACL_MAX) {
                return BATON_ECORRUPT;
        }
        for (i = 0; i < n; i++) {
                uint8_t kind = rcursor_u8(&r);
                uint8_t role = rcursor_u8(&r);
                uint8_t id_len = rcursor_u8(&r);
                const char *id = (const char *)rcursor_bytes(&r, id_len);
                /* Ascending, valid: what acl_put() builds. */
                if (r.bad || kind != ACL_RULE_IDENTITY ||
                    (fresh.n > 0 && compare(kind, id, id_len,
                                            &fresh.rules[fresh.n - 1]) <= 0) ||
                    acl_put(&fresh, id, id_len, role) != 0) {
                        return BATON_ECORRUPT;
                }
        }
        if (r.left != 0) {
                return BATON_ECORRUPT;
        }
        *a = fresh;
        return 0;
}
