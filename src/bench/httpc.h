/* A client of Baton's HTTP API (docs/http.md) over HTTPS, blocking with
 * deadlines: keep-alive connections, a follower's redirect followed, a
 * node that does not answer or has no leader left for the next endpoint,
 * until the call's deadline. baton-bench's --http workloads and the chaos
 * suite's HTTP worker (tests/chaos/httpclient.c) use it. */
#ifndef BENCH_HTTPC_H
#define BENCH_HTTPC_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include <openssl/ssl.h>

#define HTTPC_ENDPOINTS_MAX 8
#define HTTPC_ADDR_MAX      72
#define HTTPC_BODY_MAX      65536 /* the largest answer read */

/* The cluster's API endpoints and the TLS settings, shared by the
 * connections of any number of threads. */
struct httpc_cluster {
        SSL_CTX *ctx;
        char endpoints[HTTPC_ENDPOINTS_MAX][HTTPC_ADDR_MAX];
        int n;
        int current; /* where calls go first: the last that answered */
        pthread_mutex_t mu;
};

/* One keep-alive connection, used by one thread at a time. */
struct httpc_conn {
        int fd;
        SSL *ssl;
        int at; /* its endpoint, -1: none */
};

/*
 * "host:port,..." (copied) with the TLS files libbaton reads from the
 * environment (BATON_CACERT, BATON_CERT, BATON_KEY), which the API
 * requires. 0, BATON_EINVAL (no endpoint) or BATON_ETLS (the files), with
 * the reason in `why`.
 */
int httpc_cluster_init(struct httpc_cluster *cl, const char *endpoints,
                       char *why, size_t size);
void httpc_cluster_close(struct httpc_cluster *cl);

void httpc_conn_init(struct httpc_conn *c);
void httpc_conn_close(struct httpc_conn *c);

/* Milliseconds on the monotonic clock, which deadlines count in. */
int64_t httpc_now_ms(void);

/*
 * `method` `path` with `headers` (lines ending in CRLF, or "") and `body`
 * (JSON, or NULL), on `c`, until an answer that is not a redirect or a
 * 503, or `deadline_ms`: 0 with the answer's `*status` and its body in
 * `out` (NUL-terminated, `cap` bytes), or BATON_ENOANSWER when a request
 * went out and no final answer came in time, BATON_ECONNECT when none
 * could be sent.
 */
int httpc_call(struct httpc_cluster *cl, struct httpc_conn *c,
               const char *method, const char *path, const char *headers,
               const char *body, int64_t deadline_ms, int *status, char *out,
               size_t cap);

/* The unsigned integer field `key` of a JSON answer (a flat search that
 * the API's answers allow), or 0; httpc_code(): an error answer's
 * BATON_E* "code", or BATON_EMALFORMED. */
uint64_t httpc_field(const char *json, const char *key);
int httpc_code(const char *json);

#endif /* BENCH_HTTPC_H */
