/*
 * Data of a newer release (docs/operations.md, "Upgrades"): a snapshot, a
 * snapshot container or a log entry in a format newer than this build
 * reads is refused with a message that names the version found and the
 * versions read, and the state is left as it was. A snapshot stops the
 * start (raft_start fails with that message); an entry stops the node
 * (fsm->apply applies nothing from it on, and the failure callback,
 * batond's exit, runs once), where applying it as a malformed command
 * would leave this replica's state other than the newer nodes'.
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

#include <cmocka.h>
#include <raft.h>

#include "../../include/baton.h"
#include "../../src/fsm/entry.h"
#include "../../src/fsm/lockfsm.h"
#include "../../src/fsm/snapshot.h"
#include "../../src/lib/cursor.h"
#include "../../src/proto/command.h"
#include "../../src/server/raft/raftfsm.h"
#include "../../src/server/snap/snaptail.h"
#include "../lib/replica.h"

/* Images are not compressed here, so that tests can edit them by hand. */
static struct replica *uncompressed(enum raftfsm_restore_mode mode)
{
        struct replica *r = replica_new(mode);

        raftfsm_set_compression(&r->rf, false);
        return r;
}

static int apply_bytes(struct replica *r, const void *bytes, size_t len)
{
        return replica_apply_bytes(r, bytes, len, NULL);
}

static size_t open_cmd(uint8_t *out, size_t cap, uint64_t nonce)
{
        struct command c;

        memset(&c, 0, sizeof c);
        c.type = COMMAND_OPEN;
        c.nonce = nonce;
        c.ttl_ms = 60000;
        return command_encode(&c, out, cap);
}

/* A few sessions opened, so the state is not empty. */
static void load(struct replica *r, unsigned n)
{
        uint8_t cmd[128];
        unsigned i;

        for (i = 0; i < n; i++) {
                size_t len = open_cmd(cmd, sizeof cmd, 100 + i);
                assert_true(len > 0);
                assert_int_equal(apply_bytes(r, cmd, len), 0);
        }
}

