/* batond's raft transport with TLS (see peer.h). */
#include "peer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../../include/baton.h"
#include "../lib/address.h"
#include "../lib/queue.h"
#include "../tls/tls.h"
#include "listen.h"
#include "log.h"
#include "peercheck.h"
#include "rafthello.h"
#include "tlsconfig.h"

#define QUEUED_MAX (4u << 20) /* bytes queued on a side before pausing */

/* The transport: what raft told it, its credentials and its tunnels. */
struct peer {
        struct raft_uv_transport *t;
        uv_loop_t *loop;
        const struct config *cfg;
        struct peercheck *check; /* NULL: no data directory checks */
        raft_id id;
        char address[ADDRESS_MAX + 1];
        struct tls_ctx *server; /* accepting: require a cluster certificate */
        struct tls_ctx *client; /* dialling */
        raft_uv_accept_cb accept_cb;
        uv_tcp_t listener;
        uv_timer_t sweep; /* connection deadlines */
        unsigned handles; /* listener and timer not yet closed */
        bool listening;
        bool closing;
        raft_uv_transport_close_cb close_cb;
        struct queue tunnels;
        uint8_t rbuf[65536]; /* reads are handled one at a time */
};

enum phase {
        DIALING,  /* resolving, then connecting TCP */
        SECURING, /* the TLS handshake */
        GREETING, /* accepting: waiting for the hello */
        OPEN,     /* raft has its end; bytes flow */
        CLOSING,
};

/* One peer connection: TCP and TLS on one side, our end of the socketpair
 * whose other end raft has on the other. */
struct tunnel {
        struct peer *p;
        struct queue link; /* p->tunnels */
        enum phase phase;
        bool outgoing;
        raft_id id;                    /* dialled, or claimed in the hello */
        char address[ADDRESS_MAX + 1]; /* dialled, or from the hello */
        char from[64];                 /* accepting: the TCP peer, for logs */
        struct raft_uv_connect *req;   /* dialling, until answered */
        raft_uv_connect_cb cb;
        uv_getaddrinfo_t gai;
        uv_connect_t connect;
        uv_tcp_t tcp;
        uv_pipe_t pipe;   /* our end of the socketpair */
        unsigned handles; /* open handles and pending lookups */
        bool resolving;   /* the address lookup runs */
        bool tcp_init;    /* tcp is a handle to close */
        bool draining;    /* refused: the alert is being sent, then close */
        bool tcp_paused;  /* reading TCP waits for the pipe to drain */
        bool pipe_paused; /* reading the pipe waits for TCP to drain */
        bool pipe_open;
        struct tls_conn *tls;
        uint64_t started;
        /* Accepting: the hello as it arrives, and its addition. Dialling:
         * the verdict as it arrives, when the hello had an addition. */
        struct rafthello_in in;
        struct rafthello_hello hello;
        bool awaiting_verdict;
};

/* One write and its bytes. */
struct wreq {
        uv_write_t req;
        struct tunnel *tn;
        bool last; /* close the tunnel once written (an alert) */
        uint8_t bytes[];
};

#define PEER(t) ((struct peer *)(t)->impl)

static void maybe_closed(struct peer *p)
{
        if (p->closing && queue_empty(&p->tunnels) && p->handles == 0 &&
            p->close_cb != NULL) {
                raft_uv_transport_close_cb cb = p->close_cb;
                p->close_cb = NULL;
                cb(p->t);
        }
}

/* --- Ending a tunnel ------------------------------------------------------ */

static void maybe_free(struct tunnel *tn)
{
        struct peer *p = tn->p;

        if (tn->phase != CLOSING || tn->handles > 0) {
                return;
        }
        queue_remove(&tn->link);
        tls_conn_destroy(tn->tls);
        free(tn);
        maybe_closed(p);
}

static void on_handle_closed(uv_handle_t *h)
{
        struct tunnel *tn = h->data;

        tn->handles--;
        maybe_free(tn);
}

/* Answer raft's connect request, once. */
static void report(struct tunnel *tn, uv_stream_t *stream, int status)
{
        struct raft_uv_connect *req = tn->req;

        if (req != NULL) {
                tn->req = NULL;
                tn->cb(req, stream, status);
        }
}

