/*
 * batonctl against a live 3-node cluster (tests/integration/harness): the
 * built binary ($BATONCTL, or ./batonctl in the build dir) is run with
 * --endpoints of the cluster and its exit status, stdout and stderr are
 * checked: lock -- CMD (environment, the command's status passed through,
 * 127), try on a held lock, acquire ended by SIGTERM, holder, check, list,
 * detached leases, shared locks, values, hold times, semaphores,
 * multi-locks, elections, watch and observe, revoke, status and member
 * list (text and JSON). Prints TAP. Its siblings: test_batonctl_cmdline
 * (usage, numbers, options, --json names, --version, BATON_ENDPOINTS, TLS
 * flags, an unreachable cluster)
 * and test_batonctl_lost (lock -- CMD while every node is SIGSTOPped).
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

#include "../../src/fsm/snapshot.h"
#include "../../src/proto/command.h"
#include "../integration/harness.h"
#include "../integration/tlsfiles.h"
#include "../lib/proc.h"
#include "../lib/tap.h"
#include "../lib/tclient.h"
#include "ctlcluster.h"
#include "jsoncheck.h"

#define WATCHDOG_S 180
#define RUN_MS     20000 /* a batonctl run that should end on its own */

static struct harness cluster;
static const char *batonctl; /* $BATONCTL, or ./batonctl */
/* Every case of this program, in one TAP stream. */
static struct tap tap;
#define ok(...) tap_ok(&tap, __VA_ARGS__)

/* --- Running batonctl ----------------------------------------------------- */

/* batonctl --endpoints E args... run to its end. */
#define ctl(p, timeout_ms, ...)                                                \
        ctlcluster_ctl((p), batonctl, &cluster, (timeout_ms), __VA_ARGS__)

/* --- Cases ---------------------------------------------------------------- */

static uint64_t first_token; /* of lock_env: stale once released */

