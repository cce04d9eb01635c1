/* The raft glue: adapts the lock state machine to libraft's struct raft_fsm. */
#include "raftfsm.h"

#include <assert.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../../include/baton/errors.h"
#include "../../fsm/entry.h"
#include "../../fsm/snapshot.h"
#include "../../lib/cursor.h"
#include "../../lib/monotonic.h"
#include "../snap/snapsource.h"
#include "../snap/snapzip.h"
#include "fsmreplay.h"

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
static bool apply_member(struct raftfsm *rf, const void *buf, size_t len)
{
        struct command c;
        int rv;

        if (command_peek_type(buf, len) != COMMAND_MEMBER) {
                return false;
        }
        memset(&rf->result.res, 0, sizeof rf->result.res);
        rv = command_decode(&c, buf, len);
        if (rv == 0) {
                rv = directory_apply(&rf->dir, &c);
        }
        rf->result.res.status = rv;
        rf->result.res.kind =
            rv == 0 ? PROTO_KIND_UPDATED : PROTO_KIND_REJECTED;
        return true;
}

#ifdef BATON_CHAOS_BUG_ACLSKIP
/* test_sim_aclskip only: node 2 answers a RULE_REMOVE as every node does
 * but keeps the rule, so that its access list parts from the others'
 * while the log's outcomes stay the same: the negative control of the
 * simulation's access-list check (docs/simulation.md). */
static int acl_apply_chaos(struct raftfsm *rf, const struct command *c)
{
        struct acl *kept;
        int rv;

        if (c->mode != COMMAND_ACL_RULE_REMOVE || rf->raft == NULL ||
            rf->raft->id != 2 || (kept = malloc(sizeof *kept)) == NULL) {
                return acl_apply(&rf->acl, c);
        }
        *kept = rf->acl;
        rv = acl_apply(&rf->acl, c);
        rf->acl = *kept;
        free(kept);
        return rv;
}
#endif

/* An ACL entry, after the lock state machine answered it as a command not
 * its own (BATON_EMALFORMED: it took a stamp and changed nothing else,
 * exactly as a release without the access list does, so that the lock
 * states of both stay the same during an upgrade): the access list's
 * change, whose outcome is the entry's result. */
static void apply_acl(struct raftfsm *rf, const void *buf, size_t len)
{
        struct command c;
        int rv;

        if (command_peek_type(buf, len) != COMMAND_ACL ||
            command_decode(&c, buf, len) != 0) {
                return;
        }
#ifdef BATON_CHAOS_BUG_ACLSKIP
        rv = acl_apply_chaos(rf, &c);
#else
        rv = acl_apply(&rf->acl, &c);
#endif
        rf->acl_epoch++;
        if (rf->acl_cb != NULL) {
                rf->acl_cb(rf->acl_data, rf->result.index, &c, rv);
        }
        rf->result.res.status = rv;
        rf->result.res.kind =
            rv == 0 ? PROTO_KIND_UPDATED : PROTO_KIND_REJECTED;
}

/* After entry `index` was applied: the state includes it, and so do the
 * tails of the snapshots to come. */
static void after_apply(struct raftfsm *rf, uint64_t index, const void *buf,
                        size_t len)
{
        rf->state_index = index;
        snapsource_applied(&rf->snaps, index, buf, len);
        if (rf->applied_cb != NULL) {
                rf->applied_cb(rf->applied_data, index, buf, len);
        }
}

static bool restoring(const struct raftfsm *rf);
static int drain(struct raftfsm *rf, size_t max);

/* The end of a message refusing data of a newer format. */
#define NEWER_HINT                                                             \
        "a newer Baton release wrote it; run that release (or a later one) "   \
        "on this data directory (docs/operations.md, \"Upgrades\")"

/* An entry written in a command format newer than this node reads: only a
 * leader of a newer release can have proposed it (a leader proposes only
 * commands it decodes), and applying it as a malformed command would
 * leave this replica's state other than the nodes' that read it. The node
 * stops instead, and applies nothing more. */
static int refuse_entry(struct raftfsm *rf, uint64_t index, unsigned version)
{
        snprintf(rf->errmsg, sizeof rf->errmsg,
                 "log entry %llu is in command format version %u, and this "
                 "batond (%s) reads versions %d to %d: %s",
                 (unsigned long long)index, version, PACKAGE_VERSION,
                 COMMAND_VERSION_MIN, COMMAND_VERSION, NEWER_HINT);
        rf->broken = BATON_EVERSION;
        if (rf->failed_cb != NULL) {
                rf->failed_cb(rf->failed_data, rf->errmsg);
        }
        return RAFT_NOMEM; /* never applied: raft stays at this entry */
}

