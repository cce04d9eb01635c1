/* Who may do what: the roles of client certificate identities, and which
 * requests each role allows. */
#include "roles.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../../include/baton/errors.h"
#include "../../lib/quotaname.h"
#include "../../proto/proto.h"

_Static_assert((int)ROLES_NONE == (int)ACL_NONE &&
                   (int)ROLES_READ == (int)ACL_READ &&
                   (int)ROLES_LOCK == (int)ACL_LOCK &&
                   (int)ROLES_ADMIN == (int)ACL_ADMIN,
               "the access list's roles are the server's");

static const char *const names[] = {
    [ROLES_NONE] = "none",
    [ROLES_READ] = "read",
    [ROLES_LOCK] = "lock",
    [ROLES_ADMIN] = "admin",
};

#define N_NAMES (sizeof names / sizeof names[0])

const char *roles_name(int role)
{
        if (role < 0 || (size_t)role >= N_NAMES) {
                return "unknown";
        }
        return names[role];
}

int roles_parse(const char *name, uint8_t *role, char *msg, size_t size)
{
        size_t i;

        for (i = 0; i < N_NAMES; i++) {
                if (strcmp(name, names[i]) == 0) {
                        *role = (uint8_t)i;
                        return 0;
                }
        }
        return settings_fail(
            msg, size, "'%s' is not a role (admin, lock, read, none)", name);
}

static bool blank(char ch)
{
        return ch == ' ' || ch == '\t';
}

/* Trim `value`'s blanks (its text is then [*start, *end)) and return
 * where its last word starts (*start when it has one word or none). */
static size_t last_word(const char *value, size_t *start, size_t *end)
{
        size_t word;

        *end = strlen(value);
        *start = 0;
        while (*end > 0 && blank(value[*end - 1])) {
                (*end)--;
        }
        while (*start < *end && blank(value[*start])) {
                (*start)++;
        }
        word = *end;
        while (word > *start && !blank(value[word - 1])) {
                word--;
        }
        return word;
}

int roles_add(struct config *c, const char *value, char *msg, size_t size)
{
        size_t start, end, word;
        struct config_role *r;
        char role_name[16];
        uint8_t role = ROLES_NONE;
        unsigned i;

        word = last_word(value, &start, &end);
        if (word == start) {
                return settings_fail(
                    msg, size, "expected 'IDENTITY ROLE', got '%s'", value);
        }
        if (end - word >= sizeof role_name) {
                return settings_fail(msg, size, "'%s' ends in no role", value);
        }
        memcpy(role_name, value + word, end - word);
        role_name[end - word] = '\0';
        if (roles_parse(role_name, &role, msg, size) != 0) {
                return BATON_EINVAL;
        }
        while (word > start && blank(value[word - 1])) {
                word--;
        }
        if (word - start >= CONFIG_IDENTITY_MAX) {
                return settings_fail(msg, size,
                                     "identity too long (at most %d bytes)",
                                     CONFIG_IDENTITY_MAX - 1);
        }
        if (c->n_roles >= CONFIG_MAX_ROLES) {
                return settings_fail(msg, size, "too many roles (at most %d)",
                                     CONFIG_MAX_ROLES);
        }
        r = &c->roles[c->n_roles];
        memset(r, 0, sizeof *r);
        memcpy(r->identity, value + start, word - start);
        for (i = 0; i < c->n_roles; i++) {
                if (strcmp(c->roles[i].identity, r->identity) == 0) {
                        return settings_fail(msg, size,
                                             "identity '%s' given twice",
                                             r->identity);
                }
        }
        r->role = role;
        c->n_roles++;
        return 0;
}

enum roles_role roles_for(const struct config *c, const char *identity)
{
        unsigned i;

        /* What acl_role() decides on roles_config_acl()'s table, without
         * building one (a table with room for every rule is large). */
        for (i = 0; i < c->n_roles && i < CONFIG_MAX_ROLES; i++) {
                if (strcmp(c->roles[i].identity, identity) == 0) {
                        return (enum roles_role)c->roles[i].role;
                }
        }
        return acl_is_node(c->tls_peer_identity, identity)
                   ? ROLES_NONE
                   : (enum roles_role)c->default_role;
}

