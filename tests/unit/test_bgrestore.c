/*
 * Restores on a worker thread (src/server/snap/bgrestore.h, raftfsm's
 * RAFTFSM_RESTORE_THREAD): a follower that restores a snapshot this way
 * and keeps applying entries meanwhile must end in exactly the state, and
 * report exactly the events, of a replica that applied everything inline.
 *
 * Each replica is a raftfsm with a struct raft of its own standing in for
 * libraft (tests/lib/replica.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <raft.h>

#include "../../include/baton.h"
#include "../../src/fsm/lockfsm.h"
#include "../../src/proto/command.h"
#include "../../src/server/snap/bgrestore.h"
#include "../../src/server/raft/raftfsm.h"
#include "../../src/server/snap/snapphase.h"
#include "../../src/server/snap/snaptail.h"
#include "../lib/replica.h"

/* Every replica here records its events, to compare them. */
static struct replica *recording(enum raftfsm_restore_mode mode)
{
        struct replica *r = replica_new(mode);

        replica_record_events(r);
        return r;
}

/* Apply one command as libraft does: then last_applied moves on. Returns
 * fsm->apply's code; the outcome is in *res when the entry was applied. */
static int apply(struct replica *r, const struct command *c,
                 struct lockfsm_result *res)
{
        uint8_t bytes[512];
        size_t len = command_encode(c, bytes, sizeof bytes);
        void *result = NULL;
        int rv;

        assert_true(len > 0);
        rv = replica_apply_bytes(r, bytes, len, &result);
        if (rv == 0 && res != NULL) {
                *res = ((struct raftfsm_result *)result)->res;
        }
        return rv;
}

/* The workload: step `i` of a deterministic mix of OPENs, contended
 * ACQUIREs (so grants hand over) and RELEASEs, built from the reference
 * replica's outcomes. */
struct load {
        uint64_t sessions[16];
        uint64_t tokens[16];
        unsigned held[16]; /* the lock each token is of */
        unsigned n_sessions;
        uint64_t seq[16];
};

static struct command step(struct load *l, unsigned i, char *name)
{
        struct command c;
        unsigned s;

        memset(&c, 0, sizeof c);
        if (l->n_sessions < 16 && i % 4 == 0) {
                c.type = COMMAND_OPEN;
                c.nonce = 1000 + i;
                c.ttl_ms = 60000;
                return c;
        }
        s = i % (l->n_sessions > 0 ? l->n_sessions : 1);
        snprintf(name, 32, "lock-%u",
                 i % 3 == 2 && l->tokens[s] != 0 ? l->held[s] : i % 5);
        c.session = l->sessions[s];
        c.seq = ++l->seq[s];
        c.ack = c.seq;
        c.owner = l->sessions[s];
        c.name = name;
        c.name_len = (uint8_t)strlen(name);
        if (i % 3 == 2 && l->tokens[s] != 0) {
                c.type = COMMAND_RELEASE;
                c.token = l->tokens[s];
                l->tokens[s] = 0;
        } else {
                c.type = COMMAND_ACQUIRE;
                c.wait_ms = COMMAND_WAIT_FOREVER;
        }
        return c;
}

/* Apply steps [from, to) to the reference `a` and to every replica in
 * `others`; the workload learns from `a`'s outcomes. */
static void run(struct load *l, unsigned from, unsigned to, struct replica *a,
                struct replica **others, unsigned n_others)
{
        unsigned i, k;

        for (i = from; i < to; i++) {
                char name[32];
                struct command c = step(l, i, name);
                struct lockfsm_result res;

                assert_int_equal(apply(a, &c, &res), 0);
                if (c.type == COMMAND_OPEN && res.status == 0) {
                        l->sessions[l->n_sessions++] = res.session;
                } else if (c.type == COMMAND_ACQUIRE && res.status == 0 &&
                           res.kind == PROTO_KIND_GRANTED) {
                        l->tokens[i % l->n_sessions] = res.token;
                        l->held[i % l->n_sessions] = i % 5;
                }
                for (k = 0; k < n_others; k++) {
                        assert_int_equal(apply(others[k], &c, NULL), 0);
                }
        }
}

/* `a`'s snapshot as libraft hands it to a follower: one buffer from
 * raft_malloc, the parts fsm->snapshot gave back to back. */
