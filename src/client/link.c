/* The background thread of a handle and the one connection it owns. */
#include "link.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../lib/address.h"
#include "client.h"
#include "clock.h"
#include "outcome.h"
#include "probe.h"
#include "request.h"

#define CONNECT_MS       1000    /* one connect attempt, at most */
#define TRY_MS           3000    /* a quick request unanswered on a live link */
#define RETRY_MS         50      /* resend after BATON_EUNKNOWN / EINFLIGHT */
#define BACKOFF_BASE_MS  10      /* first pause after failures in a row */
#define BACKOFF_MAX_MS   1000    /* longest pause between attempts */
#define SUSPECT_MS       3000    /* ignore a silent node's hints this long */
#define ELECTION_POLL_MS 40      /* ask again this often while one runs, */
#define ELECTION_FAST_MS 3000    /* for this long; then the usual backoff */
#define OUT_MAX          1048576 /* unwritten bytes: the server reads none */
#define POLL_MAX_MS      1000    /* the loop looks around at least this often */

int link_init(struct link *l, uint32_t ttl_ms)
{
        int hb = (int)(ttl_ms / 5);

        memset(l, 0, sizeof *l);
        l->fd = -1;
        l->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (l->wake < 0) {
                return errno == ENOMEM ? BATON_ENOMEM : BATON_EIO;
        }
        /* The heartbeat: well inside the TTL, but never so tight that a
         * busy server is taken for a dead one. */
        l->hb_timeout_ms = hb < 300 ? 300 : hb > 1000 ? 1000 : hb;
        l->hb_idle_ms = l->hb_timeout_ms / 2;
        proto_reader_init(&l->reader, PROTO_MAX_BODY, &mem_libc);
        return 0;
}

void link_close(struct link *l)
{
        if (l->fd >= 0) {
                close(l->fd);
                l->fd = -1;
        }
        if (l->wake >= 0) {
                close(l->wake);
                l->wake = -1;
        }
        proto_reader_close(&l->reader);
        free(l->out);
        l->out = NULL;
}

void link_wake(struct link *l)
{
        uint64_t one = 1;
        ssize_t rv = write(l->wake, &one, sizeof one);

        (void)rv; /* EAGAIN: the counter is already non-zero */
}

static bool send_direct(struct baton_client *c, struct request *r);

void link_submit(struct baton_client *c, struct request *r)
{
        queue_push_tail(&c->requests, &r->link);
        if (!send_direct(c, r)) {
                link_wake(&c->link);
        }
}

bool link_sent(const struct link *l, const struct request *r)
{
        return l->fd >= 0 && !l->connecting && r->sends > 0 && r->gen == l->gen;
}

/* --- Choosing a node ------------------------------------------------------ */

static bool suspect(const struct link *l, const char *address, int64_t now)
{
        return now < l->suspect_until && strcmp(address, l->suspect) == 0;
}

/* After trouble with the current peer: the endpoint after it is next. */
static void advance(struct baton_client *c)
{
        struct link *l = &c->link;
        unsigned i;

        for (i = 0; i < c->n_endpoints; i++) {
                if (strcmp(c->endpoints[i], l->peer) == 0) {
                        l->next = (i + 1) % c->n_endpoints;
                        return;
                }
        }
        l->next = (l->next + 1) % c->n_endpoints;
}

static int64_t backoff(unsigned n)
{
        int64_t ms = BACKOFF_BASE_MS;

        if (n <= 1) {
                return 0; /* the first failure moves on at once */
        }
        while (n-- > 2 && ms < BACKOFF_MAX_MS) {
                ms *= 2;
        }
        return clock_jitter(ms < BACKOFF_MAX_MS ? ms : BACKOFF_MAX_MS);
}

/* Close the connection. Requests sent on it are sent again on the next. */
static void drop(struct baton_client *c)
{
        struct link *l = &c->link;

        if (l->fd >= 0) {
                close(l->fd);
                l->fd = -1;
        }
        l->connecting = false;
        l->out_len = 0;
        proto_reader_close(&l->reader);
        proto_reader_init(&l->reader, PROTO_MAX_BODY, &mem_libc);
        if (l->ping != NULL) {
                client_discard(c, l->ping);
        }
        session_conn_lost(c, l->gen);
}

