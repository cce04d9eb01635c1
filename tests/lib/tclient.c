/* A small blocking client of Baton's wire protocol for the integration
 * tests: poll() with deadlines, no threads, one session per client. */
#include "tclient.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "../../include/baton.h"
#include "../../src/lib/address.h"
#include "../../src/proto/reply.h"
#include "../../src/proto/query.h"
#include "../../src/proto/member.h"
#include "../../src/proto/status.h"
#include "../../src/proto/keepalive.h"
#include "../../src/proto/list.h"

#define CONNECT_MS_MAX 1000 /* one connect attempt, at most */

int64_t tclient_now_ns(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t tclient_now_ms(void)
{
        return tclient_now_ns() / 1000000;
}

void tclient_sleep_ms(int64_t ms)
{
        struct timespec ts;

        if (ms <= 0) {
                return;
        }
        ts.tv_sec = (time_t)(ms / 1000);
        ts.tv_nsec = (long)(ms % 1000) * 1000000;
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
        }
}

static int64_t min64(int64_t a, int64_t b)
{
        return a < b ? a : b;
}

/* Sleep up to `ms`, never past `deadline`: a retry pause, never a wait
 * for some state to be reached. */
static void pause_until(int64_t ms, int64_t deadline)
{
        tclient_sleep_ms(min64(ms, deadline - tclient_now_ms()));
}

static uint64_t random_u64(void)
{
        uint64_t v = 0;

        while (v == 0) {
                if (getrandom(&v, sizeof v, 0) != (ssize_t)sizeof v) {
                        v = (uint64_t)tclient_now_ns() ^
                            ((uint64_t)getpid() << 32);
                }
        }
        return v;
}

/* A fresh secret, and its SHA-256 (what OPEN carries). */
static void new_secret(uint8_t *secret, uint8_t *hash)
{
        unsigned len = 0;

        for (size_t i = 0; i < ATTACH_SECRET_SIZE; i += 8) {
                uint64_t v = random_u64();
                memcpy(secret + i, &v, 8);
        }
        EVP_Digest(secret, ATTACH_SECRET_SIZE, hash, &len, EVP_sha256(), NULL);
}

void tclient_own(struct tclient *c, uint64_t session, const uint8_t *secret)
{
        c->owned = session;
        memcpy(c->secret, secret, ATTACH_SECRET_SIZE);
        c->attached_gen = 0;
}

/* --- Connection ------------------------------------------------------------
 */

void tclient_disconnect(struct tclient *c)
{
        if (c->fd >= 0) {
                close(c->fd);
                c->fd = -1;
        }
        tls_conn_destroy(c->tc);
        c->tc = NULL;
        c->cout_len = 0;
        c->in_off = 0;
        c->in_len = 0;
        proto_reader_close(&c->reader);
        proto_reader_init(&c->reader, PROTO_MAX_BODY, &mem_libc);
}

static int send_cipher(struct tclient *c, int64_t deadline);

/* Wait until fd is readable (or writable) or `deadline`: 0 or
 * BATON_ENOANSWER. */
static int wait_fd(int fd, short events, int64_t deadline)
{
        struct pollfd pfd;

        for (;;) {
                int64_t left = deadline - tclient_now_ms();
                int rv;
                if (left <= 0) {
                        return BATON_ENOANSWER;
                }
                pfd.fd = fd;
                pfd.events = events;
                rv = poll(&pfd, 1, (int)left);
                if (rv > 0) {
                        return 0;
                }
                if (rv < 0 && errno != EINTR) {
                        return BATON_EIO;
                }
        }
}

/* A TLS failure, or the node closing: the connection is dropped. */
static int tls_broken(struct tclient *c, long rv)
{
        snprintf(c->errmsg, sizeof c->errmsg, "%s: %s", c->peer,
                 rv == BATON_ETLS ? tls_errmsg(c->tc) : "connection closed");
        tclient_disconnect(c);
        return rv == BATON_ETLS ? BATON_ETLS : BATON_EIO;
}

/* Read what the socket has (waiting until `deadline`) into the TLS state.
 * 0, BATON_ENOANSWER, or BATON_EIO when the connection is gone (it is
 * dropped). */
static int send_cipher(struct tclient *c, int64_t deadline);

static int feed_cipher(struct tclient *c, int64_t deadline)
{
        uint8_t buf[16384];
        ssize_t n;
        int rv;

        for (;;) {
                /* Records sealed earlier go out while we wait (one try, no
                 * blocking): their frames were counted as sent, and the
                 * answers to them never come if they stay here. */
                if (c->cout_len > 0) {
                        rv = send_cipher(c, tclient_now_ms());
                        if (rv != 0 && rv != BATON_ENOANSWER) {
                                return rv;
                        }
                }
                rv = wait_fd(c->fd, c->cout_len > 0 ? POLLIN | POLLOUT : POLLIN,
                             deadline);
                if (rv != 0) {
                        return rv;
                }
                n = read(c->fd, buf, sizeof buf);
                if (n > 0) {
                        break;
                }
                if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
                        continue;
                }
                snprintf(c->errmsg, sizeof c->errmsg, "connection to %s %s",
                         c->peer, n == 0 ? "closed" : strerror(errno));
                tclient_disconnect(c);
                return BATON_EIO;
        }
        if (tls_feed(c->tc, buf, (size_t)n) != 0) {
                tclient_disconnect(c);
                return BATON_ENOMEM;
        }
        return 0;
}

/* The TLS handshake on the new connection, verifying the node's
 * certificate against `host`. 0, or a BATON_E* code with errmsg set. */
static int handshake(struct tclient *c, const char *host, int64_t deadline)
{
        uint8_t none[1];
        long rv;

        if (tls_conn_create(&c->tc, c->tls,
                            c->expect[0] != '\0' ? c->expect : NULL,
                            host) != 0) {
                tclient_disconnect(c);
                return BATON_ENOMEM;
        }
        for (;;) {
                rv = tls_read(c->tc, none, 0);
                if (rv < 0) {
                        return tls_broken(c, rv);
                }
                rv = send_cipher(c, deadline);
                if (rv != 0 || tls_ready(c->tc)) {
                        return (int)rv;
                }
                rv = feed_cipher(c, deadline);
                if (rv != 0) {
                        return (int)rv;
                }
        }
}

