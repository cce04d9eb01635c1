/* Cases of test_command on decode errors and command_validate. */
#include "test_command_decode.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../../include/baton.h"
#include "cmdspec.h"

/* --- Decode errors ------------------------------------------------------- */

void decode_empty_buffer(void **state)
{
        static const uint8_t one[1] = {COMMAND_VERSION};
        struct command c;

        (void)state;
        assert_int_equal(command_decode(&c, NULL, 0), BATON_EMALFORMED);
        assert_int_equal(command_decode(&c, one, 0), BATON_EMALFORMED);
        assert_int_equal(decode_bytes(one, 0), BATON_EMALFORMED);
}

/* Any version but 1 to 5 is refused before anything else is looked at. */
void decode_bad_version(void **state)
{
        static const uint8_t versions[] = {0, 6, 0x7f, 0x80, 0xff};
        size_t i, k;

        (void)state;
        for (k = 0; k < sizeof versions / sizeof versions[0]; k++) {
                /* A lone version byte. */
                assert_int_equal(decode_bytes(&versions[k], 1), BATON_EVERSION);
                /* An otherwise valid command of each type. */
                for (i = 0; i < N_TYPES; i++) {
                        struct command c = only_carried(full(all_types[i]));
                        uint8_t buf[COMMAND_MAX_SIZE];
                        size_t n = command_encode(&c, buf, sizeof buf);

                        assert_true(n > 0);
                        buf[0] = versions[k];
                        assert_int_equal(decode_bytes(buf, n), BATON_EVERSION);
                }
        }
}

void decode_unknown_type(void **state)
{
        static const uint8_t types[] = {0, 11, 14, 0x80, 255};
        size_t i, k;

        (void)state;
        for (k = 0; k < sizeof types / sizeof types[0]; k++) {
                const uint8_t bare[8] = {COMMAND_VERSION, types[k], 0, 0};

                /* A bare header, unpadded and padded. */
                assert_int_equal(decode_bytes(bare, 4), BATON_EMALFORMED);
                assert_int_equal(decode_bytes(bare, sizeof bare),
                                 BATON_EMALFORMED);
                /* Valid bodies of every type behind the unknown type byte. */
                for (i = 0; i < N_TYPES; i++) {
                        struct command c = only_carried(full(all_types[i]));
                        uint8_t buf[COMMAND_MAX_SIZE];
                        size_t n = command_encode(&c, buf, sizeof buf);

                        buf[1] = types[k];
                        assert_int_equal(decode_bytes(buf, n),
                                         BATON_EMALFORMED);
                }
        }
}

void decode_nonzero_flags(void **state)
{
        static const uint16_t flags[] = {0x0001, 0x0080, 0x0100, 0x8000,
                                         0xffff};
        size_t i, k;

        (void)state;
        for (i = 0; i < N_TYPES; i++) {
                for (k = 0; k < sizeof flags / sizeof flags[0]; k++) {
                        struct command c = only_carried(full(all_types[i]));
                        uint8_t buf[COMMAND_MAX_SIZE];
                        size_t n = command_encode(&c, buf, sizeof buf);

                        assert_int_equal(decode_bytes(buf, n), 0);
                        buf[2] = (uint8_t)flags[k];
                        buf[3] = (uint8_t)(flags[k] >> 8);
                        assert_int_equal(decode_bytes(buf, n),
                                         BATON_EMALFORMED);
                }
        }
}

/* Every proper prefix of every valid encoding is malformed: those that cut
 * into the fields, and those that keep the fields but drop padding. */
void decode_every_truncation(void **state)
{
        char text[COMMAND_NAME_MAX];
        struct command s[MAX_SAMPLES];
        size_t n, j, cut;

        (void)state;
        memset(text, 'k', sizeof text);
        n = samples(s, text);
        for (j = 0; j < n; j++) {
                uint8_t buf[COMMAND_MAX_SIZE];
                size_t len = command_encode(&s[j], buf, sizeof buf);

                assert_true(len > 0);
                assert_int_equal(decode_bytes(buf, len), 0);
                for (cut = 0; cut < len; cut++) {
                        assert_int_equal(decode_bytes(buf, cut),
                                         BATON_EMALFORMED);
                }
        }
}

