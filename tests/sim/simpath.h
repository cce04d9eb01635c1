/* test_sim's clients' connections to the nodes' request cores: over the
 * seeded simulated network (simnet.h) or simhost's direct path. */
#ifndef TESTS_SIM_SIMPATH_H
#define TESTS_SIM_SIMPATH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../src/proto/proto.h"
#include "../lib/simcluster.h"

/*
 * The five calls of simhost's direct path (connect, send, next, closed,
 * disconnect), over one of two transports:
 *
 * - simhost's direct path: a frame sent is handed to the core at once,
 *   and a connection closes only when its node's core fails it or goes
 *   down;
 * - simnet: a connect is an attempt, established after a seeded delay,
 *   refused when the node is down or given up after CONNECT_MS (the
 *   connection then reads as closed); frames sent before it is
 *   established wait for it, as a client's writes wait for its connect.
 *   Each direction is a byte stream split, joined and delayed by simnet;
 *   the client reassembles the frames from the chunks that reach it
 *   (proto_reader), the node's side (simroutes.h) hands whole frames to
 *   the core (simhost's direct path behind it) and sends back what the
 *   core writes. A connection closes when simnet tells the client so (a cut,
 *   the node killed, or the core closing it); a disconnect closes the
 *   client's side, whose bytes still reach the node. A request sent again
 *   on a newer connection may so reach the node after its earlier copy,
 *   or before it.
 *
 * Over simnet, simpath_run() also strikes simnet_pick()'s faults on a
 * schedule of the seed: every 0.2 to 0.8 s a cut of an open connection, a
 * partition of a client from a node (one or both ways), a node isolated
 * from all its clients, a pause of a client or a latency spike, each
 * (but the cut) healed 0.2 to 3 s later. simnet's kills are not drawn: a
 * node's kills are the raft faults' (faults.c), which simpath_run()
 * passes on to simnet, as are the revivals.
 *
 * Time is the cluster's (simcluster_now()). Everything runs on the
 * caller's thread.
 */

struct simhost;
struct simpath;
struct pathconn;

/* Counts over a run, for the TAP line. */
struct simpath_stats {
        unsigned faults; /* simnet faults struck */
        /* Of which, by kind: cuts, partitions of a client from a node,
         * nodes isolated from their clients, pauses of a client, spikes. */
        unsigned cuts, partitions, isolations, pauses, spikes;
        unsigned closes;  /* connections the clients were told closed */
        unsigned refused; /* attempts refused, or given up */
};

/* A transport to `h`'s cores on cluster `c` (both borrowed): over simnet
 * from `seed` unless `direct`. NULL when memory runs out. */
struct simpath *simpath_create(struct simhost *h, struct simcluster *c,
                               bool direct, uint64_t seed);
/* Free it and every connection and route left, telling nobody. Accepts
 * NULL. */
void simpath_destroy(struct simpath *p);

/* The network's events due by now, kills and revivals passed on to it,
 * what the cores wrote sent back, and (`faults`) the faults due struck
 * and healed. Call at each step of the loop, before the clients'. */
void simpath_run(struct simpath *p, bool faults);
/* Heal every fault simpath struck. */
void simpath_heal(struct simpath *p);
const struct simpath_stats *simpath_stats(const struct simpath *p);
/* The first thing that went wrong on the nodes' side of simnet (see
 * simroutes.h), which fails the run; NULL when nothing did. */
const char *simpath_error(const struct simpath *p);

/* A connection of client `client` (an id of the caller's, the same for
 * all its connections) to node `i`'s core; NULL when the direct path
 * finds the node down, or memory runs out. */
struct pathconn *simpath_connect(struct simpath *p, uint64_t client,
                                 unsigned i);
/* Send one whole frame (`len` bytes, copied); dropped once closed. */
void simpath_send(struct pathconn *c, const uint8_t *frame, size_t len);
/* The next frame that reached the client, if any: its header, and its
 * body, valid until the next call on `c`. */
bool simpath_next(struct pathconn *c, struct proto_header *hdr,
                  const uint8_t **body);
/* Whether `c` closed: what is left to read is all it will get. */
bool simpath_closed(struct pathconn *c);
/* The node `c` goes to. */
unsigned simpath_node(const struct pathconn *c);
/* The client hangs up `c` (NULL is fine), which is freed. */
void simpath_disconnect(struct pathconn *c);

#endif /* TESTS_SIM_SIMPATH_H */
