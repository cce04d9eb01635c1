/* The raft glue: adapts the lock state machine to libraft's struct raft_fsm. */
#include "raftfsm.h"

#include <assert.h>
#include <stdio.h>
#include <string.h>

#include "../../include/baton.h"

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
        rv = lockfsm_apply(rf->lockfsm, index, buf->base, buf->len,
                           &rf->result.res);
        if (rv != 0) {
                /* lockfsm_apply() promises that nothing changed, so raft
                 * may apply this very entry again later. Any other error
                 * would break that promise. */
                assert(rv == BATON_ENOMEM);
                rf->n_nomem++;
                snprintf(rf->errmsg, sizeof rf->errmsg,
                         "apply entry %llu: %s, raft will retry it",
                         (unsigned long long)index, baton_strerror(rv));
                return RAFT_NOMEM;
        }
        rf->result.index = index;
        *result = &rf->result;
        return 0;
}

static int fsm_snapshot(struct raft_fsm *fsm, struct raft_buffer *bufs[],
                        unsigned *n_bufs)
{
        struct raftfsm *rf = fsm->data;
        struct raft_buffer *array;
        void *data;
        size_t len;
        int rv;

        array = raft_malloc(sizeof *array);
        if (array == NULL) {
                snprintf(rf->errmsg, sizeof rf->errmsg,
                         "snapshot: out of memory");
                return RAFT_NOMEM;
        }
        rv = lockfsm_snapshot(rf->lockfsm, &data, &len);
        if (rv != 0) {
                raft_free(array);
                snprintf(rf->errmsg, sizeof rf->errmsg, "snapshot: %s",
                         baton_strerror(rv));
                return RAFT_NOMEM;
        }
        /* `data` came from rf->mem, that is from raft_malloc(), so raft can
         * free it once the snapshot is written. */
        array[0].base = data;
        array[0].len = len;
        *bufs = array;
        *n_bufs = 1;
        return 0;
}

static int fsm_restore(struct raft_fsm *fsm, struct raft_buffer *buf)
{
        struct raftfsm *rf = fsm->data;
        int rv;

        rv = lockfsm_restore(rf->lockfsm, buf->base, buf->len);
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

struct lockfsm *raftfsm_lockfsm(struct raftfsm *rf)
{
        return rf->lockfsm;
}

const char *raftfsm_errmsg(const struct raftfsm *rf)
{
        return rf->errmsg;
}
