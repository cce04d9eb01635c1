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
#define N_TYPES 10

/* Room for anything the reference encoder writes, including a MEMBER with
 * two 255-byte strings that the real encoder refuses. */
#define SPEC_MAX 1024

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
        T_NAME = 1 << 8, /* the first string, in name/name_len: the lock
                          * name, OPEN's client name, MEMBER's raft address */
        T_NONCE = 1 << 9,
        T_TTL = 1 << 10,
        T_ADDRESS = 1 << 11, /* MEMBER's client address */
};

static const int all_types[N_TYPES] = {
    COMMAND_OPEN,    COMMAND_CLOSE,  COMMAND_EXPIRE,  COMMAND_ACQUIRE,
    COMMAND_RELEASE, COMMAND_CANCEL, COMMAND_TIMEOUT, COMMAND_QUERY,
    COMMAND_CHECK,   COMMAND_MEMBER,
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
        case COMMAND_MEMBER:
                return T_TARGET | T_MODE | T_NAME | T_ADDRESS;
        default:
                return 0;
        }
}

/* Types whose first string is a lock name (not a client name or address). */
static bool has_lock_name(int type)
{
        return type != COMMAND_OPEN && type != COMMAND_MEMBER &&
               (carried(type) & T_NAME) != 0;
}

/* The shortest and longest valid first string of `type` (for MEMBER, of a
 * set: a removal has both addresses empty). 0 and 0 without a string. */
static unsigned name_min(int type)
{
        return has_lock_name(type) || type == COMMAND_MEMBER ? 1 : 0;
}

static unsigned name_max(int type)
{
        if (type == COMMAND_OPEN) {
                return COMMAND_CLIENT_NAME_MAX;
        }
        if (type == COMMAND_MEMBER) {
                return COMMAND_ADDRESS_MAX;
        }
        return has_lock_name(type) ? COMMAND_NAME_MAX : 0;
}

/* --- A reference encoder written from the header's layout ---------------- */

struct spec {
        uint8_t *p;
        size_t len;
};

/* Where the reference encoder put things. */
struct spec_layout {
        size_t len;        /* everything, padding included */
        size_t body;       /* up to the end of the last field */
        size_t name_at;    /* the first string's length byte; 0 if none */
        size_t address_at; /* MEMBER: the client address's length byte */
};

static void le(struct spec *s, uint64_t v, size_t n)
{
        size_t i;

        for (i = 0; i < n; i++) {
                s->p[s->len++] = (uint8_t)(v >> (8 * i));
        }
}

static void string(struct spec *s, const char *p, uint8_t n)
{
        le(s, n, 1);
        if (n > 0) {
                memcpy(s->p + s->len, p, n);
                s->len += n;
        }
}

/*
 * Encodes `c` exactly as the header's table describes, with no validation,
 * so tests can also craft inputs the real encoder refuses: the fields, then
 * zero bytes up to the next multiple of 8. `out` must hold SPEC_MAX bytes.
 */
static struct spec_layout spec_layout(const struct command *c, uint8_t *out)
{
        struct spec s = {out, 0};
        struct spec_layout l = {0, 0, 0, 0};
        bool has_string = true;

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
                has_string = false;
                break;
        case COMMAND_EXPIRE:
                le(&s, c->session, 8);
                has_string = false;
                break;
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
        case COMMAND_MEMBER:
                le(&s, c->target, 8);
                le(&s, c->mode, 1);
                break;
        default:
                has_string = false;
                break;
        }
        if (has_string) {
                l.name_at = s.len;
                string(&s, c->name, c->name_len);
        }
        if (c->type == COMMAND_MEMBER) {
                l.address_at = s.len;
                string(&s, c->address, c->address_len);
        }
        l.body = s.len;
        while (s.len % 8 != 0) {
                le(&s, 0, 1);
        }
        l.len = s.len;
        return l;
}

static size_t spec_encode(const struct command *c, uint8_t *out)
{
        return spec_layout(c, out).len;
}

/* The reference layout of `c`, without keeping the bytes. */
static struct spec_layout layout_of(const struct command *c)
{
        uint8_t scratch[SPEC_MAX];

