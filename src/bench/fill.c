/*
 * The fill workload (fill.h). libbaton gives each handle one session and
 * one request at a time per thread, which cannot open 100,000 sessions
 * quickly; this speaks the wire protocol (docs/protocol.md) itself on one
 * connection, with up to `window` requests in flight: every OPEN first,
 * then per session an ATTACH and its ACQUIREs (try, no wait). The leader
 * admits a connection's frames in order, so an ATTACH sent just ahead of
 * its session's ACQUIREs covers them. TLS as libbaton sets it up from the
 * environment (BATON_CACERT, BATON_CERT, BATON_KEY).
 */
#include "fill.h"

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "../../include/baton.h"
#include "../lib/address.h"
#include "../proto/attach.h"
#include "../proto/command.h"
#include "../proto/proto.h"
#include "../proto/reader.h"
#include "../tls/tls.h"

#define SILENCE_MS 30000 /* no answer for this long: the run is broken */
#define OUT_MAX    (64 * 1024)

struct fill {
        const struct fill_config *cfg;
        struct fill_result *res;
        int fd;
        struct tls_ctx *tls;
        struct tls_conn *tc;
        struct proto_reader reader;
        uint8_t out[OUT_MAX + PROTO_HEADER_SIZE + COMMAND_MAX_SIZE];
        size_t out_len;
        uint8_t *cipher; /* to send: ciphertext, or plain frames */
        size_t cipher_len, cipher_cap;
        uint64_t *ids; /* the session each OPEN made, by OPEN number */
        uint8_t secret[ATTACH_SECRET_SIZE];
        uint8_t hash[ATTACH_HASH_SIZE];
        bool opening;            /* the sessions' phase */
        uint64_t sent, answered; /* frames of the current phase */
};

static double now_s(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int broken(struct fill *f, const char *what, const char *detail)
{
        f->res->broken = true;
        snprintf(f->res->why, sizeof f->res->why, "%s%s%s", what,
                 detail[0] != '\0' ? ": " : "", detail);
        return -1;
}

/* The leader, asked through libbaton: its status into `st`. */
/* The leader's status, asked through libbaton: 0 or a BATON_E* code. */
static int leader_status(const struct fill_config *cfg, struct baton_status *st)
{
        baton_client *c = NULL;
        int rv = baton_client_create(&c, cfg->endpoints, NULL);

        if (rv == 0) {
                rv = baton_status(c, NULL, st);
        }
        baton_client_destroy(c);
        if (rv == 0 && st->role != BATON_ROLE_LEADER) {
                rv = BATON_EUNAVAILABLE;
        }
        return rv;
}

static int find_leader(struct fill *f, struct baton_status *st)
{
        int rv = leader_status(f->cfg, st);

        return rv == 0 ? 0 : broken(f, "no leader", baton_strerror(rv));
}

static int seal(struct fill *f);

static int dial(struct fill *f, const char *endpoint)
{
        struct addrinfo hints, *ai = NULL;
        struct address a;
        uint8_t none[1];

        if (address_parse(endpoint, &a) != 0) {
                return broken(f, "bad leader address", endpoint);
        }
        memset(&hints, 0, sizeof hints);
        hints.ai_socktype = SOCK_STREAM;
        if (getaddrinfo(a.host, a.service, &hints, &ai) != 0 || ai == NULL) {
                return broken(f, "cannot resolve", endpoint);
        }
        f->fd =
            socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, ai->ai_protocol);
        if (f->fd < 0 || connect(f->fd, ai->ai_addr, ai->ai_addrlen) != 0) {
                freeaddrinfo(ai);
                return broken(f, "cannot connect", strerror(errno));
        }
        freeaddrinfo(ai);
        if (f->tls == NULL) {
                return 0;
        }
        if (tls_conn_create(&f->tc, f->tls, NULL, a.host) != 0) {
                return broken(f, "TLS", "out of memory");
        }
        /* The client speaks first: the ClientHello. */
        if (tls_read(f->tc, none, 0) < 0) {
                return broken(f, "TLS", tls_errmsg(f->tc));
        }
        return seal(f);
}

static int load_tls(struct fill *f)
{
        struct tls_files t = {getenv("BATON_CACERT"), getenv("BATON_CERT"),
                              getenv("BATON_KEY"), NULL};

        if (t.ca == NULL || t.cert == NULL || t.key == NULL ||
            t.ca[0] == '\0') {
                return 0;
        }
        if (tls_ctx_create(&f->tls, TLS_CLIENT, &t, f->res->why,
                           sizeof f->res->why) != 0) {
                f->res->broken = true;
                return -1;
        }
        return 0;
}

/* --- Bytes out and in -------------------------------------------------- */

static int queue_cipher(struct fill *f, size_t need)
{
        if (f->cipher_len + need > f->cipher_cap) {
                size_t cap = (f->cipher_len + need) * 2;
                uint8_t *p = realloc(f->cipher, cap);
                if (p == NULL) {
                        return broken(f, "out of memory", "");
                }
                f->cipher = p;
                f->cipher_cap = cap;
        }
        return 0;
}