/* TLS from the environment, as libbaton reads it, when the client is
 * first used (so that a client set up and dropped holds nothing). */
static int load_tls(struct tclient *c)
{
        struct tls_files f;

        if (c->tls != NULL) {
                return 0;
        }
        f.ca = getenv("BATON_CACERT");
        f.cert = getenv("BATON_CERT");
        f.key = getenv("BATON_KEY");
        f.crl = NULL;
        if (f.ca == NULL || f.cert == NULL || f.key == NULL ||
            f.ca[0] == '\0') {
                return 0;
        }
        return tls_ctx_create(&c->tls, TLS_CLIENT, &f, c->errmsg,
                              sizeof c->errmsg);
}

static int connect_to(struct tclient *c, const char *address, int64_t deadline)
{
        struct address a;
        struct addrinfo hints, *ai;
        struct sockaddr_storage sa;
        socklen_t sa_len;
        struct pollfd pfd;
        socklen_t len = sizeof(int);
        int fd, err = 0, one = 1, rv;

        tclient_disconnect(c);
        if (load_tls(c) != 0) {
                return BATON_ETLS;
        }
        memset(&hints, 0, sizeof hints);
        hints.ai_socktype = SOCK_STREAM;
        hints.ai_flags = AI_NUMERICSERV;
        if (address_parse(address, &a) != 0 ||
            getaddrinfo(a.host, a.service, &hints, &ai) != 0) {
                snprintf(c->errmsg, sizeof c->errmsg, "bad address %s",
                         address);
                return BATON_EINVAL;
        }
        /* The first address is enough for the clusters of the tests. */
        memcpy(&sa, ai->ai_addr, ai->ai_addrlen);
        sa_len = ai->ai_addrlen;
        fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
                    0);
        freeaddrinfo(ai);
        if (fd < 0) {
                return BATON_EIO;
        }
        /* Before connect(), so that the window scale follows them. */
        if (c->rcvbuf > 0) {
                setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &c->rcvbuf,
                           sizeof c->rcvbuf);
        }
        if (c->sndbuf > 0) {
                setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &c->sndbuf,
                           sizeof c->sndbuf);
        }
        rv = connect(fd, (struct sockaddr *)&sa, sa_len);
        if (rv != 0 && errno != EINPROGRESS) {
                err = errno;
                goto fail;
        }
        if (rv != 0) {
                for (;;) {
                        int64_t left = deadline - tclient_now_ms();
                        if (left <= 0) {
                                close(fd);
                                return BATON_ENOANSWER;
                        }
                        pfd.fd = fd;
                        pfd.events = POLLOUT;
                        rv = poll(&pfd, 1, (int)left);
                        if (rv > 0) {
                                break;
                        }
                        if (rv < 0 && errno != EINTR) {
                                err = errno;
                                goto fail;
                        }
                }
                if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) {
                        err = errno;
                }
                if (err != 0) {
                        goto fail;
                }
        }
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        c->fd = fd;
        snprintf(c->peer, sizeof c->peer, "%s", address);
        if (c->tls != NULL) {
                rv = handshake(c, a.host, deadline);
                if (rv != 0) {
                        return rv;
                }
        }
        c->gen++;
        c->reconnects++;
        return 0;

fail:
        close(fd);
        snprintf(c->errmsg, sizeof c->errmsg, "connect %s: %s", address,
                 strerror(err));
        return BATON_EIO;
}

/* After a lost or useless connection: forget the hint and move on to the
 * endpoint after the one we were on. */
static void advance(struct tclient *c)
{
        unsigned i;

        c->hint[0] = '\0';
        for (i = 0; i < c->n_endpoints; i++) {
                if (strcmp(c->endpoints[i], c->peer) == 0) {
                        c->next = (i + 1) % c->n_endpoints;
                        return;
                }
        }
        c->next = (c->next + 1) % c->n_endpoints;
}

/* Whether the server has closed the connection (EOF or an error waiting
 * and nothing left to read), as a killed node's has: better found before
 * sending than after. */
static bool peer_gone(struct tclient *c)
{
        struct pollfd pfd = {c->fd, POLLIN, 0};
        char b;

        if (c->in_off < c->in_len || poll(&pfd, 1, 0) <= 0) {
                return false;
        }
        if (pfd.revents & (POLLERR | POLLNVAL)) {
                return true;
        }
        return recv(c->fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
}

/* Connect to the hinted leader, or else the next endpoint. */
static int ensure_connected(struct tclient *c, int64_t deadline)
{
        const char *target;
        bool hinted = c->hint[0] != '\0';
        int rv;

        if (c->fd >= 0 && peer_gone(c)) {
                tclient_disconnect(c);
                advance(c);
        }
        if (c->fd >= 0) {
                return 0;
        }
        target = hinted ? c->hint : c->endpoints[c->next % c->n_endpoints];
        rv = connect_to(c, target,
                        min64(deadline, tclient_now_ms() + CONNECT_MS_MAX));
        if (rv != 0) {
                if (hinted) {
                        c->hint[0] = '\0';
                } else {
                        c->next = (c->next + 1) % c->n_endpoints;
                }
        }
        return rv;
}

/* Send until `len` bytes are sent or `deadline`; `*sent` counts. */
static int send_raw(struct tclient *c, const uint8_t *p, size_t len,
                    int64_t deadline, size_t *sent)
{
        while (len > 0) {
                ssize_t n;
                if (c->fd < 0) {
                        return BATON_EIO;
                }
                n = send(c->fd, p, len, MSG_NOSIGNAL);
                if (n > 0) {
                        p += n;
                        len -= (size_t)n;
                        *sent += (size_t)n;
                        continue;
                }
                if (n < 0 && errno == EINTR) {
                        continue;
                }
                if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
                        if (wait_fd(c->fd, POLLOUT, deadline) != 0) {
                                return BATON_ENOANSWER;
                        }
                        continue;
                }
                snprintf(c->errmsg, sizeof c->errmsg, "send to %s: %s", c->peer,
                         strerror(errno));
                tclient_disconnect(c);
                return BATON_EIO;
        }
        return 0;
}

