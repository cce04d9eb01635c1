/* Whether raft can write its data directory, episode by episode: what
 * raft_uv's tracer says of its failed writes, made into one start and one
 * end per episode, and the reason a file system's free space gives. No I/O
 * and no clock: the caller passes the time and the lines. */
#ifndef SERVER_DISKFULL_H
#define SERVER_DISKFULL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * libraft 0.22.1 neither fails nor reports a write that fails on a full
 * disk (docs/raft.md): raft_uv retries it on a timer, every `disk_retry`
 * milliseconds, and says so only to its tracer, at trace level, once per
 * retry. Those lines are the only sign of the failure:
 *
 *   "retry creating segment open-4"   an open segment could not be created
 *                                     (posix_fallocate of a whole segment);
 *                                     every append waits for it
 *   "completed creation of open-4"    ... and now it could
 *   "retry failed write (ERRMSG)"     entries could not be written into one
 *   "retry snapshot write"            a snapshot's files could not be created
 *
 * Each retry line reports one failed attempt, the one before it; a write
 * that works again is followed by no more of its kind (a segment that
 * works says so).
 */
enum diskfull_kind {
        DISKFULL_SEGMENT,  /* creating an open segment */
        DISKFULL_ENTRIES,  /* writing entries into a segment */
        DISKFULL_SNAPSHOT, /* creating a snapshot's files */
        DISKFULL_N_KINDS,
        /* No write failed, but raft has no room left for its log and the
         * file system has none to give (diskfull_room()): an episode may
         * begin with it, and no error is counted. */
        DISKFULL_ROOM = DISKFULL_N_KINDS,
};

/* What one trace line says. */
enum diskfull_line {
        DISKFULL_LINE_OTHER,  /* nothing about a failed write */
        DISKFULL_LINE_FAILED, /* an attempt of `kind` failed */
        DISKFULL_LINE_WORKED, /* an attempt of `kind` worked */
};

/* The longest `what` kept: a segment's file name, or raft's message. */
#define DISKFULL_WHAT_MAX 96

/* Classify one of raft_uv's trace messages; for FAILED and WORKED, `*kind`
 * and `what` (NUL-terminated, cut to `cap`): the segment's file name, the
 * message raft gave a failed write, or "". */
enum diskfull_line diskfull_classify(const char *message,
                                     enum diskfull_kind *kind, char *what,
                                     size_t cap);

/* The kind's name in metrics ("segment", "entries", "snapshot", "room"). */
const char *diskfull_kind_name(enum diskfull_kind k);

/* What changed with an event. */
enum diskfull_change {
        DISKFULL_SAME,
        DISKFULL_BEGAN, /* the first failure of an episode */
        DISKFULL_ENDED, /* no kind fails any more */
};

/*
 * Episodes. One begins at a failure, or when raft lacks room, while none
 * is under way; a kind stops failing when an attempt of it works, or when
 * none of it has failed for `quiet_ms` (raft retries every failed write at
 * a fixed period, so silence for longer than that means its retry
 * worked); the episode ends when no kind fails and raft has room. Times
 * are milliseconds of any one clock.
 */
struct diskfull {
        uint64_t quiet_ms;
        bool on; /* an episode is under way */
        bool no_room;
        uint64_t since_ms;
        uint64_t ended_ms; /* of the last episode */
        bool failing[DISKFULL_N_KINDS];
        uint64_t last_failed_ms[DISKFULL_N_KINDS];
        uint64_t errors[DISKFULL_N_KINDS]; /* failed attempts, ever */
        uint64_t episode_errors;           /* in this (or the last) one */
        uint64_t episodes;
        enum diskfull_kind first_kind; /* of this (or the last) episode */
        char first_what[DISKFULL_WHAT_MAX];
};

void diskfull_init(struct diskfull *d, uint64_t quiet_ms);

/* An attempt of `kind` failed at `now` (`what` copied, as classified). */
enum diskfull_change diskfull_failed(struct diskfull *d, enum diskfull_kind k,
                                     const char *what, uint64_t now);

/* An attempt of `kind` worked at `now`. */
enum diskfull_change diskfull_worked(struct diskfull *d, enum diskfull_kind k,
                                     uint64_t now);

/*
 * Whether raft lacks room for its log at `now`: libraft 0.22.1 counts the
 * room it has prepared (open segments created ahead, the rest of the one
 * being written: raft_io's `capacity`). A node that has none, on a file
 * system that cannot give it a new segment, cannot store the next entries
 * it is sent, though it may not have been sent any yet: one started on a
 * full disk (raft creates its first segments at start, once, and again
 * only when an append needs one).
 */
enum diskfull_change diskfull_room(struct diskfull *d, bool lacking,
                                   uint64_t now);

/* Time passed: kinds silent for quiet_ms stop failing. */
enum diskfull_change diskfull_tick(struct diskfull *d, uint64_t now);

/* Failed attempts over every kind, ever. */
uint64_t diskfull_errors(const struct diskfull *d);

/* A file system's room, as statvfs(3) gives it. */
struct diskfull_space {
        bool known; /* a sample was taken */
        bool read_only;
        uint64_t free_bytes; /* available to an unprivileged process */
        uint64_t size_bytes;
        uint64_t free_inodes; /* UINT64_MAX: not counted (btrfs) */
};

/*
 * Why a write of `need` bytes fails on a file system with room `s`, as far
 * as the room tells: EROFS (mounted read-only), ENOSPC (fewer than `need`
 * bytes free, or no inode), or 0 (the room is not the reason, or is not
 * known).
 */
int diskfull_cause(const struct diskfull_space *s, uint64_t need);

#endif /* SERVER_DISKFULL_H */