/* One byte too many is as malformed as one too few. */
void decode_trailing_byte(void **state)
{
        static const uint8_t extra[] = {0x00, 0x01, 0xff};
        char text[COMMAND_NAME_MAX];
        struct command s[MAX_SAMPLES];
        size_t n, j, k;

        (void)state;
        memset(text, 'k', sizeof text);
        n = samples(s, text);
        for (j = 0; j < n; j++) {
                for (k = 0; k < sizeof extra / sizeof extra[0]; k++) {
                        uint8_t buf[COMMAND_MAX_SIZE + 1];
                        size_t len = command_encode(&s[j], buf, sizeof buf);

                        assert_true(len > 0);
                        buf[len] = extra[k];
                        assert_int_equal(decode_bytes(buf, len + 1),
                                         BATON_EMALFORMED);
                }
        }
}

/*
 * A string length byte that runs past the end of the buffer is malformed,
 * not a bad name. A last string grown into the zero padding reads NUL bytes
 * (a bad lock name, a malformed client name or address); one shrunk by a
 * byte leaves a non-zero byte in the padding, which is malformed.
 */
void decode_string_length_overruns(void **state)
{
        char text[COMMAND_NAME_MAX];
        struct command s[MAX_SAMPLES];
        unsigned overruns = 0, grown = 0, shrunk = 0;
        size_t n, j, w;

        (void)state;
        memset(text, 'k', sizeof text);
        n = samples(s, text);
        for (j = 0; j < n; j++) {
                uint8_t buf[COMMAND_MAX_SIZE];
                size_t len = command_encode(&s[j], buf, sizeof buf);
                struct spec_layout l = layout_of(&s[j]);
                size_t ats[3];
                size_t n_at = 0;

                if (carried(s[j].type) & T_NAME) {
                        ats[n_at++] = l.name_at;
                }
                if (carried(s[j].type) & T_ADDRESS) {
                        ats[n_at++] = l.address_at;
                }
                if (carries_value(&s[j])) {
                        ats[n_at++] = l.value_at;
                }
                for (w = 0; w < n_at; w++) {
                        size_t at = ats[w];
                        size_t after = len - at - 1; /* bytes after it */
                        uint8_t orig = buf[at];
                        bool last = w == n_at - 1;
                        size_t grow;

                        if (after + 1 <= UINT8_MAX) {
                                buf[at] = (uint8_t)(after + 1);
                                assert_int_equal(decode_bytes(buf, len),
                                                 BATON_EMALFORMED);
                                buf[at] = 0xff;
                                assert_int_equal(decode_bytes(buf, len),
                                                 BATON_EMALFORMED);
                                overruns++;
                        }
                        /* Growing or shrinking the last string when a
                         * hold time follows it reads other valid fields:
                         * no overrun to see there. */
                        for (grow = 1;
                             last && !carries_hold(&s[j]) &&
                             grow <= len - l.body && orig + grow <= UINT8_MAX;
                             grow++) {
                                buf[at] = (uint8_t)(orig + grow);
                                /* The last string is the lock name, or
                                 * an address (who asked, too). */
                                assert_int_equal(
                                    decode_bytes(buf, len),
                                    has_lock_name(s[j].type) &&
                                            !(carried(s[j].type) & T_ADDRESS) &&
                                            !carries_value(&s[j])
                                        ? BATON_ENAME
                                        : BATON_EMALFORMED);
                                grown++;
                        }
                        if (last && !carries_hold(&s[j]) && orig > 0) {
                                buf[at] = (uint8_t)(orig - 1);
                                assert_int_equal(decode_bytes(buf, len),
                                                 BATON_EMALFORMED);
                                shrunk++;
                        }
                        buf[at] = orig;
                        assert_int_equal(decode_bytes(buf, len), 0);
                }
        }
        assert_true(overruns > 0);
        assert_true(grown > 0);
        assert_true(shrunk > 0);
}

/* A lock name of zero bytes is a bad name. */
void decode_empty_lock_name(void **state)
{
        size_t i;

        (void)state;
        for (i = 0; i < N_TYPES; i++) {
                struct command c = only_carried(full(all_types[i]));
                uint8_t buf[SPEC_MAX];
                size_t n;

                if (!has_lock_name(c.type)) {
                        continue;
                }
                c.name_len = 0;
                n = spec_encode(&c, buf);
                assert_int_equal(decode_bytes(buf, n), BATON_ENAME);
        }
}

