/* What a simulated node has durably stored, seen through its raft_io: the
 * term of every entry it holds, kept by shims around the fixture's io. */
#ifndef TESTS_SIMSTORE_H
#define TESTS_SIMSTORE_H

#include <stdbool.h>
#include <stddef.h>

#include <raft.h>

/*
 * raft.h keeps the log of a struct raft private (libraft 0.22.1); what a
 * node stores goes through the public struct raft_io, though. The shims
 * follow the fixture's in-memory io: an append is stored when its callback
 * reports success, after what was stored before; a truncation drops the
 * entries from its index on; a snapshot installed from a leader (trailing
 * 0) replaces the whole log; load reports what a (re)started node has.
 * The fixture truncates at once, even under appends still queued, which
 * then land in the slots it freed; libuv runs a truncation after the
 * appends in flight and the appends after it once it is done. The shims
 * give the fixture libuv's order: a truncation that cuts what is stored
 * or in flight waits (held) while appends are in flight, and later
 * appends wait behind it.
 */
struct simstore_write; /* an append or a snapshot put in flight */

struct simstore {
        struct raft_io *io;
        int (*load)(struct raft_io *io, raft_term *term, raft_id *voted_for,
                    struct raft_snapshot **snapshot, raft_index *start_index,
                    struct raft_entry *entries[], size_t *n_entries);
        int (*append)(struct raft_io *io, struct raft_io_append *req,
                      const struct raft_entry entries[], unsigned n,
                      raft_io_append_cb cb);
        int (*truncate)(struct raft_io *io, raft_index index);
        int (*snapshot_put)(struct raft_io *io, unsigned trailing,
                            struct raft_io_snapshot_put *req,
                            const struct raft_snapshot *snapshot,
                            raft_io_snapshot_put_cb cb);
        raft_term *terms; /* of entries first, first + 1, ... */
        size_t n;
        size_t cap;
        raft_index first;    /* index of terms[0] */
        raft_index snapshot; /* entries up to here were installed away */
        raft_index latest;   /* the index of the last snapshot stored */
        struct simstore_write *writes;
        struct simstore_write *held; /* waiting, oldest first */
        unsigned in_flight;          /* appends the fixture has */
        size_t in_flight_entries;    /* and their entries */
        bool failed; /* out of memory: what it says is unreliable */
        bool blind;  /* a negative control: record no append */
};

/*
 * Wrap the methods of `io` (a node's, after raft_fixture_grow() and before
 * raft_fixture_start()) so that `s` tracks what it stores. At most
 * SIMSTORE_MAX_IOS stores are attached at a time. 0 or RAFT_NOMEM.
 */
#define SIMSTORE_MAX_IOS 16
int simstore_attach(struct simstore *s, struct raft_io *io);

/* Unwrap and free. Accepts a store that was never attached. */
void simstore_close(struct simstore *s);

/* The term of the entry at `index` that the node stores, 0 if none. */
raft_term simstore_term(const struct simstore *s, raft_index index);

/* Whether the node stores entry `index` of `term`; an entry a snapshot
 * install compacted away counts as held, since the snapshot holds it. */
bool simstore_holds(const struct simstore *s, raft_index index, raft_term term);

/* The term of entry `index` in the fixture's own in-memory io (read with
 * its load method), 0 if none: what a restart would find, to compare with
 * what the shims recorded when a check fails. */
raft_term simstore_io_term(struct simstore *s, raft_index index);

/* The last index the node stores (its snapshot's when it stores none). */
raft_index simstore_last(const struct simstore *s);

#endif /* TESTS_SIMSTORE_H */
