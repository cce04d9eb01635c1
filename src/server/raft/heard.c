/* What this node last heard from a leader (see heard.h). */
#include "heard.h"

#include <stddef.h>
#include <stdint.h>

#include "changesplit.h"

/* A message of peer `id` arrived at `now`: its slot, or the oldest's. */
static void note_peer(struct heard *h, uint64_t id, uint64_t now)
{
        unsigned i, oldest = 0;

        for (i = 0; i < h->n_peers; i++) {
                if (h->peers[i].id == id) {
                        h->peers[i].at = now;
                        return;
                }
                if (h->peers[i].at < h->peers[oldest].at) {
                        oldest = i;
                }
        }
        i = h->n_peers < HEARD_PEERS ? h->n_peers++ : oldest;
        h->peers[i].id = id;
        h->peers[i].at = now;
}

bool heard_from_since(const struct heard *h, uint64_t id, uint64_t since)
{
        unsigned i;

        for (i = 0; i < h->n_peers; i++) {
                if (h->peers[i].id == id) {
                        return h->peers[i].at >= since;
                }
        }
        return false;
}

static void on_recv(struct raft_io *io, struct raft_message *msg)
{
        struct heard *h =
            (struct heard *)(void *)((char *)io - offsetof(struct heard, io));
        const struct raft_append_entries *a = &msg->append_entries;

        note_peer(h, msg->server_id, io->time(io));
        if (msg->type == RAFT_INSTALL_SNAPSHOT &&
            ((h->writing != NULL && *h->writing) ||
             (h->installing != NULL && *h->installing))) {
                /* Freed as raft frees a message it gets while closing. */
                raft_configuration_close(&msg->install_snapshot.conf);
                raft_free(msg->install_snapshot.data.base);
                h->installs_dropped++;
                return;
        }
        if (msg->type != RAFT_APPEND_ENTRIES) {
                h->recv(io, msg);
                return;
        }
        h->appends++;
        /* A leader of an older term is refused by raft: not counted. */
        if (a->term >= h->term) {
                if (a->term > h->term) {
                        h->term = a->term;
                        h->leader_commit = 0;
                }
                if (a->leader_commit > h->leader_commit) {
                        h->leader_commit = a->leader_commit;
                }
        }
        h->changes_split +=
            changesplit_deliver(io, msg, CHANGESPLIT_UV, h->recv);
}

static int start(struct raft_io *io, unsigned msecs, raft_io_tick_cb tick,
                 raft_io_recv_cb recv)
{
        struct heard *h =
            (struct heard *)(void *)((char *)io - offsetof(struct heard, io));

        h->recv = recv;
        h->tick = tick;
        return h->start(io, msecs, tick, on_recv);
}

void heard_wrap(struct heard *h)
{
        h->start = h->io.start;
        h->io.start = start;
        h->recv = NULL;
        h->tick = NULL;
        h->appends = 0;
        h->term = 0;
        h->leader_commit = 0;
        h->writing = NULL;
        h->installing = NULL;
        h->installs_dropped = 0;
        h->changes_split = 0;
        h->n_peers = 0;
}

uint64_t heard_leader_commit(const struct heard *h, uint64_t term)
{
        return h->term == term ? h->leader_commit : 0;
}
