/* The metrics port as docs/security.md ("The metrics port") says, against
 * a real one-node batond with TLS, printing TAP: over plain HTTP /health
 * and /ready give liveness only (off loopback, or with metrics-tls) and
 * /metrics a 403; over TLS /metrics needs a client certificate of role
 * read or admin, while /ready answers anyone in full; a first byte that is
 * neither HTTP nor TLS is closed at once and harms nothing. A loopback
 * port without metrics-tls (the node's own tools) answers as it always
 * did: the negative control.
 *
 * The scraper's TLS is OpenSSL's own, not Baton's TLS module, so that a
 * client without any certificate (as `curl https://...`) can be tried.
 * Environment as test_integration (BATOND, BATON_TEST_BASE_PORT,
 * BATON_TEST_TMPDIR, BATON_TEST_WATCHDOG); BATON_TEST_TLS=off skips the
 * cases that need TLS.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../lib/proc.h"
#include "../lib/tap.h"
#include "../lib/tclient.h"
#include "harness.h"
#include "lonenode.h"
#include "tlsfiles.h"

#define WATCHDOG_S 170
#define START_MS   20000 /* a one-node cluster elects itself */
#define GET_MS     5000  /* one request, connect to close */
#define REFUSE_MS  1000  /* a garbage connection is closed within */
#define BODY_MAX   (1 << 20)

/* The port of "HOST:PORT". */
static int port_of(const char *address)
{
        const char *colon = strrchr(address, ':');

        return colon != NULL ? atoi(colon + 1) : 0;
}

/* A TCP connection to 127.0.0.1:`port` whose reads and writes give up
 * after GET_MS, or -1. */
static int dial(int port)
{
        struct timeval tv = {GET_MS / 1000, 0};
        struct sockaddr_in sa;
        int fd = socket(AF_INET, SOCK_STREAM, 0);

        memset(&sa, 0, sizeof sa);
        sa.sin_family = AF_INET;
        sa.sin_port = htons((uint16_t)port);
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (fd < 0) {
                return -1;
        }
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
        if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
                close(fd);
                return -1;
        }
        return fd;
}

/* One answer: its status and body, or why there was none. */
struct answer {
        int status; /* 0: no HTTP answer */
        char body[8192];
        char why[256];
};

/* Split the reply `text` into `a`. */
static void parse(const char *text, struct answer *a)
{
        const char *body = strstr(text, "\r\n\r\n");

        if (strncmp(text, "HTTP/1.", 7) != 0 || body == NULL ||
            strlen(text) < 12) {
                snprintf(a->why, sizeof a->why, "no HTTP reply: '%.60s'", text);
                return;
        }
        a->status = atoi(text + 9);
        snprintf(a->body, sizeof a->body, "%.8000s", body + 4);
}

/* The client side of a TLS context: the tests' CA, and the certificate
 * `cert` ("reader": reader.crt and reader.key) or none. NULL on failure,
 * with the reason in `a`. */
static SSL_CTX *client_ctx(const char *cert, struct answer *a)
{
        SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
        char crt[200], key[200];

        if (ctx == NULL || SSL_CTX_load_verify_locations(
                               ctx, tlsfiles_path("ca.crt"), NULL) != 1) {
                snprintf(a->why, sizeof a->why, "cannot load the CA");
                SSL_CTX_free(ctx);
                return NULL;
        }
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
        if (cert == NULL) {
                return ctx;
        }
        snprintf(crt, sizeof crt, "%.150s/%.40s.crt", tlsfiles_dir(), cert);
        snprintf(key, sizeof key, "%.150s/%.40s.key", tlsfiles_dir(), cert);
        if (SSL_CTX_use_certificate_file(ctx, crt, SSL_FILETYPE_PEM) != 1 ||
            SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) != 1) {
                snprintf(a->why, sizeof a->why, "cannot load %s", crt);
                SSL_CTX_free(ctx);
                return NULL;
        }
        return ctx;
}

/* OpenSSL's last reason, or what it means when there is none. */
static const char *ssl_why(void)
{
        const char *r = ERR_reason_error_string(ERR_peek_last_error());

        return r != NULL ? r : "connection closed";
}

