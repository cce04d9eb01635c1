/* libraft's TCP transport without Nagle's algorithm. */
#include "plaintcp.h"

#include <stdlib.h>
#include <string.h>

/*
 * raft_uv_tcp (still in libraft 0.22.1) leaves Nagle's algorithm on. A leader
 * that sends AppendEntries while an earlier small message is unacknowledged
 * then waits for the follower's delayed ACK (40 ms on Linux): the p99 of a
 * lock operation was ~42 ms under load. The node wraps the transport's
 * listen and connect to set TCP_NODELAY on every peer stream. */

#define PLAIN_OF(t) ((struct plaintcp *)(void *)(t))

static void no_nagle(struct uv_stream_s *stream)
{
        /* raft_uv_tcp's streams are TCP handles. */
        if (stream != NULL && stream->type == UV_TCP) {
                uv_tcp_nodelay((uv_tcp_t *)stream, 1);
        }
}

static void accepted(struct raft_uv_transport *t, raft_id id,
                     const char *address, struct uv_stream_s *stream)
{
        no_nagle(stream);
        PLAIN_OF(t)->raft_accept(t, id, address, stream);
}

static int listen_wrapped(struct raft_uv_transport *t, raft_uv_accept_cb cb)
{
        struct plaintcp *c = PLAIN_OF(t);

        c->raft_accept = cb;
        return c->tcp_listen(t, accepted);
}

/* One outgoing connection: raft's request and callback, around ours. */
struct dial {
        struct raft_uv_connect req;
        struct raft_uv_connect *raft_req;
        raft_uv_connect_cb cb;
};

static void dialed(struct raft_uv_connect *req, struct uv_stream_s *stream,
                   int status)
{
        struct dial *d = (struct dial *)req;
        struct raft_uv_connect *raft_req = d->raft_req;
        raft_uv_connect_cb cb = d->cb;

        free(d);
        if (status == 0) {
                no_nagle(stream);
        }
        cb(raft_req, stream, status);
}

static int connect_wrapped(struct raft_uv_transport *t,
                           struct raft_uv_connect *req, raft_id id,
                           const char *address, raft_uv_connect_cb cb)
{
        struct dial *d = malloc(sizeof *d);
        int rv;

        if (d == NULL) {
                return RAFT_NOMEM;
        }
        memset(d, 0, sizeof *d);
        d->raft_req = req;
        d->cb = cb;
        rv = PLAIN_OF(t)->tcp_connect(t, &d->req, id, address, dialed);
        if (rv != 0) {
                free(d); /* the callback never runs */
        }
        return rv;
}

int plaintcp_init(struct plaintcp *p, uv_loop_t *loop)
{
        int rv;

        memset(p, 0, sizeof *p);
        /* 0.22.1 refuses a transport whose version is not set first. */
        p->transport.version = 1;
        rv = raft_uv_tcp_init(&p->transport, loop);
        if (rv != 0) {
                return rv;
        }
        p->tcp_listen = p->transport.listen;
        p->tcp_connect = p->transport.connect;
        p->transport.listen = listen_wrapped;
        p->transport.connect = connect_wrapped;
        return 0;
}

void plaintcp_close(struct plaintcp *p)
{
        raft_uv_tcp_close(&p->transport);
}
