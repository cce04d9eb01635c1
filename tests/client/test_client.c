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
#include "acqthread.h"
#include "liveclient.h"
#include "livecluster.h"

#define WATCHDOG_S 240
#define EXAMPLE_MS 60000 /* examples/lock_example runs this long at most */

static struct harness cluster;
static const char *argv0;

/* --- Cases ---------------------------------------------------------------- */

static void try_busy(void **state)
{
        baton_client *a = liveclient_new(10000, NULL);
        baton_client *b = liveclient_new(10000, NULL);
        uint64_t t1 = 0, t2 = 0, t3 = 0;
        char name[64];

        (void)state;
        liveclient_name(name, sizeof name, "try");
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
        baton_client *a = liveclient_new(10000, NULL);
        baton_client *b = liveclient_new(10000, NULL);
        uint64_t ta = 0, tb = 0, tw = 0, tr = 0;
        struct acqthread writer;
        char name[64];

        (void)state;
        liveclient_name(name, sizeof name, "shared");
        assert_ok(baton_acquire_shared(a, name, 1, BATON_WAIT_TRY, &ta));
        assert_ok(baton_acquire_shared(b, name, 1, BATON_WAIT_TRY, &tb));
        assert_true(ta > 0 && tb > ta);
        assert_int_equal(baton_acquire(a, name, 1, BATON_WAIT_TRY, NULL),
                         BATON_EUPGRADE);
        assert_int_equal(baton_acquire(b, name, 2, BATON_WAIT_TRY, NULL),
                         BATON_EBUSY);
        acqthread_start_owner(&writer, b, name, 2, 10000);
        acqthread_wait_waiters(a, name, 1);
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
        struct acqthread *k = arg;

        k->rv =
            baton_sem_acquire(k->c, k->name, 3, 2, k->owner, 10000, &k->token);
        atomic_store(&k->done, true);
        return NULL;
}

