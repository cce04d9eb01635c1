/* How long raft's appends into the data directory take (diskwrite.h). */
#include "diskwrite.h"

#include <stdlib.h>

#include <uv.h>

#include "nodecore.h"

/* An append on its way to raft_uv, which takes a request of its own: the
 * wrapper hands raft's request back to raft's callback. */
struct timed_append {
        struct raft_io_append req;
        struct raft_io_append *outer;
        raft_io_append_cb cb;
        struct diskwrite *w;
        uint64_t started_ns;
};

static void append_done(struct raft_io_append *req, int status)
{
        struct timed_append *t = req->data;
        struct raft_io_append *outer = t->outer;
        raft_io_append_cb cb = t->cb;

        histogram_add(&t->w->took, uv_hrtime() - t->started_ns);
        free(t);
        outer->cb = cb;
        cb(outer, status);
}

static int append(struct raft_io *io, struct raft_io_append *req,
                  const struct raft_entry entries[], unsigned n,
                  raft_io_append_cb cb)
{
        struct diskwrite *w = &node_core_of_io(io)->disk;
        struct timed_append *t = malloc(sizeof *t);
        int rv;

        if (t == NULL) {
                return RAFT_NOMEM;
        }
        t->req.data = t;
        t->outer = req;
        t->cb = cb;
        t->w = w;
        t->started_ns = uv_hrtime();
        rv = w->append(io, &t->req, entries, n, append_done);
        if (rv != 0) {
                free(t);
        }
        return rv;
}

void diskwrite_wrap(struct node_core *c)
{
        struct diskwrite *w = &c->disk;

        w->append = c->heard.io.append;
        c->heard.io.append = append;
}
