/*
 * Values on grants through libbaton against a live 3-node cluster
 * (tests/integration/harness): baton_acquire_with() of a lock, readers and
 * permits with values, baton_set_value() and baton_set_value_in() fenced
 * by the token, baton_holders_values() and baton_list_values() reading
 * them back; and hold times (baton_acquire_with()'s hold_ms,
 * baton_extend()). One cmocka case per scenario (TAP). Every wait is bounded;
 * environment as the integration tests: BATOND, BATON_TEST_BASE_PORT,
 * BATON_TEST_TMPDIR.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "../../include/baton.h"
#include "../integration/harness.h"
#include "../lib/tclient.h"
#include "liveclient.h"
#include "livecluster.h"

#define WATCHDOG_S 120

static struct harness cluster;

/* The value of `name`'s grant `i`, read through `c`: "" when it has
 * none; "(n=N)" when there are not that many grants. */
static const char *value_of(baton_client *c, const char *name, size_t i)
{
        static struct baton_grant_value g[4];
        size_t n = 0;

        assert_ok(baton_holders_values(c, name, g, 4, &n, NULL));
        if (i >= n) {
                static char none[32];
                snprintf(none, sizeof none, "(n=%zu)", n);
                return none;
        }
        return g[i].value;
}

/* A value on every kind of grant: set at acquire, read by another
 * handle, changed by the holder with its token (fenced), cleared, kept by
 * a reentrant acquire, ended with the grant; and the refusals by name. */
static void grant_values(void **state)
{
        baton_client *a = liveclient_new(10000, NULL);
        baton_client *b = liveclient_new(10000, NULL);
        struct baton_acquire_options o = {.value = "10.0.0.7:8080"};
        struct baton_grant_value g[4];
        struct baton_lock_value l[4];
        char name[64], rw[64], sem[64], longest[BATON_VALUE_MAX + 2];
        uint64_t t1 = 0, t2 = 0, tb = 0, tr1 = 0, tr2 = 0, ts = 0;
        size_t n = 0;

        (void)state;
        liveclient_name(name, sizeof name, "valued");
        liveclient_name(rw, sizeof rw, "valued-rw");
        liveclient_name(sem, sizeof sem, "valued-sem");
        assert_ok(baton_acquire_with(a, name, 1, BATON_WAIT_TRY, &o, &t1));
        assert_ok(baton_list_values(b, name, l, 4, &n, NULL));
        assert_int_equal(n, 1);
        assert_string_equal(l[0].lock.name, name);
        assert_int_equal(l[0].lock.token, t1);
        assert_string_equal(l[0].value, "10.0.0.7:8080");
        assert_ok(baton_holders_values(b, name, g, 4, &n, NULL));
        assert_int_equal(n, 1);
        assert_int_equal(g[0].grant.token, t1);
        assert_int_equal(g[0].grant.session, baton_session_id(a));
        assert_int_equal(g[0].grant.mode, BATON_MODE_EXCLUSIVE);
        assert_string_equal(g[0].value, "10.0.0.7:8080");
        /* The holder changes it with its token; another token or another
         * session changes nothing. */
        assert_ok(baton_set_value(a, name, 1, t1, "job-42"));
        assert_string_equal(value_of(b, name, 0), "job-42");
        assert_int_equal(baton_set_value(a, name, 1, t1 + 1, "stale"),
                         BATON_ESTALE);
        assert_int_equal(baton_set_value(a, name, 2, t1, "other owner"),
                         BATON_ENOTHOLDER);
        assert_ok(baton_acquire(b, rw, 1, BATON_WAIT_TRY, &tb)); /* a session */
        assert_int_equal(baton_set_value(b, name, 1, t1, "not mine"),
                         BATON_ENOTHOLDER);
        memset(longest, 'v', sizeof longest - 1);
        longest[sizeof longest - 1] = '\0';
        assert_int_equal(baton_set_value(a, name, 1, t1, longest),
                         BATON_EINVAL);
        assert_string_equal(value_of(b, name, 0), "job-42");
        /* A reentrant acquire keeps the grant's value and token. */
        o.value = "ignored";
        assert_ok(baton_acquire_with(a, name, 1, BATON_WAIT_TRY, &o, &t2));
        assert_int_equal(t2, t1);
        assert_string_equal(value_of(b, name, 0), "job-42");
        assert_ok(baton_release(a, name, 1, t1));
        /* Cleared by an empty value; gone with the grant. */
        assert_ok(baton_set_value(a, name, 1, t1, ""));
        assert_string_equal(value_of(b, name, 0), "");
        assert_ok(baton_release(a, name, 1, t1));
        assert_string_equal(value_of(b, name, 0), "(n=0)");
        /* Readers and semaphore permits carry values too. */
        assert_ok(baton_release(b, rw, 1, tb));
        o = (struct baton_acquire_options){.mode = BATON_MODE_SHARED,
                                           .value = "reader-a"};
        assert_ok(baton_acquire_with(a, rw, 1, BATON_WAIT_TRY, &o, &tr1));
        o.value = "reader-b";
        assert_ok(baton_acquire_with(b, rw, 1, BATON_WAIT_TRY, &o, &tr2));
        assert_ok(baton_holders_values(a, rw, g, 4, &n, NULL));
        assert_int_equal(n, 2);
        assert_int_equal(g[0].grant.mode, BATON_MODE_SHARED);
        assert_string_equal(g[0].value, "reader-a");
        assert_string_equal(g[1].value, "reader-b");
        assert_ok(baton_set_value(b, rw, 1, tr2, "reader-b2"));
        assert_string_equal(value_of(a, rw, 0), "reader-a");
        assert_string_equal(value_of(a, rw, 1), "reader-b2");
        /* A listing's entry is the first holder's grant, value and all. */
        assert_ok(baton_list_values(b, rw, l, 4, &n, NULL));
        assert_int_equal(n, 1);
        assert_int_equal(l[0].lock.token, tr1);
        assert_string_equal(l[0].value, "reader-a");
        o = (struct baton_acquire_options){
            .mode = BATON_MODE_PERMITS, .limit = 2, .permits = 1, .value = "p"};
        assert_ok(baton_acquire_with(a, sem, 1, BATON_WAIT_TRY, &o, &ts));
        assert_ok(baton_holders_values(b, sem, g, 4, &n, NULL));
        assert_int_equal(n, 1);
        assert_int_equal(g[0].grant.mode, BATON_MODE_PERMITS);
        assert_int_equal(g[0].grant.limit, 2);
        assert_string_equal(g[0].value, "p");
        /* Refused before anything is sent. */
        o.value = longest;
        assert_int_equal(baton_acquire_with(b, sem, 1, 0, &o, NULL),
                         BATON_EINVAL);
        o.value = NULL;
        o.reserved[1] = 1;
        assert_int_equal(baton_acquire_with(b, sem, 1, 0, &o, NULL),
                         BATON_EINVAL);
        o = (struct baton_acquire_options){.mode = BATON_MODE_LEADER};
        assert_int_equal(baton_acquire_with(b, name, 1, 0, &o, NULL),
                         BATON_EINVAL);
        assert_string_equal(value_of(a, name, 0), "(n=0)");
        /* NULL options: an exclusive lock without a value. */
        assert_ok(baton_acquire_with(b, name, 1, BATON_WAIT_TRY, NULL, &t2));
        assert_true(t2 > t1);
        assert_string_equal(value_of(a, name, 0), "");
        baton_client_destroy(a);
        baton_client_destroy(b);
}

