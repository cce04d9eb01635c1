/* Unit tests of the simulation's stored-log shims (tests/lib/simstore.c)
 * over a stand-in io that stores the way raft_fixture's in-memory io does.
 *
 * The stand-in, like the fixture (libraft 0.22.1, src/fixture.c): an
 * append is queued and, when completed, stored after whatever is stored
 * then; a truncation acts at once on what is stored. The shims must give
 * it libuv's order instead: a truncation waits for the appends issued
 * before it, and the appends issued after it wait for the truncation. */
#include <stdlib.h>
#include <string.h>

#include <raft.h>

#include "../lib/simstore.h"
#include "../lib/tap.h"

#define CAP 64

/* The stand-in io: its stored log and its queue of appends. */
struct standin {
        struct raft_io io;
        raft_term log[CAP]; /* terms of indexes 1, 2, ... */
        size_t n;
        struct {
                struct raft_io_append *req;
                raft_term terms[4];
                unsigned n;
        } queue[8];
        unsigned queued;
        raft_index loaded; /* entries load reports, all of term 2 */
};

static int standin_load(struct raft_io *io, raft_term *term, raft_id *vote,
                        struct raft_snapshot **snapshot, raft_index *start,
                        struct raft_entry *entries[], size_t *n_entries)
{
        struct standin *d = io->impl;
        size_t i;

        *term = 2;
        *vote = 0;
        *snapshot = NULL;
        *start = 1;
        *entries = calloc(d->loaded, sizeof **entries);
        for (i = 0; i < d->loaded; i++) {
                (*entries)[i].term = 2;
                d->log[i] = 2;
        }
        d->n = *n_entries = d->loaded;
        return 0;
}

static int standin_append(struct raft_io *io, struct raft_io_append *req,
                          const struct raft_entry entries[], unsigned n,
                          raft_io_append_cb cb)
{
        struct standin *d = io->impl;
        unsigned i;

        req->cb = cb;
        d->queue[d->queued].req = req;
        d->queue[d->queued].n = n;
        for (i = 0; i < n; i++) {
                d->queue[d->queued].terms[i] = entries[i].term;
        }
        d->queued++;
        return 0;
}

static int standin_truncate(struct raft_io *io, raft_index index)
{
        struct standin *d = io->impl;

        if (index <= d->n) {
                d->n = index - 1;
        }
        return 0;
}

/* Complete the oldest queued append: store it after what is stored. */
static void standin_complete(struct standin *d)
{
        struct raft_io_append *req = d->queue[0].req;
        unsigned i;

        for (i = 0; i < d->queue[0].n; i++) {
                d->log[d->n++] = d->queue[0].terms[i];
        }
        d->queued--;
        memmove(&d->queue[0], &d->queue[1], d->queued * sizeof d->queue[0]);
        req->cb(req, 0);
}

static unsigned done;
static struct raft_io_append reqs[3]; /* a, b and c of the cases */

static void append_done(struct raft_io_append *req, int status)
{
        (void)req;
        done += status == 0;
}

/* A stand-in holding 1..loaded of term 2, wrapped by `s`. */
static void setup(struct standin *d, struct simstore *s, raft_index loaded)
{
        struct raft_snapshot *snapshot;
        struct raft_entry *entries;
        raft_index start;
        raft_term term;
        raft_id vote;
        size_t n;

        memset(d, 0, sizeof *d);
        d->io.impl = d;
        d->io.load = standin_load;
        d->io.append = standin_append;
        d->io.truncate = standin_truncate;
        d->loaded = loaded;
        simstore_attach(s, &d->io);
        d->io.load(&d->io, &term, &vote, &snapshot, &start, &entries, &n);
        free(entries);
        done = 0;
}

/* Entries live until their append completes, as raft keeps them. */
static struct raft_entry entries[8];

static int append(struct standin *d, struct raft_io_append *req, raft_term term)
{
        struct raft_entry *e = &entries[req - reqs];

        memset(e, 0, sizeof *e);
        e->term = term;
        return d->io.append(&d->io, req, e, 1, append_done);
}

int main(void)
{
        struct raft_io_append *a = &reqs[0], *b = &reqs[1], *c = &reqs[2];
        struct simstore s;
        struct standin d;
        struct tap t = {0, 0};

        /* A deposed leader's barrier 28^2 is in flight when the new
         * leader's 25^3 conflicts: truncate(25), then append 25^3. */
        setup(&d, &s, 27);
        append(&d, a, 2);
        tap_ok(&t, d.io.truncate(&d.io, 25) == 0 && d.n == 27,
               "a truncation behind an append in flight waits for it");
        append(&d, b, 3);
        tap_ok(&t, d.queued == 1,
               "an append after a waiting truncation waits too");
        standin_complete(&d);
        tap_ok(&t, d.n == 24 && d.queued == 1 && done == 1,
               "the truncation runs once the append before it is stored");
        standin_complete(&d);
        tap_ok(&t, d.n == 25 && d.log[24] == 3 && d.log[23] == 2 && done == 2,
               "the io holds 25^3 at index 25, not the late 28^2 "
               "(holds %zu entries, term %llu at 25)",
               d.n, (unsigned long long)d.log[24]);
        tap_ok(&t,
               simstore_last(&s) == 25 && simstore_term(&s, 25) == 3 &&
                   simstore_term(&s, 24) == 2,
               "the store records what the io holds (last %llu, term "
               "%llu at 25)",
               (unsigned long long)simstore_last(&s),
               (unsigned long long)simstore_term(&s, 25));
        simstore_close(&s);

        /* With nothing in flight, a truncation cuts at once. */
        setup(&d, &s, 27);
        tap_ok(&t,
               d.io.truncate(&d.io, 25) == 0 && d.n == 24 &&
                   simstore_last(&s) == 24,
               "a truncation with nothing in flight cuts at once");
        simstore_close(&s);

        /* raft truncates at the index of every batch it appends: past
         * what is stored and in flight, that holds nothing back. */
        setup(&d, &s, 27);
        append(&d, a, 2);
        tap_ok(&t,
               d.io.truncate(&d.io, 29) == 0 && append(&d, b, 2) == 0 &&
                   d.queued == 2,
               "a truncation past the appends in flight holds none back");
        standin_complete(&d);
        standin_complete(&d);
        tap_ok(&t, d.n == 29 && simstore_last(&s) == 29 && done == 2,
               "and both appends are stored in order");
        simstore_close(&s);

        /* Two conflicts in a row behind one append in flight. */
        setup(&d, &s, 27);
        append(&d, a, 2);
        d.io.truncate(&d.io, 25);
        append(&d, b, 3);
        d.io.truncate(&d.io, 25);
        append(&d, c, 4);
        standin_complete(&d);
        tap_ok(&t, d.n == 24 && d.queued == 1,
               "a second waiting truncation waits for the append before it");
        standin_complete(&d);
        tap_ok(&t, d.n == 24 && d.queued == 1,
               "and runs once that append is stored");
        standin_complete(&d);
        tap_ok(&t,
               d.n == 25 && d.log[24] == 4 && simstore_term(&s, 25) == 4 &&
                   done == 3,
               "leaving the last leader's entry at 25 (term %llu)",
               (unsigned long long)d.log[24]);
        simstore_close(&s);
        return tap_plan(&t);
}
