/* What a node says about itself and its cluster: the STATUS request, the
 * STATUS_REPLY frame in both its shapes, and its copy into the public
 * struct baton_status. */
#ifndef PROTO_STATUS_H
#define PROTO_STATUS_H

#include <stddef.h>
#include <stdint.h>

#include "proto.h"

#define PROTO_MAX_MEMBERS 16
#define PROTO_RELEASE_MAX 32

struct proto_member {
        uint64_t id;
        uint8_t role; /* enum baton_member_role */
        struct proto_string raft_address;
        struct proto_string client_address;
};

/* The PROTO_FLAG_ALARMS tail of a STATUS_REPLY, after the versions (or
 * the members): what is wrong with the node, as GET /ready would say
 * (docs/operations.md). A reader keeps bits it does not know. */
#define PROTO_ALARM_DIVERGED 0x1u /* its state machine's digest differed */
struct proto_alarms {
        uint32_t alarms;         /* PROTO_ALARM_* bits */
        uint64_t diverged_index; /* _DIVERGED: the index compared, else 0 */
        uint64_t digest;         /* _DIVERGED: this node's digest there */
        uint64_t leader_digest;  /* _DIVERGED: the leader's */
};

struct proto_status {
        uint64_t id;
        uint8_t role; /* enum baton_node_role */
        uint64_t term;
        uint64_t leader_id;
        uint64_t commit_index;
        uint64_t applied_index;
        uint64_t last_index;
        uint64_t sessions;
        uint64_t locks;
        uint64_t waiters;
        uint8_t n_members; /* <= PROTO_MAX_MEMBERS */
        struct proto_member members[PROTO_MAX_MEMBERS];
        struct proto_alarms alarms; /* on the wire with PROTO_FLAG_ALARMS */
};

/* The PROTO_FLAG_VERSIONS tail of a STATUS_REPLY, after the members: what
 * the node runs and the newest format of each thing it replicates or
 * keeps on disk (docs/operations.md, "Upgrades"). */
struct proto_versions {
        struct proto_string release; /* "0.3.0": 1..PROTO_RELEASE_MAX bytes */
        uint16_t command;   /* commands and batches: reads 1..command */
        uint16_t snapshot;  /* snapshot images: reads 1..snapshot, writes it */
        uint16_t container; /* the image-and-tail container: reads, writes */
};

/* STATUS: an empty body; `flags` 0, or PROTO_FLAG_VERSIONS to ask for the
 * node's versions too, PROTO_FLAG_ALARMS for its alarms, or both. */
size_t proto_write_status_request(uint8_t *out, size_t cap, uint64_t id,
                                  uint16_t flags);

/*
 * STATUS_REPLY in the shape `flags` say: the fields of `st` and its
 * members, then with PROTO_FLAG_VERSIONS (when the STATUS had it) the
 * versions `v` (not read without it; may then be NULL), then with
 * PROTO_FLAG_ALARMS `st->alarms` (not read without it). 0 also for a
 * member's address over PROTO_ADDRESS_MAX bytes or with a NUL, and for a
 * release that is empty, over PROTO_RELEASE_MAX bytes or with a NUL.
 */
size_t proto_write_status(uint8_t *out, size_t cap, uint64_t id, uint16_t flags,
                          const struct proto_status *st,
                          const struct proto_versions *v);
/* STATUS_REPLY in the shape its header's `flags` say, strings borrowed
 * from the body: `*v` is zeroed without PROTO_FLAG_VERSIONS (and `v` may
 * then be NULL), `st->alarms` without PROTO_FLAG_ALARMS. 0 or
 * BATON_EMALFORMED. */
int proto_read_status(const uint8_t *body, size_t len, uint16_t flags,
                      struct proto_status *st, struct proto_versions *v);

struct baton_status;
struct baton_node_version;

/*
 * Copy a decoded STATUS reply into the public struct baton_status
 * (include/baton/cluster.h), strings included, so that it outlives the frame;
 * `endpoint` (copied; may be NULL) names the node that answered. `*out` is
 * zeroed first.
 */
void proto_status_export(struct baton_status *out, const char *endpoint,
                         const struct proto_status *ps);

/* Copy a decoded versions tail (NULL: a node that sent none, which is
 * one before 0.2.0) and the reply's protocol version into `*out`. */
void proto_versions_export(struct baton_node_version *out, uint8_t protocol,
                           const struct proto_versions *v);

struct baton_node_alarms;

/* Copy a decoded alarms tail (NULL: a node that sent none, which is one
 * before 0.3.0) into `*out`. */
void proto_alarms_export(struct baton_node_alarms *out,
                         const struct proto_alarms *a);

#endif /* PROTO_STATUS_H */
