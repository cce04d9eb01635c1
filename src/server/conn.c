/* Client connections: accept, read frames, batch replies, backpressure. */
#include "conn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../include/baton.h"
#include "listen.h"
#include "log.h"

static void on_closed(uv_handle_t *h)
{
        struct conn *c = h->data;

        proto_reader_close(&c->reader);
        free(c->out);
        free(c->wbuf);
        free(c);
}

/* Close now, whatever is queued. */
static void conn_drop(struct conn *c)
{
        struct conn_set *s = c->set;

        if (c->closed) {
                return;
        }
        c->closed = true;
        s->on_gone(s->data, c);
        queue_remove(&c->link);
        queue_remove(&c->dirty_link);
        s->n--;
        uv_close((uv_handle_t *)&c->tcp, on_closed);
}

static void on_alloc(uv_handle_t *h, size_t hint, uv_buf_t *buf)
{
        struct conn *c = h->data;

        /* One read buffer per set is enough: reads run one at a time and
         * the frame reader copies what it keeps. */
        (void)hint;
        buf->base = c->set->rbuf;
        buf->len = sizeof c->set->rbuf;
}

static void on_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf)
{
        struct conn *c = stream->data;
        const uint8_t *p = (const uint8_t *)buf->base;
        size_t left;

        if (nread < 0) {
                conn_drop(c);
                return;
        }
        left = (size_t)nread;
        while (left > 0 && !c->closing && !c->closed) {
                long used = proto_reader_feed(&c->reader, p, left);
                if (used < 0) {
                        conn_fail(c, c->reader.h.id, (int)used,
                                  baton_strerror((int)used));
                        return;
                }
                p += used;
                left -= (size_t)used;
                if (c->reader.ready) {
                        c->set->on_frame(c->set->data, c, &c->reader.h,
                                         c->reader.body);
                }
        }
}

static void on_accept(uv_stream_t *listener, int status)
{
        struct conn_set *s = listener->data;
        struct conn *c;

        if (status != 0) {
                log_warn("accept: %s", uv_strerror(status));
                return;
        }
        c = calloc(1, sizeof *c);
        if (c == NULL) {
                return;
        }
        uv_tcp_init(s->loop, &c->tcp);
        c->tcp.data = c;
        c->set = s;
        c->id = ++s->next_id;
        queue_init(&c->dirty_link);
        queue_init(&c->pendings);
        proto_reader_init(&c->reader, s->max_frame, &mem_libc);
        if (uv_accept(listener, (uv_stream_t *)&c->tcp) != 0) {
                uv_close((uv_handle_t *)&c->tcp, on_closed);
                return;
        }
        queue_push_tail(&s->all, &c->link);
        s->n++;
        if (s->n > s->max_conns) {
                s->refused++;
                conn_fail(c, 0, BATON_ETOOMANYCONNS,
                          baton_strerror(BATON_ETOOMANYCONNS));
                return;
        }
        s->accepted++;
        uv_tcp_nodelay(&c->tcp, 1);
        uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read);
}

int conn_listen(struct conn_set *s, uv_loop_t *loop, const char *address,
                uint32_t max_conns, uint32_t max_frame, uint32_t output_limit,
                conn_frame_cb on_frame, conn_gone_cb on_gone, void *data)
{
        int rv;

        memset(s, 0, sizeof *s);
        s->loop = loop;
        s->max_conns = max_conns;
        s->max_frame = max_frame;
        s->output_limit = output_limit;
        s->on_frame = on_frame;
        s->on_gone = on_gone;
        s->data = data;
        queue_init(&s->all);
        queue_init(&s->dirty);
        rv = listen_tcp(loop, &s->listener, address, 511, on_accept, "listen");
        if (rv != 0) {
                return rv;
        }
        s->listener.data = s;
        return 0;
}

void conn_close_all(struct conn_set *s)
{
        uv_close((uv_handle_t *)&s->listener, NULL);
        while (!queue_empty(&s->all)) {
                conn_drop(QUEUE_DATA(queue_head(&s->all), struct conn, link));
        }
}

static bool grow(uint8_t **buf, size_t *cap, size_t need)
{
        size_t cap2 = *cap == 0 ? 4096 : *cap;
        uint8_t *p;

        while (cap2 < need) {
                cap2 *= 2;
        }
        if (cap2 == *cap) {
                return true;
        }
        p = realloc(*buf, cap2);
        if (p == NULL) {
                return false;
        }
        *buf = p;
        *cap = cap2;
        return true;
}

uint8_t *conn_reserve(struct conn *c, size_t n)
{
        if (c->closed || c->closing) {
                return NULL;
        }
        if (!grow(&c->out, &c->out_cap, c->out_len + n)) {
                return NULL;
        }
        return c->out + c->out_len;
}

void conn_commit(struct conn *c, size_t n)
{
        struct conn_set *s = c->set;

        c->out_len += n;
        if (queue_empty(&c->dirty_link)) {
                queue_push_tail(&s->dirty, &c->dirty_link);
        }
        /* Backpressure: a client that does not read its replies stops being
         * read from until they drain. */
        if (!c->paused && c->out_len + c->wlen > s->output_limit) {
                c->paused = true;
                uv_read_stop((uv_stream_t *)&c->tcp);
        }
}

void conn_fail(struct conn *c, uint64_t id, int status, const char *message)
{
        uint8_t *p = conn_reserve(c, PROTO_HEADER_SIZE + 5 + 256);
        size_t n;

        if (p != NULL) {
                n = proto_write_error(p, PROTO_HEADER_SIZE + 5 + 256, id,
                                      status, message);
                conn_commit(c, n);
        }
        log_debug("connection %llu: closing after error %d (%s)",
                  (unsigned long long)c->id, status, message);
        c->closing = true;
        uv_read_stop((uv_stream_t *)&c->tcp);
        if (p == NULL) {
                conn_drop(c);
        }
}

static void start_write(struct conn *c);

static void on_written(uv_write_t *req, int status)
{
        struct conn *c = req->data;

        c->writing = false;
        c->wlen = 0;
        if (c->closed) {
                return;
        }
        if (status != 0) {
                conn_drop(c);
                return;
        }
        if (c->paused && !c->closing && c->out_len < c->set->output_limit / 2) {
                c->paused = false;
                uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read);
        }
        if (c->out_len > 0) {
                start_write(c);
        } else if (c->closing) {
                conn_drop(c);
        }
}

static void start_write(struct conn *c)
{
        uv_buf_t buf;
        uint8_t *t;
        size_t tc;

        if (c->writing || c->closed || c->out_len == 0) {
                return;
        }
        /* Swap the gathering buffer with the (empty) writing one. */
        t = c->wbuf;
        tc = c->wcap;
        c->wbuf = c->out;
        c->wcap = c->out_cap;
        c->wlen = c->out_len;
        c->out = t;
        c->out_cap = tc;
        c->out_len = 0;
        buf = uv_buf_init((char *)c->wbuf, (unsigned)c->wlen);
        c->wreq.data = c;
        c->writing = true;
        if (uv_write(&c->wreq, (uv_stream_t *)&c->tcp, &buf, 1, on_written) !=
            0) {
                c->writing = false;
                conn_drop(c);
        }
}

void conn_flush_all(struct conn_set *s)
{
        while (!queue_empty(&s->dirty)) {
                struct conn *c =
                    QUEUE_DATA(queue_head(&s->dirty), struct conn, dirty_link);
                queue_remove(&c->dirty_link);
                start_write(c);
                if (!c->closed && c->closing && !c->writing) {
                        conn_drop(c);
                }
        }
}
