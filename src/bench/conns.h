/* The connections workload: many clients at once, each on its own
 * connection to the leader with its own session and lock, to measure what
 * a connection costs a node and whether all of them are served; and the
 * reconnects workload, the same clients finding the next leader when the
 * one they hold their locks through dies. */
#ifndef BENCH_CONNS_H
#define BENCH_CONNS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "label.h"

struct conns_config {
        const char *endpoints; /* the cluster, as libbaton takes them */
        const char *prefix;    /* lock names: PREFIX/conn/I */
        long connections;
        long ttl_ms;    /* of every session */
        long window;    /* connections being set up at once */
        double hold_s;  /* every lock held this long before the round */
        bool reconnect; /* a lost connection is dialled again (reconnects) */
};

/*
 * What happened. Every connection dials the leader (TLS as libbaton sets it
 * up from the environment), OPENs a session and ACQUIREs its lock. Once
 * every one holds its lock (or failed), all of them stay connected for
 * `hold_s` seconds, sending KEEPALIVEs (the moment to look at the nodes: the
 * line "baton-bench: N connections holding" on stderr marks its start); then
 * every connection sends a RELEASE at the same moment (the round), and then a
 * CLOSE. A connection whose answer is an error, or that is lost, counts in
 * `errors` and takes no further part; `first_error` and `why` describe the
 * first. No progress for 30 s ends the run with `broken` set.
 *
 * With `reconnect`, a connection lost while its lock is held (the leader
 * was killed: the run's script does that during the hold) is dialled again
 * as libbaton would: the next endpoint at once, a node's NOT_LEADER hint
 * at once, a node that knows no leader again after about 40 ms, refusals
 * in a row after a doubling pause from 10 ms to 1 s. Once the TLS
 * handshake is done it sends an ATTACH of its session and a KEEPALIVE
 * together; the KEEPALIVE's answer is the client served again. The hold
 * lasts at least `hold_s` and until every lost connection is served again
 * (or failed), for at most 60 s after the first loss; the round then
 * proves every lock was kept.
 */
struct conns_result {
        uint64_t connected;  /* TLS handshake done (or plain) */
        uint64_t held;       /* session opened and lock granted */
        uint64_t keepalives; /* answered while holding */
        uint64_t released;   /* the round's RELEASEs answered RELEASED */
        uint64_t closed;
        uint64_t errors;
        int first_error; /* a BATON_E* code, 0 for a lost connection */
        double setup_s;  /* first dial to the last lock granted */
        double round_s;  /* the round: first RELEASE sent to the last answer */
        uint32_t round_p50_us, round_p99_us, round_max_us;
        struct bench_leadership lead;
        /* reconnects: */
        uint64_t lost;         /* connections lost while holding */
        uint64_t served_again; /* of them, served again */
        uint64_t redials;      /* dials after a loss, handshakes with them */
        uint64_t redirects;    /* NOT_LEADER answers followed */
        double reconnect_s;    /* first loss to the last served again */
        uint32_t gap_p50_ms, gap_p99_ms, gap_max_ms; /* a client's loss to
                                                        served again */
        uint64_t leader_first, term_first; /* who led as they were served
                                              again (0: unknown) */
        uint32_t served_by; /* nodes that served one again: 1 when the
                               leadership did not move again */
        bool broken;
        char why[256];
};

/* Run the workload. 0, or -1 when it could not start (no leader, no TLS
 * files: `why` says). */
int conns_run(const struct conns_config *cfg, struct conns_result *out);

/* The workload's JSON line onto `f`. */
void conns_print(FILE *f, const struct bench_label *l,
                 const struct conns_config *cfg, const struct conns_result *r);

#endif /* BENCH_CONNS_H */
