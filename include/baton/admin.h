/*
 * Cluster administration through a libbaton handle: status and versions,
 * online backups, members, leadership transfer, revoking sessions and
 * grants, and the access list.
 */
#ifndef BATON_ADMIN_H
#define BATON_ADMIN_H

#include <stdint.h>

#include "api.h"
#include "client.h"
#include "cluster.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Ask one node (`endpoint`, "host:port", one of the handle's or any other,
 * over a short connection of its own) for its status; NULL asks the
 * leader (the node the handle is connected to, or the leader it names).
 * Does not open a session. 0 or BATON_ENOANSWER, BATON_EUNAVAILABLE (no
 * leader known), BATON_ECONNECT or BATON_ETLS (no connection to
 * `endpoint`: baton_errmsg() says "cannot connect to 127.0.0.1:7102:
 * connection refused"), BATON_EIO (the node closed the connection after
 * answering), BATON_EINVAL. Thread-safe.
 */
BATON_API int baton_status(baton_client *c, const char *endpoint,
                           struct baton_status *out);

/**
 * baton_status() and the versions of the node that answered, over a short
 * connection of its own (NULL `endpoint`: the leader, as for
 * baton_status()). A node older than 0.2.0 refuses the question; it is
 * asked baton_status()'s instead and `version` says so with an empty
 * `release` and zero formats. Returns what baton_status() returns; `out`
 * and `version` are filled on 0. Thread-safe.
 */
BATON_API int baton_status_version(baton_client *c, const char *endpoint,
                                   struct baton_status *out,
                                   struct baton_node_version *version);

/**
 * baton_status_version() and the alarms of the node that answered: what
 * it says is wrong with it (BATON_ALARM_DIVERGED: its state machine is not
 * the leader's; docs/operations.md, "Diverged replicas"). A node older
 * than 0.3.0 does not say; `alarms->known` is then 0 and it is asked
 * baton_status_version()'s question instead (and, older than 0.2.0,
 * baton_status()'s), each on a new connection. Returns what
 * baton_status() returns; `out`, `version` and `alarms` are filled on 0.
 * Thread-safe.
 */
BATON_API int baton_status_alarms(baton_client *c, const char *endpoint,
                                  struct baton_status *out,
                                  struct baton_node_version *version,
                                  struct baton_node_alarms *alarms);

/*
 * Take an online backup of the cluster's lock state and write it to `path`
 * (docs/operations.md, "Backup and restore"): the leader pins the state
 * after a read barrier (everything acknowledged before the call is in it),
 * the bytes come over a connection of their own, and the file (with a
 * SHA-256 of everything in it) appears at `path` only once whole and
 * synced; "PATH.part" holds it meanwhile. Needs an admin identity.
 * `timeout_ms` 0: ten minutes. 0, with `out` (may be NULL) filled, or
 * BATON_EPERM, BATON_ENOANSWER, BATON_EUNAVAILABLE, BATON_ECONNECT,
 * BATON_ETLS, BATON_EIO or BATON_ENOSPC (the file), BATON_ENOMEM,
 * BATON_EINVAL. Thread-safe; it
 * does not use the handle's connection.
 */
BATON_API int baton_backup_save(baton_client *c, const char *path,
                                uint32_t timeout_ms,
                                struct baton_backup_info *out);

/*
 * Read and check the backup file at `path` (its digest covers every
 * byte): 0 with `out` filled, BATON_ECORRUPT (truncated or changed),
 * BATON_EVERSION (a format this build does not read), BATON_EIO,
 * BATON_ENOMEM.
 */
BATON_API int baton_backup_inspect(const char *path,
                                   struct baton_backup_info *out);

