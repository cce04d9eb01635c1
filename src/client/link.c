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
#include "linkio.h"
#include "resolve.h"
#include "../proto/reply.h"

#define CONNECT_MS       1000    /* a connect, a handshake, the first PING */
#define BACKOFF_BASE_MS  10      /* first pause after failures in a row */
#define BACKOFF_MAX_MS   1000    /* longest pause between attempts */
#define SUSPECT_MS       3000    /* ignore a silent node's hints this long */
#define ELECTION_POLL_MS 40      /* ask again this often while one runs, */
#define ELECTION_FAST_MS 3000    /* for this long; then the usual backoff */
#define OUT_MAX          1048576 /* unwritten bytes: the server reads none */

int link_init(struct link *l, const char (*endpoints)[LINK_ADDR_MAX],
              unsigned n_endpoints, struct tls_ctx *tls,
              const struct core_env *env)
{
        memset(l, 0, sizeof *l);
        l->fd = -1;
        l->tls = tls;
        l->env = env;
        l->endpoints = endpoints;
        l->n_endpoints = n_endpoints;
        l->peer_index = -1;
        if (reach_init(&l->reach, endpoints, n_endpoints) != 0) {
                return BATON_ENOMEM;
        }
        l->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (l->wake < 0) {
                reach_close(&l->reach);
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
        reach_close(&l->reach);
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
        return l->fd >= 0 && !l->connecting && !l->handshaking && !l->greeting;
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

static int64_t backoff(const struct link *l, unsigned n)
{
        int64_t ms = BACKOFF_BASE_MS;

        if (n <= 1) {
                return 0; /* the first failure moves on at once */
        }
        while (n-- > 2 && ms < BACKOFF_MAX_MS) {
                ms *= 2;
        }
        return coreenv_jitter(l->env,
                              ms < BACKOFF_MAX_MS ? ms : BACKOFF_MAX_MS);
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
        l->greeting = false;
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

/* Whether the connection (or the attempt) has yet to be answered by its
 * node: a failure now says that no Baton node is there to answer. */
static bool unanswered(const struct link *l)
{
        return l->fd < 0 || l->connecting || l->handshaking || l->greeting;
}

/* After an attempt: the rest of the pass goes on at once; a pass that
 * ended without a leader backs off, longer each time, and one that failed
 * everywhere tells the owner. */
static void settle(struct link *l, int64_t now, enum reach_verdict v)
{
        if (v == REACH_GOING) {
                l->retry_at = now;
                return;
        }
        l->failures++;
        l->retry_at = now + backoff(l, l->failures);
        if (v == REACH_FAILED && l->cb.unreachable != NULL) {
                l->cb.unreachable(l->cb.data);
        }
}

/* The connection or the attempt failed with `outcome`, for the reason
 * `why`: record it, move on. A node that went silent is avoided for a
 * while, even when others name it as the leader (they learn of its death
 * late). */
static void fail_as(struct link *l, int64_t now, bool silent,
                    enum reach_outcome outcome, bool tls, const char *why)
{
        enum reach_verdict v =
            reach_note(&l->reach, l->peer_index, outcome, tls, why, now);

        if (l->peer_index < 0) {
                reach_note_named(&l->reach, l->peer, outcome, tls, why);
        }

        if (silent) {
                memcpy(l->suspect, l->peer, sizeof l->suspect);
                l->suspect_until = now + SUSPECT_MS;
        }
        drop(l);
        advance(l);
        settle(l, now, v);
}

void link_fail(struct link *l, int64_t now, bool silent)
{
        if (unanswered(l)) {
                fail_as(l, now, silent, REACH_REFUSED, false,
                        "closed the connection without answering (not a "
                        "Baton client port?)");
                return;
        }
        fail_as(l, now, silent, REACH_LOST, false,
                silent ? "stopped answering" : "dropped the connection");
}

/* A live node knows no leader, or names the one that went silent: an
 * election runs, and it typically ends within two election timeouts. Ask
 * again soon, on the next node. The exponential backoff would make the gap
 * a client sees after losing its leader the sum of its pauses, about twice
 * the election; once ELECTION_FAST_MS pass without a leader (no majority,
 * most likely) it takes over again, so that a leaderless cluster is not
 * polled hard for long. */
static void no_leader(struct link *l, int64_t now, const char *why)
{
        if (l->leaderless_since == 0) {
                l->leaderless_since = now;
        }
        fail_as(l, now, false, REACH_NO_LEADER, false, why);
        if (now - l->leaderless_since < ELECTION_FAST_MS) {
                l->retry_at = now + coreenv_jitter(l->env, ELECTION_POLL_MS);
        }
}

void link_no_leader(struct link *l, int64_t now)
{
        no_leader(l, now, "no leader");
}

void link_leader_answered(struct link *l)
{
        l->failures = 0;
        l->bounces = 0;
        l->leaderless_since = 0;
        reach_answered(&l->reach, l->peer_index);
}

static void pump_tls(struct link *l, int64_t now);

/* The node answered the first PING: the owner may send. */
static void up(struct link *l, int64_t now)
{
        l->greeting = false;
        l->gen++;
        l->connects++;
        l->last_rx = now;
        reach_note(&l->reach, l->peer_index, REACH_ANSWERED, false, "answered",
                   now);
        if (l->peer_index < 0) {
                reach_note_named(&l->reach, l->peer, REACH_ANSWERED, false, "");
        }
        l->cb.connected(l->cb.data, now);
}

/* TCP (and TLS) is through: ask the node a PING, and hold every request
 * back until it answers, so that a port that is not Baton's, or a node
 * that refuses this client, never gets one. */
static void greet(struct link *l, int64_t now)
{
        uint8_t frame[PROTO_HEADER_SIZE];
        size_t n = proto_write_empty(frame, sizeof frame, 0, PROTO_PING);

        l->handshaking = false;
        l->greeting = true;
        l->deadline = now + CONNECT_MS;
        l->hello = link_put(l, frame, n);
        if (l->hello == 0) {
                fail_as(l, now, false, REACH_LOST, false, "out of memory");
                return;
        }
        link_flush(l, now);
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
        l->heard = false;
        if (l->tls == NULL) {
                greet(l, now);
                return;
        }
        if (address_parse(l->peer, &a) != 0 ||
            tls_conn_create(&l->tc, l->tls, NULL, a.host) != 0) {
                fail_as(l, now, false, REACH_LOST, false,
                        "cannot start TLS: out of memory");
                return;
        }
        l->handshaking = true;
        l->deadline = now + CONNECT_MS;
        pump_tls(l, now);
}

/* Why no address of the peer took the connection, in a few words. */
static void connect_failed(struct link *l, int64_t now)
{
        char why[REACH_WHY_MAX];

        linkio_why_connect(why, sizeof why, l->connect_err, CONNECT_MS);
        fail_as(l, now, true,
                l->connect_err == ECONNREFUSED ? REACH_NOT_LISTENING
                                               : REACH_REFUSED,
                false, why);
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
                        l->connect_err = errno;
                        continue;
                }
                if (connect(l->fd, ai->ai_addr, ai->ai_addrlen) == 0) {
                        connected(l, now);
                        return;
                }
                l->connect_err = errno;
                if (errno == EINPROGRESS) {
                        l->connecting = true;
                        l->deadline = now + CONNECT_MS;
                        return;
                }
        }
        connect_failed(l, now);
}

/* The next endpoint that has not gone silent (the next one, if all have).
 * Those skipped count in the pass with what they did last, under
 * SUSPECT_MS ago; a pass never ends on skips alone. */
static void pick_endpoint(struct link *l, int64_t now)
{
        unsigned i, at = l->next;

        for (i = 0; i < l->n_endpoints; i++) {
                if (!suspect(l, l->endpoints[at], now)) {
                        break;
                }
                at = (at + 1) % l->n_endpoints;
        }
        while (i < l->n_endpoints && l->next != at) {
                if (reach_skip(&l->reach, (int)l->next, now) == REACH_FAILED &&
                    l->cb.unreachable != NULL) {
                        l->cb.unreachable(l->cb.data);
                }
                l->next = (l->next + 1) % l->n_endpoints;
        }
        memcpy(l->peer, l->endpoints[l->next], sizeof l->peer);
}

static void start_connect(struct link *l, int64_t now)
{
        char why[REACH_WHY_MAX];

        if (l->hint[0] != '\0' && !suspect(l, l->hint, now)) {
                memcpy(l->peer, l->hint, sizeof l->peer);
        } else {
                pick_endpoint(l, now);
        }
        l->hint[0] = '\0';
        l->peer_index = reach_index(&l->reach, l->peer);
        /* A bad address in a NOT_LEADER, or a name that does not resolve. */
        if (resolve_endpoint(l->peer, &l->addrs, why, sizeof why) != 0) {
                fail_as(l, now, false, REACH_REFUSED, false, why);
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
                l->connect_err = err;
                try_next(l, now); /* refused: killed, or not up yet */
                return;
        }
        connected(l, now);
}

bool link_step(struct link *l, int64_t now, bool needed)
{
        char why[REACH_WHY_MAX];

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
                l->connect_err = ETIMEDOUT;
                try_next(l, now); /* the next address, if any */
        } else if (l->handshaking && now >= l->deadline) {
                snprintf(why, sizeof why, "no TLS handshake within %d ms",
                         CONNECT_MS);
                fail_as(l, now, true, REACH_REFUSED, false, why);
        } else if (l->greeting && now >= l->deadline) {
                snprintf(why, sizeof why,
                         "accepted the connection but did not answer within "
                         "%d ms (not a Baton client port, or a node that is "
                         "stopped?)",
                         CONNECT_MS);
                fail_as(l, now, true, REACH_REFUSED, false, why);
        }
        return link_up(l);
}

