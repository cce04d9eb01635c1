/* Cases of test_command on the byte layout of commands and its padding. */
#include "test_command_layout.h"

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

/* --- Exact byte layout ------------------------------------------------------
 */

/* Written out by hand from the header, padding and all. The padding is
 * listed last in each, so `sizeof x_bytes - X_PAD` is the old, unpadded layout.
 */

static const uint8_t acquire_bytes[] = {
    0x02, 0x04, 0x00, 0x00,                         /* v2 ACQUIRE */
    0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01, /* session */
    0x11, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* seq */
    0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* ack */
    0xbb, 0xaa, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* owner */
    0x10, 0x27, 0x00, 0x00,                         /* wait_ms */
    0x00,                                           /* mode */
    0x02, 'a',  'b',                                /* name */
    0x00, 0x00, 0x00, 0x00,                         /* padding: 44 -> 48 */
};
#define ACQUIRE_PAD 4

static const uint8_t open_bytes[] = {
    0x02, 0x01, 0x00, 0x00,                         /* v2 OPEN */
    0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, /* nonce */
    0x30, 0x75, 0x00, 0x00,                         /* ttl_ms */
    0xa0, 0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7, /* hash */
    0xa8, 0xa9, 0xaa, 0xab, 0xac, 0xad, 0xae, 0xaf, 0xb0, 0xb1,
    0xb2, 0xb3, 0xb4, 0xb5, 0xb6, 0xb7, 0xb8, 0xb9, 0xba, 0xbb,
    0xbc, 0xbd, 0xbe, 0xbf, 0x03, 'c',  'l',  'i', /* client name */
    0x00, 0x00, 0x00, 0x00,                        /* padding: 52 -> 56 */
};

/* The same OPEN as version 1 wrote it, without the hash: still read. */
static const uint8_t open_v1_bytes[] = {
    0x01, 0x01, 0x00, 0x00,                         /* v1 OPEN */
    0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, /* nonce */
    0x30, 0x75, 0x00, 0x00,                         /* ttl_ms */
    0x03, 'c',  'l',  'i',                          /* client name */
    0x00, 0x00, 0x00, 0x00,                         /* padding: 20 -> 24 */
};
#define OPEN_PAD 4

static const uint8_t release_bytes[] = {
    0x02, 0x05, 0x00, 0x00,                         /* v2 RELEASE */
    0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* session */
    0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* seq */
    0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* ack */
    0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* owner */
    0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* token */
    0x01, 'x',                                      /* name */
    0x00, 0x00,                                     /* padding: 46 -> 48 */
};
#define RELEASE_PAD 2

static const uint8_t check_bytes[] = {
    0x02, 0x09, 0x00, 0x00,                         /* v2 CHECK */
    0x02, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80, /* token */
    0x01, 'q',                                      /* name */
    0x00, 0x00,                                     /* padding: 14 -> 16 */
};
#define CHECK_PAD 2

static const uint8_t member_set_bytes[] = {
    0x02, 0x0a, 0x00, 0x00,                         /* v2 MEMBER */
    0x02, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* target */
    0x00,                                           /* mode: set */
    0x03, 'a',  ':',  '1',                          /* raft address */
    0x04, 'b',  ':',  '2',  '2',                    /* client address */
    0x00, 0x00,                                     /* padding: 22 -> 24 */
};
#define MEMBER_SET_PAD 2

static const uint8_t member_remove_bytes[] = {
    0x02, 0x0a, 0x00, 0x00,                         /* v2 MEMBER */
    0x07, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80, /* target */
    0x01,                                           /* mode: remove */
    0x00,                                           /* raft address */
    0x00,                                           /* client address */
    0x00,                                           /* padding: 15 -> 16 */
};
#define MEMBER_REMOVE_PAD 1

static const uint8_t expire_bytes[] = {
    0x02, 0x03, 0x00, 0x00,                         /* v2 EXPIRE */
    0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01, /* session */
    0x00, 0x00, 0x00, 0x00,                         /* padding: 12 -> 16 */
};
#define EXPIRE_PAD 4

static const uint8_t query3_bytes[] = {
    0x02, 0x08, 0x00, 0x00, /* v2 QUERY */
    0x03, 'a',  'b',  'c',  /* name; 8 bytes already, no padding */
};
#define QUERY3_PAD 0

static const uint8_t query4_bytes[] = {
    0x02, 0x08, 0x00, 0x00,                   /* v2 QUERY */
    0x04, 'a',  'b',  'c',  'd',              /* name */
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* padding: 9 -> 16 */
};
#define QUERY4_PAD 7

