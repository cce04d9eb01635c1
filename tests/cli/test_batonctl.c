/*
 * batonctl against a live 3-node cluster (tests/integration/harness): the
 * built binary ($BATONCTL, or ./batonctl in the build dir) is run with
 * --endpoints of the cluster and its exit status, stdout and stderr are
 * checked: lock -- CMD (environment, the command's status passed through,
 * 127), try on a held lock, acquire ended by SIGTERM, holder, check,
 * status and member list (text and JSON), usage errors (one line saying
 * what is wrong), numbers checked against their ranges, options anywhere
 * on the line, --json of names that are UTF-8 or not, --version of
 * batonctl and batond, BATON_ENDPOINTS for batonctl and baton-bench
 * ($BATON_BENCH or ./baton-bench), an unreachable cluster, and, most
 * important, `lock --ttl 2000 -- CMD` while every node
 * is SIGSTOPped: the command must be dead before the cluster could expire
 * the session, and batonctl must exit 121. Prints TAP.
 *
 * Every wait is bounded; a watchdog (BATON_TEST_WATCHDOG seconds, default
 * 180) bails out of a hung run, and the harness kills every node by PID on
 * any exit. Environment as the integration tests: BATOND,
 * BATON_TEST_BASE_PORT, BATON_TEST_TMPDIR.
 */
#include <ctype.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../integration/harness.h"
#include "../integration/tlsfiles.h"
#include "../lib/proc.h"
#include "../lib/tap.h"
#include "../lib/tclient.h"
#include "ctlcluster.h"

#define WATCHDOG_S 180
#define HEALTHY_MS 20000
#define RUN_MS     20000 /* a batonctl run that should end on its own */
#define LOSS_TTL   2000

static struct harness cluster;
static const char *batonctl;                /* $BATONCTL, or ./batonctl */
static const char *bench = "./baton-bench"; /* $BATON_BENCH */
/* Every case of this program, in one TAP stream. */
static struct tap tap;
#define ok(...) tap_ok(&tap, __VA_ARGS__)
static pid_t stray_child; /* a lock's command, killed at exit if alive */

/* --- Time ----------------------------------------------------------------- */

static int64_t wall_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_REALTIME, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* --- Running batonctl ----------------------------------------------------- */

/* Run batonctl --endpoints E args... to its end. */
static int ctl(struct proc *p, int timeout_ms, ...)
{
        const char *const head[] = {"--endpoints", cluster.endpoints, NULL};
        va_list ap;
        int rv;

        va_start(ap, timeout_ms);
        rv = proc_vrun(p, batonctl, 0, timeout_ms, head, ap);
        va_end(ap);
        return rv;
}

/* Run `prog` args... (nothing added) to its end, with BATON_ENDPOINTS set
 * to `env` (NULL: unset) in its environment. */
static int run_env(struct proc *p, const char *prog, const char *env, ...)
{
        va_list ap;
        int rv;

        if (env != NULL) {
                setenv("BATON_ENDPOINTS", env, 1);
        }
        va_start(ap, env);
        rv = proc_vrun(p, prog, 0, RUN_MS, NULL, ap);
        va_end(ap);
        unsetenv("BATON_ENDPOINTS");
        return rv;
}

/* --- A minimal JSON validator --------------------------------------------- */

static const char *json_value(const char *s, int depth);

static const char *json_ws(const char *s)
{
        while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r') {
                s++;
        }
        return s;
}

static const char *json_string(const char *s)
{
        if (*s != '"') {
                return NULL;
        }
        for (s++; *s != '"'; s++) {
                if ((unsigned char)*s < 0x20) {
                        return NULL;
                }
                if (*s == '\\') {
                        s++;
                        if (*s == 'u') {
                                int i;
                                for (i = 1; i <= 4; i++) {
                                        if (!isxdigit((unsigned char)s[i])) {
                                                return NULL;
                                        }
                                }
                                s += 4;
                        } else if (strchr("\"\\/bfnrt", *s) == NULL ||
                                   *s == '\0') {
                                return NULL;
                        }
                }
        }
        return s + 1;
}

static const char *json_number(const char *s)
{
        const char *start;

        if (*s == '-') {
                s++;
        }
        if (*s == '0') {
                s++;
        } else if (isdigit((unsigned char)*s)) {
                while (isdigit((unsigned char)*s)) {
                        s++;
                }
        } else {
                return NULL;
        }
        if (*s == '.') {
                start = ++s;
                while (isdigit((unsigned char)*s)) {
                        s++;
                }
                if (s == start) {
                        return NULL;
                }
        }
        if (*s == 'e' || *s == 'E') {
                s++;
                if (*s == '+' || *s == '-') {
                        s++;
                }
                start = s;
                while (isdigit((unsigned char)*s)) {
                        s++;
                }
                if (s == start) {
                        return NULL;
                }
        }
        return s;
}

static const char *json_items(const char *s, int depth, char close, bool obj)
{
        s = json_ws(s + 1);
        if (*s == close) {
                return s + 1;
        }
        for (;;) {
                if (obj) {
                        s = json_string(json_ws(s));
                        if (s == NULL) {
                                return NULL;
                        }
                        s = json_ws(s);
                        if (*s != ':') {
                                return NULL;
                        }
                        s++;
                }
                s = json_value(s, depth + 1);
                if (s == NULL) {
                        return NULL;
                }
                s = json_ws(s);
                if (*s == close) {
                        return s + 1;
                }
                if (*s != ',') {
                        return NULL;
                }
                s++;
        }
}

static const char *json_value(const char *s, int depth)
{
        if (depth > 32) {
                return NULL;
        }
        s = json_ws(s);
        switch (*s) {
        case '{':
                return json_items(s, depth, '}', true);
        case '[':
                return json_items(s, depth, ']', false);
        case '"':
                return json_string(s);
        case 't':
                return strncmp(s, "true", 4) == 0 ? s + 4 : NULL;
        case 'f':
                return strncmp(s, "false", 5) == 0 ? s + 5 : NULL;
        case 'n':
                return strncmp(s, "null", 4) == 0 ? s + 4 : NULL;
        default:
                return json_number(s);
        }
}

/* One JSON document, and nothing but whitespace after it. */
static bool json_valid(const char *s)
{
        const char *end = json_value(s, 0);

        return end != NULL && *json_ws(end) == '\0';
}

/* Whether `json` has every "field": of the NULL-terminated list. */
static bool json_has_fields(const char *json, const char *const *fields)
{
        char key[64];

        for (; *fields != NULL; fields++) {
                snprintf(key, sizeof key, "\"%s\":", *fields);
                if (strstr(json, key) == NULL) {
                        tap_diag("JSON lacks %s", key);
                        return false;
                }
        }
        return true;
}

/* Whether `s` is valid UTF-8 (RFC 3629), decoded by value. */
static bool utf8_valid(const char *str)
{
        const unsigned char *s = (const unsigned char *)str;

        while (*s != '\0') {
                unsigned len, k;
                uint32_t cp, min;

                if (*s < 0x80) {
                        s++;
                        continue;
                }
                if ((*s & 0xe0) == 0xc0) {
                        len = 2, cp = *s & 0x1f, min = 0x80;
                } else if ((*s & 0xf0) == 0xe0) {
                        len = 3, cp = *s & 0x0f, min = 0x800;
                } else if ((*s & 0xf8) == 0xf0) {
                        len = 4, cp = *s & 0x07, min = 0x10000;
                } else {
                        return false;
                }
                for (k = 1; k < len; k++) {
                        if ((s[k] & 0xc0) != 0x80) {
                                return false;
                        }
                        cp = cp << 6 | (s[k] & 0x3f);
                }
                if (cp < min || cp > 0x10ffff ||
                    (cp >= 0xd800 && cp <= 0xdfff)) {
                        return false;
                }
                s += len;
        }
        return true;
}

static unsigned count_of(const char *s, const char *what)
{
        unsigned n = 0;

        while ((s = strstr(s, what)) != NULL) {
                n++;
                s += strlen(what);
        }
        return n;
}

/* --- Cases ---------------------------------------------------------------- */

static uint64_t first_token; /* of lock_env: stale once released */

static void lock_env(void)
{
        struct proc p;
        char lock[64];
        unsigned long long token = 0;
        long long deadline = 0;
        int64_t before = wall_ms();
        int n;

        ctl(&p, RUN_MS, "lock", "cli-env", "--", "sh", "-c",
            "echo \"$BATON_TOKEN $BATON_LOCK $BATON_DEADLINE_MS\"", NULL);
        n = sscanf(p.out, "%llu %63s %lld", &token, lock, &deadline);
        if (!ok(p.status == 0 && n == 3 && token > 0,
                "lock -- sh -c 'echo $BATON_TOKEN': exit 0, prints a token")) {
                proc_show(&p);
        }
        first_token = token;
        ok(n >= 2 && strcmp(lock, "cli-env") == 0, "BATON_LOCK is the name");
        /* The default TTL is 10 s: the deadline is within it, not past. */
        if (!ok(n == 3 && deadline > before && deadline <= wall_ms() + 10000,
                "BATON_DEADLINE_MS is a wall-clock time within the TTL")) {
                tap_diag("deadline %lld, started at %" PRId64, deadline,
                         before);
        }
}

