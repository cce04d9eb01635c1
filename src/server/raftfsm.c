/* The raft glue: adapts the lock state machine to libraft's struct raft_fsm. */
#include "raftfsm.h"

#include <assert.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "../../include/baton.h"
#include "../fsm/entry.h"
#include "../lib/cursor.h"
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
        if (rf->entry_cb != NULL) {
                rf->entry_cb(rf->entry_data, index,
                             command_peek_type(buf->base, buf->len));
        }
        return 0;
}

/*
 * A snapshot is the member directory (u32 length, then directory_encode())
 * followed by the lock state machine's snapshot, packed by snapzip when
 * compression is on (the default): libraft 0.22.1 no longer compresses.
 */
static int fsm_snapshot(struct raft_fsm *fsm, struct raft_buffer *bufs[],
                        unsigned *n_bufs)
{
        struct raftfsm *rf = fsm->data;
        struct raft_buffer *array;
        size_t dir_len = directory_encode(&rf->dir, NULL, 0);
        struct iovec parts[2];
        struct wcursor w;
        uint8_t *dir;
        void *data, *packed;
        size_t len, packed_len;
        int rv;

        array = raft_malloc(2 * sizeof *array);
        dir = raft_malloc(4 + dir_len);
        if (array == NULL || dir == NULL) {
                rv = BATON_ENOMEM;
                goto err;
        }
        rv = lockfsm_snapshot(rf->lockfsm, &data, &len);
        if (rv != 0) {
                goto err;
        }
        wcursor_init(&w, dir, 4);
        wcursor_u32(&w, (uint32_t)dir_len);
        directory_encode(&rf->dir, dir + 4, dir_len);
        /* Everything came from raft_malloc() (rf->mem is raft's heap), so
         * raft can free it once the snapshot is written. */
        array[0].base = dir;
        array[0].len = 4 + dir_len;
        array[1].base = data;
        array[1].len = len;
        *n_bufs = 2;
        if (rf->compress) {
                parts[0].iov_base = dir;
                parts[0].iov_len = 4 + dir_len;
                parts[1].iov_base = data;
                parts[1].iov_len = len;
                rv = snapzip_pack(&rf->mem, parts, 2, &packed, &packed_len);
                lockfsm_snapshot_free(rf->lockfsm, data);
                raft_free(dir);
                dir = NULL;
                if (rv != 0) {
                        goto err;
                }
                array[0].base = packed;
                array[0].len = packed_len;
                *n_bufs = 1;
        }
        *bufs = array;
        return 0;
err:
        raft_free(array);
        raft_free(dir);
        snprintf(rf->errmsg, sizeof rf->errmsg, "snapshot: %s",
                 baton_strerror(rv));
        return rv == BATON_EBUSY ? RAFT_BUSY : RAFT_NOMEM;
}

/* Replace the directory and the lock state with a snapshot's, checking
 * both before changing either. */
static int restore(struct raftfsm *rf, const uint8_t *p, size_t len)
{
        struct directory dir;
        struct rcursor r;
        size_t dir_len;
        int rv;

        if (len < 4) {
                return BATON_ECORRUPT;
        }
        rcursor_init(&r, p, 4);
        dir_len = rcursor_u32(&r);
        if (dir_len > len - 4 || directory_decode(&dir, p + 4, dir_len) != 0) {
                return BATON_ECORRUPT;
        }
        rv = lockfsm_restore(rf->lockfsm, p + 4 + dir_len, len - 4 - dir_len);
        if (rv == 0) {
                rf->dir = dir;
        }
        return rv;
}

static int fsm_restore(struct raft_fsm *fsm, struct raft_buffer *buf)
{
        struct raftfsm *rf = fsm->data;
        void *raw;
        size_t len;
        int rv;

        /* Packed or not, whatever compression is set to now: a node reads
         * the snapshots of nodes configured otherwise. */
        if (snapzip_is_packed(buf->base, buf->len)) {
                rv = snapzip_unpack(&rf->mem, buf->base, buf->len, &raw, &len);
                if (rv == 0) {
                        rv = restore(rf, raw, len);
                        mem_free(&rf->mem, raw);
                }
        } else {
                rv = restore(rf, buf->base, buf->len);
        }
        if (rv != 0) {
                snprintf(rf->errmsg, sizeof rf->errmsg,
                         "restore snapshot of %zu bytes: %s", buf->len,
                         baton_strerror(rv));
                return rv == BATON_ENOMEM ? RAFT_NOMEM : RAFT_CORRUPT;
        }
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
        rf->compress = true;
        rf->fsm.version = 1;
        rf->fsm.data = rf;
        rf->fsm.apply = fsm_apply;
        rf->fsm.snapshot = fsm_snapshot;
        rf->fsm.restore = fsm_restore;
        return 0;
}

void raftfsm_close(struct raftfsm *rf)
{
        if (rf == NULL) {
                return;
        }
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

const struct directory *raftfsm_directory(const struct raftfsm *rf)
{
        return &rf->dir;
}

const char *raftfsm_errmsg(const struct raftfsm *rf)
{
        return rf->errmsg;
}
