/* The raft glue: adapts the lock state machine to libraft's struct raft_fsm. */
#ifndef SERVER_RAFTFSM_H
#define SERVER_RAFTFSM_H

#include <stdbool.h>
#include <stdint.h>

#include <raft.h>

#include "../fsm/directory.h"
#include "../fsm/lockfsm.h"
#include "../lib/mem.h"
#include "snapimage.h"
#include "snapkeep.h"
#include "snaptail.h"

/*
 * What fsm->apply stores in `*result` for every entry it applies. `index`
 * is the index the state machine was given for the entry (its fencing
 * token if the entry granted a lock); it must equal the index raft
 * assigned to the request (req->index), which the simulation checks. A
 * raft_apply() callback receives a pointer to this as its `result`, but
 * libraft 0.22.1 runs callbacks on a later loop phase, after other entries
 * may have been applied over it: outcomes are read from the state
 * machine's events (raftfsm_set_event_cb()) instead.
 */
struct raftfsm_result {
        uint64_t index;
        struct lockfsm_result res;
};

/*
 * One replica's state machine as raft sees it. Caller-allocated; all fields
 * are private except `fsm`, which is what raft_init() or
 * raft_fixture_grow() takes.
 *
 * A raftfsm must not move once initialized: raft keeps &rf->fsm and the
 * state machine keeps &rf->mem. Threading: like everything raft touches, a
 * raftfsm is used only from the thread running the raft instance's loop.
 */
struct raftfsm {
        struct raft_fsm
            fsm; /* give &rf->fsm to raft_init / raft_fixture_grow */
        struct lockfsm *lockfsm;
        struct raft *raft;            /* attached instance, borrowed */
        struct mem mem;               /* raft_malloc/raft_free for lockfsm */
        struct raftfsm_result result; /* the last apply's outcome */
        uint64_t term;                /* the term its batch names, or 0 */
        struct directory dir;         /* members' addresses (MEMBER) */
        bool compress;                /* pack snapshots (snapzip.h) */
        void (*entry_cb)(void *data, uint64_t index, uint8_t kind);
        void *entry_data;
        uint64_t n_nomem; /* applies refused for lack of memory */
        /* Snapshots are an image made off the loop plus the entries
         * applied since (snapimage.h, snaptail.h). */
        struct snapimage image;
        struct snaptail tail;
        struct snapkeep keep; /* the last image, handed over again */
        uint32_t threshold;   /* raft's snapshot threshold */
        uint64_t snap_index;  /* of the last snapshot handed or restored */
        char errmsg[128];
};

/**
 * Initialize `rf` with an empty lock state machine, version 1 of struct
 * raft_fsm.
 *
 * `limits` is copied (NULL: lockfsm_limits_default()); every replica of a
 * cluster must use the same limits, since they decide outcomes. The state
 * machine allocates through raft_malloc()/raft_free(), so that a snapshot
 * buffer can be handed to raft without a copy and so that a test that
 * replaces raft's heap (raft_heap_set) also injects failures here.
 *
 * Returns 0, or BATON_ENOMEM when the state machine cannot be created (out of
 * memory, or `limits` rejected by lockfsm_create()); a failed init leaves
 * nothing to clean up, and the reason is in raftfsm_errmsg().
 */
int raftfsm_init(struct raftfsm *rf, const struct lockfsm_limits *limits);

/**
 * Free the state machine. Call it only after the raft instance using
 * `&rf->fsm` has been closed (its close callback has run, or
 * raft_fixture_close() returned). Accepts NULL.
 */
void raftfsm_close(struct raftfsm *rf);

/**
 * Tell `rf` which raft instance applies entries to it. Required before the
 * first entry is applied (before raft_start(), after raft_init() or
 * raft_fixture_grow()), because fsm->apply receives no index and computes it
 * as raft_last_applied(r) + 1: libraft advances last_applied only after
 * fsm->apply returns (the simulation checks it). `r` is borrowed and must
 * outlive every apply.
 */
void raftfsm_attach(struct raftfsm *rf, struct raft *r);

/**
 * Forward the state machine's events (lockfsm_set_event_cb()) to `cb`,
 * synchronously from inside fsm->apply, before the raft_apply() callback of
 * the same entry runs. `data` is borrowed. NULL `cb` turns events off.
 */
void raftfsm_set_event_cb(struct raftfsm *rf, lockfsm_event_cb cb, void *data);

/**
 * Whether snapshots are packed with lz4 (src/server/snapzip.h); on after
 * raftfsm_init(). A restore reads packed and plain snapshots either way.
 */
