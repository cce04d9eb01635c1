/*
 * batonctl against a live 3-node cluster (tests/integration/harness): the
 * built binary ($BATONCTL, or ./batonctl in the build dir) is run with
 * --endpoints of the cluster and its exit status, stdout and stderr are
 * checked: lock -- CMD (environment, the command's status passed through,
 * 127), try on a held lock, acquire ended by SIGTERM, holder, check,
 * status and member list (text and JSON), usage errors, an unreachable
 * cluster, and, most important, `lock --ttl 2000 -- CMD` while every node
 * is SIGSTOPped: the command must be dead before the cluster could expire
 * the session, and batonctl must exit 121. Prints TAP.
 *
 * Every wait is bounded; a watchdog (BATON_TEST_WATCHDOG seconds, default
 * 180) bails out of a hung run, and the harness kills every node by PID on
 * any exit. Environment as the integration tests: BATOND,
 * BATON_TEST_BASE_PORT, BATON_TEST_TMPDIR.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
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

#define WATCHDOG_S 180
#define HEALTHY_MS 20000
#define RUN_MS     20000 /* a batonctl run that should end on its own */
#define OUT_MAX    16384
#define LOSS_TTL   2000

static struct harness cluster;
static const char *batonctl = "./batonctl";
static unsigned tests_run, tests_failed;
static pid_t stray_child; /* a lock's command, killed at exit if alive */

/* --- TAP ------------------------------------------------------------------ */

static bool vok(bool cond, const char *fmt, va_list ap)
{
        tests_run++;
        if (!cond) {
                tests_failed++;
        }
        printf("%s %u - ", cond ? "ok" : "not ok", tests_run);
        vprintf(fmt, ap);
        printf("\n");
        fflush(stdout);
        return cond;
}

static bool ok(bool cond, const char *fmt, ...)
{
        va_list ap;
        bool r;

        va_start(ap, fmt);
        r = vok(cond, fmt, ap);
        va_end(ap);
        return r;
}
static void diag(const char *fmt, ...)
{
        va_list ap;

        printf("# ");
        va_start(ap, fmt);
        vprintf(fmt, ap);
        va_end(ap);
        printf("\n");
        fflush(stdout);
}

static int64_t now_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int64_t wall_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_REALTIME, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(int ms)
{
        struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};

        while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
        }
}

/* --- Running batonctl ----------------------------------------------------- */

struct proc {
        pid_t pid;
        int out_fd, err_fd;
        char out[OUT_MAX];
        char err[OUT_MAX];
        size_t n_out, n_err;
        int status; /* exit code, 128 + signal, or -1: did not end in time */
        int64_t started_ms, elapsed_ms;
};

/* Start batonctl with `args` (NULL-terminated, after the program name). */
static int proc_start(struct proc *p, const char *const *args)
{
        const char *argv[64];
        int out[2], err[2];
        unsigned n = 0;

        memset(p, 0, sizeof *p);
        p->status = -1;
        argv[n++] = batonctl;
        while (*args != NULL && n < 63) {
                argv[n++] = *args++;
        }
        argv[n] = NULL;
        if (pipe(out) != 0 || pipe(err) != 0) {
                return -1;
        }
        p->started_ms = now_ms();
        p->pid = fork();
        if (p->pid < 0) {
                return -1;
        }
        if (p->pid == 0) {
                dup2(out[1], 1);
                dup2(err[1], 2);
                close(out[0]);
                close(out[1]);
                close(err[0]);
                close(err[1]);
                execv(batonctl, (char *const *)argv);
                fprintf(stderr, "exec %s: %s\n", batonctl, strerror(errno));
                _exit(99);
        }
        close(out[1]);
        close(err[1]);
        p->out_fd = out[0];
        p->err_fd = err[0];
        return 0;
}

/* Read what is there on stdout/stderr for up to timeout_ms. */
static void proc_read(struct proc *p, int timeout_ms)
{
        struct pollfd fds[2] = {{p->out_fd, POLLIN, 0}, {p->err_fd, POLLIN, 0}};
        int i;

        if (poll(fds, 2, timeout_ms) <= 0) {
                return;
        }
        for (i = 0; i < 2; i++) {
                char *buf = i == 0 ? p->out : p->err;
                size_t *len = i == 0 ? &p->n_out : &p->n_err;
                ssize_t r;

                if (fds[i].fd < 0 ||
                    (fds[i].revents & (POLLIN | POLLHUP)) == 0) {
                        continue;
                }
                r = read(fds[i].fd, buf + *len, OUT_MAX - 1 - *len);
                if (r > 0) {
                        *len += (size_t)r;
                        buf[*len] = '\0';
                } else {
                        close(fds[i].fd);
                        if (i == 0) {
                                p->out_fd = -1;
                        } else {
                                p->err_fd = -1;
                        }
                }
        }
}

