/* The I/O side of a handle's link. */
#include "linkio.h"

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

#define OUT_MAX 1048576 /* unwritten bytes: the server reads none */

int linkio_init(struct linkio *io, struct link *link, struct tls_ctx *tls)
{
        memset(io, 0, sizeof *io);
        io->link = link;
        io->tls = tls;
        io->fd = -1;
        io->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (io->wake < 0) {
                return errno == ENOMEM ? BATON_ENOMEM : BATON_EIO;
        }
        proto_reader_init(&io->reader, PROTO_MAX_BODY, &mem_libc);
        return 0;
}

/* The resolved addresses of the peer are no longer needed. */
static void forget_addrs(struct linkio *io)
{
        if (io->addrs != NULL) {
                freeaddrinfo(io->addrs);
        }
        io->addrs = NULL;
        io->next_addr = NULL;
}

/* Close what this side holds of the attempt: its socket, its TLS state,
 * the ciphertext and the partial frame it had. */
static void close_conn(struct linkio *io)
{
        forget_addrs(io);
        if (io->fd >= 0) {
                close(io->fd);
                io->fd = -1;
        }
        io->conn = 0;
        io->connecting = false;
        io->handshaking = false;
        tls_conn_destroy(io->tc);
        io->tc = NULL;
        io->cout_len = 0;
        proto_reader_close(&io->reader);
        proto_reader_init(&io->reader, PROTO_MAX_BODY, &mem_libc);
}

void linkio_close(struct linkio *io)
{
        close_conn(io);
        free(io->cout);
        io->cout = NULL;
        if (io->wake >= 0) {
                close(io->wake);
                io->wake = -1;
        }
        proto_reader_close(&io->reader);
}

void linkio_wake(struct linkio *io)
{
        uint64_t one = 1;
        ssize_t rv = write(io->wake, &one, sizeof one);

        (void)rv; /* EAGAIN: the counter is already non-zero */
}

/* Whether the socket is still the link's: the link gives a connection up
 * from inside any call, and its socket is closed here at the next one. */
static bool current(struct linkio *io)
{
        if (io->conn != 0 && io->conn != io->link->conn) {
                close_conn(io);
        }
        return io->conn != 0 && io->fd >= 0;
}

/* Tell the link how the attempt failed. */
static void failed(struct linkio *io, bool silent, enum reach_outcome outcome,
                   bool tls, const char *why, int64_t now)
{
        struct link_failure f = {silent, outcome, tls, why};

        link_conn_failed(io->link, io->conn, &f, now);
}

/* --- Writing -------------------------------------------------------------- */

/* Send what `fd` takes of the `len` bytes at `buf` without blocking,
 * counting them in `*sent`. -1: the connection failed. */
