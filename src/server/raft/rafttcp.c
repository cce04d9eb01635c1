/* The TCP under both of batond's raft transports (rafttcp.h). */
#include "rafttcp.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "../base/log.h"
#include "../net/listen.h"

/* Linux 6.15's option (linux/tcp.h), which libc's headers may not have. */
#ifndef TCP_RTO_MAX_MS
#define TCP_RTO_MAX_MS 44
#endif
/* The longest a connection waits between retransmissions (the kernel's
 * least). */
#define RTO_MAX_MS 1000

/* Cap the connection's retransmission backoff. Unacknowledged data is
 * sent again at doubling intervals (up to 120 s): after a cut of a few
 * seconds, one-way cuts too, the next try came seconds after the heal,
 * and the peer heard nothing from this node until then; a node cut off
 * this way missed the next election (docs/chaos.md, "Link faults").
 * Kernels before 6.15 refuse the option and keep their backoff. */
static void cap_backoff(uv_tcp_t *tcp)
{
        uv_os_fd_t fd;
        int ms = RTO_MAX_MS;

        if (uv_fileno((uv_handle_t *)tcp, &fd) == 0) {
                (void)setsockopt(fd, IPPROTO_TCP, TCP_RTO_MAX_MS, &ms,
                                 sizeof ms);
        }
}

static void maybe_closed(struct rafttcp *rt)
{
        if (rt->closing && queue_empty(&rt->conns) && rt->handles == 0 &&
            rt->close_cb != NULL) {
                raft_uv_transport_close_cb cb = rt->close_cb;
                rt->close_cb = NULL;
                cb(rt->t);
        }
}

/* --- A connection's life -------------------------------------------------- */

static struct rafttcp_conn *conn_new(struct rafttcp *rt, bool outgoing)
{
        struct rafttcp_conn *c = raft_calloc(1, rt->ops->conn_size);

        if (c == NULL) {
                return NULL;
        }
        c->rt = rt;
        c->outgoing = outgoing;
        c->started = uv_now(rt->loop);
        snprintf(c->from, sizeof c->from, "?");
        queue_push_tail(&rt->conns, &c->link);
        return c;
}

static void maybe_release(struct rafttcp_conn *c)
{
        struct rafttcp *rt = c->rt;

        if (!c->closing || c->handles > 0) {
                return;
        }
        queue_remove(&c->link);
        rt->ops->release(c);
        raft_free(c);
        maybe_closed(rt);
}

void rafttcp_handle_closed(uv_handle_t *h)
{
        struct rafttcp_conn *c = h->data;

        c->handles--;
        maybe_release(c);
}

void rafttcp_conn_close(struct rafttcp_conn *c)
{
        c->closing = true;
        if (c->resolving) {
                uv_cancel((uv_req_t *)&c->gai); /* on_resolved() releases */
        }
        if (c->tcp_init && !uv_is_closing((uv_handle_t *)&c->tcp)) {
                uv_close((uv_handle_t *)&c->tcp, rafttcp_handle_closed);
        }
        maybe_release(c);
}

/* The descriptor of `g`, if it is still that connection (a descriptor
 * closed by raft may have been reused), else -1. */
static int given_fd(const struct rafttcp_given *g)
{
        struct sockaddr_storage local, peer;
        socklen_t ll = sizeof local, pl = sizeof peer;

        if (getsockname(g->fd, (struct sockaddr *)&local, &ll) != 0 ||
            getpeername(g->fd, (struct sockaddr *)&peer, &pl) != 0 ||
            memcmp(&local, &g->local, ll) != 0 ||
            memcmp(&peer, &g->peer, pl) != 0) {
                return -1;
        }
        return g->fd;
}

void rafttcp_conn_give(struct rafttcp_conn *c)
{
        struct rafttcp *rt = c->rt;
        struct rafttcp_given *g = &rt->given[rt->n_given % RAFTTCP_GIVEN_MAX];
        socklen_t ll = sizeof g->local, pl = sizeof g->peer;
        uv_os_fd_t fd;

        queue_remove(&c->link);
        c->req = NULL;
        memset(g, 0, sizeof *g);
        if (uv_fileno((uv_handle_t *)&c->tcp, &fd) == 0 &&
            getsockname(fd, (struct sockaddr *)&g->local, &ll) == 0 &&
            getpeername(fd, (struct sockaddr *)&g->peer, &pl) == 0) {
                g->id = c->id;
                g->fd = fd;
                rt->n_given++;
        }
}

const char *rafttcp_who(const struct rafttcp_conn *c, char *buf, size_t size)
{
        if (c->outgoing) {
                snprintf(buf, size, "connection to node %llu at %s",
                         (unsigned long long)c->id, c->address);
        } else {
                snprintf(buf, size, "connection from %s", c->from);
        }
        return buf;
}