static void lock_status(void)
{
        struct proc p;

        ctl(&p, RUN_MS, "lock", "cli-exit", "--", "sh", "-c", "exit 7", NULL);
        if (!ok(p.status == 7, "lock -- sh -c 'exit 7': exit 7")) {
                proc_show(&p);
        }
        ctl(&p, RUN_MS, "lock", "cli-exit", "--",
            "baton-no-such-command-anywhere", NULL);
        if (!ok(p.status == 127 && strstr(p.err, "cannot run") != NULL,
                "lock -- a missing command: exit 127 with a message")) {
                proc_show(&p);
        }
        /* The lock was released both times: it is free now. */
        ctl(&p, RUN_MS, "holder", "cli-exit", NULL);
        if (!ok(p.status == 0 && strcmp(p.out, "cli-exit free\n") == 0,
                "the lock is free after lock -- CMD ended")) {
                proc_show(&p);
        }
}

static void hold_and_query(void)
{
        const char *holder_fields[] = {
            "lock",  "held",    "session", "owner",       "token",
            "count", "waiters", "index",   "client_name", NULL};
        const char *args[] = {"--endpoints", cluster.endpoints, "acquire",
                              "cli-held", NULL};
        struct proc bg, p;
        char name[64], tok[32], tok1[32];
        unsigned long long token = 0;
        int64_t t0;

        if (proc_start(&bg, batonctl, 0, NULL, args) != 0) {
                ok(false, "start acquire");
                return;
        }
        if (!ok(proc_wait_line(&bg, RUN_MS) &&
                    sscanf(bg.out, "%63s %llu", name, &token) == 2 &&
                    strcmp(name, "cli-held") == 0 && token > 0,
                "acquire (background) prints NAME TOKEN")) {
                kill(bg.pid, SIGKILL);
                proc_wait(&bg, RUN_MS);
                proc_show(&bg);
                return;
        }
        snprintf(tok, sizeof tok, "%llu", token);

        ctl(&p, RUN_MS, "try", "cli-held", NULL);
        if (!ok(p.status == 1 && strstr(p.err, "batonctl: acquire:") != NULL &&
                    strstr(p.err, "held by another owner") != NULL,
                "try on a held lock: exit 1, says it is held")) {
                proc_show(&p);
        }

        ctl(&p, RUN_MS, "holder", "cli-held", NULL);
        if (!ok(p.status == 0 &&
                    strncmp(p.out, "cli-held held by session ", 25) == 0,
                "holder: exit 0, held by session ...")) {
                proc_show(&p);
        } else {
                char want[64];
                snprintf(want, sizeof want, " token %s ", tok);
                if (!ok(strstr(p.out, want) != NULL,
                        "holder names the acquire's token")) {
                        proc_show(&p);
                }
        }

        ctl(&p, RUN_MS, "--json", "holder", "cli-held", NULL);
        if (!ok(p.status == 0 && json_valid(p.out) &&
                    json_has_fields(p.out, holder_fields),
                "--json holder: exit 0, valid JSON with every field")) {
                proc_show(&p);
        } else {
                char want[64];
                snprintf(want, sizeof want, "\"token\":%s,", tok);
                if (!ok(strstr(p.out, "\"held\":true") != NULL &&
                            strstr(p.out, "\"lock\":\"cli-held\"") != NULL &&
                            strstr(p.out, want) != NULL,
                        "--json holder: held, the name and the token")) {
                        proc_show(&p);
                }
        }

        ctl(&p, RUN_MS, "check", "cli-held", tok, NULL);
        if (!ok(p.status == 0 && strstr(p.out, "current") != NULL,
                "check NAME current-token: exit 0, current")) {
                proc_show(&p);
        }
        ctl(&p, RUN_MS, "--json", "check", "cli-held", tok, NULL);
        if (!ok(p.status == 0 && json_valid(p.out) &&
                    strstr(p.out, "\"current\":true") != NULL,
                "--json check current: valid JSON, current true")) {
                proc_show(&p);
        }
        /* A token granted earlier (lock_env's, another lock) or one below
         * the current grant of this lock is stale. */
        snprintf(tok1, sizeof tok1, "%llu", token - 1);
        ctl(&p, RUN_MS, "check", "cli-held", tok1, NULL);
        if (!ok(p.status == 1 && strstr(p.out, "stale") != NULL,
                "check NAME older-token: exit 1, stale")) {
                proc_show(&p);
        }
        ctl(&p, RUN_MS, "--json", "check", "cli-held", tok1, NULL);
        if (!ok(p.status == 1 && json_valid(p.out) &&
                    strstr(p.out, "\"current\":false") != NULL,
                "--json check stale: exit 1, valid JSON, current false")) {
                proc_show(&p);
        }

        t0 = tclient_now_ms();
        kill(bg.pid, SIGTERM);
        proc_wait(&bg, RUN_MS);
        if (!ok(bg.status == 0,
                "acquire ended by SIGTERM: exit 0 (%" PRId64 " ms)",
                tclient_now_ms() - t0)) {
                proc_show(&bg);
        }
        ctl(&p, RUN_MS, "holder", "cli-held", NULL);
        if (!ok(p.status == 0 && strcmp(p.out, "cli-held free\n") == 0,
                "the lock is free after SIGTERM")) {
                proc_show(&p);
        }
        ctl(&p, RUN_MS, "--json", "holder", "cli-held", NULL);
        if (!ok(p.status == 0 && json_valid(p.out) &&
                    strstr(p.out, "\"held\":false") != NULL,
                "--json holder of a free lock: held false")) {
                proc_show(&p);
        }
        (void)first_token;
}

/* `list PREFIX`: locks a/1, a/2 and b/1 held by background acquires; the
 * listing of a/ shows exactly a/1 and a/2 with their tokens, as text and as
 * a JSON array. */
static void list_locks(void)
{
        static const char *const names[3] = {"a/1", "a/2", "b/1"};
        const char *fields[] = {"lock",  "session", "owner",       "token",
                                "count", "waiters", "client_name", NULL};
        struct proc bg[3], p;
        unsigned long long tokens[3] = {0, 0, 0};
        char name[64], want[128];
        unsigned i, started = 0;

        for (i = 0; i < 3; i++) {
                const char *args[] = {"--endpoints", cluster.endpoints,
                                      "acquire", names[i], NULL};
                if (proc_start(&bg[i], batonctl, 0, NULL, args) != 0) {
                        ok(false, "start acquire %s", names[i]);
                        goto out;
                }
                started++;
                if (!ok(proc_wait_line(&bg[i], RUN_MS) &&
                            sscanf(bg[i].out, "%63s %llu", name, &tokens[i]) ==
                                2 &&
                            strcmp(name, names[i]) == 0 && tokens[i] > 0,
                        "acquire %s (background) prints NAME TOKEN",
                        names[i])) {
                        proc_show(&bg[i]);
                        goto out;
                }
        }

        ctl(&p, RUN_MS, "list", "a/", NULL);
        if (!ok(p.status == 0 && count_of(p.out, "\n") == 2 &&
                    strncmp(p.out, "a/1 session ", 12) == 0 &&
                    strstr(p.out, "\na/2 session ") != NULL &&
                    strstr(p.out, "b/1") == NULL,
                "list a/: exit 0, exactly a/1 and a/2")) {
                proc_show(&p);
        } else {
                for (i = 0; i < 2; i++) {
                        snprintf(want, sizeof want, " token %llu count 1 ",
                                 tokens[i]);
                        if (!ok(strstr(p.out, want) != NULL,
                                "list a/ shows %s with token %llu", names[i],
                                tokens[i])) {
                                proc_show(&p);
                        }
                }
        }

        ctl(&p, RUN_MS, "--json", "list", "a/", NULL);
        if (!ok(p.status == 0 && json_valid(p.out) && p.out[0] == '[' &&
                    json_has_fields(p.out, fields) &&
                    count_of(p.out, "\"lock\":") == 2 &&
                    strstr(p.out, "\"lock\":\"a/1\"") != NULL &&
                    strstr(p.out, "\"lock\":\"a/2\"") != NULL,
                "--json list a/: exit 0, a JSON array of a/1 and a/2")) {
                proc_show(&p);
        } else {
                for (i = 0; i < 2; i++) {
                        snprintf(want, sizeof want, "\"token\":%llu,",
                                 tokens[i]);
                        if (!ok(strstr(p.out, want) != NULL,
                                "--json list a/ has %s's token", names[i])) {
                                proc_show(&p);
                        }
                }
        }

        ctl(&p, RUN_MS, "list", NULL);
        if (!ok(p.status == 0 && strstr(p.out, "b/1 session ") != NULL,
                "list (no prefix): exit 0, shows b/1")) {
                proc_show(&p);
        }
        ctl(&p, RUN_MS, "--json", "list", "nothing/", NULL);
        if (!ok(p.status == 0 && strcmp(p.out, "[]\n") == 0,
                "--json list of an unused prefix: []")) {
                proc_show(&p);
        }
out:
        for (i = 0; i < started; i++) {
                kill(bg[i].pid, SIGTERM);
                proc_wait(&bg[i], RUN_MS);
                if (!ok(bg[i].status == 0,
                        "acquire %s ended by SIGTERM: exit 0", names[i])) {
                        proc_show(&bg[i]);
                }
        }
}