void roles_config_acl(const struct config *c, struct acl *out)
{
        unsigned i;

        acl_start(out, c->default_role);
        for (i = 0; i < c->n_roles && i < CONFIG_MAX_ROLES; i++) {
                const char *id = c->roles[i].identity;
                (void)acl_put(out, id, strlen(id), c->roles[i].role);
        }
        for (i = 0; i < c->n_rules && i < CONFIG_MAX_RULES; i++) {
                const struct config_rule *r = &c->rules[i];
                (void)acl_rule_put(out, r->kind, r->subject, strlen(r->subject),
                                   r->prefix, strlen(r->prefix), r->perms);
        }
        for (i = 0; i < c->n_quotas && i < CONFIG_MAX_QUOTAS; i++) {
                const struct config_quota *q = &c->quotas[i];
                (void)acl_quota_put(out, q->subject, strlen(q->subject),
                                    q->limit);
        }
}

/* The prefix of a rule line ending at `end` (after its last blank-free
 * run was taken as PERMS): a "quoted" string (no quote or backslash
 * inside) or a bare word, into `out`; `*start_of` is where it began. 0 or
 * BATON_EINVAL. */
static int rule_prefix(const char *value, size_t begin, size_t end, char *out,
                       size_t *start_of, char *msg, size_t size)
{
        size_t at = end;

        if (end > begin && value[end - 1] == '"') {
                at = end - 1;
                while (at > begin && value[at - 1] != '"') {
                        if (value[at - 1] == '\\') {
                                return settings_fail(
                                    msg, size,
                                    "a quoted prefix holds no backslash "
                                    "(use batonctl rule add)");
                        }
                        at--;
                }
                if (at == begin) {
                        return settings_fail(msg, size,
                                             "unterminated quoted prefix");
                }
                *start_of = at - 1;
                end--;
        } else {
                while (at > begin && !blank(value[at - 1])) {
                        at--;
                }
                if (memchr(value + at, '"', end - at) != NULL) {
                        return settings_fail(msg, size,
                                             "unterminated quoted prefix");
                }
                *start_of = at;
        }
        if (end - at >= CONFIG_PREFIX_MAX) {
                return settings_fail(msg, size,
                                     "prefix too long (at most %d bytes)",
                                     CONFIG_PREFIX_MAX - 1);
        }
        memcpy(out, value + at, end - at);
        out[end - at] = '\0';
        return 0;
}

int rules_add(struct config *c, const char *value, char *msg, size_t size)
{
        size_t start, end, word, pre = 0;
        struct config_rule r;
        char perms[32];
        const char *subject;
        unsigned i;

        memset(&r, 0, sizeof r);
        word = last_word(value, &start, &end);
        if (end - word >= sizeof perms || word == start) {
                return settings_fail(
                    msg, size, "expected 'SUBJECT PREFIX PERMS', got '%s'",
                    value);
        }
        memcpy(perms, value + word, end - word);
        perms[end - word] = '\0';
        if (acl_perms_parse(perms, &r.perms) != 0) {
                return settings_fail(msg, size,
                                     "'%s' is not a list of permissions "
                                     "(read, lock, manage)",
                                     perms);
        }
        while (word > start && blank(value[word - 1])) {
                word--;
        }
        if (rule_prefix(value, start, word, r.prefix, &pre, msg, size) != 0) {
                return BATON_EINVAL;
        }
        while (pre > start && blank(value[pre - 1])) {
                pre--;
        }
        if (pre == start) {
                return settings_fail(
                    msg, size, "expected 'SUBJECT PREFIX PERMS', got '%s'",
                    value);
        }
        subject = value + start;
        r.kind = ACL_RULE_PREFIX;
        if (pre - start > 6 && strncmp(subject, "group:", 6) == 0) {
                r.kind = ACL_RULE_GROUP_PREFIX;
                subject += 6;
        }
        if ((size_t)(value + pre - subject) >= CONFIG_IDENTITY_MAX) {
                return settings_fail(msg, size,
                                     "subject too long (at most %d bytes)",
                                     CONFIG_IDENTITY_MAX - 1);
        }
        memcpy(r.subject, subject, (size_t)(value + pre - subject));
        if (c->n_rules >= CONFIG_MAX_RULES) {
                return settings_fail(msg, size, "too many rules (at most %d)",
                                     CONFIG_MAX_RULES);
        }
        for (i = 0; i < c->n_rules; i++) {
                if (c->rules[i].kind == r.kind &&
                    strcmp(c->rules[i].subject, r.subject) == 0 &&
                    strcmp(c->rules[i].prefix, r.prefix) == 0) {
                        return settings_fail(
                            msg, size, "rule for '%s' on \"%s\" given twice",
                            value + start, r.prefix);
                }
        }
        c->rules[c->n_rules++] = r;
        return 0;
}