/* A detached lease's value, changed from another handle with the
 * session's secret (baton_set_value_in()), fenced by the token as
 * baton_release_in() is. */
static void detached_set_value_in(void **state)
{
        baton_client *a = liveclient_new(10000, NULL);
        baton_client *b = liveclient_new(10000, NULL);
        struct baton_acquire_options o = {.value = "before"};
        uint8_t secret[BATON_SECRET_SIZE], wrong[BATON_SECRET_SIZE];
        uint64_t t1 = 0, session = 0;
        char name[64];

        (void)state;
        liveclient_name(name, sizeof name, "detached-value");
        assert_ok(
            baton_acquire_with(a, name, BATON_OWNER_DETACHED, 1000, &o, &t1));
        assert_ok(baton_client_detach(a, &session, secret));
        baton_client_destroy(a); /* does not close the session */
        assert_string_equal(value_of(b, name, 0), "before");
        /* A wrong secret first: b's connections have not proved the
         * session yet. */
        memcpy(wrong, secret, sizeof wrong);
        wrong[0] ^= 1;
        assert_int_equal(baton_set_value_in(b, session, wrong, name,
                                            BATON_OWNER_DETACHED, t1, "x"),
                         BATON_EPERM);
        assert_ok(baton_set_value_in(b, session, secret, name,
                                     BATON_OWNER_DETACHED, t1, "detached"));
        assert_string_equal(value_of(b, name, 0), "detached");
        assert_int_equal(baton_set_value_in(b, session, secret, name,
                                            BATON_OWNER_DETACHED, t1 - 1, "x"),
                         BATON_ESTALE);
        assert_int_equal(
            baton_set_value_in(b, session, secret, name, 7, t1, "x"),
            BATON_ENOTHOLDER);
        assert_string_equal(value_of(b, name, 0), "detached");
        assert_ok(baton_release_in(b, session, secret, name,
                                   BATON_OWNER_DETACHED, t1));
        assert_string_equal(value_of(b, name, 0), "(n=0)");
        baton_client_destroy(b);
}

