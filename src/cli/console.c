/* batonctl console: the page's HTTP server (libmicrohttpd, a thread per
 * connection: each request may wait on the cluster, and an event stream
 * waits for good). */
#include "console.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <microhttpd.h>

#include "consoleapi.h"
#include "consolestream.h"

#define COOKIE "baton_console"

/* The files the page is made of; nothing else is served from the
 * directory. */
static const struct page_file {
        const char *path;
        const char *file;
        const char *type;
} page_files[] = {
    {"/", "index.html", "text/html; charset=utf-8"},
    {"/index.html", "index.html", "text/html; charset=utf-8"},
    {"/console.js", "console.js", "text/javascript; charset=utf-8"},
    {"/console.css", "console.css", "text/css; charset=utf-8"},
    {"/favicon.svg", "favicon.svg", "image/svg+xml"},
};

struct console {
        baton_client *c;
        const struct console_settings *set;
        char token[33];    /* this run's, in hex */
        char hosts[2][80]; /* the Host headers a request may carry */
        volatile sig_atomic_t stopping;
};

/* Whether `a` and `b` are equal, in time independent of where they
 * differ (the token). */
static int same_secret(const char *a, const char *b)
{
        size_t n = strlen(b), i;
        unsigned char d = 0;

        if (a == NULL || strlen(a) != n) {
                return 0;
        }
        for (i = 0; i < n; i++) {
                d |= (unsigned char)(a[i] ^ b[i]);
        }
        return d == 0;
}

static void secure_headers(struct MHD_Response *r)
{
        MHD_add_response_header(r, "Cache-Control", "no-store");
        MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
        MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
        MHD_add_response_header(r, "Content-Security-Policy",
                                "default-src 'self'; frame-ancestors 'none'");
}

static enum MHD_Result queue(struct MHD_Connection *conn, unsigned status,
                             struct MHD_Response *r)
{
        enum MHD_Result ok;

        if (r == NULL) {
                return MHD_NO;
        }
        secure_headers(r);
        ok = MHD_queue_response(conn, status, r);
        MHD_destroy_response(r);
        return ok;
}

static enum MHD_Result text(struct MHD_Connection *conn, unsigned status,
                            const char *body)
{
        struct MHD_Response *r = MHD_create_response_from_buffer(
            strlen(body), (void *)body, MHD_RESPMEM_MUST_COPY);

        if (r != NULL) {
                MHD_add_response_header(r, "Content-Type",
                                        "text/plain; charset=utf-8");
        }
        return queue(conn, status, r);
}

/* Answers a JSON value (taking it) with `status`. */
static enum MHD_Result json(struct MHD_Connection *conn, int status, json_t *v)
{
        char *body = v != NULL ? json_dumps(v, JSON_COMPACT) : NULL;
        struct MHD_Response *r;

        json_decref(v);
        if (body == NULL) {
                return text(conn, 500, "console: out of memory\n");
        }
        r = MHD_create_response_from_buffer(strlen(body), body,
                                            MHD_RESPMEM_MUST_FREE);
        if (r == NULL) {
                free(body);
                return MHD_NO;
        }
        MHD_add_response_header(r, "Content-Type", "application/json");
        return queue(conn, (unsigned)status, r);
}

static enum MHD_Result file(struct console *k, struct MHD_Connection *conn,
                            const struct page_file *f)
{
        char path[PATH_MAX];
        struct MHD_Response *r;
        struct stat st;
        int fd;

        snprintf(path, sizeof path, "%s/%s", k->set->files, f->file);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0 || fstat(fd, &st) != 0) {
                if (fd >= 0) {
                        close(fd);
                }
                return text(conn, 500, "console: a page file is missing\n");
        }
        r = MHD_create_response_from_fd((uint64_t)st.st_size, fd);
        if (r == NULL) {
                close(fd);
                return MHD_NO;
        }
        MHD_add_response_header(r, "Content-Type", f->type);
        return queue(conn, 200, r);
}

static const char *arg(struct MHD_Connection *conn, const char *name)
{
        return MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, name);
}

/* A decimal argument: 1 with `*v` set, or 0 when missing or not a
 * number. */
