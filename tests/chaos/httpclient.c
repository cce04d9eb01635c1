/*
 * The libbaton calls a chaos worker makes, served over the HTTP API
 * (docs/http.md) instead of the binary protocol: linked in place of
 * libbaton, it makes chaos-httpworker, the worker of the http-counter
 * workload, whose history the same checkers read. What an HTTP client
 * must do to keep libbaton's promises is here, as a user of the API in
 * another language would write it:
 *
 *   - a session opened with POST /v1/session, kept alive every TTL/3 by a
 *     thread of its own with its own connection; the local lease runs
 *     from the send of the last acknowledged keepalive, as libbaton's;
 *   - every write carries an Idempotency-Key (its seq in the session), so
 *     that it can be sent again, to another node, when its answer is
 *     lost; a redirect (307) is followed, a 503 or a dropped connection
 *     tries the next endpoint, until the call's deadline;
 *   - an answer that never came within the deadline is BATON_ENOANSWER
 *     (the outcome is unknown), one whose request was never written is
 *     BATON_ECONNECT (surely not applied), as libbaton reports them.
 *
 * Only the calls of the counter workload are served: baton_acquire(),
 * baton_release() and the session's; the others answer
 * BATON_EUNSUPPORTED (scripts/chaos runs only http-counter with this).
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "../../include/baton.h"

#define MAX_ENDPOINTS 8
#define ADDR_CAP      72
#define RESP_MAX      65536

/* One keep-alive HTTPS connection to one endpoint. */
struct link {
        int fd;
        SSL *ssl;
        int at; /* the endpoint it is to, -1: none */
};

struct baton_client {
        SSL_CTX *ctx;
        char endpoints[MAX_ENDPOINTS][ADDR_CAP];
        int n_endpoints;
        int current; /* where calls go first */
        uint32_t ttl_ms;
        uint32_t request_timeout_ms;
        char client_name[65];
        struct link calls; /* the worker's thread's */
        struct link ka;    /* the keepalive thread's */
        pthread_t ka_thread;
        bool ka_running;
        pthread_mutex_t mu;
        pthread_cond_t cv;
        bool stopping;
        uint64_t session;
        char secret[33];
        uint64_t next_seq;
        int64_t lease_until_ms; /* local lease: last acked send + TTL */
        bool expired;           /* the cluster said so (410) */
};

static int64_t now_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void link_close(struct link *l)
{
        if (l->ssl != NULL) {
                SSL_free(l->ssl);
                l->ssl = NULL;
        }
        if (l->fd >= 0) {
                close(l->fd);
                l->fd = -1;
        }
        l->at = -1;
}

/* Wait for `fd` to be ready for `events` until `deadline`: 0 or -1. */
static int wait_fd(int fd, short events, int64_t deadline)
{
        struct pollfd p = {.fd = fd, .events = events};
        int64_t left;

        for (;;) {
                left = deadline - now_ms();
                if (left <= 0) {
                        return -1;
                }
                if (poll(&p, 1, (int)(left > 1000 ? 1000 : left)) > 0) {
                        return 0;
                }
        }
}

/* Connect `l` to endpoint `i` (TLS handshake included): 0 or -1. */
static int link_open(struct baton_client *c, struct link *l, int i,
                     int64_t deadline)
{
        char host[ADDR_CAP], *colon;
        struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *ai = NULL;
        int fd, rv, err;
        socklen_t len = sizeof err;

        link_close(l);
        snprintf(host, sizeof host, "%s", c->endpoints[i]);
        colon = strrchr(host, ':');
        if (colon == NULL) {
                return -1;
        }
        *colon = '\0';
        if (getaddrinfo(host, colon + 1, &hints, &ai) != 0) {
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
             getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) || err != 0)) {
                close(fd);
                return -1;
        }
        l->fd = fd;
        l->ssl = SSL_new(c->ctx);
        SSL_set_fd(l->ssl, fd);
        X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(l->ssl), host);
        for (;;) {
                rv = SSL_connect(l->ssl);
                if (rv == 1) {
                        break;
                }
                err = SSL_get_error(l->ssl, rv);
                if ((err != SSL_ERROR_WANT_READ &&
                     err != SSL_ERROR_WANT_WRITE) ||
                    wait_fd(fd, err == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT,
                            deadline) != 0) {
                        link_close(l);
                        return -1;
                }
        }
        l->at = i;
        return 0;
}

