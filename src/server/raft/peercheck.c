/* The raft transports' check of the peers' data directories
 * (peercheck.h). */
#include "peercheck.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "../base/log.h"

void peercheck_init(struct peercheck *pc, struct dirid *id, const char *path,
                    const struct config *cfg)
{
        unsigned n = cfg->n_members;
        unsigned majority = n / 2 + 1;

        memset(pc, 0, sizeof *pc);
        pc->id = id;
        pc->path = path;
        pc->self = cfg->id;
        pc->need = majority < n - 1 ? majority : n - 1;
        if (pc->need == 0) {
                pc->need = 1;
        }
        pc->grace_ms = 3 * (uint64_t)cfg->election_timeout_ms;
}

void peercheck_ext(const struct peercheck *pc, struct rafthello_ext *e)
{
        e->cluster = pc->id->cluster;
        e->incarnation = pc->id->incarnation;
}

static struct peercheck_peer *peer(struct peercheck *pc, uint64_t id)
{
        unsigned i;

        for (i = 0; i < pc->n_peers; i++) {
                if (pc->peers[i].id == id) {
                        return &pc->peers[i];
                }
        }
        if (pc->n_peers == PEERCHECK_MAX_PEERS) {
                return NULL; /* more peers than members: said again */
        }
        memset(&pc->peers[pc->n_peers], 0, sizeof pc->peers[0]);
        pc->peers[pc->n_peers].id = id;
        return &pc->peers[pc->n_peers++];
}

static bool voter(const struct peercheck *pc, uint64_t id)
{
        return pc->voter != NULL && pc->voter(pc->voter_data, id);
}

/* Write what changed in the identity before raft sees the connection. */
static void save(struct peercheck *pc)
{
        if (pc->save != NULL) {
                pc->save(pc->save_data);
        }
}

/* The peer, accepted, told us its cluster and incarnation: learn them. */
static void learn(struct peercheck *pc, uint64_t id, uint64_t cluster,
                  uint64_t incarnation)
{
        struct dirid *d = pc->id;
        bool changed = false;

        if (d->cluster == 0 && cluster != 0) {
                d->cluster = cluster;
                changed = true;
                log_info("data directory %s: cluster %016" PRIx64
                         " recorded, as node %" PRIu64 " knows it",
                         pc->path, cluster, id);
        }
        if (incarnation != 0) {
                changed |= dirid_remember(d, id, incarnation);
        }
        if (changed) {
                save(pc);
        }
}

static void give_up(struct peercheck *pc)
{
        pc->gave_up = true;
        if (pc->refused != NULL) {
                pc->refused(pc->refused_data);
        }
}

/* Peer `p` is of another cluster than ours: count it, and give up when
 * enough say so, or when for long enough nobody else accepted us. */
static void other_cluster(struct peercheck *pc, struct peercheck_peer *p,
                          uint64_t cluster, uint64_t now)
{
        unsigned i, count = 0;
        char ids[128];
        size_t off = 0;

        p->other_cluster = true;
        p->cluster = cluster;
        if (pc->first_refusal == 0) {
                pc->first_refusal = now != 0 ? now : 1;
        }
        for (i = 0; i < pc->n_peers; i++) {
                if (pc->peers[i].other_cluster) {
                        count++;
                        off += (size_t)snprintf(
                            ids + (off < sizeof ids ? off : sizeof ids - 1),
                            off < sizeof ids ? sizeof ids - off : 1,
                            "%s%" PRIu64, count > 1 ? ", " : "",
                            pc->peers[i].id);
                }
        }
        if (pc->accepted || pc->gave_up ||
            (count < pc->need && now - pc->first_refusal < pc->grace_ms)) {
                return;
        }
        log_error("data directory %s refused by node%s %s: %s data "
                  "director%s cluster %016" PRIx64 "'s, this one "
                  "cluster %016" PRIx64 "'s%s: it was made for another "
                  "cluster (or made anew with other member lines or "
                  "cluster-name); start this node on its own cluster's "
                  "directory (docs/operations.md, \"The data directory\")",
                  pc->path, count > 1 ? "s" : "", ids,
                  count > 1 ? "their" : "its", count > 1 ? "ies are" : "y is",
                  cluster, pc->id->cluster,
                  count < pc->need ? ", and no other peer accepted it" : "");
        give_up(pc);
}

/* Say once per episode that we refuse peer `p`: `what` names the
 * connection ("raft connection from node 3 (127.0.0.1:40112) refused"). */
