/* Why raft's log stalls on this node, said once per episode in the log and
 * kept for GET /ready and the metrics: writes to the data directory that
 * fail (a full disk), as raft_uv's tracer reports them (diskfull.h), with
 * the directory's free space sampled off the loop; and, on a leader,
 * entries that a majority does not store in time (commitage.h). */
#ifndef SERVER_STALLWATCH_H
#define SERVER_STALLWATCH_H

#include <stdbool.h>
#include <stdint.h>

#include <raft.h>
#include <uv.h>

#include "../config/config.h"
#include "../disk/diskfull.h"
#include "commitage.h"

/* How often raft_uv retries a failed write (libraft's default is 5 s): a
 * node whose disk was full writes again within about this long of space
 * coming back, and a failure is seen this long after it happened (raft
 * says nothing of a first failure, only of each retry). A retry is one
 * posix_fallocate() or file creation that fails at once while the disk
 * stays full. */
#define STALLWATCH_RETRY_MS 1000

/* An episode ends when no write has failed for this long, unless raft
 * said before then that its write worked. */
#define STALLWATCH_QUIET_MS (3 * STALLWATCH_RETRY_MS)

/* The size of raft's log segments, set on raft_uv so that the room a new
 * one needs is known: libraft's default, 8 MiB. */
#define STALLWATCH_SEGMENT_BYTES (8u * 1024 * 1024)

/* Below this much room prepared for its log (raft_io's `capacity`, in
 * KiB), raft has no segment ready ahead of the one it writes: half a
 * segment, the limit below which libraft 0.22.1's leader would count a
 * voter as full (node.c turns that refusal off). */
#define STALLWATCH_CAPACITY_KIB 4096

/* How often the data directory's free space is sampled (off the loop). */
#define STALLWATCH_SAMPLE_MS 1000

struct snapkeep;
struct stallwatch_job;

/* Caller-allocated, inside the node; used only on the loop's thread,
 * except the tracer, which raft_uv may call from its worker threads (it
 * only reads there). */
struct stallwatch {
        uv_loop_t *loop;
        const char *dir;             /* borrowed: the data directory */
        uint32_t commit_bound_ms;    /* election-timeout-ms */
        const struct snapkeep *keep; /* borrowed: a snapshot's size */
        const struct raft_io *io;    /* borrowed: its `capacity` */
        struct raft_tracer tracer;   /* installed on raft_uv */
        uv_thread_t loop_thread;
        bool trace_stderr; /* LIBRAFT_TRACE is set: print every line */
        struct diskfull disk;
        /* Once an episode is said: its cause, ENOSPC, EROFS, or EIO
         * when the room does not tell; 0 before. */
        int cause;
        bool announce;               /* an episode began and is not said yet */
        struct diskfull_space space; /* the last sample */
        uint64_t next_sample_ms;
        struct stallwatch_job *job; /* a sample in flight, or NULL */
        struct commitage commits;
        bool commit_stalled;        /* said in the log */
        uint64_t commit_stalled_ms; /* since about when */
        bool closed;
};

/*
 * Watch the node of `cfg` (borrowed for the node's life: its data
 * directory and election timeout) on `loop`, with `keep` (borrowed, may be
 * NULL) for the size of a snapshot: installs a tracer on `io` (set up by
 * raft_uv_init(), not yet closed; the tracer must stay in place until it
 * is) and sets raft_uv's retry period and segment size.
 */
void stallwatch_init(struct stallwatch *w, uv_loop_t *loop,
                     const struct config *cfg, const struct snapkeep *keep,
                     struct raft_io *io);

/* Every turn of the loop: whether this node leads, and raft's commit and
 * last index. Ends episodes, samples the free space, says what changed. */
void stallwatch_tick(struct stallwatch *w, bool leader, uint64_t commit,
                     uint64_t last);

/* Stop: nothing is said or sampled from now on (a sample in flight is
 * dropped when it returns). The tracer stays harmless until raft_uv is
 * closed. */
void stallwatch_close(struct stallwatch *w);

/* While an episode is under way and said: its cause (ENOSPC, EROFS, EIO);
 * else 0. */
int stallwatch_disk_errno(const struct stallwatch *w);

/* How long that episode has lasted, in milliseconds (0: none). */
uint64_t stallwatch_disk_failing_ms(const struct stallwatch *w);

/* On a leader, how long its oldest uncommitted entry has waited (0: none,
 * or not a leader). */
uint64_t stallwatch_uncommitted_ms(const struct stallwatch *w);

#endif /* SERVER_STALLWATCH_H */