static void *campaign_main(void *arg)
{
        struct acqthread *k = arg;

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
        baton_client *a = liveclient_new(10000, NULL);
        baton_client *b = liveclient_new(10000, NULL);
        char name[64], lock[64], longest[BATON_VALUE_MAX + 2];
        struct baton_leader l;
        uint64_t t1 = 0, t2 = 0;
        struct acqthread next;

        (void)state;
        liveclient_name(name, sizeof name, "election");
        liveclient_name(lock, sizeof lock, "not-an-election");
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
        acqthread_wait_waiters(a, name, 1);
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
        baton_client *a = liveclient_new(10000, NULL);
        baton_client *b = liveclient_new(10000, NULL);
        uint64_t t1 = 0, t2 = 0, t3 = 0;
        struct acqthread big;
        char name[64];

        (void)state;
        liveclient_name(name, sizeof name, "sem");
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
        acqthread_wait_waiters(a, name, 1);
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
        struct acqthread k;
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
        baton_client *a = liveclient_new(10000, NULL);
        baton_client *b = liveclient_new(10000, NULL);
        baton_client *adm;
        char x[64], y[64];
        struct baton_lock_name both[2] = {{x, BATON_MODE_EXCLUSIVE},
                                          {y, BATON_MODE_EXCLUSIVE}};
        struct baton_holder h;
        struct multi_call m;
        uint64_t t1 = 0, t2 = 0;

        (void)state;
        liveclient_name(x, sizeof x, "multi-x");
        liveclient_name(y, sizeof y, "multi-y");
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
        acqthread_wait_waiters(a, x, 1);
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
        o.request_timeout_ms = LIVECLIENT_OP_MS;
        o.on_lock_lost = multi_on_lost;
        baton_client_destroy(a);
        a = liveclient_new(10000, &o);
        assert_ok(baton_multi_acquire(a, both, 2, 1, BATON_WAIT_TRY, &t2));
        adm = liveclient_new(10000, NULL);
        assert_ok(baton_session_revoke(adm, baton_session_id(a)));
        for (int64_t end = tclient_now_ms() + LIVECLUSTER_HEALTHY_MS;
             atomic_load(&multi_lost) < 2 && tclient_now_ms() < end;) {
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
        baton_client *a, *b = liveclient_new(10000, NULL);
        baton_client *adm = liveclient_new(10000, NULL);
        char x[64], y[64];
        uint64_t tx = 0, ty = 0;
        struct baton_holder h;
        struct acqthread w;

        (void)state;
        liveclient_name(x, sizeof x, "revoke-x");
        liveclient_name(y, sizeof y, "revoke-y");
        baton_options_init(&o);
        o.request_timeout_ms = LIVECLIENT_OP_MS;
        o.on_lock_lost = revoke_on_lost;
        a = liveclient_new(3000, &o);
        assert_ok(baton_acquire(a, x, 1, BATON_WAIT_TRY, &tx));
        assert_ok(baton_acquire(a, y, 1, BATON_WAIT_TRY, &ty));
        acqthread_start_owner(&w, b, x, 1, 10000);
        acqthread_wait_waiters(adm, x, 1);
        assert_ok(baton_revoke(adm, x, baton_session_id(a), tx));
        pthread_join(w.thread, NULL);
        assert_ok(w.rv);
        assert_true(w.token > tx);
        assert_int_equal(baton_revoke(adm, x, baton_session_id(a), tx),
                         BATON_ENOTHOLDER);
        for (int64_t end = tclient_now_ms() + LIVECLUSTER_HEALTHY_MS;
             atomic_load(&revoke_lost) < 1 && tclient_now_ms() < end;) {
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
        baton_client *a = liveclient_new(10000, NULL);
        struct baton_holder h;
        uint64_t t1 = 0, t2 = 0;
        struct acqthread other;
        char name[64];

        (void)state;
        liveclient_name(name, sizeof name, "reenter");
        assert_ok(baton_acquire(a, name, BATON_OWNER_THREAD, 1000, &t1));
        assert_ok(baton_acquire(a, name, BATON_OWNER_THREAD, 1000, &t2));
        assert_int_equal(t1, t2);
        assert_ok(baton_holder(a, name, &h));
        assert_int_equal(h.held, 1);
        assert_int_equal(h.count, 2);
        assert_int_equal(h.token, t1);
        /* Another thread of the same handle is another owner. */
        acqthread_start(&other, a, name, BATON_WAIT_TRY);
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
        o.request_timeout_ms = LIVECLIENT_OP_MS;
        o.client_name = "build-42";
        a = liveclient_new(10000, &o);
        b = liveclient_new(10000, NULL);
        liveclient_name(name, sizeof name, "names");
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
        baton_client *a = liveclient_new(10000, NULL);
        baton_client *b = liveclient_new(10000, NULL);
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
        liveclient_name(name, sizeof name, "detach");
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
        assert_ok(tclient_command(&raw, &k, LIVECLIENT_OP_MS, &res));
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
        assert_ok(tclient_command(&raw, &k, LIVECLIENT_OP_MS, &res));
        assert_ok(baton_acquire(b, name, BATON_OWNER_THREAD, 1000, &t2));
        rv = tclient_command(&raw, &k, LIVECLIENT_OP_MS, &res); /* the retry */
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
        baton_client *a = liveclient_new(10000, NULL);
        baton_client *b = liveclient_new(10000, NULL);
        struct baton_holder h, hb;
        uint64_t t1 = 0, t2 = 0;
        struct acqthread waiter;
        char name[64];

        (void)state;
        liveclient_name(name, sizeof name, "stale");
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
        acqthread_start(&waiter, b, name, 10000);
        acqthread_wait_waiters(b, name, 1);
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
        baton_client *a = liveclient_new(10000, NULL);
        baton_client *b = liveclient_new(10000, NULL);
        struct baton_holder h;
        uint64_t t1 = 0, t2 = 0;
        int64_t t0, took, until;
        char name[64];
        int rv;

        (void)state;
        liveclient_name(name, sizeof name, "timeout");
        assert_ok(
            baton_acquire(a, name, BATON_OWNER_THREAD, BATON_WAIT_TRY, &t1));
        t0 = tclient_now_ms();
        rv = baton_acquire(b, name, BATON_OWNER_THREAD, 400, &t2);
        took = tclient_now_ms() - t0;
        print_message("# wait of 400 ms ended after %" PRId64 " ms\n", took);
        assert_int_equal(rv, BATON_ETIMEDOUT);
        assert_true(took >= 350);
        assert_true(took <= 400 + LIVECLIENT_OP_MS + LIVECLIENT_SLACK_MS);
        assert_ok(baton_holder(a, name, &h));
        assert_int_equal(h.waiters, 0);
        assert_ok(baton_release(a, name, BATON_OWNER_THREAD, t1));
        /* Never granted later: the lock stays free. */
        until = tclient_now_ms() + 500;
        while (tclient_now_ms() < until) {
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
        o.request_timeout_ms = LIVECLIENT_OP_MS;
        o.client_name = "test_client";
        print_message("# endpoints %s\n", endpoints);
        assert_ok(baton_client_create(&c, endpoints, &o));
        liveclient_name(name, sizeof name, "addr");
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
            harness_wait_healthy(&h, LIVECLUSTER_HEALTHY_MS, &leader) != 0) {
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
            cmocka_unit_test(revoke_one_lock),
            cmocka_unit_test(holder_names),
            cmocka_unit_test(stale_holder_check),
            cmocka_unit_test(detach_release_in),
            cmocka_unit_test(wait_times_out),
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
