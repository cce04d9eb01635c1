/* Unit tests for the episodes of raft peers that cannot be reached
 * (peerreach.c): one line when a peer stops being reachable, none while
 * it stays so, one when it is reached again, per peer; and the reason
 * named by its kind. The log goes to a temporary file read back here. */
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

#include "../../src/server/log.h"
#include "../../src/server/peerreach.h"

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

static void once_per_episode(void **state)
{
        static struct peerreach r;
        FILE *f = *state;
        const char *down = "raft peer node 3 at 10.0.0.3:7001 cannot be "
                           "reached: refused (connection refused)";
        const char *up = "raft peer node 3 at 10.0.0.3:7001 reached again";
        char why[PEERREACH_WHY_MAX];
        int i;

        memset(&r, 0, sizeof r);
        /* Reached before any failure: nothing to say. */
        peerreach_reached(&r, 3, "10.0.0.3:7001");
        for (i = 0; i < 50; i++) {
                peerreach_failed(
                    &r, 3, "10.0.0.3:7001",
                    peerreach_why(UV_ECONNREFUSED, why, sizeof why));
        }
        assert_true(peerreach_down(&r, 3));
        assert_int_equal(logged(f, down), 1);
        /* Another peer has an episode of its own. */
        peerreach_failed(&r, 2, "10.0.0.2:7001", "timed out");
        assert_int_equal(logged(f,
                                "raft peer node 2 at 10.0.0.2:7001 cannot be "
                                "reached: timed out"),
                         1);
        peerreach_reached(&r, 3, "10.0.0.3:7001");
        peerreach_reached(&r, 3, "10.0.0.3:7001");
        assert_false(peerreach_down(&r, 3));
        assert_true(peerreach_down(&r, 2));
        assert_int_equal(logged(f, up), 1);
        /* A second episode: one line more. */
        peerreach_failed(&r, 3, "10.0.0.3:7001",
                         peerreach_why(UV_ECONNREFUSED, why, sizeof why));
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