/* Poll holder until `name` is free, for at most `ms`. */
static bool wait_free(const char *name, int64_t ms)
{
        int64_t end = tclient_now_ms() + ms;
        struct proc h;

        for (;;) {
                ctl(&h, RUN_MS, "holder", name, NULL);
                if (h.status == 0 && strstr(h.out, " free\n") != NULL) {
                        return true;
                }
                if (tclient_now_ms() >= end) {
                        proc_show(&h);
                        return false;
                }
                tclient_sleep_ms(200);
        }
}

#define DETACH_TTL "3000"

/* A detached read lease of `name`: its token and session, and its secret
 * in `secret` (33 bytes); false when the command did not print one. */
static bool read_lease(struct proc *p, const char *name, char *tok, char *sess,
                       char *secret)
{
        unsigned long long token = 0, session = 0;
        char got[64];

        if (p->status != 0 ||
            sscanf(p->out, "%63s %llu %llu %32s", got, &token, &session,
                   secret) != 4 ||
            strcmp(got, name) != 0) {
                return false;
        }
        snprintf(tok, 32, "%llu", token);
        snprintf(sess, 32, "%llu", session);
        return true;
}

/* --shared: two processes hold the read lock together, a writer finds it
 * busy, and once both readers are released the writer takes it. */
static void shared_locks(void)
{
        char t1[32], s1[32], k1[40], t2[32], s2[32], k2[40];
        struct proc p;

        ctl(&p, RUN_MS, "acquire", "cli-rw", "--shared", "--detach", NULL);
        if (!ok(read_lease(&p, "cli-rw", t1, s1, k1),
                "acquire --shared --detach: a read lease")) {
                proc_show(&p);
                return;
        }
        ctl(&p, RUN_MS, "try", "cli-rw", "--shared", "--detach", NULL);
        if (!ok(read_lease(&p, "cli-rw", t2, s2, k2) && strcmp(s1, s2) != 0,
                "try --shared: a second reader holds it too")) {
                proc_show(&p);
                return;
        }
        ctl(&p, RUN_MS, "try", "cli-rw", NULL);
        if (!ok(p.status == 1 && strstr(p.err, "held") != NULL,
                "try (a writer) while readers hold it: exit 1, busy")) {
                proc_show(&p);
        }
        ctl(&p, RUN_MS, "holder", "cli-rw", "--shared", NULL);
        if (!ok(p.status == 2 && strstr(p.err, "--shared") != NULL,
                "holder --shared: exit 2, not an option of holder")) {
                proc_show(&p);
        }
        ctl(&p, RUN_MS, "release", "cli-rw", t1, "--session", s1, "--secret",
            k1, NULL);
        ok(p.status == 0, "release of the first reader: exit 0");
        ctl(&p, RUN_MS, "release", "cli-rw", t2, "--session", s2, "--secret",
            k2, NULL);
        ok(p.status == 0, "release of the second reader: exit 0");
        ctl(&p, RUN_MS, "lock", "cli-rw", "--", "true", NULL);
        if (!ok(p.status == 0, "lock (a writer) once the readers are gone")) {
                proc_show(&p);
        }
}

/* sem: a command runs holding permits; with the permits all held by a
 * lease, a try of the semaphore is busy, and the lock of its name, a
 * number of permits of its own, or --take above --permits are refused. */
static void semaphores(void)
{
        char t1[32], s1[32], k1[40];
        struct proc p;

        ctl(&p, RUN_MS, "sem", "cli-sem", "--permits", "2", "--", "sh", "-c",
            "echo token=$BATON_TOKEN", NULL);
        if (!ok(p.status == 0 && strstr(p.out, "token=") != NULL,
                "sem --permits 2 -- CMD: CMD runs holding a permit")) {
                proc_show(&p);
        }
        ctl(&p, RUN_MS, "acquire", "cli-sem", "--permits", "2", "--take", "2",
            "--detach", NULL);
        if (!ok(read_lease(&p, "cli-sem", t1, s1, k1),
                "acquire --permits 2 --take 2 --detach: both permits")) {
                proc_show(&p);
                return;
        }
        ctl(&p, RUN_MS, "try", "cli-sem", "--permits", "2", NULL);
        ok(p.status == 1, "try of a semaphore with no permit free: exit 1");
        ctl(&p, RUN_MS, "holder", "cli-sem", "--all", NULL);
        if (!ok(p.status == 0 && strstr(p.out, "permits 2 of 2") != NULL &&
                    strstr(p.out, t1) != NULL,
                "holder --all: the grant, with its permits and token")) {
                proc_show(&p);
        }
        ctl(&p, RUN_MS, "holder", "cli-sem", "--all", "--json", NULL);
        ok(p.status == 0 && strstr(p.out, "\"mode\":\"permits\"") != NULL,
           "holder --all --json: mode and permits");
        ctl(&p, RUN_MS, "list", "--all", NULL);
        ok(p.status == 2, "list --all: exit 2, an option of holder only");
        ctl(&p, RUN_MS, "sem", "cli-sem", "--permits", "3", "--wait", "0", "--",
            "true", NULL);
        ok(p.status == 125 && strstr(p.err, "permits") != NULL,
           "sem with another number of permits: 125, named");
        ctl(&p, RUN_MS, "lock", "cli-sem", "--", "true", NULL);
        ok(p.status == 125 && strstr(p.err, "kind") != NULL,
           "lock of a semaphore's name: 125, another kind");
        ctl(&p, RUN_MS, "sem", "cli-sem", "--permits", "2", "--take", "3", "--",
            "true", NULL);
        ok(p.status == 125 && strstr(p.err, "--take") != NULL,
           "sem --take 3 --permits 2: a usage error");
        ctl(&p, RUN_MS, "release", "cli-sem", t1, "--session", s1, "--secret",
            k1, NULL);
        ok(p.status == 0, "release of the permits' lease: exit 0");
}

/* lock A B C -- CMD: CMD runs holding every name with one token, in
 * $BATON_LOCK and $BATON_TOKEN; with one name held by a lease, a try of
 * the set is busy and takes none of the free names; a name twice, or a
 * semaphore's name, is refused. */
static void multi_locks(void)
{
        char t1[32], s1[32], k1[40];
        struct proc p;

        ctl(&p, RUN_MS, "lock", "cli-m1", "cli-m2", "cli-m3", "--", "sh", "-c",
            "echo \"$BATON_LOCK|$BATON_TOKEN\"", NULL);
        if (!ok(p.status == 0 && strstr(p.out, "cli-m1 cli-m2 cli-m3|") != NULL,
                "lock A B C -- CMD: CMD runs holding all three")) {
                proc_show(&p);
        }
        ctl(&p, RUN_MS, "acquire", "cli-m2", "--detach", NULL);
        if (!ok(read_lease(&p, "cli-m2", t1, s1, k1),
                "acquire --detach of the second name: a lease")) {
                proc_show(&p);
                return;
        }
        ctl(&p, RUN_MS, "lock", "cli-m1", "cli-m2", "--wait", "0", "--", "true",
            NULL);
        ok(p.status == 124 && strstr(p.err, "held") != NULL,
           "lock A B --wait 0 with B held: 124, busy");
        ctl(&p, RUN_MS, "holder", "cli-m1", NULL);
        if (!ok(p.status == 0 && strstr(p.out, "free") != NULL,
                "the free name was not taken alone")) {
                proc_show(&p);
        }
        ctl(&p, RUN_MS, "lock", "cli-m1", "cli-m1", "--", "true", NULL);
        ok(p.status == 125 && strstr(p.err, "\"cli-m1\" named twice") != NULL,
           "lock A A: 125, a usage error naming the name given twice");
        ctl(&p, RUN_MS, "release", "cli-m2", t1, "--session", s1, "--secret",
            k1, NULL);
        ok(p.status == 0, "release of the lease: exit 0");
        ctl(&p, RUN_MS, "lock", "cli-m1", "cli-m2", "--shared", "--", "true",
            NULL);
        ok(p.status == 0, "lock A B --shared: both read locks");
}

/* elect NAME --value V -- CMD: CMD runs while leading, with the
 * leadership's token; leader NAME names it and its value; a second
 * candidate waits (a try is busy, exit 124) and leads after it with a
 * higher token; a lock's name is refused as another kind. */