static const char *who(const struct tunnel *tn, char *buf, size_t size)
{
        if (tn->outgoing) {
                snprintf(buf, size, "connection to node %llu at %s",
                         (unsigned long long)tn->id, tn->address);
        } else {
                snprintf(buf, size, "connection from %s", tn->from);
        }
        return buf;
}

/*
 * Close the tunnel: raft's pending connect gets `status`, both handles
 * close (raft sees EOF on its end), and `why` (NULL: nothing worth saying)
 * is logged at `level`.
 */
static void fail(struct tunnel *tn, int status, enum log_level level,
                 const char *why)
{
        char name[128];

        if (tn->phase == CLOSING) {
                return;
        }
        if (why != NULL) {
                log_write(level, "raft %s: %s", who(tn, name, sizeof name),
                          why);
        }
        tn->phase = CLOSING;
        report(tn, NULL, status);
        if (tn->resolving) {
                uv_cancel((uv_req_t *)&tn->gai); /* its callback frees */
        }
        if (tn->tcp_init && !uv_is_closing((uv_handle_t *)&tn->tcp)) {
                uv_close((uv_handle_t *)&tn->tcp, on_handle_closed);
        }
        if (tn->pipe_open && !uv_is_closing((uv_handle_t *)&tn->pipe)) {
                uv_close((uv_handle_t *)&tn->pipe, on_handle_closed);
        }
        maybe_free(tn);
}

static void flush_tls(struct tunnel *tn, bool last);

/* TLS refused the peer, or the peer us: say why, answer raft, send the
 * alert TLS has for the peer, and close once it is written. */
static void refuse(struct tunnel *tn, enum log_level level, const char *why)
{
        char name[128];

        if (why != NULL) {
                log_write(level, "raft %s: %s", who(tn, name, sizeof name),
                          why);
        }
        report(tn, NULL, RAFT_NOCONNECTION);
        if (tn->tcp_init && tls_pending(tn->tls) > 0) {
                tn->draining = true;
                uv_read_stop((uv_stream_t *)&tn->tcp);
                flush_tls(tn, true);
                return;
        }
        fail(tn, RAFT_NOCONNECTION, LOG_DEBUG, NULL);
}

/* --- Writing ----------------------------------------------------------------
 */

static void on_tcp_written(uv_write_t *req, int status);
static void on_pipe_written(uv_write_t *req, int status);

static struct wreq *wreq_new(struct tunnel *tn, size_t n)
{
        struct wreq *w = malloc(sizeof *w + n);

        if (w != NULL) {
                w->tn = tn;
                w->last = false;
                w->req.data = w;
        }
        return w;
}

/* Send what TLS has to say (records, handshake messages, alerts). */
static void flush_tls(struct tunnel *tn, bool last)
{
        size_t n = tls_pending(tn->tls);
        struct wreq *w;
        uv_buf_t buf;

        if (n == 0 || uv_is_closing((uv_handle_t *)&tn->tcp)) {
                return;
        }
        w = wreq_new(tn, n);
        if (w == NULL) {
                fail(tn, RAFT_NOCONNECTION, LOG_WARN, "out of memory");
                return;
        }
        w->last = last;
        buf = uv_buf_init((char *)w->bytes,
                          (unsigned)tls_take(tn->tls, w->bytes, n));
        if (uv_write(&w->req, (uv_stream_t *)&tn->tcp, &buf, 1,
                     on_tcp_written) != 0) {
                free(w);
                fail(tn, RAFT_NOCONNECTION, LOG_DEBUG, NULL);
                return;
        }
        /* Raft writes faster than the peer reads: stop taking its bytes. */
        if (tn->pipe_open && !tn->pipe_paused &&
            uv_stream_get_write_queue_size((uv_stream_t *)&tn->tcp) >
                QUEUED_MAX) {
                tn->pipe_paused = true;
                uv_read_stop((uv_stream_t *)&tn->pipe);
        }
}

static void on_pipe_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf);
static void on_tcp_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf);
static void on_alloc(uv_handle_t *h, size_t hint, uv_buf_t *buf);

