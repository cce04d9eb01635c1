/* Session storms: many sessions held on one pipelined connection to the
 * leader, beside the usual clients, to measure what the leader does when
 * they all expire at once (the expiry storm) or keep alive together (the
 * keepalive load). etcd's leases show why it matters: a few hundred
 * expiries a second once stalled a five-node etcd cluster (etcd #9360). */
#ifndef BENCH_STORM_H
#define BENCH_STORM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "label.h"

struct storm_config {
        const char *endpoints; /* the cluster, as libbaton takes them */
        long sessions;
        long ttl_ms;    /* of every session */
        long window;    /* frames sent and not yet answered */
        bool keepalive; /* true: the keepalive load; false: the expiry storm */
};

/*
 * What happened. Times are wire_now()'s seconds. The expiry storm: every
 * session is kept alive once, all together (the burst, from `burst_at` to
 * `burst_end`), and never again, so that all of them expire within the
 * burst's length of each other; the leader is then asked every 20 ms how
 * many sessions it holds: `first_gone` is when that count first fell,
 * `all_gone` when every storm session was gone (0 when not within 30 s of
 * the last lease running out). The keepalive load: each session kept alive
 * every ttl/3, evenly spread, from the start to storm_finish(); then every
 * session is CLOSEd. Each KEEPALIVE and CLOSE follows an ATTACH of its
 * session (storm.c says why), so the node answers two requests where a
 * client on a connection of its own would send one: the load measured is
 * an upper bound of the real one.
 */
struct storm_result {
        uint64_t opened;
        double open_s;
        uint64_t keepalives; /* answered KEEPALIVE_OK */
        uint64_t attached;   /* ATTACHes answered OPENED */
        uint64_t closed;     /* answered CLOSED */
        uint64_t errors;     /* any other answer */
        int first_error;     /* a BATON_E* code */
        double burst_at, burst_end;
        double first_gone, all_gone;
        double ka_start, ka_end;  /* the keepalive load's span */
        uint64_t sessions_before; /* the leader's count before the burst */
        struct bench_leadership lead;
        uint64_t polls_failed; /* status questions without an answer */
        bool broken;
        char why[256];
};

struct storm;

/* Open the sessions, all attached to one connection to the leader (TLS as
 * libbaton sets it up from the environment). 0, or -1 with `why` in
 * `out` (the storm then is NULL). */
int storm_open(struct storm **s, const struct storm_config *cfg,
               struct storm_result *out);

/* Start the storm on a thread of its own: the expiry storm's burst at
 * `at` (wire_now()'s seconds; the keepalive load starts at once). 0 or -1
 * (no thread). */
int storm_start(struct storm *s, double at);

/* The keepalive load: stop keeping alive and CLOSE every session. The
 * expiry storm: wait until every session is gone (or 30 s past the last
 * lease). Then the results into `out`, and the storm is freed. */
void storm_finish(struct storm *s, struct storm_result *out);

/*
 * The storm's fields of the run's JSON line, each preceded by a comma,
 * onto `f`. The clients' samples: latencies `lat` paired with completion
 * times `done` (µs after `t_measure`, wire_now()'s seconds), `n` of them,
 * unsorted; the expiry storm's fields split them into the quiet before
 * the burst, the burst, and the storm (from the first lease running out
 * to the last session gone, or the window's end).
 */
void storm_print(FILE *f, const struct storm_config *cfg,
                 const struct storm_result *r, const uint32_t *lat,
                 const uint32_t *done, size_t n, double t_measure);

#endif /* BENCH_STORM_H */
