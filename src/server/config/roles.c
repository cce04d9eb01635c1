/* Who may do what: the roles of client certificate identities, and which
 * requests each role allows. */
#include "roles.h"

#include <string.h>

#include "../../../include/baton/errors.h"
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

int roles_add(struct config *c, const char *value, char *msg, size_t size)
{
        size_t end = strlen(value);
        size_t start = 0;
        size_t word;
        struct config_role *r;
        char role_name[16];
        uint8_t role = ROLES_NONE;
        unsigned i;

        while (end > 0 && blank(value[end - 1])) {
                end--;
        }
        while (start < end && blank(value[start])) {
                start++;
        }
        word = end;
        while (word > start && !blank(value[word - 1])) {
                word--;
        }
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
        struct acl lines;

        roles_config_acl(c, &lines);
        return (enum roles_role)acl_role(&lines, identity,
                                         c->tls_peer_identity);
}

void roles_config_acl(const struct config *c, struct acl *out)
{
        unsigned i;

        acl_start(out, c->default_role);
        for (i = 0; i < c->n_roles && i < CONFIG_MAX_ROLES; i++) {
                const char *id = c->roles[i].identity;
                (void)acl_put(out, id, strlen(id), c->roles[i].role);
        }
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
