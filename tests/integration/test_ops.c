/* What an operator relies on, against real batond processes on 127.0.0.1
 * with TLS, printing TAP: GET /health and GET /ready on the metrics port,
 * log-format = json, the apply log reopened on SIGHUP (logrotate), and
 * batond under a service manager (a NOTIFY_SOCKET of its own, and systemd-run
 * where systemd runs; skipped otherwise, saying why). docs/operations.md
 * describes each.
 *
 * The scenarios that need a plain cluster share one of 3 nodes; the
 * service manager's start clusters of their own. Waits are bounded polls.
 * Environment as test_integration (BATOND, BATON_TEST_BASE_PORT,
 * BATON_TEST_TMPDIR, BATON_TEST_WATCHDOG).
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "../../include/baton.h"
#include "harness.h"
#include "prom.h"
#include "sc_backup.h"
#include "sc_diskfull.h"
#include "sc_notify.h"
#include "scenario.h"

#define WATCHDOG_S 170
#define BODY_MAX   4096

/* GET `path` of node `id`: the status, the body in `body`. */
static int get(struct ctx *x, unsigned id, const char *path, char *body)
{
        int status = 0;

        if (harness_http_get(&x->h, id, path, &status, body, BODY_MAX, OP_MS) <
            0) {
                return -1;
        }
        return status;
}

/* The number after `"key":` in a JSON body, or -1. */
static long long field(const char *body, const char *key)
{
        char want[64];
        const char *p;

        snprintf(want, sizeof want, "\"%s\":", key);
        p = strstr(body, want);
        return p == NULL ? -1 : strtoll(p + strlen(want), NULL, 10);
}

static bool has(const char *body, const char *text)
{
        return strstr(body, text) != NULL;
}

/* Poll GET `path` of node `id` until it answers `status` with `text` in
 * its body, for up to `ms`. */
static bool await_answer(struct ctx *x, unsigned id, const char *path,
                         int status, const char *text, int ms, char *body)
{
        int64_t end = tclient_now_ms() + ms;

        do {
                if (get(x, id, path, body) == status && has(body, text)) {
                        return true;
                }
                poll_pause();
        } while (tclient_now_ms() < end);
        return false;
}

/* Every node of a healthy cluster: healthy, ready, following one leader;
 * any other path is still the metrics. */
static void sc_health_ready(struct ctx *x)
{
        static char metrics[METRICS_MAX];
        char body[BODY_MAX], name[64];
        int status = 0;
        unsigned leader, id, samples = 0;
        uint64_t token;
        struct tclient c;
        int i;

        EXPECT(x, harness_wait_healthy(&x->h, HEALTHY_MS, &leader) == 0, "%s",
               x->h.errmsg);
        OPEN(x, &c, TTL_MS);
        for (i = 0; i < 20; i++) {
                lock_name(x, name, sizeof name, "ready");
                GRANT(x, token, &c, name);
                RELEASE(x, &c, name, token);
        }
        tclient_close(&c);
        EXPECT(x, harness_wait_healthy(&x->h, HEALTHY_MS, &leader) == 0, "%s",
               x->h.errmsg);
        for (id = 1; id <= x->h.n; id++) {
                EXPECT(x, get(x, id, "/health", body) == 200,
                       "GET /health of node %u: %s %s", id, x->h.errmsg, body);
                EXPECT(x,
                       has(body, "\"status\":\"ok\"") &&
                           field(body, "node") == (long long)id &&
                           has(body, id == leader ? "\"role\":\"leader\""
                                                  : "\"role\":\"follower\"") &&
                           field(body, "term") > 0,
                       "GET /health of node %u (leader %u): %s", id, leader,
                       body);
                EXPECT(x, get(x, id, "/ready?verbose=1", body) == 200,
                       "GET /ready of node %u: %s %s", id, x->h.errmsg, body);
                EXPECT(x,
                       has(body, "\"status\":\"ready\",\"reason\":\"ok\"") &&
                           field(body, "leader") == (long long)leader &&
                           field(body, "applied_index") > 20 &&
                           field(body, "leader_commit_index") >=
                               field(body, "commit_index") &&
                           field(body, "lag") <= field(body, "max_lag") &&
                           field(body, "max_lag") == 1000,
                       "GET /ready of node %u (leader %u): %s", id, leader,
                       body);
        }
        EXPECT(x,
               harness_http_get(&x->h, 1, "/no/such/path", &status, metrics,
                                METRICS_MAX, OP_MS) > 0 &&
                   status == 200,
               "GET of an unknown path: %d %s", status, x->h.errmsg);
        EXPECT(x, prom_valid(metrics, &samples, name, sizeof name),
               "an unknown path no longer gets the metrics: %s (%.60s)", name,
               metrics);
}

