/* Where a node's snapshots come from: the kept image and its tail, the next
 * image being made, and the indexes at which this node takes them. */
#ifndef SERVER_SNAPSOURCE_H
#define SERVER_SNAPSOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <raft.h>

#include "snapimage.h"
#include "snapkeep.h"
#include "snapspill.h"
#include "snaptail.h"

/*
 * raftfsm's snapshot half (docs/fsm.md, "How batond takes them"). Once the
 * applied index is half-way from the last snapshot to the next, an image of
 * the state is started (snapimage.h), and every entry applied after it is
 * copied into a tail. When raft asks for a snapshot, the image and its tail
 * are handed over without encoding anything. The image is kept and handed
 * over again with a longer tail (snapkeep.h) until the tail is as large as
 * the image; only then, and no sooner than half-way to the next snapshot,
 * is a new one started.
 *
 * With an image directory, the tail's segments follow the image out of
 * memory once raft has written them (snapspill.h).
 *
 * After every snapshot and restore, raft's threshold is set so that this
 * node's snapshots fall at indexes of its own (snapphase.h).
 *
 * Nothing here knows the state: it is reached through `encode`, which
 * snapimage runs in a forked child (or at once, SNAPIMAGE_INLINE).
 */
struct snapsource {
        struct snapimage image; /* the next image, made or being made */
        struct snaptail tail;   /* the entries applied since it started */
        struct snapkeep keep;   /* the last image, handed over again */
        /* The keep's tail moving out of memory into files of the image
         * directory, when there is one (never in SNAPIMAGE_INLINE). */
        struct snapspill spill;
        snapimage_encode_fn encode;
        void *encode_data;
        uint32_t threshold; /* snapshot-threshold, as configured; 0: off */
        /* raft's threshold now: entries from snap_index to this node's
         * next snapshot index (snapphase.h), at most `threshold`. */
        uint32_t gap;
        uint64_t snap_index; /* of the last snapshot handed or restored */
        /* A snapshot was handed to raft and not finalized yet: raft is
         * writing a snapshot of this node's own (heard.h). */
        bool writing;
        /* Where a failure to start an image or hand a snapshot is said:
         * the owner's message buffer. */
        char *errmsg;
        size_t errmsg_size;
};

/* Images made at once (SNAPIMAGE_INLINE), threshold 0. `errmsg` is
 * borrowed for the life of `s`. */
void snapsource_init(struct snapsource *s, snapimage_encode_fn encode,
                     void *encode_data, char *errmsg, size_t errmsg_size);
/* Drop every image and close the image directory. */
void snapsource_close(struct snapsource *s);

/* Make images in `mode`, snapshots every `threshold` entries, images in
 * files of `image_dir` (NULL: in memory). Drops every image. 0, or
 * BATON_EIO when the directory cannot be opened (image.errmsg says why). */
int snapsource_configure(struct snapsource *s, enum snapimage_mode mode,
                         uint32_t threshold, const char *image_dir);

/* Drop every image, kept or being made: the state they are of is gone. */
void snapsource_forget(struct snapsource *s);

/* Entry `index`, applied: add it to the kept image's tail and to the tail
 * of the image being made, or start the next image. */
void snapsource_applied(struct snapsource *s, uint64_t index, const void *buf,
                        size_t len);

/* Take a tail segment written to its file, and start writing the next
 * (snapspill.h): on the loop, cheap, at every turn of it (batond's
 * on_monitor), whether or not entries are applied. */
void snapsource_spill(struct snapsource *s);

/*
 * The state at `index` as raft's buffers, from the kept image and its
 * tail: 0, RAFT_BUSY while an image is being made (one is started if none
 * is), or RAFT_NOMEM. snapkeep_release() frees the buffers.
 */
int snapsource_hand(struct snapsource *s, uint64_t index,
                    struct raft_buffer *bufs[], unsigned *n_bufs);

/* The last snapshot, handed or restored, is at `index`: set raft's
 * threshold (of `r`, when attached) for this node's next one. */
void snapsource_at(struct snapsource *s, struct raft *r, uint64_t index);

#endif /* SERVER_SNAPSOURCE_H */
