/* The raft glue: adapts the lock state machine to libraft's struct raft_fsm. */
#ifndef SERVER_RAFTFSM_H
#define SERVER_RAFTFSM_H

#include <stdbool.h>
#include <stdint.h>

#include <raft.h>

#include "../../fsm/acl.h"
#include "../../fsm/directory.h"
#include "../../fsm/lockfsm.h"
#include "../../lib/mem.h"
#include "../snap/bgrestore.h"
#include "../snap/snapimage.h"
#include "../snap/snapkeep.h"
#include "../snap/snapsource.h"
#include "../snap/snaptail.h"

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

/* How fsm->restore replaces the state (raftfsm_set_restore()). */
enum raftfsm_restore_mode {
        /* Before it returns: deterministic, for the simulation and the
         * tests, and for batond's start (raft_start() restores before the
         * loop serves anything, and a refused snapshot fails the start). */
        RAFTFSM_RESTORE_INLINE,
        /* It checks the container, returns, and the state is decoded on a
         * worker thread (bgrestore.h), then adopted by raftfsm_adopt().
         * batond's mode once started, for snapshots installed from the
         * leader. */
        RAFTFSM_RESTORE_THREAD,
};

struct raftfsm_job;

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
        struct acl acl;               /* the access list (ACL) */
        /* Bumped whenever the access list may have changed (an ACL entry
         * applied, a restore taken), from 1: roles derived from it are
         * current while it holds. */
        uint64_t acl_epoch;
        void (*acl_cb)(void *data, uint64_t index, const struct command *c,
                       int status);
        void *acl_data;
        bool compress; /* pack snapshots (snapzip.h) */
        void (*entry_cb)(void *data, uint64_t index, uint8_t kind);
        void *entry_data;
        /* raftfsm_set_applied_cb() */
        void (*applied_cb)(void *data, uint64_t index, const void *buf,
                           size_t len);
        void *applied_data;
        uint64_t n_nomem; /* applies refused for lack of memory */
        /* Snapshots: an image made off the loop plus the entries applied
         * since, at this node's own indexes (snapsource.h). */
        struct snapsource snaps;
        /* The last entry the state includes, applied or restored: raft's
         * applied index also counts barriers, which never reach the
         * state machine. */
        uint64_t state_index;
        /* Of the last snapshot handed to a backup (raftfsm_backup()); 0:
         * none. */
        uint64_t backup_index;
        struct lockfsm_limits limits; /* for the states restores build */
        lockfsm_event_cb event_cb;    /* given to every restored state */
        void *event_data;
        /* Restores on a worker (RAFTFSM_RESTORE_THREAD). */
        enum raftfsm_restore_mode restore_mode;
        void (*failed_cb)(void *data, const char *why);
        void *failed_data;
        struct bgrestore bg;     /* the worker and the entries queued */
        struct raftfsm_job *job; /* the restore being decoded, or NULL */
        bool draining;           /* applying the queue */
        int broken; /* a restore on the worker failed: its BATON_E* code */
        /* The last restore that failed did so on data of a newer release
         * (a container, snapshot or command format this build does not
         * read), not on damage: raftfsm_refused_newer(). */
        bool refused_newer;
        uint64_t n_bg_restores;   /* restores started on the worker */
        uint64_t restore_us_last; /* how long the last one decoded */
        char errmsg[384];
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
 * How snapshots are made (docs/fsm.md, "Snapshots"; snapsource.h): images
 * in `mode` (SNAPIMAGE_FORK in batond, in a forked child; SNAPIMAGE_INLINE,
 * the default, at once, for the simulation and tests), a snapshot every
 * `threshold` entries at this node's own indexes (0: raft's threshold is
 * left alone and no image is started early), and with `image_dir` (FORK
 * mode) images in files of that directory, not in memory. When raft asks,
 * `snapshot` hands over the kept image and its tail, buffers that
 * `snapshot_finalize` frees (struct raft_fsm version 2), without encoding
 * anything; while the image is still being made it answers RAFT_BUSY and
 * raft asks again after its next event. Drops any image made or being
 * made. 0, or BATON_EIO when `image_dir` cannot be opened (errmsg of
 * raftfsm_image()).
 */
int raftfsm_set_snapshots(struct raftfsm *rf, enum snapimage_mode mode,
                          uint32_t threshold, const char *image_dir);

/**
 * How fsm->restore replaces the state (see enum raftfsm_restore_mode;
 * INLINE after raftfsm_init()). Setting INLINE first waits for a restore
 * in progress and adopts it. `failed` is called, on the loop, when a
 * restore on the worker fails (corrupt, over the limits, out of memory):
 * raft counts that snapshot as restored, so the live state is no longer
 * the one raft thinks and nothing more is applied (fsm->apply answers
 * RAFT_NOMEM from then on); `failed` must stop the node, whose restart
 * restores the snapshot from disk again, inline. NULL `failed`: abort().
 * `failed` is also called when raft applies an entry in a command format
 * newer than this build reads (a leader of a newer release wrote it):
 * nothing is applied from that entry on, with or without `failed`.
 * `data` is borrowed.
 */
