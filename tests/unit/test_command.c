/* Unit tests for the binary encoding of lock state machine commands. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../../include/baton.h"
#include "../../src/fsm/command.h"

#define CANARY  0xA5
#define N_TYPES 9

/* Which fields each type carries, written down from the header's table
 * rather than taken from the implementation. */
enum {
        T_SESSION = 1 << 0,
        T_SEQ = 1 << 1,
        T_ACK = 1 << 2,
        T_OWNER = 1 << 3,
        T_WAIT = 1 << 4,
        T_MODE = 1 << 5,
        T_TOKEN = 1 << 6,
        T_TARGET = 1 << 7,
        T_NAME = 1 << 8, /* lock name, or client name for OPEN */
        T_NONCE = 1 << 9,
        T_TTL = 1 << 10,
};

static const int all_types[N_TYPES] = {
    COMMAND_OPEN,    COMMAND_CLOSE,   COMMAND_EXPIRE,
    COMMAND_ACQUIRE, COMMAND_RELEASE, COMMAND_CANCEL,
    COMMAND_TIMEOUT, COMMAND_QUERY,   COMMAND_CHECK,
};

static unsigned carried(int type)
{
        switch (type) {
        case COMMAND_OPEN:
                return T_NONCE | T_TTL | T_NAME;
        case COMMAND_CLOSE:
                return T_SESSION | T_SEQ | T_ACK;
        case COMMAND_EXPIRE:
                return T_SESSION;
        case COMMAND_ACQUIRE:
                return T_SESSION | T_SEQ | T_ACK | T_OWNER | T_WAIT | T_MODE |
                       T_NAME;
        case COMMAND_RELEASE:
                return T_SESSION | T_SEQ | T_ACK | T_OWNER | T_TOKEN | T_NAME;
        case COMMAND_CANCEL:
                return T_SESSION | T_SEQ | T_ACK | T_TARGET | T_NAME;
        case COMMAND_TIMEOUT:
                return T_SESSION | T_TARGET | T_NAME;
        case COMMAND_QUERY:
                return T_NAME;
        case COMMAND_CHECK:
                return T_TOKEN | T_NAME;
        default:
                return 0;
        }
}

/* Types whose string is a lock name (as opposed to OPEN's client name). */
static bool has_lock_name(int type)
{
        return type != COMMAND_OPEN && (carried(type) & T_NAME) != 0;
}

/* --- A reference encoder written from the header's layout ---------------- */

struct spec {
        uint8_t *p;
        size_t len;
};

static void le(struct spec *s, uint64_t v, size_t n)
{
        size_t i;

        for (i = 0; i < n; i++) {
                s->p[s->len++] = (uint8_t)(v >> (8 * i));
        }
}

/*
 * Encodes `c` exactly as the header's table describes, with no validation,
 * so tests can also craft inputs the real encoder refuses. `out` must hold
 * COMMAND_MAX_SIZE bytes.
 */
static size_t spec_encode(const struct command *c, uint8_t *out)
{
        struct spec s = {out, 0};

        le(&s, COMMAND_VERSION, 1);
        le(&s, c->type, 1);
        le(&s, 0, 2);
        switch (c->type) {
        case COMMAND_OPEN:
                le(&s, c->nonce, 8);
                le(&s, c->ttl_ms, 4);
                break;
        case COMMAND_CLOSE:
                le(&s, c->session, 8);
                le(&s, c->seq, 8);
                le(&s, c->ack, 8);
                return s.len;
        case COMMAND_EXPIRE:
                le(&s, c->session, 8);
                return s.len;
        case COMMAND_ACQUIRE:
                le(&s, c->session, 8);
                le(&s, c->seq, 8);
                le(&s, c->ack, 8);
                le(&s, c->owner, 8);
                le(&s, c->wait_ms, 4);
                le(&s, c->mode, 1);
                break;
        case COMMAND_RELEASE:
                le(&s, c->session, 8);
                le(&s, c->seq, 8);
                le(&s, c->ack, 8);
                le(&s, c->owner, 8);
                le(&s, c->token, 8);
                break;
        case COMMAND_CANCEL:
                le(&s, c->session, 8);
                le(&s, c->seq, 8);
                le(&s, c->ack, 8);
                le(&s, c->target, 8);
                break;
        case COMMAND_TIMEOUT:
                le(&s, c->session, 8);
                le(&s, c->target, 8);
                break;
        case COMMAND_QUERY:
                break;
        case COMMAND_CHECK:
                le(&s, c->token, 8);
                break;
        default:
                return s.len;
        }
        le(&s, c->name_len, 1);
        if (c->name_len > 0) {
                memcpy(s.p + s.len, c->name, c->name_len);
                s.len += c->name_len;
        }
        return s.len;
}

