/* The TCP under both of batond's raft transports (plaintcp.h without TLS,
 * peer.h with it): raft's init, listen, connect and close calls, dialling
 * and accepting, the handshake deadline, and the count of what is open
 * that runs raft's close callback once, after the last connection. */
#ifndef SERVER_RAFTTCP_H
#define SERVER_RAFTTCP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <raft.h>
#include <raft/uv.h>
#include <uv.h>

#include "../../lib/address.h"
#include "../../lib/queue.h"
#include "peerreach.h"

/*
 * A transport on rafttcp puts a struct rafttcp first in its own state and
 * a struct rafttcp_conn first in each of its connections, and says what
 * happens on top of TCP in a struct rafttcp_ops. rafttcp then:
 *
 * - dials: parses raft's address, resolves it and connects to its first
 *   address (raft dials again anyway); a failure is logged with the
 *   peer's id, address and reason once per episode (peerreach.h: raft
 *   dials again every second or so), and raft's connect callback gets
 *   RAFT_NOCONNECTION;
 * - accepts, noting the peer's IP for the logs;
 * - turns Nagle's algorithm off on every stream: with it on, a leader
 *   sending AppendEntries while an earlier small message was
 *   unacknowledged waited for the follower's delayed ACK (40 ms on Linux),
 *   and the p99 of a lock operation was ~42 ms under load;
 * - once a second, hands the transport each connection that has not
 *   closed handshake_ms after it began (ops->late);
 * - closing, drops every connection with RAFT_CANCELED and runs raft's
 *   close callback once the listener, the timer and every connection are
 *   gone.
 *
 * The transport does the handshake and gives raft its stream.
 */

struct rafttcp_conn;

/* What a transport does on top of TCP; each runs on the loop. */
struct rafttcp_ops {
        /* The size of the transport's connection (a struct rafttcp_conn
         * first), allocated zeroed with raft_calloc: raft may free one
         * whose stream it was given. */
        size_t conn_size;
        /* TCP is up, accepted (c->from is the peer's IP) or dialled
         * (c->id and c->address are raft's): begin the handshake. */
        void (*accepted)(struct rafttcp_conn *c);
        void (*connected)(struct rafttcp_conn *c);
        /* Close `c` unless it is closing already (rafttcp has logged why):
         * set c->closing, answer raft's connect request (if c->req is
         * still set) with `status` now or once closed, close the
         * transport's own handles, then rafttcp_conn_close(c). */
        void (*drop)(struct rafttcp_conn *c, int status);
        /* `c` is not closing handshake_ms after it began: unless raft has
         * it already, say so and drop it. */
        void (*late)(struct rafttcp_conn *c);
        /* Nothing of `c` is open any more: free what the transport holds
         * for it (rafttcp then frees `c`). */
        void (*release)(struct rafttcp_conn *c);
};

/* A connection given to raft (rafttcp_conn_give()), as the kernel names
 * it: found again by its descriptor and both ends, to be shut down when
 * its peer is removed (rafttcp_drop_peer()). */
#define RAFTTCP_GIVEN_MAX (4 * CONFIG_MAX_MEMBERS)
struct rafttcp_given {
        uint64_t id; /* 0: none */
        int fd;
        struct sockaddr_storage local, peer;
};

/* The transport's TCP side, set up by rafttcp_init(). */
struct rafttcp {
        struct raft_uv_transport *t;
        uv_loop_t *loop;
        const struct rafttcp_ops *ops;
        unsigned handshake_ms;
        raft_id id;                    /* this node's, from raft */
        char address[ADDRESS_MAX + 1]; /* this node's raft address */
        char listen[ADDRESS_MAX + 1];  /* what the listener binds */
        raft_uv_accept_cb accept_cb;
        uv_tcp_t listener;
        uv_timer_t sweep; /* handshake deadlines */
        unsigned handles; /* listener and timer not yet closed */
        bool listening;
        bool closing;
        raft_uv_transport_close_cb close_cb;
        struct queue conns;     /* struct rafttcp_conn, until freed or raft's */
        struct peerreach reach; /* the peers this node cannot dial */
        struct rafttcp_given given[RAFTTCP_GIVEN_MAX]; /* newest overwrite */
        unsigned n_given;
        /* Told the peer's id when a peer closes a connection raft had
         * (rafttcp_peer_closed()); NULL: nobody. */
        void (*peer_closed)(void *data, uint64_t id);
        void *peer_closed_data;
};

