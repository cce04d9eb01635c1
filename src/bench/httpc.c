/* A blocking HTTPS client of Baton's HTTP API, with deadlines. */
#include "httpc.h"

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <openssl/x509v3.h>

#include "../../include/baton.h"

int64_t httpc_now_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int httpc_cluster_init(struct httpc_cluster *cl, const char *endpoints,
                       char *why, size_t size)
{
        const char *ca = getenv("BATON_CACERT");
        const char *cert = getenv("BATON_CERT");
        const char *key = getenv("BATON_KEY");
        char list[HTTPC_ENDPOINTS_MAX * HTTPC_ADDR_MAX], *save = NULL, *e;

        memset(cl, 0, sizeof *cl);
        snprintf(list, sizeof list, "%s", endpoints != NULL ? endpoints : "");
        for (e = strtok_r(list, ",", &save);
             e != NULL && cl->n < HTTPC_ENDPOINTS_MAX;
             e = strtok_r(NULL, ",", &save)) {
                snprintf(cl->endpoints[cl->n++], HTTPC_ADDR_MAX, "%s", e);
        }
        if (cl->n == 0) {
                snprintf(why, size, "no HTTP API endpoint given");
                return BATON_EINVAL;
        }
        cl->ctx = SSL_CTX_new(TLS_client_method());
        if (cl->ctx == NULL || ca == NULL || cert == NULL || key == NULL ||
            SSL_CTX_set_min_proto_version(cl->ctx, TLS1_3_VERSION) != 1 ||
            SSL_CTX_load_verify_locations(cl->ctx, ca, NULL) != 1 ||
            SSL_CTX_use_certificate_chain_file(cl->ctx, cert) != 1 ||
            SSL_CTX_use_PrivateKey_file(cl->ctx, key, SSL_FILETYPE_PEM) != 1) {
                snprintf(why, size,
                         "the HTTP API needs TLS: BATON_CACERT, BATON_CERT "
                         "and BATON_KEY must name readable PEM files");
                SSL_CTX_free(cl->ctx);
                cl->ctx = NULL;
                return BATON_ETLS;
        }
        SSL_CTX_set_verify(cl->ctx, SSL_VERIFY_PEER, NULL);
        pthread_mutex_init(&cl->mu, NULL);
        return 0;
}

void httpc_cluster_close(struct httpc_cluster *cl)
{
        if (cl->ctx != NULL) {
                SSL_CTX_free(cl->ctx);
                cl->ctx = NULL;
                pthread_mutex_destroy(&cl->mu);
        }
}

void httpc_conn_init(struct httpc_conn *c)
{
        c->fd = -1;
        c->ssl = NULL;
        c->at = -1;
}

void httpc_conn_close(struct httpc_conn *c)
{
        if (c->ssl != NULL) {
                SSL_free(c->ssl);
                c->ssl = NULL;
        }
        if (c->fd >= 0) {
                close(c->fd);
                c->fd = -1;
        }
        c->at = -1;
}

/* Wait for `fd` to be ready for `events` until `deadline`: 0 or -1. */
static int wait_fd(int fd, short events, int64_t deadline)
{
        struct pollfd p = {.fd = fd, .events = events};
        int64_t left;

        for (;;) {
                left = deadline - httpc_now_ms();
                if (left <= 0) {
                        return -1;
                }
                if (poll(&p, 1, (int)(left > 1000 ? 1000 : left)) > 0) {
                        return 0;
                }
        }
}

/* Wait for what SSL's last call `rv` on `c` needs: 0, or -1 when it
 * failed for good or the deadline passed. */
static int ssl_wait(struct httpc_conn *c, int rv, int64_t deadline)
{
        int err = SSL_get_error(c->ssl, rv);

        if (err != SSL_ERROR_WANT_READ && err != SSL_ERROR_WANT_WRITE) {
                return -1;
        }
        return wait_fd(c->fd, err == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT,
                       deadline);
}

