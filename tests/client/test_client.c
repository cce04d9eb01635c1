/*
 * libbaton against a live 3-node cluster (tests/integration/harness): the
 * lock calls, reentrancy, fencing, the holder keeping its lock across a
 * leader kill, moving off a paused server, a client paused past its TTL,
 * and many threads on one handle. One cmocka case per scenario (TAP).
 *
 * Every wait is a client deadline or a bounded poll. A scenario that kills
 * or pauses a node restores the cluster in its teardown. A watchdog
 * (BATON_TEST_WATCHDOG seconds, default 240) bails out of a hung run, and
 * every node is killed by PID on any exit. Environment as the integration
 * tests: BATOND, BATON_TEST_BASE_PORT, BATON_TEST_TMPDIR.
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
#include "livecluster.h"

#define WATCHDOG_S     240
#define HEALTHY_MS     20000 /* a cluster (re)converging after a fault */
#define OP_MS          5000  /* request_timeout_ms of the handles */
#define SLACK_MS       500   /* a call may end this much past its deadline */
#define SHORT_TTL      1000  /* a client meant to lose its session */
#define STRESS_THREADS 16
#define STRESS_ROUNDS  40
#define EXAMPLE_MS     60000 /* examples/lock_example runs this long at most */

static struct harness cluster;
static const char *argv0;
static unsigned names;

static int64_t now_ms(void)
{
        return tclient_now_ms();
}

static void name_of(char *buf, size_t cap, const char *what)
{
        snprintf(buf, cap, "tc-%s-%u", what, ++names);
}

static baton_client *client_new(uint32_t ttl_ms, struct baton_options *o)
{
        struct baton_options def;
        baton_client *c = NULL;
        int rv;

        if (o == NULL) {
                baton_options_init(&def);
                def.request_timeout_ms = OP_MS;
                o = &def;
        }
        o->ttl_ms = ttl_ms;
        if (o->client_name == NULL) {
                o->client_name = "test_client";
        }
        rv = baton_client_create(&c, cluster.endpoints, o);
        if (rv != 0) {
                print_message("# baton_client_create: %s\n",
                              baton_strerror(rv));
        }
        assert_int_equal(rv, 0);
        return c;
}

/* Fails the case with the call's error text. */
#define assert_ok(expr)                                                        \
        do {                                                                   \
                int rv_ = (expr);                                              \
                if (rv_ != 0) {                                                \
                        print_message("# %s: %d %s\n", #expr, rv_,             \
                                      baton_strerror(rv_));                    \
                }                                                              \
                assert_int_equal(rv_, 0);                                      \
        } while (0)

/* --- Threads that call into a handle -------------------------------------- */

struct call {
        pthread_t thread;
        baton_client *c;
        const char *name;
        uint64_t owner;
        int64_t wait_ms;
        int rv;
        uint64_t token;
        int64_t started;
        int64_t took;
        atomic_bool done;
};

static void *acquire_main(void *arg)
{
        struct call *k = arg;

        k->started = now_ms();
        k->rv = baton_acquire(k->c, k->name, k->owner, k->wait_ms, &k->token);
        k->took = now_ms() - k->started;
        atomic_store(&k->done, true);
        return NULL;
}

static void call_owner(struct call *k, baton_client *c, const char *name,
                       uint64_t owner, int64_t wait_ms)
{
        memset(k, 0, sizeof *k);
        k->c = c;
        k->name = name;
        k->owner = owner;
        k->wait_ms = wait_ms;
        atomic_init(&k->done, false);
        assert_int_equal(pthread_create(&k->thread, NULL, acquire_main, k), 0);
}

static void call_start(struct call *k, baton_client *c, const char *name,
                       int64_t wait_ms)
{
        call_owner(k, c, name, BATON_OWNER_THREAD, wait_ms);
}

/* Poll until the lock has `waiters` waiters (a QUERY is linearizable). */
static void wait_waiters(baton_client *c, const char *name, uint32_t waiters)
{
        int64_t deadline = now_ms() + HEALTHY_MS;
        struct baton_holder h;

        for (;;) {
                if (baton_holder(c, name, &h) == 0 && h.waiters >= waiters) {
                        return;
                }
                assert_true(now_ms() < deadline);
                tclient_sleep_ms(10);
        }
}

/* --- Cases ---------------------------------------------------------------- */

static void try_busy(void **state)
{
        baton_client *a = client_new(10000, NULL);
        baton_client *b = client_new(10000, NULL);
        uint64_t t1 = 0, t2 = 0, t3 = 0;
        char name[64];

        (void)state;
        name_of(name, sizeof name, "try");
        assert_ok(
            baton_acquire(a, name, BATON_OWNER_THREAD, BATON_WAIT_TRY, &t1));
        assert_true(t1 > 0);
        assert_int_equal(baton_session_state(a), BATON_SESSION_LIVE);
        assert_true(baton_session_remaining_ms(a) > 0);
        assert_int_equal(
            baton_acquire(b, name, BATON_OWNER_THREAD, BATON_WAIT_TRY, &t2),
            BATON_EBUSY);
        assert_ok(baton_release(a, name, BATON_OWNER_THREAD, t1));
        assert_ok(
            baton_acquire(b, name, BATON_OWNER_THREAD, BATON_WAIT_TRY, &t3));
        assert_true(t3 > t1);
        assert_ok(baton_release(b, name, BATON_OWNER_THREAD, t3));
        assert_int_equal(baton_acquire(a, "", 0, 0, NULL), BATON_ENAME);
        assert_int_equal(baton_acquire(a, name, 0, -2, NULL), BATON_EINVAL);
        baton_client_destroy(a);
        baton_client_destroy(b);
}

/* Read/write locks: readers share, a writer waits for them and then is
 * granted with a token of its own; a sole reader upgrades, a reader among
 * others is refused BATON_EUPGRADE; a writer downgrades. */
