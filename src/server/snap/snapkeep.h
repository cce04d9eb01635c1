/* The last snapshot image, kept to be handed over again with a longer tail,
 * so that a large state is not re-encoded at every snapshot. */
#ifndef SERVER_SNAPKEEP_H
#define SERVER_SNAPKEEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <raft.h>

#include "snapimage.h"
#include "snaptail.h"

/*
 * raft asks for a snapshot every `snapshot-threshold` entries and writes
 * whatever bytes it is given. An image of a million locks takes a child
 * about a second of CPU to encode and pack; taking one per snapshot kept a
 * 2-core machine busy with children. So the image is kept after it was
 * handed over, and the next snapshots are the same image with the entries
 * applied since (the container of snaptail.h): correct for any index the
 * tail reaches, and nothing on the loop but bookkeeping, since each
 * snapshot freezes the entries gathered since the one before into a
 * segment that raft and later snapshots share. raftfsm makes a new image
 * once the tail is as large as the image (snapkeep_stale()).
 *
 * Buffers raft holds keep a reference on every image and segment they
 * name; snapkeep_release() (from fsm->snapshot_finalize) lets go, and the
 * last reference frees the bytes.
 */
struct snapshare;

struct snapkeep {
        struct snapshare *image; /* NULL: nothing kept */
        uint64_t index;          /* the image's */
        struct snapshare **segs; /* frozen tail segments, in entry order */
        unsigned n_segs, cap_segs;
        size_t frozen_len;    /* bytes in segs */
        struct snaptail open; /* entries since the last freeze */
        uint64_t last;        /* the last entry the tail holds, or index */
        /* segs[0 .. spill_next) are in files (snapspill.h), spilled_len
         * bytes of them, or too small to be worth one; a failed spill
         * stops the spills until the next snapshot freezes a segment,
         * which tries again (one try per snapshot at most). */
        unsigned spill_next;
        size_t spilled_len;
        bool spill_failed;
};

void snapkeep_init(struct snapkeep *k);
/* Let go of the image and tail (buffers raft holds stay valid). */
void snapkeep_drop(struct snapkeep *k);

/*
 * Keep `bytes` (taken from a READY snapimage) as the image at `index`, and
 * `tail` (entries applied since it, moved in: `tail` is empty after) as
 * the start of its tail; what was kept before is dropped. 0, or
 * BATON_ENOMEM with the bytes and the tail freed and nothing kept.
 */
int snapkeep_set(struct snapkeep *k, struct snapimage_bytes bytes,
                 uint64_t index, struct snaptail *tail);

/* Add the entry applied at `index`. 0, or BATON_ENOMEM with the keep
 * dropped (the next snapshot waits for a new image). */
int snapkeep_add(struct snapkeep *k, uint64_t index, const void *p, size_t n);

/* Whether a snapshot at `index` can be handed from what is kept. */
bool snapkeep_covers(const struct snapkeep *k, uint64_t index);

/* Whether the tail has grown to the image's size: the time for a new
 * image. False when nothing is kept. */
bool snapkeep_stale(const struct snapkeep *k);

/* Bytes kept: the image and its tail. */
size_t snapkeep_size(const struct snapkeep *k);

/* The kept image's bytes; only when one is kept (k->image not NULL). */
const struct snapimage_bytes *snapkeep_image(const struct snapkeep *k);

/*
 * Moving the tail out of memory (snapspill.h), one segment at a time in
 * entry order. snapkeep_spill_take(): the oldest frozen segment still in
 * memory, when raft is not writing a snapshot that holds it, with a
 * reference taken for the spill and its bytes in *p / *len; NULL when
 * there is none (or it is in a snapshot being written: asked again later).
 * Segments under `min` bytes are passed over and stay in memory. The bytes
 * stay valid and unchanged until snapkeep_spill_done().
 */
struct snapshare *snapkeep_spill_take(struct snapkeep *k, size_t min,
                                      const void **p, size_t *len);

/* Bytes of the tail in files (a part of snapkeep_size()). */
size_t snapkeep_spilled(const struct snapkeep *k);

/*
 * The spill of `seg` ended with `bytes`, the file's (or all zero: it
 * failed, and no segment is spilled until the next snapshot). They
 * replace the segment's copy in memory if it is still kept and no
 * snapshot being written holds it; otherwise they are freed, and the
 * segment is taken again later. Drops the spill's reference.
 */
void snapkeep_spill_done(struct snapkeep *k, struct snapshare *seg,
                         struct snapimage_bytes *bytes);

/*
 * The snapshot at the last entry kept, as raft's buffers: the container's
 * header, the image, then each tail segment. The caller checked
 * snapkeep_covers(). 0, or BATON_ENOMEM with nothing changed.
 */
int snapkeep_hand(struct snapkeep *k, struct raft_buffer *bufs[],
                  unsigned *n_bufs);

/* Free buffers snapkeep_hand() built (raft's snapshot_finalize). */
void snapkeep_release(struct raft_buffer *bufs, unsigned n_bufs);

#endif /* SERVER_SNAPKEEP_H */
