/*
 * libbaton's session against a scripted fake server (fake.h), as
 * test_wire: a grant whose answer was lost found again after BATON_ESEQ
 * (exclusive, shared, a semaphore's permits), and the lease counted from
 * the send of OPEN, not from its answer. Cases wait for frames with
 * deadlines, never bare sleeps.
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

/*
 * The connection drops while a blocking ACQUIRE waits, and the cluster has
 * meanwhile forgotten its outcome: the retry is answered BATON_ESEQ. The
 * library CANCELs that wait (CANCELLED: it still waited) and asks again
 * under a new seq, which is granted.
 */
static int eseq_script(struct fake *f, const struct fake_frame *fr)
{
        int *step = f->data;

        if (fr->h.type != PROTO_COMMAND || fr->k.type == COMMAND_OPEN) {
                return 0;
        }
        if (fr->k.type == COMMAND_ACQUIRE && *step == 0) {
                *step = 1;
                fake_close_conn(f, fr->conn); /* lost, unanswered */
                return 1;
        }
        if (fr->k.type == COMMAND_ACQUIRE && *step == 1) {
                *step = 2;
                fake_status(f, fr, BATON_ESEQ);
                return 1;
        }
        return 0;
}

static void eseq_recovered(void **state)
{
        static int step;
        baton_client *c;
        struct fake_frame a1, a2, cancel, a3;
        uint64_t token = 0;
        unsigned from = 0;

        (void)state;
        step = 0;
        fake_set_hook(eseq_script, &step);
        c = fake_client(fake_server()->endpoints, 10000, 2000, NULL);
        assert_int_equal(baton_acquire(c, "job", 0, 1000, &token), 0);
        a1 = fake_wait_frame(&from, PROTO_COMMAND, COMMAND_ACQUIRE);
        a2 = fake_wait_frame(&from, PROTO_COMMAND, COMMAND_ACQUIRE);
        cancel = fake_wait_frame(&from, PROTO_COMMAND, COMMAND_CANCEL);
        a3 = fake_wait_frame(&from, PROTO_COMMAND, COMMAND_ACQUIRE);
        assert_memory_equal(a1.body, a2.body, a1.h.length);
        assert_int_equal(cancel.k.target, a1.k.seq);
        assert_true(a3.k.seq > cancel.k.seq);
        assert_true(a3.k.wait_ms <= 1000);
        assert_true(token > 1000);
        baton_client_destroy(c);
}

/* The script's common part when an ACQUIRE's grant is forgotten: the
 * first ACQUIRE is granted but its answer lost with the connection, the
 * retry is answered BATON_ESEQ, the CANCEL finds no wait. 0 (not a command
 * to script) or 1 (answered), or -1: the caller answers `fr`. */
static int forgotten_grant(struct fake *f, const struct fake_frame *fr,
                           int *step)
{
        if (fr->h.type != PROTO_COMMAND || fr->k.type == COMMAND_OPEN) {
                return 0;
        }
        if (fr->k.type == COMMAND_ACQUIRE && *step < 2) {
                if ((*step)++ == 0) {
                        fake_close_conn(f, fr->conn); /* granted, unanswered */
                } else {
                        fake_status(f, fr, BATON_ESEQ);
                }
                return 1;
        }
        if (fr->k.type == COMMAND_CANCEL) {
                fake_status(f, fr, BATON_ENOTWAITING); /* the grant won */
                return 1;
        }
        return -1;
}

/*
 * The same for a reader, whose forgotten ACQUIRE was granted: CANCEL finds
 * no wait, and since QUERY names one holder of many, a try-acquire of the
 * read lock asks. REENTERED with two holds: the forgotten ACQUIRE was
 * granted, the try's hold is released, and the call returns the grant.
 */
static int eseq_shared_script(struct fake *f, const struct fake_frame *fr)
{
        int *step = f->data;
        struct proto_result r;

        int rv = forgotten_grant(f, fr, step);

        if (rv >= 0) {
                return rv;
        }
        memset(&r, 0, sizeof r);
        r.session = fr->k.session;
        r.owner = fr->k.owner;
        r.token = 77;
        r.kind = fr->k.type == COMMAND_ACQUIRE ? PROTO_KIND_REENTERED
                                               : PROTO_KIND_RELEASED;
        r.count = fr->k.type == COMMAND_ACQUIRE ? 2 : 1;
        fake_result(f, fr, &r);
        return 1;
}

static void eseq_shared_recovered(void **state)
{
        static int step;
        baton_client *c;
        struct fake_frame a1, try, rel;
        uint64_t token = 0;
        unsigned from = 0;

        (void)state;
        step = 0;
        fake_set_hook(eseq_shared_script, &step);
        c = fake_client(fake_server()->endpoints, 10000, 2000, NULL);
        assert_int_equal(baton_acquire_shared(c, "job", 0, 1000, &token), 0);
        assert_int_equal(token, 77);
        a1 = fake_wait_frame(&from, PROTO_COMMAND, COMMAND_ACQUIRE);
        assert_int_equal(a1.k.mode, COMMAND_MODE_SHARED);
        (void)fake_wait_frame(&from, PROTO_COMMAND, COMMAND_ACQUIRE);
        (void)fake_wait_frame(&from, PROTO_COMMAND, COMMAND_CANCEL);
        try = fake_wait_frame(&from, PROTO_COMMAND, COMMAND_ACQUIRE);
        assert_int_equal(try.k.mode, COMMAND_MODE_SHARED);
        assert_int_equal(try.k.wait_ms, COMMAND_WAIT_TRY);
        rel = fake_wait_frame(&from, PROTO_COMMAND, COMMAND_RELEASE);
        assert_int_equal(rel.k.token, 77);
        assert_true(rel.k.seq > try.k.seq);
        baton_client_destroy(c);
}

