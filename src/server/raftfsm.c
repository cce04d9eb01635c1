/* The raft glue: adapts the lock state machine to libraft's struct raft_fsm. */
#include "raftfsm.h"

#include <assert.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "../../include/baton.h"
#include "../fsm/entry.h"
#include "../lib/cursor.h"
#include "snapkeep.h"
#include "snapzip.h"

/* The state machine allocates from raft's heap so that a snapshot buffer can
 * be given to raft as it is, and raft_heap_set() reaches it too. */
static void *heap_alloc(void *ctx, size_t size)
{
        (void)ctx;
        return raft_malloc(size);
}

static void heap_free(void *ctx, void *ptr)
{
        (void)ctx;
        raft_free(ptr);
}

/* MEMBER entries change the directory; every other entry is the lock
 * state machine's. Both are pure, so every replica agrees. */
static bool apply_member(struct raftfsm *rf, const struct raft_buffer *buf)
{
        struct command c;
        int rv;

        if (command_peek_type(buf->base, buf->len) != COMMAND_MEMBER) {
                return false;
        }
        memset(&rf->result.res, 0, sizeof rf->result.res);
        rv = command_decode(&c, buf->base, buf->len);
        if (rv == 0) {
                rv = directory_apply(&rf->dir, &c);
        }
        rf->result.res.status = rv;
        rf->result.res.kind =
            rv == 0 ? PROTO_KIND_UPDATED : PROTO_KIND_REJECTED;
        return true;
}

static void after_apply(struct raftfsm *rf, uint64_t index,
                        const struct raft_buffer *buf);

static int fsm_apply(struct raft_fsm *fsm, const struct raft_buffer *buf,
                     void **result)
{
        struct raftfsm *rf = fsm->data;
        uint64_t index;
        int rv;

        /* Without an attached instance the index would be a guess, and a
         * wrong index is a wrong fencing token: better to stop here. */
        assert(rf->raft != NULL);
        index = (uint64_t)raft_last_applied(rf->raft) + 1;
        rf->term = entry_term(buf->base, buf->len);
        rf->result.index = index;
        *result = &rf->result;
        if (apply_member(rf, buf)) {
                after_apply(rf, index, buf);
                return 0;
        }
        rv = lockfsm_apply(rf->lockfsm, index, buf->base, buf->len,
                           &rf->result.res);
        if (rv != 0) {
                /* lockfsm_apply() resumes this very entry when raft applies
                 * it again later. Any other error would break that. */
                assert(rv == BATON_ENOMEM);
                rf->n_nomem++;
                snprintf(rf->errmsg, sizeof rf->errmsg,
                         "apply entry %llu: %s, raft will retry it",
                         (unsigned long long)index, baton_strerror(rv));
                return RAFT_NOMEM;
        }
        after_apply(rf, index, buf);
        if (rf->entry_cb != NULL) {
                rf->entry_cb(rf->entry_data, index,
                             command_peek_type(buf->base, buf->len));
        }
        return 0;
}

/*
 * An image: the member directory (u32 length, then directory_encode())
 * followed by the lock state machine's snapshot, packed by snapzip when
 * compression is on (the default): libraft 0.22.1 no longer compresses.
 * One raft_malloc buffer. In batond this runs in the forked child.
 */