/**
 * Add a member to the running cluster (it must run with join = true): the
 * leader checks that a node answers at `raft_address` as member `id`,
 * records its addresses, adds it and promotes it to voter once it has
 * caught up; 0 means it is a voter. Addresses as in batond's member lines:
 * "host:port" or "[ipv6]:port", but the raft address not IPv6 (libraft
 * 0.22.1 cannot use one).
 *
 * An add of a member that is one already with the same addresses carries
 * on where an earlier add stopped: so after BATON_ENOANSWER (the outcome
 * unknown) or BATON_EUNREACHABLE, the same call again finishes the add,
 * and baton_member_remove() undoes it.
 *
 * Errors, each with its detail in baton_errmsg(): BATON_EINVAL (id 0, a
 * malformed address, an IPv6 raft address: refused before anything is
 * sent), BATON_EIDINUSE (`id` is a member with other addresses),
 * BATON_EADDRINUSE (another member has one of the addresses),
 * BATON_EUNREACHABLE (no node answered at `raft_address` within 2 s:
 * nothing changed; or the node stopped answering while it caught up: it
 * is left a spare), BATON_ECANTCHANGE (another change runs),
 * BATON_ENOANSWER. Thread-safe.
 */
BATON_API int baton_member_add(baton_client *c, uint64_t id,
                               const char *raft_address,
                               const char *client_address);

/**
 * End the session `session` at once, as if its TTL had run out (Consul's
 * session destroy, Hazelcast's forceCloseSession): its locks are released
 * and handed to their queues with higher tokens, its waits are dropped,
 * and its client learns it as an expiry (on_lock_lost for each lock,
 * BATON_EEXPIRED for its calls). For an operator: the client's
 * certificate must have the admin role, and the apply log records its
 * identity. Does not need a session of this handle. 0, or BATON_EEXPIRED /
 * BATON_ECLOSED / BATON_ENOSESSION (the session had ended already, perhaps
 * by an earlier attempt of this call whose answer was lost), BATON_EPERM
 * (not an admin), BATON_EINVAL (`session` 0), BATON_ENOANSWER. Thread-safe.
 */
BATON_API int baton_session_revoke(baton_client *c, uint64_t session);

/**
 * Take the lock `name` away from the session `session` that holds it
 * with `token` (as baton_holders() lists them), its session living on:
 * that grant ends as if lost (the lock-delay applies), the lock goes to
 * its queue with a higher token, and the holder's client learns it at
 * its next keepalive (on_lock_lost for that lock; batonctl lock stops its
 * command). For an operator, as baton_session_revoke(): admin role, and
 * the apply log records who asked. Naming the token makes a retry safe:
 * it can never take away a later grant. 0, or BATON_ENOTHOLDER (no such
 * grant, perhaps taken away by an earlier attempt of this call),
 * BATON_EPERM, BATON_EINVAL (`session` or `token` 0), BATON_ENAME,
 * BATON_ENOANSWER. Thread-safe.
 */
BATON_API int baton_revoke(baton_client *c, const char *name, uint64_t session,
                           uint64_t token);

/**
 * Remove a member (a voter, or a spare an add left). 0 or BATON_ENOMEMBER
 * (no member has that id; baton_errmsg() lists the members),
 * BATON_ECANTCHANGE, BATON_EINVAL (id 0), BATON_ENOANSWER. Thread-safe.
 */
BATON_API int baton_member_remove(baton_client *c, uint64_t id);

/**
 * Ask the leader to hand leadership to member `id` (0: any other voter),
 * and wait until it has moved, over a connection of its own (sent again
 * only to a node that did not act on it). The leader first waits, for up
 * to two election timeouts, until the member has stored its whole log,
 * then hands over; the call returns once the leader knows its successor,
 * at most three election timeouts after the start (or the handle's
 * request timeout, if shorter). On 0, `*from` (may be NULL) is the member
 * that led and `*to` (may be NULL) the one leading now: another than `id`
 * if it won the election instead. When the node that led stepped down
 * before the election ended, the call asks the cluster's status until a
 * leader is known (within the request timeout), so `*to` is where
 * leadership actually went; 0 only if no leader was known by then (both
 * 0 from a node of an earlier release, which answers when the transfer
 * starts).
 *
 * Errors, each with its detail in baton_errmsg(): BATON_ENOMEMBER (no
 * such member), BATON_EISLEADER (it leads already), BATON_ENOTVOTER (a
 * spare or a standby, which cannot lead; for 0: no other voter),
 * BATON_EUNREACHABLE (it did not take over in time: down, or too far
 * behind; the leader kept leading, though a node that was only paused may
 * take over when it resumes), BATON_ENOANSWER. Thread-safe.
 */
