/*
 * `batonctl lock|sem|elect --check CMD`: a lock bound to its owner's
 * health, against a live 3-node cluster (tests/integration/harness) with
 * the built batonctl ($BATONCTL, or ./batonctl in the build dir).
 *
 * - The command line: --check-interval and --check-timeout only with
 *   --check, within their ranges; --check only on the commands that run
 *   one; an empty check named.
 * - A check that fails before the lock is asked for: exit 122, the
 *   command never ran, nothing held.
 * - A check that passes: it runs again and again (its output on
 *   batonctl's stderr, not mixed into the command's stdout), and
 *   batonctl exits with the command's own status.
 * - A check that fails while the command runs: exit 122, the command was
 *   stopped with SIGTERM, and the lock went to a waiter only after the
 *   command had ended (the waiter's command sees the file the first one
 *   wrote as it ended), long before the first session's TTL.
 * - A check that hangs: killed at --check-timeout, exit 122.
 * - sem and elect alike: permits and leadership given up.
 *
 * Every wait is bounded. Environment as the integration tests: BATOND,
 * BATON_TEST_BASE_PORT, BATON_TEST_TMPDIR. Prints TAP.
 */
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../integration/harness.h"
#include "../lib/proc.h"
#include "../lib/tap.h"
#include "../lib/tclient.h"
#include "ctlcluster.h"

#define WATCHDOG_S 180
#define RUN_MS     30000 /* the longest a batonctl here may take */
#define TTL        "30000"

static struct harness cluster;
static const char *batonctl;
static struct tap tap;
#define ok(...) tap_ok(&tap, __VA_ARGS__)
#define ctl(p, ...)                                                            \
        ctlcluster_ctl(p, batonctl, &cluster, RUN_MS, __VA_ARGS__, NULL)

/* A file of this run's directory. */
static void path_of(char *buf, size_t cap, const char *name)
{
        snprintf(buf, cap, "%s/%s", cluster.dir, name);
}

static bool exists(const char *path)
{
        struct stat st;

        return stat(path, &st) == 0;
}

/* Lines in a file (0 when it is not there). */
static unsigned lines_of(const char *path)
{
        FILE *f = fopen(path, "r");
        unsigned n = 0;
        int ch;

        if (f == NULL) {
                return 0;
        }
        while ((ch = fgetc(f)) != EOF) {
                n += ch == '\n';
        }
        fclose(f);
        return n;
}

static void touch(const char *path)
{
        FILE *f = fopen(path, "w");

        if (f != NULL) {
                fclose(f);
        }
}

/* Whether `name` is free: a detached try of it is granted at once (with
 * a short TTL, so that it is free again soon). */
static bool free_now(const char *name)
{
        struct proc r;

        ctl(&r, "try", name, "--detach", "--ttl", "2000");
        return r.status == 0;
}

/* Start batonctl --endpoints E `args` in a process group of its own. */
static int ctl_start(struct proc *c, const char *const *args)
{
        return ctlcluster_start(c, batonctl, &cluster, args);
}

/* Wait until `name` has `n` waiters (holder's "waiters N"). */
static bool wait_waiters(const char *name, unsigned n)
{
        int64_t end = tclient_now_ms() + RUN_MS;
        char want[32];
        struct proc r;

        snprintf(want, sizeof want, "waiters %u", n);
        while (tclient_now_ms() < end) {
                ctl(&r, "holder", name);
                if (r.status == 0 && strstr(r.out, want) != NULL) {
                        return true;
                }
                tclient_sleep_ms(50);
        }
        return false;
}

static void command_line(void)
{
        struct proc r;

        ctl(&r, "lock", "chk-cl", "--check-interval", "500", "--", "true");
        ok(r.status == 125 &&
               strstr(r.err, "--check-interval needs --check") != NULL,
           "--check-interval without --check: named, exit 125");
        ctl(&r, "lock", "chk-cl", "--check-timeout", "500", "--", "true");
        ok(r.status == 125 &&
               strstr(r.err, "--check-timeout needs --check") != NULL,
           "--check-timeout without --check: named");
        ctl(&r, "acquire", "chk-cl", "--check", "true");
        ok(r.status == 2 &&
               strstr(r.err, "--check is not an option of acquire") != NULL,
           "acquire --check: not an option of acquire, exit 2");
        ctl(&r, "lock", "chk-cl", "--check", "true", "--check-interval", "5",
            "--", "true");
        ok(r.status == 125 &&
               strstr(r.err, "--check-interval: 5 is out of "
                             "range (100 to 86400000 ms)") != NULL,
           "--check-interval 5: out of range, with the range");
        ctl(&r, "lock", "chk-cl", "--check", "", "--", "true");
        ok(r.status == 125 &&
               strstr(r.err, "--check: an empty command") != NULL,
           "--check '': an empty command");
}

static void fails_first(void)
{
        struct proc r;

        ctl(&r, "lock", "chk-first", "--ttl", TTL, "--check", "exit 3", "--",
            "sh", "-c", "echo ran");
        if (!ok(r.status == 122 && strstr(r.out, "ran") == NULL &&
                    strstr(r.err, "health check failed (exited with status "
                                  "3): not taking lock chk-first") != NULL,
                "a check failing first: exit 122, the command never ran, "
                "the failure named")) {
                proc_show(&r);
        }
        ok(free_now("chk-first"), "... and nothing was taken");
}

