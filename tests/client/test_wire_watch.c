/*
 * libbaton's watches against a scripted fake server (fake.h), as
 * test_wire: a watch resuming from its start after a cut, watches sharing
 * one log, a slow watch cut while a fast one goes on, a cut while opening,
 * a PING answered behind the event stream, and callback watches sharing a
 * handle. Cases wait for frames with deadlines, never bare sleeps.
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

/* WATCH: started at 100:MAX ("now" there), then the connection drops;
 * the second WATCH is answered from where it asks and gets one event of
 * its name and one of another name (both with id 0: for every watch of
 * the connection that wants it). */
static int watch_script(struct fake *f, const struct fake_frame *fr)
{
        struct proto_watch_event e;
        struct proto_result r;
        struct proto_watch w;
        uint8_t out[512];
        int *watches = f->data;

        if (fr->h.type != PROTO_WATCH ||
            proto_read_watch(fr->body, fr->h.length, &w) != 0) {
                return 0;
        }
        memset(&r, 0, sizeof r);
        r.kind = PROTO_KIND_WATCHING;
        r.index = w.from_index != 0 ? w.from_index : 100;
        r.count = w.from_index != 0 ? w.from_ord : UINT32_MAX;
        fake_result(f, fr, &r);
        if ((*watches)++ == 0) {
                fake_close_conn(f, fr->conn);
                return 1;
        }
        memset(&e, 0, sizeof e);
        e.index = 101;
        e.ord = 1;
        e.kind = PROTO_EVENT_GRANTED;
        e.cause = COMMAND_ACQUIRE;
        e.session = 7;
        e.owner = 1;
        e.token = 101;
        e.name = (struct proto_string){"other", 5};
        fake_send(f, fr->conn, out,
                  proto_write_watch_event(out, sizeof out, 0, &e));
        e.ord = 2;
        e.name = (struct proto_string){"job", 3};
        fake_send(f, fr->conn, out,
                  proto_write_watch_event(out, sizeof out, 0, &e));
        return 1;
}

/* A watch from now whose connection drops before any event is sent again
 * from where the server started it, not from "now" on the next node (which
 * would skip what happened in between); an event of id 0 goes to the
 * watches that want it only. */
static void watch_resumes_from_its_start(void **state)
{
        struct baton_event ev;
        baton_client *c;
        baton_watch *w;
        struct proto_watch pw;
        struct fake_frame a, b;
        unsigned from = 0;
        int watches = 0;

        (void)state;
        fake_set_hook(watch_script, &watches);
        c = fake_client(fake_server()->endpoints, 10000, 2000, NULL);
        assert_int_equal(baton_watch_open(c, "job", 0, 0, 0, &w), 0);
        a = fake_wait_frame(&from, PROTO_WATCH, 0);
        b = fake_wait_frame(&from, PROTO_WATCH, 0);
        assert_int_equal(proto_read_watch(a.body, a.h.length, &pw), 0);
        assert_true(pw.from_index == 0);
        assert_int_equal(proto_read_watch(b.body, b.h.length, &pw), 0);
        assert_true(pw.from_index == 100 && pw.from_ord == UINT32_MAX);
        assert_int_equal(baton_watch_next(w, &ev, FAKE_WAIT_MS), 0);
        assert_string_equal(ev.name, "job");
        assert_true(ev.index == 101 && ev.ord == 2);
        assert_int_equal(baton_watch_next(w, &ev, 100), BATON_ETIMEDOUT);
        /* Closed, it tells the server which watch to forget. */
        baton_watch_close(w);
        a = fake_wait_frame(&from, PROTO_UNWATCH, 0);
        assert_int_equal(a.h.length, 8);
        assert_true(a.body[0] == (uint8_t)b.h.id &&
                    a.body[1] == (uint8_t)(b.h.id >> 8));
        baton_client_destroy(c);
}

/* Many events of id 0 in a row, at 1001 + i, of names[i % 3] (i from
 * `first`). */
static const char *const share_names[] = {"a/1", "a/2", "b/1"};

static void send_events(struct fake *f, unsigned conn, unsigned first,
                        unsigned n, bool mixed)
{
        struct proto_watch_event e;
        uint8_t out[512];
        unsigned i;

        memset(&e, 0, sizeof e);
        e.ord = 1;
        e.kind = PROTO_EVENT_GRANTED;
        e.cause = COMMAND_ACQUIRE;
        e.session = 7;
        e.owner = 1;
        for (i = first; i < first + n; i++) {
                const char *name = mixed ? share_names[i % 3] : "job";
                e.index = 1001 + i;
                e.token = i;
                e.name = (struct proto_string){name, (uint8_t)strlen(name)};
                fake_send(f, conn, out,
                          proto_write_watch_event(out, sizeof out, 0, &e));
        }
}

