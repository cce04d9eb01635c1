/* Unit tests for the pure parts of batond's full-disk watch: raft_uv's
 * trace lines about failed writes, the episodes made of them (one start,
 * one end), the cause a file system's room gives (diskfull.c), and how
 * long a leader's oldest uncommitted entry has waited (commitage.c). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "../../src/server/raft/commitage.h"
#include "../../src/server/disk/diskfull.h"

/* libraft 0.22.1's lines, as its uv backend formats them. */
static void classifies_raft_lines(void **state)
{
        enum diskfull_kind kind = DISKFULL_N_KINDS;
        char what[DISKFULL_WHAT_MAX];

        (void)state;
        assert_int_equal(diskfull_classify("retry creating segment open-4",
                                           &kind, what, sizeof what),
                         DISKFULL_LINE_FAILED);
        assert_int_equal(kind, DISKFULL_SEGMENT);
        assert_string_equal(what, "open-4");
        assert_int_equal(diskfull_classify("completed creation of open-4",
                                           &kind, what, sizeof what),
                         DISKFULL_LINE_WORKED);
        assert_int_equal(kind, DISKFULL_SEGMENT);
        assert_string_equal(what, "open-4");
        assert_int_equal(
            diskfull_classify("retry failed write (write: no space left on "
                              "device)",
                              &kind, what, sizeof what),
            DISKFULL_LINE_FAILED);
        assert_int_equal(kind, DISKFULL_ENTRIES);
        assert_string_equal(what, "write: no space left on device");
        assert_int_equal(
            diskfull_classify("retry snapshot write", &kind, what, sizeof what),
            DISKFULL_LINE_FAILED);
        assert_int_equal(kind, DISKFULL_SNAPSHOT);
        assert_string_equal(what, "");
        /* Lines about writes that are no failure, and everything else. */
        assert_int_equal(diskfull_classify("create open segment open-5", &kind,
                                           what, sizeof what),
                         DISKFULL_LINE_OTHER);
        assert_int_equal(
            diskfull_classify("enqueue 1 entries", &kind, what, sizeof what),
            DISKFULL_LINE_OTHER);
        assert_int_equal(diskfull_classify("", &kind, what, sizeof what),
                         DISKFULL_LINE_OTHER);
        /* A long name is cut to the room given, NUL-terminated. */
        assert_int_equal(diskfull_classify("retry creating segment "
                                           "open-123456789",
                                           &kind, what, 7),
                         DISKFULL_LINE_FAILED);
        assert_string_equal(what, "open-1");
        assert_string_equal(diskfull_kind_name(DISKFULL_SEGMENT), "segment");
        assert_string_equal(diskfull_kind_name(DISKFULL_ENTRIES), "entries");
        assert_string_equal(diskfull_kind_name(DISKFULL_SNAPSHOT), "snapshot");
}

/* Retries every second while the disk is full: one start, however many
 * failures; the segment that works at last ends it at once. */
static void one_episode_per_full_disk(void **state)
{
        struct diskfull d;
        uint64_t t;

        (void)state;
        diskfull_init(&d, 3000);
        assert_false(d.on);
        assert_int_equal(diskfull_tick(&d, 500), DISKFULL_SAME);
        assert_int_equal(diskfull_failed(&d, DISKFULL_SEGMENT, "open-1", 1000),
                         DISKFULL_BEGAN);
        assert_true(d.on);
        assert_int_equal(d.since_ms, 1000);
        assert_string_equal(d.first_what, "open-1");
        for (t = 2000; t <= 60000; t += 1000) {
                assert_int_equal(
                    diskfull_failed(&d, DISKFULL_SEGMENT, "open-1", t),
                    DISKFULL_SAME);
                assert_int_equal(diskfull_tick(&d, t + 500), DISKFULL_SAME);
        }
        assert_int_equal(d.episode_errors, 60);
        assert_int_equal(d.errors[DISKFULL_SEGMENT], 60);
        assert_int_equal(d.episodes, 1);
        assert_int_equal(diskfull_worked(&d, DISKFULL_SEGMENT, 61000),
                         DISKFULL_ENDED);
        assert_false(d.on);
        assert_int_equal(d.ended_ms, 61000);
        /* Nothing more until the next failure, which starts another. */
        assert_int_equal(diskfull_tick(&d, 100000), DISKFULL_SAME);
        assert_int_equal(diskfull_worked(&d, DISKFULL_SEGMENT, 100001),
                         DISKFULL_SAME);
        assert_int_equal(
            diskfull_failed(&d, DISKFULL_SEGMENT, "open-9", 200000),
            DISKFULL_BEGAN);
        assert_int_equal(d.episodes, 2);
        assert_int_equal(d.episode_errors, 1);
        assert_string_equal(d.first_what, "open-9");
        assert_int_equal(diskfull_errors(&d), 61);
}

/* A write that says nothing when it works (a snapshot's) ends with
 * silence longer than quiet_ms; a kind that still fails keeps it on. */