static int send_some(int fd, const uint8_t *buf, size_t len, size_t *sent)
{
        size_t off = 0;
        int rv = 0;

        while (off < len) {
                ssize_t n =
                    send(fd, buf + off, len - off, MSG_NOSIGNAL | MSG_DONTWAIT);
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
        *sent = off;
        return rv;
}

/* With TLS, the outbox's frames become records once the handshake is
 * done, and the records and handshake messages wait in `cout`. -1: the
 * connection failed. */
static int seal(struct linkio *io)
{
        const uint8_t *out;
        size_t n = link_output(io->link, &out), need;
        uint8_t *p;

        if (n > 0 && tls_ready(io->tc)) {
                if (tls_write(io->tc, out, n) != 0) {
                        return -1;
                }
                link_output_taken(io->link, n);
        }
        need = io->cout_len + tls_pending(io->tc);
        if (need > io->cout_cap) {
                p = realloc(io->cout, need);
                if (p == NULL) {
                        return -1;
                }
                io->cout = p;
                io->cout_cap = need;
        }
        io->cout_len += tls_take(io->tc, io->cout + io->cout_len,
                                 io->cout_cap - io->cout_len);
        return 0;
}

/* Write what the socket takes without blocking. -1: the connection
 * failed (the caller decides what to do). */
static int write_out(struct linkio *io)
{
        const uint8_t *out;
        size_t n, sent;
        int rv;

        if (io->tc == NULL) {
                n = link_output(io->link, &out);
                rv = send_some(io->fd, out, n, &sent);
                link_output_taken(io->link, sent);
                return rv;
        }
        if (seal(io) != 0) {
                return -1;
        }
        rv = send_some(io->fd, io->cout, io->cout_len, &sent);
        if (sent > 0) {
                memmove(io->cout, io->cout + sent, io->cout_len - sent);
                io->cout_len -= sent;
        }
        return rv;
}

/* Ciphertext waits, here or still in the TLS state. */
static bool sealed_waiting(const struct linkio *io)
{
        return io->cout_len > 0 || (io->tc != NULL && tls_pending(io->tc) > 0);
}

bool linkio_busy(const struct linkio *io)
{
        /* Ciphertext of a connection the link gave up is not waiting. */
        return link_output(io->link, NULL) > 0 ||
               (io->conn == io->link->conn && io->cout_len > 0);
}

bool linkio_write(struct linkio *io)
{
        return write_out(io) == 0 && !linkio_busy(io);
}

bool linkio_write_direct(struct linkio *io)
{
        if (!link_up(io->link) || io->conn != io->link->conn || io->fd < 0 ||
            io->cout_len > 0) {
                return false;
        }
        return linkio_write(io);
}

void linkio_flush(struct linkio *io, int64_t now)
{
        if (!current(io) || (!linkio_busy(io) && !sealed_waiting(io))) {
                return;
        }
        if (write_out(io) != 0) {
                link_fail(io->link, now, false);
        } else if (link_output(io->link, NULL) + io->cout_len > OUT_MAX) {
                link_fail(io->link, now, true);
        }
        current(io);
}

/* --- Connecting ----------------------------------------------------------- */

static void pump_tls(struct linkio *io, int64_t now);

/* TCP (and TLS) is through: the link puts its first PING, which goes out
 * at once. */
static void greet(struct linkio *io, int64_t now)
{
        io->handshaking = false;
        link_conn_up(io->link, io->conn, now);
        linkio_flush(io, now);
}

/* TCP is connected: with TLS, the handshake starts, with the same deadline
 * as a connect. The server's certificate must name the host the endpoint
 * names. */
static void connected(struct linkio *io, int64_t now)
{
        struct address a;
        int one = 1;

        setsockopt(io->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        forget_addrs(io);
        io->connecting = false;
        io->heard = false;
        if (io->tls == NULL) {
                greet(io, now);
                return;
        }
        if (address_parse(io->link->peer, &a) != 0 ||
            tls_conn_create(&io->tc, io->tls, NULL, a.host) != 0) {
                failed(io, false, REACH_LOST, false,
                       "cannot start TLS: out of memory", now);
                return;
        }
        io->handshaking = true;
        io->deadline = now + LINK_CONNECT_MS;
        pump_tls(io, now);
}

/* Why no address of the peer took the connection, in a few words. */
static void connect_failed(struct linkio *io, int64_t now)
{
        char why[REACH_WHY_MAX];

        linkio_why_connect(why, sizeof why, io->connect_err, LINK_CONNECT_MS);
        failed(io, true,
               io->connect_err == ECONNREFUSED ? REACH_NOT_LISTENING
                                               : REACH_REFUSED,
               false, why, now);
}

/* Connect to the next resolved address of the peer; when none is left,
 * the attempt failed. */
static void try_next(struct linkio *io, int64_t now)
{
        while (io->next_addr != NULL) {
                const struct addrinfo *ai = io->next_addr;
                io->next_addr = ai->ai_next;
                if (io->fd >= 0) {
                        close(io->fd);
                }
                io->connecting = false;
                io->fd = socket(ai->ai_family,
                                SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
                if (io->fd < 0) {
                        io->connect_err = errno;
                        continue;
                }
                if (connect(io->fd, ai->ai_addr, ai->ai_addrlen) == 0) {
                        connected(io, now);
                        return;
                }
                io->connect_err = errno;
                if (errno == EINPROGRESS) {
                        io->connecting = true;
                        io->deadline = now + LINK_CONNECT_MS;
                        return;
                }
        }
        connect_failed(io, now);
}

/* The link's attempt `conn` on its `peer`: resolve it, then connect. */
static void start_connect(struct linkio *io, uint64_t conn, int64_t now)
{
        char why[REACH_WHY_MAX];

        io->conn = conn;
        /* A bad address in a NOT_LEADER, or a name that does not resolve. */
        if (resolve_endpoint(io->link->peer, &io->addrs, why, sizeof why) !=
            0) {
                failed(io, false, REACH_REFUSED, false, why, now);
                return;
        }
        io->next_addr = io->addrs;
        try_next(io, now);
}

static void finish_connect(struct linkio *io, int64_t now)
{
        socklen_t len = sizeof(int);
        int err = 0;

        if (getsockopt(io->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) {
                err = errno;
        }
        if (err != 0) {
                io->connect_err = err;
                try_next(io, now); /* refused: killed, or not up yet */
                return;
        }
        connected(io, now);
}

bool linkio_step(struct linkio *io, int64_t now, uint64_t conn)
{
        char why[REACH_WHY_MAX];

        if (!current(io)) {
                if (conn == 0 || conn != io->link->conn ||
                    conn <= io->started) {
                        return false;
                }
                io->started = conn;
                start_connect(io, conn, now);
                if (!current(io) || io->connecting) {
                        return false;
                }
        }
        if (io->connecting && now >= io->deadline) {
                io->connect_err = ETIMEDOUT;
                try_next(io, now); /* the next address, if any */
        } else if (io->handshaking && now >= io->deadline) {
                snprintf(why, sizeof why, "no TLS handshake within %d ms",
                         LINK_CONNECT_MS);
                failed(io, true, REACH_REFUSED, false, why, now);
        } else {
                link_tick(io->link, now);
        }
        current(io);
        return link_up(io->link);
}

int64_t linkio_next_event(const struct linkio *io, bool needed)
{
        if (io->conn != 0 && io->conn == io->link->conn &&
            (io->connecting || io->handshaking)) {
                return io->deadline;
        }
        return link_next_event(io->link, needed);
}

short linkio_events(struct linkio *io)
{
        if (!current(io)) {
                return 0;
        }
        if (io->connecting) {
                return POLLOUT;
        }
        return (short)(link_output(io->link, NULL) > 0 || sealed_waiting(io)
                           ? POLLIN | POLLOUT
                           : POLLIN);
}

void linkio_disconnect(struct linkio *io, int64_t now)
{
        link_disconnect(io->link, now);
        current(io);
}

/* --- Reading -------------------------------------------------------------- */

/* Bytes that are not frames: from a node, a protocol error; before its
 * first answer, no Baton node at all. */
static void garbled(struct linkio *io, int64_t now)
{
        failed(io, false, REACH_REFUSED, false,
               "answered in another protocol than Baton's (not a Baton "
               "client port?)",
               now);
}

/* Hand the frames in `n` bytes of plaintext to the link. False when one
 * of them made it give the connection up: the rest is not read. */
static bool frames(struct linkio *io, const uint8_t *buf, size_t n, int64_t now)
{
        size_t off = 0;

        while (off < n) {
                long used = proto_reader_feed(&io->reader, buf + off, n - off);
                if (used < 0) {
                        garbled(io, now);
                        return false;
                }
                off += (size_t)used;
                if (!io->reader.ready) {
                        continue;
                }
                /* Dated as it is handed over, not when the read began:
                 * the session checks its lease as of an answer's
                 * handling, later by every frame read ahead of it. */
                link_conn_frame(io->link, io->conn, &io->reader.h,
                                io->reader.body, clock_now_ms());
                if (!current(io)) {
                        return false; /* the frame dropped it */
                }
        }
        return true;
}

/* The TLS handshake or a record failed (the node refused our certificate,
 * or we its), or the node closed: try elsewhere, and remember why. Before
 * the node's first answer this is a refusal, said in the words of the side
 * that refused: our verification of its certificate, or the alert it
 * sent. */
static void tls_failed(struct linkio *io, long rv, int64_t now)
{
        char why[REACH_WHY_MAX] = "";
        bool tls = false;

        if (rv != BATON_ETLS) {
                failed(io, true, REACH_REFUSED, false,
                       io->handshaking ? "closed the connection during the "
                                         "TLS handshake"
                                       : "closed the connection without "
                                         "answering",
                       now);
                return;
        }
        if (!link_up(io->link)) {
                linkio_why_tls(why, sizeof why, io->tc);
                tls = true;
        }
        failed(io, false, REACH_REFUSED, tls, why, now);
}

/* Decrypt what arrived: the handshake's end greets the node, and records
 * carry frames. False when the connection was given up. */
static bool unseal(struct linkio *io, int64_t now)
{
        uint8_t plain[16384];

        for (;;) {
                long rv = tls_read(io->tc, plain, sizeof plain);
                if (rv < 0) {
                        tls_failed(io, rv, now);
                        return false;
                }
                if (io->handshaking && tls_ready(io->tc)) {
                        greet(io, now);
                        if (!current(io)) {
                                return false;
                        }
                }
                if (rv == 0) {
                        return true;
                }
                if (!frames(io, plain, (size_t)rv, now)) {
                        return false;
                }
        }
}

/* Move the TLS handshake on, and send what it has to say. */
static void pump_tls(struct linkio *io, int64_t now)
{
        if (unseal(io, now)) {
                linkio_flush(io, now);
        }
}

/* The first bytes a node sends show whether it speaks what this client
 * speaks: a TLS record, or a plain frame (whose first byte, the protocol
 * version, is never a TLS record's type). False when it does not; the
 * connection is given up then. */
static bool first_bytes(struct linkio *io, const uint8_t *buf, size_t n,
                        int64_t now)
{
        bool tls = tls_looks_like_record(buf, n);

        if (io->tc != NULL && !tls) {
                failed(io, false, REACH_REFUSED, true,
                       "the node speaks plain TCP (tls = off) but this "
                       "client uses TLS",
                       now);
                return false;
        }
        if (io->tc == NULL && tls) {
                failed(io, false, REACH_REFUSED, true,
                       "the node speaks TLS but this client uses plain TCP "
                       "(it was given no CA, certificate and key)",
                       now);
                return false;
        }
        return true;
}

/* The node closed the connection (`err` 0) or it failed: before the
 * node's first answer, nothing that answers Baton is there; after it, the
 * node was killed, or left. */
static void closed(struct linkio *io, int err, int64_t now)
{
        char why[REACH_WHY_MAX] = "";
        const char *when = io->handshaking ? " during the TLS handshake"
                                           : " without answering (not a "
                                             "Baton client port?)";

        if (!link_up(io->link)) {
                if (err == 0) {
                        snprintf(why, sizeof why, "closed the connection%s",
                                 when);
                } else {
                        linkio_why_errno(why, sizeof why, err, when);
                }
        }
        failed(io, true, REACH_REFUSED, false, why, now);
}

static void receive(struct linkio *io, int64_t now)
{
        uint8_t buf[16384];

        for (;;) {
                ssize_t n = read(io->fd, buf, sizeof buf);
                if (n == 0) {
                        closed(io, 0, now);
                        return;
                }
                if (n < 0) {
                        if (errno == EINTR) {
                                continue;
                        }
                        if (errno != EAGAIN && errno != EWOULDBLOCK) {
                                closed(io, errno, now);
                        }
                        return;
                }
                if (!io->heard) {
                        io->heard = true;
                        if (!first_bytes(io, buf, (size_t)n, now)) {
                                return;
                        }
                }
                if (io->tc == NULL) {
                        if (!frames(io, buf, (size_t)n, now)) {
                                return;
                        }
                        continue;
                }
                if (tls_feed(io->tc, buf, (size_t)n) != 0 || !unseal(io, now)) {
                        if (current(io)) {
                                link_fail(io->link, now, false); /* memory */
                        }
                        return;
                }
        }
}

void linkio_ready(struct linkio *io, short revents, int64_t now)
{
        if (!current(io)) {
                return;
        }
        if (io->connecting) {
                finish_connect(io, now);
                current(io);
                return;
        }
        if (revents & (POLLIN | POLLERR | POLLHUP)) {
                receive(io, now);
        }
        /* What the TLS state answered goes out now, not a poll later. */
        if (current(io) && ((revents & POLLOUT) || sealed_waiting(io))) {
                linkio_flush(io, now);
        }
}

/* --- Words ---------------------------------------------------------------- */

void linkio_why_errno(char *why, size_t size, int err, const char *more)
{
        snprintf(why, size, "%s%s", strerror(err), more);
        if (why[0] >= 'A' && why[0] <= 'Z') {
                why[0] = (char)(why[0] - 'A' + 'a');
        }
}

void linkio_why_connect(char *why, size_t size, int err, int connect_ms)
{
        if (err == ETIMEDOUT) {
                snprintf(why, size, "timed out: no connection within %d ms",
                         connect_ms);
        } else if (err == EHOSTUNREACH || err == ENETUNREACH || err == EACCES ||
                   err == EPERM) {
                char sys[REACH_WHY_MAX];
                linkio_why_errno(sys, sizeof sys, err, "");
                snprintf(why, size, "unreachable: %s", sys);
        } else {
                linkio_why_errno(why, size, err, "");
        }
}

void linkio_why_tls(char *why, size_t size, const struct tls_conn *t)
{
        bool about_cert = false;
        const char *alert = tls_peer_alert(t, &about_cert);

        if (tls_verify_error(t)[0] != '\0') {
                snprintf(why, size,
                         "TLS: the node's certificate is refused here: %s",
                         tls_verify_error(t));
        } else if (about_cert) {
                snprintf(why, size,
                         "TLS: the node refused this client's certificate: "
                         "TLS alert %s",
                         alert);
        } else if (alert[0] != '\0') {
                snprintf(why, size,
                         "TLS: the node ended the handshake: TLS alert %s",
                         alert);
        } else {
                snprintf(why, size, "TLS: %s", tls_errmsg(t));
        }
}
