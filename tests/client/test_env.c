/*
 * libbaton's cluster from the environment, against a live 3-node cluster
 * (tests/integration/harness): a handle created with no endpoints takes
 * BATON_ENDPOINTS (the lock it takes is on that cluster), a bad
 * BATON_ENDPOINTS is BATON_EINVAL, endpoints given win over it, and
 * examples/lock_example run as the README runs it, with no ENDPOINTS
 * argument, takes its lock from the cluster BATON_ENDPOINTS names. One
 * cmocka case per scenario (TAP).
 *
 * Environment as the integration tests: BATOND, BATON_TEST_BASE_PORT,
 * BATON_TEST_TMPDIR, BATON_TEST_WATCHDOG.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../include/baton.h"
#include "../integration/harness.h"
#include "../lib/proc.h"
#include "livecluster.h"

#define WATCHDOG_S 120
#define OP_MS      5000
#define EXAMPLE_MS 60000 /* examples/lock_example runs this long at most */

static struct harness cluster;

/* The group's teardown: the cluster this program named in the
 * environment goes, and so does the name. */
static int cluster_down(void **state)
{
        unsetenv("BATON_ENDPOINTS");
        return livecluster_down(state);
}

/* A handle for `endpoints` (NULL: none given) with a bounded timeout; its
 * create's status goes to `*rv`. */
static baton_client *client_for(const char *endpoints, int *rv)
{
        struct baton_options o;
        baton_client *c = NULL;

        baton_options_init(&o);
        o.request_timeout_ms = OP_MS;
        o.client_name = "test_env";
        *rv = baton_client_create(&c, endpoints, &o);
        return *rv == 0 ? c : NULL;
}

/* The holder of `name` as the test cluster itself says, asked by a handle
 * given its endpoints. */
static void holder_on_cluster(const char *name, struct baton_holder *h)
{
        int rv;
        baton_client *c = client_for(cluster.endpoints, &rv);

        assert_int_equal(rv, 0);
        assert_int_equal(baton_holder(c, name, h), 0);
        baton_client_destroy(c);
}

/* No endpoints given: the handle goes where BATON_ENDPOINTS says. The
 * lock it takes is held on the test cluster (not on whatever listens at
 * BATON_DEFAULT_ENDPOINTS), under the token it was granted. */
static void env_endpoints_used(void **state)
{
        struct baton_holder h;
        uint64_t token = 0;
        baton_client *c;
        int rv;

        (void)state;
        assert_int_equal(setenv("BATON_ENDPOINTS", cluster.endpoints, 1), 0);
        c = client_for(NULL, &rv);
        assert_int_equal(rv, 0);
        rv = baton_acquire(c, "te-env", BATON_OWNER_THREAD, OP_MS, &token);
        if (rv != 0) {
                print_message("# acquire with BATON_ENDPOINTS=%s: %s\n",
                              cluster.endpoints, baton_strerror(rv));
        }
        assert_int_equal(rv, 0);
        holder_on_cluster("te-env", &h);
        assert_int_equal(h.held, 1);
        assert_true(h.token == token);
        assert_string_equal(h.client_name, "test_env");
        assert_int_equal(baton_release(c, "te-env", BATON_OWNER_THREAD, token),
                         0);
        baton_client_destroy(c);
}

/* A BATON_ENDPOINTS that is not a list of endpoints is refused as given
 * ones are, when the handle is made. */
static void env_endpoints_bad(void **state)
{
        int rv;

        (void)state;
        assert_int_equal(setenv("BATON_ENDPOINTS", "no port here", 1), 0);
        assert_null(client_for(NULL, &rv));
        assert_int_equal(rv, BATON_EINVAL);
}

/* Endpoints given win over BATON_ENDPOINTS, and an empty BATON_ENDPOINTS
 * counts as unset (the default endpoints, which parse). */
static void given_endpoints_win(void **state)
{
        struct baton_holder h;
        uint64_t token = 0;
        baton_client *c;
        int rv;

        (void)state;
        assert_int_equal(setenv("BATON_ENDPOINTS", "no port here", 1), 0);
        c = client_for(cluster.endpoints, &rv);
        assert_int_equal(rv, 0);
        assert_int_equal(
            baton_acquire(c, "te-given", BATON_OWNER_THREAD, OP_MS, &token), 0);
        holder_on_cluster("te-given", &h);
        assert_true(h.held == 1 && h.token == token);
        baton_client_destroy(c);
        assert_int_equal(setenv("BATON_ENDPOINTS", "", 1), 0);
        c = client_for(NULL, &rv);
        assert_int_equal(rv, 0);
        baton_client_destroy(c);
}

/* The README's C example as the README runs it: no ENDPOINTS argument,
 * the cluster from BATON_ENDPOINTS (and the TLS files from the
 * environment the harness set). */
static void example_without_endpoints(void **state)
{
        const char *path = "./examples/lock_example";
        const char *const none[] = {NULL};
        struct baton_event ev;
        baton_client *watcher;
        baton_watch *w = NULL;
        struct proc p;
        int rv;

        (void)state;
        if (access(path, X_OK) != 0) {
                print_message("# %s is not built (make check builds it)\n",
                              path);
                fail();
        }
        /* The example's grant must show on this cluster's log. */
        watcher = client_for(cluster.endpoints, &rv);
        assert_int_equal(rv, 0);
        assert_int_equal(baton_watch_open(watcher, "example", 0, 0, 0, &w), 0);
        assert_int_equal(setenv("BATON_ENDPOINTS", cluster.endpoints, 1), 0);
        assert_int_equal(proc_start(&p, path, 0, NULL, none), 0);
        if (proc_wait(&p, EXAMPLE_MS) != 0) {
                proc_show(&p);
        }
        assert_true(p.status >= 0 && p.status < 128); /* it exited */
        assert_int_equal(p.status, 0);
        assert_int_equal(baton_watch_next(w, &ev, OP_MS), 0);
        assert_int_equal(ev.kind, BATON_EVENT_GRANTED);
        assert_string_equal(ev.name, "example");
        baton_watch_close(w);
        baton_client_destroy(watcher);
}

int main(int argc, char **argv)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(env_endpoints_used),
            cmocka_unit_test(env_endpoints_bad),
            cmocka_unit_test(given_endpoints_win),
            cmocka_unit_test(example_without_endpoints),
        };

        (void)argc;
        livecluster_use(&cluster, argv[0], WATCHDOG_S);
        return cmocka_run_group_tests_name("client_env", tests, livecluster_up,
                                           cluster_down);
}
