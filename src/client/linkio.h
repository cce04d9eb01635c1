/* The I/O side of a handle's link: it resolves and connects to the endpoint
 * the link chooses, runs TLS, reads frames and hands them to the link,
 * writes the link's outbox, keeps the eventfd that wakes the background
 * thread, and tells the link, in words, how each attempt failed. */
#ifndef CLIENT_LINKIO_H
#define CLIENT_LINKIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <netdb.h>

#include "../proto/proto.h"
#include "../tls/tls.h"
#include "link.h"

/*
 * The link decides, linkio carries out (link.h, "Connections"): when
 * the link's owner has dialled an attempt (link_dial(); libbaton's
 * handle: core_dial()) and hands its id to linkio_step(), linkio resolves
 * the link's `peer`, tries its addresses in turn with a connect and a TLS
 * handshake each given LINK_CONNECT_MS, and reports to the link by the
 * attempt's id. The link
 * may give a connection up from inside any call (a verdict of its owner,
 * a NOT_LEADER): linkio then closes the socket at its next call, and the
 * frame that gave it up is the last one it reads from it.
 *
 * Threading: guarded by the handle's mutex, like the link. Any thread
 * holding it may write the outbox (linkio_busy(), linkio_write());
 * connecting, reading, flushing what the socket did not take and closing
 * belong to the thread that drives the link (the background thread, or a
 * caller's for a link of its own, drive.h). linkio_wake() may be called
 * from any thread, the mutex held or not.
 */
struct linkio {
        struct link *link;      /* borrowed: what it carries out */
        struct tls_ctx *tls;    /* borrowed; NULL: plain connections */
        uint64_t conn;          /* the link's attempt served; 0: none */
        uint64_t started;       /* the last attempt started (ids grow) */
        int fd;                 /* -1: no socket */
        bool connecting;        /* connect() in progress on fd */
        bool handshaking;       /* TLS handshake in progress on fd */
        bool heard;             /* some bytes came on this connection */
        int connect_err;        /* errno of the peer's last failed connect */
        int64_t deadline;       /* of the connect or the handshake */
        struct addrinfo *addrs; /* the peer resolved, while connecting */
        struct addrinfo *next_addr; /* of addrs, the next one to try */
        struct tls_conn *tc;        /* the connection's TLS state */
        uint8_t *cout;              /* ciphertext not yet written */
        size_t cout_len;
        size_t cout_cap;
        struct proto_reader reader;
        int wake; /* eventfd: other threads wake the loop */
};

/* Carry out `link`'s decisions (borrowed for linkio's life), with `tls`
 * (borrowed; NULL: plain connections): then a connection needs a TLS
 * handshake that has verified the node's certificate against the
 * endpoint's host. 0 or BATON_ENOMEM / BATON_EIO (no eventfd). */
int linkio_init(struct linkio *io, struct link *link, struct tls_ctx *tls);
/* Close the socket and the eventfd; the link is not told. */
void linkio_close(struct linkio *io);

/* Wake the background thread out of its poll(). */
void linkio_wake(struct linkio *io);

/* Whether bytes wait for the socket to take them: the link's outbox, or
 * ciphertext here. */
bool linkio_busy(const struct linkio *io);

/* Write what the socket takes without blocking, from any thread, on a
 * connection that is up. True when nothing is left; errors are left for
 * linkio_ready() or linkio_flush() to find. */
bool linkio_write(struct linkio *io);

/* linkio_write() for a calling thread that put a request in the outbox:
 * only on the link's connection while it is up, and with no ciphertext of
 * earlier writes waiting (the background thread flushes those). True
 * when nothing is left; false leaves the rest to the background thread. */
bool linkio_write_direct(struct linkio *io);

/* --- The thread that drives the link -------------------------------------- */

/*
 * Carry out the attempt `conn` the link has in hand (l->conn, once its
 * owner dialled: link_dial(), core_dial(); 0: none): start it when it is
 * new to linkio, close a socket of any other, give up a connect or a
 * handshake that takes too long, and the first PING's answer
 * (link_tick()). True when the connection is up afterwards.
 */
bool linkio_step(struct linkio *io, int64_t now, uint64_t conn);

/* Write what is queued; a failed write or a peer that reads nothing fails
 * the connection. */
void linkio_flush(struct linkio *io, int64_t now);

/* When linkio_step() next has something to do (CLOCK_NEVER: nothing). */
int64_t linkio_next_event(const struct linkio *io, bool needed);

/* The events poll() should watch for on io->fd; 0 when there is no socket
 * (a connection the link gave up is closed first). */
short linkio_events(struct linkio *io);

/* Act on what poll() reported on the socket: finish the connect, read and
 * hand over frames, write. */
void linkio_ready(struct linkio *io, short revents, int64_t now);

/* Give the connection up without a verdict at `now` (the handle is
 * stopping). */
void linkio_disconnect(struct linkio *io, int64_t now);

/* --- Words ---------------------------------------------------------------- */

/* An endpoint's reason from the system's: strerror(err), lower-cased
 * ("connection refused"), then `more`. */
void linkio_why_errno(char *why, size_t size, int err, const char *more);

/* An endpoint's reason for a connect that failed with `err` (or took
 * over `connect_ms`: ETIMEDOUT), named by its kind: "connection refused",
 * "unreachable: no route to host" (a firewall's or a prohibit route's
 * "permission denied" too), "timed out: no connection within N ms", else
 * the system's words. */
void linkio_why_connect(char *why, size_t size, int err, int connect_ms);

/* An endpoint's reason for a TLS failure of `t`, in the words of the side
 * that refused: this client's verification of the node's certificate
 * ("certificate has expired", "hostname mismatch"), or the alert the node
 * sent ("the node refused this client's certificate: TLS alert unknown
 * CA"). */
void linkio_why_tls(char *why, size_t size, const struct tls_conn *t);

#endif /* CLIENT_LINKIO_H */
