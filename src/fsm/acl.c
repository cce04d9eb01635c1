/* The replicated access list: which role each client identity has. */
#include "acl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../include/baton/admin.h"
#include "../../include/baton/errors.h"
#include "../lib/cursor.h"
#include "../lib/permname.h"
#include "../lib/quotaname.h"

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
                /* Its bytes (kind, role, identity) count against the
                 * limit with the prefix rules': past it, the table would
                 * not decode. */
                if (a->n == ACL_MAX ||
                    acl_encode(a, NULL, 0) + 3 + len > ACL_ENCODED_LIMIT) {
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

/* Two byte strings in order: bytes, then length. */
static int compare_bytes(const char *a, size_t a_len, const char *b,
                         size_t b_len)
{
        size_t n = a_len < b_len ? a_len : b_len;
        int c = n > 0 ? memcmp(a, b, n) : 0;

        if (c != 0) {
                return c;
        }
        return a_len == b_len ? 0 : (a_len < b_len ? -1 : 1);
}

/* Prefix rule order: kind, subject, prefix. */
static int compare_prefix(uint8_t kind, const char *subject, size_t s_len,
                          const char *prefix, size_t p_len,
                          const struct acl_prefix_rule *r)
{
        int c;

        if (kind != r->kind) {
                return kind < r->kind ? -1 : 1;
        }
        c = compare_bytes(subject, s_len, r->subject, r->subject_len);
        return c != 0 ? c
                      : compare_bytes(prefix, p_len, r->prefix, r->prefix_len);
}

/* Where the prefix rule (kind, subject, prefix) is or would go: a binary
 * search, as a table of hundreds is looked up on every change. */
static unsigned prefix_position(const struct acl *a, uint8_t kind,
                                const char *subject, size_t s_len,
                                const char *prefix, size_t p_len, bool *found)
{
        unsigned lo = 0, hi = a->n_prefix;

        *found = false;
        while (lo < hi) {
                unsigned mid = lo + (hi - lo) / 2;
                int c = compare_prefix(kind, subject, s_len, prefix, p_len,
                                       &a->prefix[mid]);
                if (c == 0) {
                        *found = true;
                        return mid;
                }
                if (c < 0) {
                        hi = mid;
                } else {
                        lo = mid + 1;
                }
        }
        return lo;
}

static bool prefix_text_ok(const char *p, size_t len)
{
        return len <= ACL_PREFIX_LEN_MAX &&
               (len == 0 || (p != NULL && memchr(p, '\0', len) == NULL));
}

int acl_rule_put(struct acl *a, uint8_t kind, const char *subject,
                 size_t subject_len, const char *prefix, size_t prefix_len,
                 uint8_t perms)
{
        struct acl_prefix_rule *r;
        bool found;
        unsigned i;

        if ((kind != ACL_RULE_PREFIX && kind != ACL_RULE_GROUP_PREFIX) ||
            !identity_ok(subject, subject_len) ||
            !prefix_text_ok(prefix, prefix_len) || perms == 0 ||
            perms > ACL_PERM_ALL) {
                return BATON_EINVAL;
        }
        /* lock and manage each include read. */
        perms |= ACL_PERM_READ;
        i = prefix_position(a, kind, subject, subject_len, prefix, prefix_len,
                            &found);
        if (!found) {
                /* The new rule's bytes: kind, perms, two strings. */
                size_t more =
                    4 + subject_len + prefix_len + (a->n_prefix == 0 ? 2 : 0);
                if (a->n_prefix == ACL_PREFIX_MAX ||
                    acl_encode(a, NULL, 0) + more > ACL_ENCODED_LIMIT) {
                        return BATON_EINVAL;
                }
                memmove(&a->prefix[i + 1], &a->prefix[i],
                        (a->n_prefix - i) * sizeof a->prefix[0]);
                a->n_prefix++;
        }
        r = &a->prefix[i];
        memset(r, 0, sizeof *r);
        r->kind = kind;
        r->perms = perms;
        r->subject_len = (uint8_t)subject_len;
        r->prefix_len = (uint8_t)prefix_len;
        memcpy(r->subject, subject, subject_len);
        if (prefix_len > 0) {
                memcpy(r->prefix, prefix, prefix_len);
        }
        return 0;
}

bool acl_has_prefix_rules(const struct acl *a)
{
        return a->seeded && a->n_prefix > 0;
}

uint64_t acl_principal(const char *identity, size_t len)
{
        uint64_t h = 14695981039346656037ULL;
        size_t i;

        for (i = 0; i < len; i++) {
                h ^= (uint8_t)identity[i];
                h *= 1099511628211ULL;
        }
        return h != 0 ? h : 1;
}

static bool is_default(const char *subject, size_t len)
{
        return len == 1 && subject[0] == ACL_QUOTA_DEFAULT[0];
}

/* Where the quota of `subject` is or would go (by subject bytes). */
static unsigned quota_position(const struct acl *a, const char *subject,
                               size_t len, bool *found)
{
        unsigned i = 0;
        int c = 1;

        while (i < a->n_quota &&
               (c = compare_bytes(subject, len, a->quota[i].subject,
                                  a->quota[i].subject_len)) > 0) {
                i++;
        }
        *found = i < a->n_quota && c == 0;
        return i;
}

int acl_quota_put(struct acl *a, const char *subject, size_t len,
                  const uint32_t limit[ACL_QUOTA_KINDS])
{
        struct acl_quota *q;
        bool found, any = false;
        unsigned i, k;

        for (k = 0; k < ACL_QUOTA_KINDS; k++) {
                any = any || limit[k] != 0;
        }
        if (!identity_ok(subject, len) || !any) {
                return BATON_EINVAL;
        }
        i = quota_position(a, subject, len, &found);
        if (!found) {
                /* Its bytes (subject, limits), and the counts of format
                 * 3 the first quota brings. */
                size_t more =
                    1 + len + 4 * ACL_QUOTA_KINDS + (a->n_quota == 0 ? 4 : 0);
                if (a->n_quota == ACL_QUOTA_MAX ||
                    acl_encode(a, NULL, 0) + more > ACL_ENCODED_LIMIT) {
                        return BATON_EINVAL;
                }
                memmove(&a->quota[i + 1], &a->quota[i],
                        (a->n_quota - i) * sizeof a->quota[0]);
                a->n_quota++;
        }
        q = &a->quota[i];
        memset(q, 0, sizeof *q);
        q->principal =
            is_default(subject, len) ? 0 : acl_principal(subject, len);
        memcpy(q->limit, limit, sizeof q->limit);
        q->subject_len = (uint8_t)len;
        memcpy(q->subject, subject, len);
        return 0;
}

bool acl_has_quotas(const struct acl *a)
{
        return a->seeded && a->n_quota > 0;
}

const uint32_t *acl_quota_of(const struct acl *a, uint64_t principal)
{
        const uint32_t *fallback = NULL;
        unsigned i;

        if (principal == 0 || !a->seeded) {
                return NULL;
        }
        /* At most ACL_QUOTA_MAX, and asked only by the commands of
         * identities while quotas exist. */
        for (i = 0; i < a->n_quota; i++) {
                if (a->quota[i].principal == principal) {
                        return a->quota[i].limit;
                }
                if (a->quota[i].principal == 0) {
                        fallback = a->quota[i].limit;
                }
        }
        return fallback;
}

_Static_assert((int)ACL_QUOTA_SESSIONS == BATON_QUOTA_SESSIONS &&
                   (int)ACL_QUOTA_LOCKS == BATON_QUOTA_LOCKS &&
                   (int)ACL_QUOTA_WAITERS == BATON_QUOTA_WAITERS &&
                   (int)ACL_QUOTA_WATCHES == BATON_QUOTA_WATCHES &&
                   (int)ACL_QUOTA_RATE == BATON_QUOTA_RATE &&
                   (int)ACL_QUOTA_KINDS == BATON_QUOTA_KINDS,
               "the state machine's quota kinds are libbaton's");

const char *acl_quota_text(const uint32_t limit[ACL_QUOTA_KINDS], char *buf,
                           size_t size)
{
        return quotaname_format(limit, buf, size);
}

const char *acl_quota_name(int kind)
{
        return quotaname(kind);
}

/* Whether `who` is the subject of rule `r`. */
static bool matches(const struct acl_prefix_rule *r, const struct acl_who *who)
{
        size_t at = 0;

        if (r->kind == ACL_RULE_PREFIX) {
                return who->identity != NULL &&
                       strcmp(who->identity, r->subject) == 0;
        }
        while (who->groups != NULL && at < who->groups_len) {
                const char *g = who->groups + at;
                size_t len = strnlen(g, who->groups_len - at);
                if (len == r->subject_len && memcmp(g, r->subject, len) == 0) {
                        return true;
                }
                at += len + 1;
        }
        return false;
}

uint8_t acl_name_perms(const struct acl *a, const struct acl_who *who,
                       const char *name, size_t len)
{
        uint8_t perms = 0;
        unsigned i;

        if (!acl_has_prefix_rules(a)) {
                return ACL_PERM_ALL;
        }
        for (i = 0; i < a->n_prefix && perms != ACL_PERM_ALL; i++) {
                const struct acl_prefix_rule *r = &a->prefix[i];
                if ((r->perms & ~perms) != 0 && r->prefix_len <= len &&
                    memcmp(name, r->prefix, r->prefix_len) == 0 &&
                    matches(r, who)) {
                        perms |= r->perms;
                }
        }
        return perms;
}

bool acl_prefix_reaches(const struct acl *a, const struct acl_who *who,
                        const char *prefix, size_t len, uint8_t perm)
{
        unsigned i;

        if (!acl_has_prefix_rules(a)) {
                return true;
        }
        for (i = 0; i < a->n_prefix; i++) {
                const struct acl_prefix_rule *r = &a->prefix[i];
                size_t n = r->prefix_len < len ? r->prefix_len : len;
                if ((r->perms & perm) == perm &&
                    memcmp(prefix, r->prefix, n) == 0 && matches(r, who)) {
                        return true;
                }
        }
        return false;
}

/* The permissions' names are libbaton's (src/lib/permname.h), whose
 * BATON_PERM_* bits are enum acl_perm's. */
_Static_assert(BATON_PERM_READ == ACL_PERM_READ &&
                   BATON_PERM_LOCK == ACL_PERM_LOCK &&
                   BATON_PERM_MANAGE == ACL_PERM_MANAGE,
               "one set of permission bits");
const char *acl_perms_name(uint8_t perms, char *buf, size_t size)
{
        return permname_format(perms, buf, size);
}

int acl_perms_parse(const char *text, uint8_t *perms)
{
        int got;

        if (permname_parse(text, &got) != 0) {
                return BATON_EINVAL;
        }
        *perms = (uint8_t)(got | ACL_PERM_READ);
        return 0;
}

/* A rule's kind and prefix, from the table of its RULE_SET or
 * RULE_REMOVE (validated by command_decode()). */
static void rule_of(const struct command *c, uint8_t *kind, const char **prefix,
                    size_t *len)
{
        *kind = c->list[0];
        *len = c->list[1];
        *prefix = (const char *)c->list + 2;
}

static int apply_rule(struct acl *a, const struct command *c)
{
        const char *prefix;
        uint8_t kind;
        size_t len;
        bool found;
        unsigned i;

        if (c->list == NULL || c->list_len < 2) {
                return BATON_EINVAL;
        }
        rule_of(c, &kind, &prefix, &len);
        if (c->mode == COMMAND_ACL_RULE_SET) {
                return acl_rule_put(a, kind, c->name, c->name_len, prefix, len,
                                    c->role);
        }
        i = prefix_position(a, kind, c->name, c->name_len, prefix, len, &found);
        if (!found) {
                return BATON_ENOTFOUND;
        }
        memmove(&a->prefix[i], &a->prefix[i + 1],
                (a->n_prefix - i - 1) * sizeof a->prefix[0]);
        a->n_prefix--;
        return 0;
}

/* A quota's set or remove (validated by command_decode()). */
static int apply_quota(struct acl *a, const struct command *c)
{
        uint32_t limit[ACL_QUOTA_KINDS];
        struct rcursor r;
        bool found;
        unsigned i, k;

        if (c->mode == COMMAND_ACL_QUOTA_SET) {
                if (c->list == NULL || c->list_len != 4 * ACL_QUOTA_KINDS) {
                        return BATON_EINVAL;
                }
                rcursor_init(&r, c->list, c->list_len);
                for (k = 0; k < ACL_QUOTA_KINDS; k++) {
                        limit[k] = rcursor_u32(&r);
                }
                return acl_quota_put(a, c->name, c->name_len, limit);
        }
        i = quota_position(a, c->name, c->name_len, &found);
        if (!found) {
                return BATON_ENOTFOUND;
        }
        memmove(&a->quota[i], &a->quota[i + 1],
                (a->n_quota - i - 1) * sizeof a->quota[0]);
        a->n_quota--;
        return 0;
}

/* Whether the rule at `i` is the last way to administer: the default
 * does not give admin, and no other rule does. */
static bool last_admin(const struct acl *a, unsigned i)
{
        unsigned j;

        if (a->default_role == ACL_ADMIN || a->rules[i].role != ACL_ADMIN) {
                return false;
        }
        for (j = 0; j < a->n; j++) {
                if (j != i && a->rules[j].role == ACL_ADMIN) {
                        return false;
                }
        }
        return true;
}

/* A SET or REMOVE of an identity's role, decided before anything moves
 * (apply needs no scratch table, so it cannot fail for memory). */
static int apply_change(struct acl *a, const struct command *c)
{
        bool found;
        unsigned i =
            position(a, ACL_RULE_IDENTITY, c->name, c->name_len, &found);

        if (c->mode == COMMAND_ACL_SET) {
                if (found && c->role != ACL_ADMIN && last_admin(a, i)) {
                        return BATON_EINVAL;
                }
                return acl_put(a, c->name, c->name_len, c->role);
        }
        if (!found) {
                return BATON_ENOTFOUND;
        }
        if (last_admin(a, i)) {
                return BATON_EINVAL;
        }
        memmove(&a->rules[i], &a->rules[i + 1],
                (a->n - i - 1) * sizeof a->rules[0]);
        a->n--;
        return 0;
}

int acl_apply(struct acl *a, const struct command *c)
{
        struct acl *fresh;
        int rv;

        if (c->type != COMMAND_ACL) {
                return BATON_EINVAL;
        }
        if (c->mode == COMMAND_ACL_SEED) {
                if (a->seeded) {
                        return 0; /* a later seed: the first one stands */
                }
                fresh = malloc(sizeof *fresh);
                if (fresh == NULL) {
                        return BATON_ENOMEM;
                }
                rv = acl_decode(fresh, c->list, c->list_len);
                if (rv == 0) {
                        *a = *fresh;
                }
                free(fresh);
                return rv != 0 ? BATON_ECORRUPT : 0;
        }
        if (!a->seeded) {
                return BATON_EBUSY;
        }
        if (c->mode == COMMAND_ACL_RULE_SET ||
            c->mode == COMMAND_ACL_RULE_REMOVE) {
                return apply_rule(a, c);
        }
        if (c->mode == COMMAND_ACL_QUOTA_SET ||
            c->mode == COMMAND_ACL_QUOTA_REMOVE) {
                return apply_quota(a, c);
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
            a->n != b->n || a->n_prefix != b->n_prefix ||
            a->n_quota != b->n_quota) {
                return false;
        }
        for (i = 0; i < a->n_quota; i++) {
                const struct acl_quota *x = &a->quota[i], *y = &b->quota[i];
                if (memcmp(x->limit, y->limit, sizeof x->limit) != 0 ||
                    compare_bytes(x->subject, x->subject_len, y->subject,
                                  y->subject_len) != 0) {
                        return false;
                }
        }
        for (i = 0; i < a->n; i++) {
                const struct acl_rule *x = &a->rules[i], *y = &b->rules[i];
                if (x->kind != y->kind || x->role != y->role ||
                    x->len != y->len ||
                    memcmp(x->identity, y->identity, x->len)) {
                        return false;
                }
        }
        for (i = 0; i < a->n_prefix; i++) {
                const struct acl_prefix_rule *x = &a->prefix[i];
                if (x->perms != b->prefix[i].perms ||
                    compare_prefix(x->kind, x->subject, x->subject_len,
                                   x->prefix, x->prefix_len,
                                   &b->prefix[i]) != 0) {
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
        wcursor_u8(&w, a->n_quota > 0 ? 3 : a->n_prefix > 0 ? 2 : 1);
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
        if (a->n_prefix == 0 && a->n_quota == 0) {
                return w.len;
        }
        wcursor_u16(&w, (uint16_t)a->n_prefix);
        for (i = 0; i < a->n_prefix; i++) {
                const struct acl_prefix_rule *r = &a->prefix[i];
                wcursor_u8(&w, r->kind);
                wcursor_u8(&w, r->perms);
                wcursor_u8(&w, r->subject_len);
                wcursor_bytes(&w, r->subject, r->subject_len);
                wcursor_u8(&w, r->prefix_len);
                wcursor_bytes(&w, r->prefix, r->prefix_len);
        }
        if (a->n_quota == 0) {
                return w.len;
        }
        wcursor_u16(&w, (uint16_t)a->n_quota);
        for (i = 0; i < a->n_quota; i++) {
                const struct acl_quota *q = &a->quota[i];
                unsigned k;
                wcursor_u8(&w, q->subject_len);
                wcursor_bytes(&w, q->subject, q->subject_len);
                for (k = 0; k < ACL_QUOTA_KINDS; k++) {
                        wcursor_u32(&w, q->limit[k]);
                }
        }
        return w.len;
}

/* Format 2's prefix rules, ascending and valid as acl_rule_put() builds
 * them. 0 or BATON_ECORRUPT. */
static int decode_prefix(struct acl *fresh, struct rcursor *r, uint8_t format)
{
        unsigned i, n = rcursor_u16(r);

        /* Format 3 writes the count of prefix rules also when it is 0. */
        if (r->bad || (n == 0 && format == 2) || n > ACL_PREFIX_MAX) {
                return BATON_ECORRUPT;
        }
        for (i = 0; i < n; i++) {
                uint8_t kind = rcursor_u8(r);
                uint8_t perms = rcursor_u8(r);
                uint8_t s_len = rcursor_u8(r);
                const char *s = (const char *)rcursor_bytes(r, s_len);
                uint8_t p_len = rcursor_u8(r);
                const char *p = (const char *)rcursor_bytes(r, p_len);
                if (r->bad || (perms & ACL_PERM_READ) == 0 ||
                    (fresh->n_prefix > 0 &&
                     compare_prefix(kind, s, s_len, p, p_len,
                                    &fresh->prefix[fresh->n_prefix - 1]) <=
                         0) ||
                    acl_rule_put(fresh, kind, s, s_len, p, p_len, perms) != 0) {
                        return BATON_ECORRUPT;
                }
        }
        return 0;
}

/* Format 3's quotas, ascending and valid as acl_quota_put() builds
 * them. 0 or BATON_ECORRUPT. */
static int decode_quotas(struct acl *fresh, struct rcursor *r)
{
        uint32_t limit[ACL_QUOTA_KINDS];
        unsigned i, k, n = rcursor_u16(r);

        if (r->bad || n == 0 || n > ACL_QUOTA_MAX) {
                return BATON_ECORRUPT;
        }
        for (i = 0; i < n; i++) {
                uint8_t len = rcursor_u8(r);
                const char *s = (const char *)rcursor_bytes(r, len);
                const struct acl_quota *last =
                    fresh->n_quota > 0 ? &fresh->quota[fresh->n_quota - 1]
                                       : NULL;
                for (k = 0; k < ACL_QUOTA_KINDS; k++) {
                        limit[k] = rcursor_u32(r);
                }
                if (r->bad ||
                    (last != NULL && compare_bytes(s, len, last->subject,
                                                   last->subject_len) <= 0) ||
                    acl_quota_put(fresh, s, len, limit) != 0) {
                        return BATON_ECORRUPT;
                }
        }
        return 0;
}

/* Decode into `fresh`; see acl_decode(). */
static int decode_into(struct acl *fresh, const uint8_t *buf, size_t len)
{
        struct rcursor r;
        unsigned i, n;
        uint8_t format;

        rcursor_init(&r, buf, len);
        format = rcursor_u8(&r);
        if (!r.bad && format > ACL_FORMAT) {
                return BATON_EVERSION;
        }
        acl_start(fresh, rcursor_u8(&r));
        n = rcursor_u16(&r);
        if (r.bad || format == 0 || rcursor_u8(&r) != 0 ||
            fresh->default_role > ACL_ADMIN || n > ACL_MAX) {
                return BATON_ECORRUPT;
        }
        for (i = 0; i < n; i++) {
                uint8_t kind = rcursor_u8(&r);
                uint8_t role = rcursor_u8(&r);
                uint8_t id_len = rcursor_u8(&r);
                const char *id = (const char *)rcursor_bytes(&r, id_len);
                /* Ascending, valid: what acl_put() builds. */
                if (r.bad || kind != ACL_RULE_IDENTITY ||
                    (fresh->n > 0 &&
                     compare(kind, id, id_len, &fresh->rules[fresh->n - 1]) <=
                         0) ||
                    acl_put(fresh, id, id_len, role) != 0) {
                        return BATON_ECORRUPT;
                }
        }
        if (format >= 2 && decode_prefix(fresh, &r, format) != 0) {
                return BATON_ECORRUPT;
        }
        if (format == 3 && decode_quotas(fresh, &r) != 0) {
                return BATON_ECORRUPT;
        }
        return r.left != 0 ? BATON_ECORRUPT : 0;
}

int acl_decode(struct acl *a, const uint8_t *buf, size_t len)
{
        struct acl *fresh = malloc(sizeof *fresh);
        int rv;

        if (fresh == NULL) {
                return BATON_ENOMEM;
        }
        rv = decode_into(fresh, buf, len);
        if (rv == 0) {
                *a = *fresh;
        }
        free(fresh);
        return rv;
}