static void on_tcp_written(uv_write_t *req, int status)
{
        struct wreq *w = req->data;
        struct tunnel *tn = w->tn;
        bool last = w->last;

        free(w);
        if (tn->phase == CLOSING) {
                return;
        }
        if (status != 0 || last) {
                fail(tn, RAFT_NOCONNECTION, LOG_DEBUG, NULL);
                return;
        }
        if (tn->pipe_paused && uv_stream_get_write_queue_size(
                                   (uv_stream_t *)&tn->tcp) < QUEUED_MAX / 2) {
                tn->pipe_paused = false;
                uv_read_start((uv_stream_t *)&tn->pipe, on_alloc, on_pipe_read);
        }
}

/* Plaintext from the peer, for raft. */
static void to_raft(struct tunnel *tn, const uint8_t *p, size_t n)
{
        struct wreq *w = wreq_new(tn, n);
        uv_buf_t buf;

        if (w == NULL) {
                fail(tn, RAFT_NOCONNECTION, LOG_WARN, "out of memory");
                return;
        }
        memcpy(w->bytes, p, n);
        buf = uv_buf_init((char *)w->bytes, (unsigned)n);
        if (uv_write(&w->req, (uv_stream_t *)&tn->pipe, &buf, 1,
                     on_pipe_written) != 0) {
                free(w);
                fail(tn, RAFT_NOCONNECTION, LOG_DEBUG, NULL);
                return;
        }
        if (!tn->tcp_paused && uv_stream_get_write_queue_size(
                                   (uv_stream_t *)&tn->pipe) > QUEUED_MAX) {
                tn->tcp_paused = true;
                uv_read_stop((uv_stream_t *)&tn->tcp);
        }
}

static void on_pipe_written(uv_write_t *req, int status)
{
        struct wreq *w = req->data;
        struct tunnel *tn = w->tn;

        free(w);
        if (tn->phase == CLOSING) {
                return;
        }
        if (status != 0) {
                fail(tn, RAFT_NOCONNECTION, LOG_DEBUG, NULL);
                return;
        }
        if (tn->tcp_paused && uv_stream_get_write_queue_size(
                                  (uv_stream_t *)&tn->pipe) < QUEUED_MAX / 2) {
                tn->tcp_paused = false;
                uv_read_start((uv_stream_t *)&tn->tcp, on_alloc, on_tcp_read);
        }
}

/* --- Raft's end ----------------------------------------------------------- */

static void on_alloc(uv_handle_t *h, size_t hint, uv_buf_t *buf)
{
        struct tunnel *tn = h->data;

        (void)hint;
        buf->base = (char *)tn->p->rbuf;
        buf->len = sizeof tn->p->rbuf;
}

/* Raft wrote to its end: seal it for the peer. Raft closing its end (EOF)
 * ends the tunnel. */
static void on_pipe_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
        struct tunnel *tn = s->data;

        if (tn->draining) {
                return;
        }
        if (n < 0) {
                fail(tn, RAFT_NOCONNECTION, LOG_DEBUG, NULL);
                return;
        }
        if (tls_write(tn->tls, (const uint8_t *)buf->base, (size_t)n) != 0) {
                fail(tn, RAFT_NOCONNECTION, LOG_WARN, tls_errmsg(tn->tls));
                return;
        }
        flush_tls(tn, false);
}

/* A socketpair: one end for raft in `*raft_end` (allocated with
 * raft_malloc, as raft frees it), the other read here. 0 or -1. */
static int open_pipe(struct tunnel *tn, uv_pipe_t **raft_end)
{
        uv_loop_t *loop = tn->p->loop;
        uv_pipe_t *r = raft_malloc(sizeof *r);
        int fds[2];

        if (r == NULL) {
                return -1;
        }
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
                raft_free(r);
                return -1;
        }
        uv_pipe_init(loop, r, 0);
        if (uv_pipe_open(r, fds[0]) != 0) {
                close(fds[0]);
                close(fds[1]);
                uv_close((uv_handle_t *)r, (uv_close_cb)raft_free);
                return -1;
        }
        uv_pipe_init(loop, &tn->pipe, 0);
        tn->pipe.data = tn;
        tn->pipe_open = true;
        tn->handles++;
        if (uv_pipe_open(&tn->pipe, fds[1]) != 0) {
                close(fds[1]);
                uv_close((uv_handle_t *)r, (uv_close_cb)raft_free);
                return -1; /* the caller's fail() closes our end */
        }
        uv_read_start((uv_stream_t *)&tn->pipe, on_alloc, on_pipe_read);
        *raft_end = r;
        return 0;
}