/* Write all of `p`: 0 or -1. */
static int link_write(struct link *l, const char *p, size_t n, int64_t deadline)
{
        int rv, err;

        while (n > 0) {
                rv = SSL_write(l->ssl, p, (int)n);
                if (rv > 0) {
                        p += rv;
                        n -= (size_t)rv;
                        continue;
                }
                err = SSL_get_error(l->ssl, rv);
                if ((err != SSL_ERROR_WANT_READ &&
                     err != SSL_ERROR_WANT_WRITE) ||
                    wait_fd(l->fd,
                            err == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT,
                            deadline) != 0) {
                        return -1;
                }
        }
        return 0;
}

/* Read one answer: its status, its Location (if any) and its body
 * (NUL-terminated, in `body`). 0, or -1 when none came whole. */
static int link_read(struct link *l, int64_t deadline, int *status,
                     char *location, size_t loc_cap, char *body,
                     size_t body_cap, bool *close_after)
{
        static __thread char buf[RESP_MAX];
        size_t have = 0, head_len, want;
        char *end, *p;
        long clen = -1;
        int rv, err;

        for (;;) {
                buf[have] = '\0';
                end = strstr(buf, "\r\n\r\n");
                if (end != NULL) {
                        head_len = (size_t)(end - buf) + 4;
                        if (clen < 0) {
                                p = strcasestr(buf, "\r\nContent-Length:");
                                clen = p != NULL && p < end
                                           ? strtol(p + 17, NULL, 10)
                                           : 0;
                        }
                        want = head_len + (size_t)clen;
                        if (want >= sizeof buf || (size_t)clen >= body_cap) {
                                return -1;
                        }
                        if (have >= want) {
                                break;
                        }
                }
                if (have + 1 >= sizeof buf) {
                        return -1;
                }
                rv = SSL_read(l->ssl, buf + have, (int)(sizeof buf - 1 - have));
                if (rv > 0) {
                        have += (size_t)rv;
                        continue;
                }
                err = SSL_get_error(l->ssl, rv);
                if ((err != SSL_ERROR_WANT_READ &&
                     err != SSL_ERROR_WANT_WRITE) ||
                    wait_fd(l->fd,
                            err == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT,
                            deadline) != 0) {
                        return -1;
                }
        }
        if (sscanf(buf, "HTTP/1.1 %d", status) != 1) {
                return -1;
        }
        location[0] = '\0';
        p = strcasestr(buf, "\r\nLocation: ");
        if (p != NULL && p < end) {
                snprintf(location, loc_cap, "%.*s", (int)strcspn(p + 12, "\r"),
                         p + 12);
        }
        *close_after =
            (p = strcasestr(buf, "\r\nConnection: close")) != NULL && p < end;
        memcpy(body, buf + head_len, (size_t)clen);
        body[clen] = '\0';
        return 0;
}

/* The endpoint index of a redirect's https://HOST:PORT/..., added to the
 * list when it is not there; -1 if it cannot be read. */
static int endpoint_of(struct baton_client *c, const char *location)
{
        char addr[ADDR_CAP];
        const char *p = strstr(location, "://");
        int i, found = -1;

        if (p == NULL) {
                return -1;
        }
        p += 3;
        snprintf(addr, sizeof addr, "%.*s", (int)strcspn(p, "/"), p);
        /* Both threads follow redirects: the list is shared. */
        pthread_mutex_lock(&c->mu);
        for (i = 0; i < c->n_endpoints && found < 0; i++) {
                if (strcmp(c->endpoints[i], addr) == 0) {
                        found = i;
                }
        }
        if (found < 0 && c->n_endpoints < MAX_ENDPOINTS) {
                snprintf(c->endpoints[c->n_endpoints], ADDR_CAP, "%s", addr);
                found = c->n_endpoints++;
        }
        pthread_mutex_unlock(&c->mu);
        return found;
}

/* An error answer's BATON_E* code (its "code"), or `fallback`. */
static int code_of(json_t *j, int fallback)
{
        json_t *v = json_object_get(j, "code");

        return json_is_integer(v) ? (int)json_integer_value(v) : fallback;
}

/*
 * One call, `method` `path` with `body` (NULL: none), in the session when
 * `session`, with Idempotency-Key `seq` when not 0, on link `l`, sent
 * again (same key) to the leader or the next endpoint until an answer
 * that is final or `deadline`. 0 with `*out` (the answer's JSON, owned),
 * or a BATON_E* code.
 */