BATON_API int baton_transfer_to(baton_client *c, uint64_t id, uint64_t *from,
                                uint64_t *to);

/** baton_transfer_to(c, id, NULL, NULL). */
BATON_API int baton_transfer(baton_client *c, uint64_t id);

/**
 * The roles of the cluster's access list (docs/security.md, "Roles"):
 * each allows what the one below it does, and more.
 */
enum baton_access_role {
        BATON_ACCESS_NONE = 0,  /* nothing */
        BATON_ACCESS_READ = 1,  /* status, queries, lists, watches */
        BATON_ACCESS_LOCK = 2,  /* and sessions, locks, keepalives */
        BATON_ACCESS_ADMIN = 3, /* and members, transfers, backups, the list */
};

#define BATON_ACL_IDENTITY_MAX 255 /* bytes of a certificate identity */

/** One rule of the access list: an identity and its role. */
struct baton_acl_rule {
        char identity[BATON_ACL_IDENTITY_MAX + 1]; /* NUL-terminated */
        int role;                                  /* enum baton_access_role */
};

/*
 * Permissions on lock names, which a rule on a name prefix gives
 * (baton_rule_set(); docs/security.md, "Rules on lock names"); OR them
 * together. Lock and manage each include read: libbaton adds
 * BATON_PERM_READ to any set with BATON_PERM_LOCK or BATON_PERM_MANAGE,
 * so that a rule is listed as the cluster stores it (lock as 3).
 */
#define BATON_PERM_READ   1 /* holders, check, list, watch, leader */
#define BATON_PERM_LOCK   2 /* acquire, release, campaign, proclaim */
#define BATON_PERM_MANAGE 4 /* revoke grants, close sessions */

#define BATON_ACL_PREFIX_MAX 255 /* bytes of a rule's name prefix */

/**
 * One rule on a lock-name prefix: `subject` has `perms` on every lock
 * name that starts with `prefix` ("" is every name).
 */
struct baton_acl_prefix_rule {
        /* A certificate identity, or with `group` 1 the group's name (an OU
         * of the client certificate's subject; batonctl writes it
         * group:NAME). NUL-terminated. */
        char subject[BATON_ACL_IDENTITY_MAX + 1];
        int group;                             /* 1: subject is a group */
        char prefix[BATON_ACL_PREFIX_MAX + 1]; /* NUL-terminated */
        int perms; /* BATON_PERM_* bits, with BATON_PERM_READ */
};

/** The cluster's access list, as baton_acl_list() fills it. */
struct baton_acl {
        /* 0: the cluster has no list yet (its first leader is seeding it);
         * the rules and default are then the leader's config's, which
         * decide meanwhile. */
        int seeded;
        int default_role; /* of identities no rule names (not nodes') */
        unsigned n_rules;
        struct baton_acl_rule *rules; /* by identity; baton_acl_free() */
};

/**
 * Read the cluster's access list from the leader into `*out` (its rules
 * allocated; free them with baton_acl_free()): its role rules, not its
 * rules on name prefixes, which baton_rule_list() reads. Admin role. 0 or
 * BATON_EPERM, BATON_ENOANSWER, BATON_ETLS, BATON_ENOMEM, BATON_EVERSION
 * (a newer list format), BATON_EINVAL. Thread-safe.
 */
BATON_API int baton_acl_list(baton_client *c, struct baton_acl *out);

/** Free what baton_acl_list() allocated in `acl` (accepts NULL). */
BATON_API void baton_acl_free(struct baton_acl *acl);

/**
 * The access list's rules on name prefixes, as baton_rule_list() fills
 * it. (struct baton_acl keeps the layout of releases before these rules,
 * so that programs built against them keep working.)
 */
struct baton_rules {
        unsigned n;
        /* By (kind: identities before groups, subject, prefix);
         * baton_rules_free(). None: every name is open to every role, as
         * before such rules existed. */
        struct baton_acl_prefix_rule *rules;
};

