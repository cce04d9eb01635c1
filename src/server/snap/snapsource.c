/* Where a node's snapshots come from (snapsource.h). */
#include "snapsource.h"

#include <stdio.h>
#include <string.h>

#include "../../../include/baton.h"
#include "snapphase.h"

void snapsource_init(struct snapsource *s, snapimage_encode_fn encode,
                     void *encode_data, char *errmsg, size_t errmsg_size)
{
        snapimage_init(&s->image, SNAPIMAGE_INLINE);
        snaptail_init(&s->tail);
        snapkeep_init(&s->keep);
        snapspill_init(&s->spill);
        s->encode = encode;
        s->encode_data = encode_data;
        s->threshold = 0;
        s->gap = 0;
        s->snap_index = 0;
        s->writing = false;
        s->errmsg = errmsg;
        s->errmsg_size = errmsg_size;
}

/* A segment smaller than a page stays in memory: its file's page and
 * mapping would cost more. */
#define SPILL_MIN 4096

/* Take a finished spill's file into the keep, then start the next one:
 * cheap enough for every turn of the loop. With `wait`, wait for a running
 * spill and start none (the directory is about to change or close). */
static void spill_step(struct snapsource *s, bool wait)
{
        struct snapimage_bytes bytes;
        struct snapshare *seg;
        const void *p;
        size_t len;
        void *tag;

        if (snapspill_running(&s->spill)) {
                if (!wait && !snapspill_finished(&s->spill)) {
                        return;
                }
                (void)snapspill_join(&s->spill, &bytes, &tag);
                snapkeep_spill_done(&s->keep, tag, &bytes);
        }
        /* Tails follow images into files, only where a child writes them
         * (a test's inline images stay deterministic and in memory). */
        if (wait || s->image.mode != SNAPIMAGE_FORK || s->image.dir_fd < 0) {
                return;
        }
        seg = snapkeep_spill_take(&s->keep, SPILL_MIN, &p, &len);
        if (seg != NULL &&
            snapspill_start(&s->spill, s->image.dir_fd, p, len, seg) != 0) {
                memset(&bytes, 0, sizeof bytes); /* failed */
                snapkeep_spill_done(&s->keep, seg, &bytes);
        }
}

void snapsource_spill(struct snapsource *s)
{
        spill_step(s, false);
}

/* A spill running on may outlive the keep it came from (its reference
 * keeps its segment), but not the directory it writes into. */
void snapsource_forget(struct snapsource *s)
{
        snapimage_cancel(&s->image);
        snaptail_reset(&s->tail);
        snapkeep_drop(&s->keep);
}

void snapsource_close(struct snapsource *s)
{
        snapsource_forget(s);
        spill_step(s, true);
        snapimage_close(&s->image);
}

int snapsource_configure(struct snapsource *s, enum snapimage_mode mode,
                         uint32_t threshold, const char *image_dir)
{
        snapsource_forget(s);
        spill_step(s, true);
        s->image.mode = mode;
        s->threshold = threshold;
        return image_dir ? snapimage_set_dir(&s->image, image_dir) : 0;
}

/* Start an image of the state at `index`; the tail starts empty. */
static int start_image(struct snapsource *s, uint64_t index)
{
        int rv;

        snaptail_reset(&s->tail);
        rv = snapimage_start(&s->image, index, s->encode, s->encode_data);
        if (rv != 0) {
                snprintf(s->errmsg, s->errmsg_size, "%s", s->image.errmsg);
        }
        return rv;
}

/* Whether to start a new image after entry `index`: half-way to the next
 * snapshot, so that it is usually ready when raft asks, and only once the
 * kept image's tail has grown to its size (snapkeep.h). */
static bool image_due(const struct snapsource *s, uint64_t index)
{
        if (s->threshold == 0 || index < s->snap_index + s->gap / 2) {
                return false;
        }
        return s->keep.image == NULL || snapkeep_stale(&s->keep);
}

/*
 * Whether the image being made has waited long enough: its tail (in
 * memory) holds 2 x threshold entries, and, while a kept image serves the
 * snapshots meanwhile, is as large as that image's own, as the keep's tail
 * may grow. The child runs behind the loops (SNAPIMAGE_NICE), so on a busy
 * machine an image of a million locks takes several seconds; restarting it
 * then would start one that never finishes.
 */
static bool making_tail_full(const struct snapsource *s)
{
        size_t kept = s->keep.image != NULL ? snapkeep_image(&s->keep)->len : 0;

        return s->tail.n >= 2 * (uint64_t)s->threshold + 1024 &&
               s->tail.len >= kept;
}

void snapsource_applied(struct snapsource *s, uint64_t index, const void *buf,
                        size_t len)
{
        /* Without memory the keep is dropped: snapshots wait for an image. */
        (void)snapkeep_add(&s->keep, index, buf, len);
        if (s->image.state != SNAPIMAGE_NONE) {
                /* A tail that raft never takes (or no memory for it) only
                 * costs a newer image. */
                if (!making_tail_full(s) &&
                    snaptail_add(&s->tail, index, buf, len) == 0) {
                        return;
                }
                snapimage_cancel(&s->image);
                start_image(s, index); /* with an empty tail */
                return;
        }
        if (image_due(s, index)) {
                start_image(s, index);
        }
}

/* An image made is kept in place of the last one once its tail reaches
 * `index`; one of another state is dropped. */
static void take_ready_image(struct snapsource *s, uint64_t index)
{
        if (snapimage_poll(&s->image) != SNAPIMAGE_READY) {
                return;
        }
        if ((s->tail.n > 0 ? s->tail.last : s->image.index) != index) {
                /* Not the state raft asks for: never hand it over. */
                snapimage_cancel(&s->image);
                snaptail_reset(&s->tail);
                return;
        }
        (void)snapkeep_set(&s->keep, snapimage_take(&s->image), s->image.index,
                           &s->tail);
}

/* An image that does not reach `index` once made is the failure of an
 * allocation that would have kept it (snapkeep_set, snapkeep_add). */
int snapsource_hand(struct snapsource *s, uint64_t index,
                    struct raft_buffer *bufs[], unsigned *n_bufs)
{
        take_ready_image(s, index);
        if (!snapkeep_covers(&s->keep, index)) {
                snapkeep_drop(&s->keep);
                if (s->image.state == SNAPIMAGE_NONE &&
                    start_image(s, index) != 0) {
                        return RAFT_NOMEM;
                }
                if (s->image.state == SNAPIMAGE_MAKING) {
                        /* Asked again later. */
                        snprintf(s->errmsg, s->errmsg_size,
                                 "snapshot image at %llu still being made",
                                 (unsigned long long)s->image.index);
                        return RAFT_BUSY;
                }
                /* Made at once (SNAPIMAGE_INLINE, or fork() failed). */
                take_ready_image(s, index);
        }
        if (!snapkeep_covers(&s->keep, index) ||
            snapkeep_hand(&s->keep, bufs, n_bufs) != 0) {
                snprintf(s->errmsg, s->errmsg_size, "snapshot: %s",
                         baton_strerror(BATON_ENOMEM));
                return RAFT_NOMEM;
        }
        return 0;
}

void snapsource_at(struct snapsource *s, struct raft *r, uint64_t index)
{
        s->snap_index = index;
        if (r == NULL || s->threshold == 0) {
                return;
        }
        s->gap = snapphase_gap(r->id, s->snap_index, s->threshold);
        raft_set_snapshot_threshold(r, s->gap);
}