/* --- The hello ------------------------------------------------------------ */

/* The hello's addition passed the data directory checks (peercheck.h)?
 * The verdict goes back first when the dialling node sent one. Refused:
 * the verdict is sent and the connection closes without raft. */
static bool checked(struct tunnel *tn)
{
        struct peer *p = tn->p;
        struct rafthello_verdict v;
        uint8_t buf[RAFTHELLO_VERDICT_LEN];
        bool ok;

        if (p->check == NULL) {
                return true;
        }
        ok = peercheck_incoming(p->check, tn->id, tn->from, &tn->hello.ext,
                                tn->hello.has_ext, uv_now(p->loop), &v);
        if (!tn->hello.has_ext) {
                return ok;
        }
        rafthello_verdict_encode(buf, &v);
        if (tls_write(tn->tls, buf, sizeof buf) != 0 || !ok) {
                refuse(tn, LOG_DEBUG, NULL); /* sends what is written */
                return false;
        }
        flush_tls(tn, false);
        return tn->phase != CLOSING;
}

/* The whole hello arrived: is the certificate the claimed node's, and its
 * data directory one this node accepts? Then raft gets the connection, as
 * from that node. */
static void greeted(struct tunnel *tn)
{
        struct peer *p = tn->p;
        char identity[TLS_IDENTITY_MAX];
        char why[TLS_IDENTITY_MAX * 2 + 64];
        uv_pipe_t *raft_end;

        if (tlsconfig_peer_identity(p->cfg, tn->id, identity,
                                    sizeof identity) != 0 ||
            !tls_peer_is(tn->tls, identity)) {
                snprintf(why, sizeof why,
                         "refused: it claims node %llu (identity '%s') but "
                         "its certificate is '%s'",
                         (unsigned long long)tn->id, identity,
                         tls_peer(tn->tls));
                refuse(tn, LOG_WARN, why);
                return;
        }
        if (!checked(tn)) {
                return;
        }
        if (open_pipe(tn, &raft_end) != 0) {
                fail(tn, RAFT_NOCONNECTION, LOG_WARN, "no socketpair");
                return;
        }
        tn->phase = OPEN;
        log_debug("raft connection from %s: node %llu at %s", tn->from,
                  (unsigned long long)tn->id, tn->address);
        p->accept_cb(p->t, tn->id, tn->address, (uv_stream_t *)raft_end);
}

/* The dialled node is who it should be (TLS checked its identity): say who
 * we are and what our data directory is, and give raft its end. */
static void dialed(struct tunnel *tn)
{
        struct peer *p = tn->p;
        uint8_t field[ADDRESS_MAX], hello[RAFTHELLO_TLS_MAX];
        struct rafthello_ext ext;
        size_t len;
        uv_pipe_t *raft_end;

        if (p->check != NULL) {
                peercheck_ext(p->check, &ext);
        }
        len = rafthello_own_field(field, sizeof field, p->address,
                                  p->check != NULL ? &ext : NULL,
                                  &tn->awaiting_verdict);
        len = rafthello_tls_encode(hello, p->id, field, len);
        if (tls_write(tn->tls, hello, len) != 0 ||
            open_pipe(tn, &raft_end) != 0) {
                fail(tn, RAFT_NOCONNECTION, LOG_WARN, "cannot start");
                return;
        }
        flush_tls(tn, false);
        tn->phase = OPEN;
        report(tn, (uv_stream_t *)raft_end, 0);
}

/* Bytes from the node this one dialled: its verdict on our hello, once;
 * raft reads nothing on the connections it dials. */
