/* A node's data directory held by one process and checked to be this
 * node's at every start: its lock and its identity file. */
#ifndef SERVER_DATADIR_H
#define SERVER_DATADIR_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "dirid.h"

/*
 * The lock. `batond.lock` in the directory, locked with flock(LOCK_EX |
 * LOCK_NB) for the whole life of batond (and of --restore and --recover),
 * holds the holder's pid as text (padded to 20 bytes, written in place,
 * so that restarting on a full disk needs no new block), so that a refusal
 * can name it. flock
 * rather than a POSIX record lock: closing some other descriptor of the
 * file, in the process or in a child, does not drop it. The descriptor is
 * close-on-exec; the snapshot image's fork()ed child (snapimage.c) closes
 * it first thing and dies with its parent, and a duplicate closed by a
 * child never releases the lock anyway. The lock goes when the process
 * ends, however it ends; the file stays, with the last holder's pid.
 * A second process on the directory finds it locked and is refused at
 * once, before writing anything.
 *
 * The identity. `batond.identity` (dirid.h) records the cluster's id,
 * the node's id and the directory's incarnation. It is written when the
 * directory is first used, before raft writes anything, and replaced as a
 * whole (a temporary file, fsync, rename, fsync of the directory). A
 * directory whose node id differs from the configured one is refused; so
 * is one whose identity file does not read. A directory that already has
 * raft's files but no identity (made by a batond before 0.2) is adopted:
 * its node id is taken as given and its cluster id as unknown, learned
 * from the first peer that knows it (peercheck.h).
 *
 * Starting takes two steps so that a busy port is found before anything is
 * written (main.c): datadir_check() writes nothing (it takes the lock only
 * if the lock file exists), datadir_claim() creates what is missing.
 */

#define DATADIR_LOCK     "batond.lock"
#define DATADIR_IDENTITY "batond.identity"

enum datadir_state {
        DATADIR_MISSING, /* no directory yet */
        DATADIR_EMPTY,   /* nothing in it but the lock file */
        DATADIR_KNOWN,   /* an identity file that reads */
        DATADIR_LEGACY,  /* raft's files (or others), no identity */
};

/* Caller-allocated; every field is read-only outside datadir.c except
 * `id`, which peercheck.c updates before datadir_save(). */
struct datadir {
        char path[PATH_MAX];
        int lock_fd; /* -1 until the lock is held */
        enum datadir_state state;
        bool made;    /* its identity was written by this process's claim */
        bool adopted; /* ... for raft files an older batond left */
        struct dirid id;
        char errmsg[PATH_MAX + 512];
};

/*
 * Look at `path` for node `node`, writing nothing: take the lock if the
 * lock file exists, read the identity if there is one and check its node
 * id. 0 with d->state set, or BATON_EINVAL (in use by another process, or
 * another node's, or an identity that does not read) / BATON_EIO, with one
 * line naming the directory and the reason in d->errmsg. Either way,
 * datadir_close() releases what it took.
 */
int datadir_check(struct datadir *d, const char *path, uint64_t node);

/*
 * After datadir_check(): create the directory and the lock file if
 * missing, hold the lock, look again under it, write this process's pid
 * into the lock file and, when `write_identity` and the directory has no
 * identity, write one: `cluster` (0: unknown) for an empty directory,
 * unknown for an adopted one, this node's id, a new random incarnation.
 * 0, or an error as datadir_check()'s.
 */
int datadir_claim(struct datadir *d, uint64_t node, uint64_t cluster,
                  bool write_identity);

/* Write d->id as the identity file, replacing it atomically. 0, or
 * BATON_EIO with d->errmsg. */
int datadir_save(struct datadir *d);

/* A new random incarnation (or cluster id): never 0. */
uint64_t datadir_random(void);

/* Release the lock (closing its descriptor); accepts one never checked. */
void datadir_close(struct datadir *d);

#endif /* SERVER_DATADIR_H */
