/* The nodes' side of simnet: each connection simnet establishes at a node
 * becomes a connection to that node's request core in simhost; whole
 * frames go to the core, what the core writes goes onto the network. */
#ifndef TESTS_SIM_SIMROUTES_H
#define TESTS_SIM_SIMROUTES_H

#include <stddef.h>
#include <stdint.h>

#include "../lib/simnet.h"
#include "simhost.h"

/*
 * Who calls what, when. The owner of a simnet whose nodes are simhost's
 * cores (simpath.c for test_sim's frame clients, simclient.c for
 * libbaton's client cores) passes on simnet's callbacks for the nodes'
 * side and keeps the clients' side to itself:
 *
 * - established at SIMNET_NODE: simroutes_on_established(), a
 *   simhost_connect() to the node simnet_peer() names; when that node's
 *   core is down (simhost dropped it, and simnet is not told yet: the
 *   owner syncs simnet's kills with simhost's cores at its next step) the
 *   connection is closed at once with simnet_close(), as a dead host
 *   resets it;
 * - bytes to SIMNET_NODE: simroutes_on_bytes(), the stream cut back into
 *   whole frames (proto_header_decode() of each header), each handed to
 *   the core with simhost_send() as soon as it is whole;
 * - closed at SIMNET_NODE: simroutes_on_closed(), the core's connection
 *   simhost_disconnect()ed and forgotten.
 *
 * After anything that may have made the cores write (simnet_advance(),
 * the cluster's steps, kills and revivals), the owner calls
 * simroutes_pump(): each frame a core wrote (simhost_next()) goes back
 * with simnet_send(), and a connection its core closed, or whose core
 * was dropped (simhost_closed()), is closed on the network with
 * simnet_close() and forgotten. simhost's direct path is untouched: the
 * network only stands between it and the clients.
 *
 * A connection id not established here (a client's, one forgotten) is
 * ignored. Nothing else should go wrong in a run: an established
 * connection simnet_peer() does not know, memory running out, or a header
 * that does not decode (the clients write only frames they encoded) is
 * put in errmsg, the first one only, for the owner to fail its run with;
 * the connection out of memory is closed, the bytes of one that does not
 * decode are dropped.
 *
 * Times are simnet's `now`. Not thread-safe; everything runs on the
 * caller's thread.
 */

struct simroute;

struct simroutes {
        struct simhost *h;  /* borrowed */
        struct simnet *net; /* borrowed */
        struct simroute *routes;
        size_t n, cap;
        uint64_t frames;  /* whole frames handed to the cores */
        char errmsg[128]; /* the first thing that went wrong; "" none */
};

/* No connections yet, between `h`'s cores and `net` (both borrowed for
 * the routes' life; `net` may be NULL when it is never used). */
void simroutes_init(struct simroutes *rs, struct simhost *h,
                    struct simnet *net);
/* Disconnect every core's connection left, telling the network nothing,
 * and free the routes. Call before simnet_destroy(). */
void simroutes_close(struct simroutes *rs);

/* simnet's callbacks for the nodes' side, `net` the connection's id. */
void simroutes_on_established(struct simroutes *rs, uint64_t net, uint64_t now);
/* `p` is borrowed for the call. */
void simroutes_on_bytes(struct simroutes *rs, uint64_t net, const uint8_t *p,
                        size_t n);
void simroutes_on_closed(struct simroutes *rs, uint64_t net);

/* What the cores wrote since, onto the network, and the connections they
 * closed closed on it. */
void simroutes_pump(struct simroutes *rs, uint64_t now);

#endif /* TESTS_SIM_SIMROUTES_H */