static int encode_image(void *data, void **out, size_t *out_len)
{
        struct raftfsm *rf = data;
        size_t dir_len = directory_encode(&rf->dir, NULL, 0);
        struct iovec parts[2];
        struct wcursor w;
        uint8_t *dir, *whole;
        void *state;
        size_t len;
        int rv;

        dir = raft_malloc(4 + dir_len);
        if (dir == NULL) {
                return BATON_ENOMEM;
        }
        rv = lockfsm_snapshot(rf->lockfsm, &state, &len);
        if (rv != 0) {
                raft_free(dir);
                return rv;
        }
        wcursor_init(&w, dir, 4);
        wcursor_u32(&w, (uint32_t)dir_len);
        directory_encode(&rf->dir, dir + 4, dir_len);
        parts[0].iov_base = dir;
        parts[0].iov_len = 4 + dir_len;
        parts[1].iov_base = state;
        parts[1].iov_len = len;
        if (rf->compress) {
                rv = snapzip_pack(&rf->mem, parts, 2, out, out_len);
        } else if ((whole = raft_malloc(4 + dir_len + len)) != NULL) {
                memcpy(whole, dir, 4 + dir_len);
                memcpy(whole + 4 + dir_len, state, len);
                *out = whole;
                *out_len = 4 + dir_len + len;
        } else {
                rv = BATON_ENOMEM;
        }
        lockfsm_snapshot_free(rf->lockfsm, state);
        raft_free(dir);
        return rv;
}

/* Start an image of the state at `index`; the tail starts empty. */
static int start_image(struct raftfsm *rf, uint64_t index)
{
        int rv;

        snaptail_reset(&rf->tail);
        rv = snapimage_start(&rf->image, index, encode_image, rf);
        if (rv != 0) {
                snprintf(rf->errmsg, sizeof rf->errmsg, "%s", rf->image.errmsg);
        }
        return rv;
}

/* Whether to start a new image after entry `index`: half-way to the next
 * snapshot, so that it is usually ready when raft asks, and only once the
 * kept image's tail has grown to its size (snapkeep.h). */
static bool image_due(const struct raftfsm *rf, uint64_t index)
{
        if (rf->threshold == 0 || index < rf->snap_index + rf->threshold / 2) {
                return false;
        }
        return rf->keep.image == NULL || snapkeep_stale(&rf->keep);
}

/* After entry `index` was applied: add it to the kept image's tail and to
 * the tail of the image being made, or start the next image. */
static void after_apply(struct raftfsm *rf, uint64_t index,
                        const struct raft_buffer *buf)
{
        /* Without memory the keep is dropped: snapshots wait for an image. */
        (void)snapkeep_add(&rf->keep, index, buf->base, buf->len);
        if (rf->image.state != SNAPIMAGE_NONE) {
                /* A tail that raft never takes (or no memory for it) only
                 * costs a newer image. */
                if (rf->tail.n < 2 * (uint64_t)rf->threshold + 1024 &&
                    snaptail_add(&rf->tail, index, buf->base, buf->len) == 0) {
                        return;
                }
                snapimage_cancel(&rf->image);
                start_image(rf, index); /* with an empty tail */
                return;
        }
        if (image_due(rf, index)) {
                start_image(rf, index);
        }
}

/* Drop every image, kept or being made: the state they are of is gone. */
static void forget_images(struct raftfsm *rf)
{
        snapimage_cancel(&rf->image);
        snaptail_reset(&rf->tail);
        snapkeep_drop(&rf->keep);
}

/* An image made is kept in place of the last one once its tail reaches
 * `index`; one of another state is dropped. */
static void take_ready_image(struct raftfsm *rf, uint64_t index)
{
        if (snapimage_poll(&rf->image) != SNAPIMAGE_READY) {
                return;
        }
        if ((rf->tail.n > 0 ? rf->tail.last : rf->image.index) != index) {
                /* Not the state raft asks for: never hand it over. */
                snapimage_cancel(&rf->image);
                snaptail_reset(&rf->tail);
                return;
        }
        (void)snapkeep_set(&rf->keep, snapimage_take(&rf->image),
                           rf->image.index, &rf->tail);
}

/* Hand raft the kept image and its tail as the snapshot at `index`. An
 * image that does not reach `index` here is the failure of an allocation
 * that would have kept it (snapkeep_set, snapkeep_add). */
static int hand_kept(struct raftfsm *rf, uint64_t index,
                     struct raft_buffer *bufs[], unsigned *n_bufs)
{
        if (!snapkeep_covers(&rf->keep, index) ||
            snapkeep_hand(&rf->keep, bufs, n_bufs) != 0) {
                snprintf(rf->errmsg, sizeof rf->errmsg, "snapshot: %s",
                         baton_strerror(BATON_ENOMEM));
                return RAFT_NOMEM;
        }
        rf->snap_index = index;
        return 0;
}