static struct raft_buffer snapshot_of(struct replica *a)
{
        struct raft_buffer *bufs = NULL;
        struct raft_buffer whole = {NULL, 0};
        unsigned n = 0, k;
        size_t off = 0;

        assert_int_equal(a->rf.fsm.snapshot(&a->rf.fsm, &bufs, &n), 0);
        for (k = 0; k < n; k++) {
                whole.len += bufs[k].len;
        }
        whole.base = raft_malloc(whole.len);
        assert_non_null(whole.base);
        for (k = 0; k < n; k++) {
                memcpy((char *)whole.base + off, bufs[k].base, bufs[k].len);
                off += bufs[k].len;
        }
        a->rf.fsm.snapshot_finalize(&a->rf.fsm, &bufs, &n);
        return whole;
}

/* Install `a`'s snapshot on `b` as libraft does: restore, then
 * last_applied is the snapshot's index. */
static void install(struct replica *a, struct replica *b)
{
        struct raft_buffer whole = snapshot_of(a);

        assert_int_equal(b->rf.fsm.restore(&b->rf.fsm, &whole), 0);
        b->raft.last_applied = a->raft.last_applied;
}

/* A reference replica `a` applying inline, `n` steps of load on it, and
 * a replica `b` installing its snapshot on the worker. */
static void installed(struct replica **a, struct replica **b, struct load *l,
                      unsigned n)
{
        *a = recording(RAFTFSM_RESTORE_INLINE);
        *b = recording(RAFTFSM_RESTORE_THREAD);
        run(l, 0, n, *a, NULL, 0);
        install(*a, *b);
}

static bool same_state(struct replica *a, struct replica *b)
{
        void *x, *y;
        size_t xl, yl;
        bool same;

        assert_int_equal(lockfsm_snapshot(raftfsm_lockfsm(&a->rf), &x, &xl), 0);
        assert_int_equal(lockfsm_snapshot(raftfsm_lockfsm(&b->rf), &y, &yl), 0);
        same = xl == yl && memcmp(x, y, xl) == 0;
        raft_free(x);
        raft_free(y);
        return same;
}

/* The events `b` reported from its event `from_b` on are `a`'s from
 * `from_a` on. */
static void same_events(const struct replica *a, unsigned from_a,
                        const struct replica *b, unsigned from_b)
{
        unsigned k;

        assert_int_equal(a->n_ev - from_a, b->n_ev - from_b);
        assert_true(a->n_ev - from_a > 0);
        for (k = 0; k < a->n_ev - from_a; k++) {
                assert_memory_equal(&a->ev[from_a + k], &b->ev[from_b + k],
                                    sizeof a->ev[0]);
        }
}

/* A follower restores on the worker and queues what it applies meanwhile,
 * reporting nothing; adopted, it has the reference's state and reports
 * the queued entries' events, in order. */
static void test_follower_queues_then_adopts(void **state)
{
        struct replica *a = recording(RAFTFSM_RESTORE_INLINE);
        struct replica *b = recording(RAFTFSM_RESTORE_THREAD);
        struct raft_buffer *bufs = NULL;
        struct load l = {0};
        unsigned n = 0, a_mark, b_mark;

        (void)state;
        run(&l, 0, 40, a, &b, 1);
        run(&l, 40, 200, a, NULL, 0); /* b falls behind */
        install(a, b);
        assert_true(raftfsm_restoring(&b->rf));
        a_mark = a->n_ev;
        b_mark = b->n_ev;
        run(&l, 200, 300, a, &b, 1);
        assert_true(raftfsm_restoring(&b->rf));
        assert_int_equal(b->n_ev, b_mark); /* nothing reported yet */
        assert_int_equal(b->rf.fsm.snapshot(&b->rf.fsm, &bufs, &n), RAFT_BUSY);

        assert_int_equal(raftfsm_adopt(&b->rf, true), 0);
        assert_false(raftfsm_restoring(&b->rf));
        same_events(a, a_mark, b, b_mark);
        assert_true(same_state(a, b));
        assert_int_equal(lockfsm_last_index(raftfsm_lockfsm(&b->rf)),
                         b->raft.last_applied);
        /* And it goes on applying inline, and snapshots again. */
        run(&l, 300, 340, a, &b, 1);
        assert_true(same_state(a, b));
        assert_int_equal(b->rf.fsm.snapshot(&b->rf.fsm, &bufs, &n), 0);
        b->rf.fsm.snapshot_finalize(&b->rf.fsm, &bufs, &n);
        assert_int_equal(b->n_failed, 0);
        replica_free(a);
        replica_free(b);
}