int64_t link_next_event(const struct link *l, bool needed)
{
        if (l->fd < 0) {
                return needed ? l->retry_at : CLOCK_NEVER;
        }
        return unanswered(l) ? l->deadline : CLOCK_NEVER;
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
        char why[REACH_WHY_MAX];
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
                        snprintf(why, sizeof why,
                                 "no leader (it names %s, which went silent)",
                                 l->hint);
                        l->hint[0] = '\0';
                        no_leader(l, now, why);
                        return;
                }
                snprintf(why, sizeof why, "not the leader; it names %s",
                         l->hint);
                reach_note(&l->reach, l->peer_index, REACH_REDIRECTED, false,
                           why, now);
                /* Every request goes to the leader, so leave this node. */
                drop(l);
                l->bounces++;
                l->retry_at =
                    now + (l->bounces > 2 ? backoff(l, l->bounces) : 0);
                return;
        }
        no_leader(l, now, "no leader");
}

/* An ERROR in answer to the first PING: the node refuses the connection.
 * Only a full node (too many connections) may take it later. */
static void refused(struct link *l, int64_t now)
{
        struct proto_string msg = {"", 0};
        char why[REACH_WHY_MAX];
        int status = BATON_EMALFORMED;

        if (proto_read_error(l->reader.body, l->reader.h.length, &status,
                             &msg) != 0 ||
            msg.p == NULL) {
                msg.p = "";
                msg.len = 0;
        }
        if (status == BATON_ETLS) {
                fail_as(l, now, false, REACH_REFUSED, true,
                        "the node requires TLS but this client uses plain "
                        "TCP (it was given no CA, certificate and key)");
                return;
        }
        snprintf(why, sizeof why, "refused the connection: %.*s", (int)msg.len,
                 msg.p);
        fail_as(l, now, false,
                status == BATON_ETOOMANYCONNS ? REACH_LOST : REACH_REFUSED,
                false, why);
}

