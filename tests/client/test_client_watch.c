/*
 * libbaton's watches against a live 3-node cluster (tests/integration/
 * harness): events in log order with their tokens, the callback form, a
 * watch resuming across a leader kill, and one from before what the nodes
 * keep. One cmocka case per scenario (TAP); every wait is a client deadline
 * or a bounded poll, and a scenario that kills a node restores the cluster
 * in its teardown. Environment as test_client.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../include/baton.h"
#include "../integration/harness.h"
#include "../lib/proc.h"
#include "../lib/tclient.h"
#include "acqthread.h"
#include "liveclient.h"
#include "livecluster.h"

#define WATCHDOG_S 240

static struct harness cluster;
static const char *argv0;

/* The next event of `w` within LIVECLIENT_OP_MS, which must come. */
static struct baton_event next_event(baton_watch *w)
{
        struct baton_event e;

        assert_ok(baton_watch_next(w, &e, LIVECLIENT_OP_MS));
        return e;
}

/* Whether `a` comes after `b` in log order. */
static bool after(const struct baton_event *a, const struct baton_event *b)
{
        return a->index > b->index || (a->index == b->index && a->ord > b->ord);
}

/* Watches: a name's grants and releases in log order with their tokens;
 * a prefix watch sees the names it begins and no other; a watch opened
 * after an event it saw resumes with exactly what followed; an election
 * is seen with its values; a name of 256 bytes is refused. */
static void watches(void **state)
{
        baton_client *a = liveclient_new(10000, NULL);
        baton_client *b = liveclient_new(10000, NULL);
        struct baton_event e[6], f, g;
        char name[64], pfx[64], other[64], elect[80], toolong[300];
        baton_watch *w, *p, *again, *twin;
        uint64_t t[3];
        int i;

        (void)state;
        liveclient_name(name, sizeof name, "watched");
        liveclient_name(pfx, sizeof pfx, "pfx/");
        liveclient_name(other, sizeof other, "elsewhere");
        snprintf(elect, sizeof elect, "%sleader", pfx);
        assert_ok(baton_watch_open(a, name, 0, 0, 0, &w));
        assert_ok(baton_watch_open(a, pfx, BATON_WATCH_PREFIX, 0, 0, &p));
        /* A second watch of the name on the same connection: the server
         * sends each event once, and both get it. */
        assert_ok(baton_watch_open(a, name, 0, 0, 0, &twin));
        assert_int_equal(baton_watch_next(w, &f, 50), BATON_ETIMEDOUT);
        for (i = 0; i < 3; i++) {
                assert_ok(baton_acquire(b, name, 1, BATON_WAIT_TRY, &t[i]));
                assert_ok(baton_release(b, name, 1, t[i]));
        }
        for (i = 0; i < 6; i++) {
                e[i] = next_event(w);
                assert_string_equal(e[i].name, name);
                assert_int_equal(e[i].kind, i % 2 == 0 ? BATON_EVENT_GRANTED
                                                       : BATON_EVENT_RELEASED);
                assert_int_equal(e[i].cause, i % 2 == 0 ? BATON_CAUSE_ACQUIRE
                                                        : BATON_CAUSE_RELEASE);
                assert_true(e[i].token == t[i / 2]);
                assert_int_equal(e[i].session, baton_session_id(b));
                assert_true(i == 0 || after(&e[i], &e[i - 1]));
        }
        for (i = 0; i < 6; i++) {
                f = next_event(twin);
                assert_true(f.index == e[i].index && f.ord == e[i].ord &&
                            f.token == e[i].token);
        }
        assert_int_equal(baton_watch_next(twin, &f, 50), BATON_ETIMEDOUT);
        baton_watch_close(twin);
        /* From the second event on, again: the same four after it. */
        assert_ok(baton_watch_open(a, name, 0, e[1].index, e[1].ord, &again));
        for (i = 2; i < 6; i++) {
                f = next_event(again);
                assert_true(f.index == e[i].index && f.ord == e[i].ord &&
                            f.kind == e[i].kind && f.token == e[i].token);
        }
        assert_int_equal(baton_watch_next(again, &f, 50), BATON_ETIMEDOUT);
        baton_watch_close(again);
        /* The prefix: its election, with values; not the other name. */
        assert_ok(baton_acquire(b, other, 1, BATON_WAIT_TRY, &t[0]));
        assert_ok(baton_campaign(b, elect, "v1", 1, BATON_WAIT_TRY, &t[1]));
        assert_ok(baton_proclaim(b, elect, 1, t[1], "v2"));
        f = next_event(p);
        g = next_event(p);
        assert_string_equal(f.name, elect);
        assert_int_equal(f.kind, BATON_EVENT_GRANTED);
        assert_int_equal(f.mode, BATON_MODE_LEADER);
        assert_string_equal(f.value, "v1");
        assert_int_equal(g.kind, BATON_EVENT_PROCLAIMED);
        assert_string_equal(g.value, "v2");
        assert_true(g.token == t[1] && after(&g, &f));
        assert_int_equal(baton_watch_next(p, &f, 50), BATON_ETIMEDOUT);
        assert_int_equal(baton_watch_next(w, &f, 50), BATON_ETIMEDOUT);
        memset(toolong, 'x', 256);
        toolong[256] = '\0';
        assert_int_equal(baton_watch_open(a, toolong, 0, 0, 0, &again),
                         BATON_ENAME);
        assert_int_equal(baton_watch_open(a, "", 0, 0, 0, &again), BATON_ENAME);
        baton_watch_close(w);
        baton_watch_close(p);
        baton_client_destroy(a);
        baton_client_destroy(b);
}

