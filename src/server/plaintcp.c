/* The raft transport with tls = off (plaintcp.h). */
#include "plaintcp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "../lib/address.h"
#include "../lib/cursor.h"
#include "../lib/queue.h"
#include "listen.h"
#include "log.h"
#include "peercheck.h"
#include "rafthello.h"

#define PROTOCOL 1  /* libraft's UV__TCP_HANDSHAKE_PROTOCOL */
#define PREAMBLE 24 /* protocol, id, length of the address field */
/* The longest address field accepted: an address, its NUL, the addition,
 * padding; libraft's own fields are at most ADDRESS_MAX + 8. */
#define FIELD_MAX 256

/* The transport: what raft told it, its listener and the connections
 * raft does not have yet. */
struct plain {
        struct raft_uv_transport *t;
        uv_loop_t *loop;
        struct peercheck *check;
        unsigned handshake_ms;
        raft_id id;
        char address[ADDRESS_MAX + 1];
        raft_uv_accept_cb accept_cb;
        uv_tcp_t listener;
        uv_timer_t sweep; /* handshake deadlines */
        unsigned handles; /* listener and timer not yet closed */
        unsigned n_conns; /* allocated and not yet raft's */
        bool listening;
        bool closing;
        raft_uv_transport_close_cb close_cb;
        struct queue conns;
};

/* One connection until raft has it. Its first member is the stream raft
 * gets: raft frees the whole with raft_free once it has closed it, and a
 * dialled one reads the verdict in it meanwhile. */
struct conn {
        uv_tcp_t tcp;
        struct plain *p;
        struct queue link; /* p->conns, until raft's */
        bool outgoing;
        bool closing;
        bool resolving;
        bool tcp_init;
        bool awaiting; /* dialled with the addition: read the verdict */
        int status;    /* for raft's connect callback, once closed */
        raft_id id;
        char address[ADDRESS_MAX + 1];
        char from[64];
        uint64_t started;
        struct raft_uv_connect *req;
        raft_uv_connect_cb cb;
        uv_getaddrinfo_t gai;
        uv_connect_t connect;
        uv_write_t write;
        uint8_t buf[PREAMBLE + FIELD_MAX]; /* the handshake, out or in */
        size_t len, need;
        struct rafthello_in in; /* the verdict */
};

/* A verdict being written: its own memory, since raft may free the
 * connection first. */
struct wverdict {
        uv_write_t req;
        struct conn *refused; /* closed once written; NULL: raft's now */
        uint8_t bytes[RAFTHELLO_VERDICT_LEN];
};

#define PLAIN(t) ((struct plain *)(t)->impl)

static void maybe_closed(struct plain *p)
{
        if (p->closing && p->n_conns == 0 && p->handles == 0 &&
            p->close_cb != NULL) {
                raft_uv_transport_close_cb cb = p->close_cb;
                p->close_cb = NULL;
                cb(p->t);
        }
}

/* --- Connections before raft has them ------------------------------------ */

static struct conn *conn_new(struct plain *p, bool outgoing)
{
        struct conn *c = raft_malloc(sizeof *c);

        if (c == NULL) {
                return NULL;
        }
        memset(c, 0, sizeof *c);
        c->p = p;
        c->outgoing = outgoing;
        c->started = uv_now(p->loop);
        snprintf(c->from, sizeof c->from, "?");
        queue_push_tail(&p->conns, &c->link);
        p->n_conns++;
        return c;
}

static void finish(struct conn *c)
{
        struct plain *p = c->p;

        queue_remove(&c->link);
        if (c->req != NULL) {
                c->cb(c->req, NULL, c->status);
        }
        raft_free(c);
        p->n_conns--;
        maybe_closed(p);
}

static void on_closed(uv_handle_t *h)
{
        finish((struct conn *)h);
}

/* Close a connection raft does not have; a dialled one's request gets
 * `status`. */
static void drop(struct conn *c, int status)
{
        if (c->closing) {
                return;
        }
        c->closing = true;
        c->status = status;
        if (c->resolving) {
                uv_cancel((uv_req_t *)&c->gai); /* on_resolved() finishes */
        } else if (c->tcp_init) {
                uv_close((uv_handle_t *)&c->tcp, on_closed);
        } else {
                finish(c);
        }
}

/* Raft takes it from here. */
static void hand_over(struct conn *c)
{
        queue_remove(&c->link);
        queue_init(&c->link);
        c->p->n_conns--;
        c->req = NULL;
}

