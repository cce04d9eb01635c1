/* Unit tests for the binary encoding of lock state machine commands. */
/* Round trips, sizes and the encoder's limits, and type names are here;
 * the exact layout and padding are in test_command_layout.c, decode errors
 * and command_validate in test_command_decode.c, fuzzing in
 * test_command_fuzz.c, and what they check against in cmdspec.c. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../include/baton.h"
#include "../../src/proto/command.h"

#include "cmdspec.h"
#include "test_command_decode.h"
#include "test_command_fuzz.h"
#include "test_command_layout.h"

/* --- Round trips ---------------------------------------------------------- */

/* `in` survives encode -> decode, with its strings borrowed from the
 * buffer at the places the header gives. */
static void check_round_trip(const struct command *in)
{
        struct spec_layout l = layout_of(in);
        struct command out;
        uint8_t buf[COMMAND_MAX_SIZE];
        uint8_t *copy;
        size_t n = command_encode(in, buf, sizeof buf);

        assert_int_equal(n, l.len);
        assert_int_equal(n % 8, 0);
        assert_int_equal(decode_exact(&out, buf, n, &copy), 0);
        assert_same(&out, in);
        /* The strings are borrowed from the buffer, not copied. */
        if (in->name_len > 0) {
                assert_ptr_equal(out.name, copy + l.name_at + 1);
        }
        if (in->address_len > 0) {
                assert_ptr_equal(out.address, copy + l.address_at + 1);
        }
        if (!(carried(in->type) & T_NAME)) {
                assert_null(out.name);
        }
        if (!(carried(in->type) & T_ADDRESS)) {
                assert_null(out.address);
        }
        free(copy);
}

/* --- MULTI ---------------------------------------------------------------- */

/* A MULTI of `n` names "n0", "n1", ... (`n` up to 40), the odd ones
 * shared, encoded into `buf`; its length. */
static size_t multi_bytes(unsigned n, uint8_t *buf, size_t cap)
{
        uint8_t list[COMMAND_MULTI_MAX * 8 * 4];
        struct command c = {.type = COMMAND_MULTI,
                            .session = 7,
                            .seq = 9,
                            .ack = 8,
                            .owner = 3,
                            .wait_ms = 1500,
                            .n_names = (uint8_t)n,
                            .list = list};
        size_t len = 0;

        for (unsigned i = 0; i < n; i++) {
                char name[8];
                size_t k = (size_t)snprintf(name, sizeof name, "n%u", i);
                assert_int_equal(command_list_add(list, sizeof list, &len,
                                                  (uint8_t)(i % 2), name, k),
                                 0);
        }
        c.list_len = (uint16_t)len;
        return command_encode(&c, buf, cap);
}

/* A MULTI round-trips with its list borrowed, its first name as `name`;
 * every other length, count and version is refused. */
static void multi_round_trip_and_strictness(void **state)
{
        uint8_t buf[COMMAND_ANY_MAX_SIZE + 8];
        struct command c;
        const char *name;
        uint8_t mode, len;
        size_t n, at = 0;
        unsigned i = 0;

        (void)state;
        n = multi_bytes(3, buf, sizeof buf);
        assert_int_equal(n % 8, 0);
        assert_int_equal(buf[0], 3); /* version 3 only */
        assert_int_equal(command_decode(&c, buf, n), 0);
        assert_int_equal(c.type, COMMAND_MULTI);
        assert_int_equal(c.session, 7);
        assert_int_equal(c.seq, 9);
        assert_int_equal(c.ack, 8);
        assert_int_equal(c.owner, 3);
        assert_int_equal(c.wait_ms, 1500);
        assert_int_equal(c.n_names, 3);
        assert_int_equal(c.name_len, 2);
        assert_memory_equal(c.name, "n0", 2);
        while (command_list_next(&c, &at, &mode, &name, &len)) {
                assert_int_equal(mode, i % 2);
                assert_int_equal(len, 2);
                assert_int_equal(name[1], '0' + (char)i);
                assert_ptr_equal(name, c.list + at - 2); /* borrowed */
                i++;
        }
        assert_int_equal(i, 3);
        /* Every truncation and extension is malformed. */
        for (size_t k = 0; k < n; k++) {
                assert_int_not_equal(command_decode(&c, buf, k), 0);
        }
        memset(buf + n, 0, 8);
        assert_int_equal(command_decode(&c, buf, n + 8), BATON_EMALFORMED);
        /* A count that disagrees with the list, and version 2. */
        buf[4 + 8 * 4 + 4] = 2;
        assert_int_equal(command_decode(&c, buf, n), BATON_EMALFORMED);
        buf[4 + 8 * 4 + 4] = 0;
        assert_int_equal(command_decode(&c, buf, n), BATON_EMALFORMED);
        buf[4 + 8 * 4 + 4] = 3;
        buf[0] = 2;
        assert_int_equal(command_decode(&c, buf, n), BATON_EMALFORMED);
        buf[0] = 3;
        /* A name with a NUL. */
        buf[4 + 8 * 4 + 4 + 1 + 2 + 1] = '\0';
        assert_int_equal(command_decode(&c, buf, n), BATON_ENAME);
        /* Sixteen names fit; seventeen do not encode. */
        assert_int_not_equal(multi_bytes(COMMAND_MULTI_MAX, buf, sizeof buf),
                             0);
        assert_int_equal(multi_bytes(COMMAND_MULTI_MAX + 1, buf, sizeof buf),
                         0);
        assert_int_equal(multi_bytes(0, buf, sizeof buf), 0);
}