/* With a snapshot threshold, each node plans its next snapshot at its own
 * phase (src/server/snap/snapphase.h): from the start, after a snapshot it took
 * and after one it installed, raft's threshold reaches the next index at
 * that phase, never more than the threshold away. */
static void test_snapshots_at_each_nodes_phase(void **state)
{
        struct replica *a = recording(RAFTFSM_RESTORE_INLINE);
        struct replica *b = recording(RAFTFSM_RESTORE_INLINE);
        struct raft_buffer whole;
        struct load l = {0};
        const uint32_t th = 64;

        (void)state;
        a->raft.id = 1;
        b->raft.id = 2;
        raftfsm_set_snapshots(&a->rf, SNAPIMAGE_INLINE, th, NULL);
        raftfsm_set_snapshots(&b->rf, SNAPIMAGE_INLINE, th, NULL);
        assert_int_equal(a->rf.snaps.gap, snapphase_of(1, th));
        assert_int_equal(b->rf.snaps.gap, snapphase_of(2, th));
        assert_int_not_equal(a->rf.snaps.gap, b->rf.snaps.gap);
        run(&l, 0, 100, a, NULL, 0);
        whole = snapshot_of(a); /* at 100 */
        assert_int_equal((100 + a->rf.snaps.gap) % th, snapphase_of(1, th));
        assert_true(a->rf.snaps.gap >= 1 && a->rf.snaps.gap <= th);
        assert_int_equal(b->rf.fsm.restore(&b->rf.fsm, &whole), 0);
        assert_int_equal((100 + b->rf.snaps.gap) % th, snapphase_of(2, th));
        assert_true(b->rf.snaps.gap >= 1 && b->rf.snaps.gap <= th);
        replica_free(a);
        replica_free(b);
}

/* Adopting without waiting applies the queue a batch at a time, however
 * long it grew, and ends with the state and events of waiting for it. */
static void test_drain_in_batches(void **state)
{
        struct replica *a, *b;
        struct load l = {0};
        unsigned a_mark, b_mark, batches = 0;
        uint64_t snap, last, now;
        int rv;

        (void)state;
        installed(&a, &b, &l, 100);
        snap = b->raft.last_applied;
        a_mark = a->n_ev;
        b_mark = b->n_ev;
        run(&l, 100, 100 + 3 * RAFTFSM_DRAIN_BATCH, a, &b, 1);
        last = snap;
        do {
                rv = raftfsm_adopt(&b->rf, false);
                assert_true(rv == 0 || rv == 1);
                now = lockfsm_last_index(raftfsm_lockfsm_nowait(&b->rf));
                if (now >= snap) { /* adopted: counts from the snapshot */
                        assert_true(now - last <= RAFTFSM_DRAIN_BATCH);
                        batches += now > last;
                        last = now;
                }
        } while (rv == 1);
        assert_true(batches >= 3);
        assert_int_equal(last, b->raft.last_applied);
        assert_false(raftfsm_restoring(&b->rf));
        same_events(a, a_mark, b, b_mark);
        assert_true(same_state(a, b));
        replica_free(a);
        replica_free(b);
}

/* Without waiting, adopting answers 1 until the worker is done; a lookup
 * (raftfsm_lockfsm) waits for it. */
static void test_lookup_waits(void **state)
{
        struct replica *a, *b;
        struct load l = {0};
        int rv;

        (void)state;
        installed(&a, &b, &l, 120);
        run(&l, 120, 130, a, &b, 1);
        rv = raftfsm_adopt(&b->rf, false);
        assert_true(rv == 0 || rv == 1);
        assert_true(same_state(a, b)); /* raftfsm_lockfsm() waited */
        assert_false(raftfsm_restoring(&b->rf));
        replica_free(a);
        replica_free(b);
}

