/* What a simulated node has durably stored, seen through its raft_io: the
 * term of every entry it holds, kept by shims around the fixture's io. */
#include "simstore.h"

#include <stdlib.h>
#include <string.h>

/* A write in flight: an append (its entries' terms) or a snapshot put; or,
 * on the held list, a truncation or an append waiting for its turn. */
struct simstore_write {
        struct simstore_write *next;
        const void *req;
        raft_io_append_cb append_cb;
        raft_io_snapshot_put_cb put_cb;
        unsigned trailing;
        raft_index index;                 /* a put's snapshot */
        raft_index cut;                   /* a held truncation's index */
        const struct raft_entry *entries; /* a held append's */
        unsigned n;
        raft_term terms[]; /* an append's */
};

/* The io methods receive no pointer of ours: find the store by its io. A
 * test-only table, filled by attach and emptied by close. */
static struct simstore *stores[SIMSTORE_MAX_IOS];

static struct simstore *store_of(const struct raft_io *io)
{
        unsigned i;

        for (i = 0; i < SIMSTORE_MAX_IOS; i++) {
                if (stores[i] != NULL && stores[i]->io == io) {
                        return stores[i];
                }
        }
        abort(); /* an io we never wrapped: a broken test setup */
}

static void drop_from(struct simstore *s, raft_index index)
{
        if (index <= s->first) {
                s->n = 0;
        } else if (index - s->first < s->n) {
                s->n = (size_t)(index - s->first);
        }
}

static void push(struct simstore *s, const raft_term *terms, unsigned n)
{
        if (s->n + n > s->cap) {
                size_t cap = s->cap == 0 ? 256 : s->cap;
                raft_term *p;
                while (cap < s->n + n) {
                        cap *= 2;
                }
                p = realloc(s->terms, cap * sizeof *p);
                if (p == NULL) {
                        s->failed = true;
                        return;
                }
                s->terms = p;
                s->cap = cap;
        }
        memcpy(s->terms + s->n, terms, n * sizeof *terms);
        s->n += n;
}

static int shim_load(struct raft_io *io, raft_term *term, raft_id *voted_for,
                     struct raft_snapshot **snapshot, raft_index *start_index,
                     struct raft_entry *entries[], size_t *n_entries)
{
        struct simstore *s = store_of(io);
        size_t i;
        int rv;

        rv = s->load(io, term, voted_for, snapshot, start_index, entries,
                     n_entries);
        if (rv != 0) {
                return rv;
        }
        s->n = 0;
        s->first = *start_index;
        s->snapshot = *snapshot != NULL ? (*snapshot)->index : 0;
        for (i = 0; i < *n_entries; i++) {
                push(s, &(*entries)[i].term, 1);
        }
        return 0;
}

/* Take the record of a write in flight by its request, from whichever
 * store has it (a callback does not say which io it came from). */
static struct simstore_write *take(const void *req, struct simstore **sp)
{
        struct simstore_write **pp, *w;
        unsigned i;

        for (i = 0; i < SIMSTORE_MAX_IOS; i++) {
                for (pp = stores[i] != NULL ? &stores[i]->writes : NULL;
                     pp != NULL && *pp != NULL; pp = &(*pp)->next) {
                        if ((*pp)->req == req) {
                                w = *pp;
                                *pp = w->next;
                                *sp = stores[i];
                                return w;
                        }
                }
        }
        abort(); /* a callback for a write we never saw */
}

static void release(struct simstore *s);

static void appended(struct raft_io_append *req, int status)
{
        struct simstore *s;
        struct simstore_write *a = take(req, &s);

        /* The fixture stores an append after whatever it stored before. */
        if (status == 0 && !s->blind) {
                push(s, a->terms, a->n);
        }
        s->in_flight--;
        s->in_flight_entries -= a->n;
        release(s);
        req->cb = a->append_cb;
        free(a);
        if (req->cb != NULL) {
                req->cb(req, status);
        }
}