void raftfsm_set_restore(struct raftfsm *rf, enum raftfsm_restore_mode mode,
                         void (*failed)(void *data, const char *why),
                         void *data);

/* Have `wake(data)` called on the worker thread when a restore it decodes
 * is done, for a loop that waits for it without polling (bgrestore.h,
 * bgrestore_set_wake()). Set before any restore starts. */
void raftfsm_set_restore_wake(struct raftfsm *rf, void (*wake)(void *data),
                              void *data);

/* Queued entries applied by one raftfsm_adopt() that does not wait: a
 * few milliseconds of work, however long the queue grew. */
#define RAFTFSM_DRAIN_BATCH 256

/**
 * Take a restore made on the worker, then apply the entries queued while
 * it ran (their events and entry callbacks run now, in order). With
 * `wait` true it applies them all; with `wait` false it never blocks and
 * applies at most RAFTFSM_DRAIN_BATCH of them, so that a loop calling it
 * once a turn keeps serving: 1 while the worker still runs or entries
 * remain (new ones keep queueing behind them until the queue is empty).
 * Returns 0 when nothing is left pending; BATON_ENOMEM when an entry
 * stopped for lack of memory (it stays queued, the next call resumes it);
 * or the restore's own error once it failed (after `failed` was called).
 */
int raftfsm_adopt(struct raftfsm *rf, bool wait);

/*
 * The state at its last entry (rf->state_index, into `index`) as the bytes
 * of a snapshot, for an online backup (docs/operations.md): the buffers
 * of fsm->snapshot, sharing the kept image, for raftfsm_backup_release().
 * Never on the loop in proportion to the state: when no kept image covers
 * the index, one is started (in a forked child) and the call answers
 * BATON_EBUSY until it is ready. BATON_EBUSY also while a restore is
 * pending; BATON_ENOMEM.
 */
int raftfsm_backup(struct raftfsm *rf, struct raft_buffer *bufs[],
                   unsigned *n_bufs, uint64_t *index);
void raftfsm_backup_release(struct raft_buffer *bufs, unsigned n_bufs);

/* The state's image as raft_malloc'd bytes (the form a snapshot without a
 * tail has), encoded on the caller's thread: for `batond --restore`,
 * never for a serving node. 0 or a BATON_E* code. */
int raftfsm_encode(struct raftfsm *rf, void **out, size_t *out_len);

/* Apply the command entry at `index` as raft would, without a raft
 * instance: for `batond --recover`, which replays a stopped node's log.
 * 0 or RAFT_NOMEM. */
int raftfsm_replay(struct raftfsm *rf, uint64_t index, const void *buf,
                   size_t len);

/* Move the kept snapshot tail out of memory a step (snapsource_spill()):
 * on the loop, at every turn. */
void raftfsm_spill(struct raftfsm *rf);

/* Whether a restore or entries queued behind one are pending. */
bool raftfsm_restoring(const struct raftfsm *rf);

/* Whether the worker is still decoding a restore: raftfsm_adopt() has
 * nothing to do until it is done (and the wake-up says so). */
bool raftfsm_decoding(const struct raftfsm *rf);

/* Restores on the worker, for the metrics. */
struct raftfsm_restores {
        uint64_t started;   /* restores started on the worker */
        uint64_t decode_us; /* how long the last one decoded */
        bool pending;       /* raftfsm_restoring() */
};
void raftfsm_restores(const struct raftfsm *rf, struct raftfsm_restores *out);

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

/* Call `cb` after every entry applied to the state (MEMBER entries too,
 * not one stopped by RAFT_NOMEM, nor those a restore replays), with its
 * index and bytes: the state digests' hook (fsmdigest.h). */
static inline void raftfsm_set_applied_cb(struct raftfsm *rf,
                                          void (*cb)(void *data, uint64_t index,
                                                     const void *buf,
                                                     size_t len),
                                          void *data)
{
        rf->applied_cb = cb;
        rf->applied_data = data;
}

/**
 * The term of the entry being applied (call it from an event callback) or
 * last applied, as the leader that proposed it wrote it in its batch
 * (entry.h); 0 for an entry that is not a batch (a MEMBER entry, or one
 * written before batches existed).
 */
uint64_t raftfsm_entry_term(const struct raftfsm *rf);

/* The index of the last snapshot handed to raft or restored (0: none). */
uint64_t raftfsm_snapshot_index(const struct raftfsm *rf);
/* The index of the last snapshot this node made or took: handed to raft,
 * restored, or handed to a backup (0: none), which baton_snapshot_index
 * says. */
uint64_t raftfsm_last_snapshot(const struct raftfsm *rf);
/* Whether raft is writing the last snapshot handed to it: raft frees the
 * log behind it once it is written. */
bool raftfsm_snapshot_writing(const struct raftfsm *rf);

