/* The raft transports' check of the peers' data directories: what this
 * node's hellos say of its own, what it makes of the peers' hellos and
 * verdicts, what it logs, and when a node refused at start gives up. */
#ifndef SERVER_PEERCHECK_H
#define SERVER_PEERCHECK_H

#include <stdbool.h>
#include <stdint.h>

#include "../config/config.h"
#include "../disk/dirid.h"
#include "rafthello.h"

/*
 * Every raft message a node sends travels on a connection it dialled
 * (libraft 0.22.1 sends on its own connections and reads only those it
 * accepted), so the accepting side's check decides what reaches raft:
 *
 * - A hello whose cluster differs from this node's (both known) is
 *   refused: the directory was made for another cluster.
 * - A hello from a voter that this node knows by another incarnation is
 *   refused: that voter's directory was wiped or replaced, and its raft
 *   would vote and acknowledge as if it had never voted or stored what it
 *   had acknowledged. A node that is not a voter now (removed, or added
 *   and not yet promoted) may present a new directory: replacing a member
 *   under the same id is `member remove`, then `member add` of a node with
 *   an empty directory and join = true.
 * - Otherwise the connection goes to raft, and what was learned is written
 *   into the identity file first: the peer's incarnation, and the
 *   cluster's id if this node did not know it yet (join = true, or a
 *   directory adopted from an older batond).
 *
 * The dialling side reads the verdict and judges the answering node the
 * same way (a peer wiped while this node led is refused here). Each
 * refusal is logged once per peer and reason until that peer is accepted
 * again, on both sides. Incarnations of nodes that stop being voters in
 * raft's configuration are forgotten (peercheck_voters()).
 *
 * Giving up: a node told by a peer that it knows this node's id by
 * another directory logs one line naming the directory, the reason and
 * the remedy, and exits (the refused callback). So does a node refused
 * for its cluster, before any peer of its cluster accepted it, by peers
 * enough to be sure it is the odd one (a majority of the configured
 * members, but at most all the others), or by fewer when for three
 * election timeouts after the first refusal no peer accepted it (a
 * foreign directory whose raft configuration names no peer of this
 * cluster hears from the leader alone).
 *
 * A removed member learns it: the leader (whose configuration is the
 * newest) refuses a hello of its own cluster from a node that is not in
 * its raft configuration in any role, with the verdict REMOVED; the node
 * refused so, or one that sees a committed configuration without itself
 * after one with itself (peercheck_removed()), logs "this node is no
 * longer a member of the cluster (member remove): stopping" and gives up
 * with `removed` set (batond then exits 0). A new leader drops the
 * connections it accepted from nodes that are not in its configuration
 * (peercheck_leading()), so that one removed while another node led
 * dials it again and hears so. A node not added yet has no
 * cluster in its hello (an empty directory), or is not dialled by raft
 * before it is added, so it is never told so; a wiped voter is refused
 * for its incarnation, as before, since it is still a member.
 *
 * Peers without the addition (batond 0.1, or an address over 44 bytes)
 * are accepted unchecked, as before. What this cannot see: a peer that
 * never heard from a wiped directory (it received no connection from it
 * and dialled it never) cannot recognise its replacement; nor can a
 * node that missed every configuration without a member (it was down
 * from before that member's removal until after its return) tell a
 * replaced member from a wiped one; docs/operations.md says what to do.
 */

#define PEERCHECK_MAX_PEERS DIRID_MAX_PEERS