/* Cut from the majority, a node is healthy but not ready (no leader);
 * back with it, ready again. */
static void sc_ready_no_leader(struct ctx *x)
{
        char body[BODY_MAX];
        unsigned leader, id, a, b;

        EXPECT(x, harness_wait_healthy(&x->h, HEALTHY_MS, &leader) == 0, "%s",
               x->h.errmsg);
        id = leader % x->h.n + 1; /* a follower */
        a = id % x->h.n + 1;
        b = a % x->h.n + 1;
        EXPECT(x, harness_pause(&x->h, a) == 0 && harness_pause(&x->h, b) == 0,
               "%s", x->h.errmsg);
        if (!await_answer(x, id, "/ready", 503, "\"reason\":\"no-leader\"",
                          10000, body)) {
                harness_resume(&x->h, a);
                harness_resume(&x->h, b);
                fail_at(x, __LINE__,
                        "node %u without a majority: GET /ready gave %s", id,
                        body);
                return;
        }
        EXPECT(x,
               has(body, "\"status\":\"not-ready\"") &&
                   has(body, "\"message\":\"this node knows no leader"),
               "503 body: %s", body);
        EXPECT(x,
               get(x, id, "/health", body) == 200 &&
                   has(body, "\"status\":\"ok\""),
               "node %u without a leader: GET /health gave %s", id, body);
        EXPECT(x,
               harness_resume(&x->h, a) == 0 && harness_resume(&x->h, b) == 0,
               "%s", x->h.errmsg);
        EXPECT(x,
               await_answer(x, id, "/ready", 200, "\"status\":\"ready\"",
                            HEALTHY_MS, body),
               "node %u with its majority back: GET /ready gave %s", id, body);
}

/* The ENTRY indexes of an apply log, in file order; -1 on error. */
static long entries(const char *path, uint64_t *out, long cap)
{
        FILE *f = fopen(path, "r");
        char line[8192];
        long n = 0;

        if (f == NULL) {
                return -1;
        }
        while (fgets(line, sizeof line, f) != NULL && n < cap) {
                if (strstr(line, "\"event\":\"ENTRY\"") != NULL) {
                        out[n++] = (uint64_t)field(line, "index");
                }
        }
        fclose(f);
        return n;
}

static bool contains(const uint64_t *a, long n, uint64_t v)
{
        long i;

        for (i = 0; i < n; i++) {
                if (a[i] == v) {
                        return true;
                }
        }
        return false;
}

/* Some writes through the cluster; the last token in `*last`. */
static bool writes(struct ctx *x, int n, uint64_t *last, int line)
{
        struct tclient c;
        char name[64];
        int i;

        if (!client_open(x, &c, TTL_MS, line)) {
                return false;
        }
        for (i = 0; i < n; i++) {
                lock_name(x, name, sizeof name, "rotate");
                *last = granted(x, &c, name, 1000, line);
                if (*last == 0 || !released(x, &c, name, *last, line)) {
                        tclient_close(&c);
                        return false;
                }
        }
        tclient_close(&c);
        return true;
}

/* Whether node `id`'s log has a line with `text` since byte `from`. */
static bool log_says(struct ctx *x, unsigned id, long from, const char *text,
                     int ms)
{
        int64_t end = tclient_now_ms() + ms;
        char line[4096];
        FILE *f;

        do {
                f = fopen(x->h.nodes[id - 1].log_path, "r");
                if (f != NULL && fseek(f, from, SEEK_SET) == 0) {
                        while (fgets(line, sizeof line, f) != NULL) {
                                if (strstr(line, text) != NULL) {
                                        fclose(f);
                                        return true;
                                }
                        }
                }
                if (f != NULL) {
                        fclose(f);
                }
                poll_pause();
        } while (tclient_now_ms() < end);
        return false;
}

