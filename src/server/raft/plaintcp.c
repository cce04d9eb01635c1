/* The raft transport with tls = off (plaintcp.h). */
#include "plaintcp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "../../lib/cursor.h"
#include "../base/log.h"
#include "peercheck.h"
#include "rafthello.h"
#include "rafttcp.h"

#define PROTOCOL 1  /* libraft's UV__TCP_HANDSHAKE_PROTOCOL */
#define PREAMBLE 24 /* protocol, id, length of the address field */
/* The longest address field accepted: an address, its NUL, the addition,
 * padding; libraft's own fields are at most ADDRESS_MAX + 8. */
#define FIELD_MAX 256

/* The transport: its TCP side and the data directory checks. */
struct plain {
        struct rafttcp rt; /* first: the transport's impl */
        struct peercheck *check;
};

/* One connection: until raft has it, and a dialled one after, while it
 * reads the verdict. Its first member is the stream raft gets: raft frees
 * the whole with raft_free once it has closed it. */
struct conn {
        struct rafttcp_conn c;
        bool awaiting; /* dialled with the addition: read the verdict */
        int status;    /* for raft's connect callback, once closed */
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

static struct plain *plain_of(const struct conn *c)
{
        return (struct plain *)c->c.rt;
}

/* --- Connections before raft has them ------------------------------------ */

/* Close a connection raft does not have; a dialled one's request gets
 * `status` once it is closed. */
static void drop(struct conn *c, int status)
{
        if (c->c.closing) {
                return;
        }
        c->c.closing = true;
        c->status = status;
        rafttcp_conn_close(&c->c);
}

/* rafttcp's calls (rafttcp_ops): drop, release once closed, too late. */
static void on_drop(struct rafttcp_conn *rc, int status)
{
        drop((struct conn *)rc, status);
}

static void on_release(struct rafttcp_conn *rc)
{
        struct conn *c = (struct conn *)rc;

        if (rc->req != NULL) {
                rc->cb(rc->req, NULL, c->status);
        }
}

static void on_late(struct rafttcp_conn *rc)
{
        char why[PEERREACH_WHY_MAX];

        if (rc->outgoing) {
                snprintf(why, sizeof why,
                         "timed out (no connection within %u ms)",
                         rc->rt->handshake_ms);
                rafttcp_unreachable(rc, why);
                drop((struct conn *)rc, RAFT_NOCONNECTION);
                return;
        }
        log_warn("raft connection %s %s: no handshake within %u ms",
                 rc->outgoing ? "to" : "from",
                 rc->outgoing ? rc->address : rc->from, rc->rt->handshake_ms);
        drop((struct conn *)rc, RAFT_NOCONNECTION);
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

/* --- Accepting ------------------------------------------------------------ */

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
        if (uv_write(&w->req, (uv_stream_t *)&c->c.tcp, &buf, 1,
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
        struct plain *p = plain_of(c);
        struct rafttcp_conn *rc = &c->c;
        struct rafthello_verdict v;
        struct rafthello_ext ext;
        bool has_ext, ok = true;

        if (rafthello_split(c->buf + PREAMBLE, c->need - PREAMBLE, rc->address,
                            sizeof rc->address, &ext, &has_ext) != 0) {
                log_warn("raft connection from %s: refused: a malformed "
                         "address in its handshake",
                         rc->from);
                drop(c, 0);
                return;
        }
        if (p->check != NULL) {
                ok = peercheck_incoming(p->check, rc->id, rc->from, &ext,
                                        has_ext, uv_now(p->rt.loop), &v);
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
        rafttcp_conn_give(rc);
        log_debug("raft connection from %s: node %llu at %s", rc->from,
                  (unsigned long long)rc->id, rc->address);
        p->rt.accept_cb(p->rt.t, rc->id, rc->address, (uv_stream_t *)&rc->tcp);
}

/* The preamble is whole: how long the address field is. */
static int preamble(struct conn *c)
{
        struct rcursor r;
        uint64_t protocol, len;

        rcursor_init(&r, c->buf, PREAMBLE);
        protocol = rcursor_u64(&r);
        c->c.id = rcursor_u64(&r);
        len = rcursor_u64(&r);
        if (protocol != PROTOCOL || c->c.id == 0 || len == 0 ||
            len > FIELD_MAX) {
                log_warn("raft connection from %s: refused: not a raft "
                         "handshake",
                         c->c.from);
                return -1;
        }
        c->need = PREAMBLE + (size_t)len;
        return 0;
}

static void on_handshake(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
        struct conn *c = (struct conn *)s;

        (void)buf;
        if (c->c.closing || n == 0) {
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

/* TCP accepted: read libraft's handshake. */
static void on_accepted(struct rafttcp_conn *rc)
{
        struct conn *c = (struct conn *)rc;

        c->need = PREAMBLE;
        uv_read_start((uv_stream_t *)&rc->tcp, on_alloc, on_handshake);
}

/* --- Dialling ------------------------------------------------------------- */

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
        struct plain *p = plain_of(c);
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
                         (unsigned long long)c->c.id);
        }
        if (used < 0 ||
            !peercheck_verdict(p->check, c->c.id, &v, uv_now(p->rt.loop))) {
                if (uv_fileno((uv_handle_t *)s, &fd) == 0) {
                        shutdown(fd, SHUT_RDWR);
                }
                return;
        }
        rafttcp_reached(&c->c);
}

static void on_handshake_written(uv_write_t *req, int status)
{
        struct conn *c = req->data;
        struct raft_uv_connect *raft_req = c->c.req;
        raft_uv_connect_cb cb = c->c.cb;

        if (c->c.closing) {
                return;
        }
        if (status != 0) {
                drop(c, RAFT_NOCONNECTION);
                return;
        }
        if (!c->awaiting) {
                rafttcp_reached(&c->c); /* else once the verdict came */
        }
        rafttcp_conn_give(&c->c);
        if (c->awaiting) {
                uv_read_start((uv_stream_t *)&c->c.tcp, on_verdict_alloc,
                              on_verdict);
        }
        cb(raft_req, (uv_stream_t *)&c->c.tcp, 0);
}

/* libraft's handshake, with the addition inside the address field. */
static size_t handshake(struct conn *c)
{
        struct plain *p = plain_of(c);
        struct rafthello_ext ext;
        struct wcursor w;
        size_t len;

        if (p->check != NULL) {
                peercheck_ext(p->check, &ext);
        }
        memset(c->buf, 0, sizeof c->buf);
        len =
            rafthello_own_field(c->buf + PREAMBLE, FIELD_MAX - 8, p->rt.address,
                                p->check != NULL ? &ext : NULL, &c->awaiting);
        len = (len + 1 + 7) / 8 * 8; /* a NUL, then padding */
        wcursor_init(&w, c->buf, PREAMBLE);
        wcursor_u64(&w, PROTOCOL);
        wcursor_u64(&w, p->rt.id);
        wcursor_u64(&w, len);
        return PREAMBLE + len;
}

/* TCP connected: send libraft's handshake. */
static void on_connected(struct rafttcp_conn *rc)
{
        struct conn *c = (struct conn *)rc;
        uv_buf_t buf = uv_buf_init((char *)c->buf, (unsigned)handshake(c));

        c->write.data = c;
        if (uv_write(&c->write, (uv_stream_t *)&rc->tcp, &buf, 1,
                     on_handshake_written) != 0) {
                drop(c, RAFT_NOCONNECTION);
        }
}

/* --- The transport -------------------------------------------------------- */

static const struct rafttcp_ops ops = {
    .conn_size = sizeof(struct conn),
    .accepted = on_accepted,
    .connected = on_connected,
    .drop = on_drop,
    .late = on_late,
    .release = on_release,
};

int plaintcp_init(struct plaintcp *pt, uv_loop_t *loop, struct peercheck *check,
                  unsigned handshake_ms, const char *listen)
{
        struct plain *p = calloc(1, sizeof *p);

        memset(pt, 0, sizeof *pt);
        if (p == NULL) {
                return RAFT_NOMEM;
        }
        rafttcp_init(&p->rt, &pt->transport, loop, handshake_ms, listen, &ops);
        p->check = check;
        if (check != NULL) {
                check->drop = rafttcp_drop_peer;
                check->drop_data = &p->rt;
        }
        return 0;
}

void plaintcp_close(struct plaintcp *pt)
{
        free(pt->transport.impl);
        pt->transport.impl = NULL;
}
