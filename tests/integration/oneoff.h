/* batond processes the integration tests start outside a harness cluster
 * (a second process on a node's data directory, a node on a copied one,
 * --recover on a held one), waited for with a bound; and what a data
 * directory holds, to compare before and after. */
#ifndef TESTS_INTEGRATION_ONEOFF_H
#define TESTS_INTEGRATION_ONEOFF_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "harness.h"

#define ONEOFF_MAX_ARGS 64

/* One process: its command line (copied), log, and how it ended. */
struct oneoff {
        pid_t pid;  /* 0: not running */
        int status; /* exit code, or 128 + the signal that ended it */
        int64_t started_ms, ended_ms;
        unsigned argc;
        char *argv[ONEOFF_MAX_ARGS + 1];
        char store[ONEOFF_MAX_ARGS][256];
        char log[PATH_MAX];
};

/* Start building the command line of `batond` (a path). */
void oneoff_init(struct oneoff *o, const char *batond, const char *log);

/* Append arguments, NULL-terminated. */
void oneoff_args(struct oneoff *o, ...) __attribute__((sentinel));

/* The command line node `id` of `h` starts with (as harness.c's spawn),
 * on `data_dir` instead of its own. */
void oneoff_node_args(struct oneoff *o, const struct harness *h, unsigned id,
                      const char *data_dir);

/* fork and exec, stdout and stderr to the log; the process dies with the
 * test. 0 or -1. */
int oneoff_start(struct oneoff *o);

/* Wait up to `ms` for it to exit: true with o->status and o->ended_ms. */
bool oneoff_wait(struct oneoff *o, int ms);

/* SIGTERM (then SIGKILL after 3 s) and reap, when still running. */
void oneoff_stop(struct oneoff *o);

/* Whether its log has `needle`. */
bool oneoff_log_has(const struct oneoff *o, const char *needle);

/* Its log's last line with `needle` in it, or its last line, into `buf`. */
void oneoff_log_line(const struct oneoff *o, const char *needle, char *buf,
                     size_t cap);

/*
 * What `dir` holds: each entry's name and size, by name, and the text of
 * its batond.lock; "(missing)" when there is no such directory.
 */
void oneoff_listing(const char *dir, char *out, size_t cap);

/* A TCP port on 127.0.0.1 that nothing listens on now, or 0. */
int oneoff_free_port(void);

/* A socket listening on 127.0.0.1:`*port` (a free one when 0), or -1. */
int oneoff_listen(int *port);

#endif /* TESTS_INTEGRATION_ONEOFF_H */
