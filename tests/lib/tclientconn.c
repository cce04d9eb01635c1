/* The connection of a tclient: to an endpoint, plain or TLS, moving on to
 * the next one, and bytes and whole frames sent and received with
 * deadlines. */
#include "tclientconn.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../../include/baton.h"
#include "../../src/lib/address.h"

static int64_t min64(int64_t a, int64_t b)
{
        return a < b ? a : b;
}

static int send_cipher(struct tclient *c, int64_t deadline);

void tclientconn_drop(struct tclient *c)
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
        tclientconn_drop(c);
        return rv == BATON_ETLS ? BATON_ETLS : BATON_EIO;
}

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
                tclientconn_drop(c);
                return BATON_EIO;
        }
        if (tls_feed(c->tc, buf, (size_t)n) != 0) {
                tclientconn_drop(c);
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
                tclientconn_drop(c);
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

int tclientconn_open(struct tclient *c, const char *address, int64_t deadline)
{
        struct address a;
        struct addrinfo hints, *ai;
        struct sockaddr_storage sa;
        socklen_t sa_len;
        struct pollfd pfd;
        socklen_t len = sizeof(int);
        int fd, err = 0, one = 1, rv;

        tclientconn_drop(c);
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
void tclientconn_advance(struct tclient *c)
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
int tclientconn_ensure(struct tclient *c, int64_t deadline)
{
        const char *target;
        bool hinted = c->hint[0] != '\0';
        int rv;

        if (c->fd >= 0 && peer_gone(c)) {
                tclientconn_drop(c);
                tclientconn_advance(c);
        }
        if (c->fd >= 0) {
                return 0;
        }
        target = hinted ? c->hint : c->endpoints[c->next % c->n_endpoints];
        rv = tclientconn_open(
            c, target,
            min64(deadline, tclient_now_ms() + TCLIENTCONN_CONNECT_MS_MAX));
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
                tclientconn_drop(c);
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
int tclientconn_send(struct tclient *c, const uint8_t *p, size_t len,
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

int tclientconn_send_all(struct tclient *c, const uint8_t *p, size_t len,
                         int64_t deadline)
{
        return tclientconn_send(c, p, len, deadline, NULL);
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
int tclientconn_recv(struct tclient *c, int64_t deadline,
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
                                tclientconn_drop(c);
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
                                tclientconn_drop(c);
                                return BATON_EIO;
                        }
                        c->in_off = 0;
                        c->in_len = (size_t)n;
                }
        }
}

bool tclientconn_read(struct tclient *c, uint8_t *p, size_t len,
                      int64_t deadline)
{
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
