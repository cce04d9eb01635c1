/*
 * libbaton against a live 3-node cluster with faults (tests/integration/
 * harness): the holder keeping its lock across a leader kill, moving off a
 * paused server, a wait withdrawn when its server goes, a client process
 * paused past its TTL, and many threads on one handle. One cmocka case per
 * scenario (TAP); every wait is a client deadline or a bounded poll, and a
 * scenario that kills or pauses a node restores the cluster in its
 * teardown. Environment as test_client.
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

#define WATCHDOG_S     240
#define SHORT_TTL      1000 /* a client meant to lose its session */
#define STRESS_THREADS 16
#define STRESS_ROUNDS  40

static struct harness cluster;
static const char *argv0;

/*
 * kill -9 the leader while a lock is held and another thread of the same
 * handle waits for it. The holder keeps its lock and token; the waiter is
 * granted after the release. Before the kill the holder's thread issues
 * more commands, so the cluster has forgotten the waiter's outcome by the
 * time the waiter retries (BATON_ESEQ: the library finds the wait again).
 */
static void leader_killed(void **state)
{
        baton_client *a = liveclient_new(10000, NULL);
        struct baton_holder h;
        uint64_t t1 = 0, t = 0;
        struct acqthread waiter;
        char name[64], other[64];
        int64_t t0, took;
        unsigned killed;
        int i;

        (void)state;
        liveclient_name(name, sizeof name, "failover");
        liveclient_name(other, sizeof other, "failover-other");
        assert_ok(
            baton_acquire(a, name, BATON_OWNER_THREAD, BATON_WAIT_TRY, &t1));
        acqthread_start(&waiter, a, name, BATON_WAIT_FOREVER);
        acqthread_wait_waiters(a, name, 1);
        for (i = 0; i < 3; i++) {
                assert_ok(baton_acquire(a, other, BATON_OWNER_THREAD,
                                        BATON_WAIT_TRY, &t));
                assert_ok(baton_release(a, other, BATON_OWNER_THREAD, t));
        }
        assert_int_equal(harness_kill_leader(&cluster, LIVECLUSTER_HEALTHY_MS,
                                             &killed, NULL),
                         0);
        print_message("# killed leader %u\n", killed);
        /* The holder still holds, with its token, on the new leader. */
        t0 = tclient_now_ms();
        for (;;) {
                int64_t c0 = tclient_now_ms();
                int rv = baton_holder(a, name, &h);
                assert_true(tclient_now_ms() - c0 <=
                            LIVECLIENT_OP_MS + LIVECLIENT_SLACK_MS);
                if (rv == 0) {
                        break;
                }
                assert_int_equal(rv, BATON_ENOANSWER);
                assert_true(tclient_now_ms() - t0 < LIVECLUSTER_HEALTHY_MS);
        }
        print_message("# holder query answered %" PRId64 " ms after the "
                      "kill\n",
                      tclient_now_ms() - t0);
        assert_int_equal(h.held, 1);
        assert_int_equal(h.token, t1);
        assert_int_equal(baton_session_state(a), BATON_SESSION_LIVE);
        assert_false(atomic_load(&waiter.done));
        acqthread_wait_waiters(a, name, 1);
        t0 = tclient_now_ms();
        assert_ok(baton_release(a, name, BATON_OWNER_THREAD, t1));
        took = tclient_now_ms() - t0;
        assert_true(took <= LIVECLIENT_OP_MS + LIVECLIENT_SLACK_MS);
        pthread_join(waiter.thread, NULL);
        print_message("# waiter granted %" PRId64 " ms after the release\n",
                      tclient_now_ms() - t0);
        assert_ok(waiter.rv);
        assert_true(waiter.token > t1);
        assert_ok(baton_holder(a, name, &h));
        assert_int_equal(h.token, waiter.token);
        /* The waiter's thread is gone; its owner tag still holds. */
        assert_int_equal(h.count, 1);
        baton_client_destroy(a);
}

/* SIGSTOP the leader the handle talks to: the heartbeat gives up on it
 * and calls succeed on the new leader within a few seconds. */