/* GET `path` over TLS from 127.0.0.1:`port`, with the client certificate
 * `cert` (NULL: none), into `a`. */
static void tls_get(int port, const char *path, const char *cert,
                    struct answer *a)
{
        static char text[BODY_MAX];
        SSL_CTX *ctx = client_ctx(cert, a);
        SSL *ssl = NULL;
        char req[128];
        size_t len = 0;
        int fd = -1, n;

        memset(a, 0, sizeof *a);
        if (ctx == NULL) {
                return;
        }
        n = snprintf(req, sizeof req, "GET %s HTTP/1.0\r\n\r\n", path);
        if ((fd = dial(port)) < 0 || (ssl = SSL_new(ctx)) == NULL ||
            SSL_set_fd(ssl, fd) != 1 || SSL_connect(ssl) != 1 ||
            SSL_write(ssl, req, n) != n) {
                snprintf(a->why, sizeof a->why, "TLS to port %d failed: %s",
                         port, ssl_why());
                goto out;
        }
        while (len < sizeof text - 1 &&
               (n = SSL_read(ssl, text + len, (int)(sizeof text - 1 - len))) >
                   0) {
                len += (size_t)n;
        }
        text[len] = '\0';
        if (len == 0) {
                snprintf(a->why, sizeof a->why, "TLS: no reply: %s", ssl_why());
                goto out;
        }
        parse(text, a);
out:
        ERR_clear_error();
        SSL_free(ssl);
        SSL_CTX_free(ctx);
        if (fd >= 0) {
                close(fd);
        }
}

/* GET `path` over plain HTTP from node 1 into `a`. */
static void plain_get(struct harness *h, const char *path, struct answer *a)
{
        static char body[BODY_MAX];
        long n;

        memset(a, 0, sizeof *a);
        n = harness_http_get(h, 1, path, &a->status, body, sizeof body, GET_MS);
        if (n < 0) {
                a->status = 0;
                snprintf(a->why, sizeof a->why, "%.200s", h->errmsg);
                return;
        }
        snprintf(a->body, sizeof a->body, "%.8000s", body);
}

/* Whether a body of /health or /ready carries liveness only: the status,
 * the reason and the node, and none of the cluster's data. */
static bool liveness_only(const struct answer *a, const char *status)
{
        static const char *const cluster[] = {"term",   "leader", "index",
                                              "lag",    "role",   "message",
                                              "commit", "applied"};
        char want[64];

        snprintf(want, sizeof want, "{\"status\":\"%s\"", status);
        if (strncmp(a->body, want, strlen(want)) != 0 ||
            strstr(a->body, "\"reason\":\"ok\"") == NULL ||
            strstr(a->body, "\"node\":1}") == NULL) {
                return false;
        }
        for (unsigned i = 0; i < sizeof cluster / sizeof cluster[0]; i++) {
                if (strstr(a->body, cluster[i]) != NULL) {
                        return false;
                }
        }
        return true;
}

/* Print what came back when a case failed. */
static void show(const char *what, const struct answer *a)
{
        tap_diag("%s: status %d%s%s, body: %.300s", what, a->status,
                 a->why[0] != '\0' ? ", " : "", a->why, a->body);
}

/* Restart node 1 with `flags` (n of them) and wait until it leads. */
static bool restart_with(struct harness *h, const char *const *flags,
                         unsigned n)
{
        unsigned leader;

        if (harness_term(h, 1, NULL) != 0 ||
            harness_wait_exit(h, 1, START_MS, NULL) != 0 ||
            harness_set_flags(h, 1, flags, n) != 0 ||
            harness_restart(h, 1) != 0 ||
            harness_wait_healthy(h, START_MS, &leader) != 0) {
                tap_diag("restart: %s", h->errmsg);
                return false;
        }
        return true;
}

/* A connection that opens with a byte of neither HTTP nor TLS is closed
 * within REFUSE_MS with nothing written back; whether it was. */
