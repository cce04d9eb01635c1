/*
 * libbaton's protocol behaviour against a scripted fake server (fake.h):
 * the paths a real cluster takes only by bad luck, made deterministic.
 * Here the request paths: bad arguments, fencing, a command of unknown
 * outcome sent again, NOT_LEADER followed, a transfer and an election
 * ridden out, a late grant released, a wait withdrawn, silent and vanished
 * nodes, a session expired for good and a server too old for KEEPALIVE.
 * Its siblings: test_wire_session (ESEQ recovered, the lease counted from
 * the send) and test_wire_watch (watches and the stream). Cases wait for
 * frames with deadlines, never bare sleeps.
 */
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../include/baton.h"
#include "../../src/proto/command.h"
#include "../../src/fsm/lockfsm.h"
#include "../../src/proto/proto.h"
#include "../../src/proto/reply.h"
#include "../../src/proto/status.h"
#include "../../src/proto/keepalive.h"
#include "../../src/proto/watch.h"
#include "fake.h"

static void bad_arguments(void **state)
{
        struct baton_options o;
        baton_client *c = NULL;
        char long_name[300];

        (void)state;
        assert_int_equal(baton_client_create(&c, "nonsense", NULL),
                         BATON_EINVAL);
        assert_int_equal(baton_client_create(&c, "127.0.0.1:0", NULL),
                         BATON_EINVAL);
        assert_int_equal(baton_client_create(&c, "127.0.0.1:1,", NULL),
                         BATON_EINVAL);
        /* Host names and [ipv6] are endpoints; these are malformed. */
        assert_int_equal(baton_client_create(&c, "host_1:7101", NULL),
                         BATON_EINVAL);
        assert_int_equal(baton_client_create(&c, "::1:7101", NULL),
                         BATON_EINVAL);
        assert_int_equal(baton_client_create(&c, "[::1]:0", NULL),
                         BATON_EINVAL);
        baton_options_init(&o);
        o.ttl_ms = 0;
        assert_int_equal(baton_client_create(&c, NULL, &o), BATON_EINVAL);
        assert_null(c);
        baton_client_destroy(NULL);
        c = fake_client(fake_server()->endpoints, 10000, 1000, NULL);
        memset(long_name, 'x', sizeof long_name - 1);
        long_name[sizeof long_name - 1] = '\0';
        assert_int_equal(baton_acquire(c, long_name, 0, 0, NULL), BATON_ENAME);
        assert_int_equal(baton_release(c, "", 0, 1), BATON_ENAME);
        assert_int_equal(baton_acquire(c, "x", 0, -5, NULL), BATON_EINVAL);
        /* Nothing was sent for any of them, not even an OPEN. */
        assert_int_equal(fake_count_frames(PROTO_COMMAND, 0), 0);
        assert_int_equal(baton_session_state(c), BATON_SESSION_NONE);
        baton_client_destroy(c);
}

static void fence(void **state)
{
        struct baton_fence f;

        (void)state;
        baton_fence_init(&f);
        assert_int_equal(baton_fence_admit(&f, 5), 0);
        assert_int_equal(baton_fence_admit(&f, 5), 0);
        assert_int_equal(baton_fence_admit(&f, 4), BATON_ESTALE);
        assert_int_equal(baton_fence_admit(&f, 9), 0);
        assert_int_equal(f.highest, 9);
}

/* BATON_EUNKNOWN: the very same bytes (same seq) go out again. */
static int unknown_once(struct fake *f, const struct fake_frame *fr)
{
        if (fr->h.type == PROTO_COMMAND && fr->k.type == COMMAND_ACQUIRE &&
            f->data == NULL) {
                f->data = (void *)1;
                fake_status(f, fr, BATON_EUNKNOWN);
                return 1;
        }
        return 0;
}

