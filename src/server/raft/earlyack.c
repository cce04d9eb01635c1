/* Appends acknowledged before they are written (see earlyack.h). */
#include "earlyack.h"

#include <stdbool.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>

#include "nodecore.h"

/* One append raft asked for: acknowledged on the next loop turn, handed to
 * raft_uv (with copies of its entries, which raft may free once it is
 * acknowledged) when the flush timer fires or before a truncate or a
 * snapshot; freed once both are done. */
struct earlyack_append {
        struct earlyack *e;
        struct raft_io_append *req; /* raft's */
        raft_io_append_cb cb;       /* raft's */
        struct raft_io_append inner;
        struct raft_entry *copies;
        unsigned n;
        bool acked, done;
        struct earlyack_append *next_unacked, *next_held;
};

static void free_append(struct earlyack_append *a)
{
        unsigned i;

        if (!a->acked || !a->done) {
                return;
        }
        for (i = 0; i < a->n; i++) {
                raft_free(a->copies[i].buf.base);
        }
        free(a->copies);
        free(a);
}

static void on_stored(struct raft_io_append *inner, int status)
{
        struct earlyack_append *a = inner->data;

        (void)status; /* raft was told long ago that it worked */
        a->done = true;
        free_append(a);
}

/* Hand every held append to raft_uv, in order. */
static void flush_held(struct earlyack *e)
{
        struct earlyack_append *a = e->held_head, *next;

        e->held_head = e->held_tail = NULL;
        for (; a != NULL; a = next) {
                next = a->next_held;
                a->inner.data = a;
                if (e->append(e->io, &a->inner, a->copies, a->n, on_stored) !=
                    0) {
                        a->done = true;
                        free_append(a);
                }
        }
}

static void on_flush(uv_timer_t *t)
{
        flush_held(t->data);
}

/* Tell raft its appends are stored; none is yet. */
static void on_ack(uv_timer_t *t)
{
        struct earlyack *e = t->data;
        struct earlyack_append *a = e->unacked_head, *next;

        e->unacked_head = e->unacked_tail = NULL;
        for (; a != NULL; a = next) {
                next = a->next_unacked;
                a->acked = true;
                a->cb(a->req, 0);
                free_append(a);
        }
}

static struct earlyack_append *
copy_append(struct earlyack *e, const struct raft_entry entries[], unsigned n)
{
        struct earlyack_append *a = calloc(1, sizeof *a);
        unsigned i;

        if (a == NULL || (a->copies = calloc(n, sizeof *a->copies)) == NULL) {
                free(a);
                return NULL;
        }
        a->e = e;
        for (i = 0; i < n; i++) {
                a->copies[i] = entries[i];
                a->copies[i].batch = NULL;
                a->copies[i].buf.base = raft_malloc(entries[i].buf.len + 1);
                if (a->copies[i].buf.base == NULL) {
                        a->n = i;
                        a->acked = a->done = true;
                        free_append(a);
                        return NULL;
                }
                memcpy(a->copies[i].buf.base, entries[i].buf.base,
                       entries[i].buf.len);
        }
        a->n = n;
        return a;
}

/* The earlyack of raft_uv's io: the node's (nodecore.h). */
static struct earlyack *of(struct raft_io *io)
{
        struct node_core *c =
            (struct node_core *)(void *)((char *)io -
                                         offsetof(struct node_core, heard.io));

        return &c->early;
}

static int append(struct raft_io *io, struct raft_io_append *req,
                  const struct raft_entry entries[], unsigned n,
                  raft_io_append_cb cb)
{
        struct earlyack *e = of(io);
        struct earlyack_append *a = copy_append(e, entries, n);

        if (a == NULL) {
                return RAFT_NOMEM;
        }
        if (e->next_index != 0) {
                e->next_index += n;
        }
        a->req = req;
        a->cb = cb;
        if (e->unacked_tail != NULL) {
                e->unacked_tail->next_unacked = a;
        } else {
                e->unacked_head = a;
        }
        e->unacked_tail = a;
        if (e->held_tail != NULL) {
                e->held_tail->next_held = a;
        } else {
                e->held_head = a;
        }
        e->held_tail = a;
        uv_timer_start(&e->ack, on_ack, 0, 0);
        if (!uv_is_active((uv_handle_t *)&e->flush)) {
                uv_timer_start(&e->flush, on_flush, EARLYACK_DELAY_MS, 0);
        }
        return 0;
}

/* libraft 0.22.1 truncates at the first index of every append before it
 * (legacy.c), which removes nothing: skipped, or no append would ever be
 * held. A truncate that removes entries, and a snapshot, go to raft_uv
 * after the held appends, which it orders them behind. */
static int truncate_log(struct raft_io *io, raft_index index)
{
        struct earlyack *e = of(io);

        if (e->next_index != 0 && index >= e->next_index) {
                return 0;
        }
        flush_held(e);
        e->next_index = index;
        return e->truncate(io, index);
}

static int snapshot_put(struct raft_io *io, unsigned trailing,
                        struct raft_io_snapshot_put *req,
                        const struct raft_snapshot *snapshot,
                        raft_io_snapshot_put_cb cb)
{
        struct earlyack *e = of(io);

        flush_held(e);
        return e->snapshot_put(io, trailing, req, snapshot, cb);
}

static void close_io(struct raft_io *io, raft_io_close_cb cb)
{
        struct earlyack *e = of(io);

        on_ack(&e->ack);
        flush_held(e);
        uv_close((uv_handle_t *)&e->ack, NULL);
        uv_close((uv_handle_t *)&e->flush, NULL);
        e->close(io, cb);
}

int earlyack_wrap(struct earlyack *e, uv_loop_t *loop, struct raft_io *io)
{
        int rv;

        memset(e, 0, sizeof *e);
        e->loop = loop;
        e->io = io;
        rv = uv_timer_init(loop, &e->ack);
        if (rv != 0) {
                return rv;
        }
        rv = uv_timer_init(loop, &e->flush);
        if (rv != 0) {
                uv_close((uv_handle_t *)&e->ack, NULL);
                return rv;
        }
        e->ack.data = e;
        e->flush.data = e;
        e->append = io->append;
        e->truncate = io->truncate;
        e->snapshot_put = io->snapshot_put;
        e->close = io->close;
        io->append = append;
        io->truncate = truncate_log;
        io->snapshot_put = snapshot_put;
        io->close = close_io;
        return 0;
}
