/* Unit tests for the episodes of raft peers that cannot be reached
 * (peerreach.c): one line when a peer has not been reachable for the
 * grace, none while it stays so, one when it is reached again, per peer,
 * nothing for a moment's refusal; and the reason named by its kind. The log
 * goes to a temporary file read back here. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <uv.h>

#include "../../src/server/base/log.h"
#include "../../src/server/raft/peerreach.h"

/* Lines of the log (stderr, sent to the temporary file `f`) with
 * `needle`. */
static unsigned logged(FILE *f, const char *needle)
{
        char line[1024];
        unsigned n = 0;

        fflush(stderr);
        rewind(f);
        while (fgets(line, sizeof line, f) != NULL) {
                n += strstr(line, needle) != NULL;
        }
        fseek(f, 0, SEEK_END); /* the offset stderr writes at too */
        return n;
}

/* stderr onto a temporary file, which can be read back (the test's own
 * stderr may be a pipe). */
static int to_file(void **state)
{
        FILE *f = tmpfile();

        (void)state;
        if (f == NULL || dup2(fileno(f), fileno(stderr)) < 0) {
                return -1;
        }
        *state = f;
        return 0;
}

/* A refused dial of node 3 at `ms`, begun then. */
static void refused_at(struct peerreach *r, uint64_t ms)
{
        char why[PEERREACH_WHY_MAX];

        peerreach_failed(r, 3, "10.0.0.3:7001",
                         peerreach_why(UV_ECONNREFUSED, why, sizeof why), ms,
                         ms);
}

static void once_per_episode(void **state)
{
        static struct peerreach r;
        FILE *f = *state;
        const char *down = "raft peer node 3 at 10.0.0.3:7001 cannot be "
                           "reached: refused (connection refused)";
        const char *up = "raft peer node 3 at 10.0.0.3:7001 reached again";
        uint64_t ms;

        memset(&r, 0, sizeof r);
        /* Reached before any failure: nothing to say. */
        peerreach_reached(&r, 3, "10.0.0.3:7001");
        /* Refused for a moment (a peer starting): nothing said. */
        refused_at(&r, 1000);
        refused_at(&r, 1000 + PEERREACH_GRACE_MS - 1);
        assert_true(peerreach_down(&r, 3));
        peerreach_reached(&r, 3, "10.0.0.3:7001");
        assert_int_equal(logged(f, "10.0.0.3:7001"), 0);
        /* Refused for longer, once a second: one line. */
        for (ms = 10000; ms < 60000; ms += 1000) {
                refused_at(&r, ms);
        }
        assert_int_equal(logged(f, down), 1);
        /* Another peer has an episode of its own: a dial that timed out
         * after longer than the grace is said at once. */
        peerreach_failed(&r, 2, "10.0.0.2:7001", "timed out", 60000,
                         60000 + 5000);
        assert_int_equal(logged(f, "raft peer node 2 at 10.0.0.2:7001 cannot "
                                   "be reached: timed out (for 5000 ms"),
                         1);
        peerreach_reached(&r, 3, "10.0.0.3:7001");
        peerreach_reached(&r, 3, "10.0.0.3:7001");
        assert_false(peerreach_down(&r, 3));
        assert_true(peerreach_down(&r, 2));
        assert_int_equal(logged(f, up), 1);
        /* A second episode: one line more. */
        for (ms = 70000; ms < 80000; ms += 1000) {
                refused_at(&r, ms);
        }
        assert_int_equal(logged(f, down), 2);
}

static void reasons_named(void **state)
{
        char why[PEERREACH_WHY_MAX];

        (void)state;
        assert_non_null(
            strstr(peerreach_why(UV_ECONNREFUSED, why, sizeof why), "refused"));
        assert_non_null(
            strstr(peerreach_why(UV_ETIMEDOUT, why, sizeof why), "timed out"));
        assert_non_null(strstr(peerreach_why(UV_EHOSTUNREACH, why, sizeof why),
                               "no route"));
        assert_non_null(
            strstr(peerreach_why(UV_ENETUNREACH, why, sizeof why), "no route"));
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup(once_per_episode, to_file),
            cmocka_unit_test(reasons_named),
        };

        log_set_level(LOG_INFO);
        return cmocka_run_group_tests(tests, NULL, NULL);
}
