/* The raft transport of a node with tls = off: plain TCP, speaking
 * libraft's own TCP handshake, with Baton's data directory checks. */
#ifndef SERVER_PLAINTCP_H
#define SERVER_PLAINTCP_H

#include <raft.h>
#include <raft/uv.h>
#include <uv.h>

struct peercheck;

/*
 * On the wire it is libraft's raft_uv_tcp (0.22.1): the dialling node
 * sends u64 protocol 1, u64 raft id, u64 length and its address,
 * NUL-padded to 8 bytes, little-endian, then raft's messages. Baton's
 * addition (rafthello.h) rides behind the address's NUL, inside that
 * length, where libraft does not look; the accepting node answers a hello
 * that has one with its verdict and, refused, closes the connection
 * before raft sees it; the dialling node reads the verdict from the
 * connection raft writes on (raft never reads it). So batond 0.1, which
 * used raft_uv_tcp itself, and this build talk to each other either way
 * (a rolling upgrade), the checks applying between nodes of this build.
 *
 * The TCP beneath is rafttcp.h's, as for TLS: Nagle's algorithm off on
 * every stream, and a connection that has not finished its handshake
 * within handshake-timeout-ms closed.
 */

/* Caller-allocated; `transport` is what raft_uv_init() is given (first,
 * so that a struct plaintcp can also hold peer.h's TLS transport). */
struct plaintcp {
        struct raft_uv_transport transport;
};

/* Set up the transport on `loop` with the data directory checks of
 * `check` (borrowed; NULL: none) and `handshake_ms` for each connection's
 * handshake, listening on `listen` (copied; NULL or "": this node's raft
 * address, rafttcp_init()). 0 or RAFT_NOMEM. */
int plaintcp_init(struct plaintcp *p, uv_loop_t *loop, struct peercheck *check,
                  unsigned handshake_ms, const char *listen);

/* Free what plaintcp_init() allocated, once raft has closed the
 * transport. */
void plaintcp_close(struct plaintcp *p);

#endif /* SERVER_PLAINTCP_H */
