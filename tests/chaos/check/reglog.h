/* The fenced register's log of a chaos run (docs/chaos.md, "Fenced
 * register"): one line per request, written before it was answered. */
#ifndef CHAOS_CHECK_REGLOG_H
#define CHAOS_CHECK_REGLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"

/* What a request asked (op=). */
enum reglog_op {
        REGLOG_READ = 0,
        REGLOG_WRITE,
        REGLOG_ENTER, /* the rwlock workload: a holder says it is inside */
        REGLOG_LEAVE, /* ... and that it left */
        REGLOG_INIT,  /* --init: a key's starting value (w=-1, token 0),
                         logged before any request: the transfers
                         workload's accounts and their balances */
};

/* One request:
 * t= w= op=<read|write|enter|leave|init> key= token= result=<ok|stale> max=
 * value= version= based= [mode=<r|w|s> wmax=] [session= ended=] (max: the
 * key's highest token before it; wmax: the highest token of a writer's
 * request before it; version: after it; session: a semaphore holder's
 * grant's; ended: the index where the apply logs said that grant ended,
 * 0 if they did not). A line without mode= is a writer's (the counter's),
 * one without wmax= has wmax = max. */
struct reglog_line {
        int64_t t;
        int worker;
        int op;      /* enum reglog_op */
        bool write;  /* op == REGLOG_WRITE */
        bool reader; /* mode=r: a reader's request */
        bool sem;    /* mode=s: a semaphore holder's request */
        bool ok;     /* result=ok: accepted */
        int key;     /* id in the run's names */
        uint64_t token;
        uint64_t max;
        uint64_t wmax;
        uint64_t value;
        uint64_t version;
        uint64_t based;
        uint64_t session; /* sem */
        uint64_t ended;   /* sem */
        unsigned line;    /* line number, from 1 */
};

/* The lines in file order, which is the order the register served them (it
 * is one thread and logs before it answers). */
struct reglog {
        struct reglog_line *lines;
        size_t n, cap;
        struct util_log log; /* whether there was a file, what was skipped */
};

/* Load the register log at `path`, interning keys into `keys`. A missing
 * file is an empty log. 0, or -1 with a message in `errmsg`. */
int reglog_load(struct reglog *r, const char *path, struct util_strtab *keys,
                char *errmsg, size_t cap);

/* Free what reglog_load() allocated (accepts a zeroed struct). */
void reglog_free(struct reglog *r);

/* The token that fenced `l`: wmax for a reader's request, max for a
 * writer's. A request is refused exactly when its token is below it (but
 * a semaphore holder's, which the apply logs fence: `ended`). */
uint64_t reglog_bound(const struct reglog_line *l);

/* "read", "write", "enter", "leave", "init". */
const char *reglog_op_name(int op);

#endif /* CHAOS_CHECK_REGLOG_H */
