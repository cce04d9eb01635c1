/* The cluster's access list on the client protocol: ACL requests and the
 * ACL_REPLY that lists it. */
#ifndef PROTO_ACLWIRE_H
#define PROTO_ACLWIRE_H

#include <stddef.h>
#include <stdint.h>

#include "proto.h"

/*
 * An ACL request is u8 op, u8 role, string identity; the ops on rules on
 * lock-name prefixes (RULE_SET, RULE_REMOVE) carry their permissions in
 * the role byte and their subject in the identity string, then u8 kind
 * and string prefix; the ops on quotas (QUOTA_SET, QUOTA_REMOVE) carry
 * role 0 and their subject in the identity string, QUOTA_SET then its
 * PROTO_QUOTA_KINDS limits as u32 in kind order. So LIST, SET and REMOVE
 * keep the bytes of a release before prefix rules, and a node of an
 * earlier release refuses each newer op as it refuses any unknown op
 * (ERROR BATON_EMALFORMED).
 */
enum proto_acl_op {
        PROTO_ACL_LIST = 0,
        PROTO_ACL_SET = 1,          /* identity, role */
        PROTO_ACL_REMOVE = 2,       /* identity */
        PROTO_ACL_RULE_SET = 3,     /* perms, subject, kind, prefix */
        PROTO_ACL_RULE_REMOVE = 4,  /* subject, kind, prefix */
        PROTO_ACL_QUOTA_SET = 5,    /* subject, limits */
        PROTO_ACL_QUOTA_REMOVE = 6, /* subject */
};

/*
 * What a quota of a certificate identity limits, in the order of its
 * limits on the wire. Sessions, locks and waiters are cluster-wide state, which
 * every node holds alike, so the leader counts what an identity uses of
 * them; watches and the request rate are each node's own, counted where
 * the connection is.
 */
enum proto_quota_kind {
        PROTO_QUOTA_SESSIONS = 0, /* live sessions */
        PROTO_QUOTA_LOCKS = 1,    /* grants and waits together */
        PROTO_QUOTA_WAITERS = 2,  /* waits */
        PROTO_QUOTA_WATCHES = 3,  /* watches open on one node */
        PROTO_QUOTA_RATE = 4,     /* requests a second on one node */
};
#define PROTO_QUOTA_KINDS 5
/* The kinds whose use an ACL_REPLY gives (sessions, locks, waiters): the
 * ones that are cluster-wide state. */
#define PROTO_QUOTA_USED 3

/* What a rule names; the values are the state machine's (src/fsm/acl.h,
 * enum acl_kind), which every node stores. */
enum proto_acl_kind {
        PROTO_ACL_KIND_IDENTITY = 0,     /* a role rule: one identity */
        PROTO_ACL_KIND_PREFIX = 1,       /* a prefix rule of an identity */
        PROTO_ACL_KIND_GROUP_PREFIX = 2, /* a prefix rule of a group (an OU) */
};

/* Permission bits of a prefix rule (src/fsm/acl.h, enum acl_perm). */
#define PROTO_ACL_PERM_READ   1
#define PROTO_ACL_PERM_LOCK   2
#define PROTO_ACL_PERM_MANAGE 4
#define PROTO_ACL_PERMS_ALL   7

#define PROTO_ACL_IDENTITY_MAX   255 /* bytes of an identity, no NUL */
#define PROTO_ACL_PREFIX_LEN_MAX 255 /* bytes of a prefix, no NUL */
#define PROTO_ACL_RULES_MAX      64  /* role rules in an ACL_REPLY */
#define PROTO_ACL_PREFIX_MAX     256 /* prefix rules in an ACL_REPLY */
#define PROTO_ACL_QUOTA_MAX      64  /* quotas in an ACL_REPLY */
/* The newest ACL_REPLY format: 2 has prefix rules after the role rules,
 * 3 quotas after those; a reply is written in the oldest format that
 * holds what it lists, so a list without quotas reads as it did before
 * they existed (and one without prefix rules either, as before those). */
#define PROTO_ACL_FORMAT 3
/* The largest ACL request body: a RULE_SET with the longest subject and
 * prefix (a QUOTA_SET with the longest subject is 278 bytes). */
#define PROTO_ACL_REQUEST_MAX                                                  \
        (2 + 1 + PROTO_ACL_IDENTITY_MAX + 1 + 1 + PROTO_ACL_PREFIX_LEN_MAX)