static int call(struct baton_client *c, struct link *l, const char *method,
                const char *path, const char *body, bool session, uint64_t seq,
                int64_t deadline, json_t **out)
{
        static __thread char req[4096], resp[RESP_MAX];
        char location[256], extra[256] = "";
        bool written = false, close_after;
        int at = l->at >= 0 ? l->at : c->current, status, code, n;
        json_t *j;

        *out = NULL;
        if (session) {
                n = snprintf(extra, sizeof extra,
                             "Baton-Session: %" PRIu64
                             "\r\nBaton-Secret: %s\r\n",
                             c->session, c->secret);
                if (seq != 0) {
                        snprintf(extra + n, sizeof extra - (size_t)n,
                                 "Idempotency-Key: %" PRIu64 "\r\n", seq);
                }
        }
        n = snprintf(req, sizeof req,
                     "%s %s HTTP/1.1\r\nHost: baton\r\n%s"
                     "Content-Type: application/json\r\n"
                     "Content-Length: %zu\r\n\r\n%s",
                     method, path, extra, body != NULL ? strlen(body) : 0,
                     body != NULL ? body : "");
        while (now_ms() < deadline) {
                if ((l->at != at && link_open(c, l, at, deadline) != 0) ||
                    link_write(l, req, (size_t)n, deadline) != 0) {
                        link_close(l);
                        at = (at + 1) % c->n_endpoints;
                        usleep(50 * 1000);
                        continue;
                }
                written = true;
                if (link_read(l, deadline, &status, location, sizeof location,
                              resp, sizeof resp, &close_after) != 0) {
                        link_close(l);
                        at = (at + 1) % c->n_endpoints;
                        continue;
                }
                if (close_after) {
                        link_close(l);
                }
                j = json_loads(resp, 0, NULL);
                code = code_of(j, BATON_EMALFORMED);
                if (status == 307 && (at = endpoint_of(c, location)) >= 0) {
                        json_decref(j);
                        continue;
                }
                if (at < 0) {
                        at = 0;
                }
                if (status == 503) { /* no leader, or unknown: again */
                        json_decref(j);
                        at = (at + 1) % c->n_endpoints;
                        usleep(100 * 1000);
                        continue;
                }
                c->current = at;
                if (status >= 200 && status < 300) {
                        *out = j;
                        return 0;
                }
                json_decref(j);
                return code;
        }
        return written ? BATON_ENOANSWER : BATON_ECONNECT;
}

static void *keepalive_main(void *arg)
{
        struct baton_client *c = arg;
        struct timespec ts;
        int64_t sent, deadline;
        json_t *j;
        int rv;

        pthread_mutex_lock(&c->mu);
        while (!c->stopping && !c->expired) {
                clock_gettime(CLOCK_REALTIME, &ts);
                ts.tv_nsec += (long)(c->ttl_ms / 3) * 1000000L;
                ts.tv_sec += ts.tv_nsec / 1000000000L;
                ts.tv_nsec %= 1000000000L;
                pthread_cond_timedwait(&c->cv, &c->mu, &ts);
                if (c->stopping) {
                        break;
                }
                pthread_mutex_unlock(&c->mu);
                sent = now_ms();
                deadline = sent + c->ttl_ms / 3;
                rv = call(c, &c->ka, "POST", "/v1/session/keepalive", NULL,
                          true, 0, deadline, &j);
                json_decref(j);
                pthread_mutex_lock(&c->mu);
                if (rv == 0 && sent + c->ttl_ms > c->lease_until_ms) {
                        c->lease_until_ms = sent + c->ttl_ms;
                } else if (rv == BATON_EEXPIRED || rv == BATON_ECLOSED ||
                           rv == BATON_ENOSESSION) {
                        c->expired = true;
                }
        }
        pthread_mutex_unlock(&c->mu);
        return NULL;
}

void baton_options_init(struct baton_options *o)
{
        memset(o, 0, sizeof *o);
        o->ttl_ms = 10000;
        o->request_timeout_ms = 5000;
}

static SSL_CTX *tls_context(void)
{
        const char *ca = getenv("BATON_CACERT");
        const char *cert = getenv("BATON_CERT");
        const char *key = getenv("BATON_KEY");
        SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());

        if (ctx == NULL || ca == NULL || cert == NULL || key == NULL ||
            SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION) != 1 ||
            SSL_CTX_load_verify_locations(ctx, ca, NULL) != 1 ||
            SSL_CTX_use_certificate_chain_file(ctx, cert) != 1 ||
            SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) != 1) {
                SSL_CTX_free(ctx);
                return NULL;
        }
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
        return ctx;
}

