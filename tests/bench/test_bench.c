/*
 * baton-bench against a live 3-node cluster (tests/integration/harness):
 * the built binary ($BATON_BENCH, or ./baton-bench in the build dir) runs a
 * short uncontended and a short contended workload. Each run must exit 0
 * and print exactly one line on stdout: a JSON object with every field of
 * the peers README's result table (and no other), ops > 0, errors == 0 and
 * p50_us <= p99_us <= max_us. No timing is asserted. Prints TAP.
 *
 * Every wait is bounded; a watchdog (BATON_TEST_WATCHDOG seconds, default
 * 120) bails out of a hung run, and the harness kills every node by PID on
 * any exit. Environment as the integration tests: BATOND,
 * BATON_TEST_BASE_PORT, BATON_TEST_TMPDIR.
 */
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../cli/ctlcluster.h"
#include "../integration/harness.h"
#include "../lib/proc.h"
#include "../lib/tap.h"
#include "../lib/tclient.h"

#define WATCHDOG_S 120
#define MAX_FIELDS 64

static struct harness cluster;
static const char *bench; /* $BATON_BENCH, or ./baton-bench */
/* Every case of this program, in one TAP stream. */
static struct tap tap;
#define ok(...) tap_ok(&tap, __VA_ARGS__)
static pid_t child;

static void cleanup(void)
{
        if (child > 0) {
                kill(child, SIGKILL);
                waitpid(child, NULL, 0);
                child = 0;
        }
}

/* Run baton-bench with `args` (NULL-terminated) to its end; its stderr is
 * passed on to ours. Returns its exit code, 128 + the signal, or -1. */
static int run(struct proc *p, const char *const *args)
{
        if (proc_start(p, bench, 0, NULL, args) != 0) {
                return -1;
        }
        child = p->pid;
        proc_wait(p, WATCHDOG_S * 1000); /* the watchdog bails out first */
        child = 0;
        fputs(p->err, stderr);
        return p->status;
}

/* --- A flat JSON object: "key":"string" or "key":number ------------------ */

struct field {
        char key[64];
        char val[256];
        bool string;
};

static const char *skip_ws(const char *p)
{
        while (*p == ' ' || *p == '\t') {
                p++;
        }
        return p;
}

/* A string without escapes (the driver prints none). */
static const char *parse_string(const char *p, char *dst, size_t cap)
{
        size_t n = 0;

        if (*p++ != '"') {
                return NULL;
        }
        while (*p != '"') {
                if (*p == '\0' || *p == '\\' || (unsigned char)*p < 0x20 ||
                    n + 1 >= cap) {
                        return NULL;
                }
                dst[n++] = *p++;
        }
        dst[n] = '\0';
        return p + 1;
}

/* A JSON number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
static const char *parse_number(const char *p, char *dst, size_t cap)
{
        const char *s = p;

        if (*p == '-') {
                p++;
        }
        if (*p == '0') {
                p++;
        } else if (*p >= '1' && *p <= '9') {
                while (*p >= '0' && *p <= '9') {
                        p++;
                }
        } else {
                return NULL;
        }
        if (*p == '.') {
                p++;
                if (!(*p >= '0' && *p <= '9')) {
                        return NULL;
                }
                while (*p >= '0' && *p <= '9') {
                        p++;
                }
        }
        if (*p == 'e' || *p == 'E') {
                p++;
                if (*p == '+' || *p == '-') {
                        p++;
                }
                if (!(*p >= '0' && *p <= '9')) {
                        return NULL;
                }
                while (*p >= '0' && *p <= '9') {
                        p++;
                }
        }
        if ((size_t)(p - s) >= cap) {
                return NULL;
        }
        memcpy(dst, s, (size_t)(p - s));
        dst[p - s] = '\0';
        return p;
}

/* true or false, kept as written. */
static const char *parse_literal(const char *p, char *dst, size_t cap)
{
        static const char *const words[] = {"true", "false"};

        for (size_t i = 0; i < 2; i++) {
                size_t len = strlen(words[i]);
                if (strncmp(p, words[i], len) == 0 && len < cap) {
                        memcpy(dst, p, len);
                        dst[len] = '\0';
                        return p + len;
                }
        }
        return parse_number(p, dst, cap);
}

