/* STATUS and STATUS_REPLY with PROTO_FLAG_ALARMS (src/proto/status.h):
 * the alarms tail's exact bytes after the versions, its round trip, and
 * why a reader must ask for it: a reply without the flag is the reply of
 * every earlier release, byte for byte, and a reader that did not ask
 * refuses one that has it. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "../../include/baton.h"
#include "../../src/proto/frame.h"
#include "../../src/proto/proto.h"
#include "../../src/proto/status.h"

#define CAP (PROTO_HEADER_SIZE + 2048)

static const struct proto_versions versions = {{"0.3.0", 5}, 3, 11, 2};

/* One member, and this node diverged at index 100 with an alarm bit no
 * release knows yet besides. */
static void status_in(struct proto_status *st)
{
        memset(st, 0, sizeof *st);
        st->id = 2;
        st->role = 1;
        st->term = 7;
        st->leader_id = 1;
        st->n_members = 1;
        st->members[0].id = 2;
        st->members[0].role = 1;
        st->members[0].raft_address = (struct proto_string){"127.0.0.1:1", 11};
        st->alarms.alarms = PROTO_ALARM_DIVERGED | 0x80000000u;
        st->alarms.diverged_index = 100;
        st->alarms.digest = 0x1102233cbcfb13c2ull;
        st->alarms.leader_digest = 0x514813c6010371bcull;
}

/* Both flags and either alone make a STATUS; nothing else does. */
static void request_flags(void **state)
{
        uint8_t buf[CAP];
        struct proto_header h;
        uint16_t both = PROTO_FLAG_VERSIONS | PROTO_FLAG_ALARMS;

        (void)state;
        assert_int_equal(proto_write_status_request(buf, sizeof buf, 9, both),
                         PROTO_HEADER_SIZE);
        assert_int_equal(proto_header_decode(&h, buf, PROTO_MAX_BODY), 0);
        assert_int_equal(h.flags, both);
        assert_int_equal(
            proto_write_status_request(buf, sizeof buf, 9, PROTO_FLAG_ALARMS),
            PROTO_HEADER_SIZE);
        assert_int_equal(proto_write_status_request(buf, sizeof buf, 9,
                                                    both | PROTO_FLAG_NAMES),
                         0);
        /* Only STATUS and its reply carry it. */
        assert_false(proto_flags_allowed(PROTO_PING, PROTO_FLAG_ALARMS));
        assert_false(proto_flags_allowed(PROTO_QUERY, PROTO_FLAG_ALARMS));
        assert_true(proto_flags_allowed(PROTO_STATUS_REPLY, both));
}

/* The tail's bytes: u32 alarms, u64 index, u64 digest, u64 the leader's,
 * little-endian, after the versions. */
static void tail_exact_bytes(void **state)
{
        static const uint8_t tail[] = {
            0x01, 0x00, 0x00, 0x80,                         /* alarms */
            0x64, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* index 100 */
            0xc2, 0x13, 0xfb, 0xbc, 0x3c, 0x23, 0x02, 0x11, /* digest */
            0xbc, 0x71, 0x03, 0x01, 0xc6, 0x13, 0x48, 0x51, /* leader's */
        };
        uint8_t plain[CAP], buf[CAP];
        struct proto_status st;
        size_t np, n;

        (void)state;
        status_in(&st);
        np = proto_write_status(plain, sizeof plain, 9, PROTO_FLAG_VERSIONS,
                                &st, &versions);
        n = proto_write_status(buf, sizeof buf, 9,
                               PROTO_FLAG_VERSIONS | PROTO_FLAG_ALARMS, &st,
                               &versions);
        assert_true(np > PROTO_HEADER_SIZE);
        assert_int_equal(n, np + sizeof tail);
        /* The same body up to the tail: only the header's length and flags
         * differ. */
        assert_memory_equal(buf + PROTO_HEADER_SIZE, plain + PROTO_HEADER_SIZE,
                            np - PROTO_HEADER_SIZE);
        assert_memory_equal(buf + np, tail, sizeof tail);
        /* Alone, right after the members. */
        np = proto_write_status(plain, sizeof plain, 9, 0, &st, NULL);
        n = proto_write_status(buf, sizeof buf, 9, PROTO_FLAG_ALARMS, &st,
                               NULL);
        assert_int_equal(n, np + sizeof tail);
        assert_memory_equal(buf + np, tail, sizeof tail);
}

