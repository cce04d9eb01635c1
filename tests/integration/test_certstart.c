/* batond's checks of its own certificate at start, on real one-node
 * batond processes on 127.0.0.1 (TLS on), printing TAP: a certificate
 * that does not name the host of the member line's client address, one
 * of another CA, an expired one: each refused with one line naming the
 * file and the problem, before the data directory is made; one that
 * expires within tls-expiry-warn-days: served, with a warning in the log
 * and baton_tls_cert_expiry_seconds in the metrics; the node's own
 * certificate (the negative control): served, without a warning.
 * Environment: BATOND (else ./batond, else beside this binary),
 * BATON_TEST_TMPDIR. Without TLS (BATON_TEST_TLS=off) it skips.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "../lib/tap.h"
#include "../lib/tclient.h"
#include "oneoff.h"
#include "prom.h"
#include "tlsfiles.h"

#define EXIT_MS  10000 /* a refused start ends within this */
#define SERVE_MS 20000 /* a node of its own leads within this */
#define DAY_S    86400

static struct tap tap;
static char batond[PATH_MAX];
static char work[200];

/* $BATOND, ./batond, or batond beside this binary's directory's parent's
 * parent (tests/integration/x -> batond), as the harness finds it. */
static void find_batond(const char *argv0)
{
        const char *env = getenv("BATOND");
        const char *slash = strrchr(argv0, '/');

        if (env != NULL && env[0] != '\0') {
                snprintf(batond, sizeof batond, "%s", env);
        } else if (access("./batond", X_OK) == 0) {
                snprintf(batond, sizeof batond, "./batond");
        } else if (slash != NULL) {
                snprintf(batond, sizeof batond, "%.*s/../../batond",
                         (int)(slash - argv0), argv0);
        } else {
                snprintf(batond, sizeof batond, "batond");
        }
}

/* One node of its own named `name` (its log NAME.log, its data directory
 * NAME.data) whose client address has the host `host`, with the
 * certificate DIR/CERT.crt and its key, and `metrics` when not NULL. */
static void node(struct oneoff *o, const char *name, const char *host,
                 const char *cert, char *data, size_t cap, int *metrics)
{
        char log[PATH_MAX], member[160], crt[64], key[64], addr[32];
        char crt_path[PATH_MAX], key_path[PATH_MAX], ca_path[PATH_MAX];

        snprintf(log, sizeof log, "%s/%s.log", work, name);
        snprintf(data, cap, "%s/%s.data", work, name);
        snprintf(member, sizeof member, "1 127.0.0.1:%d %s:%d",
                 oneoff_free_port(), host, oneoff_free_port());
        snprintf(crt, sizeof crt, "%s.crt", cert);
        snprintf(key, sizeof key, "%s.key", cert);
        snprintf(crt_path, sizeof crt_path, "%s", tlsfiles_path(crt));
        snprintf(key_path, sizeof key_path, "%s", tlsfiles_path(key));
        snprintf(ca_path, sizeof ca_path, "%s", tlsfiles_path("ca.crt"));
        oneoff_init(o, batond, log);
        oneoff_args(o, "--id", "1", "--data-dir", data, "--member", member,
                    "--tls", "on", "--tls-ca", ca_path, "--tls-cert", crt_path,
                    "--tls-key", key_path, NULL);
        if (metrics != NULL) {
                *metrics = oneoff_free_port();
                snprintf(addr, sizeof addr, "127.0.0.1:%d", *metrics);
                oneoff_args(o, "--metrics-address", addr, NULL);
        }
}

/* A start that must be refused: `o` exits 1 within EXIT_MS, its log's
 * error line has the certificate's path and `problem`, and `data` was
 * not made. */
static void refused(struct oneoff *o, const char *what, const char *cert,
                    const char *problem, const char *data)
{
        char said[2048], listing[1024], crt[64], path[PATH_MAX];
        bool exited, has;

        snprintf(crt, sizeof crt, "%s.crt", cert);
        snprintf(path, sizeof path, "%s", tlsfiles_path(crt));
        if (oneoff_start(o) != 0) {
                tap_ok(&tap, false, "%s: cannot start batond: %s", what,
                       strerror(errno));
                return;
        }
        exited = oneoff_wait(o, EXIT_MS);
        if (!exited) {
                oneoff_stop(o);
        }
        oneoff_log_line(o, " error ", said, sizeof said);
        tap_diag("%s: %s", what, said);
        tap_ok(&tap, exited && o->status == 1,
               "%s: batond exits 1 at start (%s %d)", what,
               exited ? "exit" : "still running, stopped:", o->status);
        has = strstr(said, path) != NULL && strstr(said, problem) != NULL &&
              strstr(said, "cannot start node 1") != NULL;
        tap_ok(&tap, has, "%s: one error line naming %s and '%s'", what, crt,
               problem);
        oneoff_listing(data, listing, sizeof listing);
        tap_ok(&tap, strcmp(listing, "(missing)") == 0,
               "%s: the data directory was not made (%s)", what, listing);
}

/* GET /metrics on 127.0.0.1:`port` over plain HTTP into `buf`. */
static bool get_metrics(int port, char *buf, size_t cap)
{
        static const char req[] = "GET /metrics HTTP/1.0\r\n\r\n";
        struct sockaddr_in a;
        size_t len = 0;
        ssize_t n;
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

        memset(&a, 0, sizeof a);
        a.sin_family = AF_INET;
        a.sin_port = htons((uint16_t)port);
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0 ||
            write(fd, req, sizeof req - 1) != (ssize_t)(sizeof req - 1)) {
                if (fd >= 0) {
                        close(fd);
                }
                return false;
        }
        while (len + 1 < cap && (n = read(fd, buf + len, cap - 1 - len)) > 0) {
                len += (size_t)n;
        }
        buf[len] = '\0';
        close(fd);
        return len > 0;
}