/* --- Helpers ------------------------------------------------------------- */

static const char lock_name[] = "orders/2024/eu-west";
static const char client_name[] = "worker-7@host";

/* A command of `type` with every field of the struct set, carried or not,
 * to a distinct value whose bytes all differ. */
static struct command full(int type)
{
        struct command c;

        memset(&c, 0, sizeof c);
        c.type = (uint8_t)type;
        c.mode = COMMAND_MODE_SHARED;
        c.ttl_ms = 0x1a2b3c4dU;
        c.wait_ms = 0x5e6f7081U;
        c.session = 0x0102030405060708ULL;
        c.seq = 0x1112131415161718ULL;
        c.ack = 0x2122232425262728ULL;
        c.owner = 0x3132333435363738ULL;
        c.token = 0x4142434445464748ULL;
        c.target = 0x5152535455565758ULL;
        c.nonce = 0x6162636465666768ULL;
        if (type == COMMAND_OPEN) {
                c.name = client_name;
                c.name_len = sizeof client_name - 1;
        } else {
                c.name = lock_name;
                c.name_len = sizeof lock_name - 1;
        }
        return c;
}

/* The fields `type` does not carry, cleared. */
static struct command only_carried(struct command c)
{
        unsigned f = carried(c.type);

        if (!(f & T_SESSION)) {
                c.session = 0;
        }
        if (!(f & T_SEQ)) {
                c.seq = 0;
        }
        if (!(f & T_ACK)) {
                c.ack = 0;
        }
        if (!(f & T_OWNER)) {
                c.owner = 0;
        }
        if (!(f & T_WAIT)) {
                c.wait_ms = 0;
        }
        if (!(f & T_MODE)) {
                c.mode = 0;
        }
        if (!(f & T_TOKEN)) {
                c.token = 0;
        }
        if (!(f & T_TARGET)) {
                c.target = 0;
        }
        if (!(f & T_NONCE)) {
                c.nonce = 0;
        }
        if (!(f & T_TTL)) {
                c.ttl_ms = 0;
        }
        if (!(f & T_NAME)) {
                c.name = NULL;
                c.name_len = 0;
        }
        return c;
}

/* Field-by-field equality; names compare by content. */
static void assert_same(const struct command *a, const struct command *b)
{
        assert_int_equal(a->type, b->type);
        assert_int_equal(a->mode, b->mode);
        assert_int_equal(a->ttl_ms, b->ttl_ms);
        assert_int_equal(a->wait_ms, b->wait_ms);
        assert_true(a->session == b->session);
        assert_true(a->seq == b->seq);
        assert_true(a->ack == b->ack);
        assert_true(a->owner == b->owner);
        assert_true(a->token == b->token);
        assert_true(a->target == b->target);
        assert_true(a->nonce == b->nonce);
        assert_int_equal(a->name_len, b->name_len);
        if (a->name_len > 0) {
                assert_non_null(a->name);
                assert_non_null(b->name);
                assert_memory_equal(a->name, b->name, a->name_len);
        }
}

/* Decodes `len` bytes from an exactly sized heap copy, so that any read past
 * the end is caught by the sanitizer. `c` borrows from the copy: pass `copy`
 * to keep it (the caller frees it) whenever `c` is looked at afterwards; with
 * NULL it is freed at once and only the return code is meaningful. */
static int decode_exact(struct command *c, const uint8_t *bytes, size_t len,
                        uint8_t **copy)
{
        uint8_t *p = malloc(len == 0 ? 1 : len);
        int rv;

        assert_non_null(p);
        if (len > 0) {
                memcpy(p, bytes, len);
        }
        /* Pre-fill with garbage: decode must set every field itself. */
        memset(c, 0xee, sizeof *c);
        rv = command_decode(c, p, len);
        if (copy != NULL) {
                *copy = p;
        } else {
                free(p);
        }
        return rv;
}

static int decode_bytes(const uint8_t *bytes, size_t len)
{
        struct command c;

        return decode_exact(&c, bytes, len, NULL);
}

