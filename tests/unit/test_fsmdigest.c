/*
 * The state digests (src/server/raft/fsmdigest.h): the DIGEST command's
 * encoding; a node of a release before DIGEST (which answers it as an
 * unknown command) keeps the same state as one that knows it; replicas
 * that applied the same entries have the same digests, a restored one
 * too, and a replica whose state differs counts a mismatch and is
 * diverged; a digest made in a forked child is compared when it arrives.
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
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <raft.h>

#include "../../include/baton.h"
#include "../../src/fsm/lockfsm.h"
#include "../../src/proto/command.h"
#include "../../src/server/raft/fsmdigest.h"
#include "../../src/server/raft/raftfsm.h"
#include "../lib/replica.h"

/* A replica whose digests are made every `every` entries in `mode`. */
struct digested {
        struct replica *r;
        struct fsmdigest d;
};

static void digested_init(struct digested *x, enum snapimage_mode mode,
                          uint32_t every)
{
        x->r = replica_new(RAFTFSM_RESTORE_INLINE);
        fsmdigest_init(&x->d, &x->r->rf, mode, every);
        raftfsm_set_applied_cb(&x->r->rf, fsmdigest_applied, &x->d);
}

static void digested_free(struct digested *x)
{
        fsmdigest_close(&x->d);
        replica_free(x->r);
}

static void apply_cmd(struct replica *r, const struct command *c)
{
        uint8_t buf[COMMAND_MAX_SIZE];
        size_t len = command_encode(c, buf, sizeof buf);

        assert_true(len > 0);
        assert_int_equal(replica_apply_bytes(r, buf, len, NULL), 0);
}

/* OPEN with `nonce`: the session's id is its entry's index. */
static uint64_t open_session(struct replica *r, uint64_t nonce)
{
        struct command c = {.type = COMMAND_OPEN, .nonce = nonce};

        c.ttl_ms = 60000;
        apply_cmd(r, &c);
        return r->raft.last_applied;
}

/* ACQUIRE `name` for (session, owner) with seq `seq`, waiting forever. */
static void acquire(struct replica *r, uint64_t session, uint64_t seq,
                    uint64_t owner, const char *name)
{
        struct command c = {.type = COMMAND_ACQUIRE};

        c.session = session;
        c.seq = seq;
        c.ack = 1;
        c.owner = owner;
        c.wait_ms = COMMAND_WAIT_FOREVER;
        c.name = name;
        c.name_len = (uint8_t)strlen(name);
        apply_cmd(r, &c);
}

static void apply_digest(struct replica *r, uint64_t index, uint64_t digest)
{
        struct command c = {.type = COMMAND_DIGEST};

        c.target = index;
        c.token = digest;
        apply_cmd(r, &c);
}

/* Holders and waiters of a few locks: sessions 1 and 2 hold "a" and "b",
 * session 3 waits for "a". Six entries. */
static void load(struct replica *r)
{
        uint64_t s1 = open_session(r, 11), s2 = open_session(r, 12);
        uint64_t s3 = open_session(r, 13);

        acquire(r, s1, 1, 7, "a");
        acquire(r, s2, 1, 8, "b");
        acquire(r, s3, 1, 9, "a");
}

static void test_command(void **state)
{
        struct command c = {.type = COMMAND_DIGEST}, back;
        uint8_t buf[COMMAND_MAX_SIZE];
        size_t len;

        (void)state;
        c.target = 4096;
        c.token = 0x0123456789abcdefULL;
        len = command_encode(&c, buf, sizeof buf);
        assert_int_equal(len, 24);
        assert_int_equal(buf[0], 3); /* version 3, as every newer command */
        assert_int_equal(buf[1], COMMAND_DIGEST);
        assert_int_equal(command_decode(&back, buf, len), 0);
        assert_int_equal(back.type, COMMAND_DIGEST);
        assert_int_equal(back.target, 4096);
        assert_int_equal(back.token, 0x0123456789abcdefULL);
        assert_string_equal(command_type_name(COMMAND_DIGEST), "DIGEST");
        buf[0] = 2; /* one encoding: version 3 only */
        assert_int_equal(command_decode(&back, buf, len), BATON_EMALFORMED);
}