/**
 * The lock state machine, borrowed for lookups (lockfsm_query(),
 * lockfsm_stats(), lockfsm_snapshot()). Callers must not apply entries to it
 * directly: only raft does, through `&rf->fsm`. A restore in progress is
 * waited for and adopted first (raftfsm_adopt()), so the state is the one
 * raft applied; the pointer is valid until the next apply or restore.
 */
struct lockfsm *raftfsm_lockfsm(struct raftfsm *rf);

/* The state as it is, without waiting: during a restore on the worker, the
 * one before it, and the directory likewise. For counts (metrics, STATUS),
 * never for an answer that must be current. */
const struct lockfsm *raftfsm_lockfsm_nowait(const struct raftfsm *rf);

/* The snapshot image maker, for its counters and timings (metrics). */
const struct snapimage *raftfsm_image(const struct raftfsm *rf);
/* The image kept to hand over again and its tail (snapkeep.h). */
const struct snapkeep *raftfsm_keep(const struct raftfsm *rf);
/* Its tail's writes into files (snapspill.h), for their counters. */
const struct snapspill *raftfsm_spills(const struct raftfsm *rf);

/**
 * The replicated member directory, borrowed (MEMBER entries, src/fsm/
 * directory.h): where to send clients for each member id.
 */
const struct directory *raftfsm_directory(const struct raftfsm *rf);

/**
 * The replicated access list, borrowed (ACL entries, src/fsm/acl.h):
 * absent (not seeded) until the first seed is applied. During a restore
 * on the worker, the one before it.
 */
const struct acl *raftfsm_acl(const struct raftfsm *rf);

/* raftfsm_acl()'s epoch: it changes whenever the list may have changed. */
uint64_t raftfsm_acl_epoch(const struct raftfsm *rf);

/**
 * Call `cb` after every ACL entry applied (not replayed in a restore),
 * with its index, the decoded command (borrowed for the call) and its
 * status (0, or why the list refused it), for the server's logs. `data`
 * is borrowed. NULL `cb` turns it off.
 */
void raftfsm_set_acl_cb(struct raftfsm *rf,
                        void (*cb)(void *data, uint64_t index,
                                   const struct command *c, int status),
                        void *data);

/* Whether the last restore that failed was refused for data of a newer
 * release rather than damage: the directory is whole, and a newer batond
 * runs on it (docs/operations.md, "Upgrades"). */
bool raftfsm_refused_newer(const struct raftfsm *rf);

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
 * apply: while a restore runs on the worker (or entries queued behind it
 *   wait), a follower copies the entry into the queue and `*result` holds
 *   only its index; a leader, whose requests wait for outcomes, adopts the
 *   restore first (raftfsm_adopt() with wait). Otherwise, as follows.
 *   A MEMBER entry goes to the directory (result kind
 *   PROTO_KIND_UPDATED, or REJECTED with its status); any other entry (a
 *   batch of commands, or one command) to lockfsm_apply() with index =
 *   raft_last_applied() + 1; an ACL entry then to the access list too
 *   (the lock state machine answers it BATON_EMALFORMED, not its command,
 *   taking a stamp as a release without the list does; the result is the
 *   list's: UPDATED, or REJECTED with its status). `*result` points at rf's
 * struct raftfsm_result, valid until the next apply on `rf` (see above).
 *   Returns 0 for every entry, including malformed or refused
 *   commands, whose error is in the result; returns RAFT_NOMEM only when
 *   lockfsm_apply() ran out of memory, so raft stops at this entry and
 *   applies it again later, and lockfsm resumes it where it stopped (a
 *   deterministic error must never be returned: it would wedge the node at
 *   that entry).
 *
 * snapshot: (u32 length, directory_encode()), then, once the access list
 *   is seeded, ("BACL", u32 length, acl_encode()), then lockfsm_snapshot(), as
 *   two raft_malloc'ed buffers, or packed into one by snapzip_pack() when
 *   compression is on, in a raft_malloc'ed array; raft owns them on
 *   success (version 1: raft frees them after writing). RAFT_NOMEM on
 *   failure, or RAFT_BUSY while an entry stopped by RAFT_NOMEM is
 *   unfinished, with nothing left allocated.
 *
 * restore: in RAFTFSM_RESTORE_THREAD mode, the container (snaptail.h) is
 *   checked, the worker started and 0 returned at once, the buffer now
 *   owned by rf; snapshots answer RAFT_BUSY until the restore is adopted.
 *   A newer restore discards an older one not adopted yet, with its queue.
 *   If no worker can be started, or in INLINE mode: a packed snapshot is
 *   unpacked first; both parts are checked
 *   before either is replaced (directory decoded first, then
 *   lockfsm_restore()); on success the buffer is
 *   raft_free'd (raft's contract), on failure it is left to raft and the
 *   live state is unchanged: RAFT_CORRUPT for a corrupt, truncated or
 *   unknown-version snapshot, RAFT_NOMEM when out of memory.
 */

#endif /* SERVER_RAFTFSM_H */