/* Until `o`'s log has `text`, for up to `ms`. */
static bool log_says(const struct oneoff *o, const char *text, int ms)
{
        int64_t end = tclient_now_ms() + ms;

        while (!oneoff_log_has(o, text)) {
                if (tclient_now_ms() > end) {
                        return false;
                }
                usleep(20000);
        }
        return true;
}

/* A start that must be served: it leads; the log has the warning (when
 * `warned`) or not; the gauge says between `days` and `days` + 1 left. */
static void served(struct oneoff *o, const char *what, bool warned, int days,
                   int metrics)
{
        static char text[1 << 18];
        char said[1024];
        double v = -1;
        bool up;

        if (oneoff_start(o) != 0) {
                tap_ok(&tap, false, "%s: cannot start batond: %s", what,
                       strerror(errno));
                return;
        }
        up = log_says(o, "serving as leader", SERVE_MS);
        oneoff_log_line(o, up ? "tls-cert" : "", said, sizeof said);
        tap_diag("%s: %s", what, said);
        tap_ok(&tap, up, "%s: serves", what);
        tap_ok(&tap,
               oneoff_log_has(o, "tls-expiry-warn-days = 30") == warned &&
                   (!warned || oneoff_log_has(o, " warn ")),
               "%s: %s", what,
               warned ? "a warning says it expires within "
                        "tls-expiry-warn-days"
                      : "no warning");
        if (warned) {
                char want[64], or [64];

                /* Whole days left, rounded down: 9 once a second has
                 * passed since the certificate was made for 10. */
                snprintf(want, sizeof want, "expires in %d days", days);
                snprintf(or, sizeof or, "expires in %d days", days + 1);
                tap_ok(&tap, oneoff_log_has(o, want) || oneoff_log_has(o, or),
                       "%s: the warning says '%s' (or %d)", what, want,
                       days + 1);
        }
        up = up && get_metrics(metrics, text, sizeof text) &&
             prom_value(text, "baton_tls_cert_expiry_seconds", &v);
        tap_ok(&tap, up && v > days * DAY_S && v <= (days + 1) * DAY_S,
               "%s: baton_tls_cert_expiry_seconds %.0f, %d to %d days", what, v,
               days, days + 1);
        oneoff_stop(o);
}

int main(int argc, char **argv)
{
        const char *tmp = getenv("BATON_TEST_TMPDIR");
        char err[512], data[PATH_MAX];
        struct oneoff o;
        int metrics = 0;

        (void)argc;
        find_batond(argv[0]);
        snprintf(work, sizeof work, "%s/baton-certstart-XXXXXX",
                 tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp");
        if (mkdtemp(work) == NULL) {
                printf("Bail out! cannot make %s: %s\n", work, strerror(errno));
                return 1;
        }
        if (tlsfiles_prepare(err, sizeof err) != 0) {
                printf("Bail out! %s\n", err);
                return 1;
        }
        if (!tlsfiles_on()) {
                printf("1..0 # SKIP TLS is off (BATON_TEST_TLS)\n");
                return 0;
        }
        if (tlsfiles_issue_only("cs-elsewhere", "node-1",
                                "DNS:node-1,DNS:elsewhere.example,"
                                "IP:10.0.0.1") != 0 ||
            tlsfiles_issue_only("cs-ip-only", "node-1", "IP:127.0.0.1") != 0 ||
            tlsfiles_issue("cs-foreign", "node-1", -1, 400, 1) != 0 ||
            tlsfiles_issue("cs-expired", "node-1", -30, -1, 0) != 0 ||
            tlsfiles_issue("cs-soon", "node-1", -1, 10, 0) != 0 ||
            tlsfiles_issue("cs-good", "node-1", -1, 400, 0) != 0) {
                printf("Bail out! cannot make the certificates\n");
                return 1;
        }
        tap_diag("batond %s, files in %s", batond, work);

        node(&o, "elsewhere", "127.0.0.1", "cs-elsewhere", data, sizeof data,
             NULL);
        refused(&o, "a certificate without the client address's IP",
                "cs-elsewhere", "does not name 127.0.0.1", data);
        node(&o, "by-name", "localhost", "cs-ip-only", data, sizeof data, NULL);
        refused(&o, "a client address by name, a certificate with its IP only",
                "cs-ip-only", "does not name localhost", data);
        node(&o, "foreign", "127.0.0.1", "cs-foreign", data, sizeof data, NULL);
        refused(&o, "a certificate of another CA", "cs-foreign",
                "does not chain to tls-ca", data);
        node(&o, "expired", "127.0.0.1", "cs-expired", data, sizeof data, NULL);
        refused(&o, "an expired certificate", "cs-expired", "expired on", data);

        node(&o, "soon", "127.0.0.1", "cs-soon", data, sizeof data, &metrics);
        served(&o, "a certificate that expires in 10 days", true, 9, metrics);
        node(&o, "good", "127.0.0.1", "cs-good", data, sizeof data, &metrics);
        served(&o, "a certificate good for 400 days", false, 399, metrics);
        if (tap.failed == 0) {
                snprintf(err, sizeof err, "rm -rf '%s'", work);
                if (system(err) != 0) {
                        tap_diag("could not remove %s", work);
                }
        }
        return tap_plan(&tap);
}
