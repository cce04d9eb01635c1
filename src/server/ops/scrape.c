/* The metrics port's HTTP (see scrape.h). */
#include "scrape.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../../include/baton/errors.h"
#include "../base/log.h"
#include "../net/addrcount.h"
#include "../net/httpreq.h"
#include "../net/listen.h"
#include "scrapegate.h"

/* One connection: read the request (bounded), answer, close. */
struct scrape {
        uv_tcp_t tcp;
        struct scrape_server *server;
        struct queue link;    /* server->open */
        struct tls_conn *tls; /* NULL: plain HTTP (or not yet known) */
        uint64_t started;
        bool sniffed; /* the first byte told TLS from plain HTTP */
        bool answered;
        bool closing;
        struct httpreq req; /* read with http_parser (httpreq.h) */
        char rbuf[4096];
};

/* One write and its bytes, freed when it is done. */
struct out {
        uv_write_t req;
        struct scrape *s;
        bool last; /* the reply: close once written */
        char bytes[];
};

static void on_closed(uv_handle_t *h)
{
        struct scrape *s = h->data;

        tls_conn_destroy(s->tls);
        httpreq_close(&s->req);
        free(s);
}

static void drop(struct scrape *s)
{
        if (s->closing) {
                return;
        }
        s->closing = true;
        queue_remove(&s->link);
        s->server->n--;
        uv_close((uv_handle_t *)&s->tcp, on_closed);
}

static void on_written(uv_write_t *req, int status)
{
        struct out *o = req->data;
        struct scrape *s = o->s;
        bool last = o->last;

        free(o);
        if ((status != 0 || last) && !s->closing) {
                drop(s);
        }
}

/* Send `n` bytes (copied); with `last`, close once they are written. */
static void send_bytes(struct scrape *s, const char *p, size_t n, bool last)
{
        struct out *o = malloc(sizeof *o + n);
        uv_buf_t buf;

        if (o == NULL) {
                drop(s);
                return;
        }
        memcpy(o->bytes, p, n);
        o->s = s;
        o->last = last;
        o->req.data = o;
        buf = uv_buf_init(o->bytes, (unsigned)n);
        if (uv_write(&o->req, (uv_stream_t *)&s->tcp, &buf, 1, on_written) !=
            0) {
                free(o);
                drop(s);
        }
}

/* What TLS has to send (handshake messages, records, alerts). */
static void send_sealed(struct scrape *s, bool last)
{
        size_t n = tls_pending(s->tls);
        char *p;

        if (n == 0) {
                if (last) {
                        drop(s);
                }
                return;
        }
        p = malloc(n);
        if (p == NULL) {
                drop(s);
                return;
        }
        n = tls_take(s->tls, (uint8_t *)p, n);
        send_bytes(s, p, n, last);
        free(p);
}

/* The audit line of a request of `s` refused `result`: `action`, `why`. */
static void audit(struct scrape *s, const char *action, int result,
                  const char *why)
{
        struct sockaddr_storage sa;
        char address[ADDRCOUNT_ENDPOINT_MAX] = "";
        int len = sizeof sa;
        struct audit_event e = {.identity =
                                    s->tls != NULL ? tls_peer(s->tls) : "",
                                .address = address,
                                .action = action,
                                .result = result,
                                .detail = why};

        if (!audit_on(s->server->audit)) {
                return;
        }
        memset(&sa, 0, sizeof sa);
        if (uv_tcp_getpeername(&s->tcp, (struct sockaddr *)&sa, &len) == 0) {
                addrcount_endpoint(&sa, address, sizeof address);
        }
        audit_write(s->server->audit, &e);
}

/* A 403's audit line: the request, and the first line of the body that
 * says why (`body`, `n` bytes). */
static void forbidden(struct scrape *s, const char *path, const char *body,
                      size_t n)
{
        char action[SCRAPE_PATH_MAX + 8], why[256];
        const char *nl = memchr(body, '\n', n);

        snprintf(action, sizeof action, "GET %s", path);
        snprintf(why, sizeof why, "%.*s",
                 (int)(nl != NULL ? (size_t)(nl - body) : n), body);
        audit(s, action, BATON_EPERM, why);
}