static bool garbage_refused(int port)
{
        static const char junk[] = "\x01\x02junk\r\n\r\n";
        int fd = dial(port);
        struct pollfd p = {fd, POLLIN, 0};
        char buf[64];
        ssize_t got = 1;

        if (fd < 0) {
                tap_diag("garbage: cannot connect to %d", port);
                return false;
        }
        if (send(fd, junk, sizeof junk - 1, MSG_NOSIGNAL) ==
                (ssize_t)(sizeof junk - 1) &&
            poll(&p, 1, REFUSE_MS) == 1) {
                got = recv(fd, buf, sizeof buf, 0);
        }
        close(fd);
        if (got != 0 && !(got < 0 && errno == ECONNRESET)) {
                tap_diag("garbage on port %d: %s", port,
                         got > 0 ? "an answer came" : "not closed in time");
                return false;
        }
        return true;
}

/* Off loopback without metrics-tls (0.0.0.0, reached at 127.0.0.1). */
static void plain_off_loopback(struct harness *h, struct tap *t, int port)
{
        struct answer a;

        plain_get(h, "/ready", &a);
        if (!tap_ok(t, a.status == 200 && liveness_only(&a, "ready"),
                    "off loopback: plain /ready is 200, liveness only")) {
                show("/ready", &a);
        }
        plain_get(h, "/health", &a);
        if (!tap_ok(t, a.status == 200 && liveness_only(&a, "ok"),
                    "off loopback: plain /health is 200, liveness only")) {
                show("/health", &a);
        }
        plain_get(h, "/metrics", &a);
        if (!tap_ok(t,
                    a.status == 403 && strstr(a.body, "TLS") != NULL &&
                        strstr(a.body, "baton_") == NULL,
                    "off loopback without metrics-tls: plain /metrics is "
                    "403 and says it needs TLS")) {
                show("/metrics", &a);
        }
        if (!tap_ok(t, garbage_refused(port),
                    "off loopback: a garbage first byte is closed at once")) {
                return;
        }
        plain_get(h, "/ready", &a);
        if (!tap_ok(t, a.status == 200 && harness_reap(h) == 0,
                    "off loopback: the port answers after the garbage")) {
                show("/ready after garbage", &a);
        }
}

/* With metrics-tls, off loopback. */
static void with_tls(struct harness *h, struct tap *t, int port)
{
        struct answer a;

        plain_get(h, "/ready", &a);
        if (!tap_ok(t, a.status == 200 && liveness_only(&a, "ready"),
                    "metrics-tls: plain /ready is 200, liveness only (the "
                    "documented curl loops finish)")) {
                show("/ready", &a);
        }
        plain_get(h, "/metrics", &a);
        if (!tap_ok(t, a.status == 403 && strstr(a.body, "baton_") == NULL,
                    "metrics-tls: plain /metrics is 403")) {
                show("/metrics", &a);
        }
        tls_get(port, "/metrics", NULL, &a);
        if (!tap_ok(t, a.status == 403 && strstr(a.body, "baton_") == NULL,
                    "metrics-tls: TLS /metrics without a client certificate "
                    "is 403")) {
                show("TLS /metrics, no certificate", &a);
        }
        tls_get(port, "/metrics", "locker", &a);
        if (!tap_ok(t,
                    a.status == 403 && strstr(a.body, "has role lock") != NULL,
                    "metrics-tls: TLS /metrics with a lock-role certificate "
                    "is 403")) {
                show("TLS /metrics, role lock", &a);
        }
        tls_get(port, "/metrics", "reader", &a);
        if (!tap_ok(t,
                    a.status == 200 &&
                        strstr(a.body, "baton_requests_total") != NULL,
                    "metrics-tls: TLS /metrics with a read-role certificate "
                    "is 200")) {
                show("TLS /metrics, role read", &a);
        }
        tls_get(port, "/ready", NULL, &a);
        if (!tap_ok(t,
                    a.status == 200 && strstr(a.body, "\"term\":") != NULL &&
                        strstr(a.body, "\"leader\":1") != NULL,
                    "metrics-tls: TLS /ready without a certificate answers "
                    "in full")) {
                show("TLS /ready", &a);
        }
        if (!tap_ok(t, garbage_refused(port),
                    "metrics-tls: a garbage first byte is closed at once")) {
                return;
        }
        tls_get(port, "/metrics", "admin", &a);
        if (!tap_ok(t, a.status == 200 && harness_reap(h) == 0,
                    "metrics-tls: TLS /metrics (admin) after the garbage")) {
                show("TLS /metrics, role admin", &a);
        }
}