/* A node that does not know DIGEST answers it as a command of an unknown
 * type: malformed, with a stamp. One that knows it does the same, so the
 * states of a cluster part-way through an upgrade stay the same. */
static void test_old_node_same_state(void **state)
{
        struct replica *now = replica_new(RAFTFSM_RESTORE_INLINE);
        struct replica *old = replica_new(RAFTFSM_RESTORE_INLINE);
        struct command c = {.type = COMMAND_DIGEST, .target = 3, .token = 9};
        struct raftfsm_result *res;
        uint8_t buf[COMMAND_MAX_SIZE];
        size_t len = command_encode(&c, buf, sizeof buf);
        void *a, *b;
        size_t al, bl;

        (void)state;
        load(now);
        load(old);
        assert_int_equal(replica_apply_bytes(now, buf, len, (void **)&res), 0);
        assert_int_equal(res->res.status, BATON_EMALFORMED);
        buf[1] = 99; /* what a release before DIGEST reads: an unknown type */
        assert_int_equal(replica_apply_bytes(old, buf, len, (void **)&res), 0);
        assert_int_equal(res->res.status, BATON_EMALFORMED);
        open_session(now, 14); /* the stamps went on alike */
        open_session(old, 14);
        assert_int_equal(lockfsm_snapshot(raftfsm_lockfsm(&now->rf), &a, &al),
                         0);
        assert_int_equal(lockfsm_snapshot(raftfsm_lockfsm(&old->rf), &b, &bl),
                         0);
        assert_int_equal(al, bl);
        assert_memory_equal(a, b, al);
        lockfsm_snapshot_free(raftfsm_lockfsm(&now->rf), a);
        lockfsm_snapshot_free(raftfsm_lockfsm(&old->rf), b);
        replica_free(now);
        replica_free(old);
}

/* The same entries, the same digests; the leader's digest of index 4 is
 * its state's, handed out once; a DIGEST of an index not made is
 * skipped; a replica whose state differs is diverged. */
static void test_agree_then_differ(void **state)
{
        struct digested a, b;
        uint64_t index, digest, now;

        (void)state;
        digested_init(&a, SNAPIMAGE_INLINE, 4);
        digested_init(&b, SNAPIMAGE_INLINE, 4);
        load(a.r);
        load(b.r);
        open_session(a.r, 20); /* entry 7 */
        open_session(b.r, 20);
        assert_int_equal(a.d.n_made, 1);
        assert_true(fsmdigest_to_propose(&a.d, &index, &digest));
        assert_int_equal(index, 4);
        assert_false(fsmdigest_to_propose(&a.d, &index, &digest));
        apply_digest(a.r, 4, digest); /* entry 8: a digest is made */
        apply_digest(b.r, 4, digest);
        assert_true(fsmdigest_to_propose(&a.d, &index, &digest));
        assert_int_equal(index, 8);
        assert_int_equal(fsmdigest_compute(&a.r->rf, &now), 0);
        assert_int_equal(now, digest); /* nothing applied since 8 */
        apply_digest(a.r, 3, 1);       /* entry 9: no digest of 3 */
        apply_digest(b.r, 3, 1);
        assert_int_equal(b.d.n_checked, 1);
        assert_int_equal(b.d.n_unknown, 1);
        assert_int_equal(b.d.n_mismatch, 0);
        assert_false(b.d.diverged);
        /* Entry 10 differs, 11 and 12 agree: 12's digests differ. */
        open_session(a.r, 30);
        open_session(b.r, 31);
        open_session(a.r, 32);
        open_session(b.r, 32);
        apply_digest(a.r, 8, digest);
        apply_digest(b.r, 8, digest);
        assert_true(fsmdigest_to_propose(&a.d, &index, &digest));
        assert_int_equal(index, 12);
        apply_digest(a.r, 12, digest);
        apply_digest(b.r, 12, digest);
        assert_int_equal(a.d.n_mismatch, 0);
        assert_false(a.d.diverged);
        assert_int_equal(b.d.n_mismatch, 1);
        assert_true(b.d.diverged);
        assert_int_equal(b.d.diverged_index, 12);
        assert_int_equal(b.d.diverged_leader, digest);
        assert_int_equal(b.d.diverged_at, 13);
        assert_true(b.d.diverged_own != digest);
        digested_free(&a);
        digested_free(&b);
}

