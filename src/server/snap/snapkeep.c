/* The kept snapshot image and its tail (snapkeep.h). */
#include "snapkeep.h"

#include <string.h>

#include "../../../include/baton/errors.h"

/* Bytes shared by the keep and the snapshots raft is writing. */
struct snapshare {
        struct snapimage_bytes bytes;
        unsigned refs;
        /* Of the references, those of snapshots handed over and not
         * released: their buffers point at `bytes`, which must not move. */
        unsigned handed;
};

/* Behind the container's header in the first buffer, past what raft
 * writes: what that snapshot holds references on. */
struct held {
        unsigned n;
        struct snapshare *share[];
};

#define HELD_OFFSET ((SNAPTAIL_HEADER_SIZE + 7) / 8 * 8)

static void share_init(struct snapshare *s, struct snapimage_bytes bytes)
{
        s->bytes = bytes;
        s->refs = 1;
        s->handed = 0;
}

static struct snapshare *share_new(struct snapimage_bytes bytes)
{
        struct snapshare *s = raft_malloc(sizeof *s);

        if (s != NULL) {
                share_init(s, bytes);
        }
        return s;
}

static void share_put(struct snapshare *s)
{
        if (s != NULL && --s->refs == 0) {
                snapimage_bytes_free(&s->bytes);
                raft_free(s);
        }
}

void snapkeep_init(struct snapkeep *k)
{
        memset(k, 0, sizeof *k);
        snaptail_init(&k->open);
}

void snapkeep_drop(struct snapkeep *k)
{
        unsigned i;

        share_put(k->image);
        for (i = 0; i < k->n_segs; i++) {
                share_put(k->segs[i]);
        }
        raft_free(k->segs);
        snaptail_reset(&k->open);
        snapkeep_init(k);
}

int snapkeep_set(struct snapkeep *k, struct snapimage_bytes bytes,
                 uint64_t index, struct snaptail *tail)
{
        struct snapshare *image = share_new(bytes);

        snapkeep_drop(k);
        if (image == NULL) {
                snapimage_bytes_free(&bytes);
                snaptail_reset(tail);
                return BATON_ENOMEM;
        }
        k->image = image;
        k->index = index;
        k->open = *tail;
        k->last = tail->n > 0 ? tail->last : index;
        snaptail_init(tail);
        return 0;
}

int snapkeep_add(struct snapkeep *k, uint64_t index, const void *p, size_t n)
{
        if (k->image == NULL) {
                return 0;
        }
        if (snaptail_add(&k->open, index, p, n) != 0) {
                snapkeep_drop(k);
                return BATON_ENOMEM;
        }
        k->last = index;
        return 0;
}

bool snapkeep_covers(const struct snapkeep *k, uint64_t index)
{
        return k->image != NULL && k->last == index;
}

bool snapkeep_stale(const struct snapkeep *k)
{
        return k->image != NULL &&
               k->frozen_len + k->open.len >= k->image->bytes.len;
}

const struct snapimage_bytes *snapkeep_image(const struct snapkeep *k)
{
        return &k->image->bytes;
}

size_t snapkeep_size(const struct snapkeep *k)
{
        return k->image == NULL
                   ? 0
                   : k->image->bytes.len + k->frozen_len + k->open.len;
}

struct snapshare *snapkeep_spill_take(struct snapkeep *k, size_t min,
                                      const void **p, size_t *len)
{
        struct snapshare *seg = NULL;

        while (!k->spill_failed && k->spill_next < k->n_segs) {
                seg = k->segs[k->spill_next];
                if (seg->bytes.len >= min) {
                        break;
                }
                k->spill_next++;
                seg = NULL;
        }
        if (seg == NULL || seg->handed > 0) {
                return NULL;
        }
        seg->refs++;
        *p = seg->bytes.base;
        *len = seg->bytes.len;
        return seg;
}

void snapkeep_spill_done(struct snapkeep *k, struct snapshare *seg,
                         struct snapimage_bytes *bytes)
{
        bool kept = k->spill_next < k->n_segs && k->segs[k->spill_next] == seg;

