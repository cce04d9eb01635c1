/* chaos-worker's command line (worker.c): the workloads, the options and
 * what each workload needs of them. */
#ifndef CHAOS_WORKERARGS_H
#define CHAOS_WORKERARGS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* --workload */
enum workload {
        WL_COUNTER,
        WL_MUTEX,
        WL_FIFO,
        WL_SESSION,
        WL_RWLOCK,
        WL_SEMAPHORE,
        WL_TRANSFERS,
        WL_ELECTION,
        WL_HOLD,
};

/* What the options say. */
struct config {
        int id;
        const char *endpoints;
        const char *history;
        enum workload workload;
        uint32_t keys;
        uint32_t ttl_ms;
        uint64_t seed;
        const char *register_path;
        const char *final_file;
        uint64_t epoch_ms;
        uint64_t epoch_base_ns;
        uint32_t request_timeout_ms;
        bool bug_writer_shared; /* the rwlock negative control */
        bool bug_one_lock;      /* the transfers negative control */
};

/* The workload's name, as --workload takes it. */
const char *workload_name(enum workload wl);

/* Parse argv into `c` (whose defaults the caller set): 0, or -1 after a
 * message on stderr. --help prints the usage and exits 0. */
int workerargs_parse(int argc, char **argv, struct config *c);

/* The usage text, to `f`. */
void workerargs_usage(FILE *f);

#endif /* CHAOS_WORKERARGS_H */