static void unknown_resent_same_bytes(void **state)
{
        baton_client *c;
        struct fake_frame a, b;
        uint64_t token = 0;
        unsigned from = 0;

        (void)state;
        fake_set_hook(unknown_once, NULL);
        c = fake_client(fake_server()->endpoints, 10000, 2000, NULL);
        assert_int_equal(baton_acquire(c, "job", 0, 0, &token), 0);
        assert_true(token > 1000);
        a = fake_wait_frame(&from, PROTO_COMMAND, COMMAND_ACQUIRE);
        b = fake_wait_frame(&from, PROTO_COMMAND, COMMAND_ACQUIRE);
        assert_int_equal(a.h.length, b.h.length);
        assert_memory_equal(a.body, b.body, a.h.length);
        assert_int_equal(a.k.seq, 1);
        assert_true(a.h.id != b.h.id);
        baton_client_destroy(c);
}

/* NOT_LEADER with the leader's address: the library goes there, and only
 * there, with the same request. */
static int node0_redirects(struct fake *f, const struct fake_frame *fr)
{
        uint8_t out[128];

        if (fr->node == 0 && fr->h.type != PROTO_PING) {
                fake_send(f, fr->conn, out,
                          proto_write_not_leader(out, sizeof out, fr->h.id, 2,
                                                 f->addr[1]));
                return 1;
        }
        return 0;
}

static void not_leader_followed(void **state)
{
        baton_client *c;
        struct fake_frame open0, open1;
        unsigned from = 0;

        (void)state;
        fake_set_hook(node0_redirects, NULL);
        c = fake_client(fake_server()->addr[0], 10000, 2000,
                        NULL); /* only node 0 listed */
        assert_int_equal(baton_acquire(c, "job", 0, 0, NULL), 0);
        open0 = fake_wait_frame(&from, PROTO_COMMAND, COMMAND_OPEN);
        open1 = fake_wait_frame(&from, PROTO_COMMAND, COMMAND_OPEN);
        assert_int_equal(open0.node, 0);
        assert_int_equal(open1.node, 1);
        assert_int_equal(open0.k.nonce, open1.k.nonce);
        assert_int_equal(baton_session_state(c), BATON_SESSION_LIVE);
        baton_client_destroy(c);
}

/* TRANSFER answered as a leader that stepped down knowing no successor
 * yet (it was told of a newer term), then STATUS: no leader for three
 * answers (the election runs), then node 2 leads. */
static int transfer_unknown_winner(struct fake *f, const struct fake_frame *fr)
{
        struct proto_result r;
        struct proto_status st;
        uint8_t out[512];
        unsigned *asked = f->data;

        memset(&r, 0, sizeof r);
        memset(&st, 0, sizeof st);
        if (fr->h.type == PROTO_TRANSFER) {
                r.kind = PROTO_KIND_TRANSFERRED;
                r.session = 1; /* it led */
                fake_result(f, fr, &r);
                return 1;
        }
        if (fr->h.type != PROTO_STATUS) {
                return 0;
        }
        st.id = 1;
        st.role = ++*asked > 3 ? BATON_ROLE_LEADER : BATON_ROLE_FOLLOWER;
        st.leader_id = *asked > 3 ? 2 : 0;
        fake_send(f, fr->conn, out,
                  proto_write_status(out, sizeof out, fr->h.id, 0, &st, NULL));
        return 1;
}

/* baton_transfer_to() reports where leadership actually went: the node
 * that led stepped down before the election ended, so the call asks the
 * cluster until a leader is known, and it is node 2, not node 3. */
static void transfer_reports_the_winner(void **state)
{
        baton_client *c;
        uint64_t from = 9, to = 9;
        unsigned asked = 0;

        (void)state;
        fake_set_hook(transfer_unknown_winner, &asked);
        c = fake_client(fake_server()->addr[0], 10000, 3000, NULL);
        assert_int_equal(baton_transfer_to(c, 3, &from, &to), 0);
        assert_int_equal(from, 1);
        assert_int_equal(to, 2);
        assert_true(asked > 3);
        baton_client_destroy(c);
}