/* A NUL anywhere in a lock name is a bad name. */
void decode_lock_name_with_nul(void **state)
{
        static const char *const names[] = {"\0abc", "ab\0c", "abc\0", "\0"};
        static const uint8_t lens[] = {4, 4, 4, 1};
        size_t i, k;

        (void)state;
        for (i = 0; i < N_TYPES; i++) {
                for (k = 0; k < sizeof lens; k++) {
                        struct command c = only_carried(full(all_types[i]));
                        uint8_t buf[SPEC_MAX];
                        size_t n;

                        if (!has_lock_name(c.type)) {
                                continue;
                        }
                        c.name = names[k];
                        c.name_len = lens[k];
                        n = spec_encode(&c, buf);
                        assert_int_equal(decode_bytes(buf, n), BATON_ENAME);
                }
        }
}

/* Lock names of 1 and 255 bytes (the limits) decode, with any byte but NUL. */
void decode_lock_name_limits(void **state)
{
        char name[COMMAND_NAME_MAX];
        size_t i, j;

        (void)state;
        for (j = 0; j < sizeof name; j++) {
                name[j] = (char)(j + 1); /* 1..255: every non-NUL byte */
        }
        for (i = 0; i < N_TYPES; i++) {
                static const uint8_t lens[] = {1, COMMAND_NAME_MAX};
                size_t k;

                if (!has_lock_name(all_types[i])) {
                        continue;
                }
                for (k = 0; k < sizeof lens; k++) {
                        struct command c = only_carried(full(all_types[i]));
                        struct command out;
                        uint8_t buf[SPEC_MAX];
                        uint8_t *copy;
                        size_t n;

                        c.name = name;
                        c.name_len = lens[k];
                        n = spec_encode(&c, buf);
                        assert_int_equal(decode_exact(&out, buf, n, &copy), 0);
                        assert_same(&out, &c);
                        free(copy);
                        assert_int_equal(command_encode(&c, buf, sizeof buf),
                                         n);
                }
        }
}

/* Client names may be empty or up to 64 bytes; 65 is malformed. */
void decode_client_name_limits(void **state)
{
        char name[255];
        size_t len;

        (void)state;
        memset(name, 'w', sizeof name);
        for (len = 0; len <= UINT8_MAX; len++) {
                struct command c = only_carried(full(COMMAND_OPEN));
                struct command out;
                uint8_t buf[SPEC_MAX];
                uint8_t *copy;
                size_t n;

                c.name = name;
                c.name_len = (uint8_t)len;
                n = spec_encode(&c, buf);
                if (len <= COMMAND_CLIENT_NAME_MAX) {
                        assert_int_equal(decode_exact(&out, buf, n, &copy), 0);
                        assert_same(&out, &c);
                        free(copy);
                } else {
                        assert_int_equal(decode_bytes(buf, n),
                                         BATON_EMALFORMED);
                }
        }
}

/* A NUL in a client name is malformed (it is not a lock name). */
void decode_client_name_with_nul(void **state)
{
        static const char *const names[] = {"\0", "\0bc", "a\0c", "ab\0"};
        static const uint8_t lens[] = {1, 3, 3, 3};
        size_t k;

        (void)state;
        for (k = 0; k < sizeof lens; k++) {
                struct command c = only_carried(full(COMMAND_OPEN));
                uint8_t buf[SPEC_MAX];
                size_t n;

                c.name = names[k];
                c.name_len = lens[k];
                n = spec_encode(&c, buf);
                assert_int_equal(decode_bytes(buf, n), BATON_EMALFORMED);
        }
}

/* Sets MEMBER string `which` (0 raft, 1 client address) of `c`. */
static void set_address(struct command *c, int which, const char *p,
                        uint8_t len)
{
        if (which == 0) {
                c->name = p;
                c->name_len = len;
        } else {
                c->address = p;
                c->address_len = len;
        }
}

/* A set's addresses are 1..64 bytes each; a removal's are both empty.
 * Anything else is malformed (never a bad name). */
