/* batond's raft transport with TLS (see peer.h). */
#include "peer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../../../include/baton/errors.h"
#include "../../tls/tls.h"
#include "../base/log.h"
#include "../config/tlsconfig.h"
#include "peercheck.h"
#include "rafthello.h"
#include "rafttcp.h"

#define QUEUED_MAX (4u << 20) /* bytes queued on a side before pausing */

/* The transport: its TCP side, its credentials and what it checks. */
struct peer {
        struct rafttcp rt; /* first: the transport's impl */
        const struct config *cfg;
        struct peercheck *check; /* NULL: no data directory checks */
        struct tls_ctx *server;  /* accepting: require a cluster certificate */
        struct tls_ctx *client;  /* dialling */
        uint8_t rbuf[65536];     /* reads are handled one at a time */
};

/* Where a tunnel is until it closes (c.closing). */
enum phase {
        DIALING,  /* resolving, then connecting TCP */
        SECURING, /* the TLS handshake */
        GREETING, /* accepting: waiting for the hello */
        OPEN,     /* raft has its end; bytes flow */
};

/* One peer connection: TCP and TLS on one side, our end of the socketpair
 * whose other end raft has on the other. */
struct tunnel {
        struct rafttcp_conn c; /* the TCP; id and address: dialled, or
                                  claimed in the hello */
        enum phase phase;
        uv_pipe_t pipe;   /* our end of the socketpair */
        bool draining;    /* refused: the alert is being sent, then close */
        bool tcp_paused;  /* reading TCP waits for the pipe to drain */
        bool pipe_paused; /* reading the pipe waits for TCP to drain */
        bool pipe_open;
        struct tls_conn *tls;
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

static struct peer *peer_of(const struct tunnel *tn)
{
        return (struct peer *)tn->c.rt;
}

/* --- Ending a tunnel ------------------------------------------------------ */

/* Answer raft's connect request, once. */
static void report(struct tunnel *tn, uv_stream_t *stream, int status)
{
        struct raft_uv_connect *req = tn->c.req;

        if (req != NULL) {
                tn->c.req = NULL;
                tn->c.cb(req, stream, status);
        }
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

        if (tn->c.closing) {
                return;
        }
        if (why != NULL) {
                log_write(level, "raft %s: %s",
                          rafttcp_who(&tn->c, name, sizeof name), why);
        }
        tn->c.closing = true;
        report(tn, NULL, status);
        if (tn->pipe_open && !uv_is_closing((uv_handle_t *)&tn->pipe)) {
                uv_close((uv_handle_t *)&tn->pipe, rafttcp_handle_closed);
        }
        rafttcp_conn_close(&tn->c);
}

/* rafttcp's calls (rafttcp_ops): drop, too late, release once closed. */
static void on_drop(struct rafttcp_conn *c, int status)
{
        fail((struct tunnel *)c, status, LOG_DEBUG, NULL);
}

static void on_late(struct rafttcp_conn *c)
{
        char why[96];

        if (((struct tunnel *)c)->phase == OPEN) {
                return;
        }
        if (c->outgoing) {
                snprintf(why, sizeof why, "timed out (no %s within %u ms)",
                         ((struct tunnel *)c)->phase == DIALING
                             ? "connection"
                             : "TLS handshake",
                         c->rt->handshake_ms);
                rafttcp_unreachable(c, why);
                fail((struct tunnel *)c, RAFT_NOCONNECTION, LOG_DEBUG, why);
                return;
        }
        snprintf(why, sizeof why, "not connected within %u ms",
                 c->rt->handshake_ms);
        fail((struct tunnel *)c, RAFT_NOCONNECTION, LOG_WARN, why);
}

static void on_release(struct rafttcp_conn *c)
{
        tls_conn_destroy(((struct tunnel *)c)->tls);
}

static void flush_tls(struct tunnel *tn, bool last);

/* TLS refused the peer, or the peer us: say why, answer raft, send the
 * alert TLS has for the peer, and close once it is written. */
static void refuse(struct tunnel *tn, enum log_level level, const char *why)
{
        char name[128];

        if (why != NULL) {
                log_write(level, "raft %s: %s",
                          rafttcp_who(&tn->c, name, sizeof name), why);
        }
        report(tn, NULL, RAFT_NOCONNECTION);
        if (tn->c.tcp_init && tls_pending(tn->tls) > 0) {
                tn->draining = true;
                uv_read_stop((uv_stream_t *)&tn->c.tcp);
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

        if (n == 0 || uv_is_closing((uv_handle_t *)&tn->c.tcp)) {
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
        if (uv_write(&w->req, (uv_stream_t *)&tn->c.tcp, &buf, 1,
                     on_tcp_written) != 0) {
                free(w);
                fail(tn, RAFT_NOCONNECTION, LOG_DEBUG, NULL);
                return;
        }
        /* Raft writes faster than the peer reads: stop taking its bytes. */
        if (tn->pipe_open && !tn->pipe_paused &&
            uv_stream_get_write_queue_size((uv_stream_t *)&tn->c.tcp) >
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
        if (tn->c.closing) {
                return;
        }
        if (status != 0 || last) {
                fail(tn, RAFT_NOCONNECTION, LOG_DEBUG, NULL);
                return;
        }
        if (tn->pipe_paused &&
            uv_stream_get_write_queue_size((uv_stream_t *)&tn->c.tcp) <
                QUEUED_MAX / 2) {
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
                uv_read_stop((uv_stream_t *)&tn->c.tcp);
        }
}

static void on_pipe_written(uv_write_t *req, int status)
{
        struct wreq *w = req->data;
        struct tunnel *tn = w->tn;

        free(w);
        if (tn->c.closing) {
                return;
        }
        if (status != 0) {
                fail(tn, RAFT_NOCONNECTION, LOG_DEBUG, NULL);
                return;
        }
        if (tn->tcp_paused && uv_stream_get_write_queue_size(
                                  (uv_stream_t *)&tn->pipe) < QUEUED_MAX / 2) {
                tn->tcp_paused = false;
                uv_read_start((uv_stream_t *)&tn->c.tcp, on_alloc, on_tcp_read);
        }
}

/* --- Raft's end ----------------------------------------------------------- */

static void on_alloc(uv_handle_t *h, size_t hint, uv_buf_t *buf)
{
        struct tunnel *tn = h->data;

        (void)hint;
        buf->base = (char *)peer_of(tn)->rbuf;
        buf->len = sizeof peer_of(tn)->rbuf;
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
        uv_loop_t *loop = peer_of(tn)->rt.loop;
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
        tn->pipe.data = &tn->c;
        tn->pipe_open = true;
        tn->c.handles++;
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
        struct peer *p = peer_of(tn);
        struct rafthello_verdict v;
        uint8_t buf[RAFTHELLO_VERDICT_LEN];
        bool ok;

        if (p->check == NULL) {
                return true;
        }
        ok = peercheck_incoming(p->check, tn->c.id, tn->c.from, &tn->hello.ext,
                                tn->hello.has_ext, uv_now(p->rt.loop), &v);
        if (!tn->hello.has_ext) {
                return ok;
        }
        rafthello_verdict_encode(buf, &v);
        if (tls_write(tn->tls, buf, sizeof buf) != 0 || !ok) {
                refuse(tn, LOG_DEBUG, NULL); /* sends what is written */
                return false;
        }
        flush_tls(tn, false);
        return !tn->c.closing;
}

/* The whole hello arrived: is the certificate the claimed node's, and its
 * data directory one this node accepts? Then raft gets the connection, as
 * from that node. */
static void greeted(struct tunnel *tn)
{
        struct peer *p = peer_of(tn);
        char identity[TLS_IDENTITY_MAX];
        char why[TLS_IDENTITY_MAX * 2 + 64];
        uv_pipe_t *raft_end;

        if (tlsconfig_peer_identity(p->cfg, tn->c.id, identity,
                                    sizeof identity) != 0 ||
            !tls_peer_is(tn->tls, identity)) {
                snprintf(why, sizeof why,
                         "refused: it claims node %llu (identity '%s') but "
                         "its certificate is '%s'",
                         (unsigned long long)tn->c.id, identity,
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
        log_debug("raft connection from %s: node %llu at %s", tn->c.from,
                  (unsigned long long)tn->c.id, tn->c.address);
        p->rt.accept_cb(p->rt.t, tn->c.id, tn->c.address,
                        (uv_stream_t *)raft_end);
}

/* The dialled node is who it should be (TLS checked its identity): say who
 * we are and what our data directory is, and give raft its end. */
static void dialed(struct tunnel *tn)
{
        struct peer *p = peer_of(tn);
        uint8_t field[ADDRESS_MAX], hello[RAFTHELLO_TLS_MAX];
        struct rafthello_ext ext;
        size_t len;
        uv_pipe_t *raft_end;

        if (p->check != NULL) {
                peercheck_ext(p->check, &ext);
        }
        len = rafthello_own_field(field, sizeof field, p->rt.address,
                                  p->check != NULL ? &ext : NULL,
                                  &tn->awaiting_verdict);
        len = rafthello_tls_encode(hello, p->rt.id, field, len);
        if (tls_write(tn->tls, hello, len) != 0 ||
            open_pipe(tn, &raft_end) != 0) {
                fail(tn, RAFT_NOCONNECTION, LOG_WARN, "cannot start");
                return;
        }
        flush_tls(tn, false);
        tn->phase = OPEN;
        if (!tn->awaiting_verdict) {
                rafttcp_reached(&tn->c); /* else once the verdict came */
        }
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
                if (!peercheck_verdict(peer_of(tn)->check, tn->c.id, &v,
                                       uv_now(peer_of(tn)->rt.loop))) {
                        fail(tn, RAFT_NOCONNECTION, LOG_DEBUG, NULL);
                        return;
                }
                rafttcp_reached(&tn->c);
        }
}

/* --- The peer's end ------------------------------------------------------- */

static void secured(struct tunnel *tn)
{
        if (tn->c.outgoing) {
                dialed(tn);
        } else {
                tn->phase = GREETING;
        }
}

static void plain(struct tunnel *tn, const uint8_t *p, size_t n)
{
        bool done = false;
        long used;

        if (tn->c.outgoing) {
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
                        tn->c.id = tn->hello.id;
                        memcpy(tn->c.address, tn->hello.address,
                               sizeof tn->c.address);
                        greeted(tn);
                }
                p += used;
                n -= (size_t)used;
        }
        if (n > 0 && tn->phase == OPEN) {
                to_raft(tn, p, n);
        }
}

/* TLS failed on a connection this node dialled: once per episode of the
 * peer (either side may have refused the other's certificate). */
static void refused_tls(struct tunnel *tn)
{
        char why[PEERREACH_WHY_MAX];

        snprintf(why, sizeof why, "TLS refused (%s)", tls_errmsg(tn->tls));
        rafttcp_unreachable(&tn->c, why);
        refuse(tn, LOG_DEBUG, NULL);
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
        if (n < 0 && tn->c.outgoing && tn->phase != OPEN) {
                rafttcp_unreachable(&tn->c, "closed by the peer during the "
                                            "TLS handshake");
                fail(tn, RAFT_NOCONNECTION, LOG_DEBUG, NULL);
                return;
        }
        if (n < 0) {
                if (tn->phase == OPEN) {
                        rafttcp_peer_closed(&tn->c);
                }
                fail(tn, RAFT_NOCONNECTION,
                     tn->phase == OPEN ? LOG_DEBUG : LOG_WARN,
                     tn->phase == OPEN ? NULL : "closed by the peer");
                return;
        }
        if (tls_feed(tn->tls, (const uint8_t *)buf->base, (size_t)n) != 0) {
                fail(tn, RAFT_NOCONNECTION, LOG_WARN, "out of memory");
                return;
        }
        while (!tn->c.closing) {
                rv = tls_read(tn->tls, out, sizeof out);
                if (tn->phase == SECURING && tls_ready(tn->tls)) {
                        secured(tn);
                }
                if (rv < 0 && rv != TLS_EOF && tn->c.outgoing) {
                        refused_tls(tn);
                        return;
                }
                if (rv < 0) {
                        if (tn->phase == OPEN) {
                                rafttcp_peer_closed(&tn->c);
                        }
                        refuse(tn, rv == TLS_EOF ? LOG_DEBUG : LOG_WARN,
                               rv == TLS_EOF ? NULL : tls_errmsg(tn->tls));
                        return;
                }
                if (rv == 0) {
                        break;
                }
                plain(tn, out, (size_t)rv);
        }
        if (!tn->c.closing) {
                flush_tls(tn, false);
        }
}

/* TCP is up: TLS begins (the dialling side speaks first). */
static int start_tls(struct tunnel *tn, struct tls_ctx *x, const char *expect)
{
        uint8_t none[1];

        if (tls_conn_create(&tn->tls, x, expect, NULL) != 0) {
                return -1;
        }
        tn->phase = SECURING;
        uv_read_start((uv_stream_t *)&tn->c.tcp, on_alloc, on_tcp_read);
        tls_read(tn->tls, none, 0);
        flush_tls(tn, false);
        return 0;
}

/* Dialled TCP is up: TLS, expecting the identity of the node dialled. */
static void on_connected(struct rafttcp_conn *c)
{
        struct tunnel *tn = (struct tunnel *)c;
        char identity[TLS_IDENTITY_MAX];

        if (tlsconfig_peer_identity(peer_of(tn)->cfg, c->id, identity,
                                    sizeof identity) != 0 ||
            start_tls(tn, peer_of(tn)->client, identity) != 0) {
                fail(tn, RAFT_NOCONNECTION, LOG_WARN, "cannot start TLS");
        }
}

/* Accepted TCP: TLS, the certificate to be matched with the hello. */
static void on_accepted(struct rafttcp_conn *c)
{
        struct tunnel *tn = (struct tunnel *)c;

        if (start_tls(tn, peer_of(tn)->server, NULL) != 0) {
                fail(tn, 0, LOG_WARN, "cannot start TLS");
        }
}

/* --- The transport -------------------------------------------------------- */

static const struct rafttcp_ops ops = {
    .conn_size = sizeof(struct tunnel),
    .accepted = on_accepted,
    .connected = on_connected,
    .drop = on_drop,
    .late = on_late,
    .release = on_release,
};

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
        rafttcp_init(&p->rt, t, loop, cfg->handshake_timeout_ms,
                     cfg->raft_listen, &ops);
        p->cfg = cfg;
        p->check = check;
        if (check != NULL) {
                check->drop = rafttcp_drop_peer;
                check->drop_data = &p->rt;
        }
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