static void shared_readers(void **state)
{
        baton_client *a = client_new(10000, NULL);
        baton_client *b = client_new(10000, NULL);
        uint64_t ta = 0, tb = 0, tw = 0, tr = 0;
        struct call writer;
        char name[64];

        (void)state;
        name_of(name, sizeof name, "shared");
        assert_ok(baton_acquire_shared(a, name, 1, BATON_WAIT_TRY, &ta));
        assert_ok(baton_acquire_shared(b, name, 1, BATON_WAIT_TRY, &tb));
        assert_true(ta > 0 && tb > ta);
        assert_int_equal(baton_acquire(a, name, 1, BATON_WAIT_TRY, NULL),
                         BATON_EUPGRADE);
        assert_int_equal(baton_acquire(b, name, 2, BATON_WAIT_TRY, NULL),
                         BATON_EBUSY);
        call_owner(&writer, b, name, 2, 10000);
        wait_waiters(a, name, 1);
        /* A reader after a waiting writer waits too. */
        assert_int_equal(baton_acquire_shared(a, name, 3, BATON_WAIT_TRY, NULL),
                         BATON_EBUSY);
        assert_ok(baton_release(a, name, 1, ta));
        assert_false(atomic_load(&writer.done));
        assert_ok(baton_release(b, name, 1, tb));
        pthread_join(writer.thread, NULL);
        assert_ok(writer.rv);
        assert_true(writer.token > tb);
        /* The writer downgrades: read too, then let the write lock go. */
        assert_ok(baton_acquire_shared(b, name, 2, BATON_WAIT_TRY, &tr));
        assert_true(tr > writer.token);
        assert_ok(baton_release(b, name, 2, writer.token));
        assert_ok(baton_acquire_shared(a, name, 1, BATON_WAIT_TRY, &ta));
        assert_ok(baton_release(a, name, 1, ta));
        /* A sole reader upgrades. */
        assert_ok(baton_acquire(b, name, 2, BATON_WAIT_TRY, &tw));
        assert_true(tw > tr);
        assert_int_equal(baton_release(b, name, 2, tr - 1), BATON_ESTALE);
        assert_ok(baton_release(b, name, 2, tw));
        assert_ok(baton_release(b, name, 2, tr));
        assert_int_equal(baton_release(b, name, 2, tr), BATON_ENOTHOLDER);
        baton_client_destroy(a);
        baton_client_destroy(b);
}

/* A thread that takes 2 of the 3 permits of `name` and waits up to 10 s. */
static void *take_two_main(void *arg)
{
        struct call *k = arg;

        k->rv =
            baton_sem_acquire(k->c, k->name, 3, 2, k->owner, 10000, &k->token);
        atomic_store(&k->done, true);
        return NULL;
}

static void *campaign_main(void *arg)
{
        struct call *k = arg;

        k->rv = baton_campaign(k->c, k->name, "10.0.0.2:80", k->owner, 10000,
                               &k->token);
        atomic_store(&k->done, true);
        return NULL;
}

/* Elections: the first candidate leads with its value; another waits;
 * proclaim changes the value and keeps the token; resign hands over to
 * the waiting candidate with a higher token; and the refusals by name. */
static void elections(void **state)
{
        baton_client *a = client_new(10000, NULL);
        baton_client *b = client_new(10000, NULL);
        char name[64], lock[64], longest[BATON_VALUE_MAX + 2];
        struct baton_leader l;
        uint64_t t1 = 0, t2 = 0;
        struct call next;

        (void)state;
        name_of(name, sizeof name, "election");
        name_of(lock, sizeof lock, "not-an-election");
        assert_ok(baton_leader(a, name, &l));
        assert_int_equal(l.held, 0);
        assert_ok(
            baton_campaign(a, name, "10.0.0.1:80", 1, BATON_WAIT_TRY, &t1));
        assert_ok(baton_leader(b, name, &l));
        assert_int_equal(l.held, 1);
        assert_int_equal(l.token, t1);
        assert_int_equal(l.session, baton_session_id(a));
        assert_string_equal(l.value, "10.0.0.1:80");
        assert_int_equal(baton_campaign(b, name, "x", 1, BATON_WAIT_TRY, NULL),
                         BATON_EBUSY);
        assert_int_equal(baton_campaign(a, name, "x", 1, 0, NULL), BATON_EHELD);
        assert_int_equal(baton_acquire(b, name, 1, 0, NULL), BATON_EKIND);
        memset(&next, 0, sizeof next);
        next.c = b;
        next.name = name;
        next.owner = 1;
        atomic_init(&next.done, false);
        assert_int_equal(
            pthread_create(&next.thread, NULL, campaign_main, &next), 0);
        wait_waiters(a, name, 1);
        assert_ok(baton_proclaim(a, name, 1, t1, "10.0.0.1:81"));
        assert_ok(baton_leader(b, name, &l));
        assert_string_equal(l.value, "10.0.0.1:81");
        assert_int_equal(l.token, t1);
        assert_int_equal(l.candidates, 1);
        assert_int_equal(baton_proclaim(a, name, 1, t1 + 1, "y"), BATON_ESTALE);
        assert_int_equal(baton_proclaim(b, name, 1, t1, "y"), BATON_ENOTHOLDER);
        memset(longest, 'v', sizeof longest - 1);
        longest[sizeof longest - 1] = '\0';
        assert_int_equal(baton_proclaim(a, name, 1, t1, longest), BATON_EINVAL);
        assert_ok(baton_resign(a, name, 1, t1));
        pthread_join(next.thread, NULL);
        assert_ok(next.rv);
        t2 = next.token;
        assert_true(t2 > t1);
        assert_ok(baton_leader(a, name, &l));
        assert_int_equal(l.session, baton_session_id(b));
        assert_string_equal(l.value, "10.0.0.2:80");
        assert_true(l.since_s != 0);
        /* A lock is not an election, nor the other way round. */
        assert_ok(baton_acquire(a, lock, 1, BATON_WAIT_TRY, NULL));
        assert_int_equal(baton_leader(b, lock, &l), BATON_EKIND);
        assert_int_equal(baton_campaign(b, lock, "", 1, 0, NULL), BATON_EKIND);
        assert_ok(baton_resign(b, name, 1, t2));
        baton_client_destroy(a);
        baton_client_destroy(b);
}

/* Semaphores: permits up to the limit, a large waiter at the head not
 * overtaken by a small one, each grant with a token of its own, and the
 * refusals by name. */