/* The frames built so far go into the bytes to send (sealed with TLS). */
static int seal(struct fill *f)
{
        size_t n;

        if (f->tc == NULL) {
                if (queue_cipher(f, f->out_len) != 0) {
                        return -1;
                }
                memcpy(f->cipher + f->cipher_len, f->out, f->out_len);
                f->cipher_len += f->out_len;
                f->out_len = 0;
                return 0;
        }
        if (f->out_len > 0 && tls_write(f->tc, f->out, f->out_len) != 0) {
                return broken(f, "TLS", tls_errmsg(f->tc));
        }
        f->out_len = 0;
        n = tls_pending(f->tc);
        if (queue_cipher(f, n) != 0) {
                return -1;
        }
        f->cipher_len += tls_take(f->tc, f->cipher + f->cipher_len, n);
        return 0;
}

static int send_some(struct fill *f)
{
        ssize_t n = send(f->fd, f->cipher, f->cipher_len, MSG_DONTWAIT);

        if (n < 0) {
                return errno == EAGAIN || errno == EINTR
                           ? 0
                           : broken(f, "send", strerror(errno));
        }
        memmove(f->cipher, f->cipher + n, f->cipher_len - (size_t)n);
        f->cipher_len -= (size_t)n;
        return 0;
}

static void answer(struct fill *f, const struct proto_header *h,
                   const uint8_t *body);

/* Plaintext from the leader: whole frames to answer(). */
static int frames(struct fill *f, const uint8_t *p, size_t n)
{
        while (n > 0) {
                long used = proto_reader_feed(&f->reader, p, n);
                if (used < 0) {
                        return broken(f, "bad frame from the leader",
                                      baton_strerror((int)used));
                }
                p += used;
                n -= (size_t)used;
                if (f->reader.ready) {
                        answer(f, &f->reader.h, f->reader.body);
                }
        }
        return 0;
}

static int receive(struct fill *f)
{
        uint8_t buf[64 * 1024], plain[16 * 1024];
        ssize_t n = recv(f->fd, buf, sizeof buf, MSG_DONTWAIT);
        long m;

        if (n == 0) {
                return broken(f, "the leader closed the connection", "");
        }
        if (n < 0) {
                return errno == EAGAIN || errno == EINTR
                           ? 0
                           : broken(f, "recv", strerror(errno));
        }
        if (f->tc == NULL) {
                return frames(f, buf, (size_t)n);
        }
        if (tls_feed(f->tc, buf, (size_t)n) != 0) {
                return broken(f, "out of memory", "");
        }
        while ((m = tls_read(f->tc, plain, sizeof plain)) > 0) {
                if (frames(f, plain, (size_t)m) != 0) {
                        return -1;
                }
        }
        if (m < 0) {
                return broken(f, "TLS", tls_errmsg(f->tc));
        }
        return seal(f); /* the handshake may have more to say */
}

/* --- The requests ------------------------------------------------------ */

/* Frame ids: OPEN number + 1 in the first phase; in the second, session
 * number * (L + 1) + 1 for its ATTACH and + 1 + j for its j-th ACQUIRE. */
static size_t next_frame(struct fill *f, uint8_t *out, size_t cap)
{
        const struct fill_config *cfg = f->cfg;
        char name[COMMAND_NAME_MAX + 1];
        uint8_t body[COMMAND_MAX_SIZE];
        uint64_t id = f->sent + 1, per = (uint64_t)cfg->locks_per_session + 1;
        uint64_t s = f->sent / per, j = f->sent % per;
        struct command k;
        size_t n;

        memset(&k, 0, sizeof k);
        if (f->opening) {
                k.type = COMMAND_OPEN;
                k.ttl_ms = (uint32_t)cfg->ttl_ms;
                k.nonce = ((uint64_t)rand() << 32) ^ (uint64_t)rand() ^ id;
                k.hash = f->hash;
        } else if (j == 0) {
                return attach_write(out, cap, id, f->ids[s], f->secret);
        } else {
                snprintf(name, sizeof name, "%s/%llu/%llu", cfg->prefix,
                         (unsigned long long)s, (unsigned long long)j);
                k.type = COMMAND_ACQUIRE;
                k.session = f->ids[s];
                k.seq = j;
                k.ack = 1;
                k.owner = 1;
                k.name = name;
                k.name_len = (uint8_t)strlen(name);
        }
        n = command_encode(&k, body, sizeof body);
        return n == 0 ? 0 : proto_write_command(out, cap, id, body, n);
}

static void count_error(struct fill *f, int status)
{
        f->res->errors++;
        if (f->res->first_error == 0) {
                f->res->first_error = status;
        }
}

