/* The words in which a link's I/O tells an endpoint's failure
 * (src/client/linkio.c): the system's, lower-cased, and a failed connect's
 * kind, which test_failfast then finds in what a call says. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "../../src/client/linkio.h"
#include "../../src/client/reach.h"

/* strerror()'s words, lower-cased, then what the caller adds. */
static void errno_words(void **state)
{
        char why[REACH_WHY_MAX];

        (void)state;
        linkio_why_errno(why, sizeof why, ECONNREFUSED, " before answering");
        assert_string_equal(why, "connection refused before answering");
        linkio_why_errno(why, sizeof why, ECONNRESET, "");
        assert_string_equal(why, "connection reset by peer");
}

/* A connect's failure by its kind: a timeout names the time it was given,
 * a route that does not go (a firewall's "permission denied" too) is
 * "unreachable", anything else is the system's words. */
static void connect_words(void **state)
{
        char why[REACH_WHY_MAX];

        (void)state;
        linkio_why_connect(why, sizeof why, ETIMEDOUT, 1000);
        assert_string_equal(why, "timed out: no connection within 1000 ms");
        linkio_why_connect(why, sizeof why, EHOSTUNREACH, 1000);
        assert_string_equal(why, "unreachable: no route to host");
        linkio_why_connect(why, sizeof why, ENETUNREACH, 1000);
        assert_string_equal(why, "unreachable: network is unreachable");
        linkio_why_connect(why, sizeof why, EACCES, 1000);
        assert_string_equal(why, "unreachable: permission denied");
        linkio_why_connect(why, sizeof why, EPERM, 1000);
        assert_string_equal(why, "unreachable: operation not permitted");
        linkio_why_connect(why, sizeof why, ECONNREFUSED, 1000);
        assert_string_equal(why, "connection refused");
}

/* A reason longer than the room for it is cut, never overrun. */
static void words_fit(void **state)
{
        char why[12];

        (void)state;
        linkio_why_connect(why, sizeof why, ETIMEDOUT, 1000);
        assert_string_equal(why, "timed out: ");
        linkio_why_connect(why, sizeof why, EHOSTUNREACH, 1000);
        assert_string_equal(why, "unreachable");
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(errno_words),
            cmocka_unit_test(connect_words),
            cmocka_unit_test(words_fit),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