static int fsm_snapshot(struct raft_fsm *fsm, struct raft_buffer *bufs[],
                        unsigned *n_bufs)
{
        struct raftfsm *rf = fsm->data;
        uint64_t index = (uint64_t)raft_last_applied(rf->raft);

        take_ready_image(rf, index);
        if (snapkeep_covers(&rf->keep, index)) {
                return hand_kept(rf, index, bufs, n_bufs);
        }
        snapkeep_drop(&rf->keep);
        if (rf->image.state == SNAPIMAGE_NONE && start_image(rf, index) != 0) {
                return RAFT_NOMEM;
        }
        if (rf->image.state == SNAPIMAGE_MAKING) {
                /* Raft asks again after its next event. */
                snprintf(rf->errmsg, sizeof rf->errmsg,
                         "snapshot image at %llu still being made",
                         (unsigned long long)rf->image.index);
                return RAFT_BUSY;
        }
        /* Made at once (SNAPIMAGE_INLINE, or fork() failed). */
        take_ready_image(rf, index);
        return hand_kept(rf, index, bufs, n_bufs);
}

static int fsm_snapshot_finalize(struct raft_fsm *fsm,
                                 struct raft_buffer *bufs[], unsigned *n_bufs)
{
        (void)fsm;
        snapkeep_release(*bufs, *n_bufs);
        *bufs = NULL;
        *n_bufs = 0;
        return 0;
}

/* Restoring: the directory being rebuilt, and the entries after the
 * image (MEMBER ones go to the directory, the rest to the lock state). */
struct replay {
        struct snaptail_reader r;
        struct directory dir;
        bool tail;
};

static int next_lock_entry(void *it, uint64_t *index, const void **buf,
                           size_t *len)
{
        struct replay *rp = it;
        struct command c;
        int rv;

        while ((rv = snaptail_next(&rp->r, index, buf, len)) == 1 &&
               command_peek_type(*buf, *len) == COMMAND_MEMBER) {
                /* A refused change is an outcome too, as in apply. */
                if (command_decode(&c, *buf, *len) == 0) {
                        directory_apply(&rp->dir, &c);
                }
        }
        return rv;
}

/* Replace the directory and the lock state with an image's (and the
 * entries after it), checking everything before changing either. */
static int restore(struct raftfsm *rf, const uint8_t *p, size_t len,
                   struct replay *rp)
{
        struct rcursor r;
        size_t dir_len;
        int rv;

        if (len < 4) {
                return BATON_ECORRUPT;
        }
        rcursor_init(&r, p, 4);
        dir_len = rcursor_u32(&r);
        if (dir_len > len - 4 ||
            directory_decode(&rp->dir, p + 4, dir_len) != 0) {
                return BATON_ECORRUPT;
        }
        rv = lockfsm_restore_with(rf->lockfsm, p + 4 + dir_len,
                                  len - 4 - dir_len,
                                  rp->tail ? next_lock_entry : NULL, rp);
        if (rv == 0) {
                rf->dir = rp->dir;
        }
        return rv;
}

/* An image, packed or not, whatever compression is set to now: a node
 * reads the snapshots of nodes configured otherwise. */
static int restore_image(struct raftfsm *rf, const uint8_t *p, size_t len,
                         struct replay *rp)
{
        void *raw;
        size_t raw_len;
        int rv;

        if (!snapzip_is_packed(p, len)) {
                return restore(rf, p, len, rp);
        }
        rv = snapzip_unpack(&rf->mem, p, len, &raw, &raw_len);
        if (rv == 0) {
                rv = restore(rf, raw, raw_len, rp);
                mem_free(&rf->mem, raw);
        }
        return rv;
}

