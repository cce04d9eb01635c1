/* The cluster's access list on the client protocol: ACL requests and the
 * ACL_REPLY that lists it. */
#ifndef PROTO_ACLWIRE_H
#define PROTO_ACLWIRE_H

#include <stddef.h>
#include <stdint.h>

#include "proto.h"

enum proto_acl_op {
        PROTO_ACL_LIST = 0,
        PROTO_ACL_SET = 1,    /* identity, role */
        PROTO_ACL_REMOVE = 2, /* identity */
};

#define PROTO_ACL_IDENTITY_MAX 255 /* bytes of an identity, no NUL */
#define PROTO_ACL_RULES_MAX    64  /* rules in an ACL_REPLY */
#define PROTO_ACL_FORMAT       1

struct proto_acl_request {
        uint8_t op;   /* enum proto_acl_op */
        uint8_t role; /* SET: 0 none, 1 read, 2 lock, 3 admin; else 0 */
        struct proto_string identity;
};

struct proto_acl_rule {
        uint8_t kind; /* 0: one identity */
        uint8_t role;
        struct proto_string identity;
};

struct proto_acl_reply {
        uint8_t seeded; /* 0: the cluster has no access list yet */
        uint8_t default_role;
        uint16_t n;
        struct proto_acl_rule rules[PROTO_ACL_RULES_MAX];
};

/* An ACL request; 0 when `r` is invalid (bad op, role or identity: LIST
 * carries none, SET and REMOVE 1..255 bytes) or it does not fit. */
size_t proto_write_acl(uint8_t *out, size_t cap, uint64_t id,
                       const struct proto_acl_request *r);
/* 0 or BATON_EMALFORMED (as proto_write_acl() would refuse). */
int proto_read_acl(const uint8_t *body, size_t len,
                   struct proto_acl_request *r);

/* An ACL_REPLY; 0 when it does not fit `cap`. */
size_t proto_write_acl_reply(uint8_t *out, size_t cap, uint64_t id,
                             const struct proto_acl_reply *r);
/* 0, BATON_EVERSION (a newer format) or BATON_EMALFORMED; identities
 * borrowed from `body`. */
int proto_read_acl_reply(const uint8_t *body, size_t len,
                         struct proto_acl_reply *r);

#endif /* PROTO_ACLWIRE_H */