static int number_arg(struct MHD_Connection *conn, const char *name,
                      uint64_t *v)
{
        const char *s = arg(conn, name);
        char *end;

        if (s == NULL || *s < '0' || *s > '9') {
                return 0;
        }
        errno = 0;
        *v = strtoull(s, &end, 10);
        return errno == 0 && *end == '\0';
}

static enum MHD_Result bad_arg(struct MHD_Connection *conn, const char *what)
{
        int status;
        json_t *e = consoleapi_error(BATON_EINVAL, &status);

        json_object_set_new(e, "message", json_string(what));
        return json(conn, status, e);
}

/* POST /api/...: the admin actions. */
static enum MHD_Result action(struct console *k, struct MHD_Connection *conn,
                              const char *url)
{
        uint64_t a = 0, b = 0;
        int status = 200;
        json_t *v;

        if (strcmp(url, "/api/revoke") == 0) {
                if (arg(conn, "name") == NULL ||
                    !number_arg(conn, "session", &a) ||
                    !number_arg(conn, "token", &b)) {
                        return bad_arg(conn, "revoke needs name, session and "
                                             "token");
                }
                v = consoleapi_revoke(k->c, arg(conn, "name"), a, b, &status);
        } else if (strcmp(url, "/api/close") == 0) {
                if (!number_arg(conn, "session", &a)) {
                        return bad_arg(conn, "close needs session");
                }
                v = consoleapi_close_session(k->c, a, &status);
        } else if (strcmp(url, "/api/transfer") == 0) {
                if (!number_arg(conn, "to", &a)) {
                        return bad_arg(conn, "transfer needs to (0: any)");
                }
                v = consoleapi_transfer(k->c, a, &status);
        } else {
                return text(conn, 404, "console: no such action\n");
        }
        return json(conn, status, v);
}

/* GET /api/...: what the page shows. */
static enum MHD_Result view(struct console *k, struct MHD_Connection *conn,
                            const char *url)
{
        const char *prefix = arg(conn, "prefix");
        int status = 200;
        json_t *v;

        if (strcmp(url, "/api/whoami") == 0) {
                v = consoleapi_whoami(k->c, k->set->endpoints, &status);
        } else if (strcmp(url, "/api/sessions") == 0) {
                v = consoleapi_sessions(k->c, &status);
        } else if (strcmp(url, "/api/members") == 0) {
                v = consoleapi_members(k->c, &status);
        } else if (strcmp(url, "/api/locks") == 0) {
                v = consoleapi_locks(k->c, prefix != NULL ? prefix : "",
                                     &status);
        } else if (strcmp(url, "/api/events") == 0) {
                return queue(conn, 200,
                             consolestream_open(
                                 k->c,
                                 MHD_lookup_connection_value(
                                     conn, MHD_HEADER_KIND, "Last-Event-ID"),
                                 &k->stopping));
        } else {
                return text(conn, 404, "console: no such path\n");
        }
        return json(conn, status, v);
}

/* GET /?token=T: the address printed at start. The token becomes a
 * cookie, and the browser is sent to / without it (out of its history
 * and of any Referer). */
static enum MHD_Result sign_in(struct console *k, struct MHD_Connection *conn,
                               const char *token)
{
        char cookie[128];
        struct MHD_Response *r;

        if (!same_secret(token, k->token)) {
                return text(conn, 401,
                            "console: that is not this run's address; open "
                            "the one batonctl console printed\n");
        }
        r = MHD_create_response_from_buffer(0, (void *)"",
                                            MHD_RESPMEM_PERSISTENT);
        if (r == NULL) {
                return MHD_NO;
        }
        snprintf(cookie, sizeof cookie,
                 COOKIE "=%s; Path=/; HttpOnly; SameSite=Strict", k->token);
        MHD_add_response_header(r, "Set-Cookie", cookie);
        MHD_add_response_header(r, "Location", "/");
        return queue(conn, 303, r);
}

/* Whether the request may go on: for this console's Host, and carrying
 * this run's cookie (and, for a change, the header a form on another
 * site cannot send). Queues the refusal otherwise. */