/* One connection, as much of it as rafttcp knows. */
struct rafttcp_conn {
        /* First, so that a transport can give raft the whole connection
         * as the stream, which raft frees with raft_free once closed. */
        uv_tcp_t tcp;
        struct rafttcp *rt;
        struct queue link; /* rt->conns */
        bool outgoing;
        bool closing;
        bool resolving;                /* the address lookup runs */
        bool tcp_init;                 /* tcp is a handle to close */
        unsigned handles;              /* the lookup and handles open */
        raft_id id;                    /* dialled, or as the peer says */
        char address[ADDRESS_MAX + 1]; /* dialled, or as the peer says */
        char from[64];                 /* accepted: the peer's IP, for logs */
        uint64_t started;              /* uv_now() */
        struct raft_uv_connect *req;   /* dialled: raft's, until answered */
        raft_uv_connect_cb cb;
        uv_getaddrinfo_t gai;
        uv_connect_t connect;
};

/* Fill `t` (its version, impl and functions) with a transport on `loop`
 * whose connections have `handshake_ms` to finish their handshake, doing
 * `ops` (borrowed for the transport's life) on top of TCP. The listener
 * binds `listen` (copied; NULL or "": the raft address raft gives the
 * transport, which is what the hellos carry either way: the address the
 * peers dial, perhaps through a port mapping to `listen`). `rt` is the
 * first member of the transport's state, which the caller allocated
 * zeroed and frees once raft has closed the transport. */
void rafttcp_init(struct rafttcp *rt, struct raft_uv_transport *t,
                  uv_loop_t *loop, unsigned handshake_ms, const char *listen,
                  const struct rafttcp_ops *ops);

/* The end of ops->drop: close `c`'s lookup and TCP handle (the transport
 * closed its own); `c` is released and freed once every handle counted in
 * c->handles is closed, which may be before this returns. */
void rafttcp_conn_close(struct rafttcp_conn *c);

/* The close callback of a handle the transport opened on `c` and counted
 * in c->handles, whose data is `c`. */
void rafttcp_handle_closed(uv_handle_t *h);

/* Raft has `c` now, as its stream, and frees it: rafttcp forgets it (a
 * connection that stays the transport's stays until dropped). */
void rafttcp_conn_give(struct rafttcp_conn *c);

/* Dialled `c` failed for `why` ("refused (...)", "TLS refused: ..."):
 * logged once per episode of its peer (peerreach.h). */
void rafttcp_unreachable(struct rafttcp_conn *c, const char *why);

/* Dialled `c` works: ends its peer's episode, if one runs. */
void rafttcp_reached(struct rafttcp_conn *c);

/* Drop every connection the transport `rt` (a struct rafttcp) still holds
 * with node `id`, either way, and shut down those it gave raft (raft then
 * closes them as lost) (peercheck.h's drop). */
void rafttcp_drop_peer(void *rt, uint64_t id);

/* Tell `cb` (with `data`) the peer's id whenever a peer closes a
 * connection of the transport `t` (set up by rafttcp_init()) after raft
 * had it: the peer's process ended, or its host or the network reset
 * the connection. NULL: nobody. */
void rafttcp_set_peer_closed(struct raft_uv_transport *t,
                             void (*cb)(void *data, uint64_t id), void *data);

/* The peer closed `c`, which raft had: tell rafttcp's peer_closed. */
void rafttcp_peer_closed(const struct rafttcp_conn *c);

/* "connection to node ID at ADDRESS" or "connection from IP" into `buf`,
 * for the logs. Returns `buf`. */
const char *rafttcp_who(const struct rafttcp_conn *c, char *buf, size_t size);

#endif /* SERVER_RAFTTCP_H */