static void on_alloc(uv_handle_t *h, size_t hint, uv_buf_t *buf)
{
        struct conn *c = (struct conn *)h;

        (void)hint;
        /* Exactly what the handshake still lacks, so that none of raft's
         * bytes is read here. */
        buf->base = (char *)c->buf + c->len;
        buf->len = c->need - c->len;
}

/* --- Accepting -------------------------------------------------------------
 */

static void on_verdict_written(uv_write_t *req, int status)
{
        struct wverdict *w = req->data;

        (void)status;
        if (w->refused != NULL) {
                drop(w->refused, 0);
        }
        free(w);
}

/* Answer the hello's addition; a refused connection closes once the
 * verdict is written. */
static void answer(struct conn *c, const struct rafthello_verdict *v,
                   bool refused)
{
        struct wverdict *w = malloc(sizeof *w);
        uv_buf_t buf;

        if (w == NULL) {
                drop(c, 0);
                return;
        }
        w->req.data = w;
        w->refused = refused ? c : NULL;
        rafthello_verdict_encode(w->bytes, v);
        buf = uv_buf_init((char *)w->bytes, sizeof w->bytes);
        if (uv_write(&w->req, (uv_stream_t *)&c->tcp, &buf, 1,
                     on_verdict_written) != 0) {
                free(w);
                if (refused) {
                        drop(c, 0);
                }
        }
}

/* The whole handshake arrived: check the addition, answer, and give raft
 * the connection unless refused. */
static void greeted(struct conn *c)
{
        struct plain *p = c->p;
        struct rafthello_verdict v;
        struct rafthello_ext ext;
        bool has_ext, ok = true;

        if (rafthello_split(c->buf + PREAMBLE, c->need - PREAMBLE, c->address,
                            sizeof c->address, &ext, &has_ext) != 0) {
                log_warn("raft connection from %s: refused: a malformed "
                         "address in its handshake",
                         c->from);
                drop(c, 0);
                return;
        }
        if (p->check != NULL) {
                ok = peercheck_incoming(p->check, c->id, c->from, &ext, has_ext,
                                        uv_now(p->loop), &v);
                if (has_ext) {
                        answer(c, &v, !ok);
                }
        }
        if (!ok) {
                if (!has_ext) {
                        drop(c, 0);
                }
                return;
        }
        hand_over(c);
        log_debug("raft connection from %s: node %llu at %s", c->from,
                  (unsigned long long)c->id, c->address);
        p->accept_cb(p->t, c->id, c->address, (uv_stream_t *)&c->tcp);
}

/* The preamble is whole: how long the address field is. */
static int preamble(struct conn *c)
{
        struct rcursor r;
        uint64_t protocol, len;

        rcursor_init(&r, c->buf, PREAMBLE);
        protocol = rcursor_u64(&r);
        c->id = rcursor_u64(&r);
        len = rcursor_u64(&r);
        if (protocol != PROTOCOL || c->id == 0 || len == 0 || len > FIELD_MAX) {
                log_warn("raft connection from %s: refused: not a raft "
                         "handshake",
                         c->from);
                return -1;
        }
        c->need = PREAMBLE + (size_t)len;
        return 0;
}

static void on_handshake(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
        struct conn *c = (struct conn *)s;

        (void)buf;
        if (c->closing || n == 0) {
                return;
        }
        if (n < 0) {
                drop(c, 0);
                return;
        }
        c->len += (size_t)n;
        if (c->len < c->need) {
                return;
        }
        if (c->need == PREAMBLE) {
                if (preamble(c) != 0) {
                        drop(c, 0);
                }
                return;
        }
        uv_read_stop(s);
        greeted(c);
}

static void on_accept(uv_stream_t *listener, int status)
{
        struct plain *p = listener->data;
        struct sockaddr_storage sa;
        int len = sizeof sa;
        struct conn *c;

        if (status != 0 || p->closing || (c = conn_new(p, false)) == NULL) {
                return;
        }
        uv_tcp_init(p->loop, &c->tcp);
        c->tcp_init = true;
        if (uv_accept(listener, (uv_stream_t *)&c->tcp) != 0) {
                drop(c, 0);
                return;
        }
        if (uv_tcp_getpeername(&c->tcp, (struct sockaddr *)&sa, &len) == 0) {
                uv_ip_name((struct sockaddr *)&sa, c->from, sizeof c->from);
        }
        uv_tcp_nodelay(&c->tcp, 1);
        c->need = PREAMBLE;
        uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_handshake);
}

/* --- Dialling --------------------------------------------------------------
 */