static void elections(void)
{
        const char *args[] = {
            "--endpoints", cluster.endpoints,
            "elect",       "cli-db",
            "--value",     "10.0.0.1:80",
            "--",          "sh",
            "-c",          "echo leading $BATON_TOKEN; sleep 30",
            NULL};
        unsigned long long first = 0, second = 0;
        struct proc bg, p;

        ctl(&p, RUN_MS, "leader", "cli-db", NULL);
        ok(p.status == 0 && strstr(p.out, "cli-db no leader") != NULL,
           "leader of an election no one runs: no leader");
        if (proc_start(&bg, batonctl, 0, NULL, args) != 0) {
                ok(false, "start elect");
                return;
        }
        if (!ok(proc_wait_line(&bg, RUN_MS) &&
                    sscanf(bg.out, "leading %llu", &first) == 1 && first > 0,
                "elect --value V -- CMD: CMD runs leading, with "
                "$BATON_TOKEN")) {
                kill(bg.pid, SIGKILL);
                proc_wait(&bg, RUN_MS);
                proc_show(&bg);
                return;
        }
        ctl(&p, RUN_MS, "leader", "cli-db", NULL);
        if (!ok(p.status == 0 && strstr(p.out, "cli-db led by session ") &&
                    strstr(p.out, "value \"10.0.0.1:80\"") != NULL,
                "leader: the leader and its value")) {
                proc_show(&p);
        }
        ctl(&p, RUN_MS, "leader", "cli-db", "--json", NULL);
        ok(p.status == 0 && json_valid(p.out) &&
               strstr(p.out, "\"value\":\"10.0.0.1:80\"") != NULL &&
               strstr(p.out, "\"held\":true") != NULL,
           "leader --json: one object with the value");
        ctl(&p, RUN_MS, "elect", "cli-db", "--wait", "0", "--", "true", NULL);
        ok(p.status == 124, "elect --wait 0 while another leads: 124");
        ctl(&p, RUN_MS, "lock", "cli-db", "--", "true", NULL);
        ok(p.status == 125 && strstr(p.err, "kind") != NULL,
           "lock of an election's name: 125, another kind");
        ctl(&p, RUN_MS, "elect", "cli-db", "--permits", "2", "--", "true",
            NULL);
        ok(p.status == 125, "elect --permits: a usage error");
        /* Stopped, it stops its command and resigns: the next candidate
         * leads well before the session's TTL would have run out. */
        kill(bg.pid, SIGTERM);
        ok(proc_wait(&bg, RUN_MS) != -1, "elect ends on SIGTERM");
        ctl(&p, RUN_MS, "elect", "cli-db", "--value", "b", "--wait", "2000",
            "--", "sh", "-c", "echo $BATON_TOKEN", NULL);
        if (!ok(p.status == 0 && sscanf(p.out, "%llu", &second) == 1 &&
                    second > first,
                "the next candidate leads with a higher token")) {
                proc_show(&p);
        }
}

/* Start batonctl `args` in the background; false (after saying so) when
 * it cannot start. */
static bool start_bg(struct proc *bg, const char *const *args)
{
        if (proc_start(bg, batonctl, 0, NULL, args) != 0) {
                ok(false, "start %s", args[2]);
                return false;
        }
        return true;
}

/* Read bg's stdout until it holds `lines` lines (up to RUN_MS). */
static bool wait_lines(struct proc *bg, unsigned lines)
{
        int64_t deadline = tclient_now_ms() + RUN_MS;

        while (count_of(bg->out, "\n") < lines && tclient_now_ms() < deadline) {
                proc_read(bg, 100);
        }
        return count_of(bg->out, "\n") >= lines;
}

/* watch NAME prints each grant and release of NAME as it happens, and
 * exits 0 on SIGTERM; observe NAME prints each leadership with its value;
 * a NAME and --prefix together are a usage error. */
static void watch_and_observe(void)
{
        const char *wargs[] = {"--endpoints", cluster.endpoints, "watch",
                               "cli-watched", NULL};
        const char *oargs[] = {"--endpoints", cluster.endpoints, "observe",
                               "cli-elected", NULL};
        struct proc w, o, p;

        if (!start_bg(&w, wargs) || !start_bg(&o, oargs)) {
                return;
        }
        tclient_sleep_ms(500); /* both watches started */
        ctl(&p, RUN_MS, "lock", "cli-watched", "--", "true", NULL);
        ctl(&p, RUN_MS, "elect", "cli-elected", "--value", "10.1.1.1:80", "--",
            "true", NULL);
        if (!ok(wait_lines(&w, 2) &&
                    strncmp(w.out, "cli-watched granted session ", 28) == 0 &&
                    strstr(w.out, "\ncli-watched released session ") != NULL,
                "watch NAME: the grant, then the release")) {
                proc_show(&w);
        }
        if (!ok(wait_lines(&o, 1) &&
                    strncmp(o.out, "cli-elected token ", 18) == 0 &&
                    strstr(o.out, "value \"10.1.1.1:80\"") != NULL,
                "observe NAME: the leadership and its value")) {
                proc_show(&o);
        }
        kill(w.pid, SIGTERM);
        kill(o.pid, SIGTERM);
        ok(proc_wait(&w, RUN_MS) == 0, "watch ends 0 on SIGTERM");
        ok(proc_wait(&o, RUN_MS) == 0, "observe ends 0 on SIGTERM");
        ctl(&p, RUN_MS, "watch", "a", "--prefix", "b", NULL);
        ok(p.status == 2, "watch NAME --prefix P: a usage error");
        ctl(&p, RUN_MS, "watch", "--prefix", "", "--from", "x", NULL);
        ok(p.status == 2, "watch --from x: a usage error");
}

/* revoke NAME ends the session of a lease that holds NAME at once (its
 * lock is free); session close ID does the same by id; both are refused
 * for a session that ended. */
static void revokes(void)
{
        char t1[32], s1[32], k1[40], want[96];
        struct proc p;

        ctl(&p, RUN_MS, "acquire", "cli-revoke", "--ttl", "60000", "--detach",
            NULL);
        if (!ok(read_lease(&p, "cli-revoke", t1, s1, k1),
                "acquire --detach: a lease of a minute to revoke")) {
                proc_show(&p);
                return;
        }
        ctl(&p, RUN_MS, "revoke", "cli-revoke", NULL);
        snprintf(want, sizeof want, "revoked the grant of session %s", s1);
        if (!ok(p.status == 0 && strstr(p.out, want) != NULL,
                "revoke NAME: exit 0, names the grant it took away")) {
                proc_show(&p);
        }
        ctl(&p, RUN_MS, "holder", "cli-revoke", NULL);
        ok(p.status == 0 && strstr(p.out, "free") != NULL,
           "holder after revoke: free, long before the lease's TTL");
        ctl(&p, RUN_MS, "revoke", "cli-revoke", NULL);
        ok(p.status == 1, "revoke of a free lock: exit 1");
        ctl(&p, RUN_MS, "release", "cli-revoke", t1, "--session", s1,
            "--secret", k1, NULL);
        ok(p.status == 1 && strstr(p.err, "not the holder") != NULL,
           "release of the revoked grant: exit 1, not the holder (its "
           "session lives on)");
        ctl(&p, RUN_MS, "session", "close", s1, NULL);
        ok(p.status == 0, "session close of the revoked grant's session: "
                          "exit 0, it lived on");
        ctl(&p, RUN_MS, "session", "close", s1, NULL);
        ok(p.status == 3 && strstr(p.err, "expired") != NULL,
           "session close again: exit 3, expired");
        ctl(&p, RUN_MS, "session", "open", "1", NULL);
        ok(p.status == 2, "session open: exit 2, close is the one subcommand");
}

/* acquire --detach: a lease lock released by another process with
 * release --session --secret, or freed by the cluster TTL after the exit. */