/* A leader's applies wait for the restore: its clients need outcomes. */
static void test_leader_waits(void **state)
{
        struct replica *a, *b;
        struct load l = {0};
        struct lockfsm_result ra, rb;
        struct command c;
        char name[32];

        (void)state;
        installed(&a, &b, &l, 150);
        run(&l, 150, 160, a, &b, 1); /* queued as a follower */
        b->raft.state = RAFT_LEADER;
        c = step(&l, 161, name);
        assert_int_equal(apply(a, &c, &ra), 0);
        assert_int_equal(apply(b, &c, &rb), 0);
        assert_false(raftfsm_restoring(&b->rf));
        assert_memory_equal(&ra, &rb, sizeof ra);
        assert_true(same_state(a, b));
        replica_free(a);
        replica_free(b);
}

/* A second snapshot before the first is adopted replaces it, and the
 * entries queued behind the first are dropped (the second holds them). */
static void test_newer_restore_wins(void **state)
{
        struct replica *a, *b;
        struct load l = {0};

        (void)state;
        installed(&a, &b, &l, 100);
        run(&l, 100, 120, a, &b, 1);
        run(&l, 120, 180, a, NULL, 0);
        install(a, b);
        run(&l, 180, 200, a, &b, 1);
        assert_int_equal(raftfsm_adopt(&b->rf, true), 0);
        assert_true(same_state(a, b));
        replica_free(a);
        replica_free(b);
}

/* A snapshot whose container is sound but whose state is not: the worker
 * fails, the failure is reported once, the live state stays what it was,
 * and nothing more is applied or snapshotted. */
static void test_failure_stops_applying(void **state)
{
        struct replica *a = recording(RAFTFSM_RESTORE_INLINE);
        struct replica *b = recording(RAFTFSM_RESTORE_THREAD);
        struct replica *before = recording(RAFTFSM_RESTORE_INLINE);
        struct replica *bs[2] = {b, before};
        struct raft_buffer whole, *bufs = NULL;
        struct load l = {0};
        struct command c;
        char name[32];
        unsigned n = 0;

        (void)state;
        run(&l, 0, 30, a, bs, 2);
        run(&l, 30, 120, a, NULL, 0);
        raftfsm_set_compression(&a->rf, false); /* to break it by hand */
        whole = snapshot_of(a);
        /* Past the directory: the state's version byte and beyond. */
        memset((char *)whole.base + whole.len / 2, 0xff, whole.len / 4);
        assert_int_equal(b->rf.fsm.restore(&b->rf.fsm, &whole), 0);
        b->raft.last_applied = a->raft.last_applied;
        run(&l, 120, 125, a, &b, 1);
        assert_int_equal(raftfsm_adopt(&b->rf, true), BATON_ECORRUPT);
        assert_int_equal(b->n_failed, 1);
        assert_non_null(strstr(b->why, "restore snapshot of"));
        assert_true(same_state(before, b));
        c = step(&l, 126, name);
        assert_int_equal(apply(b, &c, NULL), RAFT_NOMEM);
        assert_int_equal(b->rf.fsm.snapshot(&b->rf.fsm, &bufs, &n), RAFT_BUSY);
        assert_int_equal(raftfsm_adopt(&b->rf, true), BATON_ECORRUPT);
        assert_int_equal(b->n_failed, 1);
        replica_free(a);
        replica_free(b);
        replica_free(before);
}

/* A container that does not open (its image longer than it) is refused
 * at once, as inline, and nothing is left pending. */
static void test_bad_container_refused_at_once(void **state)
{
        struct replica *b = recording(RAFTFSM_RESTORE_THREAD);
        struct raft_buffer buf;

        (void)state;
        buf.len = SNAPTAIL_HEADER_SIZE + 16;
        buf.base = raft_malloc(buf.len);
        assert_non_null(buf.base);
        memset(buf.base, 0, buf.len);
        snaptail_header(buf.base, 10, 12, 1000);
        assert_int_equal(b->rf.fsm.restore(&b->rf.fsm, &buf), RAFT_CORRUPT);
        assert_false(raftfsm_restoring(&b->rf));
        assert_non_null(strstr(raftfsm_errmsg(&b->rf), "corrupt"));
        assert_int_equal(b->n_failed, 0);
        raft_free(buf.base); /* still the caller's: the restore failed */
        replica_free(b);
}

/* Closing with a restore still on the worker, and entries queued, frees
 * everything (the sanitizer build checks). */