static void reply(struct scrape *s)
{
        struct scrape_server *srv = s->server;
        struct scrape_reply r = {200, "text/plain; version=0.0.4"};
        struct scrape_request req;
        char path[SCRAPE_PATH_MAX];
        char head[160];
        size_t need, len;
        char *text;
        int n;

        s->answered = true;
        uv_read_stop((uv_stream_t *)&s->tcp);
        httpreq_path(&s->req, path, sizeof path);
        req.path = path;
        req.tls = s->tls != NULL;
        req.identity = s->tls != NULL ? tls_peer(s->tls) : "";
        /* Room for figures that grow between the two renders (the
         * process's CPU time, its descriptors, read from /proc each time). */
        need = srv->render(srv->data, &req, &r, NULL, 0) + 1 + 256;
        n = snprintf(head, sizeof head,
                     "HTTP/1.0 %d %s\r\nContent-Type: %s\r\n"
                     "Connection: close\r\n\r\n",
                     r.status, httpreq_reason(r.status), r.content_type);
        text = malloc((size_t)n + need);
        if (text == NULL) {
                drop(s);
                return;
        }
        memcpy(text, head, (size_t)n);
        len = srv->render(srv->data, &req, &r, text + n, need);
        len = (size_t)n + (len < need ? len : need - 1); /* never past it */
        srv->served++;
        if (r.status == 403) {
                srv->forbidden++;
                forbidden(s, path, text + n, len - (size_t)n);
        }
        if (s->tls == NULL) {
                send_bytes(s, text, len, true);
        } else if (tls_write(s->tls, (const uint8_t *)text, len) == 0) {
                send_sealed(s, true);
        } else {
                drop(s);
        }
        free(text);
}

/* A request that could not be read: its status and why, then close. */
static void refuse(struct scrape *s)
{
        char text[256];
        int n;

        s->answered = true;
        uv_read_stop((uv_stream_t *)&s->tcp);
        n = snprintf(text, sizeof text,
                     "HTTP/1.0 %d %s\r\nContent-Type: text/plain\r\n"
                     "Connection: close\r\n\r\n%s\n",
                     s->req.status, httpreq_reason(s->req.status),
                     s->req.reason);
        if (s->tls == NULL) {
                send_bytes(s, text, (size_t)n, true);
        } else if (tls_write(s->tls, (const uint8_t *)text, (size_t)n) == 0) {
                send_sealed(s, true);
        } else {
                drop(s);
        }
}

/* Plaintext of the request, read as the HTTP API's are (httpreq.h). */
static void take_head(struct scrape *s, const char *p, size_t n)
{
        if (httpreq_feed(&s->req, p, n) < 0) {
                refuse(s);
        } else if (s->req.complete) {
                reply(s);
        }
}

static void take_sealed(struct scrape *s, const char *p, size_t n)
{
        char plain[2048];
        long rv;

        if (tls_feed(s->tls, (const uint8_t *)p, n) != 0) {
                drop(s);
                return;
        }
        while (!s->answered && !s->closing) {
                rv = tls_read(s->tls, (uint8_t *)plain, sizeof plain);
                if (rv < 0) {
                        s->server->refused++;
                        log_warn("metrics connection refused: %s",
                                 tls_errmsg(s->tls));
                        audit(s, "CONNECT", BATON_ETLS, tls_errmsg(s->tls));
                        send_sealed(s, true); /* the alert, then close */
                        return;
                }
                if (rv == 0) {
                        send_sealed(s, false);
                        return;
                }
                take_head(s, plain, (size_t)rv);
        }
}

static void on_alloc(uv_handle_t *h, size_t hint, uv_buf_t *buf)
{
        struct scrape *s = h->data;

        (void)hint;
        buf->base = s->rbuf;
        buf->len = sizeof s->rbuf;
}

/* The first bytes of a connection: TLS (when the port has it) or plain
 * HTTP; anything else, or TLS on a port without it, is closed at once.
 * Whether the connection may go on. */