        return spec_layout(c, scratch);
}

/* --- Helpers ------------------------------------------------------------- */

static const char lock_name[] = "orders/2024/eu-west";
static const char client_name[] = "worker-7@host";
static const char raft_address[] = "10.0.0.1:7001";
static const char client_address[] = "10.0.0.1:7101";

/* A command of `type` with every field of the struct set, carried or not,
 * to a distinct value whose bytes all differ. A MEMBER is a set. */
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
        c.address = client_address;
        c.address_len = sizeof client_address - 1;
        if (type == COMMAND_OPEN) {
                c.name = client_name;
                c.name_len = sizeof client_name - 1;
        } else if (type == COMMAND_MEMBER) {
                c.mode = COMMAND_MEMBER_SET;
                c.name = raft_address;
                c.name_len = sizeof raft_address - 1;
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
        if (!(f & T_ADDRESS)) {
                c.address = NULL;
                c.address_len = 0;
        }
        return c;
}

/* A MEMBER removal: both addresses empty. */
static struct command member_removal(void)
{
        struct command c = only_carried(full(COMMAND_MEMBER));

        c.mode = COMMAND_MEMBER_REMOVE;
        c.name = NULL;
        c.name_len = 0;
        c.address = NULL;
        c.address_len = 0;
        return c;
}

/* Field-by-field equality; strings compare by content. */
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
        assert_int_equal(a->address_len, b->address_len);
        if (a->address_len > 0) {
                assert_non_null(a->address);
                assert_non_null(b->address);
                assert_memory_equal(a->address, b->address, a->address_len);
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
        return layout_of(c).len;
}

#define MAX_SAMPLES 128

/*
 * Fills `out` with valid commands: every type; first strings of lengths 0..9
 * (those valid for the type), so that between them they need every amount of
 * padding from 0 to 7 bytes, and the longest of each kind; MEMBER client
 * addresses of the same lengths (the last field); and a MEMBER removal.
 * `text` holds COMMAND_NAME_MAX bytes without a NUL. Returns the count.
 */
