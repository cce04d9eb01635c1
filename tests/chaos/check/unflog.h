/* The unfenced register's log of a chaos run (docs/chaos.md, "Unfenced
 * register"): one line per write of the supervise workload's commands. */
#ifndef CHAOS_CHECK_UNFLOG_H
#define CHAOS_CHECK_UNFLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"

/* One write:
 * t= w= p= key= token= pid= n= [phase=term]
 * (t: CLOCK_MONOTONIC ns, taken just before the write; key: the lock the
 * command's batonctl held; token: its grant's, from $BATON_TOKEN; n: the
 * command's count of its writes; phase=term: written after SIGTERM, while
 * the command lingers). */
struct unflog_line {
        int64_t t;
        int worker;
        uint64_t process;
        int key; /* id in the run's names */
        uint64_t token;
        long pid;
        uint64_t n;
        bool term;
        unsigned line; /* line number, from 1 */
};

/* The lines in file order, which is the order of the writes: every
 * command appends each line with one write(2) to a file opened with
 * O_APPEND. */
struct unflog {
        struct unflog_line *lines;
        size_t n, cap;
        struct util_log log; /* whether there was a file, what was skipped */
};

/* Load the log at `path`, interning keys into `keys`. A missing file is an
 * empty log. 0, or -1 with a message in `errmsg`. */
int unflog_load(struct unflog *u, const char *path, struct util_strtab *keys,
                char *errmsg, size_t cap);

/* Free what unflog_load() allocated (accepts a zeroed struct). */
void unflog_free(struct unflog *u);

#endif /* CHAOS_CHECK_UNFLOG_H */