static bool sniff(struct scrape *s, const char *p, size_t n)
{
        struct scrape_server *srv = s->server;
        enum scrapegate_wire w = scrapegate_sniff((const uint8_t *)p, n);

        if (w == SCRAPEGATE_MORE) {
                return true;
        }
        s->sniffed = true;
        if (w == SCRAPEGATE_HTTP) {
                return true;
        }
        if (w == SCRAPEGATE_TLS && srv->tls != NULL &&
            tls_conn_create(&s->tls, srv->tls, NULL, NULL) == 0) {
                return true;
        }
        srv->refused++;
        log_debug("metrics connection closed: %s",
                  w == SCRAPEGATE_TLS ? "TLS, and metrics-tls is off"
                                      : "neither HTTP nor TLS");
        drop(s);
        return false;
}

static void on_read(uv_stream_t *stream, ssize_t n, const uv_buf_t *buf)
{
        struct scrape *s = stream->data;

        if (n < 0) {
                drop(s);
                return;
        }
        if (!s->sniffed && !sniff(s, buf->base, (size_t)n)) {
                return;
        }
        if (s->tls != NULL) {
                take_sealed(s, buf->base, (size_t)n);
        } else {
                take_head(s, buf->base, (size_t)n);
        }
}

static void on_connection(uv_stream_t *listener, int status)
{
        struct scrape_server *srv = listener->data;
        struct scrape *s;

        if (status != 0 || (s = calloc(1, sizeof *s)) == NULL) {
                return;
        }
        s->server = srv;
        s->started = uv_now(srv->loop);
        /* A head larger than any scraper sends, and no body. */
        httpreq_init(&s->req, &(struct httpreq_limits){2048, 1024});
        uv_tcp_init(srv->loop, &s->tcp);
        s->tcp.data = s;
        queue_push_tail(&srv->open, &s->link);
        srv->n++;
        if (uv_accept(listener, (uv_stream_t *)&s->tcp) != 0) {
                drop(s);
                return;
        }
        if (srv->n > srv->max_conns) {
                srv->refused++;
                drop(s);
                return;
        }
        uv_read_start((uv_stream_t *)&s->tcp, on_alloc, on_read);
}

/* Close the connections whose deadline passed: silent ones, slow ones. */
static void on_sweep(uv_timer_t *t)
{
        struct scrape_server *srv = t->data;
        uint64_t now = uv_now(srv->loop);
        struct queue *q = queue_head(&srv->open);

        while (q != &srv->open) {
                struct scrape *s = QUEUE_DATA(q, struct scrape, link);
                q = q->next;
                if (now - s->started >= srv->timeout_ms) {
                        srv->timed_out++;
                        drop(s);
                }
        }
}

int scrape_listen(struct scrape_server *s, uv_loop_t *loop, const char *address,
                  uint32_t max_conns, uint32_t timeout_ms, struct tls_ctx *tls,
                  scrape_render_cb render, void *data)
{
        uint64_t period = timeout_ms < 1000 ? timeout_ms : 1000;
        int rv;

        memset(s, 0, sizeof *s);
        s->loop = loop;
        s->max_conns = max_conns;
        s->timeout_ms = timeout_ms;
        s->render = render;
        s->data = data;
        queue_init(&s->open);
        rv = listen_tcp(loop, &s->listener, address, 16, on_connection,
                        "metrics");
        if (rv != 0) {
                return rv;
        }
        s->listener.data = s;
        s->tls = tls;
        uv_timer_init(loop, &s->sweep);
        s->sweep.data = s;
        uv_timer_start(&s->sweep, on_sweep, period, period);
        s->active = true;
        return 0;
}

void scrape_set_tls(struct scrape_server *s, struct tls_ctx *tls)
{
        tls_ctx_destroy(s->tls);
        s->tls = tls;
}

void scrape_close(struct scrape_server *s)
{
        if (!s->active) {
                return;
        }
        s->active = false;
        uv_close((uv_handle_t *)&s->listener, NULL);
        uv_close((uv_handle_t *)&s->sweep, NULL);
        while (!queue_empty(&s->open)) {
                drop(QUEUE_DATA(queue_head(&s->open), struct scrape, link));
        }
        tls_ctx_destroy(s->tls);
        s->tls = NULL;
}