/* Send the ciphertext waiting, in `cout` and in the TLS state. */
static int send_cipher(struct tclient *c, int64_t deadline)
{
        size_t need = c->cout_len + tls_pending(c->tc);
        size_t sent = 0;
        int rv;

        if (need > c->cout_cap) {
                uint8_t *p = realloc(c->cout, need);
                if (p == NULL) {
                        return BATON_ENOMEM;
                }
                c->cout = p;
                c->cout_cap = need;
        }
        c->cout_len +=
            tls_take(c->tc, c->cout + c->cout_len, c->cout_cap - c->cout_len);
        rv = send_raw(c, c->cout, c->cout_len, deadline, &sent);
        if (c->fd >= 0) {
                memmove(c->cout, c->cout + sent, c->cout_len - sent);
                c->cout_len -= sent;
        }
        return rv;
}

/* Send until all is sent or `deadline`; `*sent` (may be NULL) counts. With
 * TLS, a record of at most 16 KiB is sealed only once the one before it
 * went, so that `*sent` counts what the node can read. */
static int send_some(struct tclient *c, const uint8_t *p, size_t len,
                     int64_t deadline, size_t *sent)
{
        size_t none = 0;
        int rv;

        if (sent == NULL) {
                sent = &none;
        }
        if (c->tc == NULL) {
                return send_raw(c, p, len, deadline, sent);
        }
        do {
                size_t chunk = len < 16384 ? len : 16384;
                rv = send_cipher(c, deadline);
                if (rv != 0) {
                        return rv;
                }
                if (tls_write(c->tc, p, chunk) != 0) {
                        return tls_broken(c, BATON_ETLS);
                }
                p += chunk;
                len -= chunk;
                *sent += chunk;
        } while (len > 0);
        return send_cipher(c, deadline);
}

static int send_all(struct tclient *c, const uint8_t *p, size_t len,
                    int64_t deadline)
{
        return send_some(c, p, len, deadline, NULL);
}

/* The next plaintext from the TLS connection into `in`: 0, BATON_ENOANSWER,
 * or BATON_EIO / BATON_ETLS when the connection is gone (it is dropped). */
static int recv_plain(struct tclient *c, int64_t deadline)
{
        for (;;) {
                long n = tls_read(c->tc, c->in, sizeof c->in);
                int rv;
                if (n > 0) {
                        c->in_off = 0;
                        c->in_len = (size_t)n;
                        return 0;
                }
                if (n < 0) {
                        return tls_broken(c, n);
                }
                if (tls_pending(c->tc) > 0) {
                        send_cipher(c, deadline); /* a key update */
                }
                rv = feed_cipher(c, deadline);
                if (rv != 0) {
                        return rv;
                }
        }
}

/* The next whole frame from the connection: 0, BATON_ENOANSWER, or
 * BATON_EIO when the connection is gone (it is dropped). */
static int recv_frame(struct tclient *c, int64_t deadline,
                      struct proto_header *h, const uint8_t **body)
{
        struct pollfd pfd;

        for (;;) {
                if (c->in_off < c->in_len) {
                        long used =
                            proto_reader_feed(&c->reader, c->in + c->in_off,
                                              c->in_len - c->in_off);
                        if (used < 0) {
                                snprintf(c->errmsg, sizeof c->errmsg,
                                         "bad frame from %s: %s", c->peer,
                                         baton_strerror((int)used));
                                tclient_disconnect(c);
                                return BATON_EIO;
                        }
                        c->in_off += (size_t)used;
                        if (c->reader.ready) {
                                *h = c->reader.h;
                                *body = c->reader.body;
                                return 0;
                        }
                        continue;
                }
                if (c->fd < 0) {
                        return BATON_EIO;
                }
                if (c->tc != NULL) {
                        int rv = recv_plain(c, deadline);
                        if (rv != 0) {
                                return rv;
                        }
                        continue;
                }
                {
                        int64_t left = deadline - tclient_now_ms();
                        ssize_t n;
                        int rv;
                        if (left <= 0) {
                                return BATON_ENOANSWER;
                        }
                        pfd.fd = c->fd;
                        pfd.events = POLLIN;
                        rv = poll(&pfd, 1, (int)left);
                        if (rv < 0 && errno == EINTR) {
                                continue;
                        }
                        if (rv == 0) {
                                return BATON_ENOANSWER;
                        }
                        n = read(c->fd, c->in, sizeof c->in);
                        if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
                                continue;
                        }
                        if (n <= 0) {
                                snprintf(c->errmsg, sizeof c->errmsg,
                                         "connection to %s %s", c->peer,
                                         n == 0 ? "closed" : strerror(errno));
                                tclient_disconnect(c);
                                return BATON_EIO;
                        }
                        c->in_off = 0;
                        c->in_len = (size_t)n;
                }
        }
}

/* --- Requests --------------------------------------------------------------
 */

static void patch_id(uint8_t *frame, uint64_t id)
{
        unsigned i;

        for (i = 0; i < 8; i++) {
                frame[8 + i] = (uint8_t)(id >> (8 * i));
        }
}

static void stash(struct tclient_req *r, const struct proto_header *h,
                  const uint8_t *body)
{
        size_t n =
            h->length < TCLIENT_ANSWER_MAX ? h->length : TCLIENT_ANSWER_MAX;

        r->answered = true;
        r->ah = *h;
        r->ah.length = (uint32_t)n;
        if (n > 0) {
                memcpy(r->answer, body, n);
        }
}

