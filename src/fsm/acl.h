/* The replicated access list: which role each client identity has. */
#ifndef FSM_ACL_H
#define FSM_ACL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../proto/command.h"

/*
 * Semantics (docs/security.md, "Roles" has the operator's account):
 *
 * - The table is a list of rules and a default role. A rule today names
 *   one identity exactly (ACL_RULE_IDENTITY); its kind byte lets later
 *   kinds (per-name-prefix rules) join without a new table. Rules are kept
 *   sorted by (kind, identity bytes), so the encoding is the same on every
 *   replica.
 * - A table is absent until an ACL entry of mode SEED is applied: the
 *   first SEED sets the rules and the default role it carries, and every
 *   later SEED changes nothing (two leaders may both propose one; the log
 *   orders them). SET adds or changes one identity's role, REMOVE drops
 *   it; both need a table (BATON_EBUSY before the seed). A SET or REMOVE
 *   that would leave no rule giving admin (with a default that is not
 *   admin) while one gave it before is BATON_EINVAL: nobody could change
 *   the list again.
 * - The lookup (acl_role()): the identity's rule; else, when the identity
 *   is a node's (the node identity pattern with any decimal id in place
 *   of "{id}"), role none; else the default role. Node certificates are
 *   for the raft port: one that serves as a client needs a rule.
 * - Pure: no I/O, no clock. Errors per call; nothing changes on error.
 */

/* Roles, lowest first; each allows what the one below it does (the
 * server's enum roles_role has the same values). */
enum acl_role {
        ACL_NONE = 0,
        ACL_READ = 1,
        ACL_LOCK = 2,
        ACL_ADMIN = 3,
};

/* Rule kinds. */
enum acl_kind {
        ACL_RULE_IDENTITY = 0, /* one certificate identity, exactly */
};

#define ACL_MAX          64  /* rules in one table */
#define ACL_IDENTITY_MAX 255 /* bytes of an identity (a TLS identity) */
#define ACL_FORMAT       1   /* the encoding's version */
/* The largest encoding: header, then ACL_MAX rules of the longest
 * identity. */
#define ACL_ENCODED_MAX (5 + ACL_MAX * (3 + ACL_IDENTITY_MAX))

struct acl_rule {
        uint8_t kind; /* enum acl_kind */
        uint8_t role; /* enum acl_role */
        uint8_t len;
        char identity[ACL_IDENTITY_MAX + 1]; /* NUL-terminated */
};

struct acl {
        bool seeded; /* false: no table yet */
        uint8_t default_role;
        unsigned n;
        struct acl_rule rules[ACL_MAX]; /* by (kind, identity) */
};

/* An absent table. */
void acl_init(struct acl *a);

/* Start an unapplied table (for a seed): present, no rules,
 * `default_role`. */
void acl_start(struct acl *a, uint8_t default_role);

/*
 * Set identity `identity` (`len` bytes, 1..ACL_IDENTITY_MAX, no NUL) to
 * `role` in a present table, with no admin check (building a seed): 0,
 * BATON_EINVAL (bad identity or role, or a full table).
 */
int acl_put(struct acl *a, const char *identity, size_t len, uint8_t role);

/* Apply a decoded ACL command (see above). 0, BATON_EBUSY, BATON_EINVAL,
 * BATON_ENOTFOUND (REMOVE of an identity without a rule), or
 * BATON_ECORRUPT (a SEED whose table does not decode). */
int acl_apply(struct acl *a, const struct command *c);

/* The rule of `identity` (NUL-terminated), or NULL. */
const struct acl_rule *acl_find(const struct acl *a, const char *identity);

/* Whether `identity` is a node's: `pattern` (tls-peer-identity, with
 * "{id}") with one or more decimal digits in place of "{id}". */
bool acl_is_node(const char *pattern, const char *identity);

/* The role of `identity` in a present table (see above); `node_pattern`
 * may be NULL (no node identities). */
uint8_t acl_role(const struct acl *a, const char *identity,
                 const char *node_pattern);

/* Whether two tables hold the same rules and default. */
bool acl_equal(const struct acl *a, const struct acl *b);

/*
 * Serialize a present table: u8 format (ACL_FORMAT), u8 default role,
 * u16 count, u8 reserved 0, then by (kind, identity): u8 kind, u8 role,
 * string identity (u8 length). Returns the length written, or the length
 * needed when `buf` is too small.
 */
size_t acl_encode(const struct acl *a, uint8_t *buf, size_t cap);

/* Load what acl_encode() wrote, exactly `len` bytes, as a present table.
 * 0, BATON_EVERSION (a newer format) or BATON_ECORRUPT; `a` unchanged on
 * error. */
int acl_decode(struct acl *a, const uint8_t *buf, size_t len);

/* "admin", "lock", "read", "none"; "unknown" for anything else. */
const char *acl_role_name(int role);

#endif /* FSM_ACL_H */