/* A frame while the first PING waits for its answer: a refusal, or the
 * node's answer, which brings the connection up. True when the frame is
 * done with here (the refusal, or the PING's own answer). */
static bool greeting_frame(struct link *l, int64_t now)
{
        const struct proto_header *h = &l->reader.h;

        if (h->type == PROTO_ERROR) {
                refused(l, now);
                return true;
        }
        up(l, now);
        return h->id == l->hello;
}

/* Bytes that are not frames: from a node, a protocol error; before its
 * first answer, no Baton node at all. */
static void garbled(struct link *l, int64_t now)
{
        if (unanswered(l)) {
                fail_as(l, now, false, REACH_REFUSED, false,
                        "answered in another protocol than Baton's (not a "
                        "Baton client port?)");
                return;
        }
        link_fail(l, now, false);
}

/* Hand over the frames in `n` bytes of plaintext. False when one of them
 * dropped the connection or a new one replaced it; `*gen` follows the
 * connection as it comes up. */
static bool frames(struct link *l, const uint8_t *buf, size_t n, uint64_t *gen,
                   int64_t now)
{
        size_t off = 0;

        while (off < n) {
                long used = proto_reader_feed(&l->reader, buf + off, n - off);
                if (used < 0) {
                        garbled(l, now);
                        return false;
                }
                off += (size_t)used;
                if (!l->reader.ready) {
                        continue;
                }
                l->last_rx = now;
                if (l->greeting) {
                        bool done = greeting_frame(l, now);
                        if (l->fd < 0) {
                                return false; /* refused */
                        }
                        *gen = l->gen;
                        if (done) {
                                continue;
                        }
                }
                if (l->reader.h.type == PROTO_NOT_LEADER) {
                        not_leader(l, l->reader.body, l->reader.h.length, now);
                } else {
                        l->cb.frame(l->cb.data, &l->reader.h, l->reader.body,
                                    now);
                }
                if (l->fd < 0 || l->gen != *gen) {
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
static void tls_failed(struct link *l, long rv, int64_t now)
{
        char why[REACH_WHY_MAX];

        if (!unanswered(l)) {
                link_fail(l, now, rv != BATON_ETLS);
                return;
        }
        if (rv != BATON_ETLS) {
                fail_as(l, now, true, REACH_REFUSED, false,
                        l->handshaking ? "closed the connection during the "
                                         "TLS handshake"
                                       : "closed the connection without "
                                         "answering");
                return;
        }
        linkio_why_tls(why, sizeof why, l->tc);
        fail_as(l, now, false, REACH_REFUSED, true, why);
}

/* Decrypt what arrived: the handshake's end greets the node, and records
 * carry frames. False when the connection dropped or changed. */
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
                        greet(l, now);
                        if (l->fd < 0) {
                                return false;
                        }
                }
                if (rv == 0) {
                        return true;
                }
                if (!frames(l, plain, (size_t)rv, gen, now)) {
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

/* The first bytes a node sends show whether it speaks what this client
 * speaks: a TLS record, or a plain frame (whose first byte, the protocol
 * version, is never a TLS record's type). False when it does not; the
 * connection is dropped then. */
static bool first_bytes(struct link *l, const uint8_t *buf, size_t n,
                        int64_t now)
{
        bool tls = tls_looks_like_record(buf, n);

        if (l->tc != NULL && !tls) {
                fail_as(l, now, false, REACH_REFUSED, true,
                        "the node speaks plain TCP (tls = off) but this "
                        "client uses TLS");
                return false;
        }
        if (l->tc == NULL && tls) {
                fail_as(l, now, false, REACH_REFUSED, true,
                        "the node speaks TLS but this client uses plain TCP "
                        "(it was given no CA, certificate and key)");
                return false;
        }
        return true;
}

/* The node closed the connection (`err` 0) or it failed: before the
 * node's first answer, nothing that answers Baton is there. */
static void closed(struct link *l, int err, int64_t now)
{
        char why[REACH_WHY_MAX];
        const char *when = l->handshaking ? " during the TLS handshake"
                                          : " without answering (not a Baton "
                                            "client port?)";

        if (!unanswered(l)) {
                link_fail(l, now, true); /* killed, or left */
                return;
        }
        if (err == 0) {
                snprintf(why, sizeof why, "closed the connection%s", when);
        } else {
                linkio_why_errno(why, sizeof why, err, when);
        }
        fail_as(l, now, true, REACH_REFUSED, false, why);
}

static void receive(struct link *l, int64_t now)
{
        uint8_t buf[16384];
        uint64_t gen = l->gen;

        for (;;) {
                ssize_t n = read(l->fd, buf, sizeof buf);
                if (n == 0) {
                        closed(l, 0, now);
                        return;
                }
                if (n < 0) {
                        if (errno == EINTR) {
                                continue;
                        }
                        if (errno != EAGAIN && errno != EWOULDBLOCK) {
                                closed(l, errno, now);
                        }
                        return;
                }
                if (!l->heard) {
                        l->heard = true;
                        if (!first_bytes(l, buf, (size_t)n, now)) {
                                return;
                        }
                }
                if (l->tc == NULL) {
                        if (!frames(l, buf, (size_t)n, &gen, now)) {
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