static void semaphore_permits(void **state)
{
        baton_client *a = client_new(10000, NULL);
        baton_client *b = client_new(10000, NULL);
        uint64_t t1 = 0, t2 = 0, t3 = 0;
        struct call big;
        char name[64];

        (void)state;
        name_of(name, sizeof name, "sem");
        assert_ok(baton_sem_acquire(a, name, 3, 1, 1, BATON_WAIT_TRY, &t1));
        assert_ok(baton_sem_acquire(b, name, 3, 1, 1, BATON_WAIT_TRY, &t2));
        assert_true(t1 > 0 && t2 > t1);
        assert_int_equal(baton_sem_acquire(a, name, 3, 1, 1, 0, NULL),
                         BATON_EHELD);
        assert_int_equal(baton_sem_acquire(a, name, 4, 1, 2, 0, NULL),
                         BATON_EPERMITS);
        assert_int_equal(baton_sem_acquire(a, name, 3, 4, 2, 0, NULL),
                         BATON_EINVAL);
        assert_int_equal(baton_acquire(a, name, 2, 0, NULL), BATON_EKIND);
        /* 1 free: b's owner 2 wants 2 and waits; a's owner 2 wants 1, which
         * would fit, but waits behind it. */
        memset(&big, 0, sizeof big);
        big.c = b;
        big.name = name;
        big.owner = 2;
        atomic_init(&big.done, false);
        assert_int_equal(pthread_create(&big.thread, NULL, take_two_main, &big),
                         0);
        wait_waiters(a, name, 1);
        assert_int_equal(
            baton_sem_acquire(a, name, 3, 1, 2, BATON_WAIT_TRY, NULL),
            BATON_EBUSY);
        assert_ok(baton_release(a, name, 1, t1));
        pthread_join(big.thread, NULL);
        assert_ok(big.rv);
        assert_true(big.token > t2);
        assert_int_equal(
            baton_sem_acquire(a, name, 3, 1, 2, BATON_WAIT_TRY, &t3),
            BATON_EBUSY);
        assert_ok(baton_release(b, name, 1, t2));
        assert_ok(baton_sem_acquire(a, name, 3, 1, 2, BATON_WAIT_TRY, &t3));
        assert_true(t3 > big.token);
        {
                struct baton_grant g[4];
                size_t n = 0;
                int more = 1;

                assert_ok(baton_holders(a, name, g, 4, &n, &more));
                assert_int_equal(n, 2);
                assert_int_equal(more, 0);
                assert_true(g[0].token == big.token && g[0].permits == 2);
                assert_true(g[1].token == t3 && g[1].permits == 1);
                assert_int_equal(g[1].mode, BATON_MODE_PERMITS);
                /* When, by the leader's clock (this machine's): within the
                 * second it writes its clock at, whatever the load. */
                assert_true(g[1].granted_s != 0 &&
                            llabs((long long)g[1].granted_s -
                                  (long long)time(NULL)) < 60);
                assert_int_equal(g[1].limit, 3);
                assert_ok(baton_holders(a, name, g, 1, &n, &more));
                assert_int_equal(n, 1);
                assert_int_equal(more, 1);
        }
        assert_ok(baton_release(b, name, 2, big.token));
        assert_ok(baton_release(a, name, 2, t3));
        assert_int_equal(baton_release(a, name, 2, t3), BATON_ENOTHOLDER);
        baton_client_destroy(a);
        baton_client_destroy(b);
}

/* A thread that takes the multi-lock of k->name and k->name2 (the second
 * shared), waiting up to 10 s. */
struct multi_call {
        struct call k;
        const char *name2;
};

static void *multi_main(void *arg)
{
        struct multi_call *m = arg;
        struct baton_lock_name two[2] = {
            {m->k.name, BATON_MODE_EXCLUSIVE},
            {m->name2, BATON_MODE_SHARED},
        };

        m->k.rv =
            baton_multi_acquire(m->k.c, two, 2, m->k.owner, 10000, &m->k.token);
        atomic_store(&m->k.done, true);
        return NULL;
}

static atomic_int multi_lost;

static void multi_on_lost(baton_client *c, const char *name, uint64_t token,
                          void *data)
{
        (void)c;
        (void)name;
        (void)token;
        (void)data;
        atomic_fetch_add(&multi_lost, 1);
}

/* Multi-locks: a try finds one name busy and takes nothing; a blocking
 * one waits holding none of its names, then takes both at once with one
 * token; each name is released alone; the session's end loses every name
 * (one on_lock_lost per name). */
static void multi_locks(void **state)
{
        struct baton_options o;
        baton_client *a = client_new(10000, NULL);
        baton_client *b = client_new(10000, NULL);
        baton_client *adm;
        char x[64], y[64];
        struct baton_lock_name both[2] = {{x, BATON_MODE_EXCLUSIVE},
                                          {y, BATON_MODE_EXCLUSIVE}};
        struct baton_holder h;
        struct multi_call m;
        uint64_t t1 = 0, t2 = 0;

        (void)state;
        name_of(x, sizeof x, "multi-x");
        name_of(y, sizeof y, "multi-y");
        assert_ok(baton_acquire(a, y, 1, BATON_WAIT_TRY, &t1));
        assert_int_equal(
            baton_multi_acquire(b, both, 2, 1, BATON_WAIT_TRY, NULL),
            BATON_EBUSY);
        assert_ok(baton_holder(a, x, &h));
        assert_int_equal(h.token, 0); /* x was not taken alone */
        memset(&m, 0, sizeof m);
        m.k.c = b;
        m.k.name = x;
        m.k.owner = 2;
        m.name2 = y;
        atomic_init(&m.k.done, false);
        assert_int_equal(pthread_create(&m.k.thread, NULL, multi_main, &m), 0);
        wait_waiters(a, x, 1);
        assert_ok(baton_holder(a, x, &h));
        assert_int_equal(h.token, 0); /* waiting, it holds nothing */
        assert_ok(baton_release(a, y, 1, t1));
        pthread_join(m.k.thread, NULL);
        assert_ok(m.k.rv);
        assert_true(m.k.token > t1);
        assert_ok(baton_holder(a, x, &h));
        assert_int_equal(h.token, m.k.token);
        assert_ok(baton_holder(a, y, &h));
        assert_int_equal(h.token, m.k.token);
        assert_int_equal(baton_multi_acquire(b, both, 2, 2, 0, NULL),
                         BATON_EHELD);
        assert_ok(baton_release(b, y, 2, m.k.token));
        assert_ok(baton_release(b, x, 2, m.k.token));
        /* Lost: every name, one callback each. */
        baton_options_init(&o);
        o.request_timeout_ms = OP_MS;
        o.on_lock_lost = multi_on_lost;
        baton_client_destroy(a);
        a = client_new(10000, &o);
        assert_ok(baton_multi_acquire(a, both, 2, 1, BATON_WAIT_TRY, &t2));
        adm = client_new(10000, NULL);
        assert_ok(baton_session_revoke(adm, baton_session_id(a)));
        for (int64_t end = now_ms() + HEALTHY_MS;
             atomic_load(&multi_lost) < 2 && now_ms() < end;) {
                tclient_sleep_ms(20);
        }
        assert_int_equal(atomic_load(&multi_lost), 2);
        assert_int_equal(baton_multi_release(a, both, 2, 1, t2),
                         BATON_EEXPIRED);
        baton_client_destroy(adm);
        baton_client_destroy(a);
        baton_client_destroy(b);
}