/* A CLOCK: version 3, its time and nothing else, 16 bytes; any other
 * length or version is refused. */
static void clock_round_trip(void **state)
{
        struct command in = {.type = COMMAND_CLOCK,
                             .time_ms = 0x0102030405060708ULL};
        uint8_t buf[24];
        struct command out;
        size_t n = command_encode(&in, buf, sizeof buf);

        (void)state;
        assert_int_equal(n, 16);
        assert_int_equal(buf[0], 3);
        assert_int_equal(command_decode(&out, buf, n), 0);
        assert_int_equal(out.type, COMMAND_CLOCK);
        assert_true(out.time_ms == in.time_ms);
        assert_int_equal(command_decode(&out, buf, 8), BATON_EMALFORMED);
        memset(buf + 16, 0, 8);
        assert_int_equal(command_decode(&out, buf, 24), BATON_EMALFORMED);
        buf[0] = 2;
        assert_int_equal(command_decode(&out, buf, n), BATON_EMALFORMED);
}

/* Every type survives encode -> decode with all the fields it carries. */
static void round_trip_every_type(void **state)
{
        struct command removal = member_removal();
        size_t i;

        (void)state;
        for (i = 0; i < N_TYPES; i++) {
                struct command in = only_carried(full(all_types[i]));

                check_round_trip(&in);
        }
        check_round_trip(&removal);
}

/* Fields a type does not carry are neither encoded nor decoded. */
static void uncarried_fields_decode_as_zero(void **state)
{
        size_t i;

        (void)state;
        for (i = 0; i < N_TYPES; i++) {
                struct command in = full(all_types[i]);
                struct command trimmed = only_carried(in);
                struct command out;
                uint8_t a[COMMAND_MAX_SIZE], b[COMMAND_MAX_SIZE];
                uint8_t *copy;
                size_t na = command_encode(&in, a, sizeof a);
                size_t nb = command_encode(&trimmed, b, sizeof b);

                /* The extra fields change nothing on the wire. */
                assert_true(na > 0);
                assert_int_equal(na, nb);
                assert_memory_equal(a, b, na);
                assert_int_equal(decode_exact(&out, a, na, &copy), 0);
                assert_same(&out, &trimmed);
                if (!(carried(in.type) & T_NAME)) {
                        assert_null(out.name);
                }
                if (!(carried(in.type) & T_ADDRESS)) {
                        assert_null(out.address);
                }
                free(copy);
        }
}