static void silence_ends_what_says_nothing(void **state)
{
        struct diskfull d;

        (void)state;
        diskfull_init(&d, 3000);
        assert_int_equal(diskfull_failed(&d, DISKFULL_SNAPSHOT, "", 1000),
                         DISKFULL_BEGAN);
        assert_int_equal(diskfull_failed(&d, DISKFULL_SEGMENT, "open-2", 1500),
                         DISKFULL_SAME);
        assert_int_equal(diskfull_failed(&d, DISKFULL_SNAPSHOT, "", 2000),
                         DISKFULL_SAME);
        /* Exactly quiet_ms of silence is not yet more than it. */
        assert_int_equal(diskfull_tick(&d, 5000), DISKFULL_SAME);
        assert_true(d.failing[DISKFULL_SNAPSHOT]);
        /* The segment works; the snapshot is still in its quiet time. */
        assert_int_equal(diskfull_worked(&d, DISKFULL_SEGMENT, 5001),
                         DISKFULL_SAME);
        assert_true(d.on);
        assert_int_equal(diskfull_tick(&d, 5001), DISKFULL_ENDED);
        assert_false(d.on);
        assert_int_equal(d.episode_errors, 3);
        assert_int_equal(d.first_kind, DISKFULL_SNAPSHOT);
        /* A clock read before the last failure ends nothing. */
        assert_int_equal(diskfull_failed(&d, DISKFULL_ENTRIES, "x", 9000),
                         DISKFULL_BEGAN);
        assert_int_equal(diskfull_tick(&d, 8000), DISKFULL_SAME);
        assert_true(d.on);
}

static void causes_from_the_room(void **state)
{
        struct diskfull_space s;

        (void)state;
        memset(&s, 0, sizeof s);
        assert_int_equal(diskfull_cause(&s, 100), 0); /* not sampled */
        s.known = true;
        s.size_bytes = 12u << 20;
        s.free_bytes = 1536u << 10;
        s.free_inodes = 1000;
        assert_int_equal(diskfull_cause(&s, 8u << 20), ENOSPC);
        assert_int_equal(diskfull_cause(&s, 1536u << 10), 0);
        s.free_bytes = 1u << 30;
        assert_int_equal(diskfull_cause(&s, 8u << 20), 0);
        s.free_inodes = 0;
        assert_int_equal(diskfull_cause(&s, 8u << 20), ENOSPC);
        s.free_inodes = UINT64_MAX; /* not counted */
        assert_int_equal(diskfull_cause(&s, 8u << 20), 0);
        s.read_only = true;
        assert_int_equal(diskfull_cause(&s, 8u << 20), EROFS);
}

/* Under load entries wait a round trip each: the age stays small even
 * though some are always pending. */
static void commit_age_under_load(void **state)
{
        struct commitage a;
        uint64_t t, commit = 10, last = 12;

        (void)state;
        commitage_init(&a);
        for (t = 0; t < 10000; t += 5) {
                commitage_observe(&a, t, true, commit, last);
                assert_true(commitage_ms(&a, t) <= 5);
                commit = last; /* what was pending commits */
                last += 3;     /* and more arrives */
        }
        commitage_observe(&a, t, true, last, last);
        assert_int_equal(commitage_ms(&a, t), 0);
        assert_int_equal(commitage_index(&a), 0);
}

/* One entry that does not commit: its age grows from when it was first
 * seen, whatever arrives after it; it ends when the commit index passes
 * it, or when the node stops leading. */
static void commit_age_of_a_stuck_entry(void **state)
{
        struct commitage a;

        (void)state;
        commitage_init(&a);
        commitage_observe(&a, 1000, true, 20, 20);
        assert_int_equal(commitage_ms(&a, 1000), 0);
        commitage_observe(&a, 1100, true, 20, 21);
        assert_int_equal(commitage_index(&a), 21);
        commitage_observe(&a, 1200, true, 20, 40);
        assert_int_equal(commitage_ms(&a, 1500), 400);
        assert_int_equal(commitage_index(&a), 21);
        /* Half of them commit: the next waiting one is followed anew. */
        commitage_observe(&a, 1600, true, 30, 40);
        assert_int_equal(commitage_index(&a), 31);
        assert_int_equal(commitage_ms(&a, 1600), 0);
        assert_int_equal(commitage_ms(&a, 2600), 1000);
        /* A follower follows nothing, and starts afresh when it leads. */
        commitage_observe(&a, 2700, false, 30, 40);
        assert_int_equal(commitage_ms(&a, 5000), 0);
        commitage_observe(&a, 6000, true, 30, 41);
        assert_int_equal(commitage_index(&a), 31);
        assert_int_equal(commitage_ms(&a, 6100), 100);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(classifies_raft_lines),
            cmocka_unit_test(one_episode_per_full_disk),
            cmocka_unit_test(silence_ends_what_says_nothing),
            cmocka_unit_test(causes_from_the_room),
            cmocka_unit_test(commit_age_under_load),
            cmocka_unit_test(commit_age_of_a_stuck_entry),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
