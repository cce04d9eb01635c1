/* An AppendEntries handed to raft in parts, each RAFT_CHANGE entry first
 * in a part of its own (see changesplit.h). */
#include "changesplit.h"

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

/* The room an entry's `len` bytes take in a batch laid out as `layout`. */
static size_t room(enum changesplit_layout layout, size_t len)
{
        return layout == CHANGESPLIT_UV ? (len + 7) / 8 * 8 : len;
}

/* Make `tail` an AppendEntries of the entries of `msg` from position `k`
 * on, with a copy of their bytes in a batch of its own laid out as
 * `layout`. Returns 0, or RAFT_NOMEM with nothing changed. */
static int split_tail(const struct raft_message *msg, unsigned k,
                      enum changesplit_layout layout, struct raft_message *tail)
{
        const struct raft_append_entries *a = &msg->append_entries;
        struct raft_append_entries *t = &tail->append_entries;
        unsigned n = a->n_entries - k, i;
        size_t size = 0, off = 0;
        uint8_t *batch;

        for (i = k; i < a->n_entries; i++) {
                size += room(layout, a->entries[i].buf.len);
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
                to->buf.base = batch + off;
                if (from->buf.len == 0 && layout == CHANGESPLIT_UV) {
                        to->buf.base = NULL;
                } else if (from->buf.len > 0) {
                        memcpy(to->buf.base, from->buf.base, from->buf.len);
                }
                off += room(layout, from->buf.len);
        }
        t->n_entries = n;
        t->prev_log_index = a->prev_log_index + k;
        t->prev_log_term = a->entries[k - 1].term;
        return 0;
}

unsigned changesplit_deliver(struct raft_io *io, struct raft_message *msg,
                             enum changesplit_layout layout,
                             raft_io_recv_cb recv)
{
        struct raft_message parts[2];
        unsigned k, next = 0, splits = 0;

        while ((k = change_after_first(&msg->append_entries)) != 0 &&
               split_tail(msg, k, layout, &parts[next]) == 0) {
                msg->append_entries.n_entries = k;
                splits++;
                recv(io, msg);
                msg = &parts[next];
                next ^= 1;
        }
        recv(io, msg);
        return splits;
}