/* Extreme values of every integer field round-trip unchanged. */
static void round_trip_extreme_values(void **state)
{
        static const uint64_t v64[] = {0, 1, UINT64_MAX, UINT64_MAX - 1,
                                       (uint64_t)1 << 63};
        static const uint32_t v32[] = {0, 1, COMMAND_WAIT_TRY,
                                       COMMAND_WAIT_FOREVER, 0x80000000U};
        size_t i, k;

        (void)state;
        for (i = 0; i < N_TYPES; i++) {
                for (k = 0; k < sizeof v64 / sizeof v64[0]; k++) {
                        struct command in = full(all_types[i]);
                        struct command out;
                        uint8_t buf[COMMAND_MAX_SIZE];
                        uint8_t *copy;
                        size_t n;

                        in.session = in.seq = in.ack = in.owner = v64[k];
                        in.token = in.target = in.nonce = v64[k];
                        in.ttl_ms = in.wait_ms = v32[k];
                        in.mode = (uint8_t)(k % 2);
                        in = only_carried(in);
                        if (in.type == COMMAND_MEMBER &&
                            in.mode == COMMAND_MEMBER_REMOVE) {
                                in.name_len = in.address_len = 0;
                        }
                        if ((in.type == COMMAND_MEMBER ||
                             in.type == COMMAND_EXPIRE_HOLD) &&
                            in.target == 0) {
                                /* Member id 0 is no member, seq 0 no
                                 * ACQUIRE: refused. */
                                uint8_t spec[SPEC_MAX];

                                assert_int_equal(command_validate(&in),
                                                 BATON_EMALFORMED);
                                assert_int_equal(
                                    command_encode(&in, buf, sizeof buf), 0);
                                n = spec_encode(&in, spec);
                                assert_int_equal(decode_bytes(spec, n),
                                                 BATON_EMALFORMED);
                                continue;
                        }
                        n = command_encode(&in, buf, sizeof buf);
                        assert_true(n > 0);
                        assert_int_equal(decode_exact(&out, buf, n, &copy), 0);
                        assert_same(&out, &in);
                        free(copy);
                }
        }
}

/* The three lock modes and both MEMBER modes survive the codec; a
 * semaphore's ACQUIRE with its permits and limit. */
static void round_trip_modes(void **state)
{
        static const struct {
                int type;
                uint8_t mode;
        } cases[] = {
            {COMMAND_ACQUIRE, COMMAND_MODE_EXCLUSIVE},
            {COMMAND_ACQUIRE, COMMAND_MODE_SHARED},
            {COMMAND_ACQUIRE, COMMAND_MODE_SEMAPHORE},
            {COMMAND_MEMBER, COMMAND_MEMBER_SET},
            {COMMAND_MEMBER, COMMAND_MEMBER_REMOVE},
        };
        size_t i;

        (void)state;
        for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
                struct command in = only_carried(full(cases[i].type));
                struct command out;
                uint8_t buf[COMMAND_MAX_SIZE];
                uint8_t *copy;
                size_t n;

                if (cases[i].mode == COMMAND_MEMBER_REMOVE &&
                    in.type == COMMAND_MEMBER) {
                        in = member_removal();
                }
                in.mode = cases[i].mode;
                /* Without a value: a lock's or semaphore's ACQUIRE of
                 * version 2 or 3 (one with a value is version 4, below). */
                in.value = NULL;
                in.value_len = 0;
                if (in.mode == COMMAND_MODE_SEMAPHORE &&
                    in.type == COMMAND_ACQUIRE) {
                        in.permits = 0x01020304;
                        in.limit = 0x05060708;
                }
                n = command_encode(&in, buf, sizeof buf);
                assert_true(n > 0);
                /* In both types mode sits just before the first string,
                 * or before a semaphore's permits and limit. */
                assert_int_equal(
                    buf[layout_of(&in).name_at - 1 - (in.permits ? 8 : 0)],
                    cases[i].mode);
                assert_int_equal(buf[0], in.permits ? 3 : 2);
                assert_int_equal(decode_exact(&out, buf, n, &copy), 0);
                assert_int_equal(out.mode, cases[i].mode);
                assert_int_equal(out.permits, in.permits);
                assert_int_equal(out.limit, in.limit);
                free(copy);
        }
}

/* A grant's data: an ACQUIRE of a lock (or semaphore) with a value is
 * version 4, and only with a value; a SET_VALUE is version 4; neither
 * decodes from another version. */