/* The encoded size the header's table gives for `c`. */
static size_t expected_size(const struct command *c)
{
        uint8_t buf[COMMAND_MAX_SIZE];

        return spec_encode(c, buf);
}

/* --- Round trips ---------------------------------------------------------- */

/* Every type survives encode -> decode with all the fields it carries. */
static void round_trip_every_type(void **state)
{
        size_t i;

        (void)state;
        for (i = 0; i < N_TYPES; i++) {
                struct command in = only_carried(full(all_types[i]));
                struct command out;
                uint8_t buf[COMMAND_MAX_SIZE];
                uint8_t *copy;
                size_t n = command_encode(&in, buf, sizeof buf);

                assert_true(n > 0);
                assert_int_equal(decode_exact(&out, buf, n, &copy), 0);
                assert_same(&out, &in);
                /* The name is borrowed from the buffer, not copied. */
                if (carried(in.type) & T_NAME) {
                        assert_ptr_equal(out.name, copy + n - in.name_len);
                }
                free(copy);
        }
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
                        n = command_encode(&in, buf, sizeof buf);
                        assert_true(n > 0);
                        assert_int_equal(decode_exact(&out, buf, n, &copy), 0);
                        assert_same(&out, &in);
                        free(copy);
                }
        }
}

/* Both defined lock modes survive the codec. */
static void round_trip_modes(void **state)
{
        static const uint8_t modes[] = {COMMAND_MODE_EXCLUSIVE,
                                        COMMAND_MODE_SHARED};
        size_t i;

        (void)state;
        for (i = 0; i < sizeof modes / sizeof modes[0]; i++) {
                struct command in = only_carried(full(COMMAND_ACQUIRE));
                struct command out;
                uint8_t buf[COMMAND_MAX_SIZE];
                uint8_t *copy;
                size_t n;

                in.mode = modes[i];
                n = command_encode(&in, buf, sizeof buf);
                assert_true(n > 0);
                /* mode sits just before the name's length byte. */
                assert_int_equal(buf[n - in.name_len - 2], modes[i]);
                assert_int_equal(decode_exact(&out, buf, n, &copy), 0);
                assert_int_equal(out.mode, modes[i]);
                free(copy);
        }
}

/* --- Exact byte layout ------------------------------------------------------
 */

static void layout_acquire(void **state)
{
        static const uint8_t expected[] = {
            0x01, 0x04, 0x00, 0x00,                         /* v1 ACQUIRE */
            0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01, /* session */
            0x11, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* seq */
            0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* ack */
            0xbb, 0xaa, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* owner */
            0x10, 0x27, 0x00, 0x00,                         /* wait_ms */
            0x00,                                           /* mode */
            0x02, 'a',  'b',                                /* name */
        };
        struct command c = {0};
        struct command out;
        uint8_t buf[COMMAND_MAX_SIZE];
        uint8_t *copy;

        (void)state;
        c.type = COMMAND_ACQUIRE;
        c.session = 0x0102030405060708ULL;
        c.seq = 0x11;
        c.ack = 0x10;
        c.owner = 0xaabb;
        c.wait_ms = 10000;
        c.mode = COMMAND_MODE_EXCLUSIVE;
        c.name = "ab";
        c.name_len = 2;
        assert_int_equal(command_size(&c), sizeof expected);
        assert_int_equal(command_encode(&c, buf, sizeof buf), sizeof expected);
        assert_memory_equal(buf, expected, sizeof expected);
        assert_int_equal(decode_exact(&out, expected, sizeof expected, &copy),
                         0);
        assert_same(&out, &c);
        free(copy);
}

static void layout_open(void **state)
{
        static const uint8_t expected[] = {
            0x01, 0x01, 0x00, 0x00,                         /* v1 OPEN */
            0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, /* nonce */
            0x30, 0x75, 0x00, 0x00,                         /* ttl_ms */
            0x03, 'c',  'l',  'i',                          /* client name */
        };
        struct command c = {0};
        struct command out;
        uint8_t buf[COMMAND_MAX_SIZE];
        uint8_t *copy;

        (void)state;
        c.type = COMMAND_OPEN;
        c.nonce = 0x8877665544332211ULL;
        c.ttl_ms = 30000;
        c.name = "cli";
        c.name_len = 3;
        assert_int_equal(command_encode(&c, buf, sizeof buf), sizeof expected);
        assert_memory_equal(buf, expected, sizeof expected);
        assert_int_equal(decode_exact(&out, expected, sizeof expected, &copy),
                         0);
        assert_same(&out, &c);
        free(copy);
}

