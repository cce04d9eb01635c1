/* A seeded network of TCP connections between simulated clients and nodes,
 * in virtual time, that knows nothing of what its bytes mean. */
#ifndef TESTS_SIMNET_H
#define TESTS_SIMNET_H

#include <stddef.h>
#include <stdint.h>

/*
 * What it models, as the two ends of a TCP connection see it:
 *
 * - A client (any 64-bit id) opens a connection to a node (an index below
 *   n_nodes). After a seeded connect delay the attempt is established, and
 *   both sides are told (the node first, at the same instant), or it fails
 *   and only the client is told why: SIMNET_REFUSED when the node is down,
 *   SIMNET_TIMEDOUT when the node is paused or partitioned from the client
 *   (the failure then comes connect_timeout_ms after the attempt began).
 * - Each direction of a connection is one byte stream. A send is split into
 *   segments of seeded sizes, each due after a seeded delay but never
 *   before the segment ahead of it, so a stream arrives in order; the
 *   bytes due at one instant are handed over in seeded chunks of 1 to
 *   chunk_max bytes, which split and join the sender's writes anywhere.
 *   Connections are independent: an old connection's bytes may arrive
 *   after a newer connection's from the same client.
 * - Faults (struct simnet_fault), each applied by the caller or picked from
 *   the seed by simnet_pick(): a cut (a reset: each side is told at its own
 *   seeded time, after a seeded prefix of the bytes in flight to it), a
 *   one-way or two-way partition between a client and a node or between a
 *   node and all its clients (bytes stall and nobody is told, until a heal
 *   or a cut), a killed node (its connections reset towards the clients,
 *   its own side told nothing further; connections to it refused until it
 *   is revived), a paused node or client (nothing is handed to it until it
 *   resumes; connections to a paused node time out) and a latency spike on
 *   a node's connections. Faults count: each lasts until as many undos.
 *
 * What it does not model: bandwidth, windows and back pressure (a send
 * never blocks and every byte is buffered), loss without a partition,
 * half-closed connections (a side told EOF may not send either),
 * half-open detection by keepalive (a side learns of a dead peer only
 * through a reset or its own timeouts), a kill's reset lost in a
 * partition being re-sent (it stalls with the bytes and arrives at the
 * heal), listen backlogs and accept queues, and addresses.
 *
 * Time is the caller's: it hands each call its `now` (milliseconds,
 * never decreasing), asks simnet_next_due() for the next time anything is
 * due, and simnet_advance() hands over everything due by then through the
 * callbacks, each with the time it fell due. Advance to `now` before
 * any other call at `now`, as an event loop does: an event run late sees
 * the faults and closes in force when it runs. The same seed, config and
 * calls give the same callbacks, byte for byte: simnet reads no clock,
 * has no global state, and orders its work by time and call order alone.
 *
 * Costs: a send, a delivery and a connect are O(log events); a fault and
 * its undo walk every open connection once. Nothing is kept per client
 * beyond its connections and the faults naming it.
 *
 * Not thread-safe; the callbacks may call any function of the same
 * simnet but simnet_destroy(): simnet_send(), simnet_close(),
 * simnet_apply(), simnet_connect(), ...
 */

#define SIMNET_NEVER     UINT64_MAX
#define SIMNET_MAX_NODES 9

/* A connection's two sides. */
enum simnet_side { SIMNET_CLIENT = 0, SIMNET_NODE = 1 };

/* Directions, as a mask: towards the node, towards the client. */
#define SIMNET_TO_NODE   1u
#define SIMNET_TO_CLIENT 2u
#define SIMNET_BOTH      3u

/* Why an attempt failed or a connection closed. */
enum simnet_why {
        SIMNET_REFUSED = 1, /* the node is down */
        SIMNET_TIMEDOUT,    /* the node is paused or partitioned away */
        SIMNET_RESET,       /* a cut or a killed node */
        SIMNET_EOF          /* the peer closed after its last byte */
};

struct simnet_config {
        uint64_t seed;
        unsigned n_nodes; /* 1..SIMNET_MAX_NODES */
        uint64_t connect_min_ms, connect_max_ms;
        uint64_t connect_timeout_ms;
        uint64_t delay_min_ms, delay_max_ms; /* one segment, one way */
        size_t chunk_max;                    /* >= 1: segment and chunk */
        uint64_t skew_max_ms; /* between a cut and each side's notice */
};

/* Defaults for a LAN: connect 1-5 ms, timeout 3 s, delay 1-20 ms, chunks
 * of up to 1,500 bytes, skew up to 50 ms; `seed` and `n_nodes` as given. */
void simnet_config_defaults(struct simnet_config *cfg, uint64_t seed,
                            unsigned n_nodes);

/*
 * The caller's callbacks, all required. `now` is when the event fell due:
 * never before the previous callback's, never after simnet_advance()'s.
 *
 * established: `side` may now send; the node side is told first.
 * failed: the client's attempt failed (REFUSED, TIMEDOUT or RESET); the
 *   node never heard of it. The connection id is dead afterwards.
 * bytes: `n` bytes of the stream towards `to`, borrowed for the call.
 * closed: `side` is told the connection is gone (RESET or EOF); nothing
 *   more reaches it, and it may not send.
 */
