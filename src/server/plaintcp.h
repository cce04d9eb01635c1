/* The raft transport of a node with tls = off: libraft's own TCP transport
 * with Nagle's algorithm turned off on every peer stream. */
#ifndef SERVER_PLAINTCP_H
#define SERVER_PLAINTCP_H

#include <raft.h>
#include <raft/uv.h>
#include <uv.h>

/* Caller-allocated; `transport` is what raft_uv_init() is given (first, so
 * a struct plaintcp can also hold peer.h's TLS transport instead). */
struct plaintcp {
        struct raft_uv_transport transport;
        /* raft_uv_tcp's own listen and connect, wrapped. */
        int (*tcp_listen)(struct raft_uv_transport *t, raft_uv_accept_cb cb);
        int (*tcp_connect)(struct raft_uv_transport *t,
                           struct raft_uv_connect *req, raft_id id,
                           const char *address, raft_uv_connect_cb cb);
        raft_uv_accept_cb raft_accept;
};

/* Set up raft_uv_tcp on `loop` and wrap it. 0 or a libraft code. */
int plaintcp_init(struct plaintcp *p, uv_loop_t *loop);
/* Once raft is done with the transport. */
void plaintcp_close(struct plaintcp *p);

#endif /* SERVER_PLAINTCP_H */
