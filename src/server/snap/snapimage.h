/* Snapshot images: the state machine's bytes at one applied index, made in
 * a forked child so that the event loop never encodes the whole state. */
#ifndef SERVER_SNAPIMAGE_H
#define SERVER_SNAPIMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * Writes the image's bytes (allocated with raft_malloc) into *buf / *len:
 * 0 or a BATON_E* code. In SNAPIMAGE_FORK mode it runs in the child, on a
 * copy-on-write view of the parent's memory frozen at the fork, so it may
 * read the state but its changes reach no one.
 */
typedef int (*snapimage_encode_fn)(void *data, void **buf, size_t *len);

enum snapimage_mode {
        /* The child encodes; the loop pays for fork() (page tables, a few
         * ms per GiB) and later copy-on-write faults. batond's mode. */
        SNAPIMAGE_FORK,
        /* The encoder runs at once in the caller: deterministic, for the
         * simulation and the unit tests. */
        SNAPIMAGE_INLINE,
};

/* The child's niceness (FORK mode): it yields the cores to the event
 * loops. With a million locks held, three nodes on two cores, 16 clients
 * ran at 1.09-1.15x the rate they had with the child at the loops'
 * priority (three sittings; docs/history/scale.md, "The image child behind
 * the loops"). */
#define SNAPIMAGE_NICE 10

enum snapimage_state {
        SNAPIMAGE_NONE,   /* nothing made or being made */
        SNAPIMAGE_MAKING, /* the child runs */
        SNAPIMAGE_READY,  /* bytes at `index` can be taken */
};

/* Bytes handed over by snapimage_take(): mapped from the file the child
 * wrote or from raft_malloc; give them back with snapimage_bytes_free(). */
struct snapimage_bytes {
        void *base;
        size_t len;
        bool mapped;
        bool on_disk; /* mapped from a file on disk, not from memory */
};

struct snapimage {
        enum snapimage_mode mode;
        enum snapimage_state state;
        uint64_t index; /* the applied index the image is of */
        pid_t pid;      /* MAKING: the child */
        int fd;         /* MAKING: the file the child writes */
        bool on_disk;   /* MAKING: that file is on disk, not a memfd */
        struct snapimage_bytes bytes; /* READY */
        uint64_t n_made;              /* images made */
        uint64_t n_failed;    /* children that failed (errmsg says why) */
        uint64_t n_cancelled; /* children killed before they finished */
        uint64_t n_inline;    /* fork() failed: encoded in the caller */
        /* What the loop paid for fork() (FORK mode), and how long the
         * last child ran, in microseconds: the costs that grow with the
         * state (docs/performance.md, "At scale"). */
        uint64_t fork_us_last;
        uint64_t fork_us_max;
        uint64_t started_us; /* MAKING: when the child was started */
        uint64_t make_us_last;
        /* FORK mode: the directory the child writes its image in (an
         * unnamed file, gone once unmapped), or -1 for a memfd. */
        int dir_fd;
        char errmsg[128];
};

void snapimage_init(struct snapimage *s, enum snapimage_mode mode);
/* Close the directory of snapimage_set_dir(), after snapimage_cancel(). */
void snapimage_close(struct snapimage *s);

/*
 * Make images in files of directory `dir` (the node's data directory)
 * rather than in memory. An image of a million locks is 15 MB; kept in a
 * memfd it is resident for as long as it is kept, while a file's pages
 * are the page cache's, written back to disk and dropped under memory
 * pressure (snapimage_bytes_evict()). Where the directory's file system
 * has no unnamed files (O_TMPFILE), images fall back to a memfd. 0, or
 * BATON_EIO with errmsg set (images stay in memory).
 */
int snapimage_set_dir(struct snapimage *s, const char *dir);

/* Start an image of the state at `index` (state must be NONE). In FORK
 * mode a fork() that fails falls back to encoding in the caller (counted
 * in n_inline). 0, or a BATON_E* code with errmsg set (state NONE). */
int snapimage_start(struct snapimage *s, uint64_t index, snapimage_encode_fn fn,
                    void *data);

/* Whether the image is READY now; a child that finished is reaped and its
 * bytes mapped. A child that failed leaves state NONE (n_failed, errmsg).
 * Never blocks. */
enum snapimage_state snapimage_poll(struct snapimage *s);

/* Take the READY image's bytes; the state becomes NONE. */
struct snapimage_bytes snapimage_take(struct snapimage *s);
void snapimage_bytes_free(struct snapimage_bytes *b);

/* Write `len` bytes (more than 0) from `p` into a new unnamed file of
 * directory `dir_fd` and map it into `out` (on_disk), for bytes that need
 * not stay resident (snapspill.h). Touches nothing but its arguments, so
 * it may run on any thread. 0, or an errno value with nothing made. */
int snapimage_bytes_write(int dir_fd, const void *p, size_t len,
                          struct snapimage_bytes *out);

/* Let the process's resident memory go of on-disk bytes once read (raft
 * wrote them): their pages stay in the file and are read back from the
 * page cache, or the disk, when next touched. Does nothing to bytes in
 * memory, which a page dropped from the mapping would not free. */
void snapimage_bytes_evict(const struct snapimage_bytes *b);

/* Drop whatever is made or being made (the state changed under it, or
 * the node stops): a child is killed and reaped. State NONE. */
void snapimage_cancel(struct snapimage *s);

#endif /* SERVER_SNAPIMAGE_H */