static void log_ours(struct peercheck *pc, struct peercheck_peer *p,
                     const char *what, enum rafthello_code code,
                     uint64_t cluster, uint64_t incarnation)
{
        const struct dirid *d = pc->id;

        if (p != NULL && p->ours == code) {
                return;
        }
        if (p != NULL) {
                p->ours = (uint8_t)code;
        }
        if (code == RAFTHELLO_REMOVED) {
                log_warn("%s: it is not a member of the cluster (member "
                         "remove): told so",
                         what);
                return;
        }
        if (code == RAFTHELLO_CLUSTER) {
                log_warn("%s: its data directory was made for cluster "
                         "%016" PRIx64 ", this node's for cluster %016" PRIx64
                         ": it belongs to another cluster",
                         what, cluster, d->cluster);
                return;
        }
        log_warn("%s: it presents a data directory with incarnation "
                 "%016" PRIx64 ", and this node knows that voter by "
                 "incarnation %016" PRIx64 ": its directory was wiped or "
                 "replaced, and it must not vote or count towards commits "
                 "as if it had kept its data",
                 what, incarnation, p != NULL ? dirid_peer(d, p->id) : 0);
}

/* Whether node `id`, presenting `cluster`, was removed: this node leads
 * (its configuration is the newest), both are of one known cluster, and
 * `id` is in no role of the configuration. */
static bool removed(const struct peercheck *pc, uint64_t id, uint64_t cluster)
{
        return pc->member != NULL && pc->leading != NULL &&
               pc->id->cluster != 0 && cluster == pc->id->cluster &&
               pc->leading(pc->voter_data) && !pc->member(pc->voter_data, id);
}

bool peercheck_incoming(struct peercheck *pc, uint64_t id, const char *from,
                        const struct rafthello_ext *e, bool has_ext,
                        uint64_t now, struct rafthello_verdict *v)
{
        struct peercheck_peer *p = peer(pc, id);
        enum rafthello_code code;
        char how[160];

        memset(v, 0, sizeof *v);
        v->cluster = pc->id->cluster;
        v->incarnation = pc->id->incarnation;
        v->known = dirid_peer(pc->id, id);
        if (!has_ext) {
                return true; /* an older batond: nothing to check */
        }
        code = rafthello_judge(pc->id, id, voter(pc, id), e->cluster,
                               e->incarnation);
        if (code == RAFTHELLO_OK && removed(pc, id, e->cluster)) {
                code = RAFTHELLO_REMOVED;
        }
        v->code = (uint8_t)code;
        if (code != RAFTHELLO_OK) {
                snprintf(how, sizeof how,
                         "raft connection from node %" PRIu64 " (%s) refused",
                         id, from);
                log_ours(pc, p, how, code, e->cluster, e->incarnation);
                if (code == RAFTHELLO_CLUSTER && p != NULL) {
                        other_cluster(pc, p, e->cluster, now);
                }
                return false;
        }
        if (p != NULL && p->ours != 0) {
                log_info("raft connection from node %" PRIu64 " accepted "
                         "again",
                         id);
        }
        if (p != NULL) {
                p->ours = 0;
                p->other_cluster = false;
        }
        learn(pc, id, e->cluster, e->incarnation);
        v->cluster = pc->id->cluster;
        if (e->cluster != 0 && e->cluster == pc->id->cluster) {
                pc->accepted = true;
        }
        return true;
}

/* Node `id` refused this node: say so once, and give up if it must. */
static void refused_by(struct peercheck *pc, struct peercheck_peer *p,
                       uint64_t id, const struct rafthello_verdict *v,
                       uint64_t now)
{
        const struct dirid *d = pc->id;

        if (v->code == RAFTHELLO_REMOVED) {
                if (pc->gave_up) {
                        return;
                }
                /* Never in a configuration: a node with an empty directory
                 * that learned the cluster's id from a peer before its
                 * `member add`, as a member removed and added back with a
                 * wiped directory does. It waits to be added. */
                if (pc->member != NULL &&
                    !pc->member(pc->voter_data, pc->self)) {
                        if (!pc->waiting_add) {
                                log_info("node %" PRIu64 " (leader) has not "
                                         "added this node yet: waiting for "
                                         "member add",
                                         id);
                        }
                        pc->waiting_add = true;
                        return;
                }
                log_info("node %" PRIu64 " (leader) refuses this node's raft "
                         "connections: this node is not in its "
                         "configuration",
                         id);
                peercheck_removed(pc);
                return;
        }
        if (v->code == RAFTHELLO_INCARNATION) {
                if (pc->gave_up) {
                        return;
                }
                log_error("data directory %s refused by node %" PRIu64
                          ": it knows node %" PRIu64 " (this node) by a "
                          "data directory with incarnation %016" PRIx64
                          ", and this one is %016" PRIx64 ": this directory "
                          "was wiped or replaced since; do not start node "
                          "%" PRIu64 " on it again: batonctl member remove "
                          "%" PRIu64 ", then member add it with an empty "
                          "data directory and join = true "
                          "(docs/operations.md, \"The data directory\")",
                          pc->path, id, pc->self, v->known, d->incarnation,
                          pc->self, pc->self);
                give_up(pc);
                return;
        }
        if (p != NULL && p->theirs != v->code) {
                p->theirs = v->code;
                log_warn("node %" PRIu64 " refuses this node's raft "
                         "connections: its data directory was made for "
                         "cluster %016" PRIx64 ", this one (%s) for cluster "
                         "%016" PRIx64,
                         id, v->cluster, pc->path, d->cluster);
        }
        if (p != NULL) {
                other_cluster(pc, p, v->cluster, now);
        }
}