static void server_paused(void **state)
{
        baton_client *a = liveclient_new(10000, NULL);
        uint64_t t = 0;
        unsigned leader;
        char name[64];
        int64_t t0, took;
        int rv = -1;

        (void)state;
        liveclient_name(name, sizeof name, "paused-server");
        assert_ok(
            baton_acquire(a, name, BATON_OWNER_THREAD, BATON_WAIT_TRY, &t));
        assert_ok(baton_release(a, name, BATON_OWNER_THREAD, t));
        assert_int_equal(
            harness_wait_leader(&cluster, LIVECLUSTER_HEALTHY_MS, &leader), 0);
        assert_int_equal(harness_pause(&cluster, leader), 0);
        t0 = tclient_now_ms();
        while (tclient_now_ms() - t0 < 3 * LIVECLIENT_OP_MS) {
                int64_t c0 = tclient_now_ms();
                rv = baton_acquire(a, name, BATON_OWNER_THREAD, BATON_WAIT_TRY,
                                   &t);
                assert_true(tclient_now_ms() - c0 <=
                            LIVECLIENT_OP_MS + LIVECLIENT_SLACK_MS);
                if (rv == 0) {
                        break;
                }
        }
        took = tclient_now_ms() - t0;
        print_message("# acquire succeeded %" PRId64 " ms after pausing "
                      "leader %u\n",
                      took, leader);
        assert_ok(rv);
        assert_true(took < 8000);
        assert_ok(baton_release(a, name, BATON_OWNER_THREAD, t));
        assert_int_not_equal(baton_session_state(a), BATON_SESSION_EXPIRED);
        assert_int_equal(harness_resume(&cluster, leader), 0);
        baton_client_destroy(a);
}

/*
 * The caller's own deadline (wait 300 ms + request timeout 1 s) passes
 * while the cluster cannot answer (its leader is paused): the call returns
 * BATON_ETIMEDOUT in time, and the library withdraws the wait in the
 * background (CANCEL, and a release if a grant raced it), so the lock ends
 * up free, never left to the caller who gave up.
 */
static void wait_withdrawn(void **state)
{
        struct baton_options o;
        baton_client *a = liveclient_new(10000, NULL), *b;
        struct baton_holder h;
        uint64_t t1 = 0, t2 = 0;
        struct acqthread waiter;
        int64_t free_since = 0, t0;
        unsigned leader;
        char name[64];

        (void)state;
        baton_options_init(&o);
        o.request_timeout_ms = 1000;
        b = liveclient_new(10000, &o);
        liveclient_name(name, sizeof name, "withdrawn");
        assert_ok(
            baton_acquire(a, name, BATON_OWNER_THREAD, BATON_WAIT_TRY, &t1));
        acqthread_start_owner(&waiter, b, name, 5, 300);
        acqthread_wait_waiters(a, name, 1);
        assert_int_equal(
            harness_wait_leader(&cluster, LIVECLUSTER_HEALTHY_MS, &leader), 0);
        assert_int_equal(harness_pause(&cluster, leader), 0);
        pthread_join(waiter.thread, NULL);
        print_message("# the wait ended after %" PRId64 " ms: %s\n",
                      waiter.took, baton_strerror(waiter.rv));
        assert_int_equal(waiter.rv, BATON_ETIMEDOUT);
        assert_true(waiter.took <= 300 + 1000 + LIVECLIENT_SLACK_MS);
        t0 = tclient_now_ms();
        for (;;) {
                int rv = baton_release(a, name, BATON_OWNER_THREAD, t1);
                if (rv == 0) {
                        break;
                }
                assert_int_equal(rv, BATON_ENOANSWER);
                assert_true(tclient_now_ms() - t0 < LIVECLUSTER_HEALTHY_MS);
        }
        /* Free, and staying free, soon after the release. */
        t0 = tclient_now_ms();
        while (free_since == 0 || tclient_now_ms() - free_since < 1000) {
                assert_true(tclient_now_ms() - t0 < LIVECLUSTER_HEALTHY_MS);
                if (baton_holder(a, name, &h) != 0) {
                        continue;
                }
                if (h.held) {
                        free_since = 0;
                } else if (free_since == 0) {
                        free_since = tclient_now_ms();
                }
                tclient_sleep_ms(50);
        }
        /* b's owner 5 waits for nothing: it can take the lock at once. */
        assert_ok(baton_acquire(b, name, 5, BATON_WAIT_TRY, &t2));
        assert_true(t2 > t1);
        assert_ok(baton_release(b, name, 5, t2));
        baton_client_destroy(a);
        baton_client_destroy(b);
}