/* Apply entry `index` to the state: 0, or RAFT_NOMEM with the entry to be
 * applied again (lockfsm resumes it where it stopped). */
static int apply_entry(struct raftfsm *rf, uint64_t index, const void *buf,
                       size_t len)
{
        unsigned version = entry_max_version(buf, len);
        int rv;

        if (version > COMMAND_VERSION) {
                return refuse_entry(rf, index, version);
        }
        rf->term = entry_term(buf, len);
        rf->result.index = index;
        if (apply_member(rf, buf, len)) {
                after_apply(rf, index, buf, len);
                return 0;
        }
        rv = lockfsm_apply(rf->lockfsm, index, buf, len, &rf->result.res);
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
        apply_acl(rf, buf, len);
        after_apply(rf, index, buf, len);
        if (rf->entry_cb != NULL) {
                rf->entry_cb(rf->entry_data, index,
                             command_peek_type(buf, len));
        }
        return 0;
}

/* While a restore runs on its worker, a follower queues what it applies;
 * a leader, whose clients wait for outcomes, waits for the restore. */
static int apply_later(struct raftfsm *rf, uint64_t index,
                       const struct raft_buffer *buf)
{
        int rv;

        if (raft_state(rf->raft) == RAFT_LEADER) {
                rv = raftfsm_adopt(rf, true);
                return rv == 0 ? apply_entry(rf, index, buf->base, buf->len)
                               : RAFT_NOMEM;
        }
        memset(&rf->result.res, 0, sizeof rf->result.res);
        rf->result.index = index;
        if (bgrestore_queue(&rf->bg, index, buf->base, buf->len) != 0) {
                snprintf(rf->errmsg, sizeof rf->errmsg,
                         "queue entry %llu during a restore: %s",
                         (unsigned long long)index,
                         baton_strerror(BATON_ENOMEM));
                return RAFT_NOMEM;
        }
        return 0;
}

static int fsm_apply(struct raft_fsm *fsm, const struct raft_buffer *buf,
                     void **result)
{
        struct raftfsm *rf = fsm->data;
        uint64_t index;

        /* Without an attached instance the index would be a guess, and a
         * wrong index is a wrong fencing token: better to stop here. */
        assert(rf->raft != NULL);
        index = (uint64_t)raft_last_applied(rf->raft) + 1;
        *result = &rf->result;
        if (rf->broken != 0) {
                /* Its state is not the one raft thinks: apply nothing more
                 * (the failure callback stops the node). */
                return RAFT_NOMEM;
        }
        if (restoring(rf)) {
                return apply_later(rf, index, buf);
        }
        return apply_entry(rf, index, buf->base, buf->len);
}

/*
 * An image: the member directory (u32 length, then directory_encode()),
 * the access list's section, then the lock state machine's snapshot,
 * packed by snapzip when compression is on (the default): libraft 0.22.1
 * no longer compresses. One raft_malloc buffer. In batond this runs in
 * the forked child.
 */
static int encode_image(void *data, void **out, size_t *out_len)
{
        struct raftfsm *rf = data;
        size_t dir_len = directory_encode(&rf->dir, NULL, 0);
        size_t acl_len = rf->acl.seeded ? acl_encode(&rf->acl, NULL, 0) : 0;
        size_t head = 4 + dir_len + (rf->acl.seeded ? 8 + acl_len : 0);
        struct iovec parts[2];
        struct wcursor w;
        uint8_t *dir, *whole;
        void *state;
        size_t len;
        int rv;

        dir = raft_malloc(head);
        if (dir == NULL) {
                return BATON_ENOMEM;
        }
        rv = lockfsm_snapshot(rf->lockfsm, &state, &len);
        if (rv != 0) {
                raft_free(dir);
                return rv;
        }
        wcursor_init(&w, dir, head);
        wcursor_u32(&w, (uint32_t)dir_len);
        directory_encode(&rf->dir, dir + 4, dir_len);
        if (rf->acl.seeded) {
                wcursor_init(&w, dir + 4 + dir_len, 8);
                wcursor_bytes(&w, FSMREPLAY_ACL_MAGIC, 4);
                wcursor_u32(&w, (uint32_t)acl_len);
                acl_encode(&rf->acl, dir + 12 + dir_len, acl_len);
        }
        parts[0].iov_base = dir;
        parts[0].iov_len = head;
        parts[1].iov_base = state;
        parts[1].iov_len = len;
        if (rf->compress) {
                rv = snapzip_pack(&rf->mem, parts, 2, out, out_len);
        } else if ((whole = raft_malloc(head + len)) != NULL) {
                memcpy(whole, dir, head);
                memcpy(whole + head, state, len);
                *out = whole;
                *out_len = head + len;
        } else {
                rv = BATON_ENOMEM;
        }
        lockfsm_snapshot_free(rf->lockfsm, state);
        raft_free(dir);
        return rv;
}