/* The commands the hand-written layouts above encode. */
static struct command acquire_cmd(void)
{
        struct command c = {0};

        c.type = COMMAND_ACQUIRE;
        c.session = 0x0102030405060708ULL;
        c.seq = 0x11;
        c.ack = 0x10;
        c.owner = 0xaabb;
        c.wait_ms = 10000;
        c.mode = COMMAND_MODE_EXCLUSIVE;
        c.name = "ab";
        c.name_len = 2;
        return c;
}

static struct command open_cmd(void)
{
        struct command c = {0};

        c.type = COMMAND_OPEN;
        c.nonce = 0x8877665544332211ULL;
        c.ttl_ms = 30000;
        c.hash = open_bytes + 16;
        c.name = "cli";
        c.name_len = 3;
        return c;
}

static struct command release_cmd(void)
{
        struct command c = {0};

        c.type = COMMAND_RELEASE;
        c.session = 1;
        c.seq = 2;
        c.ack = 3;
        c.owner = 4;
        c.token = 5;
        c.name = "x";
        c.name_len = 1;
        return c;
}

static struct command check_cmd(void)
{
        struct command c = {0};

        c.type = COMMAND_CHECK;
        c.token = 0x8000000000000102ULL;
        c.name = "q";
        c.name_len = 1;
        return c;
}

static struct command member_set_cmd(void)
{
        struct command c = {0};

        c.type = COMMAND_MEMBER;
        c.target = 0x0102;
        c.mode = COMMAND_MEMBER_SET;
        c.name = "a:1";
        c.name_len = 3;
        c.address = "b:22";
        c.address_len = 4;
        return c;
}

static struct command member_remove_cmd(void)
{
        struct command c = {0};

        c.type = COMMAND_MEMBER;
        c.target = 0x8000000000000007ULL;
        c.mode = COMMAND_MEMBER_REMOVE;
        return c;
}

static struct command expire_cmd(void)
{
        struct command c = {0};

        c.type = COMMAND_EXPIRE;
        c.session = 0x0102030405060708ULL;
        return c;
}

static struct command query_cmd(const char *name)
{
        struct command c = {0};

        c.type = COMMAND_QUERY;
        c.name = name;
        c.name_len = (uint8_t)strlen(name);
        return c;
}

/* `c` sizes, encodes (writing nothing past the end) and decodes as exactly
 * `expected`, which the reference encoder also produces. */
static void check_layout(const struct command *c, const uint8_t *expected,
                         size_t len)
{
        struct command out;
        uint8_t buf[COMMAND_MAX_SIZE + 1];
        uint8_t spec[SPEC_MAX];
        uint8_t *copy;

        assert_int_equal(len % 8, 0);
        assert_int_equal(command_size(c), len);
        memset(buf, CANARY, sizeof buf);
        assert_int_equal(command_encode(c, buf, sizeof buf), len);
        assert_memory_equal(buf, expected, len);
        assert_int_equal(buf[len], CANARY);
        assert_int_equal(spec_encode(c, spec), len);
        assert_memory_equal(spec, expected, len);
        assert_int_equal(decode_exact(&out, expected, len, &copy), 0);
        assert_same(&out, c);
        free(copy);
}

void layout_acquire(void **state)
{
        struct command c = acquire_cmd();

        (void)state;
        check_layout(&c, acquire_bytes, sizeof acquire_bytes);
}

void layout_open(void **state)
{
        struct command c = open_cmd();

        (void)state;
        check_layout(&c, open_bytes, sizeof open_bytes);
}

/* Version 1's OPEN (no hash) decodes, with no hash: its session is one no
 * secret can attach to. Versions 0 and 3 are refused. */
void layout_open_v1(void **state)
{
        struct command out;
        uint8_t buf[sizeof open_v1_bytes];
        uint8_t *copy;

        (void)state;
        assert_int_equal(
            decode_exact(&out, open_v1_bytes, sizeof open_v1_bytes, &copy), 0);
        assert_int_equal(out.type, COMMAND_OPEN);
        assert_true(out.nonce == 0x8877665544332211ULL);
        assert_int_equal(out.ttl_ms, 30000);
        assert_null(out.hash);
        assert_int_equal(out.name_len, 3);
        assert_memory_equal(out.name, "cli", 3);
        free(copy);
        assert_int_equal(command_peek_type(open_v1_bytes, sizeof buf),
                         COMMAND_OPEN);
        memcpy(buf, open_v1_bytes, sizeof buf);
        buf[0] = 0;
        assert_int_equal(command_decode(&out, buf, sizeof buf), BATON_EVERSION);
        buf[0] = COMMAND_VERSION + 1;
        assert_int_equal(command_decode(&out, buf, sizeof buf), BATON_EVERSION);
}