static uint64_t fnv1a(const uint8_t *p, size_t n)
{
        uint64_t h = 0xcbf29ce484222325ULL;
        size_t i;

        for (i = 0; i < n; i++) {
                h ^= p[i];
                h *= 0x100000001b3ULL;
        }
        return h;
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

/* `a`'s image (plain: the member directory, then the state) as a raft
 * buffer, its state's version set to `version` and its checksum made
 * good again, as a newer release would have written it. */
static struct raft_buffer image_as(struct replica *a, uint16_t version)
{
        struct raft_buffer buf;
        struct rcursor r;
        struct wcursor w;
        uint32_t dir_len;
        uint8_t *state;
        size_t state_len;
        void *out;

        assert_int_equal(raftfsm_encode(&a->rf, &out, &buf.len), 0);
        buf.base = out;
        rcursor_init(&r, buf.base, 4);
        dir_len = rcursor_u32(&r);
        state = (uint8_t *)buf.base + 4 + dir_len;
        state_len = buf.len - 4 - dir_len;
        assert_int_equal(snapshot_peek_version(state, state_len),
                         SNAPSHOT_VERSION);
        wcursor_init(&w, state + 4, 2);
        wcursor_u16(&w, version);
        wcursor_init(&w, state + state_len - 8, 8);
        wcursor_u64(&w, fnv1a(state, state_len - 8));
        return buf;
}

/* The image as this build writes it restores (the hand edit is sound). */
static void test_own_version_restores(void **state)
{
        struct replica *a = uncompressed(RAFTFSM_RESTORE_INLINE);
        struct replica *b = uncompressed(RAFTFSM_RESTORE_INLINE);
        struct raft_buffer buf;

        (void)state;
        load(a, 5);
        buf = image_as(a, SNAPSHOT_VERSION);
        assert_int_equal(b->rf.fsm.restore(&b->rf.fsm, &buf), 0);
        assert_true(same_state(a, b));
        replica_free(a);
        replica_free(b);
}

/* A snapshot of the next format version: refused with both versions
 * named, at start (inline) and from a leader (on the worker), and the
 * state stays what it was. */
static void test_newer_snapshot_refused(void **state)
{
        struct replica *a = uncompressed(RAFTFSM_RESTORE_INLINE);
        struct replica *b = uncompressed(RAFTFSM_RESTORE_INLINE);
        struct replica *c = uncompressed(RAFTFSM_RESTORE_THREAD);
        struct replica *empty = uncompressed(RAFTFSM_RESTORE_INLINE);
        struct raft_buffer buf;
        char want[128];

        (void)state;
        load(a, 5);
        snprintf(want, sizeof want,
                 "it is in snapshot format version %d, and this batond (%s) "
                 "reads versions 1 to %d",
                 SNAPSHOT_VERSION + 1, PACKAGE_VERSION, SNAPSHOT_VERSION);
        buf = image_as(a, SNAPSHOT_VERSION + 1);
        assert_int_equal(b->rf.fsm.restore(&b->rf.fsm, &buf), RAFT_CORRUPT);
        assert_non_null(strstr(raftfsm_errmsg(&b->rf), want));
        assert_non_null(strstr(raftfsm_errmsg(&b->rf), "newer Baton release"));
        assert_true(same_state(empty, b));
        /* Still the caller's buffer: raft frees it. Now on the worker. */
        assert_int_equal(c->rf.fsm.restore(&c->rf.fsm, &buf), 0);
        assert_int_equal(raftfsm_adopt(&c->rf, true), BATON_EVERSION);
        assert_int_equal(c->n_failed, 1);
        assert_non_null(strstr(c->why, want));
        assert_true(same_state(empty, c));
        replica_free(a);
        replica_free(b);
        replica_free(c);
        replica_free(empty);
}

/* A container of the next version: refused at once, naming both; a
 * running node (restores on the worker) says so through the failure
 * callback, as batond stops, instead of waiting behind the snapshot
 * without a word; and it is a newer release's, not damage. */
static void test_newer_container_refused(void **state)
{
        struct replica *b = uncompressed(RAFTFSM_RESTORE_THREAD);
        struct raft_buffer buf;
        struct wcursor w;
        char want[128];

        (void)state;
        buf.len = SNAPTAIL_HEADER_SIZE + 16;
        buf.base = raft_malloc(buf.len);
        assert_non_null(buf.base);
        memset(buf.base, 0, buf.len);
        snaptail_header(buf.base, 10, 10, 16);
        wcursor_init(&w, (uint8_t *)buf.base + 4, 4);
        wcursor_u32(&w, SNAPTAIL_VERSION + 1);
        assert_int_equal(b->rf.fsm.restore(&b->rf.fsm, &buf), RAFT_CORRUPT);
        snprintf(want, sizeof want,
                 "its container is version %d, and this batond (%s) reads "
                 "version %d",
                 SNAPTAIL_VERSION + 1, PACKAGE_VERSION, SNAPTAIL_VERSION);
        assert_non_null(strstr(raftfsm_errmsg(&b->rf), want));
        assert_false(raftfsm_restoring(&b->rf));
        assert_int_equal(b->n_failed, 1);
        assert_non_null(strstr(b->why, want));
        assert_non_null(strstr(b->why, "cannot apply past a snapshot"));
        assert_true(raftfsm_refused_newer(&b->rf));
        /* Damage instead (a bad magic past the header): not newer, and
         * refused at once as before (test_bgrestore). */
        wcursor_init(&w, (uint8_t *)buf.base + 4, 4);
        wcursor_u32(&w, SNAPTAIL_VERSION);
        memset((uint8_t *)buf.base + SNAPTAIL_HEADER_SIZE, 0xff, 16);
        assert_int_equal(b->rf.fsm.restore(&b->rf.fsm, &buf), RAFT_CORRUPT);
        assert_false(raftfsm_refused_newer(&b->rf));
        assert_int_equal(b->n_failed, 1);
        raft_free(buf.base);
        replica_free(b);
}

/* A container whose tail holds an entry of a newer command format. */
static void test_newer_tail_entry_refused(void **state)
{
        struct replica *a = uncompressed(RAFTFSM_RESTORE_INLINE);
        struct replica *b = uncompressed(RAFTFSM_RESTORE_INLINE);
        struct replica *empty = uncompressed(RAFTFSM_RESTORE_INLINE);
        struct raft_buffer image, buf;
        uint8_t cmd[128];
        size_t len = open_cmd(cmd, sizeof cmd, 900);
        struct wcursor w;
        uint8_t *p;
        char want[128];

        (void)state;
        load(a, 3);
        image = image_as(a, SNAPSHOT_VERSION);
        cmd[0] = COMMAND_VERSION + 1;
        buf.len = SNAPTAIL_HEADER_SIZE + image.len + 12 + len;
        buf.base = raft_malloc(buf.len);
        assert_non_null(buf.base);
        p = buf.base;
        snaptail_header(p, 3, 4, image.len);
        memcpy(p + SNAPTAIL_HEADER_SIZE, image.base, image.len);
        wcursor_init(&w, p + SNAPTAIL_HEADER_SIZE + image.len, 12);
        wcursor_u64(&w, 4);
        wcursor_u32(&w, (uint32_t)len);
        memcpy(p + SNAPTAIL_HEADER_SIZE + image.len + 12, cmd, len);
        snaptail_seal(
            p, snaptail_crc(0, p + SNAPTAIL_HEADER_SIZE + image.len, 12 + len));
        raft_free(image.base);
        assert_int_equal(b->rf.fsm.restore(&b->rf.fsm, &buf), RAFT_CORRUPT);
        snprintf(want, sizeof want,
                 "its entry 4 is in command format version %d, and this "
                 "batond (%s) reads versions 1 to %d",
                 COMMAND_VERSION + 1, PACKAGE_VERSION, COMMAND_VERSION);
        assert_non_null(strstr(raftfsm_errmsg(&b->rf), want));
        assert_true(same_state(empty, b));
        raft_free(buf.base);
        replica_free(a);
        replica_free(b);
        replica_free(empty);
}

/* An entry of a newer command format, alone or inside a batch this build
 * reads: the node reports it once and applies nothing from there on. */
static void test_newer_entry_stops(void **state)
{
        uint8_t cmd[128], batch[256];
        struct replica *r, *ref;
        struct entry_writer w;
        size_t len, n;
        char want[128];
        int k;

        (void)state;
        snprintf(want, sizeof want,
                 "is in command format version %d, and this batond (%s) "
                 "reads versions %d to %d",
                 COMMAND_VERSION + 1, PACKAGE_VERSION, COMMAND_VERSION_MIN,
                 COMMAND_VERSION);
        for (k = 0; k < 2; k++) {
                r = uncompressed(RAFTFSM_RESTORE_THREAD);
                ref = uncompressed(RAFTFSM_RESTORE_INLINE);
                load(r, 2);
                load(ref, 2);
                len = open_cmd(cmd, sizeof cmd, 500);
                cmd[0] = COMMAND_VERSION + 1;
                if (k == 0) {
                        assert_int_equal(apply_bytes(r, cmd, len), RAFT_NOMEM);
                } else {
                        entry_writer_init(&w, batch, sizeof batch, 1);
                        assert_true(entry_writer_add(&w, cmd, len));
                        n = entry_writer_finish(&w);
                        assert_int_equal(entry_max_version(batch, n),
                                         COMMAND_VERSION + 1);
                        assert_int_equal(apply_bytes(r, batch, n), RAFT_NOMEM);
                }
                assert_int_equal(r->n_failed, 1);
                assert_non_null(strstr(r->why, "log entry 3 "));
                assert_non_null(strstr(r->why, want));
                assert_non_null(strstr(raftfsm_errmsg(&r->rf), want));
                /* Nothing more, not even an entry this build reads. */
                len = open_cmd(cmd, sizeof cmd, 501);
                assert_int_equal(apply_bytes(r, cmd, len), RAFT_NOMEM);
                assert_int_equal(r->n_failed, 1);
                assert_true(same_state(ref, r));
                replica_free(r);
                replica_free(ref);
        }
}

/* What this build writes it reads: entries of every command version it
 * knows are applied. */
static void test_known_versions_apply(void **state)
{
        struct replica *r = uncompressed(RAFTFSM_RESTORE_THREAD);
        uint8_t cmd[128];
        size_t len = open_cmd(cmd, sizeof cmd, 7);

        (void)state;
        assert_int_equal(entry_max_version(cmd, len), 2);
        assert_int_equal(apply_bytes(r, cmd, len), 0);
        assert_int_equal(r->n_failed, 0);
        assert_int_equal(entry_max_version(cmd, 0), 0);
        replica_free(r);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_own_version_restores),
            cmocka_unit_test(test_newer_snapshot_refused),
            cmocka_unit_test(test_newer_container_refused),
            cmocka_unit_test(test_newer_tail_entry_refused),
            cmocka_unit_test(test_newer_entry_stops),
            cmocka_unit_test(test_known_versions_apply),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