void decode_member_address_limits(void **state)
{
        char text[UINT8_MAX];
        size_t len;
        int which;

        (void)state;
        memset(text, 'm', sizeof text);
        for (which = 0; which < 2; which++) {
                for (len = 0; len <= UINT8_MAX; len++) {
                        struct command set = only_carried(full(COMMAND_MEMBER));
                        struct command removal = member_removal();
                        struct command out;
                        uint8_t buf[SPEC_MAX];
                        uint8_t *copy;
                        size_t n;

                        set_address(&set, which, text, (uint8_t)len);
                        n = spec_encode(&set, buf);
                        if (len >= 1 && len <= COMMAND_ADDRESS_MAX) {
                                assert_int_equal(
                                    decode_exact(&out, buf, n, &copy), 0);
                                assert_same(&out, &set);
                                free(copy);
                                assert_int_equal(command_size(&set), n);
                        } else {
                                assert_int_equal(decode_bytes(buf, n),
                                                 BATON_EMALFORMED);
                                assert_int_equal(command_size(&set), 0);
                        }

                        set_address(&removal, which, text, (uint8_t)len);
                        n = spec_encode(&removal, buf);
                        if (len == 0) {
                                assert_int_equal(
                                    decode_exact(&out, buf, n, &copy), 0);
                                assert_same(&out, &removal);
                                free(copy);
                        } else {
                                assert_int_equal(decode_bytes(buf, n),
                                                 BATON_EMALFORMED);
                                assert_int_equal(command_size(&removal), 0);
                        }
                }
        }
}

/* A NUL in either address is malformed (addresses are not lock names). */
void decode_member_address_with_nul(void **state)
{
        static const char *const names[] = {"\0", "\0:1", "a\0b", "a:\0"};
        static const uint8_t lens[] = {1, 3, 3, 3};
        size_t k;
        int which;

        (void)state;
        for (which = 0; which < 2; which++) {
                for (k = 0; k < sizeof lens; k++) {
                        struct command c = only_carried(full(COMMAND_MEMBER));
                        uint8_t buf[SPEC_MAX];
                        size_t n;

                        set_address(&c, which, names[k], lens[k]);
                        n = spec_encode(&c, buf);
                        assert_int_equal(decode_bytes(buf, n),
                                         BATON_EMALFORMED);
                }
        }
}

/* Member id 0 and modes other than set (0) and remove (1) are malformed;
 * any other id decodes. */
void decode_member_target_and_mode(void **state)
{
        static const uint8_t bad_modes[] = {2, 3, 0x10, 0x80, 0xff};
        static const uint64_t ids[] = {1, 2, 0x100, UINT64_MAX};
        size_t k;

        (void)state;
        for (k = 0; k < 2; k++) {
                struct command c = k == 0 ? only_carried(full(COMMAND_MEMBER))
                                          : member_removal();
                uint8_t buf[SPEC_MAX];
                size_t n, i;

                c.target = 0;
                n = spec_encode(&c, buf);
                assert_int_equal(decode_bytes(buf, n), BATON_EMALFORMED);
                for (i = 0; i < sizeof ids / sizeof ids[0]; i++) {
                        struct command out;
                        uint8_t *copy;

                        c.target = ids[i];
                        n = spec_encode(&c, buf);
                        assert_int_equal(decode_exact(&out, buf, n, &copy), 0);
                        assert_same(&out, &c);
                        free(copy);
                }
                for (i = 0; i < sizeof bad_modes; i++) {
                        c.mode = bad_modes[i];
                        n = spec_encode(&c, buf);
                        assert_int_equal(decode_bytes(buf, n),
                                         BATON_EMALFORMED);
                }
        }
}

/* --- command_validate ---------------------------------------------------- */

/* Decode's verdict on the reference encoding of `c` is validate's verdict. */
static void check_agrees(const struct command *c)
{
        struct command out;
        uint8_t buf[SPEC_MAX];
        uint8_t *copy;
        int want = command_validate(c);
        size_t n = spec_encode(c, buf);

        assert_int_equal(decode_exact(&out, buf, n, &copy), want);
        if (want == 0) {
                assert_int_equal(command_validate(&out), 0);
                assert_same(&out, c);
                assert_int_equal(command_size(c), n);
        } else {
                assert_int_equal(command_size(c), 0);
        }
        free(copy);
}