/* RELEASE carries its token after the owner; CHECK before the name. */
static void layout_release_and_check(void **state)
{
        static const uint8_t release[] = {
            0x01, 0x05, 0x00, 0x00,                         /* v1 RELEASE */
            0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* session */
            0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* seq */
            0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* ack */
            0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* owner */
            0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* token */
            0x01, 'x',                                      /* name */
        };
        static const uint8_t check[] = {
            0x01, 0x09, 0x00, 0x00,                         /* v1 CHECK */
            0x02, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80, /* token */
            0x01, 'q',                                      /* name */
        };
        struct command c = {0};
        uint8_t buf[COMMAND_MAX_SIZE];

        (void)state;
        c.type = COMMAND_RELEASE;
        c.session = 1;
        c.seq = 2;
        c.ack = 3;
        c.owner = 4;
        c.token = 5;
        c.name = "x";
        c.name_len = 1;
        assert_int_equal(command_encode(&c, buf, sizeof buf), sizeof release);
        assert_memory_equal(buf, release, sizeof release);

        memset(&c, 0, sizeof c);
        c.type = COMMAND_CHECK;
        c.token = 0x8000000000000102ULL;
        c.name = "q";
        c.name_len = 1;
        assert_int_equal(command_encode(&c, buf, sizeof buf), sizeof check);
        assert_memory_equal(buf, check, sizeof check);
}

/* Every type lays out its fields in the order the header documents. */
static void layout_every_type_matches_header(void **state)
{
        size_t i;

        (void)state;
        for (i = 0; i < N_TYPES; i++) {
                struct command c = only_carried(full(all_types[i]));
                uint8_t want[COMMAND_MAX_SIZE], got[COMMAND_MAX_SIZE];
                size_t nw = spec_encode(&c, want);
                size_t ng = command_encode(&c, got, sizeof got);

                assert_int_equal(ng, nw);
                assert_memory_equal(got, want, nw);
                /* The common header. */
                assert_int_equal(got[0], COMMAND_VERSION);
                assert_int_equal(got[1], all_types[i]);
                assert_int_equal(got[2], 0);
                assert_int_equal(got[3], 0);
        }
}

/* --- Sizes and the encoder's limits --------------------------------------- */

/* command_size agrees with what command_encode writes, for every length. */
static void size_matches_encode(void **state)
{
        char name[COMMAND_NAME_MAX];
        size_t i;
        unsigned len;

        (void)state;
        memset(name, 'n', sizeof name);
        for (i = 0; i < N_TYPES; i++) {
                int type = all_types[i];
                unsigned lo = has_lock_name(type) ? 1 : 0;
                unsigned hi = type == COMMAND_OPEN ? COMMAND_CLIENT_NAME_MAX
                                                   : COMMAND_NAME_MAX;

                for (len = lo; len <= hi; len++) {
                        struct command c = only_carried(full(type));
                        uint8_t buf[COMMAND_MAX_SIZE];
                        size_t size;

                        if (carried(type) & T_NAME) {
                                c.name = name;
                                c.name_len = (uint8_t)len;
                        }
                        size = command_size(&c);
                        assert_true(size > 0);
                        assert_true(size <= COMMAND_MAX_SIZE);
                        assert_int_equal(size, expected_size(&c));
                        assert_int_equal(command_encode(&c, buf, sizeof buf),
                                         size);
                        if (!(carried(type) & T_NAME)) {
                                break;
                        }
                }
        }
}

/* COMMAND_MAX_SIZE is exactly the largest command (RELEASE, 255-byte name). */
static void max_size_is_tight(void **state)
{
        char name[COMMAND_NAME_MAX];
        struct command c = only_carried(full(COMMAND_RELEASE));
        uint8_t buf[COMMAND_MAX_SIZE];

        (void)state;
        memset(name, 'z', sizeof name);
        c.name = name;
        c.name_len = COMMAND_NAME_MAX;
        assert_int_equal(command_size(&c), COMMAND_MAX_SIZE);
        assert_int_equal(command_encode(&c, buf, sizeof buf), COMMAND_MAX_SIZE);
}

