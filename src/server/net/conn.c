/* Client connections: accept, TLS, read frames, batch replies,
 * backpressure, and the limits on who may hold a connection. */
#include "conn.h"

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../../include/baton/errors.h"
#include "../base/log.h"
#include "listen.h"
#include "../../proto/reply.h"

static void on_closed(uv_handle_t *h)
{
        struct conn *c = h->data;

        c->set->let_go++;
        if (c->set->app != NULL) {
                c->set->app->free(c->set->data, c);
        }
        tls_conn_destroy(c->tls);
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
        if (c->from != NULL) {
                addrcount_put(&s->by_address, c->from);
                c->from = NULL;
        }
        queue_remove(&c->link);
        queue_remove(&c->dirty_link);
        queue_remove(&c->later_link);
        pacer_cancel(&c->pace_link);
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

static void close_after_error(struct conn *c, bool written, int status,
                              const char *message);

/* The reader refused a header or a frame: answer it (in the client's own,
 * older version for BATON_EVERSION, so that it can read why), then close. */
static void refuse_frame(struct conn *c)
{
        size_t cap = PROTO_HEADER_SIZE + 5 + 256;
        const char *message = baton_strerror(c->reader.err);
        uint8_t *p = conn_reserve(c, cap);

        if (p != NULL) {
                conn_commit(c,
                            proto_reader_refusal(&c->reader, p, cap, message));
        }
        close_after_error(c, p != NULL, c->reader.err, message);
}

/* Plaintext from the client: frames, each handed to the gateway (or the
 * bytes to the set's protocol). */
static void deliver(struct conn *c, const uint8_t *p, size_t left)
{
        if (c->set->app != NULL) {
                if (!c->closing && !c->closed) {
                        c->set->app->bytes(c->set->data, c, p, left);
                }
                return;
        }
        while (left > 0 && !c->closing && !c->closed) {
                long used = proto_reader_feed(&c->reader, p, left);
                if (used < 0) {
                        refuse_frame(c);
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

static void mark_dirty(struct conn *c)
{
        queue_remove(&c->later_link); /* what waited goes out with it */
        if (queue_empty(&c->dirty_link)) {
                queue_push_tail(&c->set->dirty, &c->dirty_link);
        }
}

void conn_authorize(struct conn *c, const char *identity)
{
        snprintf(c->identity, sizeof c->identity, "%s", identity);
        c->gw.role = c->set->cfg != NULL
                         ? (uint8_t)roles_for(c->set->cfg, c->identity)
                         : ROLES_NONE;
}

/* The TLS handshake is done: the client is who its certificate says, and
 * may do what its identity's role allows. */
static void authenticated(struct conn *c)
{
        c->authenticated = true;
        conn_authorize(c, tls_peer(c->tls));
        c->gw.groups = tls_peer_groups(c->tls, &c->gw.groups_len);
        log_debug_f(&(struct log_fields){.connection = c->id},
                    "connection %llu from %s: authenticated as '%s' (%s)",
                    (unsigned long long)c->id, c->peer, c->identity,
                    roles_name(c->gw.role));
        if (c->refusal != 0) {
                conn_fail(c, 0, c->refusal, baton_strerror(c->refusal));
        }
}

/* The audit line of `c`, refused for its TLS: `why`. */
static void audit_refusal(struct conn *c, const char *why)
{
        struct audit_event e = {.identity = c->identity,
                                .address = c->endpoint,
                                .action = "CONNECT",
                                .result = BATON_ETLS,
                                .detail = why};

        audit_write(c->set->audit, &e);
}

/* Refuse the connection for a TLS failure: send the alert, if any, then
 * close. */
static void tls_refuse(struct conn *c, long rv)
{
        if (rv == BATON_ETLS) {
                c->set->tls_refused++;
                log_warn_f(&(struct log_fields){.connection = c->id},
                           "client connection %llu from %s refused: %s",
                           (unsigned long long)c->id, c->peer,
                           tls_errmsg(c->tls));
                audit_refusal(c, tls_errmsg(c->tls));
        }
        c->closing = true;
        uv_read_stop((uv_stream_t *)&c->tcp);
        mark_dirty(c);
}

/* A client speaking plain Baton to a TLS port gets one plain ERROR frame
 * that says so, instead of bytes it cannot read. */
static void refuse_plain(struct conn *c)
{
        c->set->tls_refused++;
        log_warn_f(&(struct log_fields){.connection = c->id},
                   "client connection %llu from %s refused: plain text on "
                   "the TLS port",
                   (unsigned long long)c->id, c->peer);
        audit_refusal(c, "plain text on the TLS port");
        tls_conn_destroy(c->tls);
        c->tls = NULL;
        conn_fail(c, 0, BATON_ETLS,
                  "this node requires TLS: give the client a CA, "
                  "certificate and key (BATON_CACERT, BATON_CERT, "
                  "BATON_KEY)");
}

/* How much of a loop turn TLS handshakes may take (pacer.h): a node
 * reading ten thousand handshakes at once held its loop for seconds and
 * lost its leadership. One handshake costs the node a few hundred
 * microseconds of CPU; 5 ms keeps a turn far inside the heartbeat timeout
 * (50 ms by default) and a client's request behind at most that much of
 * them. Defined at build time, it may be changed (or made unbounded, to
 * see the storm take the leadership again). */
#ifndef HANDSHAKE_BUDGET_NS
#define HANDSHAKE_BUDGET_NS (5 * 1000 * 1000)
#endif

/* The TLS records fed so far: the handshake, then frames. */
static void advance_tls(struct conn *c)
{
        uint8_t *plain = c->set->plain;
        bool handshake = !c->authenticated;
        uint64_t t0 = handshake ? uv_hrtime() : 0;
        long rv;

        while (!c->closing && !c->closed) {
                rv = tls_read(c->tls, plain, sizeof c->set->plain);
                if (!c->authenticated && tls_ready(c->tls)) {
                        authenticated(c);
                }
                if (rv < 0) {
                        tls_refuse(c, rv);
                        return;
                }
                if (rv == 0) {
                        break;
                }
                deliver(c, plain, (size_t)rv);
        }
        if (handshake) {
                pacer_spend(&c->set->handshakes, uv_hrtime() - t0);
        }
        if (!c->closed && tls_pending(c->tls) > 0) {
                mark_dirty(c);
        }
}

/* A turn with room for the handshake of a connection that waited. */
static void resume_handshake(void *data, struct queue *item)
{
        (void)data;
        advance_tls(QUEUE_DATA(item, struct conn, pace_link));
}

/* Ciphertext from the client: the handshake, then records of frames. A
 * handshake waits (the bytes kept) when this turn's budget is spent, or
 * when it waits already. */
static void receive_tls(struct conn *c, const uint8_t *p, size_t n)
{
        struct pacer *pace = &c->set->handshakes;

        if (!c->heard && !tls_looks_like_hello(p, n)) {
                refuse_plain(c);
                return;
        }
        c->heard = true;
        if (tls_feed(c->tls, p, n) != 0) {
                conn_drop(c);
                return;
        }
        if (!c->authenticated &&
            (!queue_empty(&c->pace_link) || !pacer_room(pace))) {
                pacer_defer(pace, &c->pace_link);
                return;
        }
        advance_tls(c);
}

static void on_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf)
{
        struct conn *c = stream->data;

        if (nread < 0) {
                conn_drop(c);
                return;
        }
        if (nread == 0) {
                return;
        }
        c->last_rx = uv_now(c->set->loop);
        c->rested = false;
        if (c->tls != NULL) {
                receive_tls(c, (const uint8_t *)buf->base, (size_t)nread);
        } else {
                c->heard = true;
                deliver(c, (const uint8_t *)buf->base, (size_t)nread);
        }
}

/* How far past its limits a TLS connection is still let finish its
 * handshake, to be told BATON_ETOOMANYCONNS in a record it can read; past
 * this (a flood), connections are closed at once. */
#define REFUSAL_SLACK 64

/* Whether `c` may stay: within max-connections and its address's cap.
 * Refused connections are told so: a plain one at once, a TLS one after
 * its handshake (it could not read a plain frame), unless there are too
 * many of them. */
static bool admit(struct conn *c)
{
        struct conn_set *s = c->set;
        struct sockaddr_storage sa;
        int len = sizeof sa;
        uint32_t over_by;

        memset(&sa, 0, sizeof sa);
        uv_tcp_getpeername(&c->tcp, (struct sockaddr *)&sa, &len);
        c->from = addrcount_get(&s->by_address, &sa);
        if (c->from == NULL) {
                conn_drop(c);
                return false;
        }
        addrcount_format(c->from, c->peer, sizeof c->peer);
        c->gw.address = c->peer;
        addrcount_endpoint(&sa, c->endpoint, sizeof c->endpoint);
        c->gw.endpoint = c->endpoint;
        if (s->n <= s->limits.max_conns &&
            c->from->n <= s->limits.max_per_address) {
                return true;
        }
        s->refused++;
        log_debug("client connection %llu from %s refused: too many "
                  "connections",
                  (unsigned long long)c->id, c->peer);
        if (s->tls == NULL) {
                conn_fail(c, 0, BATON_ETOOMANYCONNS,
                          baton_strerror(BATON_ETOOMANYCONNS));
                return false;
        }
        over_by = s->n > s->limits.max_conns ? s->n - s->limits.max_conns : 0;
        if (over_by > REFUSAL_SLACK ||
            c->from->n > s->limits.max_per_address + REFUSAL_SLACK) {
                conn_drop(c);
                return false;
        }
        c->refusal = BATON_ETOOMANYCONNS;
        return true;
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
        c->started = c->last_rx = uv_now(s->loop);
        queue_init(&c->dirty_link);
        queue_init(&c->later_link);
        queue_init(&c->pace_link);
        /* Before admit(), which may drop it and report it gone. Without
         * TLS (tls = off, a trusted single host) no one has an identity
         * and every connection is trusted; with TLS the role comes from
         * the certificate once the handshake is done. */
        gateway_conn_init(&c->gw, c->id, c->identity, s->tls == NULL);
        proto_reader_init(&c->reader, s->limits.max_frame, &mem_libc);
        if (uv_accept(listener, (uv_stream_t *)&c->tcp) != 0) {
                uv_close((uv_handle_t *)&c->tcp, on_closed);
                return;
        }
        queue_push_tail(&s->all, &c->link);
        s->n++;
        if (!admit(c)) {
                return;
        }
        if (s->tls != NULL &&
            tls_conn_create(&c->tls, s->tls, NULL, NULL) != 0) {
                conn_drop(c);
                return;
        }
        c->authenticated = c->tls == NULL;
        s->accepted++;
        uv_tcp_nodelay(&c->tcp, 1);
        uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read);
}

/* A connection that read nothing for REST_MS and has nothing to write is
 * at rest: its buffers go back (tls_rest), so that thousands of quiet
 * clients cost what their state needs, not their largest burst. Busy
 * connections keep theirs: allocating them per request costs throughput. */
#define REST_MS 1000

static bool has_output(const struct conn *c);

/* After this many connections closed or rested, the sweep hands the pages
 * they freed back to the system (malloc_trim): malloc alone returns only
 * the top of its heap, so after a storm of connections RSS would stay at
 * its peak for ever. Each one freed tens of KB. */
#define TRIM_AFTER 256

static void rest(struct conn *c)
{
        c->set->let_go++;
        c->rested = true;
        if (c->tls != NULL) {
                tls_rest(c->tls);
        }
        free(c->out);
        free(c->wbuf);
        c->out = c->wbuf = NULL;
        c->out_cap = c->wcap = 0;
}

/* Once a second: close connections that took too long to authenticate or
 * went silent for the idle timeout, and put quiet ones at rest. */
static void on_sweep(uv_timer_t *t)
{
        struct conn_set *s = t->data;
        uint64_t now = uv_now(s->loop);
        struct queue *q = queue_head(&s->all);

        while (q != &s->all) {
                struct conn *c = QUEUE_DATA(q, struct conn, link);
                q = q->next;
                if (c->closed) {
                        continue;
                }
                if (!c->authenticated &&
                    now - c->started >= s->limits.handshake_timeout_ms) {
                        log_warn_f(&(struct log_fields){.connection = c->id},
                                   "client connection %llu from %s: no TLS "
                                   "handshake within %u ms; closed",
                                   (unsigned long long)c->id, c->peer,
                                   (unsigned)s->limits.handshake_timeout_ms);
                } else if (c->deadline != 0 && now >= c->deadline &&
                           s->app != NULL) {
                        c->deadline = 0;
                        s->timed_out++;
                        s->app->expired(s->data, c);
                        continue;
                } else if (!c->busy &&
                           now - c->last_rx >= s->limits.idle_timeout_ms) {
                        log_debug("client connection %llu from %s: idle for "
                                  "%u ms; closed",
                                  (unsigned long long)c->id, c->peer,
                                  (unsigned)s->limits.idle_timeout_ms);
                } else {
                        if (!c->rested && c->authenticated && !c->writing &&
                            !has_output(c) && now - c->last_rx >= REST_MS) {
                                rest(c);
                        }
                        continue;
                }
                s->timed_out++;
                conn_drop(c);
        }
        if (s->let_go >= TRIM_AFTER) {
                s->let_go = 0;
                malloc_trim(0); /* measured: 4-24 ms after 10,000 */
        }
}

int conn_listen(struct conn_set *s, uv_loop_t *loop, const char *address,
                const struct conn_limits *limits, struct tls_ctx *tls,
                conn_frame_cb on_frame, conn_gone_cb on_gone, void *data)
{
        uint64_t period;
        int rv;

        memset(s, 0, sizeof *s);
        s->loop = loop;
        s->limits = *limits;
        s->on_frame = on_frame;
        s->on_gone = on_gone;
        s->data = data;
        queue_init(&s->all);
        queue_init(&s->dirty);
        queue_init(&s->later);
        addrcount_init(&s->by_address);
        /* A backlog as deep as the kernel allows (net.core.somaxconn,
         * 4096 by default): thousands of clients dial a new leader at
         * once, and a connection the queue has no room for waits for its
         * SYN to be sent again, a second or more later. */
        rv = listen_tcp(loop, &s->listener, address, 4096, on_accept, "listen");
        if (rv != 0) {
                addrcount_close(&s->by_address);
                return rv;
        }
        rv = pacer_init(&s->handshakes, loop, HANDSHAKE_BUDGET_NS,
                        resume_handshake, s);
        if (rv != 0) {
                uv_close((uv_handle_t *)&s->listener, NULL);
                addrcount_close(&s->by_address);
                return BATON_ENOMEM;
        }
        s->listener.data = s;
        s->tls = tls;
        period = limits->handshake_timeout_ms < 1000
                     ? limits->handshake_timeout_ms
                     : 1000;
        uv_timer_init(loop, &s->sweep);
        s->sweep.data = s;
        uv_timer_start(&s->sweep, on_sweep, period, period);
        uv_timer_init(loop, &s->later_timer);
        s->later_timer.data = s;
        return 0;
}

void conn_set_app(struct conn_set *s, const struct conn_app *app)
{
        s->app = app;
}

void conn_close_after(struct conn *c)
{
        if (c->closed) {
                return;
        }
        c->closing = true;
        uv_read_stop((uv_stream_t *)&c->tcp);
        mark_dirty(c);
}

void conn_hold_reads(struct conn *c, bool hold)
{
        if (c->closed || c->closing || c->paused) {
                return;
        }
        if (hold) {
                uv_read_stop((uv_stream_t *)&c->tcp);
        } else {
                uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read);
        }
}

void conn_set_tls(struct conn_set *s, struct tls_ctx *tls)
{
        tls_ctx_destroy(s->tls);
        s->tls = tls;
}

void conn_close_all(struct conn_set *s)
{
        uv_close((uv_handle_t *)&s->listener, NULL);
        uv_close((uv_handle_t *)&s->sweep, NULL);
        uv_close((uv_handle_t *)&s->later_timer, NULL);
        pacer_close(&s->handshakes);
        while (!queue_empty(&s->all)) {
                conn_drop(QUEUE_DATA(queue_head(&s->all), struct conn, link));
        }
        /* Every connection gave its address back. */
        addrcount_close(&s->by_address);
        tls_ctx_destroy(s->tls);
        s->tls = NULL;
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

size_t conn_backlog(const struct conn *c)
{
        return c->out_len + c->wlen;
}

static void backpressure(struct conn *c)
{
        struct conn_set *s = c->set;

        /* Backpressure: a client that does not read its replies stops being
         * read from until they drain. */
        if (!c->paused && c->out_len + c->wlen > s->limits.output_limit) {
                c->paused = true;
                uv_read_stop((uv_stream_t *)&c->tcp);
        }
}

void conn_commit(struct conn *c, size_t n)
{
        c->out_len += n;
        mark_dirty(c);
        backpressure(c);
}

/* watch_batch_ms after the first event waited: every connection's
 * waiting output goes out. */
static void on_later(uv_timer_t *t)
{
        struct conn_set *s = t->data;

        while (!queue_empty(&s->later)) {
                struct conn *c =
                    QUEUE_DATA(queue_head(&s->later), struct conn, later_link);
                queue_remove(&c->later_link);
                mark_dirty(c);
        }
        conn_flush_all(s);
}

/* One write carries all the events a connection got in the batch: with
 * 100 connections watching a lock that changes hands 1,000 times a second,
 * a write per event per connection (200,000 a second, each a TLS record
 * the client decrypts and wakes for) is what made watching expensive. */
void conn_commit_later(struct conn *c, size_t n)
{
        struct conn_set *s = c->set;

        if (s->limits.watch_batch_ms == 0) {
                conn_commit(c, n);
                return;
        }
        c->out_len += n;
        if (queue_empty(&c->dirty_link) && queue_empty(&c->later_link)) {
                queue_push_tail(&s->later, &c->later_link);
                if (!uv_is_active((uv_handle_t *)&s->later_timer)) {
                        uv_timer_start(&s->later_timer, on_later,
                                       s->limits.watch_batch_ms, 0);
                }
        }
        backpressure(c);
}

void conn_fail(struct conn *c, uint64_t id, int status, const char *message)
{
        uint8_t *p;
        size_t n;

        if (c->set->app != NULL) {
                if (!c->closing && !c->closed) {
                        c->set->app->fail(c->set->data, c, status, message);
                }
                return;
        }
        p = conn_reserve(c, PROTO_HEADER_SIZE + 5 + 256);

        if (p != NULL) {
                n = proto_write_error(p, PROTO_HEADER_SIZE + 5 + 256, id,
                                      status, message);
                conn_commit(c, n);
        }
        close_after_error(c, p != NULL, status, message);
}

/* An ERROR frame is queued (`written`), or could not be: close. */
static void close_after_error(struct conn *c, bool written, int status,
                              const char *message)
{
        log_debug_f(&(struct log_fields){.connection = c->id},
                    "connection %llu: closing after error %d (%s)",
                    (unsigned long long)c->id, status, message);
        c->closing = true;
        uv_read_stop((uv_stream_t *)&c->tcp);
        if (!written) {
                conn_drop(c);
        }
}

static void start_write(struct conn *c);

static bool has_output(const struct conn *c)
{
        return c->out_len > 0 || (c->tls != NULL && tls_pending(c->tls) > 0);
}

/* With TLS, the replies gathered become records: what goes out is the
 * ciphertext, in the writing buffer. False when the connection must go. */
static bool seal(struct conn *c)
{
        size_t need;

        if (c->out_len > 0 && tls_ready(c->tls)) {
                if (tls_write(c->tls, c->out, c->out_len) != 0) {
                        return false;
                }
                c->out_len = 0;
        }
        need = tls_pending(c->tls);
        if (!grow(&c->wbuf, &c->wcap, need)) {
                return false;
        }
        c->wlen = tls_take(c->tls, c->wbuf, need);
        return true;
}

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
        if (c->paused && !c->closing &&
            c->out_len < c->set->limits.output_limit / 2) {
                c->paused = false;
                uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read);
        }
        if (has_output(c)) {
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

        if (c->writing || c->closed || !has_output(c)) {
                return;
        }
        if (c->tls != NULL) {
                if (!seal(c)) {
                        conn_drop(c);
                        return;
                }
        } else {
                /* Swap the gathering buffer with the (empty) writing one. */
                t = c->wbuf;
                tc = c->wcap;
                c->wbuf = c->out;
                c->wcap = c->out_cap;
                c->wlen = c->out_len;
                c->out = t;
                c->out_cap = tc;
                c->out_len = 0;
        }
        if (c->wlen == 0) {
                return;
        }
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