int raftfsm_replay(struct raftfsm *rf, uint64_t index, const void *buf,
                   size_t len)
{
        return apply_entry(rf, index, buf, len);
}

int raftfsm_encode(struct raftfsm *rf, void **out, size_t *out_len)
{
        return encode_image(rf, out, out_len);
}

/* The snapshot at `index` (snapsource_hand()): 0, RAFT_BUSY while a
 * restore or an image is being made, RAFT_NOMEM. */
static int hand_state(struct raftfsm *rf, uint64_t index,
                      struct raft_buffer *bufs[], unsigned *n_bufs)
{
        if (restoring(rf) || rf->broken != 0) {
                /* The state at `index` is still being made. */
                snprintf(rf->errmsg, sizeof rf->errmsg,
                         "snapshot at %llu: a restore is in progress",
                         (unsigned long long)index);
                return RAFT_BUSY;
        }
        return snapsource_hand(&rf->snaps, index, bufs, n_bufs);
}

static int fsm_snapshot(struct raft_fsm *fsm, struct raft_buffer *bufs[],
                        unsigned *n_bufs)
{
        struct raftfsm *rf = fsm->data;
        uint64_t index = (uint64_t)raft_last_applied(rf->raft);
        int rv = hand_state(rf, index, bufs, n_bufs);

        if (rv == 0) {
                rf->snaps.writing = true;
                snapsource_at(&rf->snaps, rf->raft, index);
        }
        return rv;
}

int raftfsm_backup(struct raftfsm *rf, struct raft_buffer *bufs[],
                   unsigned *n_bufs, uint64_t *index)
{
        int rv;

        *index = rf->state_index;
        rv = hand_state(rf, *index, bufs, n_bufs);
        if (rv == 0) {
                rf->backup_index = *index;
                return 0;
        }
        return rv == RAFT_BUSY ? BATON_EBUSY : BATON_ENOMEM;
}

void raftfsm_backup_release(struct raft_buffer *bufs, unsigned n_bufs)
{
        snapkeep_release(bufs, n_bufs);
}

static int fsm_snapshot_finalize(struct raft_fsm *fsm,
                                 struct raft_buffer *bufs[], unsigned *n_bufs)
{
        struct raftfsm *rf = fsm->data;

        rf->snaps.writing = false;
        snapkeep_release(*bufs, *n_bufs);
        *bufs = NULL;
        *n_bufs = 0;
        return 0;
}

static void restore_failed(struct raftfsm *rf, size_t len, int rv,
                           const struct replay *rp)
{
        const char *v = PACKAGE_VERSION;
        unsigned long long at = (unsigned long long)rp->newer_index;

        rf->refused_newer = rp->newer_container != 0 ||
                            rp->newer_image > SNAPSHOT_VERSION ||
                            rp->newer_entry != 0;

        if (rp->newer_container != 0) {
                snprintf(rf->errmsg, sizeof rf->errmsg,
                         "restore snapshot of %zu bytes: its container is "
                         "version %lu, and this batond (%s) reads version "
                         "%d: %s",
                         len, (unsigned long)rp->newer_container, v,
                         SNAPTAIL_VERSION, NEWER_HINT);
        } else if (rp->newer_image > SNAPSHOT_VERSION) {
                snprintf(rf->errmsg, sizeof rf->errmsg,
                         "restore snapshot of %zu bytes: it is in snapshot "
                         "format version %u, and this batond (%s) reads "
                         "versions 1 to %d: %s",
                         len, rp->newer_image, v, SNAPSHOT_VERSION, NEWER_HINT);
        } else if (rp->newer_entry != 0) {
                snprintf(rf->errmsg, sizeof rf->errmsg,
                         "restore snapshot of %zu bytes: its entry %llu is in "
                         "command format version %u, and this batond (%s) "
                         "reads versions %d to %d: %s",
                         len, at, rp->newer_entry, v, COMMAND_VERSION_MIN,
                         COMMAND_VERSION, NEWER_HINT);
        } else {
                snprintf(rf->errmsg, sizeof rf->errmsg,
                         "restore snapshot of %zu bytes: %s%s", len,
                         baton_strerror(rv),
                         rv == BATON_ETOOMANYSESSIONS
                             ? ": it holds more than max-sessions allows "
                               "here; every node needs the same limits"
                             : "");
        }
}