/* 0 with the fields, or -1: not one flat JSON object. */
static int parse_object(const char *p, struct field *f, unsigned *n)
{
        *n = 0;
        p = skip_ws(p);
        if (*p++ != '{') {
                return -1;
        }
        p = skip_ws(p);
        if (*p == '}') {
                return *skip_ws(p + 1) == '\0' ? 0 : -1;
        }
        for (;;) {
                if (*n == MAX_FIELDS) {
                        return -1;
                }
                p = parse_string(skip_ws(p), f[*n].key, sizeof f[*n].key);
                if (p == NULL) {
                        return -1;
                }
                p = skip_ws(p);
                if (*p++ != ':') {
                        return -1;
                }
                p = skip_ws(p);
                f[*n].string = *p == '"';
                p = f[*n].string
                        ? parse_string(p, f[*n].val, sizeof f[*n].val)
                        : parse_literal(p, f[*n].val, sizeof f[*n].val);
                if (p == NULL) {
                        return -1;
                }
                ++*n;
                p = skip_ws(p);
                if (*p == ',') {
                        p++;
                        continue;
                }
                if (*p++ != '}') {
                        return -1;
                }
                return *skip_ws(p) == '\0' ? 0 : -1;
        }
}

static const struct field *get(const struct field *f, unsigned n,
                               const char *key)
{
        for (unsigned i = 0; i < n; i++) {
                if (strcmp(f[i].key, key) == 0) {
                        return &f[i];
                }
        }
        return NULL;
}

static double num(const struct field *f, unsigned n, const char *key)
{
        const struct field *x = get(f, n, key);

        return x != NULL && !x->string ? strtod(x->val, NULL) : -1;
}

/* The peer harness README's table, with Baton's client_cpu_s: name, and
 * whether the value is a string. */
static const struct {
        const char *key;
        bool string;
} fields[] = {
    {"system", true},
    {"nodes", false},
    {"workload", true},
    {"clients", false},
    {"ops", false},
    {"seconds", false},
    {"ops_per_s", false},
    {"p50_us", false},
    {"p99_us", false},
    {"errors", false},
    {"max_us", false},
    {"max_gap_ms", false},
    {"client_gap_p50_ms", false},
    {"sys_gap_ms", false},
    {"sys_gap_at_s", false},
    {"client_cpu_s", false}, /* Baton's own: not in the peers' table */
    {"variant", true},
    {"driver", true},
};

static void check_run(const char *workload, const char *clients)
{
        const char *args[] = {"--workload",      workload,     "--clients",
                              clients,           "--duration", "1",
                              "--warmup",        "0.2",        "--endpoints",
                              cluster.endpoints, NULL};
        static struct proc p;
        struct field f[MAX_FIELDS];
        unsigned n = 0, missing = 0, i;
        char *out = p.out;
        size_t len;
        int rc;

        rc = run(&p, args);
        printf("# %s: %s", workload, out);
        ok(rc == 0, "%s: exit status 0 (got %d)", workload, rc);
        len = strlen(out);
        ok(len > 0 && out[len - 1] == '\n' &&
               strchr(out, '\n') == out + len - 1,
           "%s: exactly one line on stdout", workload);
        if (len > 0 && out[len - 1] == '\n') {
                out[len - 1] = '\0';
        }
        if (!ok(parse_object(out, f, &n) == 0, "%s: the line is a JSON object",
                workload)) {
                return;
        }
        for (i = 0; i < sizeof fields / sizeof fields[0]; i++) {
                const struct field *x = get(f, n, fields[i].key);

                if (x == NULL || x->string != fields[i].string) {
                        printf("# missing or mistyped: %s\n", fields[i].key);
                        missing++;
                }
        }
        if (!ok(missing == 0 && n == sizeof fields / sizeof fields[0],
                "%s: every field of the result table, and no other",
                workload)) {
                return;
        }
        ok(strcmp(get(f, n, "workload")->val, workload) == 0 &&
               num(f, n, "clients") == atof(clients) &&
               strcmp(get(f, n, "system")->val, "baton") == 0 &&
               strcmp(get(f, n, "driver")->val, "baton-c-libbaton") == 0,
           "%s: workload, clients, system and driver as expected", workload);
        ok(num(f, n, "ops") > 0, "%s: ops > 0", workload);
        ok(num(f, n, "errors") == 0, "%s: errors == 0", workload);
        /* Clients that completed ops in the window used CPU in it. */
        ok(num(f, n, "client_cpu_s") > 0, "%s: client_cpu_s > 0", workload);
        ok(num(f, n, "p50_us") <= num(f, n, "p99_us") &&
               num(f, n, "p99_us") <= num(f, n, "max_us"),
           "%s: p50_us <= p99_us <= max_us", workload);
}

/* The connections workload: `conns` connections, each with its session
 * and lock, all held at once; 0 or the exit status, the line parsed into
 * f / n. */