static long log_size(struct ctx *x, unsigned id)
{
        struct stat st;

        return stat(x->h.nodes[id - 1].log_path, &st) == 0 ? (long)st.st_size
                                                           : 0;
}

#define MAX_ENTRIES 100000

/* The node's apply log, renamed away and the node sent SIGHUP: what it
 * applies next lands in a fresh file at its path, and the two files hold
 * every entry that another node's log holds, each once. A path that
 * cannot be opened leaves the old file in use. */
static void rotate_and_check(struct ctx *x, unsigned id, unsigned other,
                             uint64_t *a, uint64_t *b)
{
        const char *path = x->h.nodes[id - 1].apply_log;
        char old[PATH_MAX + 8];
        uint64_t last = 0;
        long n_old, n_new, n_other, i, from;

        EXPECT(x, writes(x, 10, &last, __LINE__), "writes before rotation");
        snprintf(old, sizeof old, "%s.1", path);
        EXPECT(x, rename(path, old) == 0, "rename %s: %s", path,
               strerror(errno));
        from = log_size(x, id);
        EXPECT(x, kill(x->h.nodes[id - 1].pid, SIGHUP) == 0, "kill: %s",
               strerror(errno));
        EXPECT(x, log_says(x, id, from, "SIGHUP: apply log", 5000),
               "node %u did not log the apply log's reopening", id);
        EXPECT(x, writes(x, 10, &last, __LINE__), "writes after rotation");
        EXPECT(x, harness_wait_healthy(&x->h, HEALTHY_MS, NULL) == 0, "%s",
               x->h.errmsg);
        n_old = entries(old, a, MAX_ENTRIES);
        n_new = entries(path, a + (n_old > 0 ? n_old : 0),
                        MAX_ENTRIES - (n_old > 0 ? n_old : 0));
        EXPECT(x, n_old > 0 && n_new > 0,
               "apply logs after rotation: %ld entries in %s, %ld in %s", n_old,
               old, n_new, path);
        EXPECT(x, a[n_old + n_new - 1] >= last,
               "the new apply log ends at %" PRIu64 ", before token %" PRIu64,
               a[n_old + n_new - 1], last);
        for (i = 1; i < n_old + n_new; i++) {
                EXPECT(x, a[i] > a[i - 1],
                       "entry %" PRIu64 " after %" PRIu64 " across the two "
                       "files (line %ld)",
                       a[i], a[i - 1], i);
        }
        n_other = entries(x->h.nodes[other - 1].apply_log, b, MAX_ENTRIES);
        for (i = 0; i < n_other; i++) {
                EXPECT(x,
                       b[i] < a[0] || b[i] > a[n_old + n_new - 1] ||
                           contains(a, n_old + n_new, b[i]),
                       "entry %" PRIu64 " applied by node %u is in neither "
                       "of node %u's files",
                       b[i], other, id);
        }
}

/* A directory where the file should be: the reopen fails, is logged, and
 * lines keep going to the file open before. */
static void reopen_fails(struct ctx *x, unsigned id)
{
        const char *path = x->h.nodes[id - 1].apply_log;
        char moved[PATH_MAX + 8];
        uint64_t last = 0;
        struct stat st0, st1;
        long from;

        snprintf(moved, sizeof moved, "%s.2", path);
        EXPECT(x, rename(path, moved) == 0 && mkdir(path, 0700) == 0,
               "rename and mkdir %s: %s", path, strerror(errno));
        from = log_size(x, id);
        EXPECT(x, stat(moved, &st0) == 0, "stat: %s", strerror(errno));
        kill(x->h.nodes[id - 1].pid, SIGHUP);
        EXPECT(
            x,
            log_says(x, id, from, "SIGHUP: cannot reopen the apply log", 5000),
            "node %u did not say that the apply log cannot be reopened", id);
        EXPECT(x, writes(x, 3, &last, __LINE__), "writes");
        EXPECT(x, harness_wait_healthy(&x->h, HEALTHY_MS, NULL) == 0, "%s",
               x->h.errmsg);
        EXPECT(x, stat(moved, &st1) == 0 && st1.st_size > st0.st_size,
               "node %u stopped writing its apply log after a failed reopen",
               id);
        /* As it was, for the checks of the apply logs that follow. */
        EXPECT(x, rmdir(path) == 0 && rename(moved, path) == 0, "rmdir %s: %s",
               path, strerror(errno));
        from = log_size(x, id);
        kill(x->h.nodes[id - 1].pid, SIGHUP);
        EXPECT(x, log_says(x, id, from, "SIGHUP: apply log", 5000),
               "node %u did not reopen its restored apply log", id);
}

