/* The replicated access list: which role each client identity has, and
 * which lock names each identity or group may read, lock or manage. */
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
 * - Rules on name prefixes (ACL_RULE_PREFIX, ACL_RULE_GROUP_PREFIX) are
 *   a second list, sorted by (kind, subject bytes, prefix bytes): each
 *   gives a subject (a certificate identity, or a group: an OU of the
 *   certificate's subject) permissions (enum acl_perm) on every lock name
 *   that starts with its prefix ("" is every name). RULE_SET adds or
 *   changes one (subject, prefix) rule, RULE_REMOVE drops it
 *   (BATON_ENOTFOUND without one); both need a table (BATON_EBUSY). A
 *   table is full (BATON_EINVAL) at ACL_PREFIX_MAX rules or when its
 *   encoding would pass ACL_ENCODED_LIMIT, so that a seed, a snapshot's
 *   section and a listing each fit one frame.
 * - Names (acl_name_perms()): while the table has no prefix rule, every
 *   name is open to every role, as before rules existed; once it has one,
 *   a name is closed to a subject but for the permissions of the rules
 *   that match it (its identity's, and its groups') and whose prefix
 *   starts the name, added together. The role still decides which
 *   requests a client may send at all; the global admin role is not
 *   subject to rules (the gateway's decision, not this module's).
 * - Quotas (struct acl_quota) are a third list, sorted by subject bytes:
 *   each limits what one identity's sessions may have at once (enum
 *   acl_quota_kind; 0: no limit of that kind), and the subject "*" is the
 *   default of every identity without a quota of its own. QUOTA_SET adds
 *   or replaces one (at least one limit, at most ACL_QUOTA_MAX quotas),
 *   QUOTA_REMOVE drops it (BATON_ENOTFOUND without one); both need a
 *   table. The state machine counts sessions, locks and waits by
 *   principal (acl_principal(): a hash of the identity, which the leader
 *   writes into OPEN) and asks acl_quota_of() at apply; watches and
 *   requests per second are counted by each node's gateway.
 * - The encoding is format 1 while there are no prefix rules and no
 *   quotas (the bytes a release before rules writes, so a digest agrees
 *   across an upgrade), format 2 with prefix rules and no quota, and
 *   format 3 with quotas.
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
        ACL_RULE_IDENTITY = 0,     /* one certificate identity, exactly */
        ACL_RULE_PREFIX = 1,       /* an identity's permissions on names */
        ACL_RULE_GROUP_PREFIX = 2, /* a group's (certificate OU) */
};

/* Permissions on lock names, as a prefix rule gives them. `lock` and
 * `manage` each include `read`. */
enum acl_perm {
        ACL_PERM_READ = 1,   /* holders, check, list, watch, leader */
        ACL_PERM_LOCK = 2,   /* acquire, release, campaign, proclaim */
        ACL_PERM_MANAGE = 4, /* revoke grants, close sessions */
        ACL_PERM_ALL = 7,
};

#define ACL_MAX            64  /* identity rules in one table */
#define ACL_PREFIX_MAX     256 /* prefix rules in one table */
#define ACL_IDENTITY_MAX   255 /* bytes of an identity (a TLS identity) */
#define ACL_PREFIX_LEN_MAX 255 /* bytes of a prefix (a lock name's) */
#define ACL_QUOTA_MAX      64  /* quotas in one table */
#define ACL_FORMAT         3   /* the newest encoding read */
/* The largest encoding of a table: every list, seed and listing of it
 * fits one frame and one ACL entry. */
#define ACL_ENCODED_LIMIT 60000
#define ACL_ENCODED_MAX   ACL_ENCODED_LIMIT

struct acl_rule {
        uint8_t kind; /* enum acl_kind */
        uint8_t role; /* enum acl_role */
        uint8_t len;
        char identity[ACL_IDENTITY_MAX + 1]; /* NUL-terminated */
};