static int run_connections(const char *conns, struct field *f, unsigned *n)
{
        const char *args[] = {"--workload", "connections", "--connections",
                              conns,        "--window",    "16",
                              "--hold-s",   "0.5",         "--ttl-ms",
                              "10000",      "--endpoints", cluster.endpoints,
                              NULL};
        static struct proc p;
        char *out = p.out;
        size_t len;
        int rc;

        *n = 0;
        rc = run(&p, args);
        printf("# connections %s: %s", conns, out);
        len = strlen(out);
        if (len > 0 && out[len - 1] == '\n') {
                out[len - 1] = '\0';
        }
        if (!ok(parse_object(out, f, n) == 0,
                "connections %s: the line is a JSON object", conns)) {
                *n = 0;
        }
        return rc;
}

static void check_connections(void)
{
        struct field f[MAX_FIELDS];
        unsigned n;
        int rc;

        rc = run_connections("40", f, &n);
        ok(rc == 0, "connections: exit status 0 (got %d)", rc);
        ok(num(f, n, "connected") == 40 && num(f, n, "held") == 40 &&
               num(f, n, "released") == 40 && num(f, n, "closed") == 40,
           "connections: 40 connected, held, released and closed");
        ok(num(f, n, "errors") == 0 && get(f, n, "broken") != NULL &&
               strcmp(get(f, n, "broken")->val, "false") == 0,
           "connections: errors == 0, not broken");
        ok(num(f, n, "keepalives") >= 40,
           "connections: every session kept alive during the hold");
        ok(num(f, n, "round_p50_us") > 0 &&
               num(f, n, "round_p50_us") <= num(f, n, "round_p99_us") &&
               num(f, n, "round_p99_us") <= num(f, n, "round_max_us"),
           "connections: 0 < round_p50_us <= round_p99_us <= round_max_us");
        /* Past the per-address cap (256 by default), a connection is told
         * BATON_ETOOMANYCONNS: counted, named, and the exit status says. */
        rc = run_connections("270", f, &n);
        ok(rc == 1, "connections past the address cap: exit status 1 (got %d)",
           rc);
        ok(num(f, n, "held") + num(f, n, "errors") == 270 &&
               num(f, n, "held") <= 256 && num(f, n, "errors") >= 14,
           "connections past the address cap: at most 256 held, the rest "
           "errors");
        ok(get(f, n, "first_error") != NULL &&
               strcmp(get(f, n, "first_error")->val, "BATON_ETOOMANYCONNS") ==
                   0,
           "connections past the address cap: first_error BATON_ETOOMANYCONNS");
}

/* A storm workload (`workload`, with `extra` flags, NULL-terminated, at
 * most 8) beside 2 clients: 0 or the exit status, the line parsed into
 * f / n. */
static int run_storm(const char *workload, const char *const *extra,
                     struct field *f, unsigned *n)
{
        const char *args[32] = {"--workload",  workload,         "--clients",
                                "2",           "--window",       "64",
                                "--endpoints", cluster.endpoints};
        static struct proc p;
        size_t k = 8;
        char *out = p.out;
        size_t len;
        int rc;

        while (*extra != NULL && k < 31) {
                args[k++] = *extra++;
        }
        args[k] = NULL;
        *n = 0;
        rc = run(&p, args);
        printf("# %s: %s", workload, out);
        len = strlen(out);
        if (len > 0 && out[len - 1] == '\n') {
                out[len - 1] = '\0';
        }
        if (!ok(parse_object(out, f, n) == 0, "%s: the line is a JSON object",
                workload)) {
                *n = 0;
        }
        return rc;
}

/* The storms, small: every session opened, kept alive and, for the
 * expiry storm, gone; for the keepalive load, alive to the end (its TTL
 * is shorter than the run, so a session not kept alive could not be
 * CLOSEd). No timing is asserted. */
static void check_storms(void)
{
        static const char *const expiry[] = {
            "--sessions", "200", "--ttl-ms", "2000", "--storm-at", "0.5",
            "--duration", "4",   "--warmup", "0.2",  NULL};
        static const char *const keep[] = {
            "--sessions", "200",      "--ttl-ms", "2000", "--duration",
            "4",          "--warmup", "0.2",      NULL};
        struct field f[MAX_FIELDS];
        unsigned n;
        int rc;

        rc = run_storm("expiry-storm", expiry, f, &n);
        ok(rc == 0, "expiry-storm: exit status 0 (got %d)", rc);
        ok(num(f, n, "opened") == 200 && num(f, n, "attached") == 200 &&
               num(f, n, "keepalives") == 200,
           "expiry-storm: 200 sessions opened, each attached and kept alive "
           "once");
        ok(num(f, n, "storm_errors") == 0 && num(f, n, "errors") == 0,
           "expiry-storm: no error");
        ok(num(f, n, "sessions_before") >= 200 &&
               num(f, n, "first_gone_s") > 0 &&
               num(f, n, "all_gone_s") >= num(f, n, "first_gone_s"),
           "expiry-storm: the leader saw every session go");
        ok(num(f, n, "quiet_ops") > 0 && num(f, n, "ops") > 0,
           "expiry-storm: the clients completed ops before the burst");

        rc = run_storm("keepalives", keep, f, &n);
        ok(rc == 0, "keepalives: exit status 0 (got %d)", rc);
        ok(num(f, n, "opened") == 200 && num(f, n, "closed") == 200,
           "keepalives: 200 sessions opened and, kept alive past their TTL, "
           "CLOSEd");
        ok(num(f, n, "keepalives") >= 200 &&
               num(f, n, "attached") == num(f, n, "keepalives") + 200,
           "keepalives: every session kept alive, each after an ATTACH");
        ok(num(f, n, "storm_errors") == 0 && num(f, n, "errors") == 0,
           "keepalives: no error");
}