static void round_trip(void **state)
{
        uint8_t buf[CAP];
        struct proto_status st, back;
        struct proto_versions v;
        struct proto_header h;
        uint16_t both = PROTO_FLAG_VERSIONS | PROTO_FLAG_ALARMS;
        size_t n;

        (void)state;
        status_in(&st);
        n = proto_write_status(buf, sizeof buf, 9, both, &st, &versions);
        assert_true(n > 0);
        assert_int_equal(proto_header_decode(&h, buf, PROTO_MAX_BODY), 0);
        assert_int_equal(h.flags, both);
        assert_int_equal(proto_read_status(buf + PROTO_HEADER_SIZE, h.length,
                                           h.flags, &back, &v),
                         0);
        /* A bit this release does not know is kept, for newer readers. */
        assert_int_equal(back.alarms.alarms, st.alarms.alarms);
        assert_true(back.alarms.diverged_index == 100);
        assert_true(back.alarms.digest == st.alarms.digest);
        assert_true(back.alarms.leader_digest == st.alarms.leader_digest);
        assert_int_equal(v.snapshot, 11);
        assert_int_equal(back.n_members, 1);
}

/* An older client asks without the flag and reads strictly: it never
 * sees the tail, since the reply has one only when asked; one that got it
 * anyway would refuse the frame. A reply read with the flag must have
 * it. */
static void readers_stay_strict(void **state)
{
        uint8_t with[CAP], without[CAP], before[CAP];
        struct proto_status st, back;
        struct proto_versions v;
        size_t nw, no, nb;

        (void)state;
        status_in(&st);
        nw = proto_write_status(with, sizeof with, 9,
                                PROTO_FLAG_VERSIONS | PROTO_FLAG_ALARMS, &st,
                                &versions);
        no = proto_write_status(without, sizeof without, 9, PROTO_FLAG_VERSIONS,
                                &st, &versions);
        /* Without the flag the alarms are not written: the bytes of a
         * node that has none to tell. */
        memset(&st.alarms, 0, sizeof st.alarms);
        nb = proto_write_status(before, sizeof before, 9, PROTO_FLAG_VERSIONS,
                                &st, &versions);
        assert_int_equal(no, nb);
        assert_memory_equal(without, before, nb);
        assert_int_equal(proto_read_status(with + PROTO_HEADER_SIZE,
                                           nw - PROTO_HEADER_SIZE,
                                           PROTO_FLAG_VERSIONS, &back, &v),
                         BATON_EMALFORMED);
        assert_int_equal(
            proto_read_status(
                without + PROTO_HEADER_SIZE, no - PROTO_HEADER_SIZE,
                PROTO_FLAG_VERSIONS | PROTO_FLAG_ALARMS, &back, &v),
            BATON_EMALFORMED);
        /* Cut inside the tail. */
        assert_int_equal(
            proto_read_status(
                with + PROTO_HEADER_SIZE, nw - PROTO_HEADER_SIZE - 1,
                PROTO_FLAG_VERSIONS | PROTO_FLAG_ALARMS, &back, &v),
            BATON_EMALFORMED);
        assert_int_equal(back.alarms.alarms, 0);
}

/* Into the public record: known only from a node that sent the tail. */
static void exported(void **state)
{
        struct proto_status st;
        struct baton_node_alarms a;

        (void)state;
        status_in(&st);
        memset(&a, 0xff, sizeof a);
        proto_alarms_export(&a, NULL);
        assert_int_equal(a.known, 0);
        assert_int_equal(a.alarms, 0);
        proto_alarms_export(&a, &st.alarms);
        assert_int_equal(a.known, 1);
        assert_true(a.alarms & BATON_ALARM_DIVERGED);
        assert_true(a.diverged_index == 100);
        assert_true(a.digest == 0x1102233cbcfb13c2ull);
        assert_true(a.leader_digest == 0x514813c6010371bcull);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(request_flags),
            cmocka_unit_test(tail_exact_bytes),
            cmocka_unit_test(round_trip),
            cmocka_unit_test(readers_stay_strict),
            cmocka_unit_test(exported),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