/* The connection or the attempt failed: move on, and back off when
 * failures repeat. A node that went silent is avoided for a while, even
 * when others name it as the leader (they learn of its death late). */
static void fail(struct baton_client *c, int64_t now, bool silent)
{
        struct link *l = &c->link;

        if (silent) {
                memcpy(l->suspect, l->peer, sizeof l->suspect);
                l->suspect_until = now + SUSPECT_MS;
        }
        drop(c);
        advance(c);
        l->failures++;
        l->retry_at = now + backoff(l->failures);
}

/* A live node knows no leader, or names the one that went silent: an
 * election runs, and it typically ends within two election timeouts. Ask
 * again soon, on the next node. The exponential backoff would make the gap
 * a client sees after losing its leader the sum of its pauses, about twice
 * the election; once ELECTION_FAST_MS pass without a leader (no majority,
 * most likely) it takes over again, so that a leaderless cluster is not
 * polled hard for long. */
static void no_leader(struct baton_client *c, int64_t now)
{
        struct link *l = &c->link;

        if (l->leaderless_since == 0) {
                l->leaderless_since = now;
        }
        fail(c, now, false);
        if (now - l->leaderless_since < ELECTION_FAST_MS) {
                l->retry_at = now + clock_jitter(ELECTION_POLL_MS);
        }
}

/* An answer from the leader ends a streak of failures. */
static void leader_answered(struct link *l)
{
        l->failures = 0;
        l->bounces = 0;
        l->leaderless_since = 0;
}

static struct request *new_ping(struct baton_client *c)
{
        struct request *r = request_empty(PROTO_PING);

        if (r != NULL) {
                r->internal = true;
                c->link.ping = r;
                link_submit(c, r);
        }
        return r;
}