static bool on_live_conn(const struct tclient *c, const struct tclient_req *r)
{
        return c->fd >= 0 && r->gen == c->gen;
}

/* Read frames until `r` is answered. Answers to the command in flight are
 * kept for it; answers to requests given up on are dropped. */
static int wait_answer(struct tclient *c, struct tclient_req *r, int64_t until)
{
        struct proto_header h;
        const uint8_t *body;
        int rv;

        while (!r->answered) {
                if (!on_live_conn(c, r)) {
                        return BATON_EIO;
                }
                rv = recv_frame(c, until, &h, &body);
                if (rv != 0) {
                        return rv;
                }
                if (h.id == r->id) {
                        stash(r, &h, body);
                } else if (c->inflight && r != &c->cmd &&
                           on_live_conn(c, &c->cmd) && h.id == c->cmd.id) {
                        stash(&c->cmd, &h, body);
                }
        }
        return 0;
}

/* The pause after the leader turned out unknown or unreachable: jittered
 * so that clients do not move in step. */
static void back_off(struct tclient *c, int64_t deadline)
{
        int64_t ms = c->backoff_ms / 2 +
                     (int64_t)(random_u64() % (uint64_t)(c->backoff_ms + 1));

        pause_until(ms, deadline);
}

/*
 * Send `r` and wait for its answer until `deadline`, following NOT_LEADER,
 * moving to another endpoint when the connection is lost or silent for
 * try_ms, and sending the same frame again after BATON_EUNKNOWN. Returns 0
 * with the answer in r->ah / r->answer (RESULT, KEEPALIVE_OK, STATUS_REPLY
 * or PONG), an ERROR frame's status, BATON_ENOTLEADER when not following,
 * or BATON_ENOANSWER.
 */
/* Before `r` goes out on this connection: ATTACH to the owned session,
 * if `r` acts in it and this connection has not attached yet. The answer
 * is not waited for: the node serves the connection's frames in order. */
static int attach_first(struct tclient *c, const struct tclient_req *r,
                        int64_t deadline)
{
        uint8_t frame[PROTO_HEADER_SIZE + ATTACH_BODY_SIZE];
        size_t n;

        if (!c->attach || r->acts_in == 0 || r->acts_in != c->owned ||
            c->attached_gen == c->gen) {
                return 0;
        }
        n = attach_write(frame, sizeof frame, ++c->next_id, c->owned,
                         c->secret);
        if (send_all(c, frame, n, deadline) != 0) {
                return BATON_EIO;
        }
        c->attached_gen = c->gen;
        c->attaches++;
        return 0;
}

static int exchange(struct tclient *c, struct tclient_req *r, int64_t deadline)
{
        unsigned failures = 0;
        int rv;

        for (;;) {
                if (r->answered) {
                        r->answered = false;
                        if (r->ah.type == PROTO_NOT_LEADER) {
                                struct proto_string a = {NULL, 0};
                                uint64_t leader = 0;
                                c->redirects++;
                                r->gen = 0;
                                proto_read_not_leader(r->answer, r->ah.length,
                                                      &leader, &a);
                                if (!c->follow) {
                                        return BATON_ENOTLEADER;
                                }
                                tclient_disconnect(c);
                                if (leader != 0 && a.len > 0 &&
                                    a.len < TCLIENT_ADDR_MAX &&
                                    (a.len != strlen(c->peer) ||
                                     memcmp(a.p, c->peer, a.len) != 0)) {
                                        memcpy(c->hint, a.p, a.len);
                                        c->hint[a.len] = '\0';
                                        if (++failures > 2) {
                                                back_off(c, deadline);
                                        }
                                } else {
                                        advance(c);
                                        failures++;
                                        back_off(c, deadline);
                                }
                                continue;
                        }
                        if (r->ah.type == PROTO_RESULT) {
                                struct proto_result res;
                                if (proto_read_result(r->answer, r->ah.length,
                                                      0, &res) == 0 &&
                                    (res.status == BATON_EUNKNOWN ||
                                     res.status == BATON_ESHUTDOWN)) {
                                        /* Same frame again: exactly-once
                                         * makes the retry safe. */
                                        c->unknowns++;
                                        r->gen = 0;
                                        if (res.status == BATON_ESHUTDOWN) {
                                                tclient_disconnect(c);
                                                advance(c);
                                        }
                                        back_off(c, deadline);
                                        continue;
                                }
                                return 0;
                        }
                        if (r->ah.type == PROTO_ERROR) {
                                struct proto_string m = {NULL, 0};
                                int status = BATON_EMALFORMED;
                                proto_read_error(r->answer, r->ah.length,
                                                 &status, &m);
                                snprintf(c->errmsg, sizeof c->errmsg,
                                         "ERROR %d from %s: %.*s", status,
                                         c->peer, (int)m.len,
                                         m.p != NULL ? m.p : "");
                                tclient_disconnect(c);
                                return status < 0 ? status : BATON_EMALFORMED;
                        }
                        return 0;
                }
                if (tclient_now_ms() >= deadline) {
                        return BATON_ENOANSWER;
                }
                if (!on_live_conn(c, r)) {
                        if (ensure_connected(c, deadline) != 0) {
                                if (++failures % c->n_endpoints == 0) {
                                        back_off(c, deadline);
                                }
                                continue;
                        }
                        if (attach_first(c, r, deadline) != 0) {
                                tclient_disconnect(c);
                                advance(c);
                                continue;
                        }
                        r->id = ++c->next_id;
                        patch_id(r->frame, r->id);
                        if (send_all(c, r->frame, r->len, deadline) != 0) {
                                tclient_disconnect(c);
                                advance(c);
                                continue;
                        }
                        if (r->sends++ > 0) {
                                c->resends++;
                        }
                        r->gen = c->gen;
                        r->sent_ms = tclient_now_ms();
                }
                {
                        int64_t until = deadline;
                        if (!r->slow && c->try_ms > 0) {
                                until = min64(until, r->sent_ms + c->try_ms);
                        }
                        rv = wait_answer(c, r, until);
                }
                if (rv == 0) {
                        continue;
                }
                if (rv == BATON_ENOANSWER && tclient_now_ms() >= deadline) {
                        return BATON_ENOANSWER;
                }
                /* Lost, or silent for try_ms (a paused node): elsewhere. */
                tclient_disconnect(c);
                advance(c);
                if (++failures % c->n_endpoints == 0) {
                        back_off(c, deadline);
                }
        }
}

