/*
 * libbaton's session bound to its owner's health, against a live 3-node
 * cluster (tests/integration/harness): baton_health_check() closes the
 * session when its check fails, and baton_session_close() on demand; the
 * lock goes to the next taker long before the TTL could have freed it.
 * One cmocka case per scenario (TAP). Every wait is bounded; environment
 * as the integration tests: BATOND, BATON_TEST_BASE_PORT,
 * BATON_TEST_TMPDIR.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "../../include/baton.h"
#include "../integration/harness.h"
#include "../lib/tclient.h"
#include "liveclient.h"
#include "livecluster.h"

#define WATCHDOG_S 120

static struct harness cluster;

/* baton_health_check()'s state, shared with its thread. */
struct health_case {
        atomic_int healthy;
        atomic_int calls;
        atomic_int lost;              /* on_lock_lost calls */
        _Atomic(baton_client *) seen; /* the handle the check was given */
};

static int health_fn(baton_client *c, void *data)
{
        struct health_case *hc = data;

        atomic_store(&hc->seen, c);
        atomic_fetch_add(&hc->calls, 1);
        return atomic_load(&hc->healthy) ? 0 : 1;
}

static void health_lost(baton_client *c, const char *name, uint64_t token,
                        void *data)
{
        struct health_case *hc = data;

        (void)c;
        (void)name;
        (void)token;
        atomic_fetch_add(&hc->lost, 1);
}

/* Wait (at most `ms`) until `*v` reaches `n`: whether it did. */
static bool reaches(atomic_int *v, int n, int ms)
{
        int64_t end = tclient_now_ms() + ms;

        while (atomic_load(v) < n && tclient_now_ms() < end) {
                tclient_sleep_ms(10);
        }
        return atomic_load(v) >= n;
}

/* Poll `b`'s try of `name` until it is granted (within `ms`): its token. */
static uint64_t take_when_free(baton_client *b, const char *name, int ms)
{
        int64_t end = tclient_now_ms() + ms;
        uint64_t t = 0;

        while (tclient_now_ms() < end) {
                if (baton_acquire(b, name, 0, BATON_WAIT_TRY, &t) == 0) {
                        return t;
                }
                tclient_sleep_ms(20);
        }
        return 0;
}

/* A check that fails ends the session: its lock goes to the next taker
 * long before the TTL (30 s) could have freed it, the holder is told
 * (on_lock_lost, state EXPIRED), and the handle opens a new session for
 * its next call; baton_session_close() does the same on demand. */
static void health_check_ends_session(void **state)
{
        struct health_case hc = {0};
        struct baton_options o;
        baton_client *a, *b = liveclient_new(10000, NULL);
        uint64_t t1 = 0, t2, t3 = 0, first;
        char name[64];

        (void)state;
        atomic_store(&hc.healthy, 1);
        baton_options_init(&o);
        o.request_timeout_ms = LIVECLIENT_OP_MS;
        o.on_lock_lost = health_lost;
        o.data = &hc;
        a = liveclient_new(30000, &o);
        liveclient_name(name, sizeof name, "health");
        assert_int_equal(baton_health_check(a, health_fn, 5, &hc),
                         BATON_EINVAL);
        assert_int_equal(baton_health_check(NULL, health_fn, 50, &hc),
                         BATON_EINVAL);
        assert_ok(baton_health_check(a, health_fn, 50, &hc));
        assert_ok(baton_acquire(a, name, 0, BATON_WAIT_FOREVER, &t1));
        first = baton_session_id(a);
        /* Healthy: checked again and again, the lock kept. */
        assert_true(reaches(&hc.calls, 3, 10000));
        assert_ptr_equal(atomic_load(&hc.seen), a);
        assert_int_equal(baton_session_state(a), BATON_SESSION_LIVE);
        assert_int_equal(baton_acquire(b, name, 0, BATON_WAIT_TRY, &t2),
                         BATON_EBUSY);
        /* Unhealthy: the session is closed, the lock free at once. */
        atomic_store(&hc.healthy, 0);
        t2 = take_when_free(b, name, 10000);
        assert_true(t2 > t1);
        assert_int_equal(baton_session_state(a), BATON_SESSION_EXPIRED);
        assert_true(reaches(&hc.lost, 1, 10000));
        assert_ok(baton_release(b, name, 0, t2));
        /* Healthy again: a new session, checked as the first was. */
        atomic_store(&hc.healthy, 1);
        assert_ok(baton_acquire(a, name, 0, BATON_WAIT_FOREVER, &t3));
        assert_true(baton_session_id(a) != first);
        assert_int_equal(baton_session_state(a), BATON_SESSION_LIVE);
        /* Stopped: no more calls. */
        assert_ok(baton_health_check(a, NULL, 0, NULL));
        atomic_store(&hc.healthy, 0);
        tclient_sleep_ms(200);
        assert_int_equal(baton_session_state(a), BATON_SESSION_LIVE);
        /* On demand. */
        assert_ok(baton_session_close(a));
        assert_int_equal(baton_session_state(a), BATON_SESSION_EXPIRED);
        assert_int_equal(baton_session_close(a), BATON_ENOSESSION);
        assert_true(take_when_free(b, name, 10000) > t3);
        baton_client_destroy(a);
        baton_client_destroy(b);
}

int main(int argc, char **argv)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(health_check_ends_session),
        };

        (void)argc;
        livecluster_use(&cluster, argv[0], WATCHDOG_S);
        return cmocka_run_group_tests_name("client_health", tests,
                                           livecluster_up, livecluster_down);
}