void rafttcp_unreachable(struct rafttcp_conn *c, const char *why)
{
        peerreach_failed(&c->rt->reach, c->id, c->address, why, c->started,
                         uv_now(c->rt->loop));
}

void rafttcp_reached(struct rafttcp_conn *c)
{
        peerreach_reached(&c->rt->reach, c->id, c->address);
}

void rafttcp_set_peer_closed(struct raft_uv_transport *t,
                             void (*cb)(void *data, uint64_t id), void *data)
{
        struct rafttcp *rt = t->impl;

        rt->peer_closed = cb;
        rt->peer_closed_data = data;
}

void rafttcp_peer_closed(const struct rafttcp_conn *c)
{
        struct rafttcp *rt = c->rt;

        if (rt->peer_closed != NULL && c->id != 0 && !rt->closing) {
                rt->peer_closed(rt->peer_closed_data, c->id);
        }
}

void rafttcp_drop_peer(void *data, uint64_t id)
{
        struct rafttcp *rt = data;
        struct queue *q = queue_head(&rt->conns);
        unsigned i;

        while (q != &rt->conns) {
                struct rafttcp_conn *c =
                    QUEUE_DATA(q, struct rafttcp_conn, link);
                q = q->next;
                if (c->id == id && !c->closing) {
                        rt->ops->drop(c, RAFT_NOCONNECTION);
                }
        }
        for (i = 0; i < RAFTTCP_GIVEN_MAX; i++) {
                if (rt->given[i].id == id && given_fd(&rt->given[i]) >= 0) {
                        shutdown(rt->given[i].fd, SHUT_RDWR);
                }
                if (rt->given[i].id == id) {
                        rt->given[i].id = 0;
                }
        }
}

/* Say why (`why` NULL: nothing worth saying) and have the transport drop
 * `c`. */
static void fail(struct rafttcp_conn *c, int status, enum log_level level,
                 const char *why)
{
        char name[128];

        if (why != NULL) {
                log_write(level, "raft %s: %s",
                          rafttcp_who(c, name, sizeof name), why);
        }
        c->rt->ops->drop(c, status);
}

/* --- Dialling ------------------------------------------------------------- */

static void on_connected(uv_connect_t *req, int status)
{
        struct rafttcp_conn *c = req->data;
        char why[PEERREACH_WHY_MAX];

        if (c->closing) {
                return;
        }
        if (status != 0) {
                rafttcp_unreachable(c, peerreach_why(status, why, sizeof why));
                fail(c, RAFT_NOCONNECTION, LOG_DEBUG, why);
                return;
        }
        uv_tcp_nodelay(&c->tcp, 1);
        cap_backoff(&c->tcp);
        c->rt->ops->connected(c);
}

static void on_resolved(uv_getaddrinfo_t *req, int status, struct addrinfo *res)
{
        struct rafttcp_conn *c = req->data;
        char why[128];
        int rv;

        c->resolving = false;
        c->handles--;
        if (c->closing) {
                uv_freeaddrinfo(res);
                maybe_release(c);
                return;
        }
        if (status != 0 || res == NULL) {
                uv_freeaddrinfo(res);
                snprintf(why, sizeof why, "name does not resolve (%s)",
                         uv_strerror(status));
                rafttcp_unreachable(c, why);
                fail(c, RAFT_NOCONNECTION, LOG_DEBUG, why);
                return;
        }
        uv_tcp_init(c->rt->loop, &c->tcp);
        c->tcp.data = c;
        c->tcp_init = true;
        c->handles++;
        c->connect.data = c;
        /* The first address: raft dials again anyway. */
        rv = uv_tcp_connect(&c->connect, &c->tcp, res->ai_addr, on_connected);
        uv_freeaddrinfo(res);
        if (rv != 0) {
                rafttcp_unreachable(c, peerreach_why(rv, why, sizeof why));
                fail(c, RAFT_NOCONNECTION, LOG_DEBUG, why);
        }
}

static int rt_connect(struct raft_uv_transport *t, struct raft_uv_connect *req,
                      raft_id id, const char *address, raft_uv_connect_cb cb)
{
        static const struct addrinfo hints = {.ai_socktype = SOCK_STREAM};
        struct rafttcp *rt = t->impl;
        struct address a;
        struct rafttcp_conn *c;

        if (address_parse(address, &a) != 0) {
                snprintf(t->errmsg, sizeof t->errmsg, "bad address %s",
                         address);
                return RAFT_NOCONNECTION;
        }
        c = conn_new(rt, true);
        if (c == NULL) {
                return RAFT_NOMEM;
        }
        c->id = id;
        snprintf(c->address, sizeof c->address, "%s", address);
        c->gai.data = c;
        if (uv_getaddrinfo(rt->loop, &c->gai, on_resolved, a.host, a.service,
                           &hints) != 0) {
                queue_remove(&c->link);
                raft_free(c);
                return RAFT_NOCONNECTION;
        }
        c->resolving = true;
        c->handles++;
        /* As libraft's own TCP transport keeps it. */
        req->cb = cb;
        c->req = req;
        c->cb = cb;
        return 0;
}