static void lock_env(void)
{
        struct proc p;
        char lock[64];
        unsigned long long token = 0;
        long long deadline = 0;
        int64_t before = ctlcluster_wall_ms();
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
        if (!ok(n == 3 && deadline > before &&
                    deadline <= ctlcluster_wall_ms() + 10000,
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
        if (!ok(p.status == 0 && jsoncheck_valid(p.out) &&
                    jsoncheck_has_fields(p.out, holder_fields),
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
        if (!ok(p.status == 0 && jsoncheck_valid(p.out) &&
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
        if (!ok(p.status == 1 && jsoncheck_valid(p.out) &&
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
        if (!ok(p.status == 0 && jsoncheck_valid(p.out) &&
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
        if (!ok(p.status == 0 && ctlcluster_count(p.out, "\n") == 2 &&
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
        if (!ok(p.status == 0 && jsoncheck_valid(p.out) && p.out[0] == '[' &&
                    jsoncheck_has_fields(p.out, fields) &&
                    ctlcluster_count(p.out, "\"lock\":") == 2 &&
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

/* --value: a detached lease's value shown by holder (text, --all, JSON),
 * changed by set-value from another process with the token (a stale one
 * changes nothing), cleared, and on a reader's grant too. */
static void grant_values(void)
{
        char t1[32], s1[32], k1[40], t2[32], s2[32], k2[40], stale[32];
        char want[128];
        struct proc p;

        ctl(&p, RUN_MS, "acquire", "cli-val", "--value", "10.0.0.7:8080",
            "--detach", NULL);
        if (!ok(read_lease(&p, "cli-val", t1, s1, k1),
                "acquire --value --detach: a lease with a value")) {
                proc_show(&p);
                return;
        }
        ctl(&p, RUN_MS, "holder", "cli-val", NULL);
        if (!ok(p.status == 0 &&
                    strstr(p.out, " value \"10.0.0.7:8080\"") != NULL,
                "holder: shows the grant's value")) {
                proc_show(&p);
        }
        ctl(&p, RUN_MS, "--json", "holder", "cli-val", NULL);
        if (!ok(p.status == 0 && jsoncheck_valid(p.out) &&
                    strstr(p.out, "\"value\":\"10.0.0.7:8080\"") != NULL,
                "--json holder: \"value\"")) {
                proc_show(&p);
        }
        ctl(&p, RUN_MS, "set-value", "cli-val", t1, "job-42", "--session", s1,
            "--secret", k1, NULL);
        snprintf(want, sizeof want, "cli-val token %s value \"job-42\"\n", t1);
        if (!ok(p.status == 0 && strcmp(p.out, want) == 0,
                "set-value: exit 0, prints the new value")) {
                proc_show(&p);
        }
        ctl(&p, RUN_MS, "holder", "cli-val", "--all", NULL);
        if (!ok(p.status == 0 && strstr(p.out, " value \"job-42\"") != NULL,
                "holder --all: the changed value")) {
                proc_show(&p);
        }
        ctl(&p, RUN_MS, "list", "cli-val", NULL);
        if (!ok(p.status == 0 && strncmp(p.out, "cli-val session ", 16) == 0 &&
                    strstr(p.out, " value \"job-42\"") != NULL,
                "list: the lock with its value")) {
                proc_show(&p);
        }
        ctl(&p, RUN_MS, "--json", "list", "cli-val", NULL);
        if (!ok(p.status == 0 && jsoncheck_valid(p.out) &&
                    strstr(p.out, "\"value\":\"job-42\"") != NULL,
                "--json list: \"value\"")) {
                proc_show(&p);
        }
        snprintf(stale, sizeof stale, "%llu", strtoull(t1, NULL, 10) - 1);
        ctl(&p, RUN_MS, "set-value", "cli-val", stale, "stale", "--session", s1,
            "--secret", k1, NULL);
        if (!ok(p.status == 1 && strstr(p.err, "stale") != NULL,
                "set-value with another token: exit 1, stale")) {
                proc_show(&p);
        }
        ctl(&p, RUN_MS, "--json", "holder", "cli-val", "--all", NULL);
        if (!ok(p.status == 0 && jsoncheck_valid(p.out) &&
                    strstr(p.out, "\"value\":\"job-42\"") != NULL,
                "--json holder --all: the value is unchanged by the stale "
                "token")) {
                proc_show(&p);
        }
        ctl(&p, RUN_MS, "set-value", "cli-val", t1, "", "--session", s1,
            "--secret", k1, NULL);
        ctl(&p, RUN_MS, "holder", "cli-val", NULL);
        if (!ok(p.status == 0 && strstr(p.out, " held by ") != NULL &&
                    strstr(p.out, " value ") == NULL,
                "set-value \"\": the value is cleared, the grant kept")) {
                proc_show(&p);
        }
        ctl(&p, RUN_MS, "release", "cli-val", t1, "--session", s1, "--secret",
            k1, NULL);
        ok(p.status == 0, "release of the valued lease: exit 0");
        ctl(&p, RUN_MS, "acquire", "cli-val-rw", "--shared", "--value", "r1",
            "--detach", NULL);
        ok(read_lease(&p, "cli-val-rw", t1, s1, k1),
           "acquire --shared --value: a reader with a value");
        ctl(&p, RUN_MS, "try", "cli-val-rw", "--shared", "--value", "r2",
            "--detach", NULL);
        ok(read_lease(&p, "cli-val-rw", t2, s2, k2),
           "try --shared --value: a second reader with its own");
        ctl(&p, RUN_MS, "holder", "cli-val-rw", "--all", NULL);
        if (!ok(p.status == 0 && strstr(p.out, " value \"r1\"") != NULL &&
                    strstr(p.out, " value \"r2\"") != NULL,
                "holder --all: each reader's value")) {
                proc_show(&p);
        }
        ctl(&p, RUN_MS, "release", "cli-val-rw", t1, "--session", s1,
            "--secret", k1, NULL);
        ctl(&p, RUN_MS, "release", "cli-val-rw", t2, "--session", s2,
            "--secret", k2, NULL);
        ok(p.status == 0, "release of the readers: exit 0");
}

/* --hold: lock stops its command before the hold time can run out (exit
 * 123) and releases the lock; a detached lease with one is freed by the
 * cluster when it runs out, its session alive. */
static void hold_times(void)
{
        const char *cmd[] = {"sleep", "30", NULL};
        int64_t t0 = tclient_now_ms();
        struct proc p;

        ctl(&p, RUN_MS, "lock", "cli-hold", "--hold", "1500", "--grace", "300",
            "--", cmd[0], cmd[1], NULL);
        if (!ok(p.status == 123 && strstr(p.err, "hold time") != NULL &&
                    tclient_now_ms() - t0 < 15000,
                "lock --hold 1500 -- sleep 30: the command stopped, exit "
                "123")) {
                proc_show(&p);
        }
        if (!ok(wait_free("cli-hold", 5000), "then the lock is free")) {
                proc_show(&p);
        }
        ctl(&p, RUN_MS, "acquire", "cli-hold2", "--hold", "800", "--ttl",
            "30000", "--detach", NULL);
        ok(p.status == 0, "acquire --hold 800 --detach: a lease");
        ok(wait_free("cli-hold2", 10000),
           "the cluster frees it when its hold time runs out, long before "
           "its TTL");
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
        ok(p.status == 0 && jsoncheck_valid(p.out) &&
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

        while (ctlcluster_count(bg->out, "\n") < lines &&
               tclient_now_ms() < deadline) {
                proc_read(bg, 100);
        }
        return ctlcluster_count(bg->out, "\n") >= lines;
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
        ok(p.status == 2, "session open: exit 2, not a subcommand");
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
        if (!ok(p.status == 0 && jsoncheck_valid(p.out) &&
                    jsoncheck_has_fields(p.out, fields),
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
            "container", "alarms",  NULL};
        const char *member_fields[] = {"id",     "role",   "raft",
                                       "client", "leader", NULL};
        struct proc p;
        unsigned i, listed = 0, leaders;
        char want[64], formats[96];

        ctl(&p, RUN_MS, "status", NULL);
        for (i = 1; i <= cluster.n; i++) {
                listed +=
                    strstr(p.out, harness_client_address(&cluster, i)) != NULL;
        }
        if (!ok(p.status == 0 && listed == cluster.n &&
                    ctlcluster_count(p.out, "\n") == cluster.n &&
                    ctlcluster_count(p.out, "role=leader") == 1,
                "status: exit 0, every node on a line, one leader")) {
                proc_show(&p);
        }
        /* The formats this build writes, from the codec's own numbers. */
        snprintf(formats, sizeof formats,
                 " version=" PACKAGE_VERSION " command=%d snapshot=%d ",
                 COMMAND_VERSION, SNAPSHOT_VERSION);
        if (!ok(ctlcluster_count(p.out, formats) == cluster.n,
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
        if (!ok(p.status == 0 && jsoncheck_valid(p.out) && p.out[0] == '[' &&
                    listed == cluster.n &&
                    ctlcluster_count(p.out, "\"endpoint\":") == cluster.n &&
                    jsoncheck_has_fields(p.out, status_fields),
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
        leaders = ctlcluster_count(p.out, " leader\n");
        if (!ok(p.status == 0 && listed == cluster.n &&
                    ctlcluster_count(p.out, " voter ") == cluster.n &&
                    leaders == 1,
                "member list: exit 0, every node a voter, one leader")) {
                proc_show(&p);
        }
        ctl(&p, RUN_MS, "--json", "member", "list", NULL);
        if (!ok(p.status == 0 && jsoncheck_valid(p.out) &&
                    ctlcluster_count(p.out, "\"client\":") == cluster.n &&
                    ctlcluster_count(p.out, "\"leader\":true") == 1 &&
                    jsoncheck_has_fields(p.out, member_fields),
                "--json member list: valid JSON, every node, one leader")) {
                proc_show(&p);
        }
}

int main(int argc, char **argv)
{
        int64_t t0 = tclient_now_ms();
        unsigned leader;

        (void)argc;
        batonctl = ctlcluster_program("BATONCTL", "./batonctl");
        if (batonctl == NULL) {
                return 0;
        }
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
        grant_values();
        hold_times();
        semaphores();
        multi_locks();
        elections();
        watch_and_observe();
        revokes();
        status_and_members();

        return ctlcluster_close(&cluster, &tap, false, t0);
}