/* --- A client process paused past its TTL --------------------------------- */

struct child_report {
        int state;
        int lost;
        uint64_t lost_token;
        int release_rv;
        int acquire_rv;
};

static atomic_int child_lost;

static atomic_uint_fast64_t child_lost_token;

static void child_on_lost(baton_client *c, const char *name, uint64_t token,
                          void *data)
{
        (void)c;
        (void)name;
        (void)data;
        atomic_store(&child_lost_token, token);
        atomic_fetch_add(&child_lost, 1);
}

static bool read_all(int fd, void *buf, size_t len, int timeout_ms)
{
        int64_t deadline = tclient_now_ms() + timeout_ms;
        size_t off = 0;

        while (off < len) {
                struct timespec ts = {0, 5 * 1000000};
                ssize_t n = read(fd, (char *)buf + off, len - off);
                if (n > 0) {
                        off += (size_t)n;
                        continue;
                }
                if (n == 0 || (errno != EAGAIN && errno != EINTR) ||
                    tclient_now_ms() > deadline) {
                        return false;
                }
                nanosleep(&ts, NULL);
        }
        return true;
}

/* The child: take the lock, say so, wait to be told to go on (it is
 * paused meanwhile), then report what the library says. Never returns. */
static void child_main(const char *name, int up, int down)
{
        static const int sigs[] = {SIGINT,  SIGTERM, SIGHUP, SIGQUIT, SIGALRM,
                                   SIGABRT, SIGSEGV, SIGBUS, SIGFPE,  SIGILL};
        struct baton_options o;
        struct child_report rep;
        baton_client *c = NULL;
        uint64_t token = 0;
        int64_t deadline;
        unsigned i;
        char go;

        /* The harness's handlers would kill the cluster from here. */
        for (i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
                signal(sigs[i], SIG_DFL);
        }
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        memset(&rep, 0, sizeof rep);
        baton_options_init(&o);
        o.ttl_ms = SHORT_TTL;
        o.request_timeout_ms = LIVECLIENT_OP_MS;
        o.client_name = "paused-child";
        o.on_lock_lost = child_on_lost;
        if (baton_client_create(&c, cluster.endpoints, &o) != 0) {
                _exit(2);
        }
        rep.acquire_rv =
            baton_acquire(c, name, BATON_OWNER_THREAD, BATON_WAIT_TRY, &token);
        if (write(up, &token, sizeof token) != (ssize_t)sizeof token ||
            read(down, &go, 1) != 1) {
                _exit(3);
        }
        /* Resumed: the lease ran out while we were stopped. */
        deadline = tclient_now_ms() + 3000;
        while (atomic_load(&child_lost) == 0 && tclient_now_ms() < deadline) {
                tclient_sleep_ms(10);
        }
        rep.state = baton_session_state(c);
        rep.lost = atomic_load(&child_lost);
        rep.lost_token = atomic_load(&child_lost_token);
        rep.release_rv = baton_release(c, name, BATON_OWNER_THREAD, token);
        if (write(up, &rep, sizeof rep) != (ssize_t)sizeof rep) {
                _exit(4);
        }
        baton_client_destroy(c);
        _exit(0);
}