/* Every WATCH is started at 1000 ("now"); once `want` watches are, the
 * events follow: `n` of them; the next WATCH brings `later` more, and an
 * UNWATCH 10 more after those. */
struct share {
        unsigned watches, want, n;
        bool mixed;
        unsigned later;
};

/* Answer a WATCH: started at index 1000, "now" (no events before it). */
static void start_now(struct fake *f, const struct fake_frame *fr)
{
        struct proto_result r;

        memset(&r, 0, sizeof r);
        r.kind = PROTO_KIND_WATCHING;
        r.index = 1000;
        r.count = UINT32_MAX;
        fake_result(f, fr, &r);
}

static int share_script(struct fake *f, const struct fake_frame *fr)
{
        struct share *sh = f->data;
        struct proto_watch w;

        if (fr->h.type == PROTO_UNWATCH) {
                send_events(f, fr->conn, sh->n + sh->later, 10, sh->mixed);
                return 0; /* and the default answers it */
        }
        if (fr->h.type != PROTO_WATCH ||
            proto_read_watch(fr->body, fr->h.length, &w) != 0) {
                return 0;
        }
        start_now(f, fr);
        if (++sh->watches == sh->want) {
                send_events(f, fr->conn, 0, sh->n, sh->mixed);
        } else if (sh->watches == sh->want + 1) {
                send_events(f, fr->conn, sh->n, sh->later, sh->mixed);
        }
        return 1;
}

/* Read up to `n` events of `w`: each must be the next at or after `*next`
 * that `pick` accepts. */
static unsigned read_own(baton_watch *w, unsigned n, unsigned *next,
                         unsigned end, bool (*pick)(unsigned i))
{
        struct baton_event ev;
        unsigned got = 0;

        while (got < n && *next < end) {
                while (*next < end && !pick(*next)) {
                        (*next)++;
                }
                if (*next == end) {
                        break;
                }
                assert_int_equal(baton_watch_next(w, &ev, FAKE_WAIT_MS), 0);
                assert_true(ev.index == 1001 + *next);
                assert_string_equal(ev.name, share_names[*next % 3]);
                assert_true(ev.token == *next && ev.session == 7);
                (*next)++;
                got++;
        }
        return got;
}

static bool pick_a1(unsigned i)
{
        return i % 3 == 0;
}
static bool pick_a(unsigned i)
{
        return i % 3 != 2;
}
static bool pick_all(unsigned i)
{
        (void)i;
        return true;
}

/* Three watches of one handle, of a name, a prefix and every name, fed
 * one stream of id 0 and each read at its own speed: each sees exactly its
 * events, in order, and nothing more. */
static void watches_share_one_log(void **state)
{
        struct share sh = {0, 3, 3000, true, 0};
        struct baton_event ev;
        baton_watch *a1, *a, *all;
        unsigned na1 = 0, na = 0, nall = 0;
        unsigned got[3] = {0, 0, 0};
        baton_client *c;

        (void)state;
        fake_set_hook(share_script, &sh);
        c = fake_client(fake_server()->endpoints, 10000, 2000, NULL);
        assert_int_equal(baton_watch_open(c, "a/1", 0, 0, 0, &a1), 0);
        assert_int_equal(
            baton_watch_open(c, "a/", BATON_WATCH_PREFIX, 0, 0, &a), 0);
        assert_int_equal(
            baton_watch_open(c, "", BATON_WATCH_PREFIX, 0, 0, &all), 0);
        while (na1 < sh.n || na < sh.n || nall < sh.n) {
                got[0] += read_own(a1, 1, &na1, sh.n, pick_a1);
                got[1] += read_own(a, 2, &na, sh.n, pick_a);
                got[2] += read_own(all, 5, &nall, sh.n, pick_all);
        }
        assert_int_equal(got[0], 1000);
        assert_int_equal(got[1], 2000);
        assert_int_equal(got[2], 3000);
        assert_int_equal(baton_watch_next(a1, &ev, 50), BATON_ETIMEDOUT);
        assert_int_equal(baton_watch_next(a, &ev, 50), BATON_ETIMEDOUT);
        assert_int_equal(baton_watch_next(all, &ev, 50), BATON_ETIMEDOUT);
        baton_watch_close(a1);
        baton_watch_close(a);
        baton_watch_close(all);
        baton_client_destroy(c);
}

/* Read the events of `w` from the `first`-th of the fake's stream to
 * before the `end`-th: each must be the next one. */
