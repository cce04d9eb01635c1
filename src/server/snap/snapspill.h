/* A kept tail segment written out of the heap into a file of the data
 * directory, on a worker thread, so that the tail of a large state does not
 * stay resident between snapshots. */
#ifndef SERVER_SNAPSPILL_H
#define SERVER_SNAPSPILL_H

#include <stdbool.h>
#include <stddef.h>

#include "bgjob.h"
#include "snapimage.h"

/*
 * The tail that snapkeep.h hands over with its image grows to the image's
 * size (15 MB at a million locks) before a new image starts it again. Its
 * segments are frozen at each snapshot and never change after, so like the
 * image they can live in a file whose pages the page cache keeps: raft's
 * next snapshot write reads them back from there, and snapkeep_release()
 * lets them go again.
 *
 * The write runs on a thread of its own (bgjob.h): a write from the loop
 * can wait behind the disk (dirty-page throttling) for as long as the disk
 * is slow.
 * One segment at a time; snapsource.c takes the result on the loop
 * (snapkeep_spill_done()). Everything here but the worker runs on the loop.
 */
struct snapspill {
        struct bgjob job;
        /* The job: the directory (borrowed), bytes the loop leaves alone
         * until joined, the caller's tag for them, and the result. */
        int dir_fd;
        const void *src;
        size_t len;
        void *tag;
        struct snapimage_bytes out; /* the file's bytes, when it worked */
        int last_err; /* the errno value of the last failure, for logs */
        uint64_t n_spilled, n_failed;
};

void snapspill_init(struct snapspill *sp);

/* Start writing `len` bytes from `p` (they must not change until joined)
 * into a file of directory `dir_fd` (open until joined); no job may be
 * running. 0, or BATON_ENOMEM when no thread can be started. */
int snapspill_start(struct snapspill *sp, int dir_fd, const void *p, size_t len,
                    void *tag);

/* Whether a job was started and not joined yet. */
bool snapspill_running(const struct snapspill *sp);

/* Whether the running job has returned, so that joining will not wait. */
bool snapspill_finished(const struct snapspill *sp);

/* Wait for the running job: its bytes, mapped from the file, in *out (all
 * zero when it failed), and its tag. 0 or the errno value of the failure
 * (counted in n_failed). */
int snapspill_join(struct snapspill *sp, struct snapimage_bytes *out,
                   void **tag);

#endif /* SERVER_SNAPSPILL_H */