static void client_paused(void **state)
{
        int up[2], down[2], status = 0;
        struct child_report rep;
        struct baton_holder h;
        baton_client *a;
        uint64_t t1 = 0, t2 = 0;
        int64_t t0, took;
        char name[64];
        pid_t pid;
        int rv;

        (void)state;
        liveclient_name(name, sizeof name, "paused-client");
        assert_int_equal(pipe(up), 0);
        assert_int_equal(pipe(down), 0);
        fflush(stdout);
        /* Fork before this process has any thread of its own. */
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                close(up[0]);
                close(down[1]);
                child_main(name, up[1], down[0]);
        }
        close(up[1]);
        close(down[0]);
        if (!read_all(up[0], &t1, sizeof t1, 2 * LIVECLIENT_OP_MS) || t1 == 0) {
                kill(pid, SIGKILL);
                waitpid(pid, NULL, 0);
                fail_msg("the child did not take the lock");
        }
        a = liveclient_new(10000, NULL);
        assert_int_equal(kill(pid, SIGSTOP), 0);
        t0 = tclient_now_ms();
        rv = baton_acquire(a, name, BATON_OWNER_THREAD, 10000, &t2);
        took = tclient_now_ms() - t0;
        print_message("# the paused child's lock came after %" PRId64 " ms\n",
                      took);
        kill(pid, SIGCONT);
        if (write(down[1], "g", 1) != 1 ||
            !read_all(up[0], &rep, sizeof rep, 2 * LIVECLIENT_OP_MS)) {
                kill(pid, SIGKILL);
                waitpid(pid, NULL, 0);
                fail_msg("no report from the child");
        }
        waitpid(pid, &status, 0);
        close(up[0]);
        close(down[1]);
        assert_ok(rv);
        assert_true(t2 > t1);
        assert_true(took < SHORT_TTL + 3000);
        assert_ok(baton_holder(a, name, &h));
        assert_int_equal(h.token, t2);
        print_message("# child: state %d, lost %d (token %" PRIu64
                      "), release %d (%s)\n",
                      rep.state, rep.lost, rep.lost_token, rep.release_rv,
                      baton_strerror(rep.release_rv));
        assert_int_equal(rep.acquire_rv, 0);
        assert_int_equal(rep.state, BATON_SESSION_EXPIRED);
        assert_int_equal(rep.lost, 1);
        assert_int_equal(rep.lost_token, t1);
        assert_int_equal(rep.release_rv, BATON_EEXPIRED);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        /* The new holder was not disturbed. */
        assert_ok(baton_check(a, name, t2));
        assert_ok(baton_release(a, name, BATON_OWNER_THREAD, t2));
        baton_client_destroy(a);
}

/* --- Many threads on one handle ------------------------------------------- */

#define SHARED_LOCKS 2

struct stress {
        baton_client *c;
        char shared[SHARED_LOCKS][64];
        pthread_mutex_t mu; /* guards the fences and `inside` */
        struct baton_fence fence[SHARED_LOCKS];
        int inside[SHARED_LOCKS];
        atomic_int errors;
        atomic_int ops;
        char first_error[256];
};

static void stress_error(struct stress *s, const char *what, int rv)
{
        pthread_mutex_lock(&s->mu);
        if (atomic_fetch_add(&s->errors, 1) == 0) {
                snprintf(s->first_error, sizeof s->first_error, "%s: %d %s",
                         what, rv, baton_strerror(rv));
        }
        pthread_mutex_unlock(&s->mu);
}

struct worker {
        pthread_t thread;
        struct stress *s;
        unsigned no;
};

