/*
 * redis-tls-lock.c - the peer harness's Redis lock driver over TLS, for
 * scripts/bench --peers: the same recipe, flags and JSON line as the
 * harness's redis_lock.c (hiredis 0.14, which has no TLS), with the same
 * hiredis code encoding the commands and parsing the replies, and OpenSSL
 * carrying the bytes.
 *
 * Recipe (as redis_lock.c): acquire = SET <name> <token> NX PX <ttl>, "OK"
 * = held, else poll every --retry-us until --op-timeout-ms; release = the
 * compare-and-delete script by EVALSHA (EVAL on NOSCRIPT), reply 1 =
 * released. One client = one connection (its own TLS handshake).
 *
 * TLS from the environment, so that the command line stays the
 * harness's: LB_TLS_CA (the CA file that signed the server's
 * certificate; unset = plain TCP, for comparing this driver with
 * redis_lock.c), LB_TLS_CERT and LB_TLS_KEY (the client certificate, for
 * a server that asks for one). TLS 1.3 only; the server's certificate
 * must name the endpoint's IP address.
 *
 * Built by scripts/bench.d/peers.sh against the harness's lockbench.h:
 *   cc -O2 -I PEERS/drivers/common redis-tls-lock.c -lhiredis -lssl
 *      -lcrypto -lpthread -lm
 */
#define LB_IMPLEMENTATION
#include "lockbench.h"

#include <arpa/inet.h>
#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

static const char *release_lua =
    "if redis.call('get', KEYS[1]) == ARGV[1] then "
    "return redis.call('del', KEYS[1]) else return 0 end";

struct tlsclient {
        int fd;
        SSL *ssl; /* NULL: plain TCP */
        redisReader *reader;
        int broken; /* an I/O error: reopen */
        const lb_cfg *cfg;
        int idx;
        unsigned long long seq;
        char token[96];
        char sha[64];
};

static SSL_CTX *ctx;
static pthread_once_t ctx_once = PTHREAD_ONCE_INIT;
static int ctx_failed;

/* The one SSL_CTX of the process, from LB_TLS_*; none without LB_TLS_CA. */
static void ctx_init(void)
{
        const char *ca = getenv("LB_TLS_CA");
        const char *cert = getenv("LB_TLS_CERT");
        const char *key = getenv("LB_TLS_KEY");

        if (ca == NULL || *ca == '\0')
                return;
        ctx = SSL_CTX_new(TLS_client_method());
        if (ctx == NULL ||
            !SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION) ||
            SSL_CTX_load_verify_locations(ctx, ca, NULL) != 1)
                goto err;
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
        if (cert != NULL && *cert != '\0' &&
            (SSL_CTX_use_certificate_chain_file(ctx, cert) != 1 ||
             SSL_CTX_use_PrivateKey_file(ctx, key ? key : cert,
                                         SSL_FILETYPE_PEM) != 1))
                goto err;
        return;
err:
        fprintf(stderr, "redis-tls-lock: TLS setup failed (CA %s): ", ca);
        ERR_print_errors_fp(stderr);
        ctx_failed = 1;
}

/* Writes all of BUF; -1 on an error or a timeout. */
static int send_all(struct tlsclient *cl, const char *buf, size_t len)
{
        while (len > 0) {
                ssize_t n;

                if (cl->ssl != NULL) {
                        size_t w = 0;

                        n = SSL_write_ex(cl->ssl, buf, len, &w) == 1
                                ? (ssize_t)w
                                : -1;
                } else {
                        n = send(cl->fd, buf, len, MSG_NOSIGNAL);
                }
                if (n <= 0)
                        return -1;
                buf += n;
                len -= (size_t)n;
        }
        return 0;
}

/* One command (hiredis formats it, the arguments as redisCommand takes
 * them) and its reply (hiredis's reader parses it); NULL on an I/O error,
 * which marks the connection broken. */
static redisReply *command(struct tlsclient *cl, const char *fmt, ...)
{
        char *cmd = NULL, buf[16384];
        void *reply = NULL;
        va_list ap;
        int len;

        va_start(ap, fmt);
        len = redisvFormatCommand(&cmd, fmt, ap);
        va_end(ap);
        if (len < 0)
                return NULL;
        if (send_all(cl, cmd, (size_t)len) != 0) {
                free(cmd);
                cl->broken = 1;
                return NULL;
        }
        free(cmd);
        for (;;) {
                ssize_t n;

                if (redisReaderGetReply(cl->reader, &reply) != REDIS_OK) {
                        cl->broken = 1;
                        return NULL;
                }
                if (reply != NULL)
                        return reply;
                if (cl->ssl != NULL) {
                        size_t r = 0;

                        n = SSL_read_ex(cl->ssl, buf, sizeof buf, &r) == 1
                                ? (ssize_t)r
                                : -1;
                } else {
                        n = recv(cl->fd, buf, sizeof buf, 0);
                }
                if (n <= 0 ||
                    redisReaderFeed(cl->reader, buf, (size_t)n) != REDIS_OK) {
                        cl->broken = 1;
                        return NULL;
                }
        }
}

static void r_close(void *p)
{
        struct tlsclient *cl = p;

        if (cl == NULL)
                return;
        if (cl->ssl != NULL) {
                SSL_shutdown(cl->ssl);
                SSL_free(cl->ssl);
        }
        if (cl->reader != NULL)
                redisReaderFree(cl->reader);
        if (cl->fd >= 0)
                close(cl->fd);
        free(cl);
}