/**
 * Read the access list's rules on name prefixes from the leader into
 * `*out` (allocated; free them with baton_rules_free()); a leader of a
 * release without such rules lists none. Admin role. 0 or BATON_EPERM,
 * BATON_ENOANSWER, BATON_ETLS, BATON_ENOMEM, BATON_EVERSION (a newer list
 * format), BATON_EINVAL. Thread-safe.
 */
BATON_API int baton_rule_list(baton_client *c, struct baton_rules *out);

/** Free what baton_rule_list() allocated in `r` (accepts NULL). */
BATON_API void baton_rules_free(struct baton_rules *r);

/**
 * Give certificate identity `identity` (1..BATON_ACL_IDENTITY_MAX bytes)
 * the role `role` (enum baton_access_role) in the cluster's access list,
 * through the log (the apply log records who asked); every node applies
 * it to every connection's next request. Admin role. A node identity
 * (tls-peer-identity) needs a rule to act as a client. 0 (also when the
 * identity had that role already) or BATON_EINVAL (bad identity or role,
 * the list is full, or it would leave no admin: baton_errmsg() says
 * which), BATON_EBUSY (the cluster's first list is not applied yet: try
 * again), BATON_EUNSUPPORTED (the cluster runs without TLS: no list),
 * BATON_EPERM, BATON_ENOANSWER, BATON_ETLS. Thread-safe.
 */
BATON_API int baton_acl_set(baton_client *c, const char *identity, int role);

/**
 * Take `identity`'s rule out of the access list: it gets the default
 * role again (a node identity, none). 0 or BATON_ENOTFOUND (no rule
 * names it), BATON_EINVAL (it would leave no admin), BATON_EBUSY,
 * BATON_EUNSUPPORTED, BATON_EPERM, BATON_ENOANSWER, BATON_ETLS.
 * Thread-safe.
 */
BATON_API int baton_acl_remove(baton_client *c, const char *identity);

/**
 * Give `subject` the permissions `perms` (BATON_PERM_* bits, at least
 * one, each of lock and manage with read added) on every lock name that
 * starts with `prefix` (0..BATON_ACL_PREFIX_MAX bytes; "" is every name),
 * replacing what a rule of the same subject and prefix gave. `subject`
 * is a certificate identity, or "group:NAME" for the group NAME (an OU of
 * the client certificate's subject); each 1..BATON_ACL_IDENTITY_MAX
 * bytes (an identity that starts with "group:" cannot be named). Both
 * strings are copied. Through the log, as baton_acl_set(); once the list
 * has one such rule, each name is closed to a client but for what the
 * rules of its identity and its groups whose prefix starts the name give
 * it (docs/security.md, "Rules on lock names"): a call refused so fails
 * with BATON_EPERM, and baton_errmsg() names the permission and the name
 * no rule gave. Admin role.
 *
 * 0 (also when the rule was there already) or BATON_EINVAL (a bad
 * subject, prefix or perms, refused before anything is sent, or the list
 * is full: baton_errmsg() says which), BATON_EBUSY (the cluster's first
 * list is not applied yet: try again), BATON_EUNSUPPORTED (the cluster
 * runs without TLS: no list), BATON_EMALFORMED (the leader runs a
 * release without rules on names), BATON_EPERM, BATON_ENOANSWER,
 * BATON_ETLS. Thread-safe.
 */
BATON_API int baton_rule_set(baton_client *c, const char *subject,
                             const char *prefix, int perms);

/**
 * Take the rule of `subject` ("group:NAME" for a group, as for
 * baton_rule_set()) on `prefix` out of the access list. 0 or
 * BATON_ENOTFOUND (no such rule), BATON_EINVAL, BATON_EBUSY,
 * BATON_EUNSUPPORTED, BATON_EMALFORMED, BATON_EPERM, BATON_ENOANSWER,
 * BATON_ETLS. Thread-safe.
 */
BATON_API int baton_rule_remove(baton_client *c, const char *subject,
                                const char *prefix);