static void req_init(struct tclient_req *r)
{
        memset(r, 0, sizeof *r);
}

static int64_t deadline_of(int timeout_ms)
{
        return tclient_now_ms() + (timeout_ms > 0 ? timeout_ms : 0);
}

/* --- Lifecycle ---------------------------------------------------------------
 */

int tclient_init(struct tclient *c, const char *endpoints)
{
        const char *p = endpoints;

        memset(c, 0, sizeof *c);
        c->fd = -1;
        c->try_ms = 1000;
        c->backoff_ms = 50;
        c->follow = true;
        c->attach = true;
        c->next_seq = 1;
        proto_reader_init(&c->reader, PROTO_MAX_BODY, &mem_libc);
        while (p != NULL && *p != '\0') {
                const char *comma = strchr(p, ',');
                size_t len = comma != NULL ? (size_t)(comma - p) : strlen(p);
                struct address a;
                if (len == 0 || len >= TCLIENT_ADDR_MAX ||
                    c->n_endpoints == TCLIENT_MAX_ENDPOINTS) {
                        return BATON_EINVAL;
                }
                memcpy(c->endpoints[c->n_endpoints], p, len);
                c->endpoints[c->n_endpoints][len] = '\0';
                if (address_parse(c->endpoints[c->n_endpoints], &a) != 0) {
                        snprintf(c->errmsg, sizeof c->errmsg, "bad endpoint %s",
                                 c->endpoints[c->n_endpoints]);
                        return BATON_EINVAL;
                }
                c->n_endpoints++;
                p = comma != NULL ? comma + 1 : NULL;
        }
        return c->n_endpoints > 0 ? 0 : BATON_EINVAL;
}

void tclient_close(struct tclient *c)
{
        if (c == NULL) {
                return;
        }
        tclient_disconnect(c);
        proto_reader_close(&c->reader);
        tls_ctx_destroy(c->tls);
        c->tls = NULL;
        free(c->cout);
        c->cout = NULL;
}

/* --- Sessions and commands -------------------------------------------------
 */

uint64_t tclient_ack(const struct tclient *c)
{
        uint64_t ack = c->next_seq;
        unsigned i;

        for (i = 0; i < c->n_open; i++) {
                if (c->open_seqs[i] < ack) {
                        ack = c->open_seqs[i];
                }
        }
        return ack;
}

static void open_seq(struct tclient *c, uint64_t seq)
{
        unsigned i;

        for (i = 0; i < c->n_open; i++) {
                if (c->open_seqs[i] == seq) {
                        return;
                }
        }
        if (c->n_open == TCLIENT_MAX_OPEN) {
                /* Give up on the oldest: its outcome may be forgotten. */
                memmove(c->open_seqs, c->open_seqs + 1,
                        (TCLIENT_MAX_OPEN - 1) * sizeof c->open_seqs[0]);
                c->n_open--;
        }
        c->open_seqs[c->n_open++] = seq;
}

void tclient_forget_seq(struct tclient *c, uint64_t seq)
{
        unsigned i;

        for (i = 0; i < c->n_open; i++) {
                if (c->open_seqs[i] == seq) {
                        c->open_seqs[i] = c->open_seqs[--c->n_open];
                        return;
                }
        }
}

uint64_t tclient_take_seq(struct tclient *c)
{
        uint64_t seq = c->next_seq++;

        open_seq(c, seq);
        return seq;
}

static int name_len_ok(const char *name, size_t *len)
{
        *len = name != NULL ? strlen(name) : 0;
        return *len >= 1 && *len <= COMMAND_NAME_MAX ? 0 : BATON_ENAME;
}

int tclient_start(struct tclient *c, const struct command *cmd, uint64_t *seq)
{
        struct command k = *cmd;
        uint8_t body[COMMAND_MAX_SIZE];
        size_t n;

        if (c->inflight) {
                snprintf(c->errmsg, sizeof c->errmsg,
                         "a command is already in flight");
                return BATON_EINVAL;
        }
        if (k.type != COMMAND_OPEN) {
                if (k.session == 0) {
                        k.session = c->session;
                }
                if (k.seq == 0) {
                        k.seq = tclient_take_seq(c);
                } else {
                        open_seq(c, k.seq);
                }
                k.ack = tclient_ack(c);
        }
        n = command_encode(&k, body, sizeof body);
        if (n == 0) {
                if (k.type != COMMAND_OPEN && k.type != COMMAND_CLOSE) {
                        tclient_forget_seq(c, k.seq);
                }
                return command_validate(&k) == BATON_ENAME ? BATON_ENAME
                                                           : BATON_EINVAL;
        }
        req_init(&c->cmd);
        c->cmd.len =
            proto_write_command(c->cmd.frame, sizeof c->cmd.frame, 0, body, n);
        c->cmd.acts_in = k.type != COMMAND_OPEN ? k.session : 0;
        c->cmd.slow = k.type == COMMAND_ACQUIRE && k.wait_ms != 0;
        c->inflight = true;
        c->inflight_seq = k.type == COMMAND_OPEN ? 0 : k.seq;
        if (seq != NULL) {
                *seq = c->inflight_seq;
        }
        /* One attempt now, so the request is on its way when this returns;
         * tclient_finish() does every retry. */
        if (ensure_connected(c, tclient_now_ms() + CONNECT_MS_MAX) == 0 &&
            attach_first(c, &c->cmd, tclient_now_ms() + CONNECT_MS_MAX) == 0) {
                c->cmd.id = ++c->next_id;
                patch_id(c->cmd.frame, c->cmd.id);
                if (send_all(c, c->cmd.frame, c->cmd.len,
                             tclient_now_ms() + CONNECT_MS_MAX) == 0) {
                        c->cmd.gen = c->gen;
                        c->cmd.sent_ms = tclient_now_ms();
                        c->cmd.sends = 1;
                }
        }
        return 0;
}