/* An election: every node answers NOT_LEADER naming no leader, 20 times
 * in all, then serves. The library asks again every few tens of ms, so
 * the acquire is served within its 5 s deadline; backing off exponentially
 * (10 ms doubling to 1 s, jittered) would take at least 6.6 s for the 20
 * answers and time out. */
static int no_leader_20(struct fake *f, const struct fake_frame *fr)
{
        unsigned *answered = f->data;
        uint8_t out[128];

        if (fr->h.type != PROTO_COMMAND || *answered >= 20) {
                return 0;
        }
        (*answered)++;
        fake_send(f, fr->conn, out,
                  proto_write_not_leader(out, sizeof out, fr->h.id, 0, ""));
        return 1;
}

static void election_ridden_out(void **state)
{
        static unsigned answered;
        baton_client *c;

        (void)state;
        answered = 0;
        fake_set_hook(no_leader_20, &answered);
        c = fake_client(fake_server()->endpoints, 10000, 5000, NULL);
        assert_int_equal(baton_acquire(c, "job", 0, 0, NULL), 0);
        pthread_mutex_lock(&fake_server()->mu);
        assert_int_equal(answered, 20);
        pthread_mutex_unlock(&fake_server()->mu);
        baton_client_destroy(c);
}

/* ACQUIREs the server holds without answering, for the test to answer. */
struct held {
        struct fake_frame acquire;
        bool have;
};

static int hold_acquire(struct fake *f, const struct fake_frame *fr)
{
        struct held *h = f->data;

        if (fr->h.type == PROTO_COMMAND && fr->k.type == COMMAND_ACQUIRE &&
            !h->have) {
                h->acquire = *fr;
                h->have = true;
                return 1;
        }
        if (fr->h.type == PROTO_COMMAND && fr->k.type == COMMAND_CANCEL) {
                fake_status(f, fr, BATON_ENOTWAITING); /* the grant won */
                return 1;
        }
        return 0;
}

/* The ACQUIRE the server holds, copied under the lock. */
static struct fake_frame held_acquire(struct held *h)
{
        struct fake_frame fr;

        pthread_mutex_lock(&fake_server()->mu);
        if (!h->have) {
                pthread_mutex_unlock(&fake_server()->mu);
                fail_msg("the server saw no ACQUIRE");
        }
        fr = h->acquire;
        pthread_mutex_unlock(&fake_server()->mu);
        return fr;
}

/* Answer the held ACQUIRE: GRANTED with `token`. */
static void late_grant(struct held *h, uint64_t token)
{
        struct proto_result r;

        memset(&r, 0, sizeof r);
        r.kind = PROTO_KIND_GRANTED;
        r.token = token;
        r.count = 1;
        pthread_mutex_lock(&fake_server()->mu);
        r.session = h->acquire.k.session;
        r.owner = h->acquire.k.owner;
        fake_result(fake_server(), &h->acquire, &r);
        pthread_mutex_unlock(&fake_server()->mu);
}

/* A try whose answer comes after the caller's deadline: BATON_ENOANSWER,
 * and the grant that arrives later is released, with its token. */
static void late_grant_released(void **state)
{
        static struct held h;
        baton_client *c;
        struct fake_frame acq, rel;
        unsigned from = 0;
        int64_t t0;

        (void)state;
        memset(&h, 0, sizeof h);
        fake_set_hook(hold_acquire, &h);
        c = fake_client(fake_server()->endpoints, 10000, 300, NULL);
        t0 = fake_now_ms();
        assert_int_equal(baton_acquire(c, "job", 3, BATON_WAIT_TRY, NULL),
                         BATON_ENOANSWER);
        assert_true(fake_now_ms() - t0 < 300 + 200);
        acq = held_acquire(&h);
        late_grant(&h, 4242);
        rel = fake_wait_frame(&from, PROTO_COMMAND, COMMAND_RELEASE);
        assert_int_equal(rel.k.token, 4242);
        assert_int_equal(rel.k.owner, 3);
        assert_int_equal(rel.k.session, acq.k.session);
        baton_client_destroy(c);
}