/* The TCP connection to the first endpoint (host:port, an IPv4 address),
 * with TCP_NODELAY as hiredis sets it and the op timeout on both
 * directions, as hiredis's redisSetTimeout. */
static int dial(const lb_cfg *cfg, char *host, size_t hostlen)
{
        struct sockaddr_in sa = {.sin_family = AF_INET};
        struct timeval tv = {cfg->op_timeout_ms / 1000,
                             (cfg->op_timeout_ms % 1000) * 1000};
        const char *colon = strchr(cfg->endpoints, ':');
        size_t hl = colon ? (size_t)(colon - cfg->endpoints) : 0;
        int fd, one = 1;

        if (colon == NULL || hl == 0 || hl >= hostlen)
                return -1;
        memcpy(host, cfg->endpoints, hl);
        host[hl] = '\0';
        sa.sin_port = htons((unsigned short)atoi(colon + 1));
        if (inet_pton(AF_INET, host, &sa.sin_addr) != 1)
                return -1;
        fd = socket(AF_INET, SOCK_STREAM, 0);
        if (fd < 0)
                return -1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
        if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
                close(fd);
                return -1;
        }
        return fd;
}

static void *r_open(const lb_cfg *cfg, int idx)
{
        struct tlsclient *cl;
        redisReply *r;
        char host[64];

        pthread_once(&ctx_once, ctx_init);
        if (ctx_failed)
                return NULL;
        cl = calloc(1, sizeof *cl);
        if (cl == NULL)
                return NULL;
        cl->cfg = cfg;
        cl->idx = idx;
        cl->fd = dial(cfg, host, sizeof host);
        cl->reader = redisReaderCreate();
        if (cl->fd < 0 || cl->reader == NULL)
                goto err;
        if (ctx != NULL) {
                cl->ssl = SSL_new(ctx);
                if (cl->ssl == NULL || SSL_set_fd(cl->ssl, cl->fd) != 1 ||
                    !X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(cl->ssl),
                                                   host) ||
                    SSL_connect(cl->ssl) != 1) {
                        if (__atomic_fetch_add(&lb_errors_logged, 1,
                                               __ATOMIC_RELAXED) < 20) {
                                fprintf(stderr,
                                        "redis-tls-lock: client %d: "
                                        "TLS handshake: ",
                                        idx);
                                ERR_print_errors_fp(stderr);
                        }
                        goto err;
                }
        }
        r = command(cl, "SCRIPT LOAD %s", release_lua);
        if (r == NULL || r->type != REDIS_REPLY_STRING) {
                if (r != NULL)
                        freeReplyObject(r);
                goto err;
        }
        snprintf(cl->sha, sizeof cl->sha, "%s", r->str);
        freeReplyObject(r);
        return cl;
err:
        r_close(cl);
        return NULL;
}

static int r_acquire(void *p, const char *name)
{
        struct tlsclient *cl = p;
        double deadline = lb_now() + cl->cfg->op_timeout_ms / 1000.0;

        snprintf(cl->token, sizeof cl->token, "%d-%d-%llu", (int)getpid(),
                 cl->idx, ++cl->seq);
        for (;;) {
                redisReply *r = command(cl, "SET %s %s NX PX %d", name,
                                        cl->token, cl->cfg->ttl_ms);
                int ok, err;

                if (r == NULL)
                        return -1; /* I/O error: on_error reopens */
                ok = r->type == REDIS_REPLY_STATUS && strcmp(r->str, "OK") == 0;
                err = r->type == REDIS_REPLY_ERROR;
                freeReplyObject(r);
                if (ok)
                        return 0;
                if (err)
                        return -1;
                /* nil: held by another client; poll (a blocking acquire) */
                if (lb_now() >= deadline)
                        return -1;
                lb_sleep_us(cl->cfg->retry_us);
        }
}

static int r_release(void *p, const char *name)
{
        struct tlsclient *cl = p;
        redisReply *r;
        int ok;

        r = command(cl, "EVALSHA %s 1 %s %s", cl->sha, name, cl->token);
        if (r != NULL && r->type == REDIS_REPLY_ERROR &&
            strncmp(r->str, "NOSCRIPT", 8) == 0) {
                freeReplyObject(r);
                r = command(cl, "EVAL %s 1 %s %s", release_lua, name,
                            cl->token);
        }
        if (r == NULL)
                return -1;
        ok = r->type == REDIS_REPLY_INTEGER && r->integer == 1;
        freeReplyObject(r);
        return ok ? 0 : -1;
}

static int r_on_error(void *p)
{
        struct tlsclient *cl = p;

        return cl->broken; /* reopen after I/O errors only */
}

int main(int argc, char **argv)
{
        static const lb_ops ops = {r_open,     r_acquire, r_release,
                                   r_on_error, r_close,   NULL};
        static lb_ops named;

        /* The driver label says which transport carried the run. */
        named = ops;
        named.driver = getenv("LB_TLS_CA") && *getenv("LB_TLS_CA")
                           ? "redis-c-hiredis-reader-openssl-setnx"
                           : "redis-c-hiredis-reader-tcp-setnx";
        return lb_main(argc, argv, "redis", &named);
}