static void passes(void)
{
        char count[512], script[1024];
        struct proc r;
        unsigned n;

        path_of(count, sizeof count, "chk-count");
        snprintf(script, sizeof script, "echo check-ran; echo x >> %s", count);
        ctl(&r, "lock", "chk-pass", "--ttl", TTL, "--check", script,
            "--check-interval", "100", "--", "sh", "-c", "sleep 1.5; exit 7");
        n = lines_of(count);
        if (!ok(r.status == 7, "a check that passes: the command's own exit "
                               "status (7)")) {
                proc_show(&r);
        }
        /* One before the grant, then one every 100 ms over 1.5 s: far more
         * than 3 on any machine that runs the test at all. */
        ok(n >= 3, "the check ran again and again (%u runs)", n);
        ok(strstr(r.out, "check-ran") == NULL &&
               strstr(r.err, "check-ran") != NULL,
           "the check's output is on batonctl's stderr, not the command's "
           "stdout");
        ok(free_now("chk-pass"), "... and the lock was released");
}

/* The command of a lock that goes unhealthy: says it started, and on
 * SIGTERM lingers 300 ms, writes `ended`, and exits. */
static void stopper(char *buf, size_t cap, const char *ended)
{
        snprintf(buf, cap,
                 "trap 'sleep 0.3; echo ended > %s; exit 0' TERM; "
                 "echo started; while :; do sleep 0.02; done",
                 ended);
}

static void fails_later(void)
{
        char flag[512], ended[512], check[600], cmd[1024], after[600];
        struct proc first, waiter;
        const char *args[] = {"lock",
                              "chk-later",
                              "--ttl",
                              TTL,
                              "--check",
                              check,
                              "--check-interval",
                              "100",
                              "--",
                              "sh",
                              "-c",
                              cmd,
                              NULL};
        const char *wargs[] = {"lock", "chk-later", "--wait", "25000", "--",
                               "sh",   "-c",        after,    NULL};

        path_of(flag, sizeof flag, "chk-later.unhealthy");
        path_of(ended, sizeof ended, "chk-later.ended");
        snprintf(check, sizeof check, "test ! -e %s", flag);
        stopper(cmd, sizeof cmd, ended);
        snprintf(after, sizeof after,
                 "if test -e %s; then echo after; else echo before; fi", ended);
        if (!ok(ctl_start(&first, args) == 0 &&
                    proc_wait_line(&first, RUN_MS) &&
                    strstr(first.out, "started") != NULL,
                "a healthy lock's command runs")) {
                proc_wait(&first, RUN_MS);
                proc_show(&first);
                return;
        }
        if (!ok(ctl_start(&waiter, wargs) == 0 && wait_waiters("chk-later", 1),
                "a waiter queues behind it")) {
                kill(-first.pid, SIGKILL);
                proc_wait(&first, RUN_MS);
                return;
        }
        touch(flag);
        proc_wait(&first, RUN_MS);
        if (!ok(first.status == 122 &&
                    strstr(first.err,
                           "health check of lock chk-later failed "
                           "(exited with status 1): stopping the "
                           "command, then releasing the lock") != NULL,
                "the check failing while it runs: exit 122, the failure "
                "named")) {
                proc_show(&first);
        }
        ok(exists(ended), "the command was stopped with SIGTERM (it wrote "
                          "its end)");
        proc_wait(&waiter, RUN_MS);
        /* The TTL is 30 s: a waiter served within the wait of 25 s was
         * served by the release, not by an expiry. */
        if (!ok(waiter.status == 0 && strstr(waiter.out, "after") != NULL,
                "the waiter got the lock only after the command had ended, "
                "by the release (not the TTL)")) {
                proc_show(&waiter);
        }
}

static void hangs(void)
{
        struct proc r;

        ctl(&r, "lock", "chk-hang", "--ttl", TTL, "--check", "sleep 20",
            "--check-timeout", "200", "--", "true");
        if (!ok(r.status == 122 &&
                    strstr(r.err, "timed out after 200 ms") != NULL,
                "a check that hangs is killed at --check-timeout: exit 122")) {
                proc_show(&r);
        }
}

/* sem and elect stop their command and give up what they hold alike. */
static void sem_and_elect(void)
{
        char flag[512], check[600];
        struct proc r, e;
        const char *args[] = {"elect",
                              "chk-elect",
                              "--ttl",
                              TTL,
                              "--check",
                              check,
                              "--check-interval",
                              "100",
                              "--",
                              "sh",
                              "-c",
                              "echo leading; exec sleep 30",
                              NULL};

        ctl(&r, "sem", "chk-sem", "--permits", "2", "--ttl", TTL, "--check",
            "false", "--", "true");
        ok(r.status == 122 && strstr(r.err, "not taking lock chk-sem") != NULL,
           "sem --check failing first: exit 122");
        path_of(flag, sizeof flag, "chk-elect.unhealthy");
        snprintf(check, sizeof check, "test ! -e %s", flag);
        if (!ok(ctl_start(&e, args) == 0 && proc_wait_line(&e, RUN_MS),
                "elect --check: leading")) {
                proc_wait(&e, RUN_MS);
                return;
        }
        touch(flag);
        proc_wait(&e, RUN_MS);
        ok(e.status == 122, "elect: the check failing ends it, exit 122 (%d)",
           e.status);
        ctl(&r, "leader", "chk-elect");
        if (!ok((r.status == 0 || r.status == 1) &&
                    strstr(r.out, "no leader") != NULL,
                "... and the leadership was given up")) {
                proc_show(&r);
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
        command_line();
        fails_first();
        passes();
        fails_later();
        hangs();
        sem_and_elect();
        return ctlcluster_close(&cluster, &tap, true, t0);
}