/* A blocking wait that outlives the caller's deadline: BATON_ETIMEDOUT,
 * a CANCEL of exactly that ACQUIRE follows, and a grant that raced the
 * CANCEL is released. */
static void wait_withdrawn(void **state)
{
        static struct held h;
        baton_client *c;
        struct fake_frame acq, cancel, rel;
        unsigned from = 0;
        int64_t t0;

        (void)state;
        memset(&h, 0, sizeof h);
        fake_set_hook(hold_acquire, &h);
        c = fake_client(fake_server()->endpoints, 10000, 300, NULL);
        t0 = fake_now_ms();
        assert_int_equal(baton_acquire(c, "job", 3, 200, NULL),
                         BATON_ETIMEDOUT);
        assert_true(fake_now_ms() - t0 < 200 + 300 + 200);
        cancel = fake_wait_frame(&from, PROTO_COMMAND, COMMAND_CANCEL);
        acq = held_acquire(&h);
        assert_int_equal(cancel.k.target, acq.k.seq);
        assert_true(cancel.k.seq > acq.k.seq);
        /* The CANCEL is answered ENOTWAITING at once; the grant it lost to
         * arrives a little later. */
        {
                struct timespec ts = {0, 200 * 1000000};
                nanosleep(&ts, NULL);
        }
        late_grant(&h, 777);
        rel = fake_wait_frame(&from, PROTO_COMMAND, COMMAND_RELEASE);
        assert_int_equal(rel.k.token, 777);
        /* One CANCEL for the one send of the ACQUIRE, not one per answer. */
        assert_int_equal(fake_count_frames(PROTO_COMMAND, COMMAND_CANCEL), 1);
        baton_client_destroy(c);
}

/* A node that accepts connections but never answers (as a SIGSTOPped
 * one): the heartbeat gives up on it and the other node serves. */
static void silent_node_abandoned(void **state)
{
        baton_client *c;
        int64_t t0, took;

        (void)state;
        fake_set_silent(0, true);
        c = fake_client(fake_server()->endpoints, 1500, 5000,
                        NULL); /* heartbeat 300 ms */
        t0 = fake_now_ms();
        assert_int_equal(baton_acquire(c, "job", 0, 0, NULL), 0);
        took = fake_now_ms() - t0;
        print_message("# served after %" PRId64 " ms\n", took);
        assert_true(took < 2000);
        baton_client_destroy(c);
}

/* Once `*swallowed` (f->data) is set by the first ACQUIRE, which gets no
 * answer, every node closes each connection at its first frame: as a
 * cluster that went away, every endpoint now fails before answering. */
static int swallow_then_close(struct fake *f, const struct fake_frame *fr)
{
        bool *swallowed = f->data;

        if (fr->h.type == PROTO_COMMAND && fr->k.type == COMMAND_ACQUIRE) {
                *swallowed = true;
        } else if (!*swallowed) {
                return 0;
        }
        fake_close_conn(f, fr->conn);
        return 1;
}

/*
 * A request that went out and got no answer keeps its outcome unknown,
 * even when every endpoint then fails at once: the try waits out its
 * timeout and says so (BATON_ENOANSWER), never BATON_ECONNECT. A request
 * that never goes out fails within a pass: BATON_ECONNECT, each endpoint
 * named with its reason.
 */