struct simnet_cbs {
        void *data;
        void (*established)(void *data, uint64_t conn, enum simnet_side side,
                            uint64_t now);
        void (*failed)(void *data, uint64_t conn, enum simnet_why why,
                       uint64_t now);
        void (*bytes)(void *data, uint64_t conn, enum simnet_side to,
                      const uint8_t *p, size_t n, uint64_t now);
        void (*closed)(void *data, uint64_t conn, enum simnet_side side,
                       enum simnet_why why, uint64_t now);
};

/* Faults: what simnet_apply() does and simnet_undo() takes back. */
enum simnet_fault_kind {
        SIMNET_CUT = 1,      /* conn; no undo */
        SIMNET_PARTITION,    /* client, node, dirs */
        SIMNET_ISOLATE,      /* node, dirs: from all its clients */
        SIMNET_KILL,         /* node; undo revives it */
        SIMNET_PAUSE_NODE,   /* node */
        SIMNET_PAUSE_CLIENT, /* client */
        SIMNET_SPIKE         /* node, extra_ms added to each delay */
};

struct simnet_fault {
        enum simnet_fault_kind kind;
        uint64_t conn;
        uint64_t client;
        unsigned node;
        unsigned dirs; /* SIMNET_TO_NODE, SIMNET_TO_CLIENT or both */
        uint64_t extra_ms;
};

/* Counters for a run's report. */
struct simnet_stats {
        uint64_t bytes_sent[2];      /* by SIMNET_CLIENT, by SIMNET_NODE */
        uint64_t bytes_delivered[2]; /* to SIMNET_CLIENT, to SIMNET_NODE */
        uint64_t bytes_dropped;      /* cut, killed or closed under them */
        uint64_t connects, established, refused, timedout, failed_reset;
        uint64_t closed_eof, closed_reset; /* notices, per side told */
        uint64_t cuts, partitions, isolations, kills, pauses, spikes;
        uint64_t open_conns; /* now: attempts, and open on a side */
};

struct simnet;

/*
 * Make a network. `cfg` is copied; `cbs` is copied. NULL if memory runs
 * out or the config is out of range (no node, too many, chunk_max 0, a
 * minimum above its maximum).
 */
struct simnet *simnet_create(const struct simnet_config *cfg,
                             const struct simnet_cbs *cbs);
/* Free it and everything in flight, telling nobody. Accepts NULL. */
void simnet_destroy(struct simnet *net);

/*
 * Start an attempt from `client` to `node`; its id (never 0, never reused)
 * goes to *conn. Exactly one of established (both sides) or failed follows,
 * unless the client closes the attempt first. 0, BATON_EINVAL (node out of
 * range) or BATON_ENOMEM.
 */
int simnet_connect(struct simnet *net, uint64_t client, unsigned node,
                   uint64_t now, uint64_t *conn);

/*
 * Queue `n` bytes from `side` (copied). Bytes sent over a connection that
 * was cut, or whose node was killed, before this side was told are
 * dropped, as a kernel's write succeeds until the reset arrives. 0,
 * BATON_EINVAL (no such connection, or this side was not told it is
 * established, or was told it closed, or closed it) or BATON_ENOMEM.
 */
int simnet_send(struct simnet *net, uint64_t conn, enum simnet_side side,
                const void *p, size_t n, uint64_t now);

/*
 * `side` closes its end. Its bytes still go out, and the peer is told EOF
 * after the last of them; bytes towards `side` are dropped. A client that
 * closes an attempt not yet established abandons it: nobody is told
 * anything. The closing side is told nothing. 0 or BATON_EINVAL (as for
 * simnet_send()).
 */
int simnet_close(struct simnet *net, uint64_t conn, enum simnet_side side,
                 uint64_t now);

/* The client and node of a live connection: 0 or BATON_EINVAL. */
int simnet_peer(const struct simnet *net, uint64_t conn, uint64_t *client,
                unsigned *node);

/* Apply or undo a fault. 0 or BATON_EINVAL (a node out of range, a
 * partition in no direction, an unknown connection to cut, an undo with
 * nothing to undo); BATON_ENOMEM. */
int simnet_apply(struct simnet *net, const struct simnet_fault *f,
                 uint64_t now);
int simnet_undo(struct simnet *net, const struct simnet_fault *f, uint64_t now);

/* Pick a fault from the seed (a stream of its own, so that picking does
 * not change the delays): a cut of an open connection, a partition of one
 * of their clients, and so on. Fills *f, applies nothing. */
void simnet_pick(struct simnet *net, struct simnet_fault *f);

/* The earliest time a callback is due, or SIMNET_NEVER. Exact: advancing
 * to it runs at least one callback, and nothing is due before it. */
uint64_t simnet_next_due(struct simnet *net);

/* Run every callback due at or before `now`, in time order. */
void simnet_advance(struct simnet *net, uint64_t now);

const struct simnet_stats *simnet_stats(const struct simnet *net);

#endif /* TESTS_SIMNET_H */
