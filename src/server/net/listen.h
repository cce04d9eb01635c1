/* A libuv TCP listener on a Baton address, a host name resolved first. */
#ifndef SERVER_LISTEN_H
#define SERVER_LISTEN_H

#include <stddef.h>

#include <uv.h>

/*
 * Initialize `tcp` on `loop` and listen on `address` ("host:port" or
 * "[ipv6]:port", borrowed for the call) with `cb` for new connections. A
 * host name is resolved now, blocking, and the listener takes its first
 * address (getaddrinfo's order, so IPv6 first where the system prefers
 * it). Returns 0 with `tcp` listening (the caller closes it), or
 * BATON_EINVAL (a malformed address or a name that does not resolve) or
 * BATON_EIO (bind or listen failed), logged, with nothing left open.
 * `what` names the listener in the log ("listen", "metrics").
 */
int listen_tcp(uv_loop_t *loop, uv_tcp_t *tcp, const char *address, int backlog,
               uv_connection_cb cb, const char *what);

/*
 * Whether `address` can be listened on now, asked of the kernel without
 * keeping it: resolved as listen_tcp() does, bound (with SO_REUSEADDR, as
 * libuv binds) and listened on by a socket closed at once. For finding a
 * busy port before anything else is done: the listener itself comes later,
 * so another process may still take the port in between. 0, or
 * BATON_EINVAL (malformed, or a name that does not resolve) / BATON_EIO
 * (bind or listen refused: in use, not an address of this host, a port
 * below 1024 without the capability) with "ADDRESS: reason" in `errmsg`.
 */
int listen_probe(const char *address, char *errmsg, size_t size);

#endif /* SERVER_LISTEN_H */
