/*
 * Crash points (src/server/base/crashpoint.h), as batond-crashpoints has
 * them: BATON_CRASH_AT=NAME[:NTH] kills the process with SIGKILL at the
 * NTH hit of NAME, after its line on stderr, and at no other hit. Each
 * case runs the hits in a forked child and looks at how it ended.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../src/server/base/crashpoint.h"
#include "../lib/forkrun.h"

struct hits {
        const char *at, *name;
        unsigned n;
};

static void hit(void *arg)
{
        const struct hits *h = arg;
        unsigned i;

        if (h->at == NULL) {
                unsetenv("BATON_CRASH_AT");
        } else {
                setenv("BATON_CRASH_AT", h->at, 1);
        }
        for (i = 0; i < h->n; i++) {
                CRASHPOINT(h->name);
        }
}

/* How a child that arms `at` (NULL: unset) and hits `name` `hits` times
 * ended: its wait status, and what it wrote on stderr into `said`. */
static int run_hits(const char *at, const char *name, unsigned hits, char *said,
                    size_t cap)
{
        struct hits h = {at, name, hits};
        int status = forkrun(hit, &h, said, cap);

        assert_int_not_equal(status, -1);
        return status;
}

static bool killed(int status)
{
        return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
}

static bool exited_0(int status)
{
        return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* Unarmed, a point does nothing however often it is hit. */
static void test_unarmed(void **state)
{
        char said[256];

        (void)state;
        assert_true(
            exited_0(run_hits(NULL, "append-before", 50, said, sizeof said)));
        assert_string_equal(said, "");
        assert_true(
            exited_0(run_hits("", "append-before", 50, said, sizeof said)));
}

/* NAME alone: the first hit kills, and says so first. */
static void test_first_hit(void **state)
{
        char said[256];

        (void)state;
        assert_true(killed(
            run_hits("restore-after", "restore-after", 1, said, sizeof said)));
        assert_non_null(strstr(said, "crash point restore-after hit (1)"));
}

/* NAME:NTH: the NTH hit kills, not one before. */
static void test_nth_hit(void **state)
{
        char said[256];

        (void)state;
        assert_true(exited_0(
            run_hits("append-after:3", "append-after", 2, said, sizeof said)));
        assert_string_equal(said, "");
        assert_true(killed(
            run_hits("append-after:3", "append-after", 3, said, sizeof said)));
        assert_non_null(strstr(said, "crash point append-after hit (3)"));
}

/* Another point, or a name that only begins or extends the armed one,
 * does not count. */
static void test_other_points(void **state)
{
        char said[256];

        (void)state;
        assert_true(
            exited_0(run_hits("snapshot-put-after", "snapshot-put-before", 5,
                              said, sizeof said)));
        assert_true(exited_0(
            run_hits("append", "append-before", 5, said, sizeof said)));
        assert_true(exited_0(run_hits("append-before-x", "append-before", 5,
                                      said, sizeof said)));
        assert_string_equal(said, "");
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_unarmed),
            cmocka_unit_test(test_first_hit),
            cmocka_unit_test(test_nth_hit),
            cmocka_unit_test(test_other_points),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