/*
 * The same for a semaphore's permits: CANCEL finds no wait, and the
 * try-acquire of the same permits is refused BATON_EHELD with the grant's
 * token: the forgotten ACQUIRE was granted, and the call returns it.
 */
static int eseq_permits_script(struct fake *f, const struct fake_frame *fr)
{
        int *step = f->data;
        struct proto_result r;

        int rv = forgotten_grant(f, fr, step);

        if (rv >= 0) {
                return rv;
        }
        memset(&r, 0, sizeof r);
        r.status = BATON_EHELD; /* the try: held already, by this grant */
        r.session = fr->k.session;
        r.owner = fr->k.owner;
        r.token = 78;
        r.count = 1;
        fake_result(f, fr, &r);
        return 1;
}

static void eseq_permits_recovered(void **state)
{
        static int step;
        baton_client *c;
        struct fake_frame a1, try;
        uint64_t token = 0;
        unsigned from = 0;

        (void)state;
        step = 0;
        fake_set_hook(eseq_permits_script, &step);
        c = fake_client(fake_server()->endpoints, 10000, 2000, NULL);
        assert_int_equal(baton_sem_acquire(c, "pool", 3, 2, 0, 1000, &token),
                         0);
        assert_int_equal(token, 78);
        a1 = fake_wait_frame(&from, PROTO_COMMAND, COMMAND_ACQUIRE);
        assert_int_equal(a1.k.mode, COMMAND_MODE_SEMAPHORE);
        (void)fake_wait_frame(&from, PROTO_COMMAND, COMMAND_ACQUIRE);
        (void)fake_wait_frame(&from, PROTO_COMMAND, COMMAND_CANCEL);
        try = fake_wait_frame(&from, PROTO_COMMAND, COMMAND_ACQUIRE);
        assert_int_equal(try.k.wait_ms, COMMAND_WAIT_TRY);
        assert_int_equal(try.k.permits, 2);
        assert_int_equal(try.k.limit, 3);
        baton_client_destroy(c);
}

/* The lease is dated from the SEND of the OPEN: an answer that took
 * 300 ms leaves 300 ms less. */
static int slow_open(struct fake *f, const struct fake_frame *fr)
{
        (void)f;
        if (fr->h.type == PROTO_COMMAND && fr->k.type == COMMAND_OPEN) {
                struct timespec ts = {0, 300 * 1000000};
                nanosleep(&ts, NULL); /* the fake server is slow */
        }
        return 0;
}

static void lease_from_send(void **state)
{
        baton_client *c;
        int64_t left;

        (void)state;
        fake_set_hook(slow_open, NULL);
        c = fake_client(fake_server()->endpoints, 5000, 2000, NULL);
        assert_int_equal(baton_acquire(c, "job", 0, 0, NULL), 0);
        left = baton_session_remaining_ms(c);
        print_message("# lease left: %" PRId64 " ms of 5000 - 500\n", left);
        assert_true(left > 0);
        assert_true(left <= 5000 - 500 - 300);
        baton_client_destroy(c);
}

/* The CLOSE goes unanswered. */
static int close_unanswered(struct fake *f, const struct fake_frame *fr)
{
        (void)f;
        return fr->h.type == PROTO_COMMAND && fr->k.type == COMMAND_CLOSE;
}

static void lost_one(baton_client *c, const char *name, uint64_t token,
                     void *data)
{
        (void)c;
        (void)name;
        (void)token;
        ++*(int *)data;
}

/*
 * baton_session_close() that the cluster does not answer: the handle gives
 * the session up all the same (state EXPIRED, its lock reported lost, no
 * keepalive sent for it again), so that the cluster frees the lock when
 * the TTL runs out; the call says the cluster was not told.
 */
static void close_unanswered_gives_up(void **state)
{
        struct baton_options o;
        baton_client *c;
        struct timespec ts = {0, 800 * 1000000};
        unsigned keepalives;
        int lost = 0;

        (void)state;
        baton_options_init(&o);
        o.on_lock_lost = lost_one;
        o.data = &lost;
        fake_set_hook(close_unanswered, NULL);
        c = fake_client(fake_server()->endpoints, 1500, 300, &o);
        assert_int_equal(baton_acquire(c, "job", 0, 0, NULL), 0);
        assert_int_equal(baton_session_close(c), BATON_ENOANSWER);
        assert_int_equal(baton_session_state(c), BATON_SESSION_EXPIRED);
        keepalives = fake_count_frames(PROTO_KEEPALIVE, 0);
        nanosleep(&ts, NULL); /* over TTL/3: a keepalive would be due */
        assert_int_equal(fake_count_frames(PROTO_KEEPALIVE, 0), keepalives);
        assert_int_equal(lost, 1);
        assert_int_equal(baton_session_close(c), BATON_ENOSESSION);
        baton_client_destroy(c);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup(eseq_recovered, fake_reset),
            cmocka_unit_test_setup(eseq_shared_recovered, fake_reset),
            cmocka_unit_test_setup(eseq_permits_recovered, fake_reset),
            cmocka_unit_test_setup(lease_from_send, fake_reset),
            cmocka_unit_test_setup(close_unanswered_gives_up, fake_reset),
        };

        return cmocka_run_group_tests_name("wire_session", tests, fake_up,
                                           fake_down);
}