void raftfsm_set_compression(struct raftfsm *rf, bool on);

/**
 * How snapshots are made (docs/fsm.md, "Snapshots"). Once the applied index
 * is half of `threshold` (raft's snapshot threshold; 0: never early) past
 * the last snapshot, an image of the state is started: in a forked child
 * with SNAPIMAGE_FORK (batond), at once with SNAPIMAGE_INLINE (the default,
 * for the simulation and tests). Every entry applied after it is copied
 * into a tail. When raft asks for a snapshot, `snapshot` hands over the
 * image and the tail, buffers that `snapshot_finalize` frees (struct
 * raft_fsm version 2), without encoding anything; if the image is still
 * being made it answers RAFT_BUSY and raft asks again after its next
 * event. The image is kept and handed over again with a longer tail until
 * the tail is as large as the image (snapkeep.h); only then, and no
 * sooner than half-way to the next snapshot, is a new one started. Drops
 * any image made or being made.
 */
void raftfsm_set_snapshots(struct raftfsm *rf, enum snapimage_mode mode,
                           uint32_t threshold);

/**
 * Call `cb` after every entry the lock state machine applied in full (not
 * after MEMBER entries, nor after one stopped by RAFT_NOMEM), with its
 * index and kind (COMMAND_BATCH, or the type of its one command), after
 * the events of its commands: where an entry's events end. `data` is
 * borrowed. NULL `cb` turns it off.
 */
void raftfsm_set_entry_cb(struct raftfsm *rf,
                          void (*cb)(void *data, uint64_t index, uint8_t kind),
                          void *data);

/**
 * The term of the entry being applied (call it from an event callback) or
 * last applied, as the leader that proposed it wrote it in its batch
 * (entry.h); 0 for an entry that is not a batch (a MEMBER entry, or one
 * written before batches existed).
 */
uint64_t raftfsm_entry_term(const struct raftfsm *rf);

/**
 * The lock state machine, borrowed for lookups (lockfsm_query(),
 * lockfsm_stats(), lockfsm_snapshot()). Callers must not apply entries to it
 * directly: only raft does, through `&rf->fsm`.
 */
struct lockfsm *raftfsm_lockfsm(struct raftfsm *rf);

/* The snapshot image maker, for its counters and timings (metrics). */
const struct snapimage *raftfsm_image(const struct raftfsm *rf);

/**
 * The replicated member directory, borrowed (MEMBER entries, src/fsm/
 * directory.h): where to send clients for each member id.
 */
const struct directory *raftfsm_directory(const struct raftfsm *rf);

/**
 * A description of the last failure of raftfsm_init(), of an apply refused
 * for lack of memory, of a snapshot or of a restore. Never NULL; "" when
 * nothing has failed. Valid until the next call on `rf`.
 */
const char *raftfsm_errmsg(const struct raftfsm *rf);

/*
 * What the struct raft_fsm callbacks do (documented here because raft, not
 * our code, calls them):
 *
 * apply: a MEMBER entry goes to the directory (result kind
 *   PROTO_KIND_UPDATED, or REJECTED with its status); any other entry (a
 *   batch of commands, or one command) to lockfsm_apply() with index =
 *   raft_last_applied() + 1. `*result` points at rf's struct
 *   raftfsm_result, valid until the next apply on `rf` (see above).
 *   Returns 0 for every entry, including malformed or refused
 *   commands, whose error is in the result; returns RAFT_NOMEM only when
 *   lockfsm_apply() ran out of memory, so raft stops at this entry and
 *   applies it again later, and lockfsm resumes it where it stopped (a
 *   deterministic error must never be returned: it would wedge the node at
 *   that entry).
 *
 * snapshot: (u32 length, directory_encode()) then lockfsm_snapshot(), as
 *   two raft_malloc'ed buffers, or packed into one by snapzip_pack() when
 *   compression is on, in a raft_malloc'ed array; raft owns them on
 *   success (version 1: raft frees them after writing). RAFT_NOMEM on
 *   failure, or RAFT_BUSY while an entry stopped by RAFT_NOMEM is
 *   unfinished, with nothing left allocated.
 *
 * restore: a packed snapshot is unpacked first; both parts are checked
 *   before either is replaced (directory decoded first, then
 *   lockfsm_restore()); on success the buffer is
 *   raft_free'd (raft's contract), on failure it is left to raft and the
 *   live state is unchanged: RAFT_CORRUPT for a corrupt, truncated or
 *   unknown-version snapshot, RAFT_NOMEM when out of memory.
 */

#endif /* SERVER_RAFTFSM_H */
