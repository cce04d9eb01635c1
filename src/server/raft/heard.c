/* What this node last heard from a leader (see heard.h). */
#include "heard.h"

#include <stddef.h>
#include <stdint.h>

#include "changesplit.h"

static void on_recv(struct raft_io *io, struct raft_message *msg)
{
        struct heard *h =
            (struct heard *)(void *)((char *)io - offsetof(struct heard, io));
        const struct raft_append_entries *a = &msg->append_entries;

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
}

uint64_t heard_leader_commit(const struct heard *h, uint64_t term)
{
        return h->term == term ? h->leader_commit : 0;
}