/* One KIND=N word (`len` bytes at `w`) into `limit`. 0 or BATON_EINVAL. */
static int quota_word(const char *w, size_t len, uint32_t *limit, char *msg,
                      size_t size)
{
        int rv = quotaname_parse_word(w, len, limit);

        if (rv == -1) {
                return settings_fail(msg, size,
                                     "'%.*s' is not KIND=N (KIND sessions, "
                                     "locks, waiters, watches or rate)",
                                     (int)len, w);
        }
        if (rv != 0) {
                return settings_fail(msg, size,
                                     "'%.*s': N is 0..4294967295 or none",
                                     (int)len, w);
        }
        return 0;
}

int quotas_add(struct config *c, const char *value, char *msg, size_t size)
{
        struct config_quota q;
        size_t start, end, word;
        unsigned i, k, words = 0;
        bool any = false;

        memset(&q, 0, sizeof q);
        word = last_word(value, &start, &end);
        /* KIND=N words from the end; the subject is what is left. */
        while (word > start && memchr(value + word, '=', end - word) != NULL) {
                if (quota_word(value + word, end - word, q.limit, msg, size) !=
                    0) {
                        return BATON_EINVAL;
                }
                end = word;
                while (end > start && blank(value[end - 1])) {
                        end--;
                }
                word = end;
                while (word > start && !blank(value[word - 1])) {
                        word--;
                }
                words++;
        }
        for (k = 0; k < ACL_QUOTA_KINDS; k++) {
                any = any || q.limit[k] != 0;
        }
        if (end == start || words == 0 || !any) {
                return settings_fail(msg, size,
                                     "expected 'SUBJECT KIND=N ...' limiting "
                                     "something, got '%s'",
                                     value);
        }
        if (end - start >= CONFIG_IDENTITY_MAX) {
                return settings_fail(msg, size,
                                     "subject too long (at most %d bytes)",
                                     CONFIG_IDENTITY_MAX - 1);
        }
        memcpy(q.subject, value + start, end - start);
        if (c->n_quotas >= CONFIG_MAX_QUOTAS) {
                return settings_fail(msg, size, "too many quotas (at most %d)",
                                     CONFIG_MAX_QUOTAS);
        }
        for (i = 0; i < c->n_quotas; i++) {
                if (strcmp(c->quotas[i].subject, q.subject) == 0) {
                        return settings_fail(
                            msg, size, "quota for '%s' given twice", q.subject);
                }
        }
        c->quotas[c->n_quotas++] = q;
        return 0;
}

enum roles_role roles_decide(const struct acl *applied,
                             const struct acl *fallback, const struct config *c,
                             const char *identity)
{
        const struct acl *a = applied->seeded ? applied : fallback;

        return (enum roles_role)acl_role(a, identity, c->tls_peer_identity);
}

/* The least role a request type needs. */
static int needs(uint8_t type)
{
        switch (type) {
        case PROTO_QUERY:
        case PROTO_CHECK:
        case PROTO_LIST:
        case PROTO_SESSIONS:
        case PROTO_STATUS:
        case PROTO_PING:
        case PROTO_WATCH:
        case PROTO_UNWATCH:
                return ROLES_READ;
        case PROTO_COMMAND:
        case PROTO_KEEPALIVE:
        case PROTO_ATTACH:
                return ROLES_LOCK;
        default:
                return ROLES_ADMIN;
        }
}

bool roles_allows(int role, uint8_t type)
{
        return role >= needs(type) && role <= ROLES_ADMIN;
}