static void answer(struct fill *f, const struct proto_header *h,
                   const uint8_t *body)
{
        struct proto_result r;
        bool opening = f->opening;
        int status = BATON_EMALFORMED;

        f->answered++;
        if (h->type == PROTO_NOT_LEADER) {
                f->res->not_leader++;
                count_error(f, BATON_ENOTLEADER);
                return;
        }
        if (h->type == PROTO_ERROR) {
                struct proto_string message;
                proto_read_error(body, h->length, &status, &message);
                count_error(f, status);
                return;
        }
        if (h->type != PROTO_RESULT ||
            proto_read_result(body, h->length, &r) != 0) {
                count_error(f, BATON_EMALFORMED);
                return;
        }
        if (r.status != 0) {
                count_error(f, r.status);
        } else if (opening && r.kind == PROTO_KIND_OPENED && h->id >= 1 &&
                   h->id <= (uint64_t)f->cfg->sessions) {
                f->ids[h->id - 1] = r.session;
                f->res->sessions++;
        } else if (!opening && r.kind == PROTO_KIND_GRANTED) {
                f->res->locks++;
        } else if (opening || r.kind != PROTO_KIND_OPENED) {
                count_error(f, BATON_EMALFORMED);
        }
}

/* Send `total` frames of the current phase, `window` at a time, and wait
 * for every answer. */
static int phase(struct fill *f, uint64_t total)
{
        double heard = now_s();
        uint64_t answered = 0;

        f->sent = f->answered = 0;
        while (f->answered < total) {
                struct pollfd pfd = {f->fd, POLLIN, 0};
                while (f->sent < total &&
                       f->sent - f->answered < (uint64_t)f->cfg->window &&
                       f->out_len < OUT_MAX &&
                       (f->tc == NULL || tls_ready(f->tc))) {
                        size_t n = next_frame(f, f->out + f->out_len,
                                              sizeof f->out - f->out_len);
                        if (n == 0) {
                                return broken(f, "cannot encode a request", "");
                        }
                        f->out_len += n;
                        f->sent++;
                }
                if (seal(f) != 0) {
                        return -1;
                }
                pfd.events |= f->cipher_len > 0 ? POLLOUT : 0;
                if (poll(&pfd, 1, 1000) < 0 && errno != EINTR) {
                        return broken(f, "poll", strerror(errno));
                }
                if ((pfd.revents & POLLOUT) && send_some(f) != 0) {
                        return -1;
                }
                if ((pfd.revents & (POLLIN | POLLHUP | POLLERR)) &&
                    receive(f) != 0) {
                        return -1;
                }
                if (f->answered != answered) {
                        answered = f->answered;
                        heard = now_s();
                } else if (now_s() - heard > SILENCE_MS / 1000.0) {
                        return broken(f, "no answer for 30 s", "");
                }
        }
        return 0;
}

static void secret_init(struct fill *f)
{
        unsigned len = 0;

        for (size_t i = 0; i < sizeof f->secret; i++) {
                f->secret[i] = (uint8_t)rand();
        }
        EVP_Digest(f->secret, sizeof f->secret, f->hash, &len, EVP_sha256(),
                   NULL);
}

int fill_run(const struct fill_config *cfg, struct fill_result *out)
{
        struct fill f = {.cfg = cfg, .res = out, .fd = -1};
        struct baton_status st;
        uint64_t per = (uint64_t)cfg->locks_per_session + 1;
        double t0;
        int rv = -1;

        memset(out, 0, sizeof *out);
        srand((unsigned)time(NULL) ^ (unsigned)getpid());
        secret_init(&f);
        proto_reader_init(&f.reader, PROTO_MAX_BODY, NULL);
        f.ids = calloc((size_t)cfg->sessions, sizeof *f.ids);
        if (f.ids == NULL || load_tls(&f) != 0 || find_leader(&f, &st) != 0 ||
            dial(&f, st.endpoint) != 0) {
                goto done;
        }
        out->term_before = st.term;
        out->leader_before = st.id;
        snprintf(out->leader_endpoint, sizeof out->leader_endpoint, "%s",
                 st.endpoint);
        t0 = now_s();
        f.opening = true;
        if (phase(&f, (uint64_t)cfg->sessions) == 0) {
                out->open_s = now_s() - t0;
                t0 = now_s();
                f.opening = false;
                if (out->sessions == (uint64_t)cfg->sessions &&
                    cfg->locks_per_session > 0 &&
                    phase(&f, (uint64_t)cfg->sessions * per) == 0) {
                        out->lock_s = now_s() - t0;
                }
        }
        rv = 0;
        /* Who leads now; not knowing is no reason to call the run broken. */
        if (leader_status(cfg, &st) == 0) {
                out->term_after = st.term;
                out->leader_after = st.id;
        }
done:
        if (f.fd >= 0) {
                close(f.fd);
        }
        proto_reader_close(&f.reader);
        tls_conn_destroy(f.tc);
        tls_ctx_destroy(f.tls);
        free(f.cipher);
        free(f.ids);
        return rv;
}