        if (bytes->base == NULL) {
                if (kept) {
                        k->spill_failed = true;
                }
        } else if (kept && seg->handed == 0) {
                snapimage_bytes_free(&seg->bytes);
                seg->bytes = *bytes;
                k->spill_next++;
                k->spilled_len += bytes->len;
        } else {
                snapimage_bytes_free(bytes);
        }
        share_put(seg);
}

size_t snapkeep_spilled(const struct snapkeep *k)
{
        return k->spilled_len;
}

/* Make the open segment a shared one, so this snapshot and the next can
 * name it without a copy. `seg` and room in `segs` are allocated. */
static void freeze(struct snapkeep *k, struct snapshare *seg)
{
        struct snapimage_bytes bytes = {NULL, 0, false, false};

        bytes.base = snaptail_detach(&k->open, &bytes.len);
        share_init(seg, bytes);
        k->segs[k->n_segs++] = seg;
        k->frozen_len += bytes.len;
        /* A spill that failed (a full disk) is tried again now: once per
         * snapshot, so a disk that stays full costs one try each time. */
        k->spill_failed = false;
}

/* Room for one more segment. 0 or BATON_ENOMEM. */
static int reserve_seg(struct snapkeep *k)
{
        struct snapshare **segs;
        unsigned cap;

        if (k->n_segs < k->cap_segs) {
                return 0;
        }
        cap = k->cap_segs == 0 ? 16 : 2 * k->cap_segs;
        segs = raft_realloc(k->segs, cap * sizeof *segs);
        if (segs == NULL) {
                return BATON_ENOMEM;
        }
        k->segs = segs;
        k->cap_segs = cap;
        return 0;
}

int snapkeep_hand(struct snapkeep *k, struct raft_buffer *bufs[],
                  unsigned *n_bufs)
{
        struct snapshare *seg = NULL;
        struct raft_buffer *array;
        struct held *held;
        uint8_t *head;
        uint32_t crc = 0;
        unsigned i, n;

        if (k->open.len > 0 &&
            (reserve_seg(k) != 0 || (seg = raft_malloc(sizeof *seg)) == NULL)) {
                return BATON_ENOMEM;
        }
        n = 1 + k->n_segs + (seg != NULL);
        array = raft_malloc((1 + n) * sizeof *array);
        head = raft_malloc(HELD_OFFSET + sizeof *held + n * sizeof(void *));
        if (array == NULL || head == NULL) {
                raft_free(seg);
                raft_free(array);
                raft_free(head);
                return BATON_ENOMEM;
        }
        if (seg != NULL) {
                freeze(k, seg);
        }
        snaptail_header(head, k->index, k->last, k->image->bytes.len);
        array[0].base = head;
        array[0].len = SNAPTAIL_HEADER_SIZE;
        held = (struct held *)(void *)(head + HELD_OFFSET);
        held->n = n;
        held->share[0] = k->image;
        for (i = 0; i < k->n_segs; i++) {
                held->share[1 + i] = k->segs[i];
        }
        for (i = 0; i < n; i++) {
                held->share[i]->refs++;
                held->share[i]->handed++;
                array[1 + i].base = held->share[i]->bytes.base;
                array[1 + i].len = held->share[i]->bytes.len;
        }
        /* The entries' checksum, so that a restore refuses a damaged tail
         * (a few MiB at most: the entries since the image). */
        for (i = 2; i < 1 + n; i++) {
                crc = snaptail_crc(crc, array[i].base, array[i].len);
        }
        snaptail_seal(head, crc);
        *bufs = array;
        *n_bufs = 1 + n;
        return 0;
}

void snapkeep_release(struct raft_buffer *bufs, unsigned n_bufs)
{
        struct held *held;
        unsigned i;

        if (bufs == NULL) {
                return;
        }
        (void)n_bufs;
        held = (struct held *)(void *)((uint8_t *)bufs[0].base + HELD_OFFSET);
        for (i = 0; i < held->n; i++) {
                /* Raft has written it (or a backup has read it): while it
                 * is kept for the next snapshot, its pages need not stay
                 * resident (an image on disk). */
                if (held->share[i]->refs > 1) {
                        snapimage_bytes_evict(&held->share[i]->bytes);
                }
                held->share[i]->handed--;
                share_put(held->share[i]);
        }
        raft_free(bufs[0].base);
        raft_free(bufs);
}