static void sc_apply_log_rotation(struct ctx *x)
{
        uint64_t *a = calloc(2 * MAX_ENTRIES, sizeof *a);
        unsigned leader, id;

        EXPECT(x, a != NULL, "out of memory");
        if (harness_wait_healthy(&x->h, HEALTHY_MS, &leader) != 0) {
                fail_at(x, __LINE__, "%s", x->h.errmsg);
        } else {
                id = leader % x->h.n + 1;
                rotate_and_check(x, id, leader, a, a + MAX_ENTRIES);
                if (x->ok) {
                        reopen_fails(x, id);
                }
        }
        free(a);
}

/* Whether `line` is one of log-format = json's objects, from node `id`. */
static bool json_line(const char *line, unsigned id)
{
        static const char *const levels[] = {"error", "warn", "info", "debug"};
        char want[64];
        size_t n = strlen(line);
        unsigned i;
        bool level = false;

        /* {"time":"2024-05-01T12:00:00.123Z","level":... */
        if (strncmp(line, "{\"time\":\"", 9) != 0 || n < 36 ||
            line[13] != '-' || line[19] != 'T' || line[28] != '.' ||
            line[32] != 'Z' || strncmp(line + 33, "\",\"level\":\"", 11) != 0 ||
            line[n - 1] != '\n' || line[n - 2] != '}') {
                return false;
        }
        for (i = 0; i < 4; i++) {
                snprintf(want, sizeof want, "\"level\":\"%s\",\"node\":%u,",
                         levels[i], id);
                level = level || strstr(line, want) != NULL;
        }
        return level && strstr(line, ",\"message\":\"") != NULL &&
               memchr(line, '\n', n - 1) == NULL;
}

/* Node `id`'s lines since its last start, each checked; `*n` counts them.
 * The line that holds `text`, if any, goes to `found`. */
static bool json_log(struct ctx *x, unsigned id, const char *text, char *found,
                     size_t cap, unsigned *n)
{
        FILE *f = fopen(x->h.nodes[id - 1].log_path, "r");
        char line[8192];
        long start = 0;
        bool ok = true;

        *n = 0;
        found[0] = '\0';
        if (f == NULL) {
                return false;
        }
        while (fgets(line, sizeof line, f) != NULL) {
                if (strncmp(line, "=== harness: start", 18) == 0) {
                        start = ftell(f);
                }
        }
        fseek(f, start, SEEK_SET);
        while (fgets(line, sizeof line, f) != NULL) {
                (*n)++;
                if (!json_line(line, id)) {
                        snprintf(x->why, sizeof x->why,
                                 "node %u: not a JSON log line: %.300s", id,
                                 line);
                        ok = false;
                        break;
                }
                if (strstr(line, text) != NULL) {
                        snprintf(found, cap, "%s", line);
                }
        }
        fclose(f);
        return ok;
}

/* Plain text on the TLS client port of node `id`: refused, and logged
 * with the connection's id. */
static void plain_text_to(struct ctx *x, unsigned id)
{
        const char *addr = harness_client_address(&x->h, id);
        const char *colon = strrchr(addr, ':');
        struct sockaddr_in sa;
        char host[32], buf[256];
        int fd;

        memset(&sa, 0, sizeof sa);
        snprintf(host, sizeof host, "%.*s", (int)(colon - addr), addr);
        sa.sin_family = AF_INET;
        sa.sin_port = htons((uint16_t)atoi(colon + 1));
        fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0 || inet_pton(AF_INET, host, &sa.sin_addr) != 1 ||
            connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
                fail_at(x, __LINE__, "connect %s: %s", addr, strerror(errno));
        } else {
                struct timeval tv = {2, 0};
                setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
                send(fd, "hello\r\n\r\n", 9, MSG_NOSIGNAL);
                while (recv(fd, buf, sizeof buf, 0) > 0) {
                }
        }
        if (fd >= 0) {
                close(fd);
        }
}