static void answered(struct tunnel *tn, const uint8_t *p, size_t n)
{
        struct rafthello_verdict v;
        bool done = false;

        if (!tn->awaiting_verdict) {
                return;
        }
        if (rafthello_verdict_take(&tn->in, p, n, &done, &v) < 0) {
                fail(tn, RAFT_NOCONNECTION, LOG_WARN,
                     "closed: its answer to the hello is not a verdict");
                return;
        }
        if (done) {
                tn->awaiting_verdict = false;
                if (!peercheck_verdict(tn->p->check, tn->id, &v,
                                       uv_now(tn->p->loop))) {
                        fail(tn, RAFT_NOCONNECTION, LOG_DEBUG, NULL);
                }
        }
}

/* --- The peer's end ------------------------------------------------------- */

static void secured(struct tunnel *tn)
{
        if (tn->outgoing) {
                dialed(tn);
        } else {
                tn->phase = GREETING;
        }
}

static void plain(struct tunnel *tn, const uint8_t *p, size_t n)
{
        bool done = false;
        long used;

        if (tn->outgoing) {
                answered(tn, p, n);
                return;
        }
        if (tn->phase == GREETING) {
                used = rafthello_tls_take(&tn->in, p, n, &done, &tn->hello);
                if (used < 0) {
                        refuse(tn, LOG_WARN, "refused: no Baton raft hello");
                        return;
                }
                if (done) {
                        tn->id = tn->hello.id;
                        memcpy(tn->address, tn->hello.address,
                               sizeof tn->address);
                        greeted(tn);
                }
                p += used;
                n -= (size_t)used;
        }
        if (n > 0 && tn->phase == OPEN) {
                to_raft(tn, p, n);
        }
}

/* Ciphertext from the peer: the handshake, the hello, then raft's bytes. */
static void on_tcp_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
        struct tunnel *tn = s->data;
        uint8_t out[16384];
        long rv;

        if (tn->draining) {
                return;
        }
        if (n < 0) {
                fail(tn, RAFT_NOCONNECTION,
                     tn->phase == OPEN ? LOG_DEBUG : LOG_WARN,
                     tn->phase == OPEN ? NULL : "closed by the peer");
                return;
        }
        if (tls_feed(tn->tls, (const uint8_t *)buf->base, (size_t)n) != 0) {
                fail(tn, RAFT_NOCONNECTION, LOG_WARN, "out of memory");
                return;
        }
        while (tn->phase != CLOSING) {
                rv = tls_read(tn->tls, out, sizeof out);
                if (tn->phase == SECURING && tls_ready(tn->tls)) {
                        secured(tn);
                }
                if (rv < 0) {
                        refuse(tn, rv == TLS_EOF ? LOG_DEBUG : LOG_WARN,
                               rv == TLS_EOF ? NULL : tls_errmsg(tn->tls));
                        return;
                }
                if (rv == 0) {
                        break;
                }
                plain(tn, out, (size_t)rv);
        }
        if (tn->phase != CLOSING) {
                flush_tls(tn, false);
        }
}

/* TCP is up: TLS begins (the dialling side speaks first). */
static int start_tls(struct tunnel *tn, struct tls_ctx *x, const char *expect)
{
        uint8_t none[1];

        uv_tcp_nodelay(&tn->tcp, 1);
        if (tls_conn_create(&tn->tls, x, expect, NULL) != 0) {
                return -1;
        }
        tn->phase = SECURING;
        uv_read_start((uv_stream_t *)&tn->tcp, on_alloc, on_tcp_read);
        tls_read(tn->tls, none, 0);
        flush_tls(tn, false);
        return 0;
}

/* --- Dialling ------------------------------------------------------------- */

static void on_connected(uv_connect_t *req, int status)
{
        struct tunnel *tn = req->data;
        char identity[TLS_IDENTITY_MAX];
        char why[128];

        if (tn->phase == CLOSING) {
                return;
        }
        if (status != 0) {
                snprintf(why, sizeof why, "%s", uv_strerror(status));
                fail(tn, RAFT_NOCONNECTION, LOG_DEBUG, why);
                return;
        }
        if (tlsconfig_peer_identity(tn->p->cfg, tn->id, identity,
                                    sizeof identity) != 0 ||
            start_tls(tn, tn->p->client, identity) != 0) {
                fail(tn, RAFT_NOCONNECTION, LOG_WARN, "cannot start TLS");
        }
}