/* Hand an append to the fixture, which completes it after its latency. */
static int issue(struct simstore *s, struct simstore_write *a)
{
        int rv;

        a->next = s->writes;
        s->writes = a;
        s->in_flight++;
        s->in_flight_entries += a->n;
        rv = s->append(s->io, (struct raft_io_append *)a->req, a->entries, a->n,
                       appended);
        if (rv != 0) {
                s->writes = a->next;
                s->in_flight--;
                s->in_flight_entries -= a->n;
        }
        return rv;
}

/* Run what was held, oldest first: a truncation once every append issued
 * before it completed, then the appends that followed it. This is libuv's
 * order (UvTruncate waits on a blocking barrier behind the writes in
 * flight, and appends wait behind it); the fixture's own truncate acts at
 * once, and an append it completes later lands after the cut, at indexes
 * the truncation freed. */
static void release(struct simstore *s)
{
        while (s->held != NULL && (s->held->cut == 0 || s->in_flight == 0)) {
                struct simstore_write *w = s->held;
                struct raft_io_append *req;
                int rv;

                s->held = w->next;
                if (w->cut != 0) {
                        if (s->truncate(s->io, w->cut) == 0) {
                                drop_from(s, w->cut);
                        } else {
                                s->failed = true;
                        }
                        free(w);
                        continue;
                }
                rv = issue(s, w);
                if (rv != 0) {
                        /* Too late to refuse the append: fail it. */
                        s->failed = true;
                        req = (struct raft_io_append *)w->req;
                        req->cb = w->append_cb;
                        free(w);
                        if (req->cb != NULL) {
                                req->cb(req, rv);
                        }
                }
        }
}

static void hold(struct simstore *s, struct simstore_write *w)
{
        struct simstore_write **pp = &s->held;

        while (*pp != NULL) {
                pp = &(*pp)->next;
        }
        w->next = NULL;
        *pp = w;
}

static int shim_append(struct raft_io *io, struct raft_io_append *req,
                       const struct raft_entry entries[], unsigned n,
                       raft_io_append_cb cb)
{
        struct simstore *s = store_of(io);
        struct simstore_write *a = calloc(1, sizeof *a + n * sizeof *a->terms);
        unsigned i;
        int rv;

        if (a == NULL) {
                return RAFT_NOMEM;
        }
        a->req = req;
        a->append_cb = cb;
        a->entries = entries; /* raft keeps them until the callback */
        a->n = n;
        for (i = 0; i < n; i++) {
                a->terms[i] = entries[i].term;
        }
        if (s->held != NULL) {
                hold(s, a);
                return 0;
        }
        rv = issue(s, a);
        if (rv != 0) {
                free(a);
        }
        return rv;
}

/* Whether a snapshot put is in flight: the fixture truncates through the
 * wrapped method when it stores one, and expects it done at once. */
static bool putting(const struct simstore *s)
{
        const struct simstore_write *w;

        for (w = s->writes; w != NULL; w = w->next) {
                if (w->put_cb != NULL) {
                        return true;
                }
        }
        return false;
}

static int shim_truncate(struct raft_io *io, raft_index index)
{
        struct simstore *s = store_of(io);
        struct simstore_write *t;
        int rv;

        /* Cutting nothing that is stored or in flight is a no-op on either
         * backend; with nothing in flight, the cut is immediate on both. */
        if (s->held == NULL &&
            (s->in_flight == 0 || putting(s) ||
             index > simstore_last(s) + s->in_flight_entries)) {
                rv = s->truncate(io, index);
                if (rv == 0) {
                        drop_from(s, index);
                }
                return rv;
        }
        t = calloc(1, sizeof *t);
        if (t == NULL) {
                return RAFT_NOMEM;
        }
        t->cut = index;
        hold(s, t);
        return 0;
}