static void on_verdict_alloc(uv_handle_t *h, size_t hint, uv_buf_t *buf)
{
        struct conn *c = (struct conn *)h;

        (void)hint;
        buf->base = (char *)c->buf;
        buf->len = sizeof c->buf;
}

/* The answer to our hello, on the connection raft writes on. A refusal
 * (ours or theirs) shuts it down: raft's next write fails, and raft dials
 * again later, as after any lost connection. */
static void on_verdict(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
        struct conn *c = (struct conn *)s;
        struct rafthello_verdict v;
        bool done = false;
        uv_os_fd_t fd;
        long used = 0;

        if (n == 0) {
                return;
        }
        if (n > 0) {
                used = rafthello_verdict_take(
                    &c->in, (const uint8_t *)buf->base, (size_t)n, &done, &v);
        }
        if (n > 0 && used >= 0 && !done) {
                return;
        }
        uv_read_stop(s);
        if (n < 0) {
                return; /* raft finds out when it writes */
        }
        if (used < 0) {
                log_warn("raft connection to node %llu: its answer to the "
                         "hello is not a verdict",
                         (unsigned long long)c->id);
        }
        if ((used < 0 ||
             !peercheck_verdict(c->p->check, c->id, &v, uv_now(c->p->loop))) &&
            uv_fileno((uv_handle_t *)s, &fd) == 0) {
                shutdown(fd, SHUT_RDWR);
        }
}

static void on_handshake_written(uv_write_t *req, int status)
{
        struct conn *c = req->data;
        struct raft_uv_connect *raft_req = c->req;
        raft_uv_connect_cb cb = c->cb;

        if (c->closing) {
                return;
        }
        if (status != 0) {
                drop(c, RAFT_NOCONNECTION);
                return;
        }
        hand_over(c);
        if (c->awaiting) {
                uv_read_start((uv_stream_t *)&c->tcp, on_verdict_alloc,
                              on_verdict);
        }
        cb(raft_req, (uv_stream_t *)&c->tcp, 0);
}

/* libraft's handshake, with the addition inside the address field. */
static size_t handshake(struct conn *c)
{
        struct plain *p = c->p;
        struct rafthello_ext ext;
        struct wcursor w;
        size_t len;

        if (p->check != NULL) {
                peercheck_ext(p->check, &ext);
        }
        memset(c->buf, 0, sizeof c->buf);
        len = rafthello_own_field(c->buf + PREAMBLE, FIELD_MAX - 8, p->address,
                                  p->check != NULL ? &ext : NULL, &c->awaiting);
        len = (len + 1 + 7) / 8 * 8; /* a NUL, then padding */
        wcursor_init(&w, c->buf, PREAMBLE);
        wcursor_u64(&w, PROTOCOL);
        wcursor_u64(&w, p->id);
        wcursor_u64(&w, len);
        return PREAMBLE + len;
}

static void on_connected(uv_connect_t *req, int status)
{
        struct conn *c = req->data;
        uv_buf_t buf;

        if (c->closing) {
                return;
        }
        if (status != 0) {
                log_debug("raft connection to node %llu at %s: %s",
                          (unsigned long long)c->id, c->address,
                          uv_strerror(status));
                drop(c, RAFT_NOCONNECTION);
                return;
        }
        uv_tcp_nodelay(&c->tcp, 1);
        buf = uv_buf_init((char *)c->buf, (unsigned)handshake(c));
        c->write.data = c;
        if (uv_write(&c->write, (uv_stream_t *)&c->tcp, &buf, 1,
                     on_handshake_written) != 0) {
                drop(c, RAFT_NOCONNECTION);
        }
}

static void on_resolved(uv_getaddrinfo_t *req, int status, struct addrinfo *res)
{
        struct conn *c = req->data;
        int rv;

        c->resolving = false;
        if (c->closing) {
                uv_freeaddrinfo(res);
                finish(c);
                return;
        }
        if (status != 0 || res == NULL) {
                log_warn("raft connection to node %llu at %s: cannot "
                         "resolve: %s",
                         (unsigned long long)c->id, c->address,
                         uv_strerror(status));
                uv_freeaddrinfo(res);
                drop(c, RAFT_NOCONNECTION);
                return;
        }
        uv_tcp_init(c->p->loop, &c->tcp);
        c->tcp_init = true;
        c->connect.data = c;
        /* The first address: raft dials again anyway. */
        rv = uv_tcp_connect(&c->connect, &c->tcp, res->ai_addr, on_connected);
        uv_freeaddrinfo(res);
        if (rv != 0) {
                drop(c, RAFT_NOCONNECTION);
        }
}