static void connected(struct baton_client *c, int64_t now)
{
        struct link *l = &c->link;
        int one = 1;

        setsockopt(l->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        l->connecting = false;
        l->gen++;
        l->connects++;
        l->last_rx = now;
        /* A paused server accepts connections: only an answer shows it
         * is alive, so ask for one at once. */
        new_ping(c);
}

static void start_connect(struct baton_client *c, int64_t now)
{
        struct link *l = &c->link;
        struct sockaddr_in sa;
        unsigned i;
        int rv;

        if (l->hint[0] != '\0' && !suspect(l, l->hint, now)) {
                memcpy(l->peer, l->hint, sizeof l->peer);
        } else {
                for (i = 0; i < c->n_endpoints; i++) {
                        if (!suspect(l, c->endpoints[l->next], now)) {
                                break;
                        }
                        l->next = (l->next + 1) % c->n_endpoints;
                }
                memcpy(l->peer, c->endpoints[l->next], sizeof l->peer);
        }
        l->hint[0] = '\0';
        if (address_parse(l->peer, &sa) != 0) {
                fail(c, now, false); /* a bad address in a NOT_LEADER */
                return;
        }
        l->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (l->fd < 0) {
                fail(c, now, false);
                return;
        }
        rv = connect(l->fd, (struct sockaddr *)&sa, sizeof sa);
        if (rv == 0) {
                connected(c, now);
        } else if (errno == EINPROGRESS) {
                l->connecting = true;
                l->deadline = now + CONNECT_MS;
        } else {
                fail(c, now, true);
        }
}

static void finish_connect(struct baton_client *c, int64_t now)
{
        struct link *l = &c->link;
        socklen_t len = sizeof(int);
        int err = 0;

        if (getsockopt(l->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) {
                err = errno;
        }
        if (err != 0) {
                fail(c, now, true); /* refused: killed, or not up yet */
                return;
        }
        connected(c, now);
}

/* --- Sending -------------------------------------------------------------- */

static bool append(struct link *l, const uint8_t *p, size_t n)
{
        if (l->out_len + n > l->out_cap) {
                size_t cap = l->out_cap == 0 ? 4096 : l->out_cap;
                uint8_t *out;
                while (cap < l->out_len + n) {
                        cap *= 2;
                }
                out = realloc(l->out, cap);
                if (out == NULL) {
                        return false;
                }
                l->out = out;
                l->out_cap = cap;
        }
        memcpy(l->out + l->out_len, p, n);
        l->out_len += n;
        return true;
}

/* Write what the socket takes without blocking. -1: the connection
 * failed (the caller decides what to do). */
static int write_out(struct link *l)
{
        size_t off = 0;
        int rv = 0;

        while (off < l->out_len) {
                ssize_t n = send(l->fd, l->out + off, l->out_len - off,
                                 MSG_NOSIGNAL | MSG_DONTWAIT);
                if (n > 0) {
                        off += (size_t)n;
                        continue;
                }
                if (n < 0 && errno == EINTR) {
                        continue;
                }
                if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
                        break;
                }
                rv = -1;
                break;
        }
        memmove(l->out, l->out + off, l->out_len - off);
        l->out_len -= off;
        return rv;
}

static void flush(struct baton_client *c, int64_t now)
{
        struct link *l = &c->link;

        if (l->out_len == 0) {
                return;
        }
        if (write_out(l) != 0) {
                fail(c, now, false);
        } else if (l->out_len > OUT_MAX) {
                fail(c, now, true);
        }
}

/* Queue one request's frame on this connection. False: out of memory,
 * the next round tries again. */
static bool put(struct link *l, struct request *r, int64_t now)
{
        request_set_id(r, ++l->next_id);
        if (!append(l, r->frame, r->len)) {
                return false;
        }
        r->gen = l->gen;
        r->sent_ms = now;
        if (r->sends++ == 0) {
                r->first_sent_ms = now;
        } else {
                l->resends++;
        }
        return true;
}

/* A request made while the connection is up goes out from the calling
 * thread: waking the background thread to send it costs a context switch
 * and three system calls a request, which on a busy machine is much of
 * the client's time. The background thread still reads the answer. What
 * the socket does not take at once, and any error, is left to it (it
 * alone drops connections), so false means "wake it". */
static bool send_direct(struct baton_client *c, struct request *r)
{
        struct link *l = &c->link;
        struct queue *q;
        int64_t now;

        if (l->on_loop || l->fd < 0 || l->connecting || l->out_len > 0) {
                return false;
        }
        QUEUE_FOREACH(q, &c->requests)
        {
                struct request *o = QUEUE_DATA(q, struct request, link);
                if (o != r && !o->done && !link_sent(l, o)) {
                        return false; /* requests go out in list order */
                }
        }
        now = clock_now_ms();
        if (now < r->not_before || !put(l, r, now)) {
                return false;
        }
        return write_out(l) == 0 && l->out_len == 0;
}

/* Put every request that is not on this connection yet on it, in the
 * order of the list; follow an ACQUIRE being withdrawn by its CANCEL. */
static void send_pending(struct baton_client *c, int64_t now)
{
        struct link *l = &c->link;
        struct queue *q;

        QUEUE_FOREACH(q, &c->requests)
        {
                struct request *r = QUEUE_DATA(q, struct request, link);
                if (r->done) {
                        continue;
                }
                if ((r->gen != l->gen || r->sends == 0) &&
                    now >= r->not_before && !put(l, r, now)) {
                        return;
                }
                /* One CANCEL per send of the ACQUIRE: the CANCEL follows it
                 * on the same connection, so when the CANCEL is answered
                 * the ACQUIRE's own answer is (or was) on its way. */
                if (r->withdraw && r->cancel == NULL && link_sent(l, r) &&
                    r->withdrawn_gen != l->gen) {
                        r->withdrawn_gen = l->gen;
                        outcome_withdraw(c, r); /* lands at the tail */
                }
        }
}

/* --- Receiving ------------------------------------------------------------ */

static struct request *find(struct baton_client *c, uint64_t id)
{
        struct link *l = &c->link;
        struct queue *q;

        QUEUE_FOREACH(q, &c->requests)
        {
                struct request *r = QUEUE_DATA(q, struct request, link);
                if (r->id == id && r->gen == l->gen && r->sends > 0 &&
                    !r->done) {
                        return r;
                }
        }
        return NULL;
}

static int status_reply(struct link *l, struct request *r, const uint8_t *body,
                        uint32_t len)
{
        struct proto_status ps;
        struct baton_status *st = r->reply;
        int rv = proto_read_status(body, len, &ps);

        if (rv != 0 || st == NULL) {
                return rv != 0 ? rv : BATON_EINVAL;
        }
        probe_fill_status(st, l->peer, &ps);
        return 0;
}

static int list_reply(struct request *r, const uint8_t *body, uint32_t len)
{
        struct proto_lock_entry *e;
        uint32_t i, n;
        bool more;
        int rv;

        if (r->list == NULL) {
                return BATON_EINVAL;
        }
        e = calloc(r->list_cap, sizeof *e);
        if (e == NULL) {
                return BATON_ENOMEM;
        }
        rv = proto_read_list_reply(body, len, e, r->list_cap, &n, &more);
        if (rv == 0) {
                for (i = 0; i < n; i++) {
                        struct baton_lock_info *o = &r->list[i];
                        memcpy(o->name, e[i].name.p, e[i].name.len);
                        o->name[e[i].name.len] = '\0';
                        o->session = e[i].session;
                        o->owner = e[i].owner;
                        o->token = e[i].token;
                        o->count = e[i].count;
                        o->waiters = e[i].waiters;
                }
                r->list_n = n;
                r->list_more = more;
        }
        free(e);
        return rv;
}

static void not_leader(struct baton_client *c, const uint8_t *body,
                       uint32_t len, int64_t now)
{
        struct link *l = &c->link;
        struct proto_string a = {NULL, 0};
        uint64_t leader = 0;

        l->redirects++;
        if (proto_read_not_leader(body, len, &leader, &a) == 0 && leader != 0 &&
            a.len > 0 && a.len < LINK_ADDR_MAX &&
            (a.len != strlen(l->peer) || memcmp(a.p, l->peer, a.len) != 0)) {
                /* Copied first: the address lives in the frame, which
                 * drop() frees. */
                memcpy(l->hint, a.p, a.len);
                l->hint[a.len] = '\0';
                if (suspect(l, l->hint, now)) {
                        /* It names the node that went silent: it has not
                         * noticed yet. */
                        l->hint[0] = '\0';
                        no_leader(c, now);
                        return;
                }
                /* Every request goes to the leader, so leave this node. */
                drop(c);
                l->bounces++;
                l->retry_at = now + (l->bounces > 2 ? backoff(l->bounces) : 0);
                return;
        }
        no_leader(c, now);
}

/* One whole frame from the server. */
static void dispatch(struct baton_client *c, const struct proto_header *h,
                     const uint8_t *body, int64_t now)
{
        struct link *l = &c->link;
        struct request *r;
        struct proto_result res;
        int status = 0;

        l->last_rx = now;
        if (h->type == PROTO_NOT_LEADER) {
                not_leader(c, body, h->length, now);
                return;
        }
        r = find(c, h->id);
        switch (h->type) {
        case PROTO_PONG:
                if (r != NULL && r == l->ping) {
                        client_discard(c, r);
                }
                return;
        case PROTO_ERROR:
                /* The server refused a frame of ours and closes. */
                if (proto_read_error(body, h->length, &status,
                                     &(struct proto_string){NULL, 0}) != 0) {
                        status = BATON_EMALFORMED;
                }
                if (r != NULL && r != l->ping) {
                        outcome_fail(c, r, status);
                }
                fail(c, now, false);
                return;
        case PROTO_RESULT:
                if (r == NULL) {
                        return;
                }
                if (proto_read_result(body, h->length, &res) != 0) {
                        fail(c, now, false);
                        return;
                }
                switch (res.status) {
                case BATON_EUNKNOWN:
                case BATON_EINFLIGHT:
                        /* Not decided, or not remembered: the same bytes
                         * again, shortly (to the next leader, if this node
                         * lost leadership: it answers NOT_LEADER). */
                        r->gen = 0;
                        r->not_before = now + clock_jitter(RETRY_MS);
                        return;
                case BATON_ENOTLEADER:
                        no_leader(c, now); /* it lost the leadership */
                        return;
                case BATON_EUNAVAILABLE:
                case BATON_ESHUTDOWN:
                        fail(c, now, false);
                        return;
                default:
                        break;
                }
                leader_answered(l);
                r->status = res.status;
                r->res = res;
                outcome_answered(c, r);
                return;
        case PROTO_KEEPALIVE_OK:
                if (r == NULL) {
                        return;
                }
                leader_answered(l);
                r->status = proto_read_u32(body, h->length, &r->ttl_ms);
                outcome_answered(c, r);
                return;
        case PROTO_STATUS_REPLY:
                if (r == NULL) {
                        return;
                }
                r->status = status_reply(l, r, body, h->length);
                outcome_answered(c, r);
                return;
        case PROTO_LIST_REPLY:
                if (r == NULL || r->type != PROTO_LIST) {
                        return;
                }
                leader_answered(l);
                r->status = list_reply(r, body, h->length);
                if (r->status == BATON_EMALFORMED) {
                        fail(c, now, false);
                        return;
                }
                outcome_answered(c, r);
                return;
        default:
                return; /* a request type: not from a server */
        }
}

static void receive(struct baton_client *c, int64_t now)
{
        struct link *l = &c->link;
        uint8_t buf[16384];
        uint64_t gen = l->gen;

        for (;;) {
                ssize_t n = read(l->fd, buf, sizeof buf);
                size_t off = 0;
                if (n == 0) {
                        fail(c, now, true); /* closed: killed, or it left */
                        return;
                }
                if (n < 0) {
                        if (errno == EINTR) {
                                continue;
                        }
                        if (errno != EAGAIN && errno != EWOULDBLOCK) {
                                fail(c, now, true);
                        }
                        return;
                }
                while (off < (size_t)n) {
                        long used = proto_reader_feed(&l->reader, buf + off,
                                                      (size_t)n - off);
                        if (used < 0) {
                                fail(c, now, false);
                                return;
                        }
                        off += (size_t)used;
                        if (l->reader.ready) {
                                dispatch(c, &l->reader.h, l->reader.body, now);
                                if (l->fd < 0 || l->gen != gen) {
                                        return; /* dispatch dropped it */
                                }
                        }
                }
        }
}

/* --- The loop ------------------------------------------------------------- */

/* Whether the handle needs a connection now. */
static bool needed(const struct baton_client *c)
{
        return !queue_empty(&c->requests) || c->session.id != 0;
}

/* Heartbeat and per-request silence: a server that does not answer is
 * abandoned. True when the connection was dropped. */
static bool silent(struct baton_client *c, int64_t now)
{
        struct link *l = &c->link;
        struct queue *q;

        if (l->ping != NULL && link_sent(l, l->ping) &&
            now - l->ping->sent_ms >= l->hb_timeout_ms) {
                l->heartbeat_drops++;
                fail(c, now, true);
                return true;
        }
        QUEUE_FOREACH(q, &c->requests)
        {
                struct request *r = QUEUE_DATA(q, struct request, link);
                if (!r->done && !r->blocking && link_sent(l, r) &&
                    now - r->sent_ms >= TRY_MS) {
                        fail(c, now, true);
                        return true;
                }
        }
        return false;
}

static void step(struct baton_client *c, int64_t now)
{
        struct link *l = &c->link;

        if (l->fd < 0) {
                if (!needed(c) || now < l->retry_at) {
                        return;
                }
                start_connect(c, now);
                if (l->fd < 0 || l->connecting) {
                        return;
                }
        }
        if (l->connecting) {
                if (now >= l->deadline) {
                        fail(c, now, true);
                }
                return;
        }
        if (silent(c, now)) {
                return;
        }
        if (l->ping == NULL && now - l->last_rx >= l->hb_idle_ms) {
                new_ping(c);
        }
        send_pending(c, now);
        if (l->out_len > 0) {
                flush(c, now);
        }
}

static int64_t min64(int64_t a, int64_t b)
{
        return a < b ? a : b;
}

/* How long poll() may sleep. */
static int timeout_ms(const struct baton_client *c, int64_t now)
{
        const struct link *l = &c->link;
        int64_t t = min64(session_next_event(c), now + POLL_MAX_MS);
        struct queue *q;

        if (l->fd < 0) {
                if (needed(c)) {
                        t = min64(t, l->retry_at);
                }
        } else if (l->connecting) {
                t = min64(t, l->deadline);
        } else {
                if (l->ping != NULL && link_sent(l, l->ping)) {
                        t = min64(t, l->ping->sent_ms + l->hb_timeout_ms);
                } else {
                        t = min64(t, l->last_rx + l->hb_idle_ms);
                }
                QUEUE_FOREACH(q, &c->requests)
                {
                        const struct request *r =
                            QUEUE_DATA(q, struct request, link);
                        if (r->done) {
                                continue;
                        }
                        if (!link_sent(l, r)) {
                                t = min64(t, r->not_before);
                        } else if (!r->blocking) {
                                t = min64(t, r->sent_ms + TRY_MS);
                        }
                }
        }
        return t <= now ? 0 : (int)(t - now);
}

/* Run the user's callbacks with the mutex released. True if any ran. */
static bool deliver(struct baton_client *c)
{
        struct notify_event *e;
        bool any = false;

        while ((e = notify_pop(&c->notify)) != NULL) {
                any = true;
                c->link.on_loop = false; /* the callbacks are the user's */
                pthread_mutex_unlock(&c->mu);
                if (e->kind == NOTIFY_STATE && c->opts.on_session != NULL) {
                        c->opts.on_session(c, e->state, c->opts.data);
                } else if (e->kind == NOTIFY_LOST &&
                           c->opts.on_lock_lost != NULL) {
                        c->opts.on_lock_lost(c, e->name, e->token,
                                             c->opts.data);
                }
                free(e);
                pthread_mutex_lock(&c->mu);
                c->link.on_loop = true;
        }
        return any;
}

void *link_main(void *arg)
{
        struct baton_client *c = arg;
        struct link *l = &c->link;
        struct pollfd pfd[2];
        uint64_t drain;
        int64_t now;
        nfds_t n;
        int wait;

        pthread_mutex_lock(&c->mu);
        l->on_loop = true;
        while (!c->stop) {
                now = clock_now_ms();
                session_tick(c, now);
                step(c, now);
                if (deliver(c)) {
                        continue;
                }
                wait = timeout_ms(c, now);
                pfd[0].fd = l->wake;
                pfd[0].events = POLLIN;
                pfd[0].revents = 0;
                n = 1;
                if (l->fd >= 0) {
                        pfd[1].fd = l->fd;
                        pfd[1].events =
                            (short)(l->connecting    ? POLLOUT
                                    : l->out_len > 0 ? POLLIN | POLLOUT
                                                     : POLLIN);
                        pfd[1].revents = 0;
                        n = 2;
                }
                l->on_loop = false;
                pthread_mutex_unlock(&c->mu);
                if (poll(pfd, n, wait) < 0 && errno != EINTR) {
                        pfd[0].revents = 0;
                        n = 1;
                }
                pthread_mutex_lock(&c->mu);
                l->on_loop = true;
                if (pfd[0].revents & POLLIN) {
                        ssize_t rv = read(l->wake, &drain, sizeof drain);
                        (void)rv;
                }
                if (n < 2 || pfd[1].revents == 0 || c->stop) {
                        continue;
                }
                now = clock_now_ms();
                if (l->connecting) {
                        finish_connect(c, now);
                        continue;
                }
                if (pfd[1].revents & (POLLIN | POLLERR | POLLHUP)) {
                        receive(c, now);
                }
                if (l->fd >= 0 && (pfd[1].revents & POLLOUT)) {
                        flush(c, now);
                }
        }
        drop(c);
        l->on_loop = false;
        pthread_mutex_unlock(&c->mu);
        return NULL;
}
