/* Making raft's files durable as they read now, before raft loads them. */
#ifndef SERVER_DISKSETTLE_H
#define SERVER_DISKSETTLE_H

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * Why: after a failed sync a file can go on reading bytes the disk never
 * stored (Linux marks such pages clean and keeps them; so do FUSE layers
 * and device caches, and forgetfs in the chaos tests). batond exits on a
 * failed sync (stallwatch.c), and at the next start libraft 0.22.1 loads
 * what reads return: it closes each open segment to count the batches it
 * read (uvSegmentLoadOpen: truncate, fsync, rename, none of which writes
 * the bytes again) and acts on the term and vote it read from metadata1
 * and metadata2. The node then acknowledges entries, or keeps a vote, that
 * a power cut, an eviction or that very truncate takes back: the
 * fsync-eio chaos nemesis left every node of a cluster refusing a closed
 * segment that counted an entry its disk never held.
 *
 * Writing those bytes again and syncing them makes what raft reads
 * durable. They are this node's own writes, and Raft lets a node persist
 * an entry or a vote it never acknowledged. Closed segments and snapshots
 * are not touched: libraft makes them only from writes that synced.
 */

/* The calls that write and sync, so that a test can count them and fail
 * them. NULL in disksettle_run means libc's. */
struct disksettle_io {
        ssize_t (*pwrite)(void *ctx, int fd, const void *p, size_t n,
                          off_t off);
        int (*fdatasync)(void *ctx, int fd); /* a file's */
        int (*fsync)(void *ctx, int fd);     /* the directory's */
        void *ctx;                           /* borrowed; passed to each */
};

struct disksettle {
        unsigned n_files; /* files written back */
        uint64_t n_bytes; /* bytes written back */
        /* The failure: "PATH: fdatasync: Input/output error" ("" when none). */
        char errmsg[PATH_MAX + 256];
};

/*
 * In directory `dir`, write back over themselves the bytes each open
 * segment (open-N) reads as, up to its last non-zero byte, and the whole
 * of metadata1 and metadata2 (those absent are skipped), fdatasync each,
 * then fsync `dir`. Writes no byte that differs from what it read, and
 * changes no size or name. `io` is borrowed for the call (NULL: libc).
 * 0; BATON_EIO with the file, the call and errno's text in s->errmsg;
 * BATON_ENOMEM. Blocking: call before raft starts, after diskscan_check
 * passed (a refused directory stays untouched).
 */
int disksettle_run(struct disksettle *s, const char *dir,
                   const struct disksettle_io *io);

#endif /* SERVER_DISKSETTLE_H */