/* A running node (restores on the worker) failed to restore a snapshot
 * from its leader: it must not apply past it, and says so through the
 * failure callback (batond stops), with why in errmsg. */
static void stop_applying(struct raftfsm *rf, int rv)
{
        rf->broken = rv;
        snprintf(rf->errmsg + strlen(rf->errmsg),
                 sizeof rf->errmsg - strlen(rf->errmsg), "%s",
                 "; this node cannot apply past a snapshot it failed to "
                 "restore");
        rf->failed_cb(rf->failed_data, rf->errmsg);
}

/* A restore decoded on the worker (RAFTFSM_RESTORE_THREAD). Only the
 * worker touches it until bgrestore_join(). */
struct raftfsm_job {
        struct raftfsm *rf; /* limits and mem, read-only meanwhile */
        struct raft_buffer buf;
        struct replay rp;
        struct lockfsm *fresh; /* the state being built */
        uint64_t started_us;
        uint64_t took_us;
};

static int run_job(void *arg)
{
        struct raftfsm_job *j = arg;
        int rv = BATON_ENOMEM;

        j->fresh = lockfsm_create(&j->rf->limits, &j->rf->mem);
        if (j->fresh != NULL) {
                rv = replay_restore(&j->rf->mem, j->fresh, j->rp.r.image,
                                    j->rp.r.image_len, &j->rp);
        }
        j->took_us = monotonic_us() - j->started_us;
        return rv;
}

static void job_free(struct raftfsm_job *j)
{
        lockfsm_destroy(j->fresh);
        raft_free(j->buf.base);
        free(j);
}

/* Forget a restore not adopted yet, and what was queued for it: a newer
 * snapshot replaces both. */
static void discard_job(struct raftfsm *rf)
{
        if (rf->job != NULL) {
                (void)bgrestore_join(&rf->bg);
                job_free(rf->job);
                rf->job = NULL;
        }
        bgrestore_drop(&rf->bg);
}

/* Start decoding on the worker; raft's buffer is ours from here on. 0, or
 * BATON_ENOMEM with nothing started. */
static int start_job(struct raftfsm *rf, const struct raft_buffer *buf,
                     const struct replay *rp)
{
        struct raftfsm_job *j = calloc(1, sizeof *j);

        if (j == NULL) {
                return BATON_ENOMEM;
        }
        discard_job(rf);
        j->rf = rf;
        j->buf = *buf;
        j->rp = *rp;
        j->started_us = monotonic_us();
        if (bgrestore_start(&rf->bg, run_job, j) != 0) {
                free(j);
                return BATON_ENOMEM;
        }
        rf->job = j;
        snapsource_forget(&rf->snaps);
        rf->n_bg_restores++;
        return 0;
}

/* A restore is taken, inline or from the worker: the directory is the
 * snapshot's, and so is the index later snapshots count from. */
static void took_restore(struct raftfsm *rf, const struct replay *rp)
{
        rf->dir = rp->dir;
        rf->acl = rp->acl;
        lockfsm_set_quota_cb(rf->lockfsm, replay_quotas, &rf->acl);
        rf->acl_epoch++;
        rf->state_index =
            rp->tail ? rp->r.last_index : lockfsm_last_index(rf->lockfsm);
        snapsource_at(&rf->snaps, rf->raft, rf->state_index);
}