/* RELEASE carries its token after the owner; CHECK before the name. */
void layout_release_and_check(void **state)
{
        struct command release = release_cmd();
        struct command check = check_cmd();

        (void)state;
        check_layout(&release, release_bytes, sizeof release_bytes);
        check_layout(&check, check_bytes, sizeof check_bytes);
}

/* MEMBER: target, mode, raft address, client address; a removal carries
 * two empty strings. */
void layout_member(void **state)
{
        struct command set = member_set_cmd();
        struct command removal = member_remove_cmd();

        (void)state;
        check_layout(&set, member_set_bytes, sizeof member_set_bytes);
        check_layout(&removal, member_remove_bytes, sizeof member_remove_bytes);
}

/* No padding when the fields end on a multiple of 8, up to 7 bytes when
 * they end just past one, and a command without strings is padded too. */
void layout_padding(void **state)
{
        struct command q3 = query_cmd("abc");
        struct command q4 = query_cmd("abcd");
        struct command expire = expire_cmd();

        (void)state;
        check_layout(&q3, query3_bytes, sizeof query3_bytes);
        check_layout(&q4, query4_bytes, sizeof query4_bytes);
        check_layout(&expire, expire_bytes, sizeof expire_bytes);
}

/* Every type lays out its fields in the order the header documents. */
void layout_every_type_matches_header(void **state)
{
        size_t i;

        (void)state;
        for (i = 0; i <= N_TYPES; i++) {
                struct command c = i < N_TYPES
                                       ? only_carried(full(all_types[i]))
                                       : member_removal();
                uint8_t want[SPEC_MAX], got[COMMAND_MAX_SIZE];
                struct spec_layout l = spec_layout(&c, want);
                size_t ng = command_encode(&c, got, sizeof got);
                size_t k;

                assert_int_equal(ng, l.len);
                assert_memory_equal(got, want, l.len);
                /* The common header. */
                assert_int_equal(got[0], spec_version(&c));
                assert_int_equal(got[1], c.type);
                assert_int_equal(got[2], 0);
                assert_int_equal(got[3], 0);
                /* Zero padding to the next multiple of 8, no further. */
                assert_int_equal(ng % 8, 0);
                assert_true(ng - l.body < 8);
                for (k = l.body; k < ng; k++) {
                        assert_int_equal(got[k], 0);
                }
        }
}

/* Every sample is padded with zeros to the next multiple of 8, and between
 * them the samples of each type with a string need every padding length. */
void encode_pads_to_eight(void **state)
{
        char text[COMMAND_NAME_MAX];
        struct command s[MAX_SAMPLES];
        unsigned pads[COMMAND_EXPIRE_HOLD + 1] = {0}; /* by type */
        size_t n = 0, i, j, k;

        (void)state;
        memset(text, 't', sizeof text);
        n = samples(s, text);
        for (j = 0; j < n; j++) {
                uint8_t buf[COMMAND_MAX_SIZE + 8];
                struct spec_layout l = layout_of(&s[j]);
                size_t size = command_size(&s[j]);

                memset(buf, CANARY, sizeof buf);
                assert_int_equal(size, l.len);
                assert_int_equal(command_encode(&s[j], buf, sizeof buf), size);
                assert_int_equal(size % 8, 0);
                assert_true(size >= l.body && size - l.body < 8);
                for (k = l.body; k < size; k++) {
                        assert_int_equal(buf[k], 0);
                }
                for (k = size; k < sizeof buf; k++) {
                        assert_int_equal(buf[k], CANARY);
                }
                pads[s[j].type] |= 1u << (size - l.body);
        }
        for (i = 0; i < N_TYPES; i++) {
                if (carried(all_types[i]) & T_NAME) {
                        assert_int_equal(pads[all_types[i]], 0xff);
                }
        }
}

/* Padding is fewer than 8 bytes: 8 (or 16) more zero bytes keep the length
 * a multiple of 8 but are refused, as is any other number of them. */