/* A rule on a name prefix. */
struct acl_prefix_rule {
        uint8_t kind;  /* ACL_RULE_PREFIX or ACL_RULE_GROUP_PREFIX */
        uint8_t perms; /* enum acl_perm bits, 1..ACL_PERM_ALL */
        uint8_t subject_len;
        uint8_t prefix_len;
        char subject[ACL_IDENTITY_MAX + 1]; /* NUL-terminated */
        char prefix[ACL_PREFIX_LEN_MAX + 1];
};

/* What a quota limits, per identity. The first ACL_QUOTA_COUNTED are
 * counted by the replicated state (every node alike); watches and rate
 * by each node's gateway. */
enum acl_quota_kind {
        ACL_QUOTA_SESSIONS = 0, /* live sessions */
        ACL_QUOTA_LOCKS = 1,    /* grants and waits together: a wait turns
                                   into a grant without asking again */
        ACL_QUOTA_WAITERS = 2,  /* waits */
        ACL_QUOTA_WATCHES = 3,  /* watches open on one node */
        ACL_QUOTA_RATE = 4,     /* requests per second on one node */
        ACL_QUOTA_KINDS = 5,
        ACL_QUOTA_COUNTED = 3,
};

/* The subject of the default quota. */
#define ACL_QUOTA_DEFAULT "*"

struct acl_quota {
        uint64_t principal; /* acl_principal(subject); 0 for the default */
        uint32_t limit[ACL_QUOTA_KINDS]; /* 0: no limit */
        uint8_t subject_len;
        char subject[ACL_IDENTITY_MAX + 1]; /* NUL-terminated */
};

struct acl {
        bool seeded; /* false: no table yet */
        uint8_t default_role;
        unsigned n;
        struct acl_rule rules[ACL_MAX]; /* by (kind, identity) */
        unsigned n_prefix;
        /* by (kind, subject, prefix) */
        struct acl_prefix_rule prefix[ACL_PREFIX_MAX];
        unsigned n_quota;
        struct acl_quota quota[ACL_QUOTA_MAX]; /* by subject */
};

/* Who asks, for acl_name_perms(): a certificate identity and its groups
 * (`groups_len` bytes of NUL-terminated names, one after the other; 0:
 * none). Borrowed. */
struct acl_who {
        const char *identity;
        const char *groups;
        size_t groups_len;
};

/* An absent table. */
void acl_init(struct acl *a);

/* Start an unapplied table (for a seed): present, no rules,
 * `default_role`. */
void acl_start(struct acl *a, uint8_t default_role);

/*
 * Set identity `identity` (`len` bytes, 1..ACL_IDENTITY_MAX, no NUL) to
 * `role` in a present table, with no admin check (building a seed): 0,
 * BATON_EINVAL (bad identity or role, or a full table: ACL_MAX
 * identities, or an encoding that would pass ACL_ENCODED_LIMIT).
 */
int acl_put(struct acl *a, const char *identity, size_t len, uint8_t role);

/*
 * Set the rule of (`kind`, subject, prefix) to `perms` in a present table
 * (building a seed, or applying RULE_SET): 0, or BATON_EINVAL (a bad kind,
 * subject (1..ACL_IDENTITY_MAX bytes, no NUL), prefix (0..255 bytes, no
 * NUL) or perms, or a full table).
 */
int acl_rule_put(struct acl *a, uint8_t kind, const char *subject,
                 size_t subject_len, const char *prefix, size_t prefix_len,
                 uint8_t perms);

/* Whether the table has a rule on a name prefix (names are closed). */
bool acl_has_prefix_rules(const struct acl *a);

/*
 * The permissions (enum acl_perm bits) `who` has on the lock name `name`
 * (`len` bytes) by the prefix rules: ACL_PERM_ALL while the table has none
 * (or is absent), else the union of the rules that match (see above).
 */
uint8_t acl_name_perms(const struct acl *a, const struct acl_who *who,
                       const char *name, size_t len);