/* On every crafted input, decode's verdict is validate's verdict. */
void validate_agrees_with_decode(void **state)
{
        /* String contents and lengths, valid and not. */
        static const struct {
                const char *text;
                uint8_t len;
        } cases[] = {
            {NULL, 0},  {"a", 1},   {"\0", 1},   {"ab\0", 3},
            {NULL, 64}, {NULL, 65}, {NULL, 200}, {NULL, 255},
        };
        static const uint8_t member_modes[] = {COMMAND_MEMBER_SET,
                                               COMMAND_MEMBER_REMOVE, 2};
        static const uint64_t member_ids[] = {0, 5};
        char name[COMMAND_NAME_MAX];
        size_t i, k, a, m, t;
        const size_t n_cases = sizeof cases / sizeof cases[0];

        (void)state;
        memset(name, 'v', sizeof name);
        for (i = 0; i < N_TYPES; i++) {
                for (k = 0; k < n_cases; k++) {
                        struct command c = only_carried(full(all_types[i]));

                        if (carried(c.type) & T_NAME) {
                                c.name = cases[k].text != NULL ? cases[k].text
                                                               : name;
                                c.name_len = cases[k].len;
                        }
                        check_agrees(&c);
                }
        }
        /* MEMBER: every pair of strings, in every mode, with id 0 or not. */
        for (k = 0; k < n_cases; k++) {
                for (a = 0; a < n_cases; a++) {
                        for (m = 0; m < sizeof member_modes; m++) {
                                for (t = 0; t < 2; t++) {
                                        struct command c =
                                            only_carried(full(COMMAND_MEMBER));

                                        c.name = cases[k].text != NULL
                                                     ? cases[k].text
                                                     : name;
                                        c.name_len = cases[k].len;
                                        c.address = cases[a].text != NULL
                                                        ? cases[a].text
                                                        : name;
                                        c.address_len = cases[a].len;
                                        c.mode = member_modes[m];
                                        c.target = member_ids[t];
                                        check_agrees(&c);
                                }
                        }
                }
        }
}

/* validate's verdicts on MEMBER commands, sets and removals (`name` is
 * COMMAND_NAME_MAX bytes of filler). */
static void member_verdicts(char *name)
{
        struct command c;

        /* MEMBER sets: id not 0, mode 0 or 1, addresses 1..64 bytes without
         * NUL. Every failure is malformed, never a bad name. */
        c = only_carried(full(COMMAND_MEMBER));
        c.target = 0;
        assert_int_equal(command_validate(&c), BATON_EMALFORMED);
        c.target = 1;
        assert_int_equal(command_validate(&c), 0);
        c.target = UINT64_MAX;
        assert_int_equal(command_validate(&c), 0);
        c.mode = 2;
        assert_int_equal(command_validate(&c), BATON_EMALFORMED);
        c.mode = 0xff;
        assert_int_equal(command_validate(&c), BATON_EMALFORMED);
        c.mode = COMMAND_MEMBER_SET;
        c.name = c.address = name;
        c.name_len = c.address_len = 1;
        assert_int_equal(command_validate(&c), 0);
        c.name_len = c.address_len = COMMAND_ADDRESS_MAX;
        assert_int_equal(command_validate(&c), 0);
        c.name_len = COMMAND_ADDRESS_MAX + 1;
        assert_int_equal(command_validate(&c), BATON_EMALFORMED);
        c.name_len = 0;
        assert_int_equal(command_validate(&c), BATON_EMALFORMED);
        c.name_len = 3;
        c.address_len = COMMAND_ADDRESS_MAX + 1;
        assert_int_equal(command_validate(&c), BATON_EMALFORMED);
        c.address_len = 0;
        assert_int_equal(command_validate(&c), BATON_EMALFORMED);
        c.address_len = 3;
        assert_int_equal(command_validate(&c), 0);
        c.name = NULL;
        assert_int_equal(command_validate(&c), BATON_EMALFORMED);
        c.name = "a\0b";
        assert_int_equal(command_validate(&c), BATON_EMALFORMED);
        c.name = name;
        c.address = NULL;
        assert_int_equal(command_validate(&c), BATON_EMALFORMED);
        c.address = "a\0b";
        assert_int_equal(command_validate(&c), BATON_EMALFORMED);
        c.address = "ab\0";
        assert_int_equal(command_validate(&c), BATON_EMALFORMED);
        c.address = name;
        assert_int_equal(command_validate(&c), 0);
        /* Setting mode remove on a set with addresses is malformed. */
        c.mode = COMMAND_MEMBER_REMOVE;
        assert_int_equal(command_validate(&c), BATON_EMALFORMED);

        /* MEMBER removals: both addresses empty (pointers don't matter). */
        c = member_removal();
        c.name = c.address = name;
        assert_int_equal(command_validate(&c), 0);
        c.name_len = 1;
        assert_int_equal(command_validate(&c), BATON_EMALFORMED);
        c.name_len = 0;
        c.address_len = 1;
        assert_int_equal(command_validate(&c), BATON_EMALFORMED);
        c.address_len = 0;
        c.target = 0;
        assert_int_equal(command_validate(&c), BATON_EMALFORMED);
        c.target = 9;
        c.mode = 2;
        assert_int_equal(command_validate(&c), BATON_EMALFORMED);
        c.mode = 0xff;
        assert_int_equal(command_validate(&c), BATON_EMALFORMED);
        /* A set with both addresses empty is not a removal. */
        c.mode = COMMAND_MEMBER_SET;
        assert_int_equal(command_validate(&c), BATON_EMALFORMED);
}

