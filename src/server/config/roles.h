/* Who may do what: the roles of client certificate identities, and which
 * requests each role allows. */
#ifndef SERVER_ROLES_H
#define SERVER_ROLES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../fsm/acl.h"
#include "settings.h"

/*
 * A connection's role, from its certificate identity (roles_for()). Each
 * role allows what the one below it does, and more:
 *
 *   NONE   nothing
 *   READ   QUERY, CHECK, LIST, STATUS, PING
 *   LOCK   and COMMAND (OPEN, CLOSE, ACQUIRE, RELEASE, CANCEL), KEEPALIVE,
 *          ATTACH
 *   ADMIN  and everything else: MEMBER_ADD, MEMBER_REMOVE, TRANSFER and
 *          every admin request added later
 *
 * A role never lets a connection act in a session it has not attached to
 * (gateway.c): ADMIN included.
 */
enum roles_role {
        ROLES_NONE = 0,
        ROLES_READ = 1,
        ROLES_LOCK = 2,
        ROLES_ADMIN = 3,
};

/* "admin", "lock", "read" or "none"; "unknown" for anything else. */
const char *roles_name(int role);

/* The role called `name`: 0, or BATON_EINVAL with a message in `msg`. */
int roles_parse(const char *name, uint8_t *role, char *msg, size_t size);

/*
 * Add one `role = IDENTITY ROLE` line to c->roles: the last word is the
 * role, everything before it (trimmed; it may hold blanks, as a CN may) the
 * identity. A duplicate identity, an empty one, one over
 * CONFIG_IDENTITY_MAX - 1 bytes or more than CONFIG_MAX_ROLES lines is
 * BATON_EINVAL with a message in `msg`.
 */
int roles_add(struct config *c, const char *value, char *msg, size_t size);

/*
 * Add one `rule = SUBJECT PREFIX PERMS` line to c->rules: PERMS the last
 * word (read, lock, manage or a comma-separated list), PREFIX before it
 * (a "quoted" string without quotes or backslashes inside, or a bare
 * word), SUBJECT the rest (an identity, or group:NAME for the group NAME,
 * a certificate OU). A duplicate (subject, prefix), a bad part or more
 * than CONFIG_MAX_RULES lines is BATON_EINVAL with a message in `msg`.
 */
int rules_add(struct config *c, const char *value, char *msg, size_t size);

/*
 * Add one `quota = SUBJECT KIND=N [KIND=N ...]` line to c->quotas: the
 * trailing KIND=N words (KIND sessions, locks, waiters, watches or rate;
 * N 1..4294967295, or 0 or none for no limit), SUBJECT the rest (an
 * identity, or * for every identity without a line of its own). A
 * duplicate subject, an unknown kind, a bad number, a line that limits
 * nothing or more than CONFIG_MAX_QUOTAS lines is BATON_EINVAL with a
 * message in `msg`.
 */
int quotas_add(struct config *c, const char *value, char *msg, size_t size);

/* The role of certificate identity `identity` (borrowed) by the config's
 * lines alone (roles_decide() with no list applied): its line in
 * c->roles, else none for a node identity, else c->default_role.
 * Identities compare as exact bytes. */
enum roles_role roles_for(const struct config *c, const char *identity);

/* The config's role, rule and quota lines and default-role as an access list
 * (the seed the first leader proposes, and the fallback until one is
 * applied). Lines acl_put() or acl_rule_put() refuse (none: the config
 * checks them; the table has room for all) are left out. */
void roles_config_acl(const struct config *c, struct acl *out);

/*
 * The role of certificate identity `identity` (borrowed): the one place
 * roles are decided. From the cluster's applied access list `applied`
 * once it is seeded, else from `fallback` (roles_config_acl()), so that
 * nothing is refused while the first seed is on its way; in both, a node
 * identity (c->tls_peer_identity with any id) no rule names gets role
 * none (acl_role()).
 */
enum roles_role roles_decide(const struct acl *applied,
                             const struct acl *fallback, const struct config *c,
                             const char *identity);

/* Whether `role` may send a request frame of `type` (enum proto_type).
 * Request types this module does not know are for ADMIN only. */
bool roles_allows(int role, uint8_t type);

#endif /* SERVER_ROLES_H */