/*
 * What a quota limits (docs/security.md, "Quotas per identity"), in the
 * order of struct baton_quota's limits: live sessions, locks (grants and
 * waits together), waits, watches open on one node, and requests a
 * second on one node.
 */
enum baton_quota_kind {
        BATON_QUOTA_SESSIONS = 0,
        BATON_QUOTA_LOCKS = 1,
        BATON_QUOTA_WAITERS = 2,
        BATON_QUOTA_WATCHES = 3,
        BATON_QUOTA_RATE = 4,
};
#define BATON_QUOTA_KINDS 5
/* Kinds whose use the cluster's state counts (sessions, locks, waiters):
 * what struct baton_quota's `used` holds. */
#define BATON_QUOTA_USED 3

/** One quota of the access list, and what its subject uses now. */
struct baton_quota {
        /* A certificate identity, or "*": the quota of every identity
         * without one of its own. NUL-terminated. */
        char subject[BATON_ACL_IDENTITY_MAX + 1];
        unsigned limits[BATON_QUOTA_KINDS]; /* 0: no limit of that kind */
        /* Sessions, locks and waiters of the subject's sessions now,
         * cluster-wide, as the leader's state has them (0 for "*"). */
        unsigned used[BATON_QUOTA_USED];
};

/** The access list's quotas, as baton_quota_list() fills them. */
struct baton_quotas {
        unsigned n;
        struct baton_quota *quotas; /* by subject; baton_quotas_free() */
};

/**
 * The name of quota kind `kind` (enum baton_quota_kind) as batonctl and
 * the config file write it: "sessions", "locks", "waiters", "watches",
 * "rate"; "unknown" for any other value. Never NULL.
 */
BATON_API const char *baton_quota_name(int kind);

/**
 * Read the access list's quotas from the leader into `*out` (allocated;
 * free them with baton_quotas_free()), each with its subject's use now;
 * a leader of a release without quotas lists none. Admin role. 0 or
 * BATON_EPERM, BATON_ENOANSWER, BATON_ETLS, BATON_ENOMEM, BATON_EVERSION
 * (a newer list format), BATON_EINVAL. Thread-safe.
 */
BATON_API int baton_quota_list(baton_client *c, struct baton_quotas *out);

/** Free what baton_quota_list() allocated in `q` (accepts NULL). */
BATON_API void baton_quotas_free(struct baton_quotas *q);

/**
 * Give `subject` (a certificate identity of 1..BATON_ACL_IDENTITY_MAX
 * bytes, or "*" for every identity without a quota of its own) the
 * limits `limits` (BATON_QUOTA_KINDS of them, in enum baton_quota_kind
 * order; 0 is no limit of that kind, and at least one is not 0),
 * replacing its quota if it had one. Through the log, as baton_acl_set():
 * every node counts by it from the entry's index on; a quota lowered
 * below what the subject uses refuses its next takes and takes nothing
 * back. Admin role.
 *
 * 0 (also when the quota was there already) or BATON_EINVAL (a bad
 * subject or limits, refused before anything is sent, or the list holds
 * as many quotas as it can: baton_errmsg() says which), BATON_EBUSY,
 * BATON_EUNSUPPORTED (no TLS: no identities), BATON_EMALFORMED (the
 * leader runs a release without quotas), BATON_EPERM, BATON_ENOANSWER,
 * BATON_ETLS. Thread-safe.
 */
BATON_API int baton_quota_set(baton_client *c, const char *subject,
                              const unsigned limits[BATON_QUOTA_KINDS]);

/**
 * Take the quota of `subject` out of the access list: it is limited by
 * the "*" quota again, if there is one. 0 or BATON_ENOTFOUND (it has
 * none), BATON_EINVAL, BATON_EBUSY, BATON_EUNSUPPORTED, BATON_EMALFORMED,
 * BATON_EPERM, BATON_ENOANSWER, BATON_ETLS. Thread-safe.
 */
BATON_API int baton_quota_remove(baton_client *c, const char *subject);

#ifdef __cplusplus
}
#endif

#endif /* BATON_ADMIN_H */