/* What a watch's callback saw. */
struct seen {
        pthread_mutex_t mu;
        struct baton_event ev[8];
        unsigned n;
        int end;           /* the status of the end, if told */
        baton_watch *self; /* closes itself after its second event */
};

static void on_watch_event(void *data, const struct baton_event *ev, int status)
{
        struct seen *s = data;
        baton_watch *close_me = NULL;

        pthread_mutex_lock(&s->mu);
        if (ev == NULL) {
                s->end = status;
        } else if (s->n < 8) {
                s->ev[s->n++] = *ev;
                if (s->n == 2) {
                        close_me = s->self;
                        s->self = NULL;
                }
        }
        pthread_mutex_unlock(&s->mu);
        baton_watch_close(close_me); /* from inside its own callback */
}

static unsigned seen_count(struct seen *s)
{
        unsigned n;

        pthread_mutex_lock(&s->mu);
        n = s->n;
        pthread_mutex_unlock(&s->mu);
        return n;
}

/* The callback form: events arrive in order on the handle's thread; a
 * watch closed from inside its callback gets no more; one closed from
 * another thread is told no end after it was closed. */
static void watch_callbacks(void **state)
{
        baton_client *a = liveclient_new(10000, NULL);
        baton_client *b = liveclient_new(10000, NULL);
        struct seen all = {.mu = PTHREAD_MUTEX_INITIALIZER};
        struct seen two = {.mu = PTHREAD_MUTEX_INITIALIZER};
        baton_watch *w, *w2;
        struct baton_event f;
        int64_t deadline;
        char name[64];
        uint64_t t[3];
        unsigned i;

        (void)state;
        liveclient_name(name, sizeof name, "watched-cb");
        assert_ok(
            baton_watch_open_cb(a, name, 0, 0, 0, on_watch_event, &all, &w));
        assert_ok(
            baton_watch_open_cb(a, name, 0, 0, 0, on_watch_event, &two, &w2));
        pthread_mutex_lock(&two.mu);
        two.self = w2;
        pthread_mutex_unlock(&two.mu);
        assert_int_equal(baton_watch_next(w, &f, 0), BATON_EINVAL);
        for (i = 0; i < 3; i++) {
                assert_ok(baton_acquire(b, name, 1, BATON_WAIT_TRY, &t[i]));
                assert_ok(baton_release(b, name, 1, t[i]));
        }
        deadline = tclient_now_ms() + LIVECLIENT_OP_MS;
        while (seen_count(&all) < 6 && tclient_now_ms() < deadline) {
                tclient_sleep_ms(5);
        }
        assert_int_equal(seen_count(&all), 6);
        for (i = 0; i < 6; i++) {
                assert_true(all.ev[i].token == t[i / 2]);
                assert_int_equal(all.ev[i].kind, i % 2 == 0
                                                     ? BATON_EVENT_GRANTED
                                                     : BATON_EVENT_RELEASED);
                assert_true(i == 0 || after(&all.ev[i], &all.ev[i - 1]));
        }
        tclient_sleep_ms(100);
        assert_int_equal(seen_count(&two), 2); /* it closed itself */
        baton_watch_close(w);
        pthread_mutex_lock(&all.mu);
        assert_int_equal(all.end, 0); /* closed: told no end after it */
        pthread_mutex_unlock(&all.mu);
        baton_client_destroy(a);
        baton_client_destroy(b);
}

/* Kill the leader a watch is served by, after `kill_at` of six rounds of
 * acquire and release: the library resumes the watch on the next node
 * from the last event delivered (or, before any, from where the killed
 * node started it), so every grant and release is seen once, in order. */
