/* batonctl's --check runs (src/cli/healthcheck.h): how a run passes or
 * fails, how a hanging one is killed with its children, and that runs
 * never overlap. Real /bin/sh children; no assertion on durations. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../../src/cli/healthcheck.h"

static void sleep_ms(long ms)
{
        struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

        nanosleep(&ts, NULL);
}

/* One run of `cmd` to its end: whether it passed, and how it failed. */
static bool once(const char *cmd, uint32_t timeout_ms, struct healthcheck *h)
{
        healthcheck_init(h, cmd, 1000, timeout_ms, 0);
        return healthcheck_once(h);
}

static void exit_zero_passes(void **state)
{
        struct healthcheck h;
        char why[64];

        (void)state;
        assert_true(once("exit 0", 5000, &h));
        assert_int_equal(h.failed, HEALTHCHECK_PASSED);
        assert_int_equal(h.runs, 1);
        assert_int_equal(h.pid, 0);
        healthcheck_describe(&h, why, sizeof why);
        assert_string_equal(why, "passed");
}

static void exit_status_fails(void **state)
{
        struct healthcheck h;
        char why[64];

        (void)state;
        assert_false(once("exit 3", 5000, &h));
        assert_int_equal(h.failed, HEALTHCHECK_EXIT);
        assert_int_equal(h.status, 3);
        healthcheck_describe(&h, why, sizeof why);
        assert_string_equal(why, "exited with status 3");
        assert_false(once("no-such-command-here 2>/dev/null", 5000, &h));
        assert_int_equal(h.status, 127);
}

static void signal_fails(void **state)
{
        struct healthcheck h;
        char why[64];

        (void)state;
        assert_false(once("kill -TERM $$", 5000, &h));
        assert_int_equal(h.failed, HEALTHCHECK_SIGNAL);
        assert_int_equal(h.status, SIGTERM);
        healthcheck_describe(&h, why, sizeof why);
        assert_non_null(strstr(why, "killed by signal 15"));
}

/* A run past its timeout fails, and its whole process group is killed:
 * the grandchild that would have made the file never does. */
static void timeout_kills_the_group(void **state)
{
        char dir[] = "/tmp/baton-hc-XXXXXX", cmd[256], file[128];
        struct healthcheck h;
        struct stat st;
        char why[64];

        (void)state;
        assert_non_null(mkdtemp(dir));
        snprintf(file, sizeof file, "%s/late", dir);
        snprintf(cmd, sizeof cmd, "(sleep 1; touch %s) & sleep 30", file);
        assert_false(once(cmd, 150, &h));
        assert_int_equal(h.failed, HEALTHCHECK_TIMEOUT);
        assert_int_equal(h.pid, 0);
        healthcheck_describe(&h, why, sizeof why);
        assert_string_equal(why, "timed out after 150 ms (killed)");
        sleep_ms(1500);
        assert_int_not_equal(stat(file, &st), 0);
        rmdir(dir);
}

/* Polled: a run is started when due, never beside one under way, and the
 * next is due an interval after the start of the one before. */
static void runs_never_overlap(void **state)
{
        struct healthcheck h;
        int64_t t;
        pid_t first;

        (void)state;
        healthcheck_init(&h, "sleep 0.3", 100, 5000, 0);
        t = healthcheck_now_ms();
        assert_false(healthcheck_poll(&h, t));
        first = h.pid;
        assert_true(first > 0);
        assert_int_equal(h.next_at, t + 100);
        /* Due again, but the first still runs: no second run. */
        assert_false(healthcheck_poll(&h, t + 200));
        assert_int_equal(h.pid, first);
        while (h.pid != 0) {
                assert_false(healthcheck_poll(&h, healthcheck_now_ms()));
                sleep_ms(10);
        }
        assert_int_equal(h.runs, 1);
        assert_int_equal(h.failed, HEALTHCHECK_PASSED);
        /* Overdue now: the next starts at the next poll. */
        assert_false(healthcheck_poll(&h, healthcheck_now_ms()));
        assert_true(h.pid > 0 && h.pid != first);
        healthcheck_stop(&h);
        assert_int_equal(h.pid, 0);
}

/* The first run waits `first_in_ms`. */
static void first_run_waits(void **state)
{
        struct healthcheck h;
        int64_t t = healthcheck_now_ms();

        (void)state;
        healthcheck_init(&h, "exit 1", 100, 5000, 60000);
        assert_true(h.next_at >= t + 60000);
        assert_false(healthcheck_poll(&h, t + 1000));
        assert_int_equal(h.pid, 0);
        assert_int_equal(h.runs, 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(exit_zero_passes),
            cmocka_unit_test(exit_status_fails),
            cmocka_unit_test(signal_fails),
            cmocka_unit_test(timeout_kills_the_group),
            cmocka_unit_test(runs_never_overlap),
            cmocka_unit_test(first_run_waits),
        };
        return cmocka_run_group_tests_name("healthcheck", tests, NULL, NULL);
}