static atomic_int revoke_lost;
static atomic_uint_fast64_t revoke_lost_token;

static void revoke_on_lost(baton_client *c, const char *name, uint64_t token,
                           void *data)
{
        (void)c;
        (void)name;
        (void)data;
        atomic_store(&revoke_lost_token, token);
        atomic_fetch_add(&revoke_lost, 1);
}

/* baton_revoke(): an administrator takes one lock from a holder whose
 * session lives on; the holder's client learns it at a keepalive (one
 * on_lock_lost, for that lock), keeps its other lock, and the waiter gets
 * the lock with a higher token. A retry takes nothing. */
static void revoke_one_lock(void **state)
{
        struct baton_options o;
        baton_client *a, *b = client_new(10000, NULL);
        baton_client *adm = client_new(10000, NULL);
        char x[64], y[64];
        uint64_t tx = 0, ty = 0;
        struct baton_holder h;
        struct call w;

        (void)state;
        name_of(x, sizeof x, "revoke-x");
        name_of(y, sizeof y, "revoke-y");
        baton_options_init(&o);
        o.request_timeout_ms = OP_MS;
        o.on_lock_lost = revoke_on_lost;
        a = client_new(3000, &o);
        assert_ok(baton_acquire(a, x, 1, BATON_WAIT_TRY, &tx));
        assert_ok(baton_acquire(a, y, 1, BATON_WAIT_TRY, &ty));
        call_owner(&w, b, x, 1, 10000);
        wait_waiters(adm, x, 1);
        assert_ok(baton_revoke(adm, x, baton_session_id(a), tx));
        pthread_join(w.thread, NULL);
        assert_ok(w.rv);
        assert_true(w.token > tx);
        assert_int_equal(baton_revoke(adm, x, baton_session_id(a), tx),
                         BATON_ENOTHOLDER);
        for (int64_t end = now_ms() + HEALTHY_MS;
             atomic_load(&revoke_lost) < 1 && now_ms() < end;) {
                tclient_sleep_ms(20);
        }
        assert_int_equal(atomic_load(&revoke_lost), 1);
        assert_int_equal(atomic_load(&revoke_lost_token), tx);
        assert_int_equal(baton_session_state(a), BATON_SESSION_LIVE);
        assert_ok(baton_holder(adm, y, &h));
        assert_int_equal(h.token, ty);
        assert_int_equal(baton_release(a, x, 1, tx), BATON_ENOTHOLDER);
        assert_ok(baton_release(a, y, 1, ty));
        assert_ok(baton_release(b, x, 1, w.token));
        baton_client_destroy(adm);
        baton_client_destroy(a);
        baton_client_destroy(b);
}

static void reentrancy(void **state)
{
        baton_client *a = client_new(10000, NULL);
        struct baton_holder h;
        uint64_t t1 = 0, t2 = 0;
        struct call other;
        char name[64];

        (void)state;
        name_of(name, sizeof name, "reenter");
        assert_ok(baton_acquire(a, name, BATON_OWNER_THREAD, 1000, &t1));
        assert_ok(baton_acquire(a, name, BATON_OWNER_THREAD, 1000, &t2));
        assert_int_equal(t1, t2);
        assert_ok(baton_holder(a, name, &h));
        assert_int_equal(h.held, 1);
        assert_int_equal(h.count, 2);
        assert_int_equal(h.token, t1);
        /* Another thread of the same handle is another owner. */
        call_start(&other, a, name, BATON_WAIT_TRY);
        pthread_join(other.thread, NULL);
        assert_int_equal(other.rv, BATON_EBUSY);
        /* An explicit owner tag is another owner too. */
        assert_int_equal(baton_acquire(a, name, 42, BATON_WAIT_TRY, NULL),
                         BATON_EBUSY);
        assert_ok(baton_release(a, name, BATON_OWNER_THREAD, t1));
        assert_ok(baton_holder(a, name, &h));
        assert_int_equal(h.held, 1);
        assert_int_equal(h.count, 1);
        assert_ok(baton_release(a, name, BATON_OWNER_THREAD, t1));
        assert_ok(baton_holder(a, name, &h));
        assert_int_equal(h.held, 0);
        assert_int_equal(baton_release(a, name, BATON_OWNER_THREAD, t1),
                         BATON_ENOTHOLDER);
        baton_client_destroy(a);
}

/* Holder queries and listings name the holder's client. */
static void holder_names(void **state)
{
        struct baton_lock_info info[4];
        struct baton_options o;
        struct baton_holder h;
        baton_client *a, *b;
        uint64_t t = 0;
        size_t n = 0;
        char name[64];

        (void)state;
        baton_options_init(&o);
        o.request_timeout_ms = OP_MS;
        o.client_name = "build-42";
        a = client_new(10000, &o);
        b = client_new(10000, NULL);
        name_of(name, sizeof name, "names");
        assert_ok(baton_acquire(a, name, BATON_OWNER_THREAD, 1000, &t));
        assert_ok(baton_holder(b, name, &h));
        assert_int_equal(h.held, 1);
        assert_string_equal(h.client_name, "build-42");
        assert_ok(baton_list(b, name, info, 4, &n, NULL));
        assert_int_equal(n, 1);
        assert_string_equal(info[0].name, name);
        assert_string_equal(info[0].client_name, "build-42");
        assert_ok(baton_release(a, name, BATON_OWNER_THREAD, t));
        assert_ok(baton_holder(b, name, &h));
        assert_int_equal(h.held, 0);
        assert_string_equal(h.client_name, "");
        baton_client_destroy(a);
        baton_client_destroy(b);
}

/* A detached session's grant released through another handle
 * (baton_release_in), and a retry of such a release answered exactly once. */