static int allowed(struct console *k, struct MHD_Connection *conn,
                   const char *method, enum MHD_Result *refused)
{
        const char *host =
            MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Host");

        if (host == NULL || (strcmp(host, k->hosts[0]) != 0 &&
                             strcmp(host, k->hosts[1]) != 0)) {
                *refused = text(conn, 403, "console: unexpected Host\n");
                return 0;
        }
        if (!same_secret(
                MHD_lookup_connection_value(conn, MHD_COOKIE_KIND, COOKIE),
                k->token)) {
                *refused = text(conn, 401,
                                "console: open the address batonctl console "
                                "printed\n");
                return 0;
        }
        if (strcmp(method, "POST") == 0 &&
            MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
                                        "X-Baton-Console") == NULL) {
                *refused =
                    text(conn, 403, "console: missing X-Baton-Console\n");
                return 0;
        }
        return 1;
}

static enum MHD_Result route(struct console *k, struct MHD_Connection *conn,
                             const char *url, const char *method)
{
        const char *token = arg(conn, "token");
        enum MHD_Result refused;
        size_t i;

        if (strcmp(method, "GET") == 0 && strcmp(url, "/") == 0 &&
            token != NULL) {
                return sign_in(k, conn, token);
        }
        if (!allowed(k, conn, method, &refused)) {
                return refused;
        }
        if (strcmp(method, "POST") == 0) {
                return action(k, conn, url);
        }
        if (strcmp(method, "GET") != 0) {
                return text(conn, 405, "console: GET or POST only\n");
        }
        if (strncmp(url, "/api/", 5) == 0) {
                return view(k, conn, url);
        }
        for (i = 0; i < sizeof page_files / sizeof page_files[0]; i++) {
                if (strcmp(url, page_files[i].path) == 0) {
                        return file(k, conn, &page_files[i]);
                }
        }
        return text(conn, 404, "console: no such page\n");
}

/* libmicrohttpd's request callback: first called when the headers are
 * in, then with the body in pieces, then once more to answer. Bodies are
 * not used (actions take query arguments) and are dropped. */
static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn,
                                  const char *url, const char *method,
                                  const char *version, const char *upload,
                                  size_t *upload_size, void **state)
{
        static int started;

        (void)version;
        (void)upload;
        if (*state == NULL) {
                *state = &started;
                return MHD_YES;
        }
        if (*upload_size != 0) {
                *upload_size = 0;
                return MHD_YES;
        }
        return route(cls, conn, url, method);
}

/* The socket address of `listen`, which must be loopback; 0, or -1 with
 * the reason in `why`. */
static int loopback_address(const char *listen, struct sockaddr_storage *ss,
                            struct console *k, char *why, size_t cap)
{
        char host[64];
        const char *colon = strrchr(listen, ':');
        struct sockaddr_in *v4 = (struct sockaddr_in *)ss;
        struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)ss;
        unsigned long port;
        char *end;
        size_t n;

        memset(ss, 0, sizeof *ss);
        if (colon == NULL || (n = (size_t)(colon - listen)) == 0 ||
            n >= sizeof host) {
                snprintf(why, cap, "--listen %s: not HOST:PORT", listen);
                return -1;
        }
        memcpy(host, listen, n);
        host[n] = '\0';
        errno = 0;
        port = strtoul(colon + 1, &end, 10);
        if (colon[1] == '\0' || *end != '\0' || errno != 0 || port > 65535) {
                snprintf(why, cap, "--listen %s: bad port", listen);
                return -1;
        }
        if (strcmp(host, "localhost") == 0) {
                snprintf(host, sizeof host, "127.0.0.1");
        }
        if (inet_pton(AF_INET, host, &v4->sin_addr) == 1 &&
            (ntohl(v4->sin_addr.s_addr) >> 24) == 127) {
                v4->sin_family = AF_INET;
                v4->sin_port = htons((uint16_t)port);
                return 0;
        }
        if (strcmp(host, "[::1]") == 0) {
                v6->sin6_family = AF_INET6;
                v6->sin6_addr = in6addr_loopback;
                v6->sin6_port = htons((uint16_t)port);
                return 0;
        }
        snprintf(why, cap,
                 "--listen %s: not a loopback address; the console acts "
                 "with your certificate, so it listens on this machine only "
                 "(127.0.0.1, [::1] or localhost)",
                 listen);
        (void)k;
        return -1;
}