static void detached_leases(void)
{
        const char *fields[] = {"lock", "token", "session", "secret", NULL};
        struct proc p;
        char name[64], tok[32], sess[32], stale[32], want[160];
        char secret[64], wrong[64];
        unsigned long long token = 0, session = 0;
        int64_t t0;

        ctl(&p, RUN_MS, "acquire", "cli-lease", "--detach", "--ttl", DETACH_TTL,
            NULL);
        if (!ok(p.status == 0 &&
                    sscanf(p.out, "%63s %llu %llu %63s", name, &token, &session,
                           secret) == 4 &&
                    strcmp(name, "cli-lease") == 0 && token > 0 &&
                    session > 0 && strlen(secret) == 32,
                "acquire --detach: exit 0, prints NAME TOKEN SESSION SECRET")) {
                proc_show(&p);
                return;
        }
        snprintf(tok, sizeof tok, "%llu", token);
        snprintf(sess, sizeof sess, "%llu", session);
        snprintf(stale, sizeof stale, "%llu", token - 1);
        snprintf(wrong, sizeof wrong, "%s", secret);
        wrong[0] = wrong[0] == '0' ? '1' : '0';

        ctl(&p, RUN_MS, "holder", "cli-lease", NULL);
        snprintf(want, sizeof want,
                 "cli-lease held by session %s owner 1 token %s ", sess, tok);
        if (!ok(p.status == 0 && strncmp(p.out, want, strlen(want)) == 0,
                "holder: the detached lock is held by its session")) {
                proc_show(&p);
        }

        ctl(&p, RUN_MS, "release", "cli-lease", tok, "--session", sess,
            "--secret", wrong, NULL);
        if (!ok(p.status == 3 && strstr(p.err, "permission denied") != NULL,
                "release with a wrong secret: exit 3, permission denied")) {
                proc_show(&p);
        }
        ctl(&p, RUN_MS, "release", "cli-lease", tok, "--session", sess, NULL);
        if (!ok(p.status == 2, "release without --secret: exit 2")) {
                proc_show(&p);
        }
        ctl(&p, RUN_MS, "release", "cli-lease", stale, "--session", sess,
            "--secret", secret, NULL);
        if (!ok(p.status == 1 && strstr(p.err, "batonctl: release:") != NULL,
                "release with a stale token: exit 1")) {
                proc_show(&p);
        }
        ctl(&p, RUN_MS, "release", "cli-lease", tok, "--session", sess,
            "--secret", secret, NULL);
        if (!ok(p.status == 0 && p.n_err == 0,
                "release NAME TOKEN --session S (another process): exit 0")) {
                proc_show(&p);
        }
        ctl(&p, RUN_MS, "holder", "cli-lease", NULL);
        if (!ok(p.status == 0 && strcmp(p.out, "cli-lease free\n") == 0,
                "holder: free after the release")) {
                proc_show(&p);
        }
        ctl(&p, RUN_MS, "release", "cli-lease", tok, "--session", sess,
            "--secret", secret, NULL);
        if (!ok(p.status == 1 && strstr(p.err, "batonctl: release:") != NULL,
                "a second release: exit 1")) {
                proc_show(&p);
        }

        ctl(&p, RUN_MS, "release", "cli-lease", tok, NULL);
        if (!ok(p.status == 2, "release without --session: exit 2")) {
                proc_show(&p);
        }

        /* JSON, and a lease nobody releases: free once the TTL ran out. */
        ctl(&p, RUN_MS, "--json", "try", "cli-lease2", "--detach", "--ttl",
            DETACH_TTL, NULL);
        if (!ok(p.status == 0 && json_valid(p.out) &&
                    json_has_fields(p.out, fields),
                "--json try --detach: exit 0, lock, token, session, secret")) {
                proc_show(&p);
                return;
        }
        t0 = tclient_now_ms();
        {
                const char *t = strstr(p.out, "\"token\":");
                const char *ss = strstr(p.out, "\"session\":");
                const char *sc = strstr(p.out, "\"secret\":\"");
                token = t != NULL ? strtoull(t + 8, NULL, 10) : 0;
                session = ss != NULL ? strtoull(ss + 10, NULL, 10) : 0;
                snprintf(secret, sizeof secret, "%.32s",
                         sc != NULL ? sc + 10 : "");
        }
        snprintf(tok, sizeof tok, "%llu", token);
        snprintf(sess, sizeof sess, "%llu", session);
        ctl(&p, RUN_MS, "holder", "cli-lease2", NULL);
        if (!ok(p.status == 0 && strstr(p.out, " held by session ") != NULL,
                "holder: held after the detached try exited")) {
                proc_show(&p);
        }
        if (!ok(wait_free("cli-lease2", 3000 + 10000),
                "a detached lock nobody releases is free after the TTL")) {
                return;
        }
        tap_diag("freed %" PRId64 " ms after the detached try",
                 tclient_now_ms() - t0);
        ctl(&p, RUN_MS, "release", "cli-lease2", tok, "--session", sess,
            "--secret", secret, NULL);
        if (!ok(p.status == 1 && strstr(p.err, "already ended") != NULL,
                "release after the lease expired: exit 1, says it ended")) {
                proc_show(&p);
        }
}

static void status_and_members(void)
{
        const char *status_fields[] = {
            "endpoint",  "id",      "role",    "term",     "leader",
            "commit",    "applied", "last",    "sessions", "locks",
            "waiters",   "version", "formats", "command",  "snapshot",
            "container", NULL};
        const char *member_fields[] = {"id",     "role",   "raft",
                                       "client", "leader", NULL};
        struct proc p;
        unsigned i, listed = 0, leaders;
        char want[64];

        ctl(&p, RUN_MS, "status", NULL);
        for (i = 1; i <= cluster.n; i++) {
                listed +=
                    strstr(p.out, harness_client_address(&cluster, i)) != NULL;
        }
        if (!ok(p.status == 0 && listed == cluster.n &&
                    count_of(p.out, "\n") == cluster.n &&
                    count_of(p.out, "role=leader") == 1,
                "status: exit 0, every node on a line, one leader")) {
                proc_show(&p);
        }
        if (!ok(count_of(p.out, " version=" PACKAGE_VERSION
                                " command=3 snapshot=") == cluster.n,
                "status: every node's release and formats")) {
                proc_show(&p);
        }

        ctl(&p, RUN_MS, "--json", "status", NULL);
        listed = 0;
        for (i = 1; i <= cluster.n; i++) {
                snprintf(want, sizeof want, "\"endpoint\":\"%s\"",
                         harness_client_address(&cluster, i));
                listed += strstr(p.out, want) != NULL;
        }
        if (!ok(p.status == 0 && json_valid(p.out) && p.out[0] == '[' &&
                    listed == cluster.n &&
                    count_of(p.out, "\"endpoint\":") == cluster.n &&
                    json_has_fields(p.out, status_fields),
                "--json status: valid JSON array listing every node")) {
                proc_show(&p);
        }

        ctl(&p, RUN_MS, "member", "list", NULL);
        listed = 0;
        for (i = 1; i <= cluster.n; i++) {
                snprintf(want, sizeof want, "client=%s",
                         harness_client_address(&cluster, i));
                listed += strstr(p.out, want) != NULL;
        }
        leaders = count_of(p.out, " leader\n");
        if (!ok(p.status == 0 && listed == cluster.n &&
                    count_of(p.out, " voter ") == cluster.n && leaders == 1,
                "member list: exit 0, every node a voter, one leader")) {
                proc_show(&p);
        }
        ctl(&p, RUN_MS, "--json", "member", "list", NULL);
        if (!ok(p.status == 0 && json_valid(p.out) &&
                    count_of(p.out, "\"client\":") == cluster.n &&
                    count_of(p.out, "\"leader\":true") == 1 &&
                    json_has_fields(p.out, member_fields),
                "--json member list: valid JSON, every node, one leader")) {
                proc_show(&p);
        }
}

/* A usage error: exit `status`, and on stderr one line saying what is
 * wrong that contains each of `want` (NULL-terminated), then one line
 * pointing to --help; never the whole usage text. One test, `what`. */
static void usage_error(const struct proc *p, int status,
                        const char *const *want, const char *what)
{
        const char *nl = strchr(p->err, '\n');
        const char *missing = NULL;
        bool good = p->status == status && count_of(p->err, "\n") == 2 &&
                    strncmp(p->err, "batonctl: ", 10) == 0 &&
                    strstr(p->err, "--help") != NULL &&
                    strstr(p->err, "Exit status") == NULL && p->n_out == 0;

        for (; *want != NULL && missing == NULL; want++) {
                const char *at = strstr(p->err, *want);
                if (at == NULL || at > nl) {
                        missing = *want;
                }
        }
        if (!ok(good && missing == NULL, "%s", what)) {
                if (missing != NULL) {
                        tap_diag("the first line lacks \"%s\"", missing);
                }
                proc_show(p);
        }
}

#define WANT(...) ((const char *const[]){__VA_ARGS__, NULL})

static void usage_errors(void)
{
        const char *none[] = {NULL};
        const char *bad_opt[] = {"--bogus", "status", NULL};
        const char *bad_json[] = {"--json=yes", "status", NULL};
        struct proc p;

        proc_start(&p, batonctl, 0, NULL, none);
        proc_wait(&p, RUN_MS);
        usage_error(&p, 2, WANT("no command"),
                    "no command: exit 2, one line says so");
        proc_start(&p, batonctl, 0, NULL, bad_opt);
        proc_wait(&p, RUN_MS);
        usage_error(&p, 2, WANT("unknown option --bogus"),
                    "unknown global option: exit 2, one line names it");
        proc_start(&p, batonctl, 0, NULL, bad_json);
        proc_wait(&p, RUN_MS);
        usage_error(&p, 2, WANT("--json takes no value"),
                    "--json=yes: exit 2, one line says --json takes no value");
        ctl(&p, RUN_MS, "frobnicate", "x", NULL);
        usage_error(&p, 2, WANT("unknown command \"frobnicate\""),
                    "unknown command: exit 2, one line names it");
        ctl(&p, RUN_MS, "holder", NULL);
        usage_error(
            &p, 2, WANT("holder", "too few", "NAME"),
            "holder without a name: exit 2, one line says what is missing");
        ctl(&p, RUN_MS, "holder", "x", "y", NULL);
        usage_error(&p, 2, WANT("holder", "unexpected argument \"y\""),
                    "holder with two names: exit 2, one line names the extra");
        ctl(&p, RUN_MS, "check", "x", "notanumber", NULL);
        usage_error(
            &p, 2,
            WANT("check: TOKEN", "\"notanumber\"", "not a number",
                 "0 to 18446744073709551615"),
            "check with a bad token: exit 2, one line names TOKEN and its "
            "range");
        ctl(&p, RUN_MS, "acquire", "x", "--ttl", NULL);
        usage_error(&p, 2, WANT("--ttl needs a value"),
                    "acquire --ttl without a value: exit 2, one line says so");
        ctl(&p, RUN_MS, "release", "x", "5", NULL);
        usage_error(&p, 2, WANT("--session and --secret are required"),
                    "release without --session: exit 2, one line says so");
        ctl(&p, RUN_MS, "holder", "x", "--ttl", "5000", NULL);
        usage_error(&p, 2, WANT("--ttl is not an option of holder"),
                    "holder --ttl: exit 2, one line says it does not apply");
        ctl(&p, RUN_MS, "lock", "x", "--detach", "--", "true", NULL);
        usage_error(&p, 125, WANT("--detach is not an option of lock"),
                    "lock --detach: exit 125 (lock's usage status), one line");
        /* Without --, the command reads as more names of a multi-lock. */
        ctl(&p, RUN_MS, "lock", "x", "true", NULL);
        usage_error(&p, 125, WANT("no command to run", "after --"),
                    "lock without --: exit 125, one line says where CMD goes");
        ctl(&p, RUN_MS, "lock", "a", "b", "--permits", "3", "--", "true", NULL);
        usage_error(&p, 125, WANT("multi-lock", "--permits"),
                    "lock A B --permits: exit 125, a multi-lock takes no "
                    "permits");
}