static int fsm_restore(struct raft_fsm *fsm, struct raft_buffer *buf)
{
        struct raftfsm *rf = fsm->data;
        struct replay rp;
        int rv;

        rv = replay_open(buf->base, buf->len, &rp);
        if (rv == 0 && rf->restore_mode == RAFTFSM_RESTORE_THREAD &&
            start_job(rf, buf, &rp) == 0) {
                return 0; /* raftfsm_adopt() takes the state */
        }
        if (rv == 0) {
                /* Inline, also when no worker could be started. */
                discard_job(rf);
                rv = replay_restore(&rf->mem, rf->lockfsm, rp.r.image,
                                    rp.r.image_len, &rp);
                /* Failed, the live state reads the live list again. */
                lockfsm_set_quota_cb(rf->lockfsm, replay_quotas, &rf->acl);
        }
        if (rv != 0) {
                restore_failed(rf, buf->len, rv, &rp);
                /* A container of a newer release, refused before a
                 * worker could take it: no later try reads it, and raft
                 * 0.22.1 keeps the snapshot it wrote and waits, so a
                 * running node would stay behind without a word. At start
                 * (no callback yet) raft_start fails with errmsg instead.
                 * A damaged one is refused at once, as inline. */
                if (rf->refused_newer &&
                    rf->restore_mode == RAFTFSM_RESTORE_THREAD &&
                    rf->failed_cb != NULL) {
                        stop_applying(rf, rv);
                }
                return rv == BATON_ENOMEM ? RAFT_NOMEM : RAFT_CORRUPT;
        }
        snapsource_forget(&rf->snaps);
        took_restore(rf, &rp);
        /* Raft hands the buffer over only when the restore succeeds. */
        raft_free(buf->base);
        return 0;
}

static void destroy_state(void *p)
{
        lockfsm_destroy(p);
}

/* The worker finished: its state replaces the live one, which is freed on
 * a thread of its own. On failure the live state stays, but raft counts
 * the snapshot as restored: the node must not apply anything more. */
static int take_job(struct raftfsm *rf)
{
        struct raftfsm_job *j = rf->job;
        struct lockfsm *old = rf->lockfsm;
        int rv = bgrestore_join(&rf->bg);

        rf->job = NULL;
        rf->restore_us_last = j->took_us;
        if (rv != 0) {
                restore_failed(rf, j->buf.len, rv, &j->rp);
                job_free(j);
                bgrestore_drop(&rf->bg);
                if (rf->failed_cb == NULL) {
                        abort();
                }
                stop_applying(rf, rv);
                return rv;
        }
        rf->lockfsm = j->fresh;
        j->fresh = NULL;
        lockfsm_set_event_cb(rf->lockfsm, rf->event_cb, rf->event_data);
        took_restore(rf, &j->rp);
        job_free(j);
        bgrestore_dispose(&rf->bg, destroy_state, old);
        return 0;
}

/* Apply what was queued during the restore, in order, at most `max`
 * entries: 1 if some are left. An entry stopped by RAFT_NOMEM stays at
 * the head for the next call. */
static int drain(struct raftfsm *rf, size_t max)
{
        const struct bgrestore_entry *e;
        int rv = 0;

        rf->draining = true;
        while ((e = bgrestore_peek(&rf->bg)) != NULL) {
                if (max-- == 0) {
                        rv = 1;
                        break;
                }
                if (apply_entry(rf, e->index, e->buf, e->len) != 0) {
                        rv = BATON_ENOMEM;
                        break;
                }
                bgrestore_pop(&rf->bg);
        }
        rf->draining = false;
        return rv;
}

static bool restoring(const struct raftfsm *rf)
{
        return rf->job != NULL || bgrestore_peek(&rf->bg) != NULL;
}

int raftfsm_adopt(struct raftfsm *rf, bool wait)
{
        int rv;

        if (rf->broken != 0) {
                return rf->broken;
        }
        if (rf->draining) {
                return 0;
        }
        if (rf->job != NULL) {
                if (!wait && !bgrestore_finished(&rf->bg)) {
                        return 1;
                }
                rv = take_job(rf);
                if (rv != 0) {
                        return rv;
                }
        }
        return drain(rf, wait ? SIZE_MAX : RAFTFSM_DRAIN_BATCH);
}

bool raftfsm_restoring(const struct raftfsm *rf)
{
        return restoring(rf);
}

bool raftfsm_decoding(const struct raftfsm *rf)
{
        return rf->job != NULL && !bgrestore_finished(&rf->bg);
}

void raftfsm_set_restore_wake(struct raftfsm *rf, void (*wake)(void *data),
                              void *data)
{
        bgrestore_set_wake(&rf->bg, wake, data);
}

void raftfsm_restores(const struct raftfsm *rf, struct raftfsm_restores *out)
{
        out->started = rf->n_bg_restores;
        out->decode_us = rf->restore_us_last;
        out->pending = restoring(rf);
}