/* Wait until stdout holds a full line (up to timeout_ms). */
static bool proc_wait_line(struct proc *p, int timeout_ms)
{
        int64_t end = now_ms() + timeout_ms;

        while (strchr(p->out, '\n') == NULL && now_ms() < end &&
               p->out_fd >= 0) {
                proc_read(p, 50);
        }
        return strchr(p->out, '\n') != NULL;
}

/* Wait for exit (up to timeout_ms, then SIGKILL) reading its output. */
static int proc_wait(struct proc *p, int timeout_ms)
{
        int64_t end = now_ms() + timeout_ms;
        int st;

        for (;;) {
                pid_t r = waitpid(p->pid, &st, WNOHANG);
                if (r == p->pid) {
                        p->elapsed_ms = now_ms() - p->started_ms;
                        p->status = WIFEXITED(st) ? WEXITSTATUS(st)
                                                  : 128 + WTERMSIG(st);
                        break;
                }
                if (now_ms() >= end) {
                        kill(p->pid, SIGKILL);
                        waitpid(p->pid, &st, 0);
                        p->elapsed_ms = now_ms() - p->started_ms;
                        p->status = -1;
                        break;
                }
                proc_read(p, 10);
        }
        while (p->out_fd >= 0 || p->err_fd >= 0) {
                int before = (int)(p->n_out + p->n_err);
                proc_read(p, 200);
                if ((int)(p->n_out + p->n_err) == before &&
                    (p->out_fd >= 0 || p->err_fd >= 0)) {
                        /* A grandchild keeps a pipe open: stop reading. */
                        if (p->out_fd >= 0) {
                                close(p->out_fd);
                        }
                        if (p->err_fd >= 0) {
                                close(p->err_fd);
                        }
                        p->out_fd = p->err_fd = -1;
                }
        }
        return p->status;
}

static void proc_show(const struct proc *p)
{
        diag("exit %d after %" PRId64 " ms; stdout: %.400s; stderr: %.400s",
             p->status, p->elapsed_ms, p->out, p->err);
}