/*
 * Whether `who` may see some name under `prefix` (`len` bytes) with
 * `perm`: true while names are open, or when a rule of `who` with `perm`
 * has a prefix that starts `prefix` or that `prefix` starts. For a
 * listing or a watch by prefix, whose entries are then filtered by
 * acl_name_perms().
 */
bool acl_prefix_reaches(const struct acl *a, const struct acl_who *who,
                        const char *prefix, size_t len, uint8_t perm);

/* The principal of a certificate identity (`len` bytes): a 64-bit hash
 * of it (FNV-1a), never 0, which OPEN carries so that the state machine
 * counts sessions by who opened them without storing the identity. */
uint64_t acl_principal(const char *identity, size_t len);

/*
 * Set the quota of `subject` (`len` bytes, 1..ACL_IDENTITY_MAX, no NUL;
 * ACL_QUOTA_DEFAULT for the default) to `limit` (ACL_QUOTA_KINDS values,
 * 0: none) in a present table: 0, or BATON_EINVAL (a bad subject, every
 * limit 0, or ACL_QUOTA_MAX quotas already and none of `subject`).
 */
int acl_quota_put(struct acl *a, const char *subject, size_t len,
                  const uint32_t limit[ACL_QUOTA_KINDS]);

/* Whether the table has a quota (the leader then writes principals into
 * OPEN). */
bool acl_has_quotas(const struct acl *a);

/* The limits of the identity whose principal is `principal`: its own
 * quota's, else the default's, else NULL (no quota); NULL for principal 0
 * and while the table is absent. */
const uint32_t *acl_quota_of(const struct acl *a, uint64_t principal);

/* "sessions", "locks", "waiters", "watches", "rate"; "unknown" else. */
const char *acl_quota_name(int kind);

/* `limit`'s non-zero limits as "sessions=2 locks=10" into `buf` (cut
 * short if it does not fit; "" for none). Returns `buf`. */
const char *acl_quota_text(const uint32_t limit[ACL_QUOTA_KINDS], char *buf,
                           size_t size);

/* "read", "read,lock", "lock,manage"...: `perms` as a rule lists them,
 * written into `buf` (at least 24 bytes). */
const char *acl_perms_name(uint8_t perms, char *buf, size_t size);

/* Parse "read", "lock", "manage" or a comma-separated list of them (each
 * of `lock` and `manage` includes read): 0 with `*perms`, or
 * BATON_EINVAL. */
int acl_perms_parse(const char *text, uint8_t *perms);

/* Apply a decoded ACL command (see above). 0, BATON_EBUSY, BATON_EINVAL,
 * BATON_ENOTFOUND (REMOVE, RULE_REMOVE or QUOTA_REMOVE of what the table
 * lacks),
 * BATON_ECORRUPT (a SEED whose table does not decode) or BATON_ENOMEM. */
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
 * Serialize a present table: u8 format (1 without prefix rules, else 2),
 * u8 default role, u16 count, u8 reserved 0, then by (kind, identity): u8
 * kind, u8 role, string identity (u8 length); format 2 then has u16 count
 * and by (kind, subject, prefix): u8 kind, u8 perms, string subject,
 * string prefix; format 3 has format 2's layout (its prefix count may be
 * 0), then u16 count and by subject: string subject, ACL_QUOTA_KINDS x
 * u32 limit. Returns the length written, or with `buf` NULL the length
 * needed (a `buf` too small gets a count cut short: size it first).
 */
size_t acl_encode(const struct acl *a, uint8_t *buf, size_t cap);

/* Load what acl_encode() wrote, exactly `len` bytes, as a present table.
 * 0, BATON_EVERSION (a newer format), BATON_ECORRUPT or BATON_ENOMEM; `a`
 * unchanged on error. */
int acl_decode(struct acl *a, const uint8_t *buf, size_t len);

/* "admin", "lock", "read", "none"; "unknown" for anything else. */
const char *acl_role_name(int role);

#endif /* FSM_ACL_H */