/* A buffer one byte short, or any shorter, gets 0 and no overflow. */
static void encode_into_too_small_buffer(void **state)
{
        size_t i, cap;

        (void)state;
        for (i = 0; i < N_TYPES; i++) {
                struct command c = only_carried(full(all_types[i]));
                size_t size = command_size(&c);
                uint8_t buf[COMMAND_MAX_SIZE + 1];

                assert_true(size > 0);
                for (cap = 0; cap < size; cap++) {
                        memset(buf, 0, sizeof buf);
                        buf[cap] = CANARY;
                        assert_int_equal(command_encode(&c, buf, cap), 0);
                        assert_int_equal(buf[cap], CANARY);
                }
                /* Exactly enough room works, and more room changes nothing. */
                buf[size] = CANARY;
                assert_int_equal(command_encode(&c, buf, size), size);
                assert_int_equal(buf[size], CANARY);
                assert_int_equal(command_encode(&c, buf, sizeof buf), size);
        }
}

/* Commands that decode would reject are neither sized nor encoded. */
static void encode_rejects_invalid(void **state)
{
        char name[COMMAND_CLIENT_NAME_MAX + 1];
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
        c.type = 10;
        assert_int_equal(command_size(&c), 0);
        assert_int_equal(command_encode(&c, buf, sizeof buf), 0);
}

/* --- Decode errors ------------------------------------------------------- */

static void decode_empty_buffer(void **state)
{
        static const uint8_t one[1] = {COMMAND_VERSION};
        struct command c;

        (void)state;
        assert_int_equal(command_decode(&c, NULL, 0), BATON_EMALFORMED);
        assert_int_equal(command_decode(&c, one, 0), BATON_EMALFORMED);
        assert_int_equal(decode_bytes(one, 0), BATON_EMALFORMED);
}