/* Make node `id` the leader: transfers (retried: a node that has just
 * restarted may not be caught up yet, and an election may intervene)
 * until it leads, for up to HEALTHY_MS. */
static bool lead(struct ctx *x, unsigned id)
{
        int64_t end = tclient_now_ms() + HEALTHY_MS;
        unsigned leader = 0;
        struct tclient c;
        int rv = 0;

        if (tclient_init(&c, x->h.endpoints) != 0) {
                snprintf(x->why, sizeof x->why, "tclient_init failed");
                return false;
        }
        while (tclient_now_ms() < end) {
                if (harness_wait_leader(&x->h, HEALTHY_MS, &leader) == 0 &&
                    leader == id) {
                        tclient_close(&c);
                        return true;
                }
                rv = tclient_transfer(&c, id, OP_MS);
                poll_pause();
        }
        snprintf(x->why, sizeof x->why, "leader %u, last transfer: %d %s",
                 leader, rv, c.errmsg);
        tclient_close(&c);
        return false;
}

static void sc_json_logs(struct ctx *x)
{
        static const char *const flags[] = {"--log-format", "json",
                                            "--ready-max-lag", "7"};
        char body[BODY_MAX], found[8192], expired[64];
        unsigned leader, id, n = 0;
        struct tclient c;

        EXPECT(x, harness_wait_healthy(&x->h, HEALTHY_MS, &leader) == 0, "%s",
               x->h.errmsg);
        id = leader % x->h.n + 1;
        EXPECT(x,
               harness_set_flags(&x->h, id, flags, 4) == 0 &&
                   harness_term(&x->h, id, NULL) == 0 &&
                   harness_wait_exit(&x->h, id, HEALTHY_MS, NULL) == 0 &&
                   harness_restart(&x->h, id) == 0 &&
                   harness_wait_healthy(&x->h, HEALTHY_MS, &leader) == 0,
               "restart of node %u with --log-format json: %s", id,
               x->h.errmsg);
        EXPECT(x, get(x, id, "/ready", body) > 0 && field(body, "max_lag") == 7,
               "--ready-max-lag 7: GET /ready gave %s", body);
        /* The leader's lines about a session carry its id: make node `id`
         * the leader, and let a session expire there. */
        EXPECT(x, lead(x, id), "node %u did not become the leader: %s", id,
               x->why);
        OPEN(x, &c, SHORT_TTL);
        tclient_close(&c);
        snprintf(expired, sizeof expired, "session %" PRIu64 ": lease expired",
                 c.session);
        plain_text_to(x, id);
        EXPECT(x, x->ok, "%s", x->why);
        EXPECT(x, log_says(x, id, 0, expired, 10000), "node %u logged no '%s'",
               id, expired);
        EXPECT(x, json_log(x, id, expired, found, sizeof found, &n), "%s",
               x->why);
        EXPECT(x, n >= 3, "node %u wrote %u lines since its start", id, n);
        EXPECT(x, field(found, "session") == (long long)c.session,
               "the expiry's line lacks \"session\":%" PRIu64 ": %s", c.session,
               found);
        EXPECT(x,
               json_log(x, id, "plain text on the TLS port", found,
                        sizeof found, &n),
               "%s", x->why);
        EXPECT(x,
               has(found, "\"level\":\"warn\"") &&
                   field(found, "connection") > 0,
               "the refused connection's line: %s", found);
        harness_set_flags(&x->h, id, NULL, 0);
}

/* --- Running ------------------------------------------------------------- */

static void sc_systemd(struct ctx *x);
static void sc_full_disk(struct ctx *x);
static void sc_full_disk_restart(struct ctx *x);