static int fsm_restore(struct raft_fsm *fsm, struct raft_buffer *buf)
{
        struct raftfsm *rf = fsm->data;
        struct replay rp;
        int rv;

        memset(&rp, 0, sizeof rp);
        if (snaptail_is(buf->base, buf->len)) {
                rv = snaptail_open(&rp.r, buf->base, buf->len);
                rp.tail = true;
                if (rv == 0) {
                        rv = restore_image(rf, rp.r.image, rp.r.image_len, &rp);
                }
        } else {
                rv = restore_image(rf, buf->base, buf->len, &rp);
        }
        if (rv != 0) {
                snprintf(rf->errmsg, sizeof rf->errmsg,
                         "restore snapshot of %zu bytes: %s%s", buf->len,
                         baton_strerror(rv),
                         rv == BATON_ETOOMANYSESSIONS
                             ? ": it holds more than max-sessions allows "
                               "here; every node needs the same limits"
                             : "");
                return rv == BATON_ENOMEM ? RAFT_NOMEM : RAFT_CORRUPT;
        }
        forget_images(rf);
        rf->snap_index =
            rp.tail ? rp.r.last_index : lockfsm_last_index(rf->lockfsm);
        /* Raft hands the buffer over only when the restore succeeds. */
        raft_free(buf->base);
        return 0;
}

int raftfsm_init(struct raftfsm *rf, const struct lockfsm_limits *limits)
{
        memset(rf, 0, sizeof *rf);
        rf->mem.alloc = heap_alloc;
        rf->mem.free = heap_free;
        rf->mem.ctx = NULL;
        rf->lockfsm = lockfsm_create(limits, &rf->mem);
        if (rf->lockfsm == NULL) {
                snprintf(rf->errmsg, sizeof rf->errmsg,
                         "create lock state machine: out of memory or "
                         "invalid limits");
                return BATON_ENOMEM;
        }
        directory_init(&rf->dir);
        snapimage_init(&rf->image, SNAPIMAGE_INLINE);
        snaptail_init(&rf->tail);
        snapkeep_init(&rf->keep);
        rf->compress = true;
        rf->fsm.version = 2;
        rf->fsm.data = rf;
        rf->fsm.apply = fsm_apply;
        rf->fsm.snapshot = fsm_snapshot;
        rf->fsm.restore = fsm_restore;
        rf->fsm.snapshot_finalize = fsm_snapshot_finalize;
        return 0;
}

void raftfsm_close(struct raftfsm *rf)
{
        if (rf == NULL) {
                return;
        }
        forget_images(rf);
        lockfsm_destroy(rf->lockfsm);
        rf->lockfsm = NULL;
        rf->raft = NULL;
}

void raftfsm_attach(struct raftfsm *rf, struct raft *r)
{
        rf->raft = r;
}

void raftfsm_set_event_cb(struct raftfsm *rf, lockfsm_event_cb cb, void *data)
{
        lockfsm_set_event_cb(rf->lockfsm, cb, data);
}

void raftfsm_set_compression(struct raftfsm *rf, bool on)
{
        rf->compress = on;
}

void raftfsm_set_snapshots(struct raftfsm *rf, enum snapimage_mode mode,
                           uint32_t threshold)
{
        forget_images(rf);
        rf->image.mode = mode;
        rf->threshold = threshold;
}

void raftfsm_set_entry_cb(struct raftfsm *rf,
                          void (*cb)(void *data, uint64_t index, uint8_t kind),
                          void *data)
{
        rf->entry_cb = cb;
        rf->entry_data = data;
}

uint64_t raftfsm_entry_term(const struct raftfsm *rf)
{
        return rf->term;
}

struct lockfsm *raftfsm_lockfsm(struct raftfsm *rf)
{
        return rf->lockfsm;
}

const struct snapimage *raftfsm_image(const struct raftfsm *rf)
{
        return &rf->image;
}

const struct directory *raftfsm_directory(const struct raftfsm *rf)
{
        return &rf->dir;
}

const char *raftfsm_errmsg(const struct raftfsm *rf)
{
        return rf->errmsg;
}
