/* Which node of which cluster a data directory belongs to: the identity
 * record batond keeps in it, as text, and how a cluster's id is derived. */
#ifndef SERVER_DIRID_H
#define SERVER_DIRID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../config/config.h"

/*
 * No I/O here: datadir.h reads and writes the file, peercheck.h decides
 * with it. The file, in a data directory's `batond.identity`:
 *
 *     # comment lines
 *     format 1
 *     cluster 3f2a9c0e5b7d6411      (or "cluster unknown")
 *     node 3
 *     incarnation 9e41c2d07a5b3f18
 *     peer 1 0c5d2e8f1a3b4c67       (zero or more)
 *
 * - cluster: the id of the cluster the directory was made for; 0
 *   ("unknown") until learned, for a directory made by `join = true` or
 *   adopted from a batond that kept no identity.
 * - node: the raft id the directory was made for.
 * - incarnation: drawn at random when the directory is made, so that a
 *   directory made again (wiped) under the same id is told from the old
 *   one by the peers that knew the old one.
 * - peer: the incarnation this node last accepted from each other member
 *   (peercheck.h); forgotten when that member stops being a voter.
 *
 * Unknown keys are skipped (a later batond may add some); a format above
 * DIRID_FORMAT is refused.
 */

#define DIRID_FORMAT    1
#define DIRID_MAX_PEERS 32   /* more than CONFIG_MAX_MEMBERS: joined members */
#define DIRID_TEXT_MAX  2048 /* the file with every peer */

struct dirid_peer {
        uint64_t id;
        uint64_t incarnation;
};

struct dirid {
        uint64_t cluster; /* 0: unknown */
        uint64_t node;
        uint64_t incarnation; /* never 0 */
        unsigned n_peers;
        struct dirid_peer peers[DIRID_MAX_PEERS];
};

/* The file's text, NUL-terminated, into `buf`: its length, or the length
 * needed when `cap` is too small (then `buf` holds nothing useful). */
size_t dirid_format(const struct dirid *d, char *buf, size_t cap);

/* Read the file's text (`len` bytes, NUL not needed). 0, or BATON_EINVAL
 * with "line N: reason" in `errmsg` (`d` then undefined). */
int dirid_parse(struct dirid *d, const char *text, size_t len, char *errmsg,
                size_t size);

/*
 * The id of a cluster whose first nodes bootstrap `members` (any order:
 * each node's config lists the same lines), named `name` (the cluster-name
 * key, "" when unset), and `salt` ("" for a bootstrap; a restore passes
 * what identifies its backup): every node computes the same without
 * talking. Ids and raft addresses only: the client addresses do not reach
 * raft's bootstrap and may be written differently on each node. A stable
 * 64-bit FNV-1a and mix, defined here for every version: it is written in
 * data directories and sent between nodes. Never 0.
 */
uint64_t dirid_cluster_of(const struct config_member *members, unsigned n,
                          const char *name, const char *salt);

/* The incarnation recorded for peer `id`; 0 when none. */
uint64_t dirid_peer(const struct dirid *d, uint64_t id);

/* Record `incarnation` for peer `id` (replacing what was there). Whether
 * the record changed; false also when it is full (then nothing changes). */
bool dirid_remember(struct dirid *d, uint64_t id, uint64_t incarnation);

/* Forget every peer not among the `n` ids of `voters`. Whether any was
 * forgotten. */
bool dirid_forget_others(struct dirid *d, const uint64_t *voters, unsigned n);

#endif /* SERVER_DIRID_H */