/* Every number is checked in full and against its range, wherever the
 * option stands: 4294967297 is not taken for --ttl 1. */
static void bad_numbers(void)
{
        struct proc p;

        ctl(&p, RUN_MS, "try", "cli-num", "--ttl", "4294967297", NULL);
        usage_error(
            &p, 2,
            WANT("--ttl", "4294967297", "out of range", "1 to 4294967295 ms"),
            "--ttl 4294967297: exit 2, out of range 1 to 4294967295 ms");
        ctl(&p, RUN_MS, "--ttl=0", "acquire", "cli-num", NULL);
        usage_error(&p, 2, WANT("--ttl", "out of range"),
                    "--ttl=0 before the command: exit 2, out of range");
        ctl(&p, RUN_MS, "acquire", "cli-num", "--wait", "-5", NULL);
        usage_error(
            &p, 2,
            WANT("--wait", "\"-5\"", "not a number", "0 to 4294967294 ms"),
            "--wait -5: exit 2, not a number, with the range");
        ctl(&p, RUN_MS, "acquire", "cli-num", "--wait", "4294967295", NULL);
        usage_error(&p, 2, WANT("--wait", "out of range"),
                    "--wait 4294967295 (libbaton's limit): exit 2");
        ctl(&p, RUN_MS, "acquire", "cli-num", "--wait=12abc", NULL);
        usage_error(&p, 2, WANT("--wait", "\"12abc\"", "not a number"),
                    "--wait=12abc: exit 2, trailing junk refused");
        ctl(&p, RUN_MS, "acquire", "cli-num", "--ttl", "+5000", NULL);
        usage_error(&p, 2, WANT("--ttl", "\"+5000\""),
                    "--ttl +5000: exit 2, no sign accepted");
        ctl(&p, RUN_MS, "acquire", "cli-num", "--ttl", "", NULL);
        usage_error(&p, 2, WANT("--ttl", "\"\"", "not a number"),
                    "--ttl '': exit 2");
        ctl(&p, RUN_MS, "--timeout", "99999999999999999999", "holder", "x",
            NULL);
        usage_error(
            &p, 2, WANT("--timeout", "out of range", "1 to 2147483647 ms"),
            "--timeout 99999999999999999999 (overflow): exit 2, the range");
        ctl(&p, RUN_MS, "check", "x", "18446744073709551616", NULL);
        usage_error(&p, 2, WANT("check: TOKEN", "18446744073709551616"),
                    "check with a token of 2^64: exit 2, not wrapped");
        ctl(&p, RUN_MS, "release", "x", "5", "--session", "0", NULL);
        usage_error(&p, 2, WANT("--session", "1 to 18446744073709551615"),
                    "--session 0: exit 2, range from 1");
        ctl(&p, RUN_MS, "member", "remove", "0", NULL);
        usage_error(&p, 2, WANT("member remove: ID", "out of range"),
                    "member remove 0: exit 2");
        ctl(&p, RUN_MS, "transfer", "-1", NULL);
        usage_error(&p, 2, WANT("unknown option -1"), "transfer -1: exit 2");
        ctl(&p, RUN_MS, "lock", "cli-num", "--grace", "4294967296", "--",
            "true", NULL);
        usage_error(&p, 125, WANT("--grace", "0 to 4294967295 ms"),
                    "lock --grace 4294967296: exit 125 with the range");
}

/* Options before or after the command and its arguments, as --opt VALUE
 * or --opt=VALUE. */
static void options_anywhere(void)
{
        const char *after[] = {"holder",      "cli-opt", "--json",
                               "--endpoints", NULL,      NULL};
        const char *equals[] = {NULL, "--timeout=3000", "check", "cli-opt", "1",
                                NULL};
        char ep[sizeof cluster.endpoints + 16];
        char name[64], tok[32], sess[32], secret[64], secret_opt[80];
        unsigned long long token = 0, session = 0;
        struct proc p;

        after[4] = cluster.endpoints;
        proc_start(&p, batonctl, 0, NULL, after);
        proc_wait(&p, RUN_MS);
        if (!ok(p.status == 0 && json_valid(p.out) &&
                    strstr(p.out, "\"held\":false") != NULL,
                "holder NAME --json --endpoints E: options after the name")) {
                proc_show(&p);
        }
        snprintf(ep, sizeof ep, "--endpoints=%s", cluster.endpoints);
        equals[0] = ep;
        proc_start(&p, batonctl, 0, NULL, equals);
        proc_wait(&p, RUN_MS);
        if (!ok(p.status == 1 && strcmp(p.out, "cli-opt 1 stale\n") == 0,
                "--endpoints=E --timeout=3000 check NAME 1: exit 1, stale")) {
                proc_show(&p);
        }

        ctl(&p, RUN_MS, "--ttl=3000", "try", "--detach", "cli-opt", NULL);
        if (!ok(p.status == 0 &&
                    sscanf(p.out, "%63s %llu %llu %63s", name, &token, &session,
                           secret) == 4 &&
                    strcmp(name, "cli-opt") == 0,
                "--ttl=3000 try --detach NAME: exit 0, NAME TOKEN SESSION")) {
                proc_show(&p);
                return;
        }
        snprintf(tok, sizeof tok, "%llu", token);
        snprintf(sess, sizeof sess, "--session=%llu", session);
        snprintf(secret_opt, sizeof secret_opt, "--secret=%s", secret);
        ctl(&p, RUN_MS, sess, secret_opt, "release", "cli-opt", tok, NULL);
        if (!ok(p.status == 0,
                "--session=S release NAME TOKEN: exit 0 (option first)")) {
                proc_show(&p);
        }
        ctl(&p, RUN_MS, "--wait", "5000", "lock", "cli-opt", "--grace=100",
            "--", "sh", "-c", "exit 3", NULL);
        if (!ok(p.status == 3,
                "--wait 5000 lock NAME --grace=100 -- CMD: the command's "
                "status")) {
                proc_show(&p);
        }
        ctl(&p, RUN_MS, "lock", "cli-opt", "--", "sh", "-c",
            "test \"$1\" = --json", "sh", "--json", NULL);
        if (!ok(p.status == 0 && p.n_out == 0,
                "lock NAME -- CMD --json: options after -- are CMD's")) {
                proc_show(&p);
        }
}

/* --json is UTF-8: names that are valid UTF-8 pass through, others get
 * U+FFFD and their exact bytes in "lock_hex". */
static void json_names(void)
{
        const char *utf8 = "cli-caf\xc3\xa9-\xe6\x97\xa5";
        const char *latin1 = "cli-caf\xe9";
        const char *want_latin1 = "{\"lock\":\"cli-caf\xef\xbf\xbd\","
                                  "\"lock_hex\":\"636c692d636166e9\","
                                  "\"held\":false,";
        char want[128], tok[2][32], sess[2][32], secret[2][40];
        unsigned long long token, session;
        const char *names[2], *at;
        struct proc p;
        unsigned i;

        ctl(&p, RUN_MS, "--json", "holder", utf8, NULL);
        snprintf(want, sizeof want, "{\"lock\":\"%s\",\"held\":false,", utf8);
        if (!ok(p.status == 0 && json_valid(p.out) && utf8_valid(p.out) &&
                    strncmp(p.out, want, strlen(want)) == 0 &&
                    strstr(p.out, "lock_hex") == NULL,
                "--json holder of a UTF-8 name: the name as it is")) {
                proc_show(&p);
        }
        ctl(&p, RUN_MS, "--json", "holder", latin1, NULL);
        if (!ok(p.status == 0 && json_valid(p.out) && utf8_valid(p.out) &&
                    strncmp(p.out, want_latin1, strlen(want_latin1)) == 0,
                "--json holder of a Latin-1 name: U+FFFD and lock_hex")) {
                proc_show(&p);
        }
        ctl(&p, RUN_MS, "--json", "check", "cli-\x01\x1b[1m\x7f", "1", NULL);
        if (!ok(p.status == 1 && json_valid(p.out) &&
                    strstr(p.out, "\"cli-\\u0001\\u001b[1m\\u007f\"") != NULL,
                "--json check: control characters escaped")) {
                proc_show(&p);
        }

        /* The same in a listing, of locks held. */
        names[0] = utf8;
        names[1] = latin1;
        for (i = 0; i < 2; i++) {
                ctl(&p, RUN_MS, "--json", "try", names[i], "--detach", NULL);
                token = session = 0;
                at = strstr(p.out, "\"token\":");
                if (!ok(p.status == 0 && json_valid(p.out) &&
                            utf8_valid(p.out) &&
                            (strstr(p.out, "\"lock_hex\":") != NULL) ==
                                (i == 1) &&
                            at != NULL &&
                            sscanf(at, "\"token\":%llu,\"session\":%llu",
                                   &token, &session) == 2,
                        "--json try --detach name %u: valid, token, session",
                        i)) {
                        proc_show(&p);
                        return;
                }
                snprintf(tok[i], sizeof tok[i], "%llu", token);
                snprintf(sess[i], sizeof sess[i], "%llu", session);
                at = strstr(p.out, "\"secret\":\"");
                snprintf(secret[i], sizeof secret[i], "%.32s",
                         at != NULL ? at + 10 : "");
        }
        ctl(&p, RUN_MS, "--json", "list", "cli-caf", NULL);
        if (!ok(p.status == 0 && json_valid(p.out) && utf8_valid(p.out) &&
                    count_of(p.out, "\"lock\":") == 2 &&
                    count_of(p.out, "\"lock_hex\":\"636c692d636166e9\"") == 1,
                "--json list: both names, valid UTF-8, one lock_hex")) {
                proc_show(&p);
        }
        for (i = 0; i < 2; i++) {
                ctl(&p, RUN_MS, "release", names[i], tok[i], "--session",
                    sess[i], "--secret", secret[i], NULL);
                if (!ok(p.status == 0, "release name %u", i)) {
                        proc_show(&p);
                }
        }
}