static void watch_failover(unsigned kill_at)
{
        baton_client *a = liveclient_new(10000, NULL);
        baton_client *b = liveclient_new(10000, NULL);
        struct baton_event last, f;
        struct baton_holder h;
        uint64_t t[6];
        unsigned killed, seen = 0;
        char name[64];
        baton_watch *w;
        unsigned i;

        liveclient_name(name, sizeof name, "watched-failover");
        /* A read first: the handle's connection is then the leader's. */
        assert_ok(baton_holder(a, name, &h));
        assert_ok(baton_watch_open(a, name, 0, 0, 0, &w));
        memset(&last, 0, sizeof last);
        for (i = 0; i < 6; i++) {
                if (i == kill_at) {
                        assert_int_equal(harness_kill_leader(
                                             &cluster, LIVECLUSTER_HEALTHY_MS,
                                             &killed, NULL),
                                         0);
                        print_message("# killed leader %u\n", killed);
                }
                assert_ok(
                    baton_acquire(b, name, 1, LIVECLUSTER_HEALTHY_MS, &t[i]));
                assert_ok(baton_release(b, name, 1, t[i]));
        }
        while (seen < 12) {
                assert_ok(baton_watch_next(w, &f, LIVECLUSTER_HEALTHY_MS));
                assert_true(after(&f, &last));
                assert_true(f.token == t[seen / 2]);
                assert_int_equal(f.kind, seen % 2 == 0 ? BATON_EVENT_GRANTED
                                                       : BATON_EVENT_RELEASED);
                last = f;
                seen++;
        }
        assert_int_equal(baton_watch_next(w, &f, 200), BATON_ETIMEDOUT);
        baton_watch_close(w);
        baton_client_destroy(a);
        baton_client_destroy(b);
}

static void watch_over_failover(void **state)
{
        (void)state;
        watch_failover(3);
}

/* Killed before any event: the watch resumes from the position where the
 * killed node started it, not from the next node's "now". */
static void watch_failover_at_start(void **state)
{
        (void)state;
        watch_failover(0);
}

/* With every node keeping 16 events, a watch from before the last 16 is
 * refused BATON_ECOMPACTED, never served with a gap; from the last of
 * them it is served. */
static void watch_compacted(void **state)
{
        static const char *const small[] = {"--watch-history", "16"};
        baton_client *a, *b;
        struct baton_event first, f;
        unsigned i, leader;
        char name[64];
        baton_watch *w;
        uint64_t t;

        (void)state;
        for (i = 1; i <= cluster.n; i++) {
                assert_int_equal(harness_set_flags(&cluster, i, small, 2), 0);
                assert_int_equal(harness_term(&cluster, i, NULL), 0);
                assert_int_equal(harness_wait_exit(
                                     &cluster, i, LIVECLUSTER_HEALTHY_MS, NULL),
                                 0);
                assert_int_equal(harness_restart(&cluster, i), 0);
        }
        assert_int_equal(
            harness_wait_healthy(&cluster, LIVECLUSTER_HEALTHY_MS, &leader), 0);
        a = liveclient_new(10000, NULL);
        b = liveclient_new(10000, NULL);
        liveclient_name(name, sizeof name, "compacted");
        assert_ok(baton_watch_open(a, name, 0, 0, 0, &w));
        for (i = 0; i < 20; i++) {
                assert_ok(baton_acquire(b, name, 1, BATON_WAIT_TRY, &t));
                assert_ok(baton_release(b, name, 1, t));
        }
        first = next_event(w);
        for (i = 1; i < 40; i++) {
                f = next_event(w);
        }
        baton_watch_close(w);
        assert_int_equal(
            baton_watch_open(a, name, 0, first.index, first.ord, &w),
            BATON_ECOMPACTED);
        assert_ok(baton_watch_open(a, name, 0, f.index, f.ord, &w));
        assert_int_equal(baton_watch_next(w, &f, 50), BATON_ETIMEDOUT);
        baton_watch_close(w);
        baton_client_destroy(a);
        baton_client_destroy(b);
        for (i = 1; i <= cluster.n; i++) {
                assert_int_equal(harness_set_flags(&cluster, i, NULL, 0), 0);
        }
}

int main(int argc, char **argv)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(watches),
            cmocka_unit_test(watch_callbacks),
            cmocka_unit_test_setup_teardown(
                watch_over_failover, livecluster_restore, livecluster_restore),
            cmocka_unit_test_setup_teardown(watch_failover_at_start,
                                            livecluster_restore,
                                            livecluster_restore),
            cmocka_unit_test_setup_teardown(
                watch_compacted, livecluster_restore, livecluster_restore),
        };

        (void)argc;
        argv0 = argv[0];
        livecluster_use(&cluster, argv0, WATCHDOG_S);
        return cmocka_run_group_tests_name("client_watch", tests,
                                           livecluster_up, livecluster_down);
}