static void value_on_any_grant(void **state)
{
        static const uint8_t modes[] = {COMMAND_MODE_EXCLUSIVE,
                                        COMMAND_MODE_SHARED,
                                        COMMAND_MODE_SEMAPHORE};
        struct command out;
        uint8_t buf[COMMAND_MAX_SIZE];
        uint8_t *copy;
        size_t n, i;

        (void)state;
        for (i = 0; i < sizeof modes / sizeof modes[0]; i++) {
                struct command in = only_carried(full(COMMAND_ACQUIRE));

                in.mode = modes[i];
                if (in.mode == COMMAND_MODE_SEMAPHORE) {
                        in.permits = 1;
                        in.limit = 3;
                }
                in.value = "10.0.0.7:8080";
                in.value_len = 13;
                n = command_encode(&in, buf, sizeof buf);
                assert_true(n > 0);
                assert_int_equal(buf[0], 4);
                assert_int_equal(decode_exact(&out, buf, n, &copy), 0);
                assert_int_equal(out.value_len, 13);
                assert_memory_equal(out.value, "10.0.0.7:8080", 13);
                free(copy);
                buf[0] = 3; /* one encoding: not as version 3 */
                assert_int_equal(command_decode(&out, buf, n),
                                 BATON_EMALFORMED);
                /* Version 4 with an empty value is not that encoding. */
                in.value_len = 0;
                in.value = NULL;
                n = command_encode(&in, buf, sizeof buf);
                assert_int_equal(buf[0], in.permits ? 3 : 2);
        }
        out = only_carried(full(COMMAND_SET_VALUE));
        n = command_encode(&out, buf, sizeof buf);
        assert_true(n > 0);
        assert_int_equal(buf[0], 4);
        buf[0] = 3;
        assert_int_equal(command_decode(&out, buf, n), BATON_EMALFORMED);
}

/* --- Sizes and the encoder's limits --------------------------------------- */

/* command_size agrees with what command_encode writes, for every length. */
static void size_matches_encode(void **state)
{
        char name[COMMAND_NAME_MAX];
        struct command removal = member_removal();
        uint8_t buf[COMMAND_MAX_SIZE];
        size_t i;
        unsigned len, alen;

        (void)state;
        memset(name, 'n', sizeof name);
        for (i = 0; i < N_TYPES; i++) {
                int type = all_types[i];
                unsigned alo = type == COMMAND_MEMBER ? 1 : 0;
                unsigned ahi = type == COMMAND_MEMBER ? COMMAND_ADDRESS_MAX : 0;

                for (len = name_min(type); len <= name_max(type); len++) {
                        for (alen = alo; alen <= ahi; alen++) {
                                struct command c = only_carried(full(type));
                                size_t size;

                                if (carried(type) & T_NAME) {
                                        c.name = name;
                                        c.name_len = (uint8_t)len;
                                }
                                if (carried(type) & T_ADDRESS) {
                                        c.address = name;
                                        c.address_len = (uint8_t)alen;
                                }
                                size = command_size(&c);
                                assert_true(size > 0);
                                assert_true(size <= COMMAND_MAX_SIZE);
                                assert_int_equal(size % 8, 0);
                                assert_int_equal(size, expected_size(&c));
                                assert_int_equal(
                                    command_encode(&c, buf, sizeof buf), size);
                        }
                }
        }
        assert_int_equal(command_size(&removal), expected_size(&removal));
        assert_int_equal(command_encode(&removal, buf, sizeof buf),
                         expected_size(&removal));
}

/* COMMAND_MAX_SIZE is exactly the largest command but MULTI (a
 * REVOKE_LOCK with a 255-byte name and a 64-byte `by`, 345 bytes padded to
 * 352); a semaphore ACQUIRE takes 312, a RELEASE 304, and the largest
 * MEMBER fits well within it. */