static void sent_then_nodes_gone(void **state)
{
        bool swallowed = false;
        struct baton_holder h;
        baton_client *c;
        int64_t t0, took;
        int rv;

        (void)state;
        fake_set_hook(swallow_then_close, &swallowed);
        c = fake_client(fake_server()->endpoints, 10000, 4000, NULL);
        t0 = fake_now_ms();
        rv = baton_acquire(c, "job", 0, 0, NULL);
        took = fake_now_ms() - t0;
        print_message("# sent: %s after %" PRId64 " ms: %s\n",
                      baton_errname(rv), took, baton_errmsg(rv));
        assert_int_equal(rv, BATON_ENOANSWER);
        assert_true(took >= 3950);
        assert_non_null(strstr(baton_errmsg(rv), "outcome is unknown"));
        assert_non_null(strstr(baton_errmsg(rv), fake_server()->addr[1]));
        assert_non_null(strstr(baton_errmsg(rv), "without answering"));
        /* A QUERY never gets out: it fails with the next pass, after at
         * most the longest pause between passes (1.5 s). */
        t0 = fake_now_ms();
        rv = baton_holder(c, "job", &h);
        took = fake_now_ms() - t0;
        print_message("# never sent: %s after %" PRId64 " ms: %s\n",
                      baton_errname(rv), took, baton_errmsg(rv));
        assert_int_equal(rv, BATON_ECONNECT);
        assert_true(took < 2500);
        assert_non_null(strstr(baton_errmsg(rv), fake_server()->addr[0]));
        assert_non_null(strstr(baton_errmsg(rv), fake_server()->addr[1]));
        baton_client_destroy(c);
}

/* The cluster says the session expired: it is over for good. Its locks
 * are reported lost, a release of them is refused without a word to the
 * cluster, and the next acquire opens a NEW session. */
static atomic_int states[8];
static atomic_int n_states;
static atomic_int lost;
static atomic_uint_fast64_t lost_token;

static void on_session(baton_client *c, int state, void *data)
{
        int i = atomic_fetch_add(&n_states, 1);

        (void)c;
        (void)data;
        if (i < 8) {
                atomic_store(&states[i], state);
        }
}

static void on_lost(baton_client *c, const char *name, uint64_t token,
                    void *data)
{
        (void)c;
        (void)data;
        if (strcmp(name, "job") == 0) {
                atomic_store(&lost_token, token);
        }
        atomic_fetch_add(&lost, 1);
}

static int keepalive_expired(struct fake *f, const struct fake_frame *fr)
{
        if (fr->h.type == PROTO_KEEPALIVE) {
                fake_status(f, fr, BATON_EEXPIRED);
                return 1;
        }
        return 0;
}

static void expired_for_good(void **state)
{
        struct baton_options o;
        baton_client *c;
        uint64_t t1 = 0, t2 = 0;
        struct fake_frame open1, open2, acq2;
        unsigned from = 0, releases;
        int64_t deadline;

        (void)state;
        atomic_store(&n_states, 0);
        atomic_store(&lost, 0);
        baton_options_init(&o);
        o.on_session = on_session;
        o.on_lock_lost = on_lost;
        fake_set_hook(keepalive_expired, NULL);
        c = fake_client(fake_server()->endpoints, 900, 2000,
                        &o); /* keepalive every 300 ms */
        assert_int_equal(baton_acquire(c, "job", 0, 0, &t1), 0);
        assert_int_equal(baton_acquire(c, "other", 0, 0, NULL), 0);
        deadline = fake_now_ms() + FAKE_WAIT_MS;
        while (atomic_load(&lost) < 2 && fake_now_ms() < deadline) {
                struct timespec ts = {0, 10 * 1000000};
                nanosleep(&ts, NULL);
        }
        assert_int_equal(atomic_load(&lost), 2);
        assert_int_equal(atomic_load(&lost_token), t1);
        assert_int_equal(baton_session_state(c), BATON_SESSION_EXPIRED);
        assert_int_equal(baton_session_remaining_ms(c), 0);
        assert_true(atomic_load(&n_states) >= 2);
        assert_int_equal(atomic_load(&states[0]), BATON_SESSION_LIVE);
        assert_int_equal(atomic_load(&states[atomic_load(&n_states) - 1]),
                         BATON_SESSION_EXPIRED);
        releases = fake_count_frames(PROTO_COMMAND, COMMAND_RELEASE);
        assert_int_equal(baton_release(c, "job", 0, t1), BATON_EEXPIRED);
        assert_int_equal(fake_count_frames(PROTO_COMMAND, COMMAND_RELEASE),
                         releases);
        /* A new session for the next acquire. */
        fake_set_hook(NULL, NULL);
        assert_int_equal(baton_acquire(c, "job", 0, 0, &t2), 0);
        open1 = fake_wait_frame(&from, PROTO_COMMAND, COMMAND_OPEN);
        open2 = fake_wait_frame(&from, PROTO_COMMAND, COMMAND_OPEN);
        acq2 = fake_wait_frame(&from, PROTO_COMMAND, COMMAND_ACQUIRE);
        assert_true(open1.k.nonce != open2.k.nonce);
        assert_true(acq2.k.session != 0);
        assert_int_equal(baton_session_state(c), BATON_SESSION_LIVE);
        assert_true(t2 > t1);
        baton_client_destroy(c);
}