/* --- Accepting ------------------------------------------------------------ */

static void on_accept(uv_stream_t *listener, int status)
{
        struct rafttcp *rt = listener->data;
        struct sockaddr_storage sa;
        int len = sizeof sa;
        struct rafttcp_conn *c;

        if (status != 0 || rt->closing || (c = conn_new(rt, false)) == NULL) {
                return;
        }
        uv_tcp_init(rt->loop, &c->tcp);
        c->tcp.data = c;
        c->tcp_init = true;
        c->handles++;
        if (uv_accept(listener, (uv_stream_t *)&c->tcp) != 0) {
                fail(c, 0, LOG_DEBUG, NULL);
                return;
        }
        if (uv_tcp_getpeername(&c->tcp, (struct sockaddr *)&sa, &len) == 0) {
                uv_ip_name((struct sockaddr *)&sa, c->from, sizeof c->from);
        }
        uv_tcp_nodelay(&c->tcp, 1);
        cap_backoff(&c->tcp);
        rt->ops->accepted(c);
}

static void on_sweep(uv_timer_t *timer)
{
        struct rafttcp *rt = timer->data;
        uint64_t now = uv_now(rt->loop);
        struct queue *q = queue_head(&rt->conns);

        while (q != &rt->conns) {
                struct rafttcp_conn *c =
                    QUEUE_DATA(q, struct rafttcp_conn, link);
                q = q->next;
                if (!c->closing && now - c->started >= rt->handshake_ms) {
                        rt->ops->late(c);
                }
        }
}

static int rt_listen(struct raft_uv_transport *t, raft_uv_accept_cb cb)
{
        struct rafttcp *rt = t->impl;
        uint64_t period = rt->handshake_ms < 1000 ? rt->handshake_ms : 1000;
        const char *at = rt->listen[0] != '\0' ? rt->listen : rt->address;

        rt->accept_cb = cb;
        if (listen_tcp(rt->loop, &rt->listener, at, 128, on_accept, "raft") !=
            0) {
                snprintf(t->errmsg, sizeof t->errmsg, "cannot listen on %s",
                         at);
                return RAFT_IOERR;
        }
        rt->listener.data = rt;
        rt->listening = true;
        rt->handles++;
        uv_timer_init(rt->loop, &rt->sweep);
        rt->sweep.data = rt;
        uv_timer_start(&rt->sweep, on_sweep, period, period);
        rt->handles++;
        return 0;
}

/* --- The transport -------------------------------------------------------- */

static int rt_init(struct raft_uv_transport *t, raft_id id, const char *address)
{
        struct rafttcp *rt = t->impl;

        rt->id = id;
        snprintf(rt->address, sizeof rt->address, "%s", address);
        return 0;
}

static void on_own_closed(uv_handle_t *h)
{
        struct rafttcp *rt = h->data;

        rt->handles--;
        maybe_closed(rt);
}

static void rt_close(struct raft_uv_transport *t, raft_uv_transport_close_cb cb)
{
        struct rafttcp *rt = t->impl;
        struct queue *q;

        rt->closing = true;
        rt->close_cb = cb;
        if (rt->listening) {
                rt->listening = false;
                uv_close((uv_handle_t *)&rt->listener, on_own_closed);
                uv_close((uv_handle_t *)&rt->sweep, on_own_closed);
        }
        q = queue_head(&rt->conns);
        while (q != &rt->conns) {
                struct rafttcp_conn *c =
                    QUEUE_DATA(q, struct rafttcp_conn, link);
                q = q->next;
                rt->ops->drop(c, RAFT_CANCELED);
        }
        maybe_closed(rt);
}

void rafttcp_init(struct rafttcp *rt, struct raft_uv_transport *t,
                  uv_loop_t *loop, unsigned handshake_ms, const char *listen,
                  const struct rafttcp_ops *ops)
{
        rt->t = t;
        rt->loop = loop;
        rt->ops = ops;
        rt->handshake_ms = handshake_ms;
        snprintf(rt->listen, sizeof rt->listen, "%s",
                 listen != NULL ? listen : "");
        queue_init(&rt->conns);
        /* 0.22.1 refuses a transport whose version is not set. */
        t->version = 1;
        t->impl = rt;
        t->init = rt_init;
        t->listen = rt_listen;
        t->connect = rt_connect;
        t->close = rt_close;
}