int raftfsm_init(struct raftfsm *rf, const struct lockfsm_limits *limits)
{
        memset(rf, 0, sizeof *rf);
        if (limits != NULL) {
                rf->limits = *limits;
        } else {
                lockfsm_limits_default(&rf->limits);
        }
        rf->mem.alloc = heap_alloc;
        rf->mem.free = heap_free;
        rf->mem.ctx = NULL;
        rf->mem.admit = NULL; /* records in its pool (pool.h) */
        rf->lockfsm = lockfsm_create(&rf->limits, &rf->mem);
        if (rf->lockfsm == NULL) {
                snprintf(rf->errmsg, sizeof rf->errmsg,
                         "create lock state machine: out of memory or "
                         "invalid limits");
                return BATON_ENOMEM;
        }
        directory_init(&rf->dir);
        acl_init(&rf->acl);
        rf->acl_epoch = 1;
        lockfsm_set_quota_cb(rf->lockfsm, replay_quotas, &rf->acl);
        snapsource_init(&rf->snaps, encode_image, rf, rf->errmsg,
                        sizeof rf->errmsg);
        bgrestore_init(&rf->bg);
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
        snapsource_close(&rf->snaps);
        discard_job(rf);
        bgrestore_close(&rf->bg);
        lockfsm_destroy(rf->lockfsm);
        rf->lockfsm = NULL;
        rf->raft = NULL;
}

void raftfsm_attach(struct raftfsm *rf, struct raft *r)
{
        rf->raft = r;
        snapsource_at(&rf->snaps, r, rf->snaps.snap_index);
}

void raftfsm_set_event_cb(struct raftfsm *rf, lockfsm_event_cb cb, void *data)
{
        rf->event_cb = cb; /* for the states restores build */
        rf->event_data = data;
        lockfsm_set_event_cb(rf->lockfsm, cb, data);
}

void raftfsm_set_restore(struct raftfsm *rf, enum raftfsm_restore_mode mode,
                         void (*failed)(void *data, const char *why),
                         void *data)
{
        if (mode == RAFTFSM_RESTORE_INLINE) {
                (void)raftfsm_adopt(rf, true);
        }
        rf->restore_mode = mode;
        rf->failed_cb = failed;
        rf->failed_data = data;
}

void raftfsm_set_compression(struct raftfsm *rf, bool on)
{
        rf->compress = on;
}

int raftfsm_set_snapshots(struct raftfsm *rf, enum snapimage_mode mode,
                          uint32_t threshold, const char *image_dir)
{
        int rv = snapsource_configure(&rf->snaps, mode, threshold, image_dir);

        snapsource_at(&rf->snaps, rf->raft, rf->snaps.snap_index);
        return rv;
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

uint64_t raftfsm_snapshot_index(const struct raftfsm *rf)
{
        return rf->snaps.snap_index;
}

uint64_t raftfsm_last_snapshot(const struct raftfsm *rf)
{
        return rf->backup_index > rf->snaps.snap_index ? rf->backup_index
                                                       : rf->snaps.snap_index;
}

bool raftfsm_snapshot_writing(const struct raftfsm *rf)
{
        return rf->snaps.writing;
}

struct lockfsm *raftfsm_lockfsm(struct raftfsm *rf)
{
        if (!rf->draining && restoring(rf)) {
                (void)raftfsm_adopt(rf, true);
        }
        return rf->lockfsm;
}

const struct lockfsm *raftfsm_lockfsm_nowait(const struct raftfsm *rf)
{
        return rf->lockfsm;
}

const struct snapimage *raftfsm_image(const struct raftfsm *rf)
{
        return &rf->snaps.image;
}

const struct snapkeep *raftfsm_keep(const struct raftfsm *rf)
{
        return &rf->snaps.keep;
}

void raftfsm_spill(struct raftfsm *rf)
{
        snapsource_spill(&rf->snaps);
}

const struct snapspill *raftfsm_spills(const struct raftfsm *rf)
{
        return &rf->snaps.spill;
}

const struct acl *raftfsm_acl(const struct raftfsm *rf)
{
        return &rf->acl;
}

uint64_t raftfsm_acl_epoch(const struct raftfsm *rf)
{
        return rf->acl_epoch;
}

void raftfsm_set_acl_cb(struct raftfsm *rf,
                        void (*cb)(void *data, uint64_t index,
                                   const struct command *c, int status),
                        void *data)
{
        rf->acl_cb = cb;
        rf->acl_data = data;
}

const struct directory *raftfsm_directory(const struct raftfsm *rf)
{
        return &rf->dir;
}

bool raftfsm_refused_newer(const struct raftfsm *rf)
{
        return rf->refused_newer;
}

const char *raftfsm_errmsg(const struct raftfsm *rf)
{
        return rf->errmsg;
}