/* A non-blocking TCP connection to "host:port": the socket, or -1. */
static int dial(const char *host, const char *port, int64_t deadline)
{
        struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *ai = NULL;
        socklen_t len = sizeof(int);
        int fd, rv, err = 0;

        if (getaddrinfo(host, port, &hints, &ai) != 0) {
                return -1;
        }
        fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK, 0);
        if (fd < 0) {
                freeaddrinfo(ai);
                return -1;
        }
        rv = connect(fd, ai->ai_addr, ai->ai_addrlen);
        freeaddrinfo(ai);
        if (rv != 0 &&
            (errno != EINPROGRESS || wait_fd(fd, POLLOUT, deadline) != 0 ||
             getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 ||
             err != 0)) {
                close(fd);
                return -1;
        }
        return fd;
}

/* Connect `c` to endpoint `i`, TLS handshake included: 0 or -1. */
static int conn_open(struct httpc_cluster *cl, struct httpc_conn *c, int i,
                     int64_t deadline)
{
        char host[HTTPC_ADDR_MAX], *colon;
        int rv;

        httpc_conn_close(c);
        pthread_mutex_lock(&cl->mu);
        snprintf(host, sizeof host, "%s", cl->endpoints[i]);
        pthread_mutex_unlock(&cl->mu);
        colon = strrchr(host, ':');
        if (colon == NULL) {
                return -1;
        }
        *colon = '\0';
        c->fd = dial(host, colon + 1, deadline);
        if (c->fd < 0) {
                return -1;
        }
        c->ssl = SSL_new(cl->ctx);
        SSL_set_fd(c->ssl, c->fd);
        /* The node's certificate names the address it is reached at. */
        if (X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(c->ssl), host) != 1) {
                SSL_set1_host(c->ssl, host);
        }
        while ((rv = SSL_connect(c->ssl)) != 1) {
                if (ssl_wait(c, rv, deadline) != 0) {
                        httpc_conn_close(c);
                        return -1;
                }
        }
        c->at = i;
        return 0;
}

static int conn_write(struct httpc_conn *c, const char *p, size_t n,
                      int64_t deadline)
{
        int rv;

        while (n > 0) {
                rv = SSL_write(c->ssl, p, (int)n);
                if (rv > 0) {
                        p += rv;
                        n -= (size_t)rv;
                } else if (ssl_wait(c, rv, deadline) != 0) {
                        return -1;
                }
        }
        return 0;
}

/* What one answer's head says. */
struct head {
        int status;
        char location[256];
        bool close;
};

/* The head's fields, from `buf` up to `end` (the empty line). */
static int read_head(const char *buf, const char *end, struct head *h)
{
        const char *p;

        if (sscanf(buf, "HTTP/1.1 %d", &h->status) != 1) {
                return -1;
        }
        h->location[0] = '\0';
        p = strcasestr(buf, "\r\nLocation: ");
        if (p != NULL && p < end) {
                snprintf(h->location, sizeof h->location, "%.*s",
                         (int)strcspn(p + 12, "\r"), p + 12);
        }
        p = strcasestr(buf, "\r\nConnection: close");
        h->close = p != NULL && p < end;
        return 0;
}

/* Read one answer whole (the API always sends Content-Length): 0 with
 * its head and its body in `out`, or -1. */
static int conn_read(struct httpc_conn *c, int64_t deadline, struct head *h,
                     char *out, size_t cap)
{
        static __thread char buf[HTTPC_BODY_MAX + 4096];
        size_t have = 0, head_len = 0;
        long clen = -1;
        char *end = NULL, *p;
        int rv;

        for (;;) {
                buf[have] = '\0';
                if (end == NULL && (end = strstr(buf, "\r\n\r\n")) != NULL) {
                        head_len = (size_t)(end - buf) + 4;
                        p = strcasestr(buf, "\r\nContent-Length:");
                        clen =
                            p != NULL && p < end ? strtol(p + 17, NULL, 10) : 0;
                        if (clen < 0 || (size_t)clen >= cap ||
                            head_len + (size_t)clen >= sizeof buf) {
                                return -1;
                        }
                }
                if (end != NULL && have >= head_len + (size_t)clen) {
                        break;
                }
                if (have + 1 >= sizeof buf) {
                        return -1;
                }
                rv = SSL_read(c->ssl, buf + have, (int)(sizeof buf - 1 - have));
                if (rv > 0) {
                        have += (size_t)rv;
                } else if (ssl_wait(c, rv, deadline) != 0) {
                        return -1;
                }
        }
        if (read_head(buf, end, h) != 0) {
                return -1;
        }
        memcpy(out, buf + head_len, (size_t)clen);
        out[clen] = '\0';
        return 0;
}