/* Caller-allocated, and not to move once the node starts. Loop thread. */
struct peercheck {
        struct dirid *id; /* borrowed: this directory's, updated */
        const char *path; /* borrowed: its path, for the log */
        /* Write `id` (datadir_save()), before raft sees a connection that
         * taught it something; it logs its own failure (NULL: nothing). */
        void (*save)(void *data);
        void *save_data;
        uint64_t self;
        unsigned need;          /* cluster refusals that end a start */
        uint64_t grace_ms;      /* ... or time after the first, with fewer */
        uint64_t first_refusal; /* when the first came (0: none yet) */
        /* Whether `id` is a voter in raft's configuration now (node.c's;
         * NULL: nobody is). */
        bool (*voter)(void *data, uint64_t id);
        void *voter_data;
        /* Whether `id` is in raft's configuration now, in any role, and
         * whether this node leads (node.c's, with voter_data; NULL: no
         * node is told it was removed). */
        bool (*member)(void *data, uint64_t id);
        bool (*leading)(void *data);
        /* The transport's: close every connection with node `id` (NULL:
         * none), so that a removed node dials again and hears why. */
        void (*drop)(void *data, uint64_t id);
        void *drop_data;
        /* The members of the configuration last told (peercheck_members). */
        unsigned n_members;
        uint64_t members[PEERCHECK_MAX_PEERS];
        /* Called once when this node gives up, after the line is logged
         * (NULL: nothing happens). */
        void (*refused)(void *data);
        void *refused_data;
        bool accepted; /* a peer of this node's cluster accepted it */
        bool gave_up;
        bool removed;     /* gave up: this node is no longer a member */
        bool waiting_add; /* told REMOVED before it was ever added: said */
        unsigned n_peers;
        struct peercheck_peer {
                uint64_t id;
                uint8_t theirs;     /* its refusal of us, last logged */
                uint8_t ours;       /* our refusal of it, last logged */
                bool other_cluster; /* counted towards `need` */
                bool forgotten;     /* its incarnation, as it left voting */
                uint64_t cluster;   /* the cluster it said it is of */
        } peers[PEERCHECK_MAX_PEERS];
};

/* Checks for node cfg->id whose data directory at `path` has the
 * identity `id` (both borrowed for the checks' life); set `save`, `voter`
 * and `refused` after. */
void peercheck_init(struct peercheck *pc, struct dirid *id, const char *path,
                    const struct config *cfg);

/* The addition this node's hellos carry. */
void peercheck_ext(const struct peercheck *pc, struct rafthello_ext *e);

/*
 * A hello from node `id` (`from`: where it came from, for the log), with
 * the addition `e` when `has_ext`, at `now` (ms, any monotonic origin).
 * Whether raft may have the connection; `*v` is the verdict to answer
 * with (when `has_ext`).
 */
bool peercheck_incoming(struct peercheck *pc, uint64_t id, const char *from,
                        const struct rafthello_ext *e, bool has_ext,
                        uint64_t now, struct rafthello_verdict *v);

/* The verdict node `id` answered on a connection this node dialled, at
 * `now`: whether the connection may stay open. */
bool peercheck_verdict(struct peercheck *pc, uint64_t id,
                       const struct rafthello_verdict *v, uint64_t now);

/* The `n` members (any role) of raft's configuration now: connections
 * with a node that was a member and is no more are dropped, since raft
 * keeps using those it has, and a removed node hears the REMOVED verdict
 * only when it dials again. */
void peercheck_members(struct peercheck *pc, const uint64_t *ids, unsigned n);

/* This node has just become leader: connections from nodes that said
 * hello and are in no role of its configuration are dropped. A node
 * removed by a leader that lost leadership before the removed node heard
 * of it keeps the connections the new leader accepted while it followed,
 * and campaigns on them, refused, for ever; dialling again, it hears the
 * REMOVED verdict and stops. */
void peercheck_leading(struct peercheck *pc);

/* This node learned that it is no longer a member: say so, once, and
 * give up with `removed` set. */
void peercheck_removed(struct peercheck *pc);

/* The `n` voters of raft's configuration now: the others' incarnations
 * are forgotten (and the identity file saved if that changed it). One
 * forgotten that votes again (removed, then added back) has its
 * connections dropped: those still open are from before, and its
 * incarnation comes only with the hello of a new one. */
void peercheck_voters(struct peercheck *pc, const uint64_t *ids, unsigned n);

#endif /* SERVER_PEERCHECK_H */