/* validate's own verdicts, on commands built in memory. */
void validate_verdicts(void **state)
{
        char name[COMMAND_NAME_MAX];
        struct command c;
        size_t i;

        (void)state;
        memset(name, 'p', sizeof name);
        for (i = 0; i < N_TYPES; i++) {
                c = only_carried(full(all_types[i]));
                assert_int_equal(command_validate(&c), 0);
        }
        c = member_removal();
        assert_int_equal(command_validate(&c), 0);

        /* Unknown types. */
        c = only_carried(full(COMMAND_QUERY));
        c.type = 0;
        assert_int_equal(command_validate(&c), BATON_EMALFORMED);
        c.type = 11;
        assert_int_equal(command_validate(&c), BATON_EMALFORMED);
        c.type = 255;
        assert_int_equal(command_validate(&c), BATON_EMALFORMED);

        /* Lock names. */
        c = only_carried(full(COMMAND_ACQUIRE));
        c.name_len = 0;
        assert_int_equal(command_validate(&c), BATON_ENAME);
        c.name = NULL;
        c.name_len = 3;
        assert_int_equal(command_validate(&c), BATON_ENAME);
        c.name = "a\0b";
        assert_int_equal(command_validate(&c), BATON_ENAME);

        /* Client names. */
        c = only_carried(full(COMMAND_OPEN));
        c.name = NULL;
        c.name_len = 0;
        assert_int_equal(command_validate(&c), 0);
        c.name = name;
        c.name_len = COMMAND_CLIENT_NAME_MAX;
        assert_int_equal(command_validate(&c), 0);
        c.name_len = COMMAND_CLIENT_NAME_MAX + 1;
        assert_int_equal(command_validate(&c), BATON_EMALFORMED);
        c.name = NULL;
        c.name_len = 1;
        assert_int_equal(command_validate(&c), BATON_EMALFORMED);
        c.name = "x\0";
        c.name_len = 2;
        assert_int_equal(command_validate(&c), BATON_EMALFORMED);

        member_verdicts(name);

        /* Types without a string ignore the name fields, and every type
         * but MEMBER and REVOKE_LOCK ignores the address fields. */
        c = only_carried(full(COMMAND_CLOSE));
        c.name = NULL;
        c.name_len = 9;
        assert_int_equal(command_validate(&c), 0);
        for (i = 0; i < N_TYPES; i++) {
                if (carried(all_types[i]) & T_ADDRESS) {
                        continue;
                }
                c = only_carried(full(all_types[i]));
                c.address = NULL;
                c.address_len = 9;
                assert_int_equal(command_validate(&c), 0);
                c.address = "a\0b";
                c.address_len = 3;
                assert_int_equal(command_validate(&c), 0);
        }
}