static void detach_release_in(void **state)
{
        baton_client *a = client_new(10000, NULL);
        baton_client *b = client_new(10000, NULL);
        struct tclient raw;
        struct tclient_result res;
        struct baton_holder h;
        struct command k;
        struct timespec ts;
        uint64_t t1 = 0, t2 = 0, t3 = 0, session = 0, owner, used;
        uint8_t secret[BATON_SECRET_SIZE], wrong[BATON_SECRET_SIZE];
        char name[64];
        int rv;

        (void)state;
        name_of(name, sizeof name, "detach");
        assert_int_equal(baton_client_detach(a, &session, secret),
                         BATON_ENOSESSION);
        assert_int_equal(baton_session_id(a), 0); /* none opened yet */
        assert_ok(baton_acquire(a, name, BATON_OWNER_DETACHED, 1000, &t1));
        used = baton_session_id(a);
        assert_ok(baton_client_detach(a, &session, secret));
        assert_true(session != 0);
        assert_int_equal(baton_session_state(a), BATON_SESSION_NONE);
        /* The latest session's id outlives it: the one the grant used. */
        assert_int_equal(baton_session_id(a), session);
        assert_int_equal(used, session);
        baton_client_destroy(a); /* does not close the session */
        assert_ok(baton_holder(b, name, &h));
        assert_int_equal(h.held, 1);
        assert_int_equal(h.session, session);
        assert_int_equal(h.owner, BATON_OWNER_DETACHED);
        assert_int_equal(h.token, t1);
        /* Refusals: a wrong secret (whatever the rest), a stale token, the
         * wrong owner. */
        memcpy(wrong, secret, sizeof wrong);
        wrong[0] ^= 1;
        assert_int_equal(
            baton_release_in(b, session, wrong, name, BATON_OWNER_DETACHED, t1),
            BATON_EPERM);
        assert_int_equal(
            baton_release_in(b, session, NULL, name, BATON_OWNER_DETACHED, t1),
            BATON_EINVAL);
        assert_int_equal(baton_release_in(b, session, secret, name,
                                          BATON_OWNER_DETACHED, t1 - 1),
                         BATON_ESTALE);
        assert_int_equal(baton_release_in(b, session, secret, name, 7, t1),
                         BATON_ENOTHOLDER);
        assert_int_equal(
            baton_release_in(b, session, secret, name, BATON_OWNER_THREAD, t1),
            BATON_EINVAL);
        assert_ok(baton_release_in(b, session, secret, name,
                                   BATON_OWNER_DETACHED, t1));
        assert_ok(baton_holder(b, name, &h));
        assert_int_equal(h.held, 0);
        assert_int_equal(baton_release_in(b, session, secret, name,
                                          BATON_OWNER_DETACHED, t1),
                         BATON_ENOTHOLDER);
        /* b's own session was never touched. */
        assert_ok(baton_acquire(b, name, BATON_OWNER_THREAD, 1000, &t2));
        assert_true(t2 > t1);
        assert_ok(baton_release(b, name, BATON_OWNER_THREAD, t2));

        /* Exactly once: the detached session takes the lock again (as raw
         * commands with the realtime seq of baton_release_in), releases it,
         * another owner gets a fresh grant, and the retry of the release
         * under the same seq answers the remembered outcome and leaves the
         * fresh grant alone. */
        owner = BATON_OWNER_DETACHED;
        assert_ok(tclient_init(&raw, cluster.endpoints));
        tclient_own(&raw, session, secret);
        memset(&k, 0, sizeof k);
        k.type = COMMAND_ACQUIRE;
        k.session = session;
        clock_gettime(CLOCK_REALTIME, &ts);
        k.seq =
            (uint64_t)ts.tv_sec * UINT64_C(1000000000) + (uint64_t)ts.tv_nsec;
        k.owner = owner;
        k.wait_ms = COMMAND_WAIT_TRY;
        k.mode = COMMAND_MODE_EXCLUSIVE;
        k.name = name;
        k.name_len = (uint8_t)strlen(name);
        assert_ok(tclient_command(&raw, &k, OP_MS, &res));
        t3 = res.token;
        memset(&k, 0, sizeof k);
        k.type = COMMAND_RELEASE;
        k.session = session;
        clock_gettime(CLOCK_REALTIME, &ts);
        k.seq =
            (uint64_t)ts.tv_sec * UINT64_C(1000000000) + (uint64_t)ts.tv_nsec;
        k.owner = owner;
        k.token = t3;
        k.name = name;
        k.name_len = (uint8_t)strlen(name);
        assert_ok(tclient_command(&raw, &k, OP_MS, &res));
        assert_ok(baton_acquire(b, name, BATON_OWNER_THREAD, 1000, &t2));
        rv = tclient_command(&raw, &k, OP_MS, &res); /* the retry */
        assert_int_equal(rv, 0);
        assert_ok(baton_holder(b, name, &h));
        assert_int_equal(h.held, 1);
        assert_int_equal(h.token, t2);
        assert_int_equal(h.count, 1);
        assert_true(h.session != session);
        /* A newer release of the detached session's old grant: refused,
         * the fresh grant still untouched. */
        assert_int_equal(baton_release_in(b, session, secret, name,
                                          BATON_OWNER_DETACHED, t3),
                         BATON_ENOTHOLDER);
        assert_ok(baton_holder(b, name, &h));
        assert_int_equal(h.token, t2);
        assert_ok(baton_release(b, name, BATON_OWNER_THREAD, t2));
        tclient_close(&raw);
        baton_client_destroy(b);
}

static void stale_holder_check(void **state)
{
        baton_client *a = client_new(10000, NULL);
        baton_client *b = client_new(10000, NULL);
        struct baton_holder h, hb;
        uint64_t t1 = 0, t2 = 0;
        struct call waiter;
        char name[64];

        (void)state;
        name_of(name, sizeof name, "stale");
        assert_ok(baton_holder(a, name, &h));
        assert_int_equal(h.held, 0);
        assert_ok(baton_acquire(a, name, 7, BATON_WAIT_TRY, &t1));
        assert_ok(baton_release(a, name, 7, t1));
        assert_ok(baton_acquire(a, name, 7, BATON_WAIT_TRY, &t2));
        assert_true(t2 > t1);
        /* Compare-and-delete: the old token changes nothing. */
        assert_int_equal(baton_release(a, name, 7, t1), BATON_ESTALE);
        assert_ok(baton_check(b, name, t2));
        assert_int_equal(baton_check(b, name, t1), BATON_ESTALE);
        /* The holder, as another session sees it, with a waiter queued. */
        call_start(&waiter, b, name, 10000);
        wait_waiters(b, name, 1);
        assert_ok(baton_holder(b, name, &hb));
        assert_int_equal(hb.held, 1);
        assert_int_equal(hb.owner, 7);
        assert_int_equal(hb.token, t2);
        assert_int_equal(hb.count, 1);
        assert_int_equal(hb.waiters, 1);
        assert_true(hb.session != 0);
        assert_true(hb.index >= t2);
        assert_ok(baton_release(a, name, 7, t2));
        pthread_join(waiter.thread, NULL);
        assert_ok(waiter.rv);
        assert_true(waiter.token > t2);
        assert_int_equal(baton_check(a, name, t2), BATON_ESTALE);
        assert_ok(baton_check(a, name, waiter.token));
        assert_ok(baton_holder(a, name, &h));
        assert_int_equal(h.held, 1);
        assert_true(h.session != hb.session);
        assert_int_equal(h.token, waiter.token);
        baton_client_destroy(b); /* its CLOSE releases the lock */
        assert_ok(baton_holder(a, name, &h));
        assert_int_equal(h.held, 0);
        baton_client_destroy(a);
}

