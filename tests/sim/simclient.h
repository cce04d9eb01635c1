/* libbaton's real client cores on the simulated network and cluster: each
 * client a struct core with a seeded environment and its own clock, driven
 * by a host loop that does over simnet what libbaton's I/O half does over
 * sockets, with simhost's request cores on the nodes' side. */
#ifndef TESTS_SIM_SIMCLIENT_H
#define TESTS_SIM_SIMCLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../src/client/core.h"
#include "../../src/proto/command.h"
#include "../../src/proto/reader.h"
#include "../lib/rng.h"
#include "../lib/simnet.h"
#include "simhost.h"
#include "simroutes.h"

/*
 * What libbaton's background thread and linkio do, a client's round does
 * at the virtual time it is given (simclients_run()), when an input came
 * or a timer fell due, as the thread's poll() returns:
 *
 * - the lease (core_lease_tick()), then the attempt the core wants
 *   (core_dial()): a new one is a simnet_connect() to the node its peer
 *   names ("sim-nI:7000", as simhost's nodes name one another in
 *   NOT_LEADER), any other one is closed; an attempt not established
 *   within LINK_CONNECT_MS is given up as linkio gives up a connect;
 * - established, failed, bytes and closed become link_conn_up(),
 *   link_conn_failed() (refused: REACH_NOT_LISTENING; timed out, reset or
 *   closed: REACH_REFUSED, the node avoided as silent, as linkio reports
 *   them) and link_conn_frame() for each whole frame (proto_reader, as
 *   linkio reassembles them), each dated in the client's clock as it is
 *   handed over;
 * - link_tick() and, on a connection up, core_tick(); then the caller's
 *   own step of the client (its calls: acqop and the like), then the
 *   outbox written with simnet_send(). The outbox is written after every
 *   input too, so a frame goes out at the `now` it was put.
 *
 * The nodes' side is simroutes.h's: a connection established at a node
 * is a simhost_connect() to its core, each whole frame that reaches it a
 * simhost_send(), what the core writes goes back with simnet_send().
 *
 * A client's clock is rate_num/rate_den of virtual time, plus an offset:
 * 1/1 for a correct one; a negative control runs it slow.
 *
 * Not thread-safe; everything runs on the caller's thread.
 */

struct simclients;

/* One client: its core, what it borrows, and its connection. */
struct simclient {
        unsigned id;
        struct simclients *s;
        struct rng rng; /* its environment's draws */
        struct core_env env;
        struct core_tracer tracer;
        struct core core;
        bool core_ok;     /* core_init() succeeded */
        uint64_t attempt; /* the core's attempt carried out; 0 none */
        uint64_t net;     /* its simnet connection; 0 none */
        bool up;          /* established */
        int64_t deadline; /* of the connect, in the client's clock */
        struct proto_reader reader;
        int64_t offset;  /* its clock at virtual time 0 */
        bool dirty;      /* an input came: a round is due */
        int64_t wake_at; /* its next timer, in its clock */
        void *user;      /* the caller's */
        /* Counters. */
        uint64_t dials, frames_in, bytes_out;
};

/* The caller's hooks: its step of a client in each round (may be NULL),
 * and the tracer's calls, with the client (may be NULL). */
struct simclients_hooks {
        void *data;
        void (*step)(void *data, struct simclient *cl, int64_t now);
        void (*hold)(void *data, struct simclient *cl,
                     const struct locks_hold *h, int change, uint32_t count,
                     int64_t now);
        void (*lease)(void *data, struct simclient *cl, uint64_t session,
                      int state, int64_t now);
        /* When the caller's step of `cl` next has work, in the client's
         * clock, besides the inputs (INT64_MAX: none; may be NULL). */
        int64_t (*next)(void *data, struct simclient *cl);
        /* A command frame left the client (written to the network),
         * `k` borrowed for the call (may be NULL). */
        void (*sent)(void *data, struct simclient *cl, const struct command *k,
                     int64_t now);
        /* An event `e` (borrowed for the call) of the WATCH `r` of `cl`'s
         * core, or NULL when `r` became final (the core's watch_event
         * hook, as libbaton's watch module takes it; may be NULL). */
        void (*watch)(void *data, struct simclient *cl, struct request *r,
                      const struct proto_watch_event *e);
        /* The core has taken in a whole frame from the network (it is
         * between two frames: a WATCH's WATCHING answer read, its first
         * event not yet; may be NULL). */
        void (*frame)(void *data, struct simclient *cl, int64_t now);
};

struct simclients_config {
        unsigned n_clients;
        uint64_t seed;
        uint32_t ttl_ms;
        uint32_t lock_delay_ms;
        unsigned rate_num, rate_den; /* the clients' clocks: 1/1 */
        struct simnet_config net;    /* n_nodes, seed: as simhost's */
        struct simclients_hooks hooks;
};

struct simclients {
        struct simhost *h;
        struct simnet *net;
        unsigned n_nodes;
        bool down[SIMNET_MAX_NODES]; /* killed in simnet */
        char endpoints[SIMNET_MAX_NODES][LINK_ADDR_MAX];
        struct simclients_config cfg;
        struct simclient *cl;
        unsigned n;
        struct simroutes routes; /* the nodes' side; frames to the nodes */
        uint64_t frames_to_clients;
        /* The first thing that went wrong in the host (the nodes' side's
         * own is in routes.errmsg). */
        char errmsg[256];
};

/* Defaults: rate 1/1, TTL 5000, lock delay 0, simnet's defaults for
 * `n_nodes` from `seed`, no hooks. */
void simclients_config_defaults(struct simclients_config *cfg,
                                unsigned n_clients, unsigned n_nodes,
                                uint64_t seed);

/* Clients on the network to `h`'s nodes (`h` borrowed). 0, BATON_ENOMEM
 * or BATON_EINVAL (no node, too many). */
int simclients_init(struct simclients *s, struct simhost *h,
                    const struct simclients_config *cfg);
/* Close every core and connection, telling nobody. */
void simclients_free(struct simclients *s);

/* The network's callbacks due by virtual time `now`, then the round of
 * every client that had an input or whose next timer fell due (the core's
 * next tick, the link's, its connect deadline, the caller's `next`),
 * then what the nodes' cores wrote. */
void simclients_run(struct simclients *s, uint64_t now);

/* Every client runs a round at the next simclients_run() (the caller's
 * step has new work: its run is stopping, say). */
void simclients_poke(struct simclients *s);

/* Bring simnet's killed nodes in line with simhost's dropped cores (after
 * simhost_kill(), _revive(), _sync()). */
void simclients_sync(struct simclients *s, uint64_t now);

/* What the nodes' cores wrote since, onto the network. */
void simclients_pump(struct simclients *s, uint64_t now);

/* A client's clock at virtual time `now`. */
int64_t simclient_clock(const struct simclient *cl, uint64_t now);

/* Write the client's outbox at virtual time `now` (after a call that put
 * frames in it outside a round). */
void simclient_flush(struct simclient *cl, uint64_t now);

#endif /* TESTS_SIM_SIMCLIENT_H */