static void *stress_main(void *arg)
{
        struct worker *w = arg;
        struct stress *s = w->s;
        char mine[96];
        unsigned i;
        int rv;

        snprintf(mine, sizeof mine, "%.64s-private-%u", s->shared[0], w->no);
        for (i = 0; i < STRESS_ROUNDS; i++) {
                unsigned k = (w->no + i) % SHARED_LOCKS;
                uint64_t t = 0, t2 = 0;
                struct baton_holder h;
                rv = baton_acquire(s->c, s->shared[k], BATON_OWNER_THREAD,
                                   20000, &t);
                if (rv != 0) {
                        stress_error(s, "acquire shared", rv);
                        continue;
                }
                pthread_mutex_lock(&s->mu);
                if (s->inside[k]++ != 0) {
                        stress_error(s, "two holders at once", 0);
                }
                if (baton_fence_admit(&s->fence[k], t) != 0 ||
                    s->fence[k].highest != t) {
                        stress_error(s, "token not increasing", 0);
                }
                pthread_mutex_unlock(&s->mu);
                if (i % 8 == 0 &&
                    ((rv = baton_holder(s->c, s->shared[k], &h)) != 0 ||
                     h.token != t)) {
                        stress_error(s, "holder", rv);
                }
                pthread_mutex_lock(&s->mu);
                s->inside[k]--;
                pthread_mutex_unlock(&s->mu);
                rv = baton_release(s->c, s->shared[k], BATON_OWNER_THREAD, t);
                if (rv != 0) {
                        stress_error(s, "release shared", rv);
                }
                /* A private lock, reentrantly. */
                rv = baton_acquire(s->c, mine, BATON_OWNER_THREAD,
                                   BATON_WAIT_TRY, &t);
                if (rv == 0) {
                        rv = baton_acquire(s->c, mine, BATON_OWNER_THREAD,
                                           BATON_WAIT_TRY, &t2);
                }
                if (rv != 0 || t2 != t) {
                        stress_error(s, "acquire private", rv);
                        continue;
                }
                if ((rv = baton_release(s->c, mine, BATON_OWNER_THREAD, t)) !=
                        0 ||
                    (rv = baton_release(s->c, mine, BATON_OWNER_THREAD, t)) !=
                        0) {
                        stress_error(s, "release private", rv);
                }
                atomic_fetch_add(&s->ops, 6);
        }
        return NULL;
}

static void many_threads(void **state)
{
        static struct stress s;
        struct worker w[STRESS_THREADS];
        struct baton_holder h;
        int64_t t0, took;
        unsigned i;

        (void)state;
        memset(&s, 0, sizeof s);
        pthread_mutex_init(&s.mu, NULL);
        atomic_init(&s.errors, 0);
        atomic_init(&s.ops, 0);
        for (i = 0; i < SHARED_LOCKS; i++) {
                liveclient_name(s.shared[i], sizeof s.shared[i], "stress");
                baton_fence_init(&s.fence[i]);
        }
        s.c = liveclient_new(10000, NULL);
        t0 = tclient_now_ms();
        for (i = 0; i < STRESS_THREADS; i++) {
                w[i].s = &s;
                w[i].no = i;
                assert_int_equal(
                    pthread_create(&w[i].thread, NULL, stress_main, &w[i]), 0);
        }
        for (i = 0; i < STRESS_THREADS; i++) {
                pthread_join(w[i].thread, NULL);
        }
        took = tclient_now_ms() - t0;
        print_message(
            "# %d operations by %d threads in %" PRId64 " ms, %d errors%s%s\n",
            atomic_load(&s.ops), STRESS_THREADS, took, atomic_load(&s.errors),
            atomic_load(&s.errors) > 0 ? ": first " : "", s.first_error);
        assert_int_equal(atomic_load(&s.errors), 0);
        assert_int_equal(atomic_load(&s.ops),
                         STRESS_THREADS * STRESS_ROUNDS * 6);
        for (i = 0; i < SHARED_LOCKS; i++) {
                assert_ok(baton_holder(s.c, s.shared[i], &h));
                assert_int_equal(h.held, 0);
        }
        baton_client_destroy(s.c);
        pthread_mutex_destroy(&s.mu);
}

int main(int argc, char **argv)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(client_paused),
            cmocka_unit_test(many_threads),
            cmocka_unit_test_setup_teardown(leader_killed, livecluster_restore,
                                            livecluster_restore),
            cmocka_unit_test_setup_teardown(server_paused, livecluster_restore,
                                            livecluster_restore),
            cmocka_unit_test_setup_teardown(wait_withdrawn, livecluster_restore,
                                            livecluster_restore),
        };

        (void)argc;
        argv0 = argv[0];
        livecluster_use(&cluster, argv0, WATCHDOG_S);
        return cmocka_run_group_tests_name("client_faults", tests,
                                           livecluster_up, livecluster_down);
}