struct proto_acl_request {
        uint8_t op; /* enum proto_acl_op */
        /* SET: 0 none, 1 read, 2 lock, 3 admin; RULE_SET: the permission
         * bits, 1..PROTO_ACL_PERMS_ALL; else 0. */
        uint8_t role;
        /* SET, REMOVE: the identity; RULE_SET, RULE_REMOVE: the subject (an
         * identity or a group name); QUOTA_SET, QUOTA_REMOVE: the subject
         * (an identity, or "*": the quota of every identity without one of
         * its own); 1..255 bytes, no NUL; LIST: empty. */
        struct proto_string identity;
        /* RULE_SET, RULE_REMOVE: PROTO_ACL_KIND_PREFIX or
         * PROTO_ACL_KIND_GROUP_PREFIX, and the prefix (0..255 bytes, no
         * NUL; empty: every name). Else 0 and empty. */
        uint8_t kind;
        struct proto_string prefix;
        /* QUOTA_SET: the limit of each enum proto_quota_kind, 0 for none,
         * at least one not 0 (a quota of no limit is a QUOTA_REMOVE). Else
         * every one 0. */
        uint32_t limits[PROTO_QUOTA_KINDS];
};

struct proto_acl_rule {
        uint8_t kind; /* PROTO_ACL_KIND_IDENTITY */
        uint8_t role;
        struct proto_string identity;
};

/* A rule on lock names: `subject` has `perms` on every name that starts
 * with `prefix`. */
struct proto_acl_prefix_rule {
        uint8_t kind;  /* PROTO_ACL_KIND_PREFIX or _GROUP_PREFIX */
        uint8_t perms; /* 1..PROTO_ACL_PERMS_ALL */
        struct proto_string subject; /* 1..255 bytes, no NUL */
        struct proto_string prefix;  /* 0..255 bytes, no NUL */
};

/* A quota: what `subject` may use of each kind, and what it uses now. */
struct proto_acl_quota {
        struct proto_string subject;        /* 1..255 bytes, no NUL; or "*" */
        uint32_t limits[PROTO_QUOTA_KINDS]; /* 0: none; not every one 0 */
        /* Sessions, locks and waiters of the subject's sessions now,
         * cluster-wide, as the leader's state has them; 0 for "*". */
        uint32_t used[PROTO_QUOTA_USED];
};

struct proto_acl_reply {
        uint8_t seeded; /* 0: the cluster has no access list yet */
        uint8_t default_role;
        uint16_t n;
        struct proto_acl_rule rules[PROTO_ACL_RULES_MAX];
        uint16_t n_prefix; /* 0 and n_quota 0: format 1 on the wire */
        struct proto_acl_prefix_rule prefix[PROTO_ACL_PREFIX_MAX];
        uint16_t n_quota; /* 0: format 1 or 2 on the wire */
        struct proto_acl_quota quotas[PROTO_ACL_QUOTA_MAX];
};

/* The name of quota kind `kind` (enum proto_quota_kind) as people read
 * it: "sessions", "locks", "waiters", "watches", "rate"; "unknown" for
 * any other value, so that a kind a newer node sends can still be
 * printed. */
const char *proto_quota_name(int kind);

/* An ACL request; 0 when `r` is invalid (bad op, role, kind, identity,
 * prefix or limits: LIST carries none, SET and REMOVE an identity and no
 * kind or prefix, RULE_SET and RULE_REMOVE a subject, a kind and a prefix,
 * QUOTA_SET and QUOTA_REMOVE a subject and no kind or prefix, only SET
 * and RULE_SET a role and only QUOTA_SET limits) or it does not fit. */
size_t proto_write_acl(uint8_t *out, size_t cap, uint64_t id,
                       const struct proto_acl_request *r);
/* 0 or BATON_EMALFORMED (as proto_write_acl() would refuse, or trailing
 * bytes); strings borrowed from `body`. */
int proto_read_acl(const uint8_t *body, size_t len,
                   struct proto_acl_request *r);

/* An ACL_REPLY: format 3 when `r` has a quota, else format 2 when it has
 * a prefix rule, else format 1; 0 when it does not fit `cap` or
 * PROTO_MAX_BODY, or a count, a prefix rule or a quota is out of range
 * (so that what is written, the reader takes). */
size_t proto_write_acl_reply(uint8_t *out, size_t cap, uint64_t id,
                             const struct proto_acl_reply *r);
/* 0, BATON_EVERSION (a newer format) or BATON_EMALFORMED; strings
 * borrowed from `body`. */
int proto_read_acl_reply(const uint8_t *body, size_t len,
                         struct proto_acl_reply *r);

#endif /* PROTO_ACLWIRE_H */