static void set_hosts(struct console *k, const struct sockaddr_storage *ss,
                      unsigned port)
{
        char ip[INET_ADDRSTRLEN] = "";

        if (ss->ss_family == AF_INET6) {
                snprintf(k->hosts[0], sizeof k->hosts[0], "[::1]:%u", port);
        } else {
                inet_ntop(AF_INET, &((const struct sockaddr_in *)ss)->sin_addr,
                          ip, sizeof ip);
                snprintf(k->hosts[0], sizeof k->hosts[0], "%s:%u", ip, port);
        }
        snprintf(k->hosts[1], sizeof k->hosts[1], "localhost:%u", port);
}

static int make_token(struct console *k)
{
        unsigned char raw[16];
        size_t i;

        if (getrandom(raw, sizeof raw, 0) != (ssize_t)sizeof raw) {
                return -1;
        }
        for (i = 0; i < sizeof raw; i++) {
                snprintf(k->token + 2 * i, 3, "%02x", raw[i]);
        }
        return 0;
}

static struct MHD_Daemon *start(struct console *k,
                                const struct sockaddr_storage *ss)
{
        unsigned flags = MHD_USE_THREAD_PER_CONNECTION |
                         MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG;

        if (ss->ss_family == AF_INET6) {
                flags |= MHD_USE_IPv6;
        }
        return MHD_start_daemon(
            flags, 0, NULL, NULL, on_request, k, MHD_OPTION_SOCK_ADDR, ss,
            MHD_OPTION_CONNECTION_LIMIT, (unsigned)32,
            MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)60, MHD_OPTION_END);
}

int console_run(baton_client *c, const struct console_settings *s)
{
        struct console k = {.c = c, .set = s};
        struct sockaddr_storage ss;
        const union MHD_DaemonInfo *info;
        struct MHD_Daemon *d;
        char why[256], index[PATH_MAX];
        sigset_t stop;
        int sig;

        if (loopback_address(s->listen, &ss, &k, why, sizeof why) != 0) {
                fprintf(stderr, "batonctl console: %s\n", why);
                return 2;
        }
        snprintf(index, sizeof index, "%s/index.html", s->files);
        if (access(index, R_OK) != 0) {
                fprintf(stderr,
                        "batonctl console: %s: %s (set BATON_CONSOLE_DIR to "
                        "the directory of the console's files)\n",
                        index, strerror(errno));
                return 2;
        }
        if (make_token(&k) != 0) {
                fprintf(stderr, "batonctl console: no random token: %s\n",
                        strerror(errno));
                return 2;
        }
        /* Blocked before the daemon's threads start, so that they inherit
         * the mask and the signals come to sigwait() below. */
        sigemptyset(&stop);
        sigaddset(&stop, SIGINT);
        sigaddset(&stop, SIGTERM);
        pthread_sigmask(SIG_BLOCK, &stop, NULL);
        signal(SIGPIPE, SIG_IGN);
        d = start(&k, &ss);
        if (d == NULL) {
                fprintf(stderr, "batonctl console: cannot listen on %s\n",
                        s->listen);
                return 2;
        }
        info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
        set_hosts(&k, &ss, info != NULL ? info->port : 0);
        printf("console: http://%s/?token=%s\n", k.hosts[0], k.token);
        printf("console: acting for the cluster at %s; Ctrl-C stops it\n",
               s->endpoints);
        fflush(stdout);
        sigwait(&stop, &sig);
        k.stopping = 1;
        MHD_stop_daemon(d);
        return 0;
}

const char *console_files(void)
{
        const char *env = getenv("BATON_CONSOLE_DIR");

        if (env != NULL && env[0] != '\0') {
                return env;
        }
        if (access(CONSOLE_DIR "/index.html", R_OK) == 0) {
                return CONSOLE_DIR;
        }
        return CONSOLE_SRCDIR;
}