/* The endpoint of a redirect's https://HOST:PORT/..., added to the list
 * when it is not there; -1 if it cannot be read. */
static int endpoint_of(struct httpc_cluster *cl, const char *location)
{
        char addr[HTTPC_ADDR_MAX];
        const char *p = strstr(location, "://");
        int i, found = -1;

        if (p == NULL) {
                return -1;
        }
        p += 3;
        snprintf(addr, sizeof addr, "%.*s", (int)strcspn(p, "/"), p);
        pthread_mutex_lock(&cl->mu);
        for (i = 0; i < cl->n && found < 0; i++) {
                if (strcmp(cl->endpoints[i], addr) == 0) {
                        found = i;
                }
        }
        if (found < 0 && cl->n < HTTPC_ENDPOINTS_MAX) {
                snprintf(cl->endpoints[cl->n], HTTPC_ADDR_MAX, "%s", addr);
                found = cl->n++;
        }
        pthread_mutex_unlock(&cl->mu);
        return found;
}

int httpc_call(struct httpc_cluster *cl, struct httpc_conn *c,
               const char *method, const char *path, const char *headers,
               const char *body, int64_t deadline_ms, int *status, char *out,
               size_t cap)
{
        static __thread char req[8192];
        int at = c->at >= 0 ? c->at : cl->current, n;
        bool written = false;
        struct head h;

        n = snprintf(req, sizeof req,
                     "%s %s HTTP/1.1\r\nHost: baton\r\n%s"
                     "Content-Type: application/json\r\n"
                     "Content-Length: %zu\r\n\r\n%s",
                     method, path, headers, body != NULL ? strlen(body) : 0,
                     body != NULL ? body : "");
        if (n < 0 || (size_t)n >= sizeof req) {
                return BATON_EINVAL;
        }
        while (httpc_now_ms() < deadline_ms) {
                if ((c->at != at && conn_open(cl, c, at, deadline_ms) != 0) ||
                    conn_write(c, req, (size_t)n, deadline_ms) != 0) {
                        httpc_conn_close(c);
                        at = (at + 1) % cl->n;
                        usleep(50 * 1000);
                        continue;
                }
                written = true;
                if (conn_read(c, deadline_ms, &h, out, cap) != 0) {
                        httpc_conn_close(c);
                        at = (at + 1) % cl->n;
                        continue;
                }
                if (h.close) {
                        httpc_conn_close(c);
                }
                if (h.status == 307 &&
                    (at = endpoint_of(cl, h.location)) >= 0) {
                        continue;
                }
                if (at < 0 || h.status == 503) {
                        /* No leader, or it does not know yet: the next. */
                        at = (at < 0 ? 0 : at + 1) % cl->n;
                        usleep(100 * 1000);
                        continue;
                }
                cl->current = at;
                *status = h.status;
                return 0;
        }
        return written ? BATON_ENOANSWER : BATON_ECONNECT;
}

uint64_t httpc_field(const char *json, const char *key)
{
        char want[64];
        const char *p;

        snprintf(want, sizeof want, "\"%s\":", key);
        p = strstr(json, want);
        return p != NULL ? strtoull(p + strlen(want), NULL, 10) : 0;
}

int httpc_code(const char *json)
{
        const char *p = strstr(json, "\"code\":");

        return p != NULL ? (int)strtol(p + 7, NULL, 10) : BATON_EMALFORMED;
}