static void max_size_is_tight(void **state)
{
        char name[COMMAND_NAME_MAX];
        struct command c = only_carried(full(COMMAND_ACQUIRE));
        struct command r = only_carried(full(COMMAND_RELEASE));
        struct command m = only_carried(full(COMMAND_MEMBER));
        struct command v = only_carried(full(COMMAND_REVOKE_LOCK));
        uint8_t buf[COMMAND_MAX_SIZE];

        (void)state;
        memset(name, 'z', sizeof name);
        c.name = r.name = name;
        c.name_len = r.name_len = COMMAND_NAME_MAX;
        c.mode = COMMAND_MODE_SEMAPHORE;
        c.permits = 1;
        c.limit = 2;
        c.value = NULL;
        c.value_len = 0;
        assert_int_equal(COMMAND_MAX_SIZE, 568);
        assert_int_equal(layout_of(&c).body, 305);
        assert_int_equal(command_size(&c), 312);
        assert_int_equal(command_size(&r), 304);
        v.name = name;
        v.name_len = COMMAND_NAME_MAX;
        v.address = name;
        v.address_len = COMMAND_CLIENT_NAME_MAX;
        assert_int_equal(layout_of(&v).body, 345);
        assert_int_equal(command_size(&v), 352);
        v.address_len++;
        assert_int_equal(command_size(&v), 0); /* `by` is 64 bytes at most */
        /* The largest: an election's ACQUIRE of a 255-byte name with a
         * 255-byte value; a PROCLAIM of both is 8 bytes shorter. */
        c.mode = COMMAND_MODE_ELECTION;
        c.permits = c.limit = 0;
        c.value = name;
        c.value_len = COMMAND_VALUE_MAX;
        assert_int_equal(layout_of(&c).body, 561);
        assert_int_equal(command_size(&c), COMMAND_MAX_SIZE);
        assert_int_equal(command_encode(&c, buf, sizeof buf), COMMAND_MAX_SIZE);
        /* A semaphore's ACQUIRE with as long a value, version 4: as long. */
        c.mode = COMMAND_MODE_SEMAPHORE;
        c.permits = 1;
        c.limit = 2;
        assert_int_equal(command_size(&c), COMMAND_MAX_SIZE);
        r = only_carried(full(COMMAND_PROCLAIM));
        r.name = r.value = name;
        r.name_len = r.value_len = COMMAND_NAME_MAX;
        assert_int_equal(command_size(&r), 560);

        m.name = m.address = name;
        m.name_len = m.address_len = COMMAND_ADDRESS_MAX;
        assert_int_equal(command_size(&m), 144);
        assert_true(command_size(&m) <= COMMAND_MAX_SIZE);
}

/* A buffer one byte short, or any shorter (even one that would hold all
 * the fields but not the padding), gets 0 and no overflow. */
static void encode_into_too_small_buffer(void **state)
{
        char text[COMMAND_NAME_MAX];
        struct command s[MAX_SAMPLES];
        size_t n, j, cap;

        (void)state;
        memset(text, 's', sizeof text);
        n = samples(s, text);
        for (j = 0; j < n; j++) {
                size_t size = command_size(&s[j]);
                uint8_t buf[COMMAND_MAX_SIZE + 1];

                assert_true(size > 0);
                for (cap = 0; cap < size; cap++) {
                        memset(buf, 0, sizeof buf);
                        buf[cap] = CANARY;
                        assert_int_equal(command_encode(&s[j], buf, cap), 0);
                        assert_int_equal(buf[cap], CANARY);
                }
                /* Exactly enough room works, and more room changes nothing. */
                buf[size] = CANARY;
                assert_int_equal(command_encode(&s[j], buf, size), size);
                assert_int_equal(buf[size], CANARY);
                assert_int_equal(command_encode(&s[j], buf, sizeof buf), size);
        }
}

/* Commands that decode would reject are neither sized nor encoded. */
/* MEMBER: each of the rules in command_validate, broken one at a time
 * (`name` is COMMAND_NAME_MAX bytes of filler). */
