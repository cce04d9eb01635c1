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
 * and string prefix. So LIST, SET and REMOVE keep the bytes of a release
 * before prefix rules, and a node of that release refuses the new ops as
 * it refuses any unknown op (ERROR BATON_EMALFORMED).
 */
enum proto_acl_op {
        PROTO_ACL_LIST = 0,
        PROTO_ACL_SET = 1,         /* identity, role */
        PROTO_ACL_REMOVE = 2,      /* identity */
        PROTO_ACL_RULE_SET = 3,    /* perms, subject, kind, prefix */
        PROTO_ACL_RULE_REMOVE = 4, /* subject, kind, prefix */
};

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
/* The newest ACL_REPLY format: 2 has prefix rules after the role rules;
 * a reply without any is written in format 1, as before they existed. */
#define PROTO_ACL_FORMAT 2
/* The largest ACL request body: a RULE_SET with the longest subject and
 * prefix. */
#define PROTO_ACL_REQUEST_MAX                                                  \
        (2 + 1 + PROTO_ACL_IDENTITY_MAX + 1 + 1 + PROTO_ACL_PREFIX_LEN_MAX)

struct proto_acl_request {
        uint8_t op; /* enum proto_acl_op */
        /* SET: 0 none, 1 read, 2 lock, 3 admin; RULE_SET: the permission
         * bits, 1..PROTO_ACL_PERMS_ALL; else 0. */
        uint8_t role;
        /* SET, REMOVE: the identity; RULE_SET, RULE_REMOVE: the subject (an
         * identity or a group name); 1..255 bytes, no NUL; LIST: empty. */
        struct proto_string identity;
        /* RULE_SET, RULE_REMOVE: PROTO_ACL_KIND_PREFIX or
         * PROTO_ACL_KIND_GROUP_PREFIX, and the prefix (0..255 bytes, no
         * NUL; empty: every name). Else 0 and empty. */
        uint8_t kind;
        struct proto_string prefix;
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

struct proto_acl_reply {
        uint8_t seeded; /* 0: the cluster has no access list yet */
        uint8_t default_role;
        uint16_t n;
        struct proto_acl_rule rules[PROTO_ACL_RULES_MAX];
        uint16_t n_prefix; /* 0: format 1 on the wire */
        struct proto_acl_prefix_rule prefix[PROTO_ACL_PREFIX_MAX];
};

/* An ACL request; 0 when `r` is invalid (bad op, role, kind, identity or
 * prefix: LIST carries none, SET and REMOVE an identity and no kind or
 * prefix, RULE_SET and RULE_REMOVE a subject, a kind and a prefix, and
 * only SET and RULE_SET a role) or it does not fit. */
size_t proto_write_acl(uint8_t *out, size_t cap, uint64_t id,
                       const struct proto_acl_request *r);
/* 0 or BATON_EMALFORMED (as proto_write_acl() would refuse, or trailing
 * bytes); strings borrowed from `body`. */
int proto_read_acl(const uint8_t *body, size_t len,
                   struct proto_acl_request *r);

/* An ACL_REPLY: format 1 when `r` has no prefix rule, else format 2; 0
 * when it does not fit `cap` or PROTO_MAX_BODY, or a count or a prefix
 * rule is out of range (so that what is written, the reader takes). */
size_t proto_write_acl_reply(uint8_t *out, size_t cap, uint64_t id,
                             const struct proto_acl_reply *r);
/* 0, BATON_EVERSION (a newer format) or BATON_EMALFORMED; strings
 * borrowed from `body`. */
int proto_read_acl_reply(const uint8_t *body, size_t len,
                         struct proto_acl_reply *r);

#endif /* PROTO_ACLWIRE_H */
