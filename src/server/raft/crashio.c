/* The crash points around raft's disk and state machine (crashio.h).
 * Compiled only into batond-crashpoints. */
#include "crashio.h"

#ifdef BATON_CHAOS_CRASHPOINTS

#include <stddef.h>
#include <stdlib.h>

#include "../../proto/command.h"
#include "nodecore.h"

/* An append or a snapshot write on its way to raft_uv: raft_uv takes a
 * request of its own (it sets the request's callback), and the wrapper
 * hands raft's request back to raft's callback. */
struct pending_append {
        struct raft_io_append req;
        struct raft_io_append *outer;
        raft_io_append_cb cb;
};

struct pending_put {
        struct raft_io_snapshot_put req;
        struct raft_io_snapshot_put *outer;
        raft_io_snapshot_put_cb cb;
};

static struct node_core *core_of_fsm(struct raft_fsm *fsm)
{
        return (struct node_core *)(void *)((char *)fsm -
                                            offsetof(struct node_core, rf.fsm));
}

static void append_done(struct raft_io_append *req, int status)
{
        struct pending_append *p = req->data;
        struct raft_io_append *outer = p->outer;
        raft_io_append_cb cb = p->cb;

        free(p);
        if (status == 0) {
                CRASHPOINT("append-after");
        }
        outer->cb = cb;
        cb(outer, status);
}

static int append(struct raft_io *io, struct raft_io_append *req,
                  const struct raft_entry entries[], unsigned n,
                  raft_io_append_cb cb)
{
        struct node_core *c = node_core_of_io(io);
        struct pending_append *p = malloc(sizeof *p);
        int rv;

        if (p == NULL) {
                return RAFT_NOMEM;
        }
        CRASHPOINT("append-before");
        p->req.data = p;
        p->outer = req;
        p->cb = cb;
        rv = c->crash.append(io, &p->req, entries, n, append_done);
        if (rv != 0) {
                free(p);
        }
        return rv;
}

static void put_done(struct raft_io_snapshot_put *req, int status)
{
        struct pending_put *p = req->data;
        struct raft_io_snapshot_put *outer = p->outer;
        raft_io_snapshot_put_cb cb = p->cb;

        free(p);
        if (status == 0) {
                CRASHPOINT("snapshot-put-after");
        }
        outer->cb = cb;
        cb(outer, status);
}

static int snapshot_put(struct raft_io *io, unsigned trailing,
                        struct raft_io_snapshot_put *req,
                        const struct raft_snapshot *snapshot,
                        raft_io_snapshot_put_cb cb)
{
        struct node_core *c = node_core_of_io(io);
        struct pending_put *p = malloc(sizeof *p);
        int rv;

        if (p == NULL) {
                return RAFT_NOMEM;
        }
        CRASHPOINT("snapshot-put-before");
        p->req.data = p;
        p->outer = req;
        p->cb = cb;
        rv = c->crash.snapshot_put(io, trailing, &p->req, snapshot, put_done);
        if (rv != 0) {
                free(p);
        }
        return rv;
}

static int apply(struct raft_fsm *fsm, const struct raft_buffer *buf,
                 void **result)
{
        int rv = core_of_fsm(fsm)->crash.apply(fsm, buf, result);

        if (rv == 0 &&
            command_peek_type(buf->base, buf->len) == COMMAND_MEMBER) {
                CRASHPOINT("member-applied");
        }
        return rv;
}

static int restore(struct raft_fsm *fsm, struct raft_buffer *buf)
{
        int rv;

        CRASHPOINT("restore-before");
        rv = core_of_fsm(fsm)->crash.restore(fsm, buf);
        if (rv == 0) {
                CRASHPOINT("restore-after");
        }
        return rv;
}

void crashio_wrap(struct node_core *c)
{
        c->crash.append = c->heard.io.append;
        c->heard.io.append = append;
        c->crash.snapshot_put = c->heard.io.snapshot_put;
        c->heard.io.snapshot_put = snapshot_put;
        c->crash.apply = c->rf.fsm.apply;
        c->rf.fsm.apply = apply;
        c->crash.restore = c->rf.fsm.restore;
        c->rf.fsm.restore = restore;
}

#else
/* ISO C wants a translation unit to declare something. */
typedef int crashio_unused;
#endif