static void member_rules_invalid(const char *name)
{
        struct command c;
        uint8_t buf[COMMAND_MAX_SIZE];
        size_t i;

        for (i = 0; i < 16; i++) {
                c = i < 12 ? only_carried(full(COMMAND_MEMBER))
                           : member_removal();
                switch (i) {
                case 0: /* member id 0 */
                        c.target = 0;
                        break;
                case 1: /* unknown mode */
                        c.mode = 2;
                        break;
                case 2:
                        c.mode = 0xff;
                        break;
                case 3: /* set with an empty address */
                        c.name_len = 0;
                        break;
                case 4:
                        c.address_len = 0;
                        break;
                case 5: /* set with a 65-byte address */
                        c.name = name;
                        c.name_len = COMMAND_ADDRESS_MAX + 1;
                        break;
                case 6:
                        c.address = name;
                        c.address_len = COMMAND_ADDRESS_MAX + 1;
                        break;
                case 7: /* a NUL in an address */
                        c.name = "a\0b";
                        c.name_len = 3;
                        break;
                case 8:
                        c.address = "a\0b";
                        c.address_len = 3;
                        break;
                case 9: /* a length but no bytes */
                        c.name = NULL;
                        break;
                case 10:
                        c.address = NULL;
                        break;
                case 11: /* remove with addresses */
                        c.mode = COMMAND_MEMBER_REMOVE;
                        break;
                case 12: /* a removal of member 0 */
                        c.target = 0;
                        break;
                case 13: /* a removal with one address */
                        c.name = "a:1";
                        c.name_len = 3;
                        break;
                case 14:
                        c.address = "b:2";
                        c.address_len = 3;
                        break;
                case 15: /* no addresses, but an unknown mode */
                        c.mode = 2;
                        break;
                }
                assert_int_equal(command_validate(&c), BATON_EMALFORMED);
                assert_int_equal(command_size(&c), 0);
                assert_int_equal(command_encode(&c, buf, sizeof buf), 0);
        }
}

static void encode_rejects_invalid(void **state)
{
        char name[COMMAND_NAME_MAX];
        struct command c;
        uint8_t buf[COMMAND_MAX_SIZE];
        size_t i;

        (void)state;
        memset(name, 'c', sizeof name);
        for (i = 0; i < N_TYPES; i++) {
                if (!has_lock_name(all_types[i])) {
                        continue;
                }
                c = only_carried(full(all_types[i]));
                c.name_len = 0;
                assert_int_equal(command_size(&c), 0);
                assert_int_equal(command_encode(&c, buf, sizeof buf), 0);
                c.name = "a\0b";
                c.name_len = 3;
                assert_int_equal(command_size(&c), 0);
                assert_int_equal(command_encode(&c, buf, sizeof buf), 0);
                c.name = NULL;
                assert_int_equal(command_size(&c), 0);
                assert_int_equal(command_encode(&c, buf, sizeof buf), 0);
        }
        c = only_carried(full(COMMAND_OPEN));
        c.name = name;
        c.name_len = COMMAND_CLIENT_NAME_MAX + 1;
        assert_int_equal(command_size(&c), 0);
        assert_int_equal(command_encode(&c, buf, sizeof buf), 0);

        c = only_carried(full(COMMAND_QUERY));
        c.type = 0;
        assert_int_equal(command_size(&c), 0);
        assert_int_equal(command_encode(&c, buf, sizeof buf), 0);
        c.type = 11;
        assert_int_equal(command_size(&c), 0);
        assert_int_equal(command_encode(&c, buf, sizeof buf), 0);

        /* A REVOKE is version 3 only. */
        c = only_carried(full(COMMAND_REVOKE));
        {
                size_t len = command_encode(&c, buf, sizeof buf);

                assert_true(len > 0);
                assert_int_equal(buf[0], 3);
                buf[0] = 2;
                assert_int_equal(command_decode(&c, buf, len),
                                 BATON_EMALFORMED);
        }

        /* Permits belong to a semaphore's ACQUIRE only. */
        c = only_carried(full(COMMAND_ACQUIRE));
        c.limit = 3;
        assert_int_equal(command_size(&c), 0);
        c.mode = COMMAND_MODE_SEMAPHORE;
        assert_true(command_size(&c) > 0);

        member_rules_invalid(name);
}

/* --- command_type_name --------------------------------------------------- */