/* A wait that runs out is answered ETIMEDOUT, and the waiter is gone: a
 * later release does not hand it the lock behind its back. */
static void wait_times_out(void **state)
{
        baton_client *a = client_new(10000, NULL);
        baton_client *b = client_new(10000, NULL);
        struct baton_holder h;
        uint64_t t1 = 0, t2 = 0;
        int64_t t0, took, until;
        char name[64];
        int rv;

        (void)state;
        name_of(name, sizeof name, "timeout");
        assert_ok(
            baton_acquire(a, name, BATON_OWNER_THREAD, BATON_WAIT_TRY, &t1));
        t0 = now_ms();
        rv = baton_acquire(b, name, BATON_OWNER_THREAD, 400, &t2);
        took = now_ms() - t0;
        print_message("# wait of 400 ms ended after %" PRId64 " ms\n", took);
        assert_int_equal(rv, BATON_ETIMEDOUT);
        assert_true(took >= 350);
        assert_true(took <= 400 + OP_MS + SLACK_MS);
        assert_ok(baton_holder(a, name, &h));
        assert_int_equal(h.waiters, 0);
        assert_ok(baton_release(a, name, BATON_OWNER_THREAD, t1));
        /* Never granted later: the lock stays free. */
        until = now_ms() + 500;
        while (now_ms() < until) {
                assert_ok(baton_holder(a, name, &h));
                assert_int_equal(h.held, 0);
                tclient_sleep_ms(50);
        }
        /* And b waits for nothing any more: it can take the lock. */
        assert_ok(
            baton_acquire(b, name, BATON_OWNER_THREAD, BATON_WAIT_TRY, &t2));
        assert_true(t2 > t1);
        assert_ok(baton_release(b, name, BATON_OWNER_THREAD, t2));
        baton_client_destroy(a);
        baton_client_destroy(b);
}

/*
 * kill -9 the leader while a lock is held and another thread of the same
 * handle waits for it. The holder keeps its lock and token; the waiter is
 * granted after the release. Before the kill the holder's thread issues
 * more commands, so the cluster has forgotten the waiter's outcome by the
 * time the waiter retries (BATON_ESEQ: the library finds the wait again).
 */
static void leader_killed(void **state)
{
        baton_client *a = client_new(10000, NULL);
        struct baton_holder h;
        uint64_t t1 = 0, t = 0;
        struct call waiter;
        char name[64], other[64];
        int64_t t0, took;
        unsigned killed;
        int i;

        (void)state;
        name_of(name, sizeof name, "failover");
        name_of(other, sizeof other, "failover-other");
        assert_ok(
            baton_acquire(a, name, BATON_OWNER_THREAD, BATON_WAIT_TRY, &t1));
        call_start(&waiter, a, name, BATON_WAIT_FOREVER);
        wait_waiters(a, name, 1);
        for (i = 0; i < 3; i++) {
                assert_ok(baton_acquire(a, other, BATON_OWNER_THREAD,
                                        BATON_WAIT_TRY, &t));
                assert_ok(baton_release(a, other, BATON_OWNER_THREAD, t));
        }
        assert_int_equal(
            harness_kill_leader(&cluster, HEALTHY_MS, &killed, NULL), 0);
        print_message("# killed leader %u\n", killed);
        /* The holder still holds, with its token, on the new leader. */
        t0 = now_ms();
        for (;;) {
                int64_t c0 = now_ms();
                int rv = baton_holder(a, name, &h);
                assert_true(now_ms() - c0 <= OP_MS + SLACK_MS);
                if (rv == 0) {
                        break;
                }
                assert_int_equal(rv, BATON_ENOANSWER);
                assert_true(now_ms() - t0 < HEALTHY_MS);
        }
        print_message("# holder query answered %" PRId64 " ms after the "
                      "kill\n",
                      now_ms() - t0);
        assert_int_equal(h.held, 1);
        assert_int_equal(h.token, t1);
        assert_int_equal(baton_session_state(a), BATON_SESSION_LIVE);
        assert_false(atomic_load(&waiter.done));
        wait_waiters(a, name, 1);
        t0 = now_ms();
        assert_ok(baton_release(a, name, BATON_OWNER_THREAD, t1));
        took = now_ms() - t0;
        assert_true(took <= OP_MS + SLACK_MS);
        pthread_join(waiter.thread, NULL);
        print_message("# waiter granted %" PRId64 " ms after the release\n",
                      now_ms() - t0);
        assert_ok(waiter.rv);
        assert_true(waiter.token > t1);
        assert_ok(baton_holder(a, name, &h));
        assert_int_equal(h.token, waiter.token);
        /* The waiter's thread is gone; its owner tag still holds. */
        assert_int_equal(h.count, 1);
        baton_client_destroy(a);
}

/* The next event of `w` within OP_MS, which must come. */
static struct baton_event next_event(baton_watch *w)
{
        struct baton_event e;

        assert_ok(baton_watch_next(w, &e, OP_MS));
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
        baton_client *a = client_new(10000, NULL);
        baton_client *b = client_new(10000, NULL);
        struct baton_event e[6], f, g;
        char name[64], pfx[64], other[64], elect[80], toolong[300];
        baton_watch *w, *p, *again, *twin;
        uint64_t t[3];
        int i;

        (void)state;
        name_of(name, sizeof name, "watched");
        name_of(pfx, sizeof pfx, "pfx/");
        name_of(other, sizeof other, "elsewhere");
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
        baton_client *a = client_new(10000, NULL);
        baton_client *b = client_new(10000, NULL);
        struct seen all = {.mu = PTHREAD_MUTEX_INITIALIZER};
        struct seen two = {.mu = PTHREAD_MUTEX_INITIALIZER};
        baton_watch *w, *w2;
        struct baton_event f;
        int64_t deadline;
        char name[64];
        uint64_t t[3];
        unsigned i;