/* --version: batonctl's and libbaton's; batond's and its libraries',
 * without any configuration. */
static void versions(void)
{
        const char *const only[] = {"--version", NULL};
        const char *const late[] = {"holder", "x", "--version", NULL};
        const char *const id_only[] = {"--id", "1", "--version", NULL};
        const char *const no_file[] = {"--config", "/nonexistent/baton.conf",
                                       "--version", NULL};
        const char *want_ctl =
            "batonctl " PACKAGE_VERSION " (libbaton " PACKAGE_VERSION ")\n";
        const char *want_d = "batond " PACKAGE_VERSION " (libraft 0.";
        struct proc p;

        proc_start(&p, batonctl, 0, NULL, only);
        proc_wait(&p, RUN_MS);
        if (!ok(p.status == 0 && strcmp(p.out, want_ctl) == 0 && p.n_err == 0,
                "batonctl --version: exit 0, batonctl and libbaton versions")) {
                proc_show(&p);
        }
        proc_start(&p, batonctl, 0, NULL, late);
        proc_wait(&p, RUN_MS);
        if (!ok(p.status == 0 && strcmp(p.out, want_ctl) == 0,
                "batonctl holder x --version: the version, nothing asked")) {
                proc_show(&p);
        }
        proc_start(&p, cluster.batond, 0, NULL, only);
        proc_wait(&p, RUN_MS);
        if (!ok(p.status == 0 && strncmp(p.out, want_d, strlen(want_d)) == 0 &&
                    strstr(p.out, ", libuv 1.") != NULL &&
                    strstr(p.out, ", liblz4 1.") != NULL && p.n_err == 0,
                "batond --version: exit 0, libraft, libuv and liblz4")) {
                proc_show(&p);
        }
        proc_start(&p, cluster.batond, 0, NULL, id_only);
        proc_wait(&p, RUN_MS);
        if (!ok(p.status == 0 && strncmp(p.out, want_d, strlen(want_d)) == 0,
                "batond --id 1 --version: exit 0 without the other keys")) {
                proc_show(&p);
        }
        proc_start(&p, cluster.batond, 0, NULL, no_file);
        proc_wait(&p, RUN_MS);
        if (!ok(p.status == 0 && strncmp(p.out, want_d, strlen(want_d)) == 0,
                "batond --config MISSING --version: exit 0, nothing read")) {
                proc_show(&p);
        }
}

/* BATON_ENDPOINTS: used without --endpoints, which wins over it. */
static void endpoints_env(void)
{
        struct proc p;
        unsigned i, listed = 0;

        run_env(&p, batonctl, cluster.endpoints, "status", NULL);
        for (i = 1; i <= cluster.n; i++) {
                listed +=
                    strstr(p.out, harness_client_address(&cluster, i)) != NULL;
        }
        if (!ok(p.status == 0 && listed == cluster.n &&
                    count_of(p.out, "\n") == cluster.n,
                "BATON_ENDPOINTS=E status: every node of E")) {
                proc_show(&p);
        }
        run_env(&p, batonctl, "127.0.0.1:1", "--endpoints", cluster.endpoints,
                "holder", "cli-env", NULL);
        if (!ok(p.status == 0 && strcmp(p.out, "cli-env free\n") == 0,
                "--endpoints wins over BATON_ENDPOINTS")) {
                proc_show(&p);
        }
        run_env(&p, batonctl, "garbage", "holder", "cli-env", NULL);
        if (!ok(p.status == 2 && strstr(p.err, "\"garbage\"") != NULL &&
                    strstr(p.err, "BATON_ENDPOINTS") != NULL,
                "BATON_ENDPOINTS=garbage: exit 2, names the value and where "
                "it came from")) {
                proc_show(&p);
        }
        if (access(bench, X_OK) != 0) {
                tap_diag("no baton-bench at %s: its BATON_ENDPOINTS not tried",
                         bench);
                return;
        }
        run_env(&p, bench, cluster.endpoints, "--duration", "0.3", "--warmup",
                "0", "--prefix", "cli-bench", NULL);
        if (!ok(p.status == 0 && strstr(p.out, "\"errors\":0,") != NULL &&
                    strstr(p.out, "\"ops\":0,") == NULL,
                "BATON_ENDPOINTS=E baton-bench: ops, no errors")) {
                proc_show(&p);
        }
        run_env(&p, bench, "127.0.0.1:1", "--endpoints", cluster.endpoints,
                "--duration", "0.3", "--warmup", "0", "--prefix", "cli-bench",
                NULL);
        if (!ok(p.status == 0 && strstr(p.out, "\"errors\":0,") != NULL &&
                    strstr(p.out, "\"ops\":0,") == NULL,
                "baton-bench: --endpoints wins over BATON_ENDPOINTS")) {
                proc_show(&p);
        }
        run_env(&p, bench, "garbage", "--duration", "0.3", NULL);
        if (!ok(p.status == 2 && strstr(p.err, "BATON_ENDPOINTS") != NULL,
                "BATON_ENDPOINTS=garbage baton-bench: exit 2, says so")) {
                proc_show(&p);
        }
}

/* holder and list name the holder's client: a session opened as
 * "build-42" holds a lock. */
static void client_names(void)
{
        struct tclient c;
        struct tclient_result r;
        struct proc p;
        int rv;

        if (tclient_init(&c, cluster.endpoints) != 0) {
                ok(false, "tclient_init");
                return;
        }
        rv = tclient_session_open(&c, 10000, "build-42", RUN_MS, &r);
        if (rv == 0) {
                rv = tclient_acquire(&c, "cli-names", 1, 0, RUN_MS, &r);
        }
        if (!ok(rv == 0, "a session named build-42 holds cli-names")) {
                tap_diag("%d %s", rv, c.errmsg);
                tclient_close(&c);
                return;
        }
        ctl(&p, RUN_MS, "holder", "cli-names", NULL);
        if (!ok(p.status == 0 && strstr(p.out, " client build-42\n") != NULL,
                "holder: ends with client build-42")) {
                proc_show(&p);
        }
        ctl(&p, RUN_MS, "--json", "holder", "cli-names", NULL);
        if (!ok(p.status == 0 &&
                    strstr(p.out, "\"client_name\":\"build-42\"") != NULL,
                "holder --json: \"client_name\":\"build-42\"")) {
                proc_show(&p);
        }
        ctl(&p, RUN_MS, "list", "cli-names", NULL);
        if (!ok(p.status == 0 && strstr(p.out, "cli-names session ") == p.out &&
                    strstr(p.out, " client build-42\n") != NULL,
                "list: the line ends with client build-42")) {
                proc_show(&p);
        }
        ctl(&p, RUN_MS, "--json", "list", "cli-names", NULL);
        if (!ok(p.status == 0 &&
                    strstr(p.out, "\"client_name\":\"build-42\"") != NULL,
                "list --json: \"client_name\":\"build-42\"")) {
                proc_show(&p);
        }
        tclient_session_close(&c, RUN_MS, &r);
        tclient_close(&c);
}

/* Run batonctl `args` with the TLS variables cleared. */
static void run_without_tls_env(struct proc *p, const char *const *args)
{
        proc_run(p, batonctl, PROC_NO_TLS_ENV, RUN_MS, NULL, args);
}

/* --cacert, --cert and --key, over the environment or without it; a node
 * that requires TLS says so to a plain client. */