static void fill_result(struct tclient_result *out,
                        const struct proto_result *r)
{
        out->status = r->status;
        out->kind = r->kind;
        out->index = r->index;
        out->session = r->session;
        out->owner = r->owner;
        out->token = r->token;
        out->count = r->count;
        out->waiters = r->waiters;
}

/* A req's answer as a RESULT: its status, with `res` filled. */
static int take_result(struct tclient *c, const struct tclient_req *r,
                       struct tclient_result *res)
{
        struct proto_result pr;

        if (r->ah.type != PROTO_RESULT ||
            proto_read_result(r->answer, r->ah.length, 0, &pr) != 0) {
                snprintf(c->errmsg, sizeof c->errmsg,
                         "expected RESULT, got %s (%u bytes)",
                         proto_type_name(r->ah.type), r->ah.length);
                res->status = BATON_EMALFORMED;
                return BATON_EMALFORMED;
        }
        fill_result(res, &pr);
        if (pr.status != 0) {
                snprintf(c->errmsg, sizeof c->errmsg, "%s",
                         baton_strerror(pr.status));
        }
        return pr.status;
}

int tclient_finish(struct tclient *c, int timeout_ms,
                   struct tclient_result *res)
{
        struct tclient_result scratch;
        int rv;

        if (res == NULL) {
                res = &scratch;
        }
        memset(res, 0, sizeof *res);
        if (!c->inflight) {
                res->status = BATON_EINVAL;
                return BATON_EINVAL;
        }
        rv = exchange(c, &c->cmd, deadline_of(timeout_ms));
        if (rv == BATON_ENOANSWER) {
                snprintf(c->errmsg, sizeof c->errmsg,
                         "no final answer within %d ms", timeout_ms);
                res->status = rv;
                return rv;
        }
        c->inflight = false;
        if (c->inflight_seq != 0) {
                tclient_forget_seq(c, c->inflight_seq);
        }
        if (rv != 0) {
                res->status = rv;
                return rv;
        }
        return take_result(c, &c->cmd, res);
}

void tclient_abandon(struct tclient *c)
{
        c->inflight = false;
}

int tclient_command(struct tclient *c, const struct command *cmd,
                    int timeout_ms, struct tclient_result *res)
{
        int rv = tclient_start(c, cmd, NULL);

        if (rv != 0) {
                if (res != NULL) {
                        memset(res, 0, sizeof *res);
                        res->status = rv;
                }
                return rv;
        }
        rv = tclient_finish(c, timeout_ms, res);
        if (rv == BATON_ENOANSWER) {
                tclient_abandon(c);
        }
        return rv;
}

int tclient_session_open(struct tclient *c, uint32_t ttl_ms,
                         const char *client_name, int timeout_ms,
                         struct tclient_result *res)
{
        struct tclient_result scratch;
        uint8_t secret[ATTACH_SECRET_SIZE];
        uint8_t hash[ATTACH_HASH_SIZE];
        struct command k;
        int rv;

        if (res == NULL) {
                res = &scratch;
        }
        new_secret(secret, hash);
        memset(&k, 0, sizeof k);
        k.type = COMMAND_OPEN;
        k.nonce = random_u64();
        k.ttl_ms = ttl_ms;
        k.hash = hash;
        if (client_name != NULL) {
                k.name = client_name;
                k.name_len = (uint8_t)strlen(client_name);
        }
        rv = tclient_command(c, &k, timeout_ms, res);
        if (rv == 0 && res->kind == PROTO_KIND_OPENED) {
                tclient_own(c, res->session, secret);
                c->session = res->session;
                c->nonce = k.nonce;
                c->ttl_ms = ttl_ms;
                c->next_seq = 1;
                c->n_open = 0;
        }
        return rv;
}

int tclient_session_close(struct tclient *c, int timeout_ms,
                          struct tclient_result *res)
{
        struct command k;

        memset(&k, 0, sizeof k);
        k.type = COMMAND_CLOSE;
        return tclient_command(c, &k, timeout_ms, res);
}

int tclient_acquire(struct tclient *c, const char *name, uint64_t owner,
                    uint32_t wait_ms, int timeout_ms,
                    struct tclient_result *res)
{
        struct command k;
        size_t len;

        if (name_len_ok(name, &len) != 0) {
                if (res != NULL) {
                        memset(res, 0, sizeof *res);
                        res->status = BATON_ENAME;
                }
                return BATON_ENAME;
        }
        memset(&k, 0, sizeof k);
        k.type = COMMAND_ACQUIRE;
        k.owner = owner;
        k.wait_ms = wait_ms;
        k.mode = COMMAND_MODE_EXCLUSIVE;
        k.name = name;
        k.name_len = (uint8_t)len;
        return tclient_command(c, &k, timeout_ms, res);
}

int tclient_try(struct tclient *c, const char *name, uint64_t owner,
                int timeout_ms, struct tclient_result *res)
{
        return tclient_acquire(c, name, owner, COMMAND_WAIT_TRY, timeout_ms,
                               res);
}

int tclient_release(struct tclient *c, const char *name, uint64_t owner,
                    uint64_t token, int timeout_ms, struct tclient_result *res)
{
        struct command k;
        size_t len;

        if (name_len_ok(name, &len) != 0) {
                if (res != NULL) {
                        memset(res, 0, sizeof *res);
                        res->status = BATON_ENAME;
                }
                return BATON_ENAME;
        }
        memset(&k, 0, sizeof k);
        k.type = COMMAND_RELEASE;
        k.owner = owner;
        k.token = token;
        k.name = name;
        k.name_len = (uint8_t)len;
        return tclient_command(c, &k, timeout_ms, res);
}