int baton_client_create(baton_client **out, const char *endpoints,
                        const struct baton_options *opts)
{
        struct baton_client *c = calloc(1, sizeof *c);
        char list[MAX_ENDPOINTS * ADDR_CAP], *save = NULL, *e;
        char body[256];
        json_t *j;
        int rv;

        if (c == NULL) {
                return BATON_ENOMEM;
        }
        c->calls.fd = c->ka.fd = -1;
        c->calls.at = c->ka.at = -1;
        c->ttl_ms = opts->ttl_ms;
        c->request_timeout_ms = opts->request_timeout_ms;
        snprintf(c->client_name, sizeof c->client_name, "%s",
                 opts->client_name != NULL ? opts->client_name : "");
        snprintf(list, sizeof list, "%s", endpoints);
        for (e = strtok_r(list, ",", &save);
             e != NULL && c->n_endpoints < MAX_ENDPOINTS;
             e = strtok_r(NULL, ",", &save)) {
                snprintf(c->endpoints[c->n_endpoints++], ADDR_CAP, "%s", e);
        }
        c->ctx = tls_context();
        if (c->n_endpoints == 0 || c->ctx == NULL) {
                rv = c->ctx == NULL ? BATON_ETLS : BATON_EINVAL;
                SSL_CTX_free(c->ctx);
                free(c);
                return rv;
        }
        pthread_mutex_init(&c->mu, NULL);
        pthread_cond_init(&c->cv, NULL);
        snprintf(body, sizeof body, "{\"ttl_ms\": %u, \"client_name\": \"%s\"}",
                 c->ttl_ms, c->client_name);
        c->lease_until_ms = now_ms() + c->ttl_ms;
        rv = call(c, &c->calls, "POST", "/v1/session", body, false, 0,
                  now_ms() + c->request_timeout_ms, &j);
        if (rv != 0) {
                baton_client_destroy(c);
                return rv;
        }
        c->session =
            (uint64_t)json_integer_value(json_object_get(j, "session"));
        snprintf(c->secret, sizeof c->secret, "%s",
                 json_string_value(json_object_get(j, "secret")));
        json_decref(j);
        c->next_seq = 1;
        c->ka_running =
            pthread_create(&c->ka_thread, NULL, keepalive_main, c) == 0;
        *out = c;
        return 0;
}

void baton_client_destroy(baton_client *c)
{
        json_t *j = NULL;

        if (c == NULL) {
                return;
        }
        pthread_mutex_lock(&c->mu);
        c->stopping = true;
        pthread_cond_broadcast(&c->cv);
        pthread_mutex_unlock(&c->mu);
        if (c->ka_running) {
                pthread_join(c->ka_thread, NULL);
        }
        if (c->session != 0 && !c->expired) {
                call(c, &c->calls, "POST", "/v1/session/close", NULL, true,
                     c->next_seq++, now_ms() + c->request_timeout_ms, &j);
                json_decref(j);
        }
        link_close(&c->calls);
        link_close(&c->ka);
        SSL_CTX_free(c->ctx);
        pthread_mutex_destroy(&c->mu);
        pthread_cond_destroy(&c->cv);
        free(c);
}

uint64_t baton_session_id(baton_client *c)
{
        return c->session;
}

int baton_session_state(baton_client *c)
{
        int s;

        pthread_mutex_lock(&c->mu);
        s = c->expired || now_ms() >= c->lease_until_ms ? BATON_SESSION_EXPIRED
            : now_ms() >= c->lease_until_ms - c->ttl_ms / 2
                ? BATON_SESSION_JEOPARDY
                : BATON_SESSION_LIVE;
        pthread_mutex_unlock(&c->mu);
        return s;
}

int64_t baton_session_remaining_ms(baton_client *c)
{
        int64_t left;

        pthread_mutex_lock(&c->mu);
        left = c->expired ? 0 : c->lease_until_ms - now_ms();
        pthread_mutex_unlock(&c->mu);
        return left > 0 ? left : 0;
}

/* libbaton's owner tag for BATON_OWNER_THREAD: the thread id, top bit
 * set (src/client/client.c). */