        (void)state;
        name_of(name, sizeof name, "watched-cb");
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
        deadline = now_ms() + OP_MS;
        while (seen_count(&all) < 6 && now_ms() < deadline) {
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
        baton_client *a = client_new(10000, NULL);
        baton_client *b = client_new(10000, NULL);
        struct baton_event last, f;
        struct baton_holder h;
        uint64_t t[6];
        unsigned killed, seen = 0;
        char name[64];
        baton_watch *w;
        unsigned i;

        name_of(name, sizeof name, "watched-failover");
        /* A read first: the handle's connection is then the leader's. */
        assert_ok(baton_holder(a, name, &h));
        assert_ok(baton_watch_open(a, name, 0, 0, 0, &w));
        memset(&last, 0, sizeof last);
        for (i = 0; i < 6; i++) {
                if (i == kill_at) {
                        assert_int_equal(harness_kill_leader(&cluster,
                                                             HEALTHY_MS,
                                                             &killed, NULL),
                                         0);
                        print_message("# killed leader %u\n", killed);
                }
                assert_ok(baton_acquire(b, name, 1, HEALTHY_MS, &t[i]));
                assert_ok(baton_release(b, name, 1, t[i]));
        }
        while (seen < 12) {
                assert_ok(baton_watch_next(w, &f, HEALTHY_MS));
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
                assert_int_equal(
                    harness_wait_exit(&cluster, i, HEALTHY_MS, NULL), 0);
                assert_int_equal(harness_restart(&cluster, i), 0);
        }
        assert_int_equal(harness_wait_healthy(&cluster, HEALTHY_MS, &leader),
                         0);
        a = client_new(10000, NULL);
        b = client_new(10000, NULL);
        name_of(name, sizeof name, "compacted");
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

/* SIGSTOP the leader the handle talks to: the heartbeat gives up on it
 * and calls succeed on the new leader within a few seconds. */
static void server_paused(void **state)
{
        baton_client *a = client_new(10000, NULL);
        uint64_t t = 0;
        unsigned leader;
        char name[64];
        int64_t t0, took;
        int rv = -1;

        (void)state;
        name_of(name, sizeof name, "paused-server");
        assert_ok(
            baton_acquire(a, name, BATON_OWNER_THREAD, BATON_WAIT_TRY, &t));
        assert_ok(baton_release(a, name, BATON_OWNER_THREAD, t));
        assert_int_equal(harness_wait_leader(&cluster, HEALTHY_MS, &leader), 0);
        assert_int_equal(harness_pause(&cluster, leader), 0);
        t0 = now_ms();
        while (now_ms() - t0 < 3 * OP_MS) {
                int64_t c0 = now_ms();
                rv = baton_acquire(a, name, BATON_OWNER_THREAD, BATON_WAIT_TRY,
                                   &t);
                assert_true(now_ms() - c0 <= OP_MS + SLACK_MS);
                if (rv == 0) {
                        break;
                }
        }
        took = now_ms() - t0;
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
        baton_client *a = client_new(10000, NULL), *b;
        struct baton_holder h;
        uint64_t t1 = 0, t2 = 0;
        struct call waiter;
        int64_t free_since = 0, t0;
        unsigned leader;
        char name[64];

        (void)state;
        baton_options_init(&o);
        o.request_timeout_ms = 1000;
        b = client_new(10000, &o);
        name_of(name, sizeof name, "withdrawn");
        assert_ok(
            baton_acquire(a, name, BATON_OWNER_THREAD, BATON_WAIT_TRY, &t1));
        call_owner(&waiter, b, name, 5, 300);
        wait_waiters(a, name, 1);
        assert_int_equal(harness_wait_leader(&cluster, HEALTHY_MS, &leader), 0);
        assert_int_equal(harness_pause(&cluster, leader), 0);
        pthread_join(waiter.thread, NULL);
        print_message("# the wait ended after %" PRId64 " ms: %s\n",
                      waiter.took, baton_strerror(waiter.rv));
        assert_int_equal(waiter.rv, BATON_ETIMEDOUT);
        assert_true(waiter.took <= 300 + 1000 + SLACK_MS);
        t0 = now_ms();
        for (;;) {
                int rv = baton_release(a, name, BATON_OWNER_THREAD, t1);
                if (rv == 0) {
                        break;
                }
                assert_int_equal(rv, BATON_ENOANSWER);
                assert_true(now_ms() - t0 < HEALTHY_MS);
        }
        /* Free, and staying free, soon after the release. */
        t0 = now_ms();
        while (free_since == 0 || now_ms() - free_since < 1000) {
                assert_true(now_ms() - t0 < HEALTHY_MS);
                if (baton_holder(a, name, &h) != 0) {
                        continue;
                }
                if (h.held) {
                        free_since = 0;
                } else if (free_since == 0) {
                        free_since = now_ms();
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

/* examples/lock_example, built by make check, runs against the cluster. */
static void example_runs(void **state)
{
        const char *path = "./examples/lock_example";
        const char *const args[] = {cluster.endpoints, "tc-example", NULL};
        struct proc p;

        (void)state;
        if (access(path, X_OK) != 0) {
                skip();
        }
        assert_int_equal(proc_start(&p, path, 0, NULL, args), 0);
        if (proc_wait(&p, EXAMPLE_MS) != 0) {
                proc_show(&p);
        }
        assert_true(p.status >= 0 && p.status < 128); /* it exited */
        assert_int_equal(p.status, 0);
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
        int64_t deadline = now_ms() + timeout_ms;
        size_t off = 0;

        while (off < len) {
                struct timespec ts = {0, 5 * 1000000};
                ssize_t n = read(fd, (char *)buf + off, len - off);
                if (n > 0) {
                        off += (size_t)n;
                        continue;
                }
                if (n == 0 || (errno != EAGAIN && errno != EINTR) ||
                    now_ms() > deadline) {
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
        o.request_timeout_ms = OP_MS;
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
        deadline = now_ms() + 3000;
        while (atomic_load(&child_lost) == 0 && now_ms() < deadline) {
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
        name_of(name, sizeof name, "paused-client");
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
        if (!read_all(up[0], &t1, sizeof t1, 2 * OP_MS) || t1 == 0) {
                kill(pid, SIGKILL);
                waitpid(pid, NULL, 0);
                fail_msg("the child did not take the lock");
        }
        a = client_new(10000, NULL);
        assert_int_equal(kill(pid, SIGSTOP), 0);
        t0 = now_ms();
        rv = baton_acquire(a, name, BATON_OWNER_THREAD, 10000, &t2);
        took = now_ms() - t0;
        print_message("# the paused child's lock came after %" PRId64 " ms\n",
                      took);
        kill(pid, SIGCONT);
        if (write(down[1], "g", 1) != 1 ||
            !read_all(up[0], &rep, sizeof rep, 2 * OP_MS)) {
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
                name_of(s.shared[i], sizeof s.shared[i], "stress");
                baton_fence_init(&s.fence[i]);
        }
        s.c = client_new(10000, NULL);
        t0 = now_ms();
        for (i = 0; i < STRESS_THREADS; i++) {
                w[i].s = &s;
                w[i].no = i;
                assert_int_equal(
                    pthread_create(&w[i].thread, NULL, stress_main, &w[i]), 0);
        }
        for (i = 0; i < STRESS_THREADS; i++) {
                pthread_join(w[i].thread, NULL);
        }
        took = now_ms() - t0;
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

/* --- Addresses ------------------------------------------------------------ */

/* The client endpoints of `h` with each host written `host`. */
static void endpoints_on(char *buf, size_t cap, const struct harness *h,
                         const char *host)
{
        size_t off = 0;
        unsigned i;

        buf[0] = '\0';
        for (i = 1; i <= h->n; i++) {
                const char *port = strrchr(harness_client_address(h, i), ':');
                assert_non_null(port);
                off += (size_t)snprintf(buf + off, cap - off, "%s%s%s",
                                        i > 1 ? "," : "", host, port);
                assert_true(off < cap);
        }
}

/* Take and give back a lock through `endpoints`, and ask every one of them
 * for its status (a connection of its own). */
static void lock_through(const char *endpoints)
{
        struct baton_options o;
        struct baton_status st;
        baton_client *c = NULL;
        char list[512];
        char name[64];
        char *e, *save = NULL;
        uint64_t t = 0;

        baton_options_init(&o);
        o.request_timeout_ms = OP_MS;
        o.client_name = "test_client";
        print_message("# endpoints %s\n", endpoints);
        assert_ok(baton_client_create(&c, endpoints, &o));
        name_of(name, sizeof name, "addr");
        assert_ok(
            baton_acquire(c, name, BATON_OWNER_THREAD, BATON_WAIT_TRY, &t));
        assert_true(t > 0);
        assert_ok(baton_release(c, name, BATON_OWNER_THREAD, t));
        snprintf(list, sizeof list, "%s", endpoints);
        for (e = strtok_r(list, ",", &save); e != NULL;
             e = strtok_r(NULL, ",", &save)) {
                memset(&st, 0, sizeof st);
                assert_ok(baton_status(c, e, &st));
                assert_true(st.id != 0);
                assert_string_equal(st.endpoint, e);
        }
        baton_client_destroy(c);
}

/* A member whose raft address is IPv6 (which libraft 0.22.1 cannot use)
 * is refused by the leader; a malformed address by the library. Nothing
 * changes in the cluster. */
static void member_add_refused(const char *endpoints)
{
        struct baton_status st;
        baton_client *c = NULL;

        assert_ok(baton_client_create(&c, endpoints, NULL));
        assert_int_equal(baton_member_add(c, 9, "[::1]:1", "[::1]:2"),
                         BATON_EINVAL);
        assert_int_equal(baton_member_add(c, 9, "node_9:1", "localhost:2"),
                         BATON_EINVAL);
        assert_int_equal(baton_member_add(c, 9, "localhost:1", "::1:2"),
                         BATON_EINVAL);
        assert_ok(baton_status(c, NULL, &st));
        assert_int_equal(st.n_members, 3);
        baton_client_destroy(c);
}

/* libbaton reaches the cluster through host names: "localhost:PORT". */
static void endpoints_by_name(void **state)
{
        char endpoints[512];

        (void)state;
        endpoints_on(endpoints, sizeof endpoints, &cluster, "localhost");
        lock_through(endpoints);
}

static bool have_ipv6_loopback(void)
{
        struct sockaddr_in6 sa;
        int fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
        bool ok;

        if (fd < 0) {
                return false;
        }
        memset(&sa, 0, sizeof sa);
        sa.sin6_family = AF_INET6;
        sa.sin6_addr = in6addr_loopback;
        ok = bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0;
        close(fd);
        return ok;
}

/* A cluster whose raft addresses are "localhost:PORT" and whose client
 * addresses are "[::1]:PORT", and libbaton reaching it there. */
static void endpoints_ipv6(void **state)
{
        struct harness h;
        unsigned leader;

        (void)state;
        if (!have_ipv6_loopback()) {
                print_message("# SKIP: this machine has no ::1\n");
                skip();
        }
        if (harness_start_on(&h, 3, NULL, argv0, 0, "localhost", "[::1]") !=
                0 ||
            harness_wait_healthy(&h, HEALTHY_MS, &leader) != 0) {
                print_message("# cluster on [::1]: %s\n", h.errmsg);
                h.failed = true;
                harness_close(&h);
                fail();
        }
        assert_true(strncmp(h.endpoints, "[::1]:", 6) == 0);
        lock_through(h.endpoints);
        member_add_refused(h.endpoints);
        harness_close(&h);
}

int main(int argc, char **argv)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(try_busy),
            cmocka_unit_test(reentrancy),
            cmocka_unit_test(shared_readers),
            cmocka_unit_test(semaphore_permits),
            cmocka_unit_test(multi_locks),
            cmocka_unit_test(elections),
            cmocka_unit_test(watches),
            cmocka_unit_test(watch_callbacks),
            cmocka_unit_test(revoke_one_lock),
            cmocka_unit_test(holder_names),
            cmocka_unit_test(stale_holder_check),
            cmocka_unit_test(detach_release_in),
            cmocka_unit_test(wait_times_out),
            cmocka_unit_test(client_paused),
            cmocka_unit_test(many_threads),
            cmocka_unit_test_setup_teardown(leader_killed, livecluster_restore,
                                            livecluster_restore),
            cmocka_unit_test_setup_teardown(server_paused, livecluster_restore,
                                            livecluster_restore),
            cmocka_unit_test_setup_teardown(wait_withdrawn, livecluster_restore,
                                            livecluster_restore),
            cmocka_unit_test_setup_teardown(
                watch_over_failover, livecluster_restore, livecluster_restore),
            cmocka_unit_test_setup_teardown(watch_failover_at_start,
                                            livecluster_restore,
                                            livecluster_restore),
            cmocka_unit_test_setup_teardown(
                watch_compacted, livecluster_restore, livecluster_restore),
            cmocka_unit_test(example_runs),
            cmocka_unit_test(endpoints_by_name),
            cmocka_unit_test(endpoints_ipv6),
        };

        (void)argc;
        argv0 = argv[0];
        livecluster_use(&cluster, argv0, WATCHDOG_S);
        return cmocka_run_group_tests_name("client", tests, livecluster_up,
                                           livecluster_down);
}