int tclient_cancel(struct tclient *c, const char *name, uint64_t target,
                   int timeout_ms, struct tclient_result *res)
{
        struct command k;
        size_t len;

        if (name_len_ok(name, &len) != 0) {
                if (res != NULL) {
                        memset(res, 0, sizeof *res);
                        res->status = BATON_ENAME;
                }
                return BATON_ENAME;
        }
        memset(&k, 0, sizeof k);
        k.type = COMMAND_CANCEL;
        k.target = target;
        k.name = name;
        k.name_len = (uint8_t)len;
        return tclient_command(c, &k, timeout_ms, res);
}

/* --- Reads -------------------------------------------------------------------
 */

int tclient_attach(struct tclient *c, uint64_t session, const uint8_t *secret,
                   int timeout_ms, struct tclient_result *res)
{
        struct tclient_req r;
        struct tclient_result scratch;
        int rv;

        req_init(&r);
        r.len = attach_write(r.frame, sizeof r.frame, 0, session, secret);
        rv = exchange(c, &r, deadline_of(timeout_ms));
        if (rv != 0) {
                return rv;
        }
        return take_result(c, &r, res != NULL ? res : &scratch);
}

int tclient_keepalive(struct tclient *c, int timeout_ms, uint32_t *ttl_ms)
{
        struct tclient_req r;
        struct tclient_result res;
        uint32_t ttl = 0, revoked;
        int rv;

        req_init(&r);
        r.len =
            proto_write_keepalive(r.frame, sizeof r.frame, 0, 0, c->session);
        r.acts_in = c->session;
        rv = exchange(c, &r, deadline_of(timeout_ms));
        if (rv != 0) {
                return rv;
        }
        if (r.ah.type == PROTO_KEEPALIVE_OK) {
                if (proto_read_keepalive_ok(r.answer, r.ah.length, 0, &ttl,
                                            &revoked) != 0) {
                        return BATON_EMALFORMED;
                }
                if (ttl_ms != NULL) {
                        *ttl_ms = ttl;
                }
                return 0;
        }
        return take_result(c, &r, &res);
}

static int read_request(struct tclient *c, uint8_t type, const char *name,
                        uint64_t token, int timeout_ms,
                        struct tclient_result *res)
{
        struct tclient_result scratch;
        struct tclient_req r;
        size_t len;
        int rv;

        if (res == NULL) {
                res = &scratch;
        }
        memset(res, 0, sizeof *res);
        if (name_len_ok(name, &len) != 0) {
                res->status = BATON_ENAME;
                return BATON_ENAME;
        }
        req_init(&r);
        r.len = type == PROTO_QUERY ? proto_write_query(r.frame, sizeof r.frame,
                                                        0, 0, name, len)
                                    : proto_write_check(r.frame, sizeof r.frame,
                                                        0, name, len, token);
        if (r.len == 0) {
                res->status = BATON_ENAME;
                return BATON_ENAME;
        }
        rv = exchange(c, &r, deadline_of(timeout_ms));
        if (rv != 0) {
                res->status = rv;
                return rv;
        }
        return take_result(c, &r, res);
}

int tclient_query(struct tclient *c, const char *name, int timeout_ms,
                  struct tclient_result *res)
{
        return read_request(c, PROTO_QUERY, name, 0, timeout_ms, res);
}

int tclient_check(struct tclient *c, const char *name, uint64_t token,
                  int timeout_ms, struct tclient_result *res)
{
        return read_request(c, PROTO_CHECK, name, token, timeout_ms, res);
}

int tclient_list(struct tclient *c, const char *prefix, uint32_t limit,
                 int timeout_ms, struct tclient_lock *out, size_t cap,
                 size_t *n, bool *more)
{
        struct proto_lock_entry *e;
        struct tclient_result res;
        struct tclient_req r;
        size_t len = prefix != NULL ? strlen(prefix) : 0;
        uint32_t got, i;
        int rv;

        *n = 0;
        *more = false;
        req_init(&r);
        r.len =
            proto_write_list(r.frame, sizeof r.frame, 0, 0, prefix, len, limit);
        if (r.len == 0) {
                return BATON_EINVAL;
        }
        rv = exchange(c, &r, deadline_of(timeout_ms));
        if (rv != 0) {
                return rv;
        }
        if (r.ah.type == PROTO_RESULT) {
                return take_result(c, &r, &res);
        }
        e = calloc(limit, sizeof *e);
        if (e == NULL) {
                return BATON_ENOMEM;
        }
        if (r.ah.type != PROTO_LIST_REPLY ||
            proto_read_list_reply(r.answer, r.ah.length, 0, e, limit, &got,
                                  more) != 0) {
                snprintf(c->errmsg, sizeof c->errmsg,
                         "bad LIST reply (%s, %u bytes)",
                         proto_type_name(r.ah.type), r.ah.length);
                free(e);
                return BATON_EMALFORMED;
        }
        for (i = 0; i < got && i < cap; i++) {
                memcpy(out[i].name, e[i].name.p, e[i].name.len);
                out[i].name[e[i].name.len] = '\0';
                out[i].session = e[i].session;
                out[i].owner = e[i].owner;
                out[i].token = e[i].token;
                out[i].count = e[i].count;
                out[i].waiters = e[i].waiters;
        }
        *n = i;
        free(e);
        return 0;
}

