/* The fill workload: many sessions holding many locks, opened at full speed
 * through one pipelined connection to the leader, to measure how Baton's
 * costs grow with the state it holds. */
#ifndef BENCH_FILL_H
#define BENCH_FILL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "label.h"

struct fill_config {
        const char *endpoints; /* the cluster, as libbaton takes them */
        const char *prefix;    /* lock names: PREFIX/SESSION/LOCK */
        long sessions;
        long locks_per_session; /* 0..1024, max-locks-per-session's default */
        long ttl_ms;            /* of every session */
        long window;            /* frames sent and not yet answered */
};

/*
 * What happened. Every request gets exactly one answer or the run stops:
 * `errors` counts answers other than OPENED / GRANTED (NOT_LEADER among
 * them, also counted in `not_leader`), `first_error` is the first one's
 * code (0 if none). A connection lost, or no answer for 30 s, ends the run
 * early with `broken` set and `why` saying what happened.
 */
struct fill_result {
        uint64_t sessions; /* opened */
        uint64_t locks;    /* granted */
        uint64_t errors;
        uint64_t not_leader;
        int first_error;
        double open_s; /* the sessions' phase, seconds */
        double lock_s; /* the locks' phase */
        struct bench_leadership lead;
        char leader_endpoint[65];
        bool broken;
        char why[256];
};

/* Run the fill. 0, or -1 when it could not start (no leader, no TLS
 * files, no connection: `why` says). */
int fill_run(const struct fill_config *cfg, struct fill_result *out);

/* The fill's JSON line onto `f`. */
void fill_print(FILE *f, const struct bench_label *l,
                const struct fill_config *cfg, const struct fill_result *r);

#endif /* BENCH_FILL_H */
