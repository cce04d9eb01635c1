/* Why raft's log stalls on this node (see stallwatch.h). */
#include "stallwatch.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/statvfs.h>

#include <raft/uv.h>

#include "../base/log.h"
#include "../snap/snapkeep.h"

/* One sample of the data directory's room, taken on libuv's thread pool:
 * statvfs() waits for the file system, which may be as slow as the disk. A
 * watch that closes first leaves it to free itself. */
struct stallwatch_job {
        uv_work_t req;
        struct stallwatch *w; /* NULL: the watch closed */
        const char *dir;      /* borrowed from the config, which outlives it */
        uint64_t started_ms;
        struct diskfull_space out;
};

/* "12.0 KiB", "1.5 MiB", "20.0 GiB": a size for a person, into `buf` (16
 * bytes). */
static const char *size_text(uint64_t bytes, char *buf)
{
        double mib = (double)bytes / (1024.0 * 1024.0);

        if (mib >= 1024.0) {
                snprintf(buf, 16, "%.1f GiB", mib / 1024.0);
        } else if (bytes >= 1024 * 1024 || bytes == 0) {
                snprintf(buf, 16, "%.1f MiB", mib);
        } else {
                snprintf(buf, 16, "%.1f KiB", (double)bytes / 1024.0);
        }
        return buf;
}

/* The room a failed write of `kind` needed, as far as it is known. */
static uint64_t need(const struct stallwatch *w, enum diskfull_kind kind)
{
        size_t snapshot = w->keep != NULL ? snapkeep_size(w->keep) : 0;

        if (kind == DISKFULL_SNAPSHOT && snapshot > 0) {
                return snapshot;
        }
        return STALLWATCH_SEGMENT_BYTES;
}

/* What failed, for the log: "creating log segment DIR/open-4". */
static void what_failed(const struct stallwatch *w, char *buf, size_t cap)
{
        const struct diskfull *d = &w->disk;
        char room[16];

        switch (d->first_kind) {
        case DISKFULL_SEGMENT:
                snprintf(buf, cap, "creating log segment %s/%s", w->dir,
                         d->first_what);
                return;
        case DISKFULL_ENTRIES:
                snprintf(buf, cap,
                         "writing entries into a log segment in %s "
                         "(raft says: %s)",
                         w->dir, d->first_what);
                return;
        case DISKFULL_ROOM:
                snprintf(buf, cap,
                         "its log has %s of room left in %s and cannot make "
                         "a new segment",
                         size_text((uint64_t)w->io->capacity * 1024, room),
                         w->dir);
                return;
        case DISKFULL_SNAPSHOT:
                break;
        }
        snprintf(buf, cap, "creating a snapshot's files in %s", w->dir);
}

/* Why, from the room: the system's words and the numbers behind them. */
static void why_failed(const struct stallwatch *w, char *buf, size_t cap)
{
        const struct diskfull_space *s = &w->space;
        char avail[16], size[16], needed[16];

        size_text(s->free_bytes, avail);
        size_text(s->size_bytes, size);
        size_text(need(w, w->disk.first_kind), needed);
        if (w->cause == ENOSPC && s->free_inodes == 0) {
                snprintf(buf, cap, "%s (no inode free)", strerror(ENOSPC));
        } else if (w->cause == ENOSPC) {
                snprintf(buf, cap, "%s (%s free of %s; it needs %s)",
                         strerror(ENOSPC), avail, size, needed);
        } else if (w->cause == EROFS) {
                snprintf(buf, cap, "%s", strerror(EROFS));
        } else if (s->known) {
                snprintf(buf, cap,
                         "raft does not say why, and the file system has "
                         "room (%s free); LIBRAFT_TRACE=1 in batond's "
                         "environment prints raft's own messages",
                         avail);
        } else {
                snprintf(buf, cap,
                         "raft does not say why, and statvfs of "
                         "the directory fails too");
        }
}

/* The episode's first line, once a sample taken since it began says why. */
static void say_began(struct stallwatch *w)
{
        char what[PATH_MAX + 160], why[320];
        int cause = diskfull_cause(&w->space, need(w, w->disk.first_kind));

        w->announce = false;
        w->cause = cause != 0 ? cause : EIO;
        what_failed(w, what, sizeof what);
        why_failed(w, why, sizeof why);
        log_warn("raft cannot write to its data directory: %s: %s; what it "
                 "writes waits and is retried every %d ms, and GET /ready "
                 "answers %s until it works",
                 what, why, STALLWATCH_RETRY_MS,
                 w->cause == ENOSPC ? "disk-full" : "disk-error");
}

/* How long the episode has lasted at `now`: a failure is seen at its
 * retry, about a retry period after it happened. */
static double lasted_s(const struct stallwatch *w, uint64_t now)
{
        const struct diskfull *d = &w->disk;
        uint64_t ms = now - d->since_ms;

        if (d->first_kind != DISKFULL_ROOM) {
                ms += STALLWATCH_RETRY_MS;
        }
        return (double)ms / 1e3;
}