static void test_close_while_restoring(void **state)
{
        struct replica *a, *b;
        struct load l = {0};

        (void)state;
        installed(&a, &b, &l, 100);
        run(&l, 100, 110, a, &b, 1);
        assert_true(raftfsm_restoring(&b->rf));
        replica_free(b);
        replica_free(a);
}

/* What the worker's wake-up saw, for test_worker_wakes_the_loop. */
struct wakes {
        atomic_uint n;
        atomic_bool finished_first; /* `finished` already set */
        struct bgrestore *bg;
};

static void count_wake(void *data)
{
        struct wakes *w = data;

        /* The flag itself: bgrestore_finished() also reads `running`,
         * which only the loop's thread may. */
        atomic_store(&w->finished_first, atomic_load(&w->bg->job.finished));
        atomic_fetch_add(&w->n, 1);
}

/* Waits up to 30 s for `n` wake-ups; whether they came. */
static bool woken(struct wakes *w, unsigned n)
{
        struct timespec pause = {0, 1000000};
        int i;

        for (i = 0; i < 30000 && atomic_load(&w->n) < n; i++) {
                nanosleep(&pause, NULL);
        }
        return atomic_load(&w->n) == n;
}

/* The worker wakes whoever waits once per restore, after the restore is
 * done, so the loop needs no polling: it finds nothing left to decode. */
static void test_worker_wakes_the_loop(void **state)
{
        struct replica *a = recording(RAFTFSM_RESTORE_INLINE);
        struct replica *b = recording(RAFTFSM_RESTORE_THREAD);
        struct wakes w;
        struct load l = {0};

        (void)state;
        atomic_init(&w.n, 0);
        atomic_init(&w.finished_first, false);
        w.bg = &b->rf.bg;
        raftfsm_set_restore_wake(&b->rf, count_wake, &w);
        run(&l, 0, 100, a, NULL, 0);
        install(a, b);
        assert_true(woken(&w, 1));
        assert_true(atomic_load(&w.finished_first));
        assert_false(raftfsm_decoding(&b->rf));
        assert_true(raftfsm_restoring(&b->rf)); /* to adopt, not decode */
        assert_int_equal(raftfsm_adopt(&b->rf, false), 0);
        assert_false(raftfsm_restoring(&b->rf));
        /* A second install, a second wake-up. */
        run(&l, 100, 150, a, NULL, 0);
        install(a, b);
        assert_true(woken(&w, 2));
        assert_int_equal(raftfsm_adopt(&b->rf, true), 0);
        assert_true(same_state(a, b));
        replica_free(a);
        replica_free(b);
}

/* The queue keeps order and bytes across growth and pops. */
static void test_queue_order(void **state)
{
        struct bgrestore q;
        const struct bgrestore_entry *e;
        uint64_t next = 1, expect = 1;
        unsigned round, k;

        (void)state;
        bgrestore_init(&q);
        for (round = 0; round < 50; round++) {
                for (k = 0; k < round % 7 + 3; k++, next++) {
                        assert_int_equal(
                            bgrestore_queue(&q, next, &next, sizeof next), 0);
                }
                for (k = 0; k < round % 5 + 1; k++) {
                        e = bgrestore_peek(&q);
                        if (e == NULL) {
                                break;
                        }
                        assert_int_equal(e->index, expect);
                        assert_int_equal(e->len, sizeof expect);
                        assert_memory_equal(e->buf, &expect, sizeof expect);
                        bgrestore_pop(&q);
                        expect++;
                }
        }
        while ((e = bgrestore_peek(&q)) != NULL) {
                assert_int_equal(e->index, expect++);
                bgrestore_pop(&q);
        }
        assert_int_equal(expect, next);
        bgrestore_close(&q);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_follower_queues_then_adopts),
            cmocka_unit_test(test_snapshots_at_each_nodes_phase),
            cmocka_unit_test(test_drain_in_batches),
            cmocka_unit_test(test_lookup_waits),
            cmocka_unit_test(test_leader_waits),
            cmocka_unit_test(test_newer_restore_wins),
            cmocka_unit_test(test_failure_stops_applying),
            cmocka_unit_test(test_bad_container_refused_at_once),
            cmocka_unit_test(test_close_while_restoring),
            cmocka_unit_test(test_worker_wakes_the_loop),
            cmocka_unit_test(test_queue_order),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
