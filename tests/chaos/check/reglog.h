/* The fenced register's log of a chaos run (docs/chaos.md, "Fenced
 * register"): one line per request, written before it was answered. */
#ifndef CHAOS_CHECK_REGLOG_H
#define CHAOS_CHECK_REGLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"

/* One request:
 * t= w= op=<read|write> key= token= result=<ok|stale> max= value= version=
 * based= (max: the key's highest token before it; version: after it). */
struct reglog_line {
        int64_t t;
        int worker;
        bool write;
        bool ok; /* result=ok: accepted */
        int key; /* id in the run's names */
        uint64_t token;
        uint64_t max;
        uint64_t value;
        uint64_t version;
        uint64_t based;
        unsigned line; /* line number, from 1 */
};

/* The lines in file order, which is the order the register served them (it
 * is one thread and logs before it answers). */
struct reglog {
        bool present; /* the file exists */
        struct reglog_line *lines;
        size_t n, cap;
        size_t n_bad;  /* malformed lines skipped */
        size_t n_torn; /* unterminated last line skipped */
};

/* Load the register log at `path`, interning keys into `keys`. A missing
 * file is an empty log. 0, or -1 with a message in `errmsg`. */
int reglog_load(struct reglog *r, const char *path, struct util_strtab *keys,
                char *errmsg, size_t cap);

/* Free what reglog_load() allocated (accepts a zeroed struct). */
void reglog_free(struct reglog *r);

#endif /* CHAOS_CHECK_REGLOG_H */
