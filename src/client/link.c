/* The transport of a handle: one connection to the cluster at a time. */
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

#include "../../include/baton.h"
#include "../lib/address.h"
#include "clock.h"
#include "resolve.h"

#define CONNECT_MS       1000    /* one connect attempt, at most */
#define BACKOFF_BASE_MS  10      /* first pause after failures in a row */
#define BACKOFF_MAX_MS   1000    /* longest pause between attempts */
#define SUSPECT_MS       3000    /* ignore a silent node's hints this long */
#define ELECTION_POLL_MS 40      /* ask again this often while one runs, */
#define ELECTION_FAST_MS 3000    /* for this long; then the usual backoff */
#define OUT_MAX          1048576 /* unwritten bytes: the server reads none */

int link_init(struct link *l, const char (*endpoints)[LINK_ADDR_MAX],
              unsigned n_endpoints, struct tls_ctx *tls)
{
        memset(l, 0, sizeof *l);
        l->fd = -1;
        l->tls = tls;
        l->endpoints = endpoints;
        l->n_endpoints = n_endpoints;
        l->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (l->wake < 0) {
                return errno == ENOMEM ? BATON_ENOMEM : BATON_EIO;
        }
        proto_reader_init(&l->reader, PROTO_MAX_BODY, &mem_libc);
        return 0;
}

/* The resolved addresses of the peer are no longer needed. */
static void forget_addrs(struct link *l)
{
        if (l->addrs != NULL) {
                freeaddrinfo(l->addrs);
        }
        l->addrs = NULL;
        l->next_addr = NULL;
}