static size_t samples(struct command *out, const char *text)
{
        static const uint8_t lens[] = {0,
                                       1,
                                       2,
                                       3,
                                       4,
                                       5,
                                       6,
                                       7,
                                       8,
                                       9,
                                       COMMAND_CLIENT_NAME_MAX,
                                       COMMAND_NAME_MAX};
        size_t i, k, n = 0;

        for (i = 0; i < N_TYPES; i++) {
                for (k = 0; k < sizeof lens; k++) {
                        struct command c = only_carried(full(all_types[i]));

                        if (!(carried(c.type) & T_NAME)) {
                                if (k > 0) {
                                        break;
                                }
                        } else {
                                c.name = text;
                                c.name_len = lens[k];
                        }
                        if (command_validate(&c) != 0) {
                                continue;
                        }
                        assert_true(n < MAX_SAMPLES);
                        out[n++] = c;
                        if (c.type == COMMAND_MEMBER) {
                                c = only_carried(full(COMMAND_MEMBER));
                                c.address = text;
                                c.address_len = lens[k];
                                assert_int_equal(command_validate(&c), 0);
                                assert_true(n < MAX_SAMPLES);
                                out[n++] = c;
                        }
                }
        }
        assert_true(n < MAX_SAMPLES);
        out[n++] = member_removal();
        return n;
}

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
                        if (in.type == COMMAND_MEMBER && in.target == 0) {
                                /* Member id 0 is no member: refused. */
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

/* Both defined lock modes and both MEMBER modes survive the codec. */
static void round_trip_modes(void **state)
{
        static const struct {
                int type;
                uint8_t mode;
        } cases[] = {
            {COMMAND_ACQUIRE, COMMAND_MODE_EXCLUSIVE},
            {COMMAND_ACQUIRE, COMMAND_MODE_SHARED},
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
                n = command_encode(&in, buf, sizeof buf);
                assert_true(n > 0);
                /* In both types mode sits just before the first string. */
                assert_int_equal(buf[layout_of(&in).name_at - 1],
                                 cases[i].mode);
                assert_int_equal(decode_exact(&out, buf, n, &copy), 0);
                assert_int_equal(out.mode, cases[i].mode);
                free(copy);
        }
}

/* --- Exact byte layout ------------------------------------------------------
 */

/* Written out by hand from the header, padding and all. The padding is
 * listed last in each, so `sizeof x_bytes - X_PAD` is the old, unpadded layout.
 */

static const uint8_t acquire_bytes[] = {
    0x01, 0x04, 0x00, 0x00,                         /* v1 ACQUIRE */
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
    0x01, 0x01, 0x00, 0x00,                         /* v1 OPEN */
    0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, /* nonce */
    0x30, 0x75, 0x00, 0x00,                         /* ttl_ms */
    0x03, 'c',  'l',  'i',                          /* client name */
    0x00, 0x00, 0x00, 0x00,                         /* padding: 20 -> 24 */
};
#define OPEN_PAD 4

static const uint8_t release_bytes[] = {
    0x01, 0x05, 0x00, 0x00,                         /* v1 RELEASE */
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
    0x01, 0x09, 0x00, 0x00,                         /* v1 CHECK */
    0x02, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80, /* token */
    0x01, 'q',                                      /* name */
    0x00, 0x00,                                     /* padding: 14 -> 16 */
};
#define CHECK_PAD 2

static const uint8_t member_set_bytes[] = {
    0x01, 0x0a, 0x00, 0x00,                         /* v1 MEMBER */
    0x02, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* target */
    0x00,                                           /* mode: set */
    0x03, 'a',  ':',  '1',                          /* raft address */
    0x04, 'b',  ':',  '2',  '2',                    /* client address */
    0x00, 0x00,                                     /* padding: 22 -> 24 */
};
#define MEMBER_SET_PAD 2

static const uint8_t member_remove_bytes[] = {
    0x01, 0x0a, 0x00, 0x00,                         /* v1 MEMBER */
    0x07, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80, /* target */
    0x01,                                           /* mode: remove */
    0x00,                                           /* raft address */
    0x00,                                           /* client address */
    0x00,                                           /* padding: 15 -> 16 */
};
#define MEMBER_REMOVE_PAD 1

static const uint8_t expire_bytes[] = {
    0x01, 0x03, 0x00, 0x00,                         /* v1 EXPIRE */
    0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01, /* session */
    0x00, 0x00, 0x00, 0x00,                         /* padding: 12 -> 16 */
};
#define EXPIRE_PAD 4

static const uint8_t query3_bytes[] = {
    0x01, 0x08, 0x00, 0x00, /* v1 QUERY */
    0x03, 'a',  'b',  'c',  /* name; 8 bytes already, no padding */
};
#define QUERY3_PAD 0

static const uint8_t query4_bytes[] = {
    0x01, 0x08, 0x00, 0x00,                   /* v1 QUERY */
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

static void layout_acquire(void **state)
{
        struct command c = acquire_cmd();

        (void)state;
        check_layout(&c, acquire_bytes, sizeof acquire_bytes);
}

static void layout_open(void **state)
{
        struct command c = open_cmd();

        (void)state;
        check_layout(&c, open_bytes, sizeof open_bytes);
}

/* RELEASE carries its token after the owner; CHECK before the name. */
static void layout_release_and_check(void **state)
{
        struct command release = release_cmd();
        struct command check = check_cmd();

        (void)state;
        check_layout(&release, release_bytes, sizeof release_bytes);
        check_layout(&check, check_bytes, sizeof check_bytes);
}

/* MEMBER: target, mode, raft address, client address; a removal carries
 * two empty strings. */
static void layout_member(void **state)
{
        struct command set = member_set_cmd();
        struct command removal = member_remove_cmd();

        (void)state;
        check_layout(&set, member_set_bytes, sizeof member_set_bytes);
        check_layout(&removal, member_remove_bytes, sizeof member_remove_bytes);
}

/* No padding when the fields end on a multiple of 8, up to 7 bytes when
 * they end just past one, and a command without strings is padded too. */
static void layout_padding(void **state)
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
static void layout_every_type_matches_header(void **state)
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
                assert_int_equal(got[0], COMMAND_VERSION);
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
static void encode_pads_to_eight(void **state)
{
        char text[COMMAND_NAME_MAX];
        struct command s[MAX_SAMPLES];
        unsigned pads[N_TYPES + 1] = {0};
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

/* COMMAND_MAX_SIZE is exactly the largest command (RELEASE, 255-byte name,
 * 300 bytes padded to 304); the largest MEMBER fits well within it. */
static void max_size_is_tight(void **state)
{
        char name[COMMAND_NAME_MAX];
        struct command c = only_carried(full(COMMAND_RELEASE));
        struct command m = only_carried(full(COMMAND_MEMBER));
        uint8_t buf[COMMAND_MAX_SIZE];

        (void)state;
        memset(name, 'z', sizeof name);
        c.name = name;
        c.name_len = COMMAND_NAME_MAX;
        assert_int_equal(COMMAND_MAX_SIZE, 304);
        assert_int_equal(layout_of(&c).body, 300);
        assert_int_equal(command_size(&c), COMMAND_MAX_SIZE);
        assert_int_equal(command_encode(&c, buf, sizeof buf), COMMAND_MAX_SIZE);

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

        /* MEMBER: each of the rules in command_validate. */
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
        static const uint8_t types[] = {0, 11, 12, 0x80, 255};
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

/* Every proper prefix of every valid encoding is malformed: those that cut
 * into the fields, and those that keep the fields but drop padding. */
static void decode_every_truncation(void **state)
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
static void decode_trailing_byte(void **state)
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

/* Padding is fewer than 8 bytes: 8 (or 16) more zero bytes keep the length
 * a multiple of 8 but are refused, as is any other number of them. */
static void decode_extra_zero_bytes(void **state)
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
static void decode_nonzero_padding(void **state)
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
static void decode_unpadded_layout(void **state)
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
        unsigned refused[N_TYPES + 1] = {0};
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

/*
 * A string length byte that runs past the end of the buffer is malformed,
 * not a bad name. A last string grown into the zero padding reads NUL bytes
 * (a bad lock name, a malformed client name or address); one shrunk by a
 * byte leaves a non-zero byte in the padding, which is malformed.
 */
static void decode_string_length_overruns(void **state)
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
                size_t ats[2];
                size_t n_at = 0;

                if (carried(s[j].type) & T_NAME) {
                        ats[n_at++] = l.name_at;
                }
                if (carried(s[j].type) & T_ADDRESS) {
                        ats[n_at++] = l.address_at;
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
                        for (grow = 1; last && grow <= len - l.body &&
                                       orig + grow <= UINT8_MAX;
                             grow++) {
                                buf[at] = (uint8_t)(orig + grow);
                                assert_int_equal(decode_bytes(buf, len),
                                                 has_lock_name(s[j].type)
                                                     ? BATON_ENAME
                                                     : BATON_EMALFORMED);
                                grown++;
                        }
                        if (last && orig > 0) {
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
static void decode_empty_lock_name(void **state)
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
static void decode_lock_name_with_nul(void **state)
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
static void decode_client_name_limits(void **state)
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
static void decode_client_name_with_nul(void **state)
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
static void decode_member_address_limits(void **state)
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
static void decode_member_address_with_nul(void **state)
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
static void decode_member_target_and_mode(void **state)
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
static void validate_agrees_with_decode(void **state)
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

/* validate's own verdicts, on commands built in memory. */
static void validate_verdicts(void **state)
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

        /* Types without a string ignore the name fields, and every type
         * but MEMBER ignores the address fields. */
        c = only_carried(full(COMMAND_CLOSE));
        c.name = NULL;
        c.name_len = 9;
        assert_int_equal(command_validate(&c), 0);
        for (i = 0; i < N_TYPES; i++) {
                if (all_types[i] == COMMAND_MEMBER) {
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

/* --- command_type_name --------------------------------------------------- */

static void type_names(void **state)
{
        static const int unknown[] = {0,   12, 13,      255,
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
        for (i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
                assert_string_equal(command_type_name(unknown[i]), "UNKNOWN");
        }
}

/* --- Deterministic fuzzing ----------------------------------------------- */

#define FUZZ_ROUNDS  20000
#define FUZZ_MAX_LEN 320

/* xorshift64: a tiny, seeded generator so every run sees the same inputs.
 * From a non-zero seed it never returns 0. */
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
                assert_int_equal(len % 8, 0);
                assert_int_equal(command_validate(&c), 0);
                assert_int_equal(command_size(&c), len);
                assert_int_equal(command_encode(&c, again, sizeof again), len);
                assert_memory_equal(again, bytes, len);
                if (c.name_len > 0) {
                        assert_true((const uint8_t *)c.name >= copy &&
                                    (const uint8_t *)c.name + c.name_len <=
                                        copy + len);
                }
                if (c.address_len > 0) {
                        assert_true((const uint8_t *)c.address >= copy &&
                                    (const uint8_t *)c.address +
                                            c.address_len <=
                                        copy + len);
                }
        }
        free(copy);
        return rv;
}

/*
 * Shapes the random bytes behind a plausible header (type buf[1]) into a
 * near-valid command: random string lengths (a bias towards the small
 * limits where they apply), a MEMBER mode of 0..2, then zero padding to a
 * multiple of 8, which becomes the new `*len`. Leaves `buf` alone if the
 * result would not fit.
 */
static void fit(uint8_t *buf, size_t *len, uint64_t *seed)
{
        struct command probe = {0};
        struct spec_layout l;
        size_t body, total;
        int type = buf[1];

        probe.type = (uint8_t)type;
        l = layout_of(&probe); /* strings empty: where each length goes */
        body = l.body;
        if (carried(type) & T_NAME) {
                size_t range = has_lock_name(type) ? 256 : 70;
                size_t n1 = (size_t)(next_rand(seed) % range);

                buf[l.name_at] = (uint8_t)n1;
                body = l.name_at + 1 + n1;
        }
        if (carried(type) & T_ADDRESS) {
                size_t n2 = (size_t)(next_rand(seed) % 70);

                buf[l.name_at - 1] = (uint8_t)(next_rand(seed) % 3);
                buf[body] = (uint8_t)n2;
                body += 1 + n2;
        }
        total = (body + 7) / 8 * 8;
        if (total > FUZZ_MAX_LEN) {
                return;
        }
        memset(buf + body, 0, total - body);
        *len = total;
}

/* Random bytes never crash decode; anything accepted re-encodes exactly. */
static void fuzz_random_bytes(void **state)
{
        uint64_t seed = 0x2545f4914f6cdd1dULL;
        uint8_t buf[FUZZ_MAX_LEN + 1];
        unsigned accepted = 0, by_code[4] = {0};
        unsigned accepted_type[N_TYPES + 1] = {0};
        int round;
        size_t i;

        (void)state;
        for (round = 0; round < FUZZ_ROUNDS; round++) {
                size_t len = (size_t)(next_rand(&seed) % (FUZZ_MAX_LEN + 1));
                int rv;

                for (i = 0; i < sizeof buf; i++) {
                        buf[i] = (uint8_t)next_rand(&seed);
                }
                /* Three rounds in four get a plausible header so that the
                 * fuzzer reaches the field and name checks; every other
                 * round is also shaped to the right length and padding. */
                if (round % 4 != 0 && len >= 4) {
                        buf[0] = COMMAND_VERSION;
                        buf[1] = (uint8_t)(next_rand(&seed) % 12);
                        buf[2] = 0;
                        buf[3] = round % 8 == 1 ? 1 : 0;
                        if (round % 2 == 0) {
                                fit(buf, &len, &seed);
                        }
                }
                rv = decode_and_reencode(buf, len);
                if (rv == 0) {
                        accepted++;
                        accepted_type[buf[1]]++;
                } else {
                        by_code[-rv == 3 ? 0 : -rv == 4 ? 1 : 2]++;
                }
        }
        /* The generator reached every outcome, and every type decoded. */
        assert_true(accepted > 0);
        assert_true(by_code[0] > 0); /* malformed */
        assert_true(by_code[1] > 0); /* version */
        assert_true(by_code[2] > 0); /* name */
        for (i = 0; i < N_TYPES; i++) {
                assert_true(accepted_type[all_types[i]] > 0);
        }
}

/* A valid command of a random type with random fields and strings; `l`
 * gets its reference layout. */
static size_t random_valid(uint64_t *seed, uint8_t *out, char *name,
                           char *address, struct spec_layout *l)
{
        struct command c;
        size_t i, n;

        c = full(all_types[next_rand(seed) % N_TYPES]);
        c.session = next_rand(seed);
        c.seq = next_rand(seed);
        c.ack = next_rand(seed);
        c.owner = next_rand(seed);
        c.token = next_rand(seed);
        c.target = next_rand(seed); /* never 0: a valid MEMBER id */
        c.nonce = next_rand(seed);
        c.ttl_ms = (uint32_t)next_rand(seed);
        c.wait_ms = (uint32_t)next_rand(seed);
        c.mode = (uint8_t)(next_rand(seed) % 2);
        c.name = name;
        c.address = address;
        if (c.type == COMMAND_OPEN) {
                c.name_len =
                    (uint8_t)(next_rand(seed) % (COMMAND_CLIENT_NAME_MAX + 1));
        } else if (c.type == COMMAND_MEMBER) {
                c.name_len =
                    (uint8_t)(1 + next_rand(seed) % COMMAND_ADDRESS_MAX);
                c.address_len =
                    (uint8_t)(1 + next_rand(seed) % COMMAND_ADDRESS_MAX);
                if (c.mode == COMMAND_MEMBER_REMOVE) {
                        c.name_len = c.address_len = 0;
                }
        } else {
                c.name_len = (uint8_t)(1 + next_rand(seed) % COMMAND_NAME_MAX);
        }
        for (i = 0; i < c.name_len; i++) {
                name[i] = (char)(1 + next_rand(seed) % 255);
        }
        for (i = 0; i < c.address_len; i++) {
                address[i] = (char)(1 + next_rand(seed) % 255);
        }
        c = only_carried(c);
        n = command_encode(&c, out, COMMAND_MAX_SIZE);
        assert_true(n > 0);
        *l = layout_of(&c);
        assert_int_equal(n, l->len);
        return n;
}

/* Single-byte mutations of valid commands never crash decode, whatever
 * still decodes re-encodes to the mutated bytes exactly, and a mutated
 * padding byte is always refused. */
static void fuzz_single_byte_mutations(void **state)
{
        uint64_t seed = 0x9e3779b97f4a7c15ULL;
        char name[COMMAND_NAME_MAX];
        char address[COMMAND_ADDRESS_MAX];
        unsigned accepted = 0, rejected = 0, in_padding = 0;
        int round;

        (void)state;
        for (round = 0; round < FUZZ_ROUNDS; round++) {
                uint8_t buf[COMMAND_MAX_SIZE];
                struct spec_layout l;
                size_t n = random_valid(&seed, buf, name, address, &l);
                size_t at = (size_t)(next_rand(&seed) % n);
                uint8_t flip = (uint8_t)(1 + next_rand(&seed) % 255);

                assert_int_equal(decode_and_reencode(buf, n), 0);
                buf[at] ^= flip;
                if (decode_and_reencode(buf, n) == 0) {
                        assert_true(at < l.body);
                        accepted++;
                } else {
                        rejected++;
                }
                if (at >= l.body) {
                        in_padding++;
                }
        }
        /* Mutated fields decode; mutated headers, lengths and padding do
         * not. */
        assert_true(accepted > 0);
        assert_true(rejected > 0);
        assert_true(in_padding > 0);
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
            cmocka_unit_test(layout_member),
            cmocka_unit_test(layout_padding),
            cmocka_unit_test(layout_every_type_matches_header),
            cmocka_unit_test(encode_pads_to_eight),
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
