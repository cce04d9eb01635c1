/* The raft glue: adapts the lock state machine to libraft's struct raft_fsm. */
#include "raftfsm.h"

#include <assert.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "../../include/baton.h"
#include "../fsm/entry.h"

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
        const uint8_t *p = buf->base;
        struct command c;
        int rv;

        if (buf->len < 2 || p[0] != COMMAND_VERSION || p[1] != COMMAND_MEMBER) {
                return false;
        }
        memset(&rf->result.res, 0, sizeof rf->result.res);
        rv = command_decode(&c, buf->base, buf->len);
        if (rv == 0) {
                rv = directory_apply(&rf->dir, &c);
        }
        rf->result.res.status = rv;
        rf->result.res.kind = rv == 0 ? LOCKFSM_UPDATED : LOCKFSM_REJECTED;
        return true;
}

static int fsm_apply(struct raft_fsm *fsm, const struct raft_buffer *buf,
                     void **result)
{
        struct raftfsm *rf = fsm->data;
        const uint8_t *p = buf->base;
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
                rf->entry_cb(rf->entry_data, index, buf->len >= 2 ? p[1] : 0);
        }
        return 0;
}

/*
 * A snapshot is two buffers, which raft stores back to back: u32 length of
 * the directory, the directory, then the lock state machine's snapshot.
 */
static int fsm_snapshot(struct raft_fsm *fsm, struct raft_buffer *bufs[],
                        unsigned *n_bufs)
{
        struct raftfsm *rf = fsm->data;
        struct raft_buffer *array;
        size_t dir_len = directory_encode(&rf->dir, NULL, 0);
        uint8_t *dir;
        void *data;
        size_t len;
        int rv;

        array = raft_malloc(2 * sizeof *array);
        dir = raft_malloc(4 + dir_len);
        if (array == NULL || dir == NULL) {
                raft_free(array);
                raft_free(dir);
                snprintf(rf->errmsg, sizeof rf->errmsg,
                         "snapshot: out of memory");
                return RAFT_NOMEM;
        }
        rv = lockfsm_snapshot(rf->lockfsm, &data, &len);
        if (rv != 0) {
                raft_free(array);
                raft_free(dir);
                snprintf(rf->errmsg, sizeof rf->errmsg, "snapshot: %s",
                         baton_strerror(rv));
                return rv == BATON_EBUSY ? RAFT_BUSY : RAFT_NOMEM;
        }
        dir[0] = (uint8_t)dir_len;
        dir[1] = (uint8_t)(dir_len >> 8);
        dir[2] = (uint8_t)(dir_len >> 16);
        dir[3] = (uint8_t)(dir_len >> 24);
        directory_encode(&rf->dir, dir + 4, dir_len);
        /* Both came from raft_malloc() (rf->mem is raft's heap), so raft
         * can free them once the snapshot is written. */
        array[0].base = dir;
        array[0].len = 4 + dir_len;
        array[1].base = data;
        array[1].len = len;
        *bufs = array;
        *n_bufs = 2;
        return 0;
}

static int fsm_restore(struct raft_fsm *fsm, struct raft_buffer *buf)
{
        struct raftfsm *rf = fsm->data;
        const uint8_t *p = buf->base;
        struct directory dir;
        size_t dir_len;
        int rv = BATON_ECORRUPT;

        /* Check both parts before changing either. */
        if (buf->len >= 4) {
                dir_len = (size_t)p[0] | (size_t)p[1] << 8 |
                          (size_t)p[2] << 16 | (size_t)p[3] << 24;
                if (dir_len <= buf->len - 4 &&
                    directory_decode(&dir, p + 4, dir_len) == 0) {
                        rv = lockfsm_restore(rf->lockfsm, p + 4 + dir_len,
                                             buf->len - 4 - dir_len);
                }
        }
        if (rv != 0) {
                snprintf(rf->errmsg, sizeof rf->errmsg,
                         "restore snapshot of %zu bytes: %s", buf->len,
                         baton_strerror(rv));
                return rv == BATON_ENOMEM ? RAFT_NOMEM : RAFT_CORRUPT;
        }
        rf->dir = dir;
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