static void on_resolved(uv_getaddrinfo_t *req, int status, struct addrinfo *res)
{
        struct tunnel *tn = req->data;
        char why[128];
        int rv;

        tn->handles--;
        tn->resolving = false;
        if (tn->phase == CLOSING || status != 0 || res == NULL) {
                if (tn->phase != CLOSING) {
                        snprintf(why, sizeof why, "cannot resolve: %s",
                                 uv_strerror(status));
                        fail(tn, RAFT_NOCONNECTION, LOG_WARN, why);
                }
                uv_freeaddrinfo(res);
                maybe_free(tn);
                return;
        }
        uv_tcp_init(tn->p->loop, &tn->tcp);
        tn->tcp.data = tn;
        tn->tcp_init = true;
        tn->handles++;
        tn->connect.data = tn;
        /* The first address: raft retries the connection anyway. */
        rv = uv_tcp_connect(&tn->connect, &tn->tcp, res->ai_addr, on_connected);
        uv_freeaddrinfo(res);
        if (rv != 0) {
                snprintf(why, sizeof why, "%s", uv_strerror(rv));
                fail(tn, RAFT_NOCONNECTION, LOG_DEBUG, why);
        }
}

static struct tunnel *tunnel_new(struct peer *p, bool outgoing)
{
        struct tunnel *tn = calloc(1, sizeof *tn);

        if (tn == NULL) {
                return NULL;
        }
        tn->p = p;
        tn->outgoing = outgoing;
        tn->phase = DIALING;
        tn->started = uv_now(p->loop);
        queue_push_tail(&p->tunnels, &tn->link);
        return tn;
}

static int peer_connect(struct raft_uv_transport *t,
                        struct raft_uv_connect *req, raft_id id,
                        const char *address, raft_uv_connect_cb cb)
{
        static const struct addrinfo hints = {.ai_socktype = SOCK_STREAM};
        struct peer *p = PEER(t);
        struct address a;
        struct tunnel *tn;

        if (address_parse(address, &a) != 0) {
                snprintf(t->errmsg, sizeof t->errmsg, "bad address %s",
                         address);
                return RAFT_NOCONNECTION;
        }
        tn = tunnel_new(p, true);
        if (tn == NULL) {
                return RAFT_NOMEM;
        }
        tn->id = id;
        snprintf(tn->address, sizeof tn->address, "%s", address);
        tn->req = req;
        tn->cb = cb;
        req->cb = cb;
        tn->gai.data = tn;
        if (uv_getaddrinfo(p->loop, &tn->gai, on_resolved, a.host, a.service,
                           &hints) != 0) {
                queue_remove(&tn->link);
                free(tn);
                return RAFT_NOCONNECTION;
        }
        tn->resolving = true;
        tn->handles++;
        return 0;
}

/* --- Accepting ------------------------------------------------------------ */

static void on_accept(uv_stream_t *listener, int status)
{
        struct peer *p = listener->data;
        struct sockaddr_storage sa;
        int len = sizeof sa;
        struct tunnel *tn;

        if (status != 0 || p->closing || (tn = tunnel_new(p, false)) == NULL) {
                return;
        }
        uv_tcp_init(p->loop, &tn->tcp);
        tn->tcp.data = tn;
        tn->tcp_init = true;
        tn->handles++;
        if (uv_accept(listener, (uv_stream_t *)&tn->tcp) != 0) {
                fail(tn, 0, LOG_DEBUG, NULL);
                return;
        }
        snprintf(tn->from, sizeof tn->from, "?");
        if (uv_tcp_getpeername(&tn->tcp, (struct sockaddr *)&sa, &len) == 0) {
                uv_ip_name((struct sockaddr *)&sa, tn->from, sizeof tn->from);
        }
        if (start_tls(tn, p->server, NULL) != 0) {
                fail(tn, 0, LOG_WARN, "cannot start TLS");
        }
}