static void say_ended(struct stallwatch *w, uint64_t now)
{
        const struct diskfull *d = &w->disk;
        char what[PATH_MAX + 160];

        if (w->announce) {
                /* Over before it was said: one line for both. */
                what_failed(w, what, sizeof what);
                log_warn("raft could not write to its data directory for "
                         "about %.1f s (%s: %" PRIu64 " failed attempt%s); "
                         "it writes again",
                         lasted_s(w, now), what, d->episode_errors,
                         d->episode_errors == 1 ? "" : "s");
        } else {
                log_info("raft writes to its data directory %s again, after "
                         "about %.1f s and %" PRIu64 " failed attempt%s",
                         w->dir, lasted_s(w, now), d->episode_errors,
                         d->episode_errors == 1 ? "" : "s");
        }
        w->announce = false;
        w->cause = 0;
}

static void on_sampled(uv_work_t *req, int status);

static void on_sample(uv_work_t *req)
{
        struct stallwatch_job *j = req->data;
        struct statvfs sv;

        memset(&j->out, 0, sizeof j->out);
        if (statvfs(j->dir, &sv) != 0) {
                return;
        }
        j->out.known = true;
        j->out.read_only = (sv.f_flag & ST_RDONLY) != 0;
        j->out.free_bytes = (uint64_t)sv.f_bavail * sv.f_frsize;
        j->out.size_bytes = (uint64_t)sv.f_blocks * sv.f_frsize;
        j->out.free_inodes = sv.f_files == 0 ? UINT64_MAX : sv.f_favail;
}

/* Start a sample unless one is in flight. */
static void sample(struct stallwatch *w, uint64_t now)
{
        struct stallwatch_job *j;

        if (w->job != NULL) {
                return;
        }
        w->next_sample_ms = now + STALLWATCH_SAMPLE_MS;
        j = calloc(1, sizeof *j);
        if (j == NULL) {
                return;
        }
        j->w = w;
        j->dir = w->dir;
        j->started_ms = now;
        j->req.data = j;
        if (uv_queue_work(w->loop, &j->req, on_sample, on_sampled) != 0) {
                free(j);
                return;
        }
        w->job = j;
}

static void on_sampled(uv_work_t *req, int status)
{
        struct stallwatch_job *j = req->data;
        struct stallwatch *w = j->w;
        uint64_t started = j->started_ms;

        (void)status;
        if (w == NULL) {
                free(j);
                return;
        }
        w->job = NULL;
        w->space = j->out;
        free(j);
        if (!w->announce || !w->disk.on) {
                return;
        }
        /* A sample started before the episode began may be of a disk not
         * yet full: say why from one started since. */
        if (started < w->disk.since_ms) {
                sample(w, uv_now(w->loop));
                return;
        }
        /* One failure the room does not explain may be of a disk that had
         * room again by its retry, which it is seen at: the next attempt
         * tells (a second failure, or the write works and ends it). */
        if (diskfull_cause(&w->space, need(w, w->disk.first_kind)) != 0 ||
            w->disk.episode_errors >= 2) {
                say_began(w);
        }
}

/* Entries could not be written into a log segment (an I/O error, a short
 * write, a failed sync of RWF_DSYNC): stop at once. They were never
 * acknowledged, and must never be on the strength of a retry: after a
 * failed sync the kernel may have dropped the data while a later sync
 * succeeds (fsyncgate), and libraft 0.22.1's retry arms the wrong timer
 * and runs on the wrong object, which killed batond with SIGSEGV a retry
 * period later (docs/raft.md). The next start writes back what raft's
 * files read as and syncs it before raft loads them (disksettle.h): after
 * a failed sync, reads can return bytes the disk never stored. */
static void entries_failed(const struct stallwatch *w, const char *what)
{
        log_error("raft could not write entries into a log segment in %s "
                  "(raft says: %s); stopping, so that this node acknowledges "
                  "nothing it did not store: restart batond once the disk "
                  "works, and it goes on from what it stored",
                  w->dir, what);
        exit(1);
}

/* A trace line about a write, on the loop's thread. */
static void on_line(struct stallwatch *w, const char *message)
{
        enum diskfull_kind kind;
        enum diskfull_line line;
        enum diskfull_change ch = DISKFULL_SAME;
        char what[DISKFULL_WHAT_MAX];
        uint64_t now = uv_now(w->loop);

        line = diskfull_classify(message, &kind, what, sizeof what);
        if (line == DISKFULL_LINE_FAILED && kind == DISKFULL_ENTRIES) {
                entries_failed(w, what);
        }
        if (line == DISKFULL_LINE_FAILED) {
                ch = diskfull_failed(&w->disk, kind, what, now);
        } else if (line == DISKFULL_LINE_WORKED) {
                ch = diskfull_worked(&w->disk, kind, now);
        }
        if (ch == DISKFULL_BEGAN) {
                w->announce = true;
                sample(w, now);
        } else if (ch == DISKFULL_ENDED) {
                say_ended(w, now);
        }
}