/* on_lock_lost: count the grants the handle heard it lost. */
static void count_lost(baton_client *c, const char *name, uint64_t token,
                       void *data)
{
        (void)c;
        (void)name;
        (void)token;
        atomic_fetch_add((atomic_int *)data, 1);
}

/* Poll (at most `ms`) until `name` is free, as `c` reads it: whether it
 * became free. */
static bool freed_within(baton_client *c, const char *name, int64_t ms)
{
        int64_t end = tclient_now_ms() + ms;
        struct baton_holder h;

        for (;;) {
                assert_ok(baton_holder(c, name, &h));
                if (!h.held) {
                        return true;
                }
                if (tclient_now_ms() >= end) {
                        return false;
                }
                tclient_sleep_ms(50);
        }
}

/* A hold time: the cluster ends the grant when it runs out, however
 * alive the session, tells the holder as of a revoke, and hands the lock
 * on with a higher token; baton_extend() restarts it, fenced by the
 * token; the refusals by name. */
static void hold_times(void **state)
{
        atomic_int lost = 0;
        struct baton_options o;
        baton_client *a, *b = liveclient_new(10000, NULL);
        struct baton_acquire_options w = {.hold_ms = 600};
        uint64_t t1 = 0, t2 = 0, t3 = 0;
        char name[64], other[64];

        (void)state;
        baton_options_init(&o);
        o.on_lock_lost = count_lost;
        o.data = &lost;
        o.request_timeout_ms = LIVECLIENT_OP_MS;
        a = liveclient_new(10000, &o);
        liveclient_name(name, sizeof name, "held-out");
        liveclient_name(other, sizeof other, "extended");
        assert_ok(baton_acquire_with(a, name, 1, BATON_WAIT_TRY, &w, &t1));
        /* Ended by the cluster within the hold time and a leader's
         * margin (the session, TTL 10 s, lives on). */
        assert_true(freed_within(b, name, 8000));
        assert_int_equal(baton_session_state(a), BATON_SESSION_LIVE);
        assert_ok(baton_acquire(b, name, 1, BATON_WAIT_TRY, &t2));
        assert_true(t2 > t1);
        assert_int_not_equal(baton_release(a, name, 1, t1), 0);
        assert_ok(baton_release(b, name, 1, t2));
        /* Extended before it runs out: held well past the first hold. */
        w.hold_ms = 1500;
        assert_ok(baton_acquire_with(a, other, 1, BATON_WAIT_TRY, &w, &t3));
        assert_ok(baton_extend(a, other, 1, t3, 60000));
        tclient_sleep_ms(2500);
        assert_false(freed_within(b, other, 0));
        assert_int_equal(baton_extend(a, other, 1, t3 - 1, 60000),
                         BATON_ESTALE);
        assert_int_equal(baton_extend(b, other, 1, t3, 60000),
                         BATON_ENOTHOLDER);
        assert_int_equal(baton_extend(a, other, 1, t3, 0), BATON_EINVAL);
        /* Above the cluster's max-hold-ms (a day by default). */
        assert_int_equal(baton_extend(a, other, 1, t3, 86400001), BATON_EINVAL);
        w.hold_ms = 86400001;
        assert_int_equal(
            baton_acquire_with(b, name, 1, BATON_WAIT_TRY, &w, NULL),
            BATON_EINVAL);
        /* A grant without a hold time has none to restart. */
        assert_ok(baton_acquire(b, name, 1, BATON_WAIT_TRY, &t2));
        assert_int_equal(baton_extend(b, name, 1, t2, 1000), BATON_EINVAL);
        assert_ok(baton_release(a, other, 1, t3));
        assert_ok(baton_release(b, name, 1, t2));
        /* The holder heard of the grant that ran out at a keepalive. */
        for (int i = 0; i < 100 && atomic_load(&lost) == 0; i++) {
                tclient_sleep_ms(100);
        }
        assert_int_equal(atomic_load(&lost), 1);
        baton_client_destroy(a);
        baton_client_destroy(b);
}

int main(int argc, char **argv)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(grant_values),
            cmocka_unit_test(detached_set_value_in),
            cmocka_unit_test(hold_times),
        };

        (void)argc;
        livecluster_use(&cluster, argv[0], WATCHDOG_S);
        return cmocka_run_group_tests_name("client values", tests,
                                           livecluster_up, livecluster_down);
}