/* Any version but 1 is refused before anything else is looked at. */
static void decode_bad_version(void **state)
{
        static const uint8_t versions[] = {0, 2, 3, 0x7f, 0x80, 0xff};
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

static void decode_unknown_type(void **state)
{
        static const uint8_t types[] = {0, 10, 11, 0x80, 255};
        size_t i, k;

        (void)state;
        for (k = 0; k < sizeof types / sizeof types[0]; k++) {
                const uint8_t bare[4] = {COMMAND_VERSION, types[k], 0, 0};

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

static void decode_nonzero_flags(void **state)
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

/* Every proper prefix of every valid encoding is malformed. */
static void decode_every_truncation(void **state)
{
        /* A short name, a client name of zero bytes, and the longest
         * names of each kind. */
        static const uint8_t lens[] = {1, 0, COMMAND_CLIENT_NAME_MAX,
                                       COMMAND_NAME_MAX};
        char name[COMMAND_NAME_MAX];
        size_t i, k, cut;

        (void)state;
        memset(name, 'k', sizeof name);
        for (i = 0; i < N_TYPES; i++) {
                for (k = 0; k < sizeof lens; k++) {
                        struct command c = only_carried(full(all_types[i]));
                        uint8_t buf[COMMAND_MAX_SIZE];
                        size_t n;

                        if (carried(c.type) & T_NAME) {
                                c.name = name;
                                c.name_len = lens[k];
                        }
                        n = command_encode(&c, buf, sizeof buf);
                        if (n == 0) {
                                /* Not a valid length for this type. */
                                assert_int_not_equal(command_validate(&c), 0);
                                continue;
                        }
                        assert_int_equal(decode_bytes(buf, n), 0);
                        for (cut = 0; cut < n; cut++) {
                                assert_int_equal(decode_bytes(buf, cut),
                                                 BATON_EMALFORMED);
                        }
                }
        }
}

/* One byte too many is as malformed as one too few. */
static void decode_trailing_byte(void **state)
{
        static const uint8_t extra[] = {0x00, 0x01, 0xff};
        size_t i, k;

        (void)state;
        for (i = 0; i < N_TYPES; i++) {
                for (k = 0; k < sizeof extra / sizeof extra[0]; k++) {
                        struct command c = only_carried(full(all_types[i]));
                        uint8_t buf[COMMAND_MAX_SIZE + 1];
                        size_t n = command_encode(&c, buf, sizeof buf);

                        assert_true(n > 0);
                        buf[n] = extra[k];
                        assert_int_equal(decode_bytes(buf, n + 1),
                                         BATON_EMALFORMED);
                }
        }
}

/* A name length byte larger than what follows is malformed, not a bad name. */
static void decode_name_length_overruns(void **state)
{
        size_t i;

        (void)state;
        for (i = 0; i < N_TYPES; i++) {
                struct command c = only_carried(full(all_types[i]));
                uint8_t buf[COMMAND_MAX_SIZE];
                size_t n;

                if (!(carried(c.type) & T_NAME)) {
                        continue;
                }
                n = command_encode(&c, buf, sizeof buf);
                buf[n - c.name_len - 1] = (uint8_t)(c.name_len + 1);
                assert_int_equal(decode_bytes(buf, n), BATON_EMALFORMED);
                buf[n - c.name_len - 1] = 0xff;
                assert_int_equal(decode_bytes(buf, n), BATON_EMALFORMED);
        }
}

/* A lock name of zero bytes is a bad name. */
static void decode_empty_lock_name(void **state)
{
        size_t i;

        (void)state;
        for (i = 0; i < N_TYPES; i++) {
                struct command c = only_carried(full(all_types[i]));
                uint8_t buf[COMMAND_MAX_SIZE];
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
static void decode_lock_name_with_nul(void **state)
{
        static const char *const names[] = {"\0abc", "ab\0c", "abc\0", "\0"};
        static const uint8_t lens[] = {4, 4, 4, 1};
        size_t i, k;

        (void)state;
        for (i = 0; i < N_TYPES; i++) {
                for (k = 0; k < sizeof lens; k++) {
                        struct command c = only_carried(full(all_types[i]));
                        uint8_t buf[COMMAND_MAX_SIZE];
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
static void decode_lock_name_limits(void **state)
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
                        uint8_t buf[COMMAND_MAX_SIZE];
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
static void decode_client_name_limits(void **state)
{
        char name[255];
        size_t len;

        (void)state;
        memset(name, 'w', sizeof name);
        for (len = 0; len <= UINT8_MAX; len++) {
                struct command c = only_carried(full(COMMAND_OPEN));
                struct command out;
                uint8_t buf[COMMAND_MAX_SIZE];
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
static void decode_client_name_with_nul(void **state)
{
        static const char *const names[] = {"\0", "\0bc", "a\0c", "ab\0"};
        static const uint8_t lens[] = {1, 3, 3, 3};
        size_t k;

        (void)state;
        for (k = 0; k < sizeof lens; k++) {
                struct command c = only_carried(full(COMMAND_OPEN));
                uint8_t buf[COMMAND_MAX_SIZE];
                size_t n;

                c.name = names[k];
                c.name_len = lens[k];
                n = spec_encode(&c, buf);
                assert_int_equal(decode_bytes(buf, n), BATON_EMALFORMED);
        }
}

/* --- command_validate ---------------------------------------------------- */

/* On every crafted input, decode's verdict is validate's verdict. */
static void validate_agrees_with_decode(void **state)
{
        char name[COMMAND_NAME_MAX];
        size_t i, k;

        (void)state;
        memset(name, 'v', sizeof name);
        for (i = 0; i < N_TYPES; i++) {
                /* Name contents and lengths, valid and not. */
                static const struct {
                        const char *text;
                        uint8_t len;
                } cases[] = {
                    {NULL, 0},  {"a", 1},   {"\0", 1},   {"ab\0", 3},
                    {NULL, 64}, {NULL, 65}, {NULL, 200}, {NULL, 255},
                };

                for (k = 0; k < sizeof cases / sizeof cases[0]; k++) {
                        struct command c = only_carried(full(all_types[i]));
                        struct command out;
                        uint8_t buf[COMMAND_MAX_SIZE];
                        uint8_t *copy;
                        int want;
                        size_t n;

                        if (carried(c.type) & T_NAME) {
                                c.name = cases[k].text != NULL ? cases[k].text
                                                               : name;
                                c.name_len = cases[k].len;
                        }
                        want = command_validate(&c);
                        n = spec_encode(&c, buf);
                        assert_int_equal(decode_exact(&out, buf, n, &copy),
                                         want);
                        if (want == 0) {
                                assert_int_equal(command_validate(&out), 0);
                                assert_same(&out, &c);
                                assert_int_equal(command_size(&c), n);
                        } else {
                                assert_int_equal(command_size(&c), 0);
                        }
                        free(copy);
                }
        }
}

/* validate's own verdicts, on commands built in memory. */
static void validate_verdicts(void **state)
{
        char name[COMMAND_CLIENT_NAME_MAX + 1];
        struct command c;
        size_t i;

        (void)state;
        memset(name, 'p', sizeof name);
        for (i = 0; i < N_TYPES; i++) {
                c = only_carried(full(all_types[i]));
                assert_int_equal(command_validate(&c), 0);
        }
        /* Unknown types. */
        c = only_carried(full(COMMAND_QUERY));
        c.type = 0;
        assert_int_equal(command_validate(&c), BATON_EMALFORMED);
        c.type = 10;
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

        /* Types without a string ignore the name fields. */
        c = only_carried(full(COMMAND_CLOSE));
        c.name = NULL;
        c.name_len = 9;
        assert_int_equal(command_validate(&c), 0);
}

/* --- command_type_name --------------------------------------------------- */

static void type_names(void **state)
{
        static const int unknown[] = {0,   10, 11,      255,
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
        for (i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
                assert_string_equal(command_type_name(unknown[i]), "UNKNOWN");
        }
}

/* --- Deterministic fuzzing ----------------------------------------------- */

#define FUZZ_ROUNDS  20000
#define FUZZ_MAX_LEN 320

/* xorshift64: a tiny, seeded generator so every run sees the same inputs. */
static uint64_t next_rand(uint64_t *s)
{
        uint64_t x = *s;

        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        *s = x;
        return x;
}

/*
 * Decodes `len` bytes and, if they are accepted, checks that they are
 * exactly the canonical encoding of what was decoded. Returns decode's code.
 */
static int decode_and_reencode(const uint8_t *bytes, size_t len)
{
        struct command c;
        uint8_t *copy;
        uint8_t again[COMMAND_MAX_SIZE + 1];
        int rv = decode_exact(&c, bytes, len, &copy);

        assert_true(rv == 0 || rv == BATON_EMALFORMED || rv == BATON_EVERSION ||
                    rv == BATON_ENAME);
        if (rv == 0) {
                assert_int_equal(command_validate(&c), 0);
                assert_int_equal(command_size(&c), len);
                assert_int_equal(command_encode(&c, again, sizeof again), len);
                assert_memory_equal(again, bytes, len);
                if (c.name_len > 0) {
                        assert_true((const uint8_t *)c.name >= copy &&
                                    (const uint8_t *)c.name + c.name_len <=
                                        copy + len);
                }
        }
        free(copy);
        return rv;
}

/* Random bytes never crash decode; anything accepted re-encodes exactly. */
static void fuzz_random_bytes(void **state)
{
        uint64_t seed = 0x2545f4914f6cdd1dULL;
        uint8_t buf[FUZZ_MAX_LEN + 1];
        unsigned accepted = 0, by_code[4] = {0};
        int round;

        (void)state;
        for (round = 0; round < FUZZ_ROUNDS; round++) {
                size_t len = (size_t)(next_rand(&seed) % (FUZZ_MAX_LEN + 1));
                size_t i;
                int rv;

                for (i = 0; i < len; i++) {
                        buf[i] = (uint8_t)next_rand(&seed);
                }
                /* Three rounds in four get a plausible header so that the
                 * fuzzer reaches the field and name checks. */
                if (round % 4 != 0 && len >= 4) {
                        buf[0] = COMMAND_VERSION;
                        buf[1] = (uint8_t)(next_rand(&seed) % 11);
                        buf[2] = 0;
                        buf[3] = round % 8 == 1 ? 1 : 0;
                        /* Often make the name length byte fit the tail. */
                        if (round % 2 == 0) {
                                struct command probe = {0};
                                uint8_t hdr[COMMAND_MAX_SIZE];
                                size_t fixed;

                                probe.type = buf[1];
                                fixed = spec_encode(&probe, hdr);
                                if (carried(buf[1]) & T_NAME &&
                                    len > fixed - 1 &&
                                    len - fixed <= UINT8_MAX) {
                                        buf[fixed - 1] = (uint8_t)(len - fixed);
                                }
                        }
                }
                rv = decode_and_reencode(buf, len);
                if (rv == 0) {
                        accepted++;
                } else {
                        by_code[-rv == 3 ? 0 : -rv == 4 ? 1 : 2]++;
                }
        }
        /* The generator reached every outcome. */
        assert_true(accepted > 0);
        assert_true(by_code[0] > 0); /* malformed */
        assert_true(by_code[1] > 0); /* version */
        assert_true(by_code[2] > 0); /* name */
}

/* A valid command of a random type with random fields and name. */
static size_t random_valid(uint64_t *seed, uint8_t *out, char *name)
{
        struct command c;
        size_t i, n;

        c = full(all_types[next_rand(seed) % N_TYPES]);
        c.session = next_rand(seed);
        c.seq = next_rand(seed);
        c.ack = next_rand(seed);
        c.owner = next_rand(seed);
        c.token = next_rand(seed);
        c.target = next_rand(seed);
        c.nonce = next_rand(seed);
        c.ttl_ms = (uint32_t)next_rand(seed);
        c.wait_ms = (uint32_t)next_rand(seed);
        c.mode = (uint8_t)(next_rand(seed) % 2);
        c.name = name;
        if (c.type == COMMAND_OPEN) {
                c.name_len =
                    (uint8_t)(next_rand(seed) % (COMMAND_CLIENT_NAME_MAX + 1));
        } else {
                c.name_len = (uint8_t)(1 + next_rand(seed) % COMMAND_NAME_MAX);
        }
        for (i = 0; i < c.name_len; i++) {
                name[i] = (char)(1 + next_rand(seed) % 255);
        }
        c = only_carried(c);
        n = command_encode(&c, out, COMMAND_MAX_SIZE);
        assert_true(n > 0);
        return n;
}

/* Single-byte mutations of valid commands never crash decode, and whatever
 * still decodes re-encodes to the mutated bytes exactly. */
static void fuzz_single_byte_mutations(void **state)
{
        uint64_t seed = 0x9e3779b97f4a7c15ULL;
        char name[COMMAND_NAME_MAX];
        unsigned accepted = 0, rejected = 0;
        int round;

        (void)state;
        for (round = 0; round < FUZZ_ROUNDS; round++) {
                uint8_t buf[COMMAND_MAX_SIZE];
                size_t n = random_valid(&seed, buf, name);
                size_t at = (size_t)(next_rand(&seed) % n);
                uint8_t flip = (uint8_t)(1 + next_rand(&seed) % 255);

                assert_int_equal(decode_and_reencode(buf, n), 0);
                buf[at] ^= flip;
                if (decode_and_reencode(buf, n) == 0) {
                        accepted++;
                } else {
                        rejected++;
                }
        }
        /* Mutated fields decode; mutated headers and lengths do not. */
        assert_true(accepted > 0);
        assert_true(rejected > 0);
        assert_int_equal(accepted + rejected, FUZZ_ROUNDS);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(round_trip_every_type),
            cmocka_unit_test(uncarried_fields_decode_as_zero),
            cmocka_unit_test(round_trip_extreme_values),
            cmocka_unit_test(round_trip_modes),
            cmocka_unit_test(layout_acquire),
            cmocka_unit_test(layout_open),
            cmocka_unit_test(layout_release_and_check),
            cmocka_unit_test(layout_every_type_matches_header),
            cmocka_unit_test(size_matches_encode),
            cmocka_unit_test(max_size_is_tight),
            cmocka_unit_test(encode_into_too_small_buffer),
            cmocka_unit_test(encode_rejects_invalid),
            cmocka_unit_test(decode_empty_buffer),
            cmocka_unit_test(decode_bad_version),
            cmocka_unit_test(decode_unknown_type),
            cmocka_unit_test(decode_nonzero_flags),
            cmocka_unit_test(decode_every_truncation),
            cmocka_unit_test(decode_trailing_byte),
            cmocka_unit_test(decode_name_length_overruns),
            cmocka_unit_test(decode_empty_lock_name),
            cmocka_unit_test(decode_lock_name_with_nul),
            cmocka_unit_test(decode_lock_name_limits),
            cmocka_unit_test(decode_client_name_limits),
            cmocka_unit_test(decode_client_name_with_nul),
            cmocka_unit_test(validate_agrees_with_decode),
            cmocka_unit_test(validate_verdicts),
            cmocka_unit_test(type_names),
            cmocka_unit_test(fuzz_random_bytes),
            cmocka_unit_test(fuzz_single_byte_mutations),
        };
        return cmocka_run_group_tests_name("command", tests, NULL, NULL);
}