static uint64_t owner_tag(uint64_t owner)
{
        return owner != BATON_OWNER_THREAD
                   ? owner
                   : (uint64_t)syscall(SYS_gettid) | (UINT64_C(1) << 63);
}

int baton_acquire(baton_client *c, const char *name, uint64_t owner,
                  int64_t wait_ms, uint64_t *token)
{
        char body[512];
        json_t *j;
        int rv;

        if (baton_session_state(c) == BATON_SESSION_EXPIRED) {
                return BATON_EEXPIRED;
        }
        snprintf(body, sizeof body,
                 "{\"name\": \"%s\", \"owner\": \"%" PRIu64
                 "\", \"wait_ms\": %" PRId64 "}",
                 name, owner_tag(owner), wait_ms);
        rv =
            call(c, &c->calls, "POST", "/v1/lock/acquire", body, true,
                 c->next_seq++, now_ms() + wait_ms + c->request_timeout_ms, &j);
        if (rv == 0) {
                *token =
                    (uint64_t)json_integer_value(json_object_get(j, "token"));
                json_decref(j);
        }
        return rv;
}

int baton_release(baton_client *c, const char *name, uint64_t owner,
                  uint64_t token)
{
        char body[512];
        json_t *j;
        int rv;

        snprintf(body, sizeof body,
                 "{\"name\": \"%s\", \"owner\": \"%" PRIu64
                 "\", \"token\": %" PRIu64 "}",
                 name, owner_tag(owner), token);
        rv = call(c, &c->calls, "POST", "/v1/lock/release", body, true,
                  c->next_seq++, now_ms() + c->request_timeout_ms, &j);
        json_decref(j);
        return rv;
}

/* The calls of the other workloads: not served over HTTP by this worker. */
int baton_acquire_shared(baton_client *c, const char *name, uint64_t owner,
                         int64_t wait_ms, uint64_t *token)
{
        (void)c, (void)name, (void)owner, (void)wait_ms, (void)token;
        return BATON_EUNSUPPORTED;
}

int baton_sem_acquire(baton_client *c, const char *name, uint32_t limit,
                      uint32_t permits, uint64_t owner, int64_t wait_ms,
                      uint64_t *token)
{
        (void)c, (void)name, (void)limit, (void)permits, (void)owner;
        (void)wait_ms, (void)token;
        return BATON_EUNSUPPORTED;
}

int baton_multi_acquire(baton_client *c, const struct baton_lock_name *names,
                        size_t n, uint64_t owner, int64_t wait_ms,
                        uint64_t *token)
{
        (void)c, (void)names, (void)n, (void)owner, (void)wait_ms, (void)token;
        return BATON_EUNSUPPORTED;
}

int baton_multi_release(baton_client *c, const struct baton_lock_name *names,
                        size_t n, uint64_t owner, uint64_t token)
{
        (void)c, (void)names, (void)n, (void)owner, (void)token;
        return BATON_EUNSUPPORTED;
}

int baton_campaign(baton_client *c, const char *name, const char *value,
                   uint64_t owner, int64_t wait_ms, uint64_t *token)
{
        (void)c, (void)name, (void)value, (void)owner, (void)wait_ms;
        (void)token;
        return BATON_EUNSUPPORTED;
}

int baton_proclaim(baton_client *c, const char *name, uint64_t owner,
                   uint64_t token, const char *value)
{
        (void)c, (void)name, (void)owner, (void)token, (void)value;
        return BATON_EUNSUPPORTED;
}

int baton_resign(baton_client *c, const char *name, uint64_t owner,
                 uint64_t token)
{
        (void)c, (void)name, (void)owner, (void)token;
        return BATON_EUNSUPPORTED;
}

int baton_holder(baton_client *c, const char *name, struct baton_holder *out)
{
        (void)c, (void)name;
        memset(out, 0, sizeof *out);
        return BATON_EUNSUPPORTED;
}

int baton_watch_open(baton_client *c, const char *name, int flags,
                     uint64_t from_index, uint32_t from_ord, baton_watch **w)
{
        (void)c, (void)name, (void)flags, (void)from_index, (void)from_ord;
        *w = NULL;
        return BATON_EUNSUPPORTED;
}

int baton_watch_next(baton_watch *w, struct baton_event *ev, int64_t wait_ms)
{
        (void)w, (void)ev, (void)wait_ms;
        return BATON_EUNSUPPORTED;
}

void baton_watch_close(baton_watch *w)
{
        (void)w;
}