/* batonctl acl add IDENTITY ROLE as the admin: 0 when it says so. */
static int acl_add(struct harness *h, const char *identity, const char *role)
{
        const char *env = getenv("BATONCTL");
        char cert[PATH_MAX], key[PATH_MAX];
        const char *head[] = {"--endpoints", h->endpoints, "--cert", cert,
                              "--key",       key,          NULL};
        const char *args[] = {"acl", "add", identity, role, NULL};
        struct proc r;
        int64_t end = tclient_now_ms() + START_MS;

        snprintf(cert, sizeof cert, "%s", tlsfiles_path("admin.crt"));
        snprintf(key, sizeof key, "%s", tlsfiles_path("admin.key"));
        /* A leader seeds the list a second or so after it is elected. */
        do {
                proc_run(&r, env != NULL ? env : "./batonctl", 0, START_MS,
                         head, args);
        } while (r.status != 0 && strstr(r.err, "being seeded") != NULL &&
                 tclient_now_ms() < end && (tclient_sleep_ms(100), true));
        if (r.status != 0) {
                proc_show(&r);
        }
        return r.status == 0 ? 0 : -1;
}

/* The role /metrics asks for is the cluster's access list's, as on the
 * client port: `acl add` gives the lock-role certificate read, and takes
 * it back, without a restart or a reload. */
static void acl_decides(struct harness *h, struct tap *t, int port)
{
        struct answer a;

        if (!tap_ok(t, acl_add(h, "app-locker", "read") == 0,
                    "batonctl acl add app-locker read")) {
                return;
        }
        tls_get(port, "/metrics", "locker", &a);
        if (!tap_ok(t, a.status == 200,
                    "access list: TLS /metrics with the certificate the "
                    "list now gives read is 200")) {
                show("TLS /metrics, role read by the list", &a);
        }
        if (!tap_ok(t, acl_add(h, "app-locker", "lock") == 0,
                    "batonctl acl add app-locker lock")) {
                return;
        }
        tls_get(port, "/metrics", "locker", &a);
        if (!tap_ok(t, a.status == 403,
                    "access list: and 403 again once it gives lock")) {
                show("TLS /metrics, role lock by the list", &a);
        }
}

/* curl's exit status on `url`, as the docs run it (-1: no curl here). */
static int curl_exit(const char *url)
{
        char cmd[256];
        int rv;

        if (system("command -v curl >/dev/null 2>&1") != 0) {
                return -1;
        }
        snprintf(cmd, sizeof cmd, "curl -fsS -m 5 %s >/dev/null 2>&1", url);
        rv = system(cmd);
        return WIFEXITED(rv) ? WEXITSTATUS(rv) : 128;
}

/* Whether node 1's log has `needle`, polled for up to START_MS. */
static bool await_log(struct harness *h, const char *needle)
{
        int64_t until = tclient_now_ms() + START_MS;
        char line[1024];
        bool found = false;

        while (!found && tclient_now_ms() < until) {
                FILE *f = fopen(h->nodes[0].log_path, "r");
                while (f != NULL && !found &&
                       fgets(line, sizeof line, f) != NULL) {
                        found = strstr(line, needle) != NULL;
                }
                if (f != NULL) {
                        fclose(f);
                }
                if (!found) {
                        tclient_sleep_ms(50);
                }
        }
        return found;
}

/* With metrics-tls: a certificate of another CA is refused however its
 * identity reads, and curl gets the status codes the docs rely on; after
 * SIGHUP (new credentials) the same holds and no certificate is still
 * needed for /ready. */
