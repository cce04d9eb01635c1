/* What this node last heard from a leader (see heard.h). */
#include "heard.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The position of the first RAFT_CHANGE entry of `a` after its first
 * entry, or 0 when there is none. */
static unsigned change_after_first(const struct raft_append_entries *a)
{
        unsigned i;

        for (i = 1; i < a->n_entries; i++) {
                if (a->entries[i].type == RAFT_CHANGE) {
                        return i;
                }
        }
        return 0;
}

/* The room an entry's `len` bytes take in a batch: a multiple of 8. */
static size_t padded(size_t len)
{
        return (len + 7) / 8 * 8;
}

/* Make `tail` an AppendEntries of the entries of `msg` from position `k`
 * on, with a copy of their bytes in a batch of its own laid out as raft's
 * uv backend decodes one (each buffer 8-byte aligned, an empty one NULL),
 * since raft frees a message's batch through its first entry. Returns 0,
 * or RAFT_NOMEM with nothing changed. */
static int split_tail(const struct raft_message *msg, unsigned k,
                      struct raft_message *tail)
{
        const struct raft_append_entries *a = &msg->append_entries;
        struct raft_append_entries *t = &tail->append_entries;
        unsigned n = a->n_entries - k, i;
        size_t size = 0, off = 0;
        uint8_t *batch;

        for (i = k; i < a->n_entries; i++) {
                size += padded(a->entries[i].buf.len);
        }
        *tail = *msg;
        t->entries = raft_malloc(n * sizeof *t->entries);
        batch = raft_malloc(size > 0 ? size : 1);
        if (t->entries == NULL || batch == NULL) {
                raft_free(t->entries);
                raft_free(batch);
                return RAFT_NOMEM;
        }
        for (i = 0; i < n; i++) {
                const struct raft_entry *from = &a->entries[k + i];
                struct raft_entry *to = &t->entries[i];

                *to = *from;
                to->batch = batch;
                to->buf.base = NULL;
                if (from->buf.len > 0) {
                        to->buf.base = batch + off;
                        memcpy(to->buf.base, from->buf.base, from->buf.len);
                }
                off += padded(from->buf.len);
        }
        t->n_entries = n;
        t->prev_log_index = a->prev_log_index + k;
        t->prev_log_term = a->entries[k - 1].term;
        return 0;
}

/* Hand raft an AppendEntries so that every RAFT_CHANGE entry comes first
 * in a message of its own (see heard.h): split before each one, each part
 * delivered in order as if the leader had sent it so. Raft frees each
 * part's entries; without memory for a copy, the rest goes whole. */
static void deliver_entries(struct heard *h, struct raft_io *io,
                            struct raft_message *msg)
{
        struct raft_message parts[2];
        unsigned k, next = 0;

        while ((k = change_after_first(&msg->append_entries)) != 0 &&
               split_tail(msg, k, &parts[next]) == 0) {
                msg->append_entries.n_entries = k;
                h->changes_split++;
                h->recv(io, msg);
                msg = &parts[next];
                next ^= 1;
        }
        h->recv(io, msg);
}

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
        deliver_entries(h, io, msg);
}

static int start(struct raft_io *io, unsigned msecs, raft_io_tick_cb tick,
                 raft_io_recv_cb recv)
{
        struct heard *h =
            (struct heard *)(void *)((char *)io - offsetof(struct heard, io));

        h->recv = recv;
        return h->start(io, msecs, tick, on_recv);
}

void heard_wrap(struct heard *h)
{
        h->start = h->io.start;
        h->io.start = start;
        h->recv = NULL;
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
