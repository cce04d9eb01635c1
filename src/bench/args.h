/* baton-bench's command line: its flags and workloads as one struct
 * config (baton-bench(1) documents each). */
#ifndef BENCH_ARGS_H
#define BENCH_ARGS_H

#include <stdio.h>

struct config {
        const char *system;
        const char *variant;
        int nodes;
        const char *workload;
        int contended;
        int shared;   /* contended, client 0 writes and the others read */
        long permits; /* semaphore: contended, on a semaphore of that many */
        long names;   /* multi: names per multi-lock, from a ring of one
                         name per client (0: not the multi workload) */
        int clients;
        double duration_s;
        double warmup_s;
        const char *endpoints;
        const char *endpoints_from; /* --endpoints, BATON_ENDPOINTS, ... */
        const char *prefix;
        long ttl_ms;
        long op_timeout_ms;
        long hold_us;
        long retry_us; /* accepted; the Baton acquire blocks, never polls */
        long error_backoff_ms;
        long sessions; /* fill */
        long locks_per_session;
        long window;
        long connections; /* connections */
        double hold_s;
        int election;        /* election: the contended lock is an election */
        long watchers;       /* contended workloads: watches of the lock, */
        long watch_conns;    /* spread over this many connections, */
        int watch_callbacks; /* read by callbacks, not baton_watch_next */
        const char *watch_endpoints; /* theirs (NULL: the clients') */
        /* --http: the clients lock over the HTTP API at these endpoints
         * (uncontended and contended only); NULL: through libbaton. */
        const char *http;
        double rate;     /* acquisitions a second, all clients (0: no limit) */
        int storm;       /* expiry-storm or keepalives: --sessions beside */
        int keepalives;  /* the clients; keepalives: kept alive, else they */
        double storm_at; /* expire together, this far into the window */
        int reconnect;   /* reconnects: connections dialled again */
};

/* The usage text onto `f`. */
void usage(FILE *f);

/* Fill `cfg` (its defaults already set) from the command line: 0, or -1
 * after saying on stderr what is wrong (the caller prints the usage). */
int parse_args(int argc, char **argv, struct config *cfg);

#endif /* BENCH_ARGS_H */