/* A replica that installed a snapshot has the digests of the one that
 * applied every entry, at the snapshot and after; an index before it is
 * not known. */
static void test_restored_agrees(void **state)
{
        struct digested a, c;
        struct raft_buffer *bufs = NULL, whole;
        uint64_t da, dc, index;
        unsigned n = 0, k;
        size_t off = 0;

        (void)state;
        digested_init(&a, SNAPIMAGE_INLINE, 4);
        digested_init(&c, SNAPIMAGE_INLINE, 4);
        load(a.r);
        open_session(a.r, 20);
        assert_int_equal(a.r->rf.fsm.snapshot(&a.r->rf.fsm, &bufs, &n), 0);
        for (whole.len = 0, k = 0; k < n; k++) {
                whole.len += bufs[k].len;
        }
        whole.base = raft_malloc(whole.len);
        assert_non_null(whole.base);
        for (k = 0; k < n; k++) {
                memcpy((char *)whole.base + off, bufs[k].base, bufs[k].len);
                off += bufs[k].len;
        }
        a.r->rf.fsm.snapshot_finalize(&a.r->rf.fsm, &bufs, &n);
        assert_int_equal(c.r->rf.fsm.restore(&c.r->rf.fsm, &whole), 0);
        c.r->raft.last_applied = a.r->raft.last_applied;
        assert_int_equal(fsmdigest_compute(&a.r->rf, &da), 0);
        assert_int_equal(fsmdigest_compute(&c.r->rf, &dc), 0);
        assert_int_equal(da, dc);
        assert_true(fsmdigest_to_propose(&a.d, &index, &da));
        assert_int_equal(index, 4);
        apply_digest(c.r, 4, da); /* entry 8: before the snapshot */
        apply_digest(a.r, 4, da);
        assert_int_equal(c.d.n_unknown, 1);
        assert_true(fsmdigest_to_propose(&a.d, &index, &da));
        assert_int_equal(index, 8);
        assert_true(fsmdigest_to_propose(&c.d, &index, &dc));
        assert_int_equal(index, 8);
        assert_int_equal(da, dc);
        apply_digest(c.r, 8, da);
        assert_int_equal(c.d.n_checked, 1);
        assert_int_equal(c.d.n_mismatch, 0);
        digested_free(&a);
        digested_free(&c);
}

/* In a forked child: a DIGEST entry that arrives before the child is
 * done is compared when it is. */
static void test_forked_awaited(void **state)
{
        struct digested a, f;
        struct timespec pause = {0, 10 * 1000 * 1000};
        uint64_t index, digest;
        unsigned tries = 0;

        (void)state;
        digested_init(&a, SNAPIMAGE_INLINE, 4);
        digested_init(&f, SNAPIMAGE_FORK, 4);
        load(a.r);
        load(f.r);
        assert_true(fsmdigest_to_propose(&a.d, &index, &digest));
        apply_digest(f.r, 4, digest - 1); /* a wrong one: must be caught */
        while (f.d.n_made == 0 && tries++ < 1000) {
                nanosleep(&pause, NULL);
                fsmdigest_poll(&f.d);
        }
        assert_int_equal(f.d.n_made, 1);
        assert_int_equal(f.d.n_checked, 1);
        assert_int_equal(f.d.n_mismatch, 1);
        assert_int_equal(f.d.diverged_own, digest);
        assert_int_equal(f.d.diverged_leader, digest - 1);
        digested_free(&a);
        digested_free(&f);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_command),
            cmocka_unit_test(test_old_node_same_state),
            cmocka_unit_test(test_agree_then_differ),
            cmocka_unit_test(test_restored_agrees),
            cmocka_unit_test(test_forked_awaited),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