static void read_in_order(baton_watch *w, unsigned first, unsigned end)
{
        struct baton_event ev;

        for (unsigned i = first; i < end; i++) {
                assert_int_equal(baton_watch_next(w, &ev, FAKE_WAIT_MS), 0);
                assert_true(ev.index == 1001 + i);
        }
}

/* Two watches of one name on one handle: the one never read falls more
 * than 65,536 events behind and ends with BATON_ESLOW after exactly its
 * first 65,536 (and tells the server), while the one read keeps going.
 * The events come in two bursts, 65,536 and then (brought by a third
 * WATCH, of another name) 1,000 once the fast one has read the first:
 * however slowly this thread runs, only the slow one passes the bound. */
static void slow_watch_cut_fast_goes_on(void **state)
{
        struct share sh = {0, 2, 65536, false, 1000};
        baton_watch *other;
        struct baton_event ev;
        baton_watch *fast, *slow;
        unsigned from = 0, i;
        baton_client *c;
        struct fake_frame u;

        (void)state;
        fake_set_hook(share_script, &sh);
        c = fake_client(fake_server()->endpoints, 10000, 2000, NULL);
        assert_int_equal(baton_watch_open(c, "job", 0, 0, 0, &slow), 0);
        assert_int_equal(baton_watch_open(c, "job", 0, 0, 0, &fast), 0);
        read_in_order(fast, 0, sh.n);
        assert_int_equal(baton_watch_open(c, "other", 0, 0, 0, &other), 0);
        read_in_order(fast, sh.n, sh.n + sh.later);
        for (i = 0; i < 65536; i++) {
                assert_int_equal(baton_watch_next(slow, &ev, 0), 0);
                assert_true(ev.index == 1001 + i);
                assert_string_equal(ev.name, "job");
        }
        assert_int_equal(baton_watch_next(slow, &ev, 0), BATON_ESLOW);
        assert_int_equal(baton_watch_next(slow, &ev, 0), BATON_ESLOW);
        u = fake_wait_frame(&from, PROTO_UNWATCH, 0);
        assert_int_equal(u.h.length, 8);
        /* Its UNWATCH brought 10 more: the fast one has them, and the
         * other name's watch none of them. */
        read_in_order(fast, sh.n + sh.later, sh.n + sh.later + 10);
        assert_int_equal(baton_watch_next(other, &ev, 0), BATON_ETIMEDOUT);
        baton_watch_close(other);
        baton_watch_close(slow);
        baton_watch_close(fast);
        baton_client_destroy(c);
}

/* A watch whose start brings more than 65,536 events at once: whether
 * the library cuts it off before or after baton_watch_open() has
 * returned (the two threads race, and under the sanitizers the first
 * order was a use of the freed WATCH), the open succeeds, and a caller
 * that reads nothing until the cut reads exactly the first 65,536, then
 * BATON_ESLOW. */
static void watch_cut_while_opening(void **state)
{
        struct share sh = {0, 1, 65536 + 100, false, 0};
        struct baton_event ev;
        unsigned from = 0;
        baton_watch *w;
        baton_client *c;
        struct fake_frame u;

        (void)state;
        fake_set_hook(share_script, &sh);
        c = fake_client(fake_server()->endpoints, 10000, 2000, NULL);
        assert_int_equal(baton_watch_open(c, "job", 0, 0, 0, &w), 0);
        /* Nothing read until the library has cut it off and said so. */
        u = fake_wait_frame(&from, PROTO_UNWATCH, 0);
        assert_int_equal(u.h.length, 8);
        read_in_order(w, 0, 65536);
        assert_int_equal(baton_watch_next(w, &ev, FAKE_WAIT_MS), BATON_ESLOW);
        baton_watch_close(w);
        baton_client_destroy(c);
}

/* The first heartbeat PING (the connection's second: the first greets the
 * node before any request goes out) is answered only after a stream of
 * STREAM_EVENTS events, STREAM_GAP_MS apart: the answer comes long after
 * the heartbeat's timeout, but frames never stop coming. */
#define STREAM_EVENTS 25
#define STREAM_GAP_MS 40
_Static_assert(STREAM_EVENTS *STREAM_GAP_MS > 3 * 300,
               "the stream outlasts a 300 ms heartbeat three times over");

static int stream_script(struct fake *f, const struct fake_frame *fr)
{
        unsigned *pings = f->data;
        struct timespec gap = {0, STREAM_GAP_MS * 1000000};

        if (fr->h.type == PROTO_WATCH) {
                start_now(f, fr);
                return 1;
        }
        if (fr->h.type == PROTO_PING && (*pings)++ == 1) {
                for (unsigned i = 0; i < STREAM_EVENTS; i++) {
                        send_events(f, fr->conn, i, 1, false);
                        nanosleep(&gap, NULL);
                }
        }
        return 0; /* and the default answers it */
}