static void type_names(void **state)
{
        static const int unknown[] = {0,   23, 24,      255,
                                      256, -1, INT_MIN, INT_MAX};
        size_t i;

        (void)state;
        assert_string_equal(command_type_name(COMMAND_OPEN), "OPEN");
        assert_string_equal(command_type_name(COMMAND_CLOSE), "CLOSE");
        assert_string_equal(command_type_name(COMMAND_EXPIRE), "EXPIRE");
        assert_string_equal(command_type_name(COMMAND_ACQUIRE), "ACQUIRE");
        assert_string_equal(command_type_name(COMMAND_RELEASE), "RELEASE");
        assert_string_equal(command_type_name(COMMAND_CANCEL), "CANCEL");
        assert_string_equal(command_type_name(COMMAND_TIMEOUT), "TIMEOUT");
        assert_string_equal(command_type_name(COMMAND_QUERY), "QUERY");
        assert_string_equal(command_type_name(COMMAND_CHECK), "CHECK");
        assert_string_equal(command_type_name(COMMAND_MEMBER), "MEMBER");
        assert_string_equal(command_type_name(COMMAND_BATCH), "BATCH");
        assert_string_equal(command_type_name(COMMAND_REVOKE), "REVOKE");
        assert_string_equal(command_type_name(COMMAND_UNBLOCK), "UNBLOCK");
        assert_string_equal(command_type_name(COMMAND_MULTI), "MULTI");
        assert_string_equal(command_type_name(COMMAND_REVOKE_LOCK),
                            "REVOKE_LOCK");
        assert_string_equal(command_type_name(COMMAND_CLOCK), "CLOCK");
        assert_string_equal(command_type_name(COMMAND_PROCLAIM), "PROCLAIM");
        assert_string_equal(command_type_name(COMMAND_ACL), "ACL");
        assert_string_equal(command_type_name(COMMAND_DIGEST), "DIGEST");
        assert_string_equal(command_type_name(COMMAND_SET_VALUE), "SET_VALUE");
        assert_string_equal(command_type_name(COMMAND_EXTEND), "EXTEND");
        assert_string_equal(command_type_name(COMMAND_EXPIRE_HOLD),
                            "EXPIRE_HOLD");
        for (i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
                assert_string_equal(command_type_name(unknown[i]), "UNKNOWN");
        }
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(round_trip_every_type),
            cmocka_unit_test(multi_round_trip_and_strictness),
            cmocka_unit_test(clock_round_trip),
            cmocka_unit_test(uncarried_fields_decode_as_zero),
            cmocka_unit_test(round_trip_extreme_values),
            cmocka_unit_test(round_trip_modes),
            cmocka_unit_test(layout_acquire),
            cmocka_unit_test(layout_open),
            cmocka_unit_test(layout_open_v1),
            cmocka_unit_test(layout_release_and_check),
            cmocka_unit_test(layout_member),
            cmocka_unit_test(layout_padding),
            cmocka_unit_test(layout_every_type_matches_header),
            cmocka_unit_test(encode_pads_to_eight),
            cmocka_unit_test(size_matches_encode),
            cmocka_unit_test(max_size_is_tight),
            cmocka_unit_test(value_on_any_grant),
            cmocka_unit_test(encode_into_too_small_buffer),
            cmocka_unit_test(encode_rejects_invalid),
            cmocka_unit_test(decode_empty_buffer),
            cmocka_unit_test(decode_bad_version),
            cmocka_unit_test(decode_unknown_type),
            cmocka_unit_test(decode_nonzero_flags),
            cmocka_unit_test(decode_every_truncation),
            cmocka_unit_test(decode_trailing_byte),
            cmocka_unit_test(decode_extra_zero_bytes),
            cmocka_unit_test(decode_nonzero_padding),
            cmocka_unit_test(decode_unpadded_layout),
            cmocka_unit_test(decode_string_length_overruns),
            cmocka_unit_test(decode_empty_lock_name),
            cmocka_unit_test(decode_lock_name_with_nul),
            cmocka_unit_test(decode_lock_name_limits),
            cmocka_unit_test(decode_client_name_limits),
            cmocka_unit_test(decode_client_name_with_nul),
            cmocka_unit_test(decode_member_address_limits),
            cmocka_unit_test(decode_member_address_with_nul),
            cmocka_unit_test(decode_member_target_and_mode),
            cmocka_unit_test(validate_agrees_with_decode),
            cmocka_unit_test(validate_verdicts),
            cmocka_unit_test(type_names),
            cmocka_unit_test(fuzz_random_bytes),
            cmocka_unit_test(fuzz_single_byte_mutations),
        };
        return cmocka_run_group_tests_name("command", tests, NULL, NULL);
}