/* The reconnects workload: 40 connections hold their locks, the leader is
 * killed, and every one finds the next leader, ATTACHes its session and
 * is served again; the round then proves every lock was kept. Last: it
 * kills the leader. No timing is asserted (not even that leadership moved
 * only once: an election may split on a slow machine). */
static void check_reconnects(void)
{
        const char *args[] = {"--workload", "reconnects",  "--connections",
                              "40",         "--window",    "16",
                              "--hold-s",   "2",           "--ttl-ms",
                              "20000",      "--endpoints", cluster.endpoints,
                              NULL};
        static struct proc p;
        struct field f[MAX_FIELDS];
        unsigned n = 0, killed = 0;
        int64_t until = tclient_now_ms() + 30000;
        char *out = p.out;
        size_t len;
        int rc;

        if (!ok(proc_start(&p, bench, 0, NULL, args) == 0,
                "reconnects: baton-bench started")) {
                return;
        }
        child = p.pid;
        /* The hold starts once every connection holds its lock. */
        while (strstr(p.err, "40 connections holding") == NULL &&
               tclient_now_ms() < until && p.out_fd >= 0) {
                proc_read(&p, 200);
        }
        rc = harness_kill_leader(&cluster, 10000, &killed, NULL);
        ok(rc == 0, "reconnects: the leader (%u) killed during the hold",
           killed);
        rc = proc_wait(&p, WATCHDOG_S * 1000);
        child = 0;
        fputs(p.err, stderr);
        printf("# reconnects: %s", out);
        len = strlen(out);
        if (len > 0 && out[len - 1] == '\n') {
                out[len - 1] = '\0';
        }
        if (!ok(parse_object(out, f, &n) == 0,
                "reconnects: the line is a JSON object")) {
                return;
        }
        ok(rc == 0, "reconnects: exit status 0 (got %d)", rc);
        ok(num(f, n, "lost") == 40 && num(f, n, "served_again") == 40,
           "reconnects: all 40 connections lost, and served again");
        ok(num(f, n, "released") == 40 && num(f, n, "closed") == 40 &&
               num(f, n, "errors") == 0,
           "reconnects: every lock kept (the round released 40), no error");
        ok(num(f, n, "redials") >= 40 && num(f, n, "connected") >= 80,
           "reconnects: each dialled again, with a handshake");
        ok(num(f, n, "leader_before") == killed &&
               num(f, n, "leader_after") != killed &&
               num(f, n, "leader_first") != killed &&
               num(f, n, "term_after") > num(f, n, "term_before"),
           "reconnects: served again by a new leader, in a later term");
        ok(num(f, n, "served_by") >= 1 && num(f, n, "served_by") <= 2,
           "reconnects: served again by one or two nodes");
        ok(num(f, n, "gap_p50_ms") <= num(f, n, "gap_p99_ms") &&
               num(f, n, "gap_p99_ms") <= num(f, n, "gap_max_ms") &&
               num(f, n, "reconnect_s") > 0,
           "reconnects: gap_p50_ms <= gap_p99_ms <= gap_max_ms, "
           "reconnect_s > 0");
}

int main(int argc, char **argv)
{
        int64_t t0 = tclient_now_ms();
        unsigned leader;

        (void)argc;
        bench = ctlcluster_program("BATON_BENCH", "./baton-bench");
        if (bench == NULL) {
                return 0;
        }
        atexit(cleanup);
        if (ctlcluster_open(&cluster, argv[0], WATCHDOG_S, &leader) != 0) {
                return 1;
        }
        printf("# cluster %s, leader %u, baton-bench %s\n", cluster.endpoints,
               leader, bench);

        check_run("uncontended", "2");
        check_run("contended", "3");
        check_connections();
        check_storms();
        check_reconnects(); /* last: it kills the leader */

        return ctlcluster_close(&cluster, &tap, false, t0);
}