/* Run batonctl --endpoints E args... to its end. */
#define MAXARGS 32
static int ctl(struct proc *p, int timeout_ms, ...)
{
        const char *args[MAXARGS];
        unsigned n = 0;
        const char *a;
        va_list ap;

        args[n++] = "--endpoints";
        args[n++] = cluster.endpoints;
        va_start(ap, timeout_ms);
        while ((a = va_arg(ap, const char *)) != NULL && n < MAXARGS - 1) {
                args[n++] = a;
        }
        va_end(ap);
        args[n] = NULL;
        if (proc_start(p, args) != 0) {
                return -1;
        }
        return proc_wait(p, timeout_ms);
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
                        diag("JSON lacks %s", key);
                        return false;
                }
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
                diag("deadline %lld, started at %" PRId64, deadline, before);
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
        const char *holder_fields[] = {"lock",    "held",  "session",
                                       "owner",   "token", "count",
                                       "waiters", "index", NULL};
        const char *args[] = {"--endpoints", cluster.endpoints, "acquire",
                              "cli-held", NULL};
        struct proc bg, p;
        char name[64], tok[32], tok1[32];
        unsigned long long token = 0;
        int64_t t0;

        if (proc_start(&bg, args) != 0) {
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

        t0 = now_ms();
        kill(bg.pid, SIGTERM);
        proc_wait(&bg, RUN_MS);
        if (!ok(bg.status == 0,
                "acquire ended by SIGTERM: exit 0 (%" PRId64 " ms)",
                now_ms() - t0)) {
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
        const char *fields[] = {"lock",  "session", "owner", "token",
                                "count", "waiters", NULL};
        struct proc bg[3], p;
        unsigned long long tokens[3] = {0, 0, 0};
        char name[64], want[128];
        unsigned i, started = 0;

        for (i = 0; i < 3; i++) {
                const char *args[] = {"--endpoints", cluster.endpoints,
                                      "acquire", names[i], NULL};
                if (proc_start(&bg[i], args) != 0) {
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
        int64_t end = now_ms() + ms;
        struct proc h;

        for (;;) {
                ctl(&h, RUN_MS, "holder", name, NULL);
                if (h.status == 0 && strstr(h.out, " free\n") != NULL) {
                        return true;
                }
                if (now_ms() >= end) {
                        proc_show(&h);
                        return false;
                }
                sleep_ms(200);
        }
}

#define DETACH_TTL "3000"

/* acquire --detach: a lease lock released by another process with
 * release --session, or freed by the cluster TTL after the exit. */
static void detached_leases(void)
{
        const char *fields[] = {"lock", "token", "session", NULL};
        struct proc p;
        char name[64], tok[32], sess[32], stale[32], want[160];
        unsigned long long token = 0, session = 0;
        int64_t t0;

        ctl(&p, RUN_MS, "acquire", "cli-lease", "--detach", "--ttl", DETACH_TTL,
            NULL);
        if (!ok(p.status == 0 &&
                    sscanf(p.out, "%63s %llu %llu", name, &token, &session) ==
                        3 &&
                    strcmp(name, "cli-lease") == 0 && token > 0 && session > 0,
                "acquire --detach: exit 0, prints NAME TOKEN SESSION")) {
                proc_show(&p);
                return;
        }
        snprintf(tok, sizeof tok, "%llu", token);
        snprintf(sess, sizeof sess, "%llu", session);
        snprintf(stale, sizeof stale, "%llu", token - 1);

        ctl(&p, RUN_MS, "holder", "cli-lease", NULL);
        snprintf(want, sizeof want,
                 "cli-lease held by session %s owner 1 token %s ", sess, tok);
        if (!ok(p.status == 0 && strncmp(p.out, want, strlen(want)) == 0,
                "holder: the detached lock is held by its session")) {
                proc_show(&p);
        }

        ctl(&p, RUN_MS, "release", "cli-lease", stale, "--session", sess, NULL);
        if (!ok(p.status == 1 && strstr(p.err, "batonctl: release:") != NULL,
                "release with a stale token: exit 1")) {
                proc_show(&p);
        }
        ctl(&p, RUN_MS, "release", "cli-lease", tok, "--session", sess, NULL);
        if (!ok(p.status == 0 && p.n_err == 0,
                "release NAME TOKEN --session S (another process): exit 0")) {
                proc_show(&p);
        }
        ctl(&p, RUN_MS, "holder", "cli-lease", NULL);
        if (!ok(p.status == 0 && strcmp(p.out, "cli-lease free\n") == 0,
                "holder: free after the release")) {
                proc_show(&p);
        }
        ctl(&p, RUN_MS, "release", "cli-lease", tok, "--session", sess, NULL);
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
                "--json try --detach: exit 0, lock, token and session")) {
                proc_show(&p);
                return;
        }
        t0 = now_ms();
        {
                const char *t = strstr(p.out, "\"token\":");
                const char *ss = strstr(p.out, "\"session\":");
                token = t != NULL ? strtoull(t + 8, NULL, 10) : 0;
                session = ss != NULL ? strtoull(ss + 10, NULL, 10) : 0;
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
        diag("freed %" PRId64 " ms after the detached try", now_ms() - t0);
        ctl(&p, RUN_MS, "release", "cli-lease2", tok, "--session", sess, NULL);
        if (!ok(p.status == 1 && strstr(p.err, "already ended") != NULL,
                "release after the lease expired: exit 1, says it ended")) {
                proc_show(&p);
        }
}

static void status_and_members(void)
{
        const char *status_fields[] = {"endpoint", "id",     "role",    "term",
                                       "leader",   "commit", "applied", "last",
                                       "sessions", "locks",  "waiters", NULL};
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

static void usage_errors(void)
{
        const char *none[] = {NULL};
        const char *bad_opt[] = {"--bogus", "status", NULL};
        struct proc p;

        proc_start(&p, none);
        proc_wait(&p, RUN_MS);
        if (!ok(p.status == 2 && strstr(p.err, "usage:") != NULL,
                "no command: exit 2 with usage")) {
                proc_show(&p);
        }
        proc_start(&p, bad_opt);
        proc_wait(&p, RUN_MS);
        if (!ok(p.status == 2 && strstr(p.err, "usage:") != NULL,
                "unknown global option: exit 2")) {
                proc_show(&p);
        }
        ctl(&p, RUN_MS, "frobnicate", "x", NULL);
        if (!ok(p.status == 2 && strstr(p.err, "usage:") != NULL,
                "unknown command: exit 2")) {
                proc_show(&p);
        }
        ctl(&p, RUN_MS, "holder", NULL);
        if (!ok(p.status == 2, "holder without a name: exit 2")) {
                proc_show(&p);
        }
        ctl(&p, RUN_MS, "check", "x", "notanumber", NULL);
        if (!ok(p.status == 2, "check with a bad token: exit 2")) {
                proc_show(&p);
        }
        ctl(&p, RUN_MS, "acquire", "x", "--ttl", NULL);
        if (!ok(p.status == 2, "acquire --ttl without a value: exit 2")) {
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

        proc_start(&p, holder);
        proc_wait(&p, RUN_MS);
        if (!ok(p.status == 3 && p.elapsed_ms < 5000 && p.n_err > 0,
                "holder on an unreachable cluster: exit 3 in %" PRId64
                " ms (< 5000), with a message",
                p.elapsed_ms)) {
                proc_show(&p);
        }
        proc_start(&p, status);
        proc_wait(&p, RUN_MS);
        if (!ok(p.status == 3 && p.elapsed_ms < 5000,
                "status on an unreachable cluster: exit 3 in %" PRId64
                " ms (< 5000)",
                p.elapsed_ms)) {
                proc_show(&p);
        }
}

/* Whether `pid` is gone or a zombie (dead, not yet reaped). */
static bool pid_dead(pid_t pid)
{
        char path[64], buf[512];
        const char *rp;
        FILE *f;
        size_t n;

        snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
        f = fopen(path, "r");
        if (f == NULL) {
                return true;
        }
        n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = '\0';
        rp = strrchr(buf, ')');
        return rp == NULL || rp[1] == '\0' || rp[2] == 'Z' || rp[2] == 'X';
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
        if (proc_start(&p, args) != 0 || !proc_wait_line(&p, RUN_MS) ||
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
        sleep_ms(LOSS_TTL / 2);
        if (!ok(!pid_dead(child) && waitpid(p.pid, NULL, WNOHANG) == 0,
                "lock (%s): the command runs while the cluster is up", what)) {
                proc_wait(&p, RUN_MS);
                proc_show(&p);
                return;
        }

        t_stop = now_ms();
        for (i = 1; i <= cluster.n; i++) {
                harness_pause(&cluster, i);
        }
        while (now_ms() < t_stop + eff_ttl + 1000) {
                if (pid_dead(child)) {
                        t_dead = now_ms();
                        break;
                }
                proc_read(&p, 0);
                usleep(1000);
        }
        if (t_dead < 0) {
                diag("the command (pid %d) still runs %" PRId64
                     " ms after SIGSTOP",
                     child, eff_ttl + 1000);
                kill(child, SIGKILL);
        } else {
                stray_child = 0;
                diag("lock (%s), session TTL %" PRId64
                     " ms: SIGSTOP to child death %" PRId64
                     " ms; margin before t_stop + TTL %" PRId64
                     " ms; before t_stop + 2/3 TTL %" PRId64 " ms",
                     what, eff_ttl, t_dead - t_stop, t_stop + eff_ttl - t_dead,
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
                diag("batonctl exited %" PRId64 " ms after SIGSTOP",
                     p.started_ms + p.elapsed_ms - t_stop);
        }

        for (i = 1; i <= cluster.n; i++) {
                harness_resume(&cluster, i);
        }
        if (!ok(harness_wait_healthy(&cluster, HEALTHY_MS, &leader) == 0,
                "the cluster recovers after SIGCONT")) {
                diag("%s", cluster.errmsg);
                return;
        }
        /* The session's TTL has run out: the cluster frees the lock. */
        {
                int64_t end = now_ms() + eff_ttl + 5000;
                struct proc h;
                bool freed = false;

                while (!freed && now_ms() < end) {
                        ctl(&h, RUN_MS, "holder", name, NULL);
                        freed =
                            h.status == 0 && strstr(h.out, " free\n") != NULL;
                        if (!freed) {
                                sleep_ms(200);
                        }
                }
                ok(freed,
                   "lock (%s): the lock is freed once the session expires",
                   what);
        }
}

static void cleanup(void)
{
        if (stray_child > 0 && !pid_dead(stray_child)) {
                kill(stray_child, SIGKILL);
        }
}

int main(int argc, char **argv)
{
        const char *b = getenv("BATONCTL");
        unsigned leader;
        int64_t t0 = now_ms();

        (void)argc;
        setvbuf(stdout, NULL, _IOLBF, 0);
        if (b != NULL && *b != '\0') {
                batonctl = b;
        }
        if (access(batonctl, X_OK) != 0) {
                printf("1..0 # SKIP no batonctl at %s\n", batonctl);
                return 0;
        }
        atexit(cleanup);
        if (harness_open_healthy(&cluster, 3, argv[0], WATCHDOG_S, HEALTHY_MS,
                                 &leader) != 0) {
                printf("Bail out! cluster: %s\n", cluster.errmsg);
                harness_close(&cluster);
                return 1;
        }
        diag("cluster %s, leader %u, batonctl %s", cluster.endpoints, leader,
             batonctl);

        lock_env();
        lock_status();
        hold_and_query();
        list_locks();
        detached_leases();
        status_and_members();
        usage_errors();
        unreachable();
        lock_lost(false);
        lock_lost(true);

        if (harness_reap(&cluster) != 0) {
                ok(false, "no node exited unexpectedly");
        }
        if (tests_failed != 0) {
                cluster.failed = true;
        }
        harness_close(&cluster);
        printf("1..%u\n", tests_run);
        diag("%u of %u failed; %" PRId64 " ms", tests_failed, tests_run,
             now_ms() - t0);
        return tests_failed != 0;
}
