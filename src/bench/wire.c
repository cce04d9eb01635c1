/* A client connection on the wire protocol, without libbaton (wire.h). */
#include "wire.h"

#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../lib/address.h"
#include "../proto/attach.h"

static int broken(struct wire *w, const char *what, const char *detail)
{
        if (w->why[0] == '\0') {
                snprintf(w->why, sizeof w->why, "%s%s%s", what,
                         detail[0] != '\0' ? ": " : "", detail);
        }
        return -1;
}

int wire_tls_load(struct tls_ctx **out, char *why, size_t size)
{
        struct tls_files t = {getenv("BATON_CACERT"), getenv("BATON_CERT"),
                              getenv("BATON_KEY"), NULL};

        *out = NULL;
        if (t.ca == NULL || t.cert == NULL || t.key == NULL ||
            t.ca[0] == '\0') {
                return 0;
        }
        return tls_ctx_create(out, TLS_CLIENT, &t, why, size) == 0 ? 0 : -1;
}

int wire_leader(const char *endpoints, struct baton_status *st)
{
        baton_client *c = NULL;
        int rv = baton_client_create(&c, endpoints, NULL);

        if (rv == 0) {
                rv = baton_status(c, NULL, st);
        }
        baton_client_destroy(c);
        if (rv == 0 && st->role != BATON_ROLE_LEADER) {
                rv = BATON_EUNAVAILABLE;
        }
        return rv;
}

void wire_secret(uint8_t secret[ATTACH_SECRET_SIZE],
                 uint8_t hash[ATTACH_HASH_SIZE])
{
        for (size_t i = 0; i < ATTACH_SECRET_SIZE; i++) {
                secret[i] = (uint8_t)rand();
        }
        attach_hash(secret, hash);
}

double wire_now(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void wire_init(struct wire *w)
{
        memset(w, 0, sizeof *w);
        w->fd = -1;
        proto_reader_init(&w->reader, PROTO_MAX_BODY, NULL);
}

void wire_close(struct wire *w)
{
        if (w->fd >= 0) {
                close(w->fd);
        }
        proto_reader_close(&w->reader);
        tls_conn_destroy(w->tc);
        free(w->out);
        free(w->cipher);
        wire_init(w);
}

int wire_dial(struct wire *w, struct tls_ctx *tls, const char *endpoint)
{
        struct addrinfo hints, *ai = NULL;
        struct address a;
        uint8_t none[1];

        if (address_parse(endpoint, &a) != 0) {
                return broken(w, "bad address", endpoint);
        }
        memset(&hints, 0, sizeof hints);
        hints.ai_socktype = SOCK_STREAM;
        if (getaddrinfo(a.host, a.service, &hints, &ai) != 0 || ai == NULL) {
                return broken(w, "cannot resolve", endpoint);
        }
        /* Not blocking: when thousands dial at once (the reconnects
         * workload) a full accept queue makes a SYN wait a second for its
         * retry, and one thread serves every connection. What is queued
         * before the connection is up goes out when poll() says it may. */
        w->fd =
            socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
                   ai->ai_protocol);
        if (w->fd < 0 || (connect(w->fd, ai->ai_addr, ai->ai_addrlen) != 0 &&
                          errno != EINPROGRESS)) {
                freeaddrinfo(ai);
                return broken(w, "cannot connect", strerror(errno));
        }
        freeaddrinfo(ai);
        if (tls == NULL) {
                return 0;
        }
        if (tls_conn_create(&w->tc, tls, NULL, a.host) != 0) {
                return broken(w, "TLS", "out of memory");
        }
        /* The client speaks first: the ClientHello. */
        if (tls_read(w->tc, none, 0) < 0) {
                return broken(w, "TLS", tls_errmsg(w->tc));
        }
        return wire_seal(w);
}

bool wire_ready(const struct wire *w)
{
        return w->tc == NULL || tls_ready(w->tc);
}

/* Room for `need` more bytes at the end of the buffer *p. */
static bool grow(uint8_t **p, size_t *cap, size_t len, size_t need)
{
        size_t want = *cap > 0 ? *cap : 256;
        uint8_t *q;

        if (len + need <= *cap) {
                return true;
        }
        while (want < len + need) {
                want *= 2;
        }
        q = realloc(*p, want);
        if (q == NULL) {
                return false;
        }
        *p = q;
        *cap = want;
        return true;
}

uint8_t *wire_room(struct wire *w, size_t n)
{
        if (!grow(&w->out, &w->out_cap, w->out_len, n)) {
                broken(w, "out of memory", "");
                return NULL;
        }
        return w->out + w->out_len;
}

void wire_commit(struct wire *w, size_t n)
{
        w->out_len += n;
}

int wire_seal(struct wire *w)
{
        size_t n;

        if (w->tc == NULL) {
                if (!grow(&w->cipher, &w->cipher_cap, w->cipher_len,
                          w->out_len)) {
                        return broken(w, "out of memory", "");
                }
                memcpy(w->cipher + w->cipher_len, w->out, w->out_len);
                w->cipher_len += w->out_len;
                w->out_len = 0;
                return 0;
        }
        if (w->out_len > 0 && tls_write(w->tc, w->out, w->out_len) != 0) {
                return broken(w, "TLS", tls_errmsg(w->tc));
        }
        w->out_len = 0;
        n = tls_pending(w->tc);
        if (!grow(&w->cipher, &w->cipher_cap, w->cipher_len, n)) {
                return broken(w, "out of memory", "");
        }
        w->cipher_len += tls_take(w->tc, w->cipher + w->cipher_len, n);
        return 0;
}

int wire_send(struct wire *w)
{
        ssize_t n;

        if (w->cipher_len == 0) {
                return 0;
        }
        n = send(w->fd, w->cipher, w->cipher_len, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n < 0) {
                return errno == EAGAIN || errno == EINTR
                           ? 0
                           : broken(w, "send", strerror(errno));
        }
        memmove(w->cipher, w->cipher + n, w->cipher_len - (size_t)n);
        w->cipher_len -= (size_t)n;
        return 0;
}

/* Plaintext from the node: whole frames to `cb`. */
static int frames(struct wire *w, const uint8_t *p, size_t n, wire_frame_cb cb,
                  void *data)
{
        while (n > 0) {
                long used = proto_reader_feed(&w->reader, p, n);
                if (used < 0) {
                        return broken(w, "bad frame from the node",
                                      baton_strerror((int)used));
                }
                p += used;
                n -= (size_t)used;
                if (w->reader.ready) {
                        cb(data, &w->reader.h, w->reader.body);
                }
        }
        return 0;
}

int wire_receive(struct wire *w, wire_frame_cb cb, void *data)
{
        uint8_t buf[64 * 1024], plain[16 * 1024];
        ssize_t n = recv(w->fd, buf, sizeof buf, MSG_DONTWAIT);
        long m;

        if (n == 0) {
                return broken(w, "the node closed the connection", "");
        }
        if (n < 0) {
                return errno == EAGAIN || errno == EINTR
                           ? 0
                           : broken(w, "recv", strerror(errno));
        }
        if (w->tc == NULL) {
                return frames(w, buf, (size_t)n, cb, data);
        }
        if (tls_feed(w->tc, buf, (size_t)n) != 0) {
                return broken(w, "out of memory", "");
        }
        while ((m = tls_read(w->tc, plain, sizeof plain)) > 0) {
                if (frames(w, plain, (size_t)m, cb, data) != 0) {
                        return -1;
                }
        }
        if (m < 0) {
                return broken(w, "TLS", tls_errmsg(w->tc));
        }
        return wire_seal(w); /* the handshake may have more to say */
}
