/* What a node dialling a raft peer says of its data directory, what the
 * peer answers, and how each side judges the other's: Baton's addition to
 * the hellos of both raft transports (peer.h, plaintcp.h). No I/O. */
#ifndef SERVER_RAFTHELLO_H
#define SERVER_RAFTHELLO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../lib/address.h"
#include "../disk/dirid.h"

/*
 * Both transports' hellos carry the dialling node's raft address (TLS:
 * u16 length and bytes, at most ADDRESS_MAX; libraft's TCP handshake: u64
 * length, NUL-padded to 8 bytes). Every batond since 0.1.0 reads that
 * field as a C string, so the addition rides behind the address's NUL,
 * where an older node does not look: an older node accepts a newer one
 * and the other way round, as a rolling upgrade needs.
 *
 * The addition (after the NUL): "bx", version 1, then u64 cluster and u64
 * incarnation (dirid.h), little-endian: RAFTHELLO_EXT_LEN bytes. A node
 * whose address leaves no room under ADDRESS_MAX (addresses over 44
 * bytes) sends none, and is then taken for an older node.
 *
 * A node that received an addition answers with a verdict, once, before
 * any other byte on that connection (raft never writes on a connection it
 * accepted, and never reads one it dialled): "bv", version 1, u8 code,
 * then u64 cluster, u64 incarnation (its own) and u64 known (the
 * incarnation it knows the dialling node by; 0: none), little-endian:
 * RAFTHELLO_VERDICT_LEN bytes. After a refusal it closes the connection
 * without giving it to raft.
 */

#define RAFTHELLO_EXT_LEN     19
#define RAFTHELLO_VERDICT_LEN 28
/* The longest raft address the TLS hello carries the addition with. */
#define RAFTHELLO_ADDRESS_FITS (ADDRESS_MAX - 1 - RAFTHELLO_EXT_LEN)

/* The TLS transport's hello (peer.h): "BATONPR1", u64 raft id, then u16
 * length and the address field (1..ADDRESS_MAX bytes), little-endian. */
#define RAFTHELLO_TLS_FIXED (8 + 8 + 2)
#define RAFTHELLO_TLS_MAX   (RAFTHELLO_TLS_FIXED + ADDRESS_MAX)

/* Bytes of a hello or a verdict as they arrive, in any pieces. */
struct rafthello_in {
        uint8_t buf[RAFTHELLO_TLS_MAX];
        size_t len;
};

struct rafthello_ext {
        uint64_t cluster; /* 0: unknown */
        uint64_t incarnation;
};

enum rafthello_code {
        RAFTHELLO_OK = 0,
        /* Both know their cluster's id, and the ids differ. */
        RAFTHELLO_CLUSTER = 1,
        /* The judge knows the other node's id by another data directory,
         * and that node is a voter. */
        RAFTHELLO_INCARNATION = 2,
        /* The judge leads, both know the same cluster, and the dialling
         * node is not in the judge's raft configuration: it was removed
         * (member remove). Nodes before this code read it as no verdict
         * (and close the connection all the same). */
        RAFTHELLO_REMOVED = 3,
};

struct rafthello_verdict {
        uint8_t code; /* enum rafthello_code */
        uint64_t cluster;
        uint64_t incarnation;
        uint64_t known;
};

/* The address field of a hello: `address`, its NUL, then the addition:
 * its length, or 0 when more than `cap` bytes would be needed (then the
 * caller sends the address alone). */
size_t rafthello_field(uint8_t *out, size_t cap, const char *address,
                       const struct rafthello_ext *e);

/*
 * Split a received address field of `len` bytes: the address (the bytes
 * before the first NUL, or all of them) NUL-terminated into `address`,
 * and whether an addition follows, into `*e`. 0, or -1 when the address
 * is empty or does not fit in `cap` bytes with its NUL.
 */
int rafthello_split(const uint8_t *field, size_t len, char *address, size_t cap,
                    struct rafthello_ext *e, bool *has_ext);

/* The TLS hello of node `id` with the address field `field` (`len`
 * bytes, at most ADDRESS_MAX) into `out` (RAFTHELLO_TLS_MAX bytes): its
 * length. */
size_t rafthello_tls_encode(uint8_t *out, uint64_t id, const uint8_t *field,
                            size_t len);

/* A whole hello, as received. */
struct rafthello_hello {
        uint64_t id;
        char address[ADDRESS_MAX + 1];
        struct rafthello_ext ext; /* when has_ext */
        bool has_ext;
};

/*
 * Take the bytes of a TLS hello from `p`: how many were the hello's (the
 * rest are raft's), with `*done` set and `*h` filled once it is whole; -1
 * when the bytes are not a hello (a wrong magic, id 0, an empty or too
 * long address).
 */
long rafthello_tls_take(struct rafthello_in *in, const uint8_t *p, size_t n,
                        bool *done, struct rafthello_hello *h);

/* The address field this node's hellos carry: `address` and, when `e` is
 * not NULL and it fits in `cap`, the addition. Its length; `*ext` says
 * whether it has the addition. */
size_t rafthello_own_field(uint8_t *out, size_t cap, const char *address,
                           const struct rafthello_ext *e, bool *ext);

/* Take the bytes of a verdict from `p`: how many were the verdict's, with
 * `*done` set and `*v` decoded once it is whole; -1 when it is whole and
 * not a verdict. */
long rafthello_verdict_take(struct rafthello_in *in, const uint8_t *p, size_t n,
                            bool *done, struct rafthello_verdict *v);

void rafthello_verdict_encode(uint8_t *out, const struct rafthello_verdict *v);

/* Decode RAFTHELLO_VERDICT_LEN bytes; false when they are not a verdict. */
bool rafthello_verdict_decode(const uint8_t *in, struct rafthello_verdict *v);

/*
 * Judge node `peer` presenting `cluster` and `incarnation` to this node,
 * whose identity is `self`; `voter`: whether `peer` is a voter in this
 * node's raft configuration now. CLUSTER when both clusters are known and
 * differ; INCARNATION when `self` knows `peer` by another incarnation and
 * it is a voter (a wiped voter would vote and count towards commits as if
 * it remembered what it had voted and stored); else OK. A peer that is
 * not a voter (removed, or added and not yet promoted) may present a new
 * directory: that is how a member is replaced under the same id.
 */
enum rafthello_code rafthello_judge(const struct dirid *self, uint64_t peer,
                                    bool voter, uint64_t cluster,
                                    uint64_t incarnation);

#endif /* SERVER_RAFTHELLO_H */