static const struct scenario_entry scenarios[] = {
    {"GET /health and GET /ready: 200 with JSON on every node; other "
     "paths still serve metrics",
     sc_health_ready, false},
    {"GET /ready: 503 no-leader without a majority, /health still 200; "
     "ready again after",
     sc_ready_no_leader, false},
    {"SIGHUP: the apply log renamed away is reopened at its path, nothing "
     "lost; a path that cannot be opened keeps the old file",
     sc_apply_log_rotation, false},
    {"log-format = json: every line an object with time, level, node, "
     "message; session and connection ids",
     sc_json_logs, false},
    {"a NOTIFY_SOCKET of the test's own: READY=1 once serving, STATUS=, "
     "WATCHDOG=1 repeating, serving on while the manager does not read, "
     "STOPPING=1; no pings for another WATCHDOG_PID",
     sc_notify_socket, true},
    {"systemd-run: batond as a Type=notify unit with a watchdog", sc_systemd,
     true},
    {"metrics: baton_snapshot_index after a snapshot save is the backup's "
     "index",
     sc_backup_metric, false},
    {"backup and restore: snapshot of a live cluster, inspect, corrupt "
     "file refused, batond --restore on every node, tokens above the old",
     sc_backup_restore, true},
    {"backup of a state larger than one chunk: pulled chunk by chunk, "
     "inspected whole",
     sc_backup_chunks, false},
    {"recovery after losing a majority: batond --recover on a survivor that "
     "missed grants, members added back, tokens above the lost ones",
     sc_recover_majority, true},
    {"full disk: a follower on one says ENOSPC and its path once, GET /ready "
     "503 disk-full, free bytes and failed writes in its metrics; a majority "
     "on them: clients time out, the leader 503 cannot-commit; space freed: "
     "ready again, said once, every grant kept",
     sc_full_disk, true},
    {"full disk: both followers restarted onto full disks: GET /ready 503 "
     "disk-full, clients time out; space freed: the cluster commits again "
     "without a restart, said once, every grant kept",
     sc_full_disk_restart, true},
};

#define N_SCENARIOS (sizeof scenarios / sizeof scenarios[0])

static bool skipped_last;

static void sc_systemd(struct ctx *x)
{
        sc_systemd_run(x, &skipped_last);
}

static void sc_full_disk(struct ctx *x)
{
        sc_disk_full(x, &skipped_last);
}

static void sc_full_disk_restart(struct ctx *x)
{
        sc_disk_full_restart(x, &skipped_last);
}

static bool fresh(struct ctx *x)
{
        if (x->have_cluster) {
                harness_close(&x->h);
                x->have_cluster = false;
        }
        if (harness_start(&x->h, 3, NULL, x->run->argv0, x->run->base_port) !=
            0) {
                snprintf(x->why, sizeof x->why, "cannot start: %s",
                         x->h.errmsg);
                harness_close(&x->h);
                return false;
        }
        x->h.keep = x->run->keep;
        x->have_cluster = true;
        if (harness_wait_healthy(&x->h, HEALTHY_MS, NULL) != 0) {
                snprintf(x->why, sizeof x->why, "new cluster: %s", x->h.errmsg);
                return false;
        }
        printf("# 3-node cluster in %s\n", x->h.dir);
        return true;
}

static void run_one(struct ctx *x, const struct scenario_entry *s)
{
        int64_t t0 = tclient_now_ms();

        harness_rearm_watchdog();
        x->ok = true;
        x->why[0] = '\0';
        skipped_last = false;
        if (s->own_cluster) {
                if (x->have_cluster) {
                        harness_close(&x->h);
                        x->have_cluster = false;
                }
                s->fn(x);
        } else if ((x->have_cluster &&
                    harness_wait_healthy(&x->h, HEALTHY_MS, NULL) == 0) ||
                   fresh(x)) {
                s->fn(x);
                if (harness_reap(&x->h) > 0) {
                        fail_at(x, __LINE__, "a node exited on its own");
                }
        } else {
                x->ok = false;
        }
        x->run->tap++;
        if (skipped_last) {
                printf("ok %u - %s # SKIP %s\n", x->run->tap, s->name, x->why);
        } else if (x->ok) {
                printf("ok %u - %s (%" PRId64 " ms)\n", x->run->tap, s->name,
                       tclient_now_ms() - t0);
        } else {
                x->run->failed++;
                if (x->have_cluster) {
                        x->h.failed = true;
                }
                printf("not ok %u - %s: %s\n", x->run->tap, s->name, x->why);
        }
        fflush(stdout);
}

int main(int argc, char **argv)
{
        return scenario_main(argc, argv, "test_ops", WATCHDOG_S, scenarios,
                             N_SCENARIOS, run_one);
}