/* raft_uv's tracer: every line, from the loop or from a worker thread.
 * The lines about writes come from the loop (timer and after-work
 * callbacks); elsewhere nothing is touched. */
static void emit(struct raft_tracer *t, int type, const void *data)
{
        struct stallwatch *w = t->impl;
        const struct raft_tracer_info *info = data;
        uv_thread_t self = uv_thread_self();
        struct timespec ts;

        if (type != RAFT_TRACER_DIAGNOSTIC) {
                return;
        }
        if (w->trace_stderr) {
                /* As libraft's own stderr tracer, which this one replaces. */
                clock_gettime(CLOCK_REALTIME, &ts);
                fprintf(stderr, "LIBRAFT   %lld %s:%d %s\n",
                        (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec,
                        info->diagnostic.file, info->diagnostic.line,
                        info->diagnostic.message);
        }
        if (uv_thread_equal(&self, &w->loop_thread) && !w->closed) {
                on_line(w, info->diagnostic.message);
        }
}

void stallwatch_init(struct stallwatch *w, uv_loop_t *loop,
                     const struct config *cfg, const struct snapkeep *keep,
                     struct raft_io *io)
{
        memset(w, 0, sizeof *w);
        w->loop = loop;
        w->dir = cfg->data_dir;
        w->commit_bound_ms = cfg->election_timeout_ms;
        w->keep = keep;
        w->io = io;
        w->loop_thread = uv_thread_self();
        w->trace_stderr = getenv("LIBRAFT_TRACE") != NULL;
        diskfull_init(&w->disk, STALLWATCH_QUIET_MS);
        commitage_init(&w->commits);
        w->tracer.impl = w;
        w->tracer.version = 2;
        w->tracer.emit = emit;
        raft_uv_set_tracer(io, &w->tracer);
        raft_uv_set_disk_retry(io, STALLWATCH_RETRY_MS);
        raft_uv_set_segment_size(io, STALLWATCH_SEGMENT_BYTES);
}

/* A leader whose oldest uncommitted entry has waited longer than an
 * election timeout: said once when it starts, once when it stops. */
static void say_commits(struct stallwatch *w, uint64_t now)
{
        log_warn(
            "leader: entry %" PRIu64 " has waited %" PRIu64
            " ms to be committed, longer than an election timeout (%" PRIu32
            " ms): a majority of voters does not store what this node "
            "appends (full disks, or cut off); clients wait, and GET "
            "/ready answers cannot-commit until it commits",
            commitage_index(&w->commits), commitage_ms(&w->commits, now),
            w->commit_bound_ms);
}

static void watch_commits(struct stallwatch *w, uint64_t now, bool leader,
                          uint64_t commit, uint64_t last)
{
        uint64_t age;

        commitage_observe(&w->commits, now, leader, commit, last);
        age = commitage_ms(&w->commits, now);
        if (!w->commit_stalled && age > w->commit_bound_ms) {
                w->commit_stalled = true;
                w->commit_stalled_ms = now - age;
                say_commits(w, now);
        } else if (w->commit_stalled && age <= w->commit_bound_ms) {
                w->commit_stalled = false;
                log_info("leader: %s, after about %.1f s",
                         leader ? "commits again"
                                : "no longer leads, and waits no more",
                         (double)(now - w->commit_stalled_ms) / 1e3);
        }
}

/* Whether raft has less room prepared for its log than a leader wants
 * of a majority, and the file system cannot give it a new segment. */
static bool lacks_room(const struct stallwatch *w)
{
        return w->io->capacity < STALLWATCH_CAPACITY_KIB &&
               diskfull_cause(&w->space, STALLWATCH_SEGMENT_BYTES) != 0;
}

void stallwatch_tick(struct stallwatch *w, bool leader, uint64_t commit,
                     uint64_t last)
{
        uint64_t now = uv_now(w->loop);
        enum diskfull_change ch;

        if (w->closed) {
                return;
        }
        ch = diskfull_room(&w->disk, lacks_room(w), now);
        if (ch == DISKFULL_BEGAN) {
                say_began(w); /* the room is the sample's, and says why */
        } else if (ch == DISKFULL_ENDED ||
                   diskfull_tick(&w->disk, now) == DISKFULL_ENDED) {
                say_ended(w, now);
        }
        if (now >= w->next_sample_ms) {
                sample(w, now);
        }
        watch_commits(w, now, leader, commit, last);
}

void stallwatch_close(struct stallwatch *w)
{
        w->closed = true;
        if (w->job != NULL) {
                w->job->w = NULL;
                w->job = NULL;
        }
}

int stallwatch_disk_errno(const struct stallwatch *w)
{
        return w->disk.on ? w->cause : 0;
}

uint64_t stallwatch_disk_failing_ms(const struct stallwatch *w)
{
        uint64_t now = uv_now(w->loop);

        return w->disk.on && w->cause != 0 && now > w->disk.since_ms
                   ? now - w->disk.since_ms
                   : 0;
}

uint64_t stallwatch_uncommitted_ms(const struct stallwatch *w)
{
        return commitage_ms(&w->commits, uv_now(w->loop));
}