bool peercheck_verdict(struct peercheck *pc, uint64_t id,
                       const struct rafthello_verdict *v, uint64_t now)
{
        struct peercheck_peer *p = peer(pc, id);
        enum rafthello_code code;
        char how[96];

        if (v->code != RAFTHELLO_OK) {
                refused_by(pc, p, id, v, now);
                return false;
        }
        if (p != NULL && p->theirs != 0) {
                log_info("node %" PRIu64 " accepts this node's raft "
                         "connections again",
                         id);
                p->theirs = 0;
        }
        /* It accepted us; we judge it as it judged us. */
        code = rafthello_judge(pc->id, id, voter(pc, id), v->cluster,
                               v->incarnation);
        if (code != RAFTHELLO_OK) {
                snprintf(how, sizeof how,
                         "raft connection to node %" PRIu64 " closed", id);
                log_ours(pc, p, how, code, v->cluster, v->incarnation);
                return false;
        }
        if (p != NULL) {
                p->ours = 0;
                p->other_cluster = false;
        }
        learn(pc, id, v->cluster, v->incarnation);
        if (v->cluster != 0 && v->cluster == pc->id->cluster) {
                pc->accepted = true;
        }
        return true;
}

void peercheck_members(struct peercheck *pc, const uint64_t *ids, unsigned n)
{
        unsigned i, j;

        for (i = 0; i < pc->n_members; i++) {
                for (j = 0; j < n && ids[j] != pc->members[i]; j++) {
                }
                if (j == n && pc->members[i] != pc->self && pc->drop != NULL) {
                        pc->drop(pc->drop_data, pc->members[i]);
                }
        }
        pc->n_members = n < PEERCHECK_MAX_PEERS ? n : PEERCHECK_MAX_PEERS;
        memcpy(pc->members, ids, pc->n_members * sizeof ids[0]);
}

void peercheck_leading(struct peercheck *pc)
{
        unsigned i;

        if (pc->member == NULL || pc->drop == NULL) {
                return;
        }
        for (i = 0; i < pc->n_peers; i++) {
                uint64_t id = pc->peers[i].id;
                if (id != pc->self && !pc->member(pc->voter_data, id)) {
                        pc->drop(pc->drop_data, id);
                }
        }
}

void peercheck_removed(struct peercheck *pc)
{
        if (pc->gave_up) {
                return;
        }
        log_warn("this node is no longer a member of the cluster (member "
                 "remove): stopping");
        pc->removed = true;
        give_up(pc);
}

void peercheck_voters(struct peercheck *pc, const uint64_t *ids, unsigned n)
{
        const struct dirid *d = pc->id;
        struct peercheck_peer *p;
        unsigned i, j;

        for (i = 0; i < d->n_peers; i++) {
                for (j = 0; j < n && ids[j] != d->peers[i].id; j++) {
                }
                if (j == n && (p = peer(pc, d->peers[i].id)) != NULL) {
                        p->forgotten = true;
                }
        }
        if (dirid_forget_others(pc->id, ids, n)) {
                save(pc);
        }
        /* A node that joins replays the configurations from before it
         * was added: a member's removal and its return come after this
         * node learned that member's incarnation on a connection still
         * open, and would leave it unknown for good. */
        for (i = 0; i < n; i++) {
                p = ids[i] != pc->self ? peer(pc, ids[i]) : NULL;
                if (p != NULL && p->forgotten && dirid_peer(d, ids[i]) == 0) {
                        p->forgotten = false;
                        if (pc->drop != NULL) {
                                pc->drop(pc->drop_data, ids[i]);
                        }
                }
        }
}