static void on_sweep(uv_timer_t *timer)
{
        struct peer *p = timer->data;
        uint64_t now = uv_now(p->loop);
        struct queue *q = queue_head(&p->tunnels);
        char why[96];

        snprintf(why, sizeof why, "not connected within %u ms",
                 (unsigned)p->cfg->handshake_timeout_ms);
        while (q != &p->tunnels) {
                struct tunnel *tn = QUEUE_DATA(q, struct tunnel, link);
                q = q->next;
                if (tn->phase != OPEN && tn->phase != CLOSING &&
                    now - tn->started >= p->cfg->handshake_timeout_ms) {
                        fail(tn, RAFT_NOCONNECTION, LOG_WARN, why);
                }
        }
}

static int peer_listen(struct raft_uv_transport *t, raft_uv_accept_cb cb)
{
        struct peer *p = PEER(t);
        uint64_t period = p->cfg->handshake_timeout_ms < 1000
                              ? p->cfg->handshake_timeout_ms
                              : 1000;

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

/* --- The transport -------------------------------------------------------- */

static int peer_init_cb(struct raft_uv_transport *t, raft_id id,
                        const char *address)
{
        struct peer *p = PEER(t);

        p->id = id;
        snprintf(p->address, sizeof p->address, "%s", address);
        return 0;
}

static void on_own_closed(uv_handle_t *h)
{
        struct peer *p = h->data;

        p->handles--;
        maybe_closed(p);
}

static void peer_close(struct raft_uv_transport *t,
                       raft_uv_transport_close_cb cb)
{
        struct peer *p = PEER(t);
        struct queue *q;

        p->closing = true;
        p->close_cb = cb;
        if (p->listening) {
                p->listening = false;
                uv_close((uv_handle_t *)&p->listener, on_own_closed);
                uv_close((uv_handle_t *)&p->sweep, on_own_closed);
        }
        q = queue_head(&p->tunnels);
        while (q != &p->tunnels) {
                struct tunnel *tn = QUEUE_DATA(q, struct tunnel, link);
                q = q->next;
                fail(tn, RAFT_CANCELED, LOG_DEBUG, NULL);
        }
        maybe_closed(p);
}

/* Both contexts from the config's files, or neither. */
static int load(const struct config *cfg, struct tls_ctx **server,
                struct tls_ctx **client, char *errmsg, size_t size)
{
        struct tls_files f = {cfg->tls_ca, cfg->tls_cert, cfg->tls_key,
                              cfg->tls_crl};
        int rv = tls_ctx_create(server, TLS_SERVER, &f, errmsg, size);

        if (rv != 0) {
                return rv;
        }
        rv = tls_ctx_create(client, TLS_CLIENT, &f, errmsg, size);
        if (rv != 0) {
                tls_ctx_destroy(*server);
                *server = NULL;
        }
        return rv;
}

int peer_init(struct raft_uv_transport *t, uv_loop_t *loop,
              const struct config *cfg, struct peercheck *check, char *errmsg,
              size_t size)
{
        struct peer *p = calloc(1, sizeof *p);
        int rv;

        if (p == NULL) {
                snprintf(errmsg, size, "out of memory");
                return BATON_ENOMEM;
        }
        rv = load(cfg, &p->server, &p->client, errmsg, size);
        if (rv != 0) {
                free(p);
                return rv;
        }
        p->t = t;
        p->loop = loop;
        p->cfg = cfg;
        p->check = check;
        queue_init(&p->tunnels);
        t->version = 1;
        t->impl = p;
        t->init = peer_init_cb;
        t->listen = peer_listen;
        t->connect = peer_connect;
        t->close = peer_close;
        return 0;
}

void peer_free(struct raft_uv_transport *t)
{
        struct peer *p = PEER(t);

        if (p == NULL) {
                return;
        }
        tls_ctx_destroy(p->server);
        tls_ctx_destroy(p->client);
        free(p);
        t->impl = NULL;
}

int peer_reload(struct raft_uv_transport *t, char *errmsg, size_t size)
{
        struct peer *p = PEER(t);
        struct tls_ctx *server;
        struct tls_ctx *client;
        int rv = load(p->cfg, &server, &client, errmsg, size);

        if (rv != 0) {
                return rv;
        }
        tls_ctx_destroy(p->server);
        tls_ctx_destroy(p->client);
        p->server = server;
        p->client = client;
        return 0;
}
