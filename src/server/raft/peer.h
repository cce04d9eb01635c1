/* batond's raft transport with TLS: a struct raft_uv_transport whose
 * connections are TCP + TLS 1.3 with mutual authentication, each handed to
 * raft as one end of a socketpair while the node pumps the other end
 * through TLS (the arrangement go-dqlite and LXD use around the same
 * library). */
#ifndef SERVER_PEER_H
#define SERVER_PEER_H

#include <stddef.h>

#include <raft.h>
#include <raft/uv.h>
#include <uv.h>

#include "../config/config.h"

struct peercheck;

/*
 * Every connection, in both directions:
 *
 * - TLS 1.3, each side presenting its node certificate and verifying the
 *   other's against tls-ca (and tls-crl);
 * - the dialling node checks the certificate of the node it dials carries
 *   that node's identity (tls-peer-identity with its raft id), then sends a
 *   hello inside TLS: "BATONPR1", its raft id (u64) and its raft address
 *   (u16 length and bytes), little-endian, with what its data directory
 *   is behind the address's NUL (rafthello.h);
 * - the accepting node checks the certificate carries the identity of the
 *   id the hello claims (a node with node 2's certificate cannot speak as
 *   node 3), and the data directory (peercheck.h), answers with its
 *   verdict, then gives raft the connection as from that id, or closes
 *   it;
 * - the dialling node reads the verdict, judges the accepting node's
 *   directory the same way, and closes the connection if either refused;
 * - connecting (resolve, TCP connect, handshake, hello) must end within
 *   handshake-timeout-ms; a failure is logged with the peer's address and
 *   the reason (TLS and identity failures as warnings, refused TCP connects
 *   at debug level, as raft retries them every second), and raft's connect
 *   callback gets RAFT_NOCONNECTION, so raft retries as it does for TCP.
 *
 * Either end closing closes the other: raft sees EOF on its stream when
 * the peer goes, and the peer sees the TCP connection close when raft
 * closes its stream. Bytes queued towards a slow side pause reading from
 * the other past 4 MiB.
 */

/* Fill `t` (its version, data and functions) with the TLS transport on
 * `loop`, with the credentials and settings of `cfg` and the data
 * directory checks of `check` (both borrowed for the transport's life;
 * `check` may be NULL: no checks). 0, or BATON_ETLS / BATON_ENOMEM with
 * the reason in `errmsg`; nothing is left to free then. */
int peer_init(struct raft_uv_transport *t, uv_loop_t *loop,
              const struct config *cfg, struct peercheck *check, char *errmsg,
              size_t size);

/* Free what peer_init() allocated, once raft has closed the transport (its
 * close callback ran). */
void peer_free(struct raft_uv_transport *t);

/* Read the certificate, key and CRL files again for connections made from
 * now on; those open keep theirs. 0, or BATON_ETLS with the reason in
 * `errmsg` and the old credentials kept. */
int peer_reload(struct raft_uv_transport *t, char *errmsg, size_t size);

#endif /* SERVER_PEER_H */
