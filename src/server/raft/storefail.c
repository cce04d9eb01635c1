/* A failed store of the term and vote or of a snapshot stops batond
 * (storefail.h). */
#include "storefail.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>

#include "../base/log.h"
#include "nodecore.h"

/* A snapshot write on its way to raft_uv, which takes a request of its
 * own: the wrapper hands raft's request back to raft's callback. */
struct pending_put {
        struct raft_io_snapshot_put req;
        struct raft_io_snapshot_put *outer;
        raft_io_snapshot_put_cb cb;
        const struct storefail *s;
        uint64_t index, term;
        bool install; /* a leader's snapshot (trailing 0), not our own */
};

/* The term and vote were not stored: stop before raft steps on. */
static void metadata_failed(const struct storefail *s, struct raft_io *io,
                            uint64_t term, uint64_t vote)
{
        log_error("raft could not store its term %" PRIu64 " and vote %" PRIu64
                  " in %s (raft says: %s); stopping, so that this node "
                  "answers nothing on a term or vote its disk does not hold "
                  "(libraft 0.22.1 would go on without them): restart "
                  "batond once the disk works, and it goes on from what it "
                  "stored",
                  term, vote, s->dir, io->errmsg);
        exit(1);
}

static int set_term(struct raft_io *io, raft_term term)
{
        const struct storefail *s = &node_core_of_io(io)->store;
        int rv = s->set_term(io, term);

        if (rv != 0) {
                metadata_failed(s, io, term, 0);
        }
        return rv;
}

static int set_vote(struct raft_io *io, raft_id server_id)
{
        const struct storefail *s = &node_core_of_io(io)->store;
        int rv = s->set_vote(io, server_id);

        if (rv != 0) {
                metadata_failed(s, io, raft_current_term(s->raft), server_id);
        }
        return rv;
}

static void put_done(struct raft_io_snapshot_put *req, int status)
{
        struct pending_put *p = req->data;
        struct raft_io_snapshot_put *outer = p->outer;
        raft_io_snapshot_put_cb cb = p->cb;

        if (status != 0 && status != RAFT_CANCELED) {
                log_error("raft could not store %s snapshot at index %" PRIu64
                          " (term %" PRIu64 ") in %s: %s, after writing its "
                          "files (linking them, syncing the directory or "
                          "removing what it replaces); stopping, as libraft "
                          "0.22.1 would go on as if the write had been "
                          "cancelled%s: restart batond once the disk works",
                          p->install ? "the leader's" : "its own", p->index,
                          p->term, p->s->dir, raft_strerror(status),
                          p->install ? " and ignore every later snapshot "
                                       "from the leader"
                                     : "");
                exit(1);
        }
        free(p);
        outer->cb = cb;
        cb(outer, status);
}

static int snapshot_put(struct raft_io *io, unsigned trailing,
                        struct raft_io_snapshot_put *req,
                        const struct raft_snapshot *snapshot,
                        raft_io_snapshot_put_cb cb)
{
        const struct storefail *s = &node_core_of_io(io)->store;
        struct pending_put *p = malloc(sizeof *p);
        int rv;

        if (p == NULL) {
                return RAFT_NOMEM;
        }
        p->req.data = p;
        p->outer = req;
        p->cb = cb;
        p->s = s;
        p->index = snapshot->index;
        p->term = snapshot->term;
        p->install = trailing == 0;
        rv = s->snapshot_put(io, trailing, &p->req, snapshot, put_done);
        if (rv != 0) {
                free(p);
        }
        return rv;
}

void storefail_wrap(struct node_core *c, const char *dir)
{
        struct storefail *s = &c->store;
        struct raft_io *io = &c->heard.io;

        s->dir = dir;
        s->raft = &c->raft;
        s->set_term = io->set_term;
        io->set_term = set_term;
        s->set_vote = io->set_vote;
        io->set_vote = set_vote;
        s->snapshot_put = io->snapshot_put;
        io->snapshot_put = snapshot_put;
}