static void tls_checks(struct harness *h, struct tap *t, int port)
{
        char url[96];
        struct answer a;
        int rv;

        tls_get(port, "/metrics", "stranger", &a);
        if (!tap_ok(t, a.status == 0,
                    "metrics-tls: a certificate of another CA (identity "
                    "'reader') is refused at the handshake")) {
                show("TLS /metrics, another CA", &a);
        }
        snprintf(url, sizeof url, "http://127.0.0.1:%d/ready", port);
        rv = curl_exit(url);
        if (rv >= 0) {
                tap_ok(t, rv == 0, "metrics-tls: curl -fsS %s exits 0", url);
                snprintf(url, sizeof url, "http://127.0.0.1:%d/metrics", port);
                rv = curl_exit(url);
                tap_ok(t, rv == 22,
                       "metrics-tls: curl -fsS %s exits 22 (got %d)", url, rv);
        }
        if (kill(h->nodes[0].pid, SIGHUP) != 0 ||
            !await_log(h, "certificates reloaded")) {
                tap_ok(t, false, "SIGHUP: the node did not reload");
                return;
        }
        tls_get(port, "/ready", NULL, &a);
        if (!tap_ok(t, a.status == 200 && strstr(a.body, "\"term\":") != NULL,
                    "after SIGHUP: TLS /ready without a certificate "
                    "answers in full")) {
                show("TLS /ready after SIGHUP", &a);
        }
        tls_get(port, "/metrics", "locker", &a);
        if (!tap_ok(t, a.status == 403,
                    "after SIGHUP: TLS /metrics, role lock, is 403")) {
                show("TLS /metrics, role lock, after SIGHUP", &a);
        }
        tls_get(port, "/metrics", "stranger", &a);
        if (!tap_ok(t, a.status == 0,
                    "after SIGHUP: a certificate of another CA is refused")) {
                show("TLS /metrics, another CA, after SIGHUP", &a);
        }
}

/* Loopback without metrics-tls: everything, as it always was. */
static void loopback_plain(struct harness *h, struct tap *t)
{
        struct answer a;

        plain_get(h, "/ready", &a);
        if (!tap_ok(t,
                    a.status == 200 && strstr(a.body, "\"term\":") != NULL &&
                        strstr(a.body, "\"applied_index\":") != NULL,
                    "loopback, no metrics-tls: plain /ready in full")) {
                show("/ready", &a);
        }
        plain_get(h, "/metrics", &a);
        if (!tap_ok(t,
                    a.status == 200 &&
                        strstr(a.body, "baton_requests_total") != NULL,
                    "loopback, no metrics-tls: plain /metrics is 200")) {
                show("/metrics", &a);
        }
}

int main(int argc, char **argv)
{
        const char *wd = getenv("BATON_TEST_WATCHDOG");
        char any[HARNESS_FLAG_MAX], err[512];
        const char *any_flags[] = {"--metrics-address", any, "--metrics-tls",
                                   "true"};
        struct harness h;
        struct tap t = {0, 0};
        int port;

        (void)argc;
        setvbuf(stdout, NULL, _IOLBF, 0);
        harness_setup_process(wd != NULL ? (unsigned)atoi(wd) : WATCHDOG_S);
        if (tlsfiles_prepare(err, sizeof err) != 0 ||
            (tlsfiles_on() &&
             (tlsfiles_issue("reader", "reader", -1, 30, 0) != 0 ||
              tlsfiles_issue("locker", "app-locker", -1, 30, 0) != 0 ||
              tlsfiles_issue("stranger", "reader", -1, 30, 1) != 0))) {
                tap_ok(&t, false, "certificates: %s", err);
                return tap_plan(&t);
        }
        memset(&h, 0, sizeof h);
        if (lonenode_start(&h, NULL, 0, argv[0], START_MS) != 0 ||
            harness_wait_healthy(&h, START_MS, NULL) != 0) {
                tap_ok(&t, false, "a one-node cluster: %s", h.errmsg);
                harness_close(&h);
                return tap_plan(&t);
        }
        port = port_of(harness_metrics_address(&h, 1));
        loopback_plain(&h, &t);
        snprintf(any, sizeof any, "0.0.0.0:%d", port);
        if (restart_with(&h, any_flags, 2)) {
                plain_off_loopback(&h, &t, port);
        }
        if (tlsfiles_on() && restart_with(&h, any_flags, 4)) {
                with_tls(&h, &t, port);
                tls_checks(&h, &t, port);
                acl_decides(&h, &t, port);
        }
        harness_close(&h);
        return tap_plan(&t);
}