int tclient_status(struct tclient *c, int timeout_ms, struct baton_status *st)
{
        struct tclient_req r;
        struct proto_status ps;
        int rv;

        memset(st, 0, sizeof *st);
        req_init(&r);
        r.len = proto_write_status_request(r.frame, sizeof r.frame, 0, 0);
        rv = exchange(c, &r, deadline_of(timeout_ms));
        if (rv != 0) {
                return rv;
        }
        if (r.ah.type != PROTO_STATUS_REPLY ||
            proto_read_status(r.answer, r.ah.length, 0, &ps, NULL) != 0) {
                snprintf(c->errmsg, sizeof c->errmsg, "bad STATUS reply (%s)",
                         proto_type_name(r.ah.type));
                return BATON_EMALFORMED;
        }
        proto_status_export(st, NULL, &ps);
        return 0;
}

int tclient_status_of(const char *endpoint, int timeout_ms,
                      struct baton_status *st)
{
        struct tclient c;
        int rv = tclient_init(&c, endpoint);

        if (rv == 0) {
                c.try_ms = 0;
                rv = tclient_status(&c, timeout_ms, st);
        }
        tclient_close(&c);
        return rv;
}

int tclient_ping(struct tclient *c, int timeout_ms, int64_t *rtt_us)
{
        struct tclient_req r;
        int64_t t0;
        int rv;

        req_init(&r);
        r.len = proto_write_empty(r.frame, sizeof r.frame, 0, PROTO_PING);
        t0 = tclient_now_ns();
        rv = exchange(c, &r, deadline_of(timeout_ms));
        if (rv != 0) {
                return rv;
        }
        if (r.ah.type != PROTO_PONG) {
                return BATON_EMALFORMED;
        }
        if (rtt_us != NULL) {
                *rtt_us = (tclient_now_ns() - t0) / 1000;
        }
        return 0;
}

/* --- Membership ------------------------------------------------------------
 */

/* An admin request's RESULT status. */
static int admin(struct tclient *c, struct tclient_req *r, int timeout_ms)
{
        struct tclient_result res;
        int rv;

        if (r->len == 0) {
                snprintf(c->errmsg, sizeof c->errmsg, "bad admin request");
                return BATON_EINVAL;
        }
        r->slow = true;
        rv = exchange(c, r, deadline_of(timeout_ms));
        if (rv != 0) {
                return rv;
        }
        return take_result(c, r, &res);
}

int tclient_member_add(struct tclient *c, uint64_t id, const char *raft_address,
                       const char *client_address, int timeout_ms)
{
        struct tclient_req r;

        req_init(&r);
        r.len = proto_write_member_add(r.frame, sizeof r.frame, 0, id,
                                       raft_address, client_address);
        return admin(c, &r, timeout_ms);
}

int tclient_transfer(struct tclient *c, uint64_t id, int timeout_ms)
{
        struct tclient_req r;

        req_init(&r);
        r.len = proto_write_id(r.frame, sizeof r.frame, 0, PROTO_TRANSFER, id);
        return admin(c, &r, timeout_ms);
}

int tclient_member_remove(struct tclient *c, uint64_t id, int timeout_ms)
{
        struct tclient_req r;

        req_init(&r);
        r.len =
            proto_write_id(r.frame, sizeof r.frame, 0, PROTO_MEMBER_REMOVE, id);
        return admin(c, &r, timeout_ms);
}

/* --- Raw frames --------------------------------------------------------------
 */

int tclient_connect(struct tclient *c, const char *endpoint, int timeout_ms)
{
        return connect_to(c, endpoint, deadline_of(timeout_ms));
}

int tclient_raw_send(struct tclient *c, const void *bytes, size_t len,
                     int timeout_ms)
{
        if (c->fd < 0) {
                return BATON_EIO;
        }
        return send_all(c, bytes, len, deadline_of(timeout_ms));
}

int tclient_raw_send_some(struct tclient *c, const void *bytes, size_t len,
                          int timeout_ms, size_t *sent)
{
        *sent = 0;
        if (c->fd < 0) {
                return BATON_EIO;
        }
        return send_some(c, bytes, len, deadline_of(timeout_ms), sent);
}

int tclient_raw_recv(struct tclient *c, int timeout_ms, struct proto_header *h,
                     const uint8_t **body)
{
        return recv_frame(c, deadline_of(timeout_ms), h, body);
}

bool tclient_raw_read(struct tclient *c, uint8_t *p, size_t len, int timeout_ms)
{
        int64_t deadline = deadline_of(timeout_ms);
        ssize_t n;

        while (len > 0) {
                if (c->in_off < c->in_len) {
                        size_t k = c->in_len - c->in_off;
                        k = k < len ? k : len;
                        memcpy(p, c->in + c->in_off, k);
                        c->in_off += k;
                        p += k;
                        len -= k;
                        continue;
                }
                if (c->fd < 0) {
                        return false;
                }
                if (c->tc != NULL) {
                        if (recv_plain(c, deadline) != 0) {
                                return false;
                        }
                        continue;
                }
                if (wait_fd(c->fd, POLLIN, deadline) != 0) {
                        return false;
                }
                n = read(c->fd, c->in, sizeof c->in);
                if (n < 0 && (errno == EINTR || errno == EAGAIN)) {
                        continue;
                }
                if (n <= 0) {
                        return false;
                }
                c->in_off = 0;
                c->in_len = (size_t)n;
        }
        return true;
}

bool tclient_wait_closed(struct tclient *c, int timeout_ms)
{
        int64_t deadline = deadline_of(timeout_ms);
        struct proto_header h;
        const uint8_t *body;

        for (;;) {
                int rv = recv_frame(c, deadline, &h, &body);
                if (rv == BATON_EIO) {
                        return true;
                }
                if (rv == BATON_ENOANSWER) {
                        return false;
                }
        }
}

const char *tclient_result_str(const struct tclient_result *r, char *buf,
                               size_t cap)
{
        snprintf(buf, cap,
                 "status=%d (%s) kind=%u index=%" PRIu64 " session=%" PRIu64
                 " owner=%" PRIu64 " token=%" PRIu64 " count=%u waiters=%u",
                 r->status, r->status != 0 ? baton_strerror(r->status) : "ok",
                 r->kind, r->index, r->session, r->owner, r->token, r->count,
                 r->waiters);
        return buf;
}