void link_close(struct link *l)
{
        tls_conn_destroy(l->tc);
        l->tc = NULL;
        free(l->cout);
        l->cout = NULL;
        forget_addrs(l);
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

void link_listen(struct link *l, const struct link_cb *cb)
{
        l->cb = *cb;
}

void link_wake(struct link *l)
{
        uint64_t one = 1;
        ssize_t rv = write(l->wake, &one, sizeof one);

        (void)rv; /* EAGAIN: the counter is already non-zero */
}

bool link_up(const struct link *l)
{
        return l->fd >= 0 && !l->connecting && !l->handshaking;
}

bool link_busy(const struct link *l)
{
        return l->out_len > 0 || l->cout_len > 0;
}

/* --- Choosing a node ------------------------------------------------------ */

static bool suspect(const struct link *l, const char *address, int64_t now)
{
        return now < l->suspect_until && strcmp(address, l->suspect) == 0;
}

/* After trouble with the current peer: the endpoint after it is next. */
static void advance(struct link *l)
{
        unsigned i;

        for (i = 0; i < l->n_endpoints; i++) {
                if (strcmp(l->endpoints[i], l->peer) == 0) {
                        l->next = (i + 1) % l->n_endpoints;
                        return;
                }
        }
        l->next = (l->next + 1) % l->n_endpoints;
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

/* Close the connection and tell the owner, which resends on the next one
 * what it had sent on this. */
static void drop(struct link *l)
{
        forget_addrs(l);
        if (l->fd >= 0) {
                close(l->fd);
                l->fd = -1;
        }
        l->connecting = false;
        l->handshaking = false;
        tls_conn_destroy(l->tc);
        l->tc = NULL;
        l->out_len = 0;
        l->cout_len = 0;
        proto_reader_close(&l->reader);
        proto_reader_init(&l->reader, PROTO_MAX_BODY, &mem_libc);
        l->cb.closed(l->cb.data, l->gen);
}

void link_disconnect(struct link *l)
{
        drop(l);
}

/* The connection or the attempt failed: move on, and back off when
 * failures repeat. A node that went silent is avoided for a while, even
 * when others name it as the leader (they learn of its death late). */
void link_fail(struct link *l, int64_t now, bool silent)
{
        if (silent) {
                memcpy(l->suspect, l->peer, sizeof l->suspect);
                l->suspect_until = now + SUSPECT_MS;
        }
        drop(l);
        advance(l);
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
void link_no_leader(struct link *l, int64_t now)
{
        if (l->leaderless_since == 0) {
                l->leaderless_since = now;
        }
        link_fail(l, now, false);
        if (now - l->leaderless_since < ELECTION_FAST_MS) {
                l->retry_at = now + clock_jitter(ELECTION_POLL_MS);
        }
}

void link_leader_answered(struct link *l)
{
        l->failures = 0;
        l->bounces = 0;
        l->leaderless_since = 0;
}

static void pump_tls(struct link *l, int64_t now);

/* The connection is up, TLS and all: the owner may send. */
static void up(struct link *l, int64_t now)
{
        l->handshaking = false;
        l->gen++;
        l->connects++;
        l->last_rx = now;
        l->cb.connected(l->cb.data, now);
}

/* TCP is connected: with TLS, the handshake starts, with the same deadline
 * as a connect. The server's certificate must name the host the endpoint
 * names. */
static void connected(struct link *l, int64_t now)
{
        struct address a;
        int one = 1;

        setsockopt(l->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        forget_addrs(l);
        l->connecting = false;
        if (l->tls == NULL) {
                up(l, now);
                return;
        }
        if (address_parse(l->peer, &a) != 0 ||
            tls_conn_create(&l->tc, l->tls, NULL, a.host) != 0) {
                link_fail(l, now, false);
                return;
        }
        l->handshaking = true;
        l->deadline = now + CONNECT_MS;
        pump_tls(l, now);
}

/* Connect to the next resolved address of the peer; when none is left,
 * the attempt failed. */
static void try_next(struct link *l, int64_t now)
{
        while (l->next_addr != NULL) {
                const struct addrinfo *ai = l->next_addr;
                l->next_addr = ai->ai_next;
                if (l->fd >= 0) {
                        close(l->fd);
                }
                l->connecting = false;
                l->fd = socket(ai->ai_family,
                               SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
                if (l->fd < 0) {
                        continue;
                }
                if (connect(l->fd, ai->ai_addr, ai->ai_addrlen) == 0) {
                        connected(l, now);
                        return;
                }
                if (errno == EINPROGRESS) {
                        l->connecting = true;
                        l->deadline = now + CONNECT_MS;
                        return;
                }
        }
        link_fail(l, now, true);
}

static void start_connect(struct link *l, int64_t now)
{
        unsigned i;

        if (l->hint[0] != '\0' && !suspect(l, l->hint, now)) {
                memcpy(l->peer, l->hint, sizeof l->peer);
        } else {
                for (i = 0; i < l->n_endpoints; i++) {
                        if (!suspect(l, l->endpoints[l->next], now)) {
                                break;
                        }
                        l->next = (l->next + 1) % l->n_endpoints;
                }
                memcpy(l->peer, l->endpoints[l->next], sizeof l->peer);
        }
        l->hint[0] = '\0';
        /* A bad address in a NOT_LEADER, or a name that does not resolve. */
        if (resolve_endpoint(l->peer, &l->addrs) != 0) {
                link_fail(l, now, false);
                return;
        }
        l->next_addr = l->addrs;
        try_next(l, now);
}

static void finish_connect(struct link *l, int64_t now)
{
        socklen_t len = sizeof(int);
        int err = 0;

        if (getsockopt(l->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) {
                err = errno;
        }
        if (err != 0) {
                try_next(l, now); /* refused: killed, or not up yet */
                return;
        }
        connected(l, now);
}

bool link_step(struct link *l, int64_t now, bool needed)
{
        if (l->fd < 0) {
                if (!needed || now < l->retry_at) {
                        return false;
                }
                start_connect(l, now);
                if (l->fd < 0 || l->connecting) {
                        return false;
                }
        }
        if (l->connecting && now >= l->deadline) {
                try_next(l, now); /* the next address, if any */
        } else if (l->handshaking && now >= l->deadline) {
                snprintf(l->tls_errmsg, sizeof l->tls_errmsg,
                         "%s: no TLS handshake within %d ms", l->peer,
                         CONNECT_MS);
                l->tls_refused = true;
                link_fail(l, now, true);
        }
        return link_up(l);
}

int64_t link_next_event(const struct link *l, bool needed)
{
        if (l->fd < 0) {
                return needed ? l->retry_at : CLOCK_NEVER;
        }
        return l->connecting || l->handshaking ? l->deadline : CLOCK_NEVER;
}

/* Ciphertext waits, in the link or still in the TLS state. */
static bool sealed_waiting(const struct link *l)
{
        return l->cout_len > 0 || (l->tc != NULL && tls_pending(l->tc) > 0);
}

short link_events(const struct link *l)
{
        if (l->fd < 0) {
                return 0;
        }
        if (l->connecting) {
                return POLLOUT;
        }
        return (short)(l->out_len > 0 || sealed_waiting(l) ? POLLIN | POLLOUT
                                                           : POLLIN);
}

/* --- Writing -------------------------------------------------------------- */

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

uint64_t link_put(struct link *l, uint8_t *frame, size_t len)
{
        uint64_t id = ++l->next_id;

        proto_header_set_id(frame, id);
        return append(l, frame, len) ? id : 0;
}

/* Send what `fd` takes of the `*len` bytes of `buf` without blocking, and
 * keep the rest at its start. -1: the connection failed. */
static int send_some(int fd, uint8_t *buf, size_t *len)
{
        size_t off = 0;
        int rv = 0;

        while (off < *len) {
                ssize_t n = send(fd, buf + off, *len - off,
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
        if (off > 0) {
                memmove(buf, buf + off, *len - off);
                *len -= off;
        }
        return rv;
}

/* With TLS, queued frames become records once the handshake is done, and
 * the records and handshake messages wait in `cout`. -1: the connection
 * failed. */
static int seal(struct link *l)
{
        size_t need;
        uint8_t *p;

        if (l->out_len > 0 && tls_ready(l->tc)) {
                if (tls_write(l->tc, l->out, l->out_len) != 0) {
                        return -1;
                }
                l->out_len = 0;
        }
        need = l->cout_len + tls_pending(l->tc);
        if (need > l->cout_cap) {
                p = realloc(l->cout, need);
                if (p == NULL) {
                        return -1;
                }
                l->cout = p;
                l->cout_cap = need;
        }
        l->cout_len +=
            tls_take(l->tc, l->cout + l->cout_len, l->cout_cap - l->cout_len);
        return 0;
}

/* Write what the socket takes without blocking. -1: the connection
 * failed (the caller decides what to do). */
static int write_out(struct link *l)
{
        if (l->tc == NULL) {
                return send_some(l->fd, l->out, &l->out_len);
        }
        if (seal(l) != 0) {
                return -1;
        }
        return send_some(l->fd, l->cout, &l->cout_len);
}

bool link_write(struct link *l)
{
        return write_out(l) == 0 && !link_busy(l);
}

void link_flush(struct link *l, int64_t now)
{
        if (!link_busy(l) && !sealed_waiting(l)) {
                return;
        }
        if (write_out(l) != 0) {
                link_fail(l, now, false);
        } else if (l->out_len + l->cout_len > OUT_MAX) {
                link_fail(l, now, true);
        }
}

/* --- Reading -------------------------------------------------------------- */

/* A follower names the leader, or knows none. */
static void not_leader(struct link *l, const uint8_t *body, uint32_t len,
                       int64_t now)
{
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
                        link_no_leader(l, now);
                        return;
                }
                /* Every request goes to the leader, so leave this node. */
                drop(l);
                l->bounces++;
                l->retry_at = now + (l->bounces > 2 ? backoff(l->bounces) : 0);
                return;
        }
        link_no_leader(l, now);
}

/* A node that requires TLS answers a plain connection with one plain
 * ERROR frame (BATON_ETLS): remember it, as for a refused handshake. */
static void plain_refused(struct link *l)
{
        struct proto_string msg = {NULL, 0};
        int status = 0;

        if (l->tc == NULL &&
            proto_read_error(l->reader.body, l->reader.h.length, &status,
                             &msg) == 0 &&
            status == BATON_ETLS) {
                l->tls_refused = true;
                snprintf(l->tls_errmsg, sizeof l->tls_errmsg, "%s: %.*s",
                         l->peer, (int)msg.len, msg.p);
        }
}

/* Hand over the frames in `n` bytes of plaintext. False when one of them
 * dropped the connection or a new one replaced it. */
static bool frames(struct link *l, const uint8_t *buf, size_t n, uint64_t gen,
                   int64_t now)
{
        size_t off = 0;

        while (off < n) {
                long used = proto_reader_feed(&l->reader, buf + off, n - off);
                if (used < 0) {
                        link_fail(l, now, false);
                        return false;
                }
                off += (size_t)used;
                if (!l->reader.ready) {
                        continue;
                }
                l->last_rx = now;
                if (l->reader.h.type == PROTO_ERROR) {
                        plain_refused(l);
                }
                if (l->reader.h.type == PROTO_NOT_LEADER) {
                        not_leader(l, l->reader.body, l->reader.h.length, now);
                } else {
                        l->cb.frame(l->cb.data, &l->reader.h, l->reader.body,
                                    now);
                }
                if (l->fd < 0 || l->gen != gen) {
                        return false; /* the frame dropped it */
                }
        }
        return true;
}

/* The TLS handshake or a record failed (the node refused our certificate,
 * or we its), or the node closed: try elsewhere, and remember why for the
 * requests that find no node. */
static void tls_failed(struct link *l, long rv, int64_t now)
{
        if (rv == BATON_ETLS) {
                snprintf(l->tls_errmsg, sizeof l->tls_errmsg, "%s: %s", l->peer,
                         tls_errmsg(l->tc));
                l->tls_refused = true;
        }
        link_fail(l, now, rv != BATON_ETLS);
}

/* Decrypt what arrived: the handshake's end brings the connection up, and
 * records carry frames. False when the connection dropped or changed. */
static bool unseal(struct link *l, uint64_t *gen, int64_t now)
{
        uint8_t plain[16384];

        for (;;) {
                long rv = tls_read(l->tc, plain, sizeof plain);
                if (rv < 0) {
                        tls_failed(l, rv, now);
                        return false;
                }
                if (l->handshaking && tls_ready(l->tc)) {
                        l->tls_refused = false;
                        up(l, now);
                        *gen = l->gen;
                        if (l->fd < 0) {
                                return false;
                        }
                }
                if (rv == 0) {
                        return true;
                }
                if (!frames(l, plain, (size_t)rv, *gen, now)) {
                        return false;
                }
        }
}

/* Move the TLS handshake on, and send what it has to say. */
static void pump_tls(struct link *l, int64_t now)
{
        uint64_t gen = l->gen;

        if (unseal(l, &gen, now)) {
                link_flush(l, now);
        }
}

static void receive(struct link *l, int64_t now)
{
        uint8_t buf[16384];
        uint64_t gen = l->gen;

        for (;;) {
                ssize_t n = read(l->fd, buf, sizeof buf);
                if (n == 0) {
                        link_fail(l, now, true); /* closed: killed, or left */
                        return;
                }
                if (n < 0) {
                        if (errno == EINTR) {
                                continue;
                        }
                        if (errno != EAGAIN && errno != EWOULDBLOCK) {
                                link_fail(l, now, true);
                        }
                        return;
                }
                if (l->tc == NULL) {
                        if (!frames(l, buf, (size_t)n, gen, now)) {
                                return;
                        }
                        continue;
                }
                if (tls_feed(l->tc, buf, (size_t)n) != 0 ||
                    !unseal(l, &gen, now)) {
                        if (l->fd >= 0 && l->gen == gen) {
                                link_fail(l, now, false); /* no memory */
                        }
                        return;
                }
        }
}

void link_drive(struct link *l, int *rv, int64_t deadline,
                int64_t (*turn)(void *data, int64_t now), void *data)
{
        while (*rv == 1) {
                int64_t now = clock_now_ms();
                int64_t until = link_next_event(l, true), next;
                struct pollfd pfd;
                int n;
                if (now >= deadline) {
                        *rv = l->tls_refused ? BATON_ETLS : BATON_ENOANSWER;
                        return;
                }
                link_step(l, now, true);
                next = turn != NULL && *rv == 1 ? turn(data, now) : CLOCK_NEVER;
                if (*rv != 1) {
                        return;
                }
                if (link_busy(l)) {
                        link_flush(l, now);
                }
                until = next < until ? next : until;
                until = until < deadline ? until : deadline;
                pfd.fd = l->fd;
                pfd.events = link_events(l);
                pfd.revents = 0;
                n = poll(&pfd, l->fd >= 0 ? 1 : 0,
                         (int)(until > now ? until - now : 0));
                if (n < 0 && errno != EINTR) {
                        *rv = BATON_EIO;
                } else if (n > 0) {
                        link_ready(l, pfd.revents, clock_now_ms());
                }
        }
}

void link_ready(struct link *l, short revents, int64_t now)
{
        if (l->connecting) {
                finish_connect(l, now);
                return;
        }
        if (revents & (POLLIN | POLLERR | POLLHUP)) {
                receive(l, now);
        }
        /* What the TLS state answered goes out now, not a poll later. */
        if (l->fd >= 0 && ((revents & POLLOUT) || sealed_waiting(l))) {
                link_flush(l, now);
        }
}