/* A server that answers a PING behind a stream of frames (a burst of
 * events to a slow reader) is not silent: the connection is kept, and the
 * watch is not started again on another. */
static void ping_answered_behind_stream(void **state)
{
        unsigned pings = 0;
        baton_watch *w;
        baton_client *c;

        (void)state;
        fake_set_hook(stream_script, &pings);
        c = fake_client(fake_server()->endpoints, 1500, 5000,
                        NULL); /* heartbeat 300 ms */
        assert_int_equal(baton_watch_open(c, "job", 0, 0, 0, &w), 0);
        read_in_order(w, 0, STREAM_EVENTS);
        assert_int_equal(fake_count_frames(PROTO_WATCH, 0), 1);
        baton_watch_close(w);
        baton_client_destroy(c);
}

/* What one callback watch of shared_callbacks() saw. */
struct counted {
        pthread_mutex_t mu;
        unsigned n, bad, stop_at; /* stop_at: closes itself there (0: never) */
        int end;
        baton_watch *self;
};

static void on_counted(void *data, const struct baton_event *ev, int status)
{
        struct counted *k = data;
        baton_watch *close_me = NULL;

        pthread_mutex_lock(&k->mu);
        if (ev == NULL) {
                k->end = status;
        } else {
                /* In order, each the shared copy of the one sent. */
                if (ev->index != 1001 + k->n || ev->token != k->n ||
                    strcmp(ev->name, "job") != 0 || ev->value[0] != '\0') {
                        k->bad++;
                }
                if (++k->n == k->stop_at) {
                        close_me = k->self;
                }
        }
        pthread_mutex_unlock(&k->mu);
        baton_watch_close(close_me); /* from inside its own callback */
}

static unsigned counted(struct counted *k)
{
        unsigned n;

        pthread_mutex_lock(&k->mu);
        n = k->n;
        pthread_mutex_unlock(&k->mu);
        return n;
}

/* Two callback watches of one name on one handle, lent the same events in
 * bursts: each is told every one in order; the one that closes itself
 * inside its callback at the 100th, in the middle of a burst, is told
 * nothing more while the other goes on to the end (and the 10 that
 * follow its UNWATCH). */
static void shared_callbacks(void **state)
{
        struct share sh = {0, 2, 5000, false, 0};
        struct counted quits = {PTHREAD_MUTEX_INITIALIZER, 0, 0, 100, 0, NULL};
        struct counted stays = {PTHREAD_MUTEX_INITIALIZER, 0, 0, 0, 0, NULL};
        baton_watch *w;
        baton_client *c;
        int64_t deadline;

        (void)state;
        fake_set_hook(share_script, &sh);
        c = fake_client(fake_server()->endpoints, 10000, 2000, NULL);
        pthread_mutex_lock(&quits.mu);
        assert_int_equal(
            baton_watch_open_cb(c, "job", 0, 0, 0, on_counted, &quits, &w), 0);
        quits.self = w;
        pthread_mutex_unlock(&quits.mu);
        assert_int_equal(
            baton_watch_open_cb(c, "job", 0, 0, 0, on_counted, &stays, &w), 0);
        deadline = fake_now_ms() + FAKE_WAIT_MS;
        /* The UNWATCH of the one that quits brings 10 more. */
        while (counted(&stays) < sh.n + 10 && fake_now_ms() < deadline) {
                struct timespec ts = {0, 5 * 1000000};
                nanosleep(&ts, NULL);
        }
        assert_int_equal(counted(&stays), sh.n + 10);
        assert_int_equal(counted(&quits), 100);
        assert_int_equal(stays.bad + quits.bad, 0);
        assert_int_equal(quits.end, 0); /* closed: told no end */
        baton_watch_close(w);
        baton_client_destroy(c);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup(watch_resumes_from_its_start, fake_reset),
            cmocka_unit_test_setup(watches_share_one_log, fake_reset),
            cmocka_unit_test_setup(slow_watch_cut_fast_goes_on, fake_reset),
            cmocka_unit_test_setup(shared_callbacks, fake_reset),
            cmocka_unit_test_setup(watch_cut_while_opening, fake_reset),
            cmocka_unit_test_setup(ping_answered_behind_stream, fake_reset),
        };

        return cmocka_run_group_tests_name("wire_watch", tests, fake_up,
                                           fake_down);
}