static int plain_connect(struct raft_uv_transport *t,
                         struct raft_uv_connect *req, raft_id id,
                         const char *address, raft_uv_connect_cb cb)
{
        static const struct addrinfo hints = {.ai_socktype = SOCK_STREAM};
        struct plain *p = PLAIN(t);
        struct address a;
        struct conn *c;

        if (address_parse(address, &a) != 0) {
                snprintf(t->errmsg, sizeof t->errmsg, "bad address %s",
                         address);
                return RAFT_NOCONNECTION;
        }
        c = conn_new(p, true);
        if (c == NULL) {
                return RAFT_NOMEM;
        }
        c->id = id;
        snprintf(c->address, sizeof c->address, "%s", address);
        c->gai.data = c;
        if (uv_getaddrinfo(p->loop, &c->gai, on_resolved, a.host, a.service,
                           &hints) != 0) {
                queue_remove(&c->link);
                raft_free(c);
                p->n_conns--;
                return RAFT_NOCONNECTION;
        }
        c->resolving = true;
        c->req = req;
        c->cb = cb;
        return 0;
}

/* --- The transport ----------------------------------------------------------
 */

static void on_sweep(uv_timer_t *timer)
{
        struct plain *p = timer->data;
        uint64_t now = uv_now(p->loop);
        struct queue *q = queue_head(&p->conns);

        while (q != &p->conns) {
                struct conn *c = QUEUE_DATA(q, struct conn, link);
                q = q->next;
                if (!c->closing && now - c->started >= p->handshake_ms) {
                        log_warn("raft connection %s %s: no handshake within "
                                 "%u ms",
                                 c->outgoing ? "to" : "from",
                                 c->outgoing ? c->address : c->from,
                                 p->handshake_ms);
                        drop(c, RAFT_NOCONNECTION);
                }
        }
}

static int plain_listen(struct raft_uv_transport *t, raft_uv_accept_cb cb)
{
        struct plain *p = PLAIN(t);
        uint64_t period = p->handshake_ms < 1000 ? p->handshake_ms : 1000;

        p->accept_cb = cb;
        if (listen_tcp(p->loop, &p->listener, p->address, 128, on_accept,
                       "raft") != 0) {
                snprintf(t->errmsg, sizeof t->errmsg, "cannot listen on %s",
                         p->address);
                return RAFT_IOERR;
        }
        p->listener.data = p;
        p->listening = true;
        p->handles++;
        uv_timer_init(p->loop, &p->sweep);
        p->sweep.data = p;
        uv_timer_start(&p->sweep, on_sweep, period, period);
        p->handles++;
        return 0;
}

static int plain_init_cb(struct raft_uv_transport *t, raft_id id,
                         const char *address)
{
        struct plain *p = PLAIN(t);

        p->id = id;
        snprintf(p->address, sizeof p->address, "%s", address);
        return 0;
}

static void on_own_closed(uv_handle_t *h)
{
        struct plain *p = h->data;

        p->handles--;
        maybe_closed(p);
}

static void plain_close(struct raft_uv_transport *t,
                        raft_uv_transport_close_cb cb)
{
        struct plain *p = PLAIN(t);
        struct queue *q;

        p->closing = true;
        p->close_cb = cb;
        if (p->listening) {
                p->listening = false;
                uv_close((uv_handle_t *)&p->listener, on_own_closed);
                uv_close((uv_handle_t *)&p->sweep, on_own_closed);
        }
        q = queue_head(&p->conns);
        while (q != &p->conns) {
                struct conn *c = QUEUE_DATA(q, struct conn, link);
                q = q->next;
                drop(c, RAFT_CANCELED);
        }
        maybe_closed(p);
}

int plaintcp_init(struct plaintcp *pt, uv_loop_t *loop, struct peercheck *check,
                  unsigned handshake_ms)
{
        struct raft_uv_transport *t = &pt->transport;
        struct plain *p = calloc(1, sizeof *p);

        memset(pt, 0, sizeof *pt);
        if (p == NULL) {
                return RAFT_NOMEM;
        }
        p->t = t;
        p->loop = loop;
        p->check = check;
        p->handshake_ms = handshake_ms;
        queue_init(&p->conns);
        /* 0.22.1 refuses a transport whose version is not set. */
        t->version = 1;
        t->impl = p;
        t->init = plain_init_cb;
        t->listen = plain_listen;
        t->connect = plain_connect;
        t->close = plain_close;
        return 0;
}

void plaintcp_close(struct plaintcp *pt)
{
        free(PLAIN(&pt->transport));
        pt->transport.impl = NULL;
}