static void put_done(struct raft_io_snapshot_put *req, int status)
{
        struct simstore *s;
        struct simstore_write *p = take(req, &s);

        /* An installed snapshot replaced the log (the fixture truncated it
         * through the wrapped truncate already): entries follow it. */
        if (status == 0) {
                s->latest = p->index;
        }
        if (status == 0 && p->trailing == 0) {
                s->n = 0;
                s->first = p->index + 1;
                s->snapshot = p->index;
        }
        req->cb = p->put_cb;
        free(p);
        if (req->cb != NULL) {
                req->cb(req, status);
        }
}

static int shim_snapshot_put(struct raft_io *io, unsigned trailing,
                             struct raft_io_snapshot_put *req,
                             const struct raft_snapshot *snapshot,
                             raft_io_snapshot_put_cb cb)
{
        struct simstore *s = store_of(io);
        struct simstore_write *p = calloc(1, sizeof *p);
        int rv;

        if (p == NULL) {
                return RAFT_NOMEM;
        }
        p->req = req;
        p->put_cb = cb;
        p->trailing = trailing;
        p->index = snapshot->index;
        p->next = s->writes;
        s->writes = p;
        rv = s->snapshot_put(io, trailing, req, snapshot, put_done);
        if (rv != 0) {
                s->writes = p->next;
                free(p);
        }
        return rv;
}

int simstore_attach(struct simstore *s, struct raft_io *io)
{
        unsigned i;

        memset(s, 0, sizeof *s);
        for (i = 0; i < SIMSTORE_MAX_IOS && stores[i] != NULL; i++) {
        }
        if (i == SIMSTORE_MAX_IOS) {
                return RAFT_NOMEM;
        }
        stores[i] = s;
        s->io = io;
        s->first = 1;
        s->load = io->load;
        s->append = io->append;
        s->truncate = io->truncate;
        s->snapshot_put = io->snapshot_put;
        io->load = shim_load;
        io->append = shim_append;
        io->truncate = shim_truncate;
        io->snapshot_put = shim_snapshot_put;
        return 0;
}

void simstore_close(struct simstore *s)
{
        unsigned i;

        for (i = 0; i < SIMSTORE_MAX_IOS; i++) {
                if (stores[i] == s) {
                        stores[i] = NULL;
                }
        }
        while (s->writes != NULL) {
                struct simstore_write *w = s->writes;
                s->writes = w->next;
                free(w);
        }
        while (s->held != NULL) {
                struct simstore_write *w = s->held;
                s->held = w->next;
                free(w);
        }
        free(s->terms);
        s->terms = NULL;
        s->n = s->cap = 0;
}

raft_term simstore_term(const struct simstore *s, raft_index index)
{
        if (index < s->first || index - s->first >= s->n) {
                return 0;
        }
        return s->terms[index - s->first];
}

bool simstore_holds(const struct simstore *s, raft_index index, raft_term term)
{
        return (index <= s->snapshot && index > 0) ||
               simstore_term(s, index) == term;
}

raft_term simstore_io_term(struct simstore *s, raft_index index)
{
        struct raft_snapshot *snapshot = NULL;
        struct raft_entry *entries = NULL;
        raft_index start = 0;
        raft_term term = 0;
        raft_id vote = 0;
        size_t n = 0;
        unsigned i;

        /* The fixture's load copies what its in-memory io holds now, but
         * labels the copy as starting past its latest snapshot, while its
         * entries start at 1 or past the last snapshot installed from a
         * leader: where s->first says. */
        if (s->load(s->io, &term, &vote, &snapshot, &start, &entries, &n) !=
            0) {
                return 0;
        }
        term = index >= s->first && index - s->first < n
                   ? entries[index - s->first].term
                   : 0;
        if (n > 0) {
                raft_free(entries[0].batch);
        }
        raft_free(entries);
        if (snapshot != NULL) {
                raft_configuration_close(&snapshot->configuration);
                for (i = 0; i < snapshot->n_bufs; i++) {
                        raft_free(snapshot->bufs[i].base);
                }
                raft_free(snapshot->bufs);
                raft_free(snapshot);
        }
        return term;
}

raft_index simstore_last(const struct simstore *s)
{
        return s->n > 0 ? s->first + s->n - 1 : s->snapshot;
}