void decode_extra_zero_bytes(void **state)
{
        char text[COMMAND_NAME_MAX];
        struct command s[MAX_SAMPLES];
        size_t n, j, extra;

        (void)state;
        memset(text, 'k', sizeof text);
        n = samples(s, text);
        for (j = 0; j < n; j++) {
                uint8_t buf[COMMAND_MAX_SIZE + 16];
                size_t len = command_encode(&s[j], buf, sizeof buf);

                assert_true(len > 0);
                memset(buf + len, 0, 16);
                assert_int_equal(decode_bytes(buf, len), 0);
                assert_int_equal(decode_bytes(buf, len + 8), BATON_EMALFORMED);
                assert_int_equal(decode_bytes(buf, len + 16), BATON_EMALFORMED);
                for (extra = 1; extra <= 16; extra++) {
                        assert_int_equal(decode_bytes(buf, len + extra),
                                         BATON_EMALFORMED);
                }
        }
        /* By hand: a QUERY that needed no padding, with 8 zeros after it. */
        {
                uint8_t buf[sizeof query3_bytes + 8] = {0};

                memcpy(buf, query3_bytes, sizeof query3_bytes);
                assert_int_equal(decode_bytes(buf, sizeof query3_bytes), 0);
                assert_int_equal(decode_bytes(buf, sizeof buf),
                                 BATON_EMALFORMED);
        }
}

/* Every padding byte must be zero; any other value in any one of them is
 * refused, and the same bytes with that padding byte zero decode. */
void decode_nonzero_padding(void **state)
{
        static const uint8_t values[] = {0x01, 0x20, 0x80, 0xff};
        char text[COMMAND_NAME_MAX];
        struct command s[MAX_SAMPLES];
        size_t n, j, at, k;
        unsigned tried = 0;

        (void)state;
        memset(text, 'k', sizeof text);
        n = samples(s, text);
        for (j = 0; j < n; j++) {
                uint8_t buf[COMMAND_MAX_SIZE];
                size_t len = command_encode(&s[j], buf, sizeof buf);
                struct spec_layout l = layout_of(&s[j]);

                assert_int_equal(len, l.len);
                for (at = l.body; at < len; at++) {
                        for (k = 0; k < sizeof values; k++) {
                                buf[at] = values[k];
                                assert_int_equal(decode_bytes(buf, len),
                                                 BATON_EMALFORMED);
                                tried++;
                        }
                        buf[at] = 0;
                        assert_int_equal(decode_bytes(buf, len), 0);
                }
        }
        assert_true(tried > 0);
}

/* The old layout, which ended right after the last field, is refused
 * whenever it is not already a multiple of 8. */
void decode_unpadded_layout(void **state)
{
        static const struct {
                const uint8_t *bytes;
                size_t len, pad;
        } hand[] = {
            {acquire_bytes, sizeof acquire_bytes, ACQUIRE_PAD},
            {open_bytes, sizeof open_bytes, OPEN_PAD},
            {release_bytes, sizeof release_bytes, RELEASE_PAD},
            {check_bytes, sizeof check_bytes, CHECK_PAD},
            {member_set_bytes, sizeof member_set_bytes, MEMBER_SET_PAD},
            {member_remove_bytes, sizeof member_remove_bytes,
             MEMBER_REMOVE_PAD},
            {expire_bytes, sizeof expire_bytes, EXPIRE_PAD},
            {query4_bytes, sizeof query4_bytes, QUERY4_PAD},
        };
        char text[COMMAND_NAME_MAX];
        struct command s[MAX_SAMPLES];
        unsigned refused[256] = {0}; /* by type */
        size_t n, i, j;

        (void)state;
        for (i = 0; i < sizeof hand / sizeof hand[0]; i++) {
                assert_true(hand[i].pad > 0);
                assert_int_equal(decode_bytes(hand[i].bytes, hand[i].len), 0);
                assert_int_equal(
                    decode_bytes(hand[i].bytes, hand[i].len - hand[i].pad),
                    BATON_EMALFORMED);
        }
        /* An exactly aligned one is the same in both layouts. */
        assert_int_equal(QUERY3_PAD, 0);
        assert_int_equal(decode_bytes(query3_bytes, sizeof query3_bytes), 0);

        memset(text, 'k', sizeof text);
        n = samples(s, text);
        for (j = 0; j < n; j++) {
                uint8_t buf[COMMAND_MAX_SIZE];
                size_t len = command_encode(&s[j], buf, sizeof buf);
                struct spec_layout l = layout_of(&s[j]);

                assert_int_equal(len, l.len);
                if (l.body == len) {
                        continue;
                }
                assert_int_equal(decode_bytes(buf, l.body), BATON_EMALFORMED);
                refused[s[j].type]++;
        }
        for (i = 0; i < N_TYPES; i++) {
                assert_true(refused[all_types[i]] > 0);
        }
}