/* A server of an earlier version: a header flag it does not know is an
 * ERROR, and it closes the connection. */
static int old_server(struct fake *f, const struct fake_frame *fr)
{
        uint8_t out[300];

        if (fr->h.type == PROTO_KEEPALIVE && fr->h.flags != 0) {
                fake_send(f, fr->conn, out,
                          proto_write_error(out, sizeof out, fr->h.id,
                                            BATON_EMALFORMED, "bad flags"));
                fake_close_conn(f, fr->conn);
                return 1;
        }
        return 0;
}

/* Keepalives ask for the count of revoked grants; a server that refuses
 * the flag gets plain ones from then on, and the session lives on. */
static void keepalive_to_old_server(void **state)
{
        baton_client *c;
        unsigned asked = 0, plain = 0;
        int64_t deadline = fake_now_ms() + FAKE_WAIT_MS;

        (void)state;
        fake_set_hook(old_server, NULL);
        c = fake_client(fake_server()->endpoints, 900, 2000,
                        NULL); /* keepalive every 300 ms */
        assert_int_equal(baton_acquire(c, "job", 0, 0, NULL), 0);
        while (plain < 3 && fake_now_ms() < deadline) {
                struct timespec ts = {0, 20 * 1000000};
                nanosleep(&ts, NULL);
                pthread_mutex_lock(&fake_server()->mu);
                asked = plain = 0;
                for (unsigned i = 0; i < fake_server()->n_log; i++) {
                        if (fake_server()->log[i].h.type == PROTO_KEEPALIVE) {
                                asked += fake_server()->log[i].h.flags != 0;
                                plain += fake_server()->log[i].h.flags == 0;
                        }
                }
                pthread_mutex_unlock(&fake_server()->mu);
        }
        assert_int_equal(asked, 1);
        assert_true(plain >= 3);
        assert_int_equal(baton_session_state(c), BATON_SESSION_LIVE);
        baton_client_destroy(c);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup(bad_arguments, fake_reset),
            cmocka_unit_test(fence),
            cmocka_unit_test_setup(transfer_reports_the_winner, fake_reset),
            cmocka_unit_test_setup(unknown_resent_same_bytes, fake_reset),
            cmocka_unit_test_setup(not_leader_followed, fake_reset),
            cmocka_unit_test_setup(late_grant_released, fake_reset),
            cmocka_unit_test_setup(wait_withdrawn, fake_reset),
            cmocka_unit_test_setup(election_ridden_out, fake_reset),
            cmocka_unit_test_setup(silent_node_abandoned, fake_reset),
            cmocka_unit_test_setup(sent_then_nodes_gone, fake_reset),
            cmocka_unit_test_setup(expired_for_good, fake_reset),
            cmocka_unit_test_setup(keepalive_to_old_server, fake_reset),
        };

        return cmocka_run_group_tests_name("wire", tests, fake_up, fake_down);
}