static void tls_flags(void)
{
        char ca[300], cert[300], key[300], wrong[300];
        struct proc p;

        if (!tlsfiles_on()) {
                tap_diag("the cluster runs without TLS: TLS flags not tried");
                return;
        }
        snprintf(ca, sizeof ca, "%s/ca.crt", tlsfiles_dir());
        snprintf(cert, sizeof cert, "%s/admin.crt", tlsfiles_dir());
        snprintf(key, sizeof key, "%s/admin.key", tlsfiles_dir());
        snprintf(wrong, sizeof wrong, "%s/node1.key", tlsfiles_dir());
        const char *flags_only[] = {
            "--endpoints", cluster.endpoints, "--cacert", ca,       "--cert",
            cert,          "--key",           key,        "holder", "cli-tls",
            NULL};
        run_without_tls_env(&p, flags_only);
        if (!ok(p.status == 0 && strcmp(p.out, "cli-tls free\n") == 0,
                "--cacert --cert --key without the environment")) {
                proc_show(&p);
        }
        ctl(&p, RUN_MS, "--key", wrong, "holder", "cli-tls", NULL);
        if (!ok(p.status == 2 && strstr(p.err, "node1.key") != NULL &&
                    strstr(p.err, "does not match") != NULL,
                "--key of another certificate over BATON_KEY: exit 2, names "
                "the file")) {
                proc_show(&p);
        }
        const char *partial[] = {"--endpoints", cluster.endpoints, "--cert",
                                 cert,          "holder",          "cli-tls",
                                 NULL};
        run_without_tls_env(&p, partial);
        if (!ok(p.status == 2 && strstr(p.err, "--cacert") != NULL,
                "--cert alone: exit 2, says which are missing")) {
                proc_show(&p);
        }
        const char *plain[] = {"--endpoints", cluster.endpoints, "--timeout",
                               "1500",        "holder",          "cli-tls",
                               NULL};
        run_without_tls_env(&p, plain);
        if (!ok(p.status == 3 && strstr(p.err, "TLS") != NULL,
                "no TLS files against TLS nodes: exit 3, says TLS")) {
                proc_show(&p);
        }
}

static void unreachable(void)
{
        const char *holder[] = {"--endpoints", "127.0.0.1:1", "--timeout",
                                "500",         "holder",      "x",
                                NULL};
        const char *status[] = {"--endpoints", "127.0.0.1:1", "--timeout",
                                "500",         "status",      NULL};
        struct proc p;

        proc_start(&p, batonctl, 0, NULL, holder);
        proc_wait(&p, RUN_MS);
        if (!ok(p.status == 3 && p.elapsed_ms < 5000 && p.n_err > 0,
                "holder on an unreachable cluster: exit 3 in %" PRId64
                " ms (< 5000), with a message",
                p.elapsed_ms)) {
                proc_show(&p);
        }
        proc_start(&p, batonctl, 0, NULL, status);
        proc_wait(&p, RUN_MS);
        if (!ok(p.status == 3 && p.elapsed_ms < 5000,
                "status on an unreachable cluster: exit 3 in %" PRId64
                " ms (< 5000)",
                p.elapsed_ms)) {
                proc_show(&p);
        }
}

/*
 * lock --ttl 2000 -- CMD, then SIGSTOP every node: no keepalive can be
 * acknowledged any more. The cluster could expire the session at the
 * earliest at (send time of the last acknowledged keepalive) + TTL; that
 * send happened before the first SIGSTOP, so we take t_stop + TTL, and
 * also show the margin against t_stop + 2/3 TTL (keepalives are sent every
 * TTL/3, so the last acknowledged one may be that old). With
 * `ignore_term`, the command ignores SIGTERM and must be SIGKILLed before
 * the lease runs out, whatever --grace says.
 */

static void lock_lost(bool ignore_term)
{
        const char *cmd = ignore_term
                              ? "trap '' TERM; echo $$ $BATON_DEADLINE_MS; "
                                "exec sleep 60"
                              : "echo $$ $BATON_DEADLINE_MS; exec sleep 60";
        const char *name = ignore_term ? "cli-lost-kill" : "cli-lost-term";
        const char *what = ignore_term ? "SIGTERM ignored" : "sleep";
        char ttl[16];
        const char *args[] = {"--endpoints", cluster.endpoints,
                              "lock",        name,
                              "--ttl",       ttl,
                              "--grace",     "5000",
                              "--",          "sh",
                              "-c",          cmd,
                              NULL};
        struct proc p;
        int64_t t_stop, t_dead = -1, t_read, lease_left, eff_ttl;
        unsigned i, leader;
        long long deadline = 0;
        int child = 0;

        snprintf(ttl, sizeof ttl, "%d", LOSS_TTL);
        if (proc_start(&p, batonctl, 0, NULL, args) != 0 ||
            !proc_wait_line(&p, RUN_MS) ||
            sscanf(p.out, "%d %lld", &child, &deadline) != 2 || child <= 1) {
                ok(false, "lock (%s): the command started and printed $$",
                   what);
                kill(p.pid, SIGKILL);
                proc_wait(&p, RUN_MS);
                proc_show(&p);
                return;
        }
        t_read = wall_ms();
        stray_child = child;
        lease_left = deadline - t_read;
        ok(lease_left <= LOSS_TTL,
           "lock --ttl %d (%s): BATON_DEADLINE_MS is within the TTL "
           "(%" PRId64 " ms left)",
           LOSS_TTL, what, lease_left);
        eff_ttl = LOSS_TTL;
        /* Some keepalives go through: the session is in its steady state. */
        tclient_sleep_ms(LOSS_TTL / 2);
        if (!ok(!proc_gone(child) && waitpid(p.pid, NULL, WNOHANG) == 0,
                "lock (%s): the command runs while the cluster is up", what)) {
                proc_wait(&p, RUN_MS);
                proc_show(&p);
                return;
        }

        t_stop = tclient_now_ms();
        for (i = 1; i <= cluster.n; i++) {
                harness_pause(&cluster, i);
        }
        while (tclient_now_ms() < t_stop + eff_ttl + 1000) {
                if (proc_gone(child)) {
                        t_dead = tclient_now_ms();
                        break;
                }
                proc_read(&p, 0);
                usleep(1000);
        }
        if (t_dead < 0) {
                tap_diag("the command (pid %d) still runs %" PRId64
                         " ms after SIGSTOP",
                         child, eff_ttl + 1000);
                kill(child, SIGKILL);
        } else {
                stray_child = 0;
                tap_diag("lock (%s), session TTL %" PRId64
                         " ms: SIGSTOP to child death %" PRId64
                         " ms; margin before t_stop + TTL %" PRId64
                         " ms; before t_stop + 2/3 TTL %" PRId64 " ms",
                         what, eff_ttl, t_dead - t_stop,
                         t_stop + eff_ttl - t_dead,
                         t_stop + eff_ttl * 2 / 3 - t_dead);
        }
        ok(t_dead >= 0 && t_dead < t_stop + LOSS_TTL,
           "lock --ttl %d (%s), every node stopped: the command is dead "
           "within %d ms of SIGSTOP",
           LOSS_TTL, what, LOSS_TTL);
        ok(t_dead >= 0 && t_dead < t_stop + eff_ttl,
           "lock (%s), every node stopped: the command is dead before the "
           "session (TTL %" PRId64 " ms) could expire",
           what, eff_ttl);

        proc_wait(&p, RUN_MS);
        if (!ok(p.status == 121 && strstr(p.err, "lost") != NULL,
                "lock (%s): batonctl exits 121 and says the lock was lost",
                what)) {
                proc_show(&p);
        } else {
                tap_diag("batonctl exited %" PRId64 " ms after SIGSTOP",
                         p.started_ms + p.elapsed_ms - t_stop);
        }

        for (i = 1; i <= cluster.n; i++) {
                harness_resume(&cluster, i);
        }
        if (!ok(harness_wait_healthy(&cluster, HEALTHY_MS, &leader) == 0,
                "the cluster recovers after SIGCONT")) {
                tap_diag("%s", cluster.errmsg);
                return;
        }
        /* The session's TTL has run out: the cluster frees the lock. */
        {
                int64_t end = tclient_now_ms() + eff_ttl + 5000;
                struct proc h;
                bool freed = false;

                while (!freed && tclient_now_ms() < end) {
                        ctl(&h, RUN_MS, "holder", name, NULL);
                        freed =
                            h.status == 0 && strstr(h.out, " free\n") != NULL;
                        if (!freed) {
                                tclient_sleep_ms(200);
                        }
                }
                ok(freed,
                   "lock (%s): the lock is freed once the session expires",
                   what);
        }
}

static void cleanup(void)
{
        if (stray_child > 0 && !proc_gone(stray_child)) {
                kill(stray_child, SIGKILL);
        }
}

int main(int argc, char **argv)
{
        int64_t t0 = tclient_now_ms();
        const char *b;
        unsigned leader;

        (void)argc;
        batonctl = ctlcluster_program("BATONCTL", "./batonctl");
        if (batonctl == NULL) {
                return 0;
        }
        b = getenv("BATON_BENCH");
        if (b != NULL && *b != '\0') {
                bench = b;
        }
        atexit(cleanup);
        if (ctlcluster_open(&cluster, argv[0], WATCHDOG_S, &leader) != 0) {
                return 1;
        }
        tap_diag("cluster %s, leader %u, batonctl %s", cluster.endpoints,
                 leader, batonctl);

        lock_env();
        lock_status();
        hold_and_query();
        list_locks();
        detached_leases();
        shared_locks();
        semaphores();
        multi_locks();
        elections();
        watch_and_observe();
        revokes();
        status_and_members();
        usage_errors();
        bad_numbers();
        options_anywhere();
        json_names();
        versions();
        endpoints_env();
        tls_flags();
        client_names();
        unreachable();
        lock_lost(false);
        lock_lost(true);

        return ctlcluster_close(&cluster, &tap, false, t0);
}
