/* What the command codec's tests check against. */
#include "cmdspec.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

const int all_types[N_TYPES] = {
    COMMAND_OPEN,        COMMAND_CLOSE,    COMMAND_EXPIRE,    COMMAND_ACQUIRE,
    COMMAND_RELEASE,     COMMAND_CANCEL,   COMMAND_TIMEOUT,   COMMAND_QUERY,
    COMMAND_CHECK,       COMMAND_MEMBER,   COMMAND_REVOKE,    COMMAND_UNBLOCK,
    COMMAND_REVOKE_LOCK, COMMAND_PROCLAIM, COMMAND_SET_VALUE, COMMAND_EXTEND,
    COMMAND_EXPIRE_HOLD,
};

bool carries_value(const struct command *c)
{
        return c->type == COMMAND_PROCLAIM || c->type == COMMAND_SET_VALUE ||
               (c->type == COMMAND_ACQUIRE &&
                (c->mode == COMMAND_MODE_ELECTION || c->value_len > 0 ||
                 c->hold_ms > 0));
}

bool carries_hold(const struct command *c)
{
        return c->type == COMMAND_EXTEND ||
               (c->type == COMMAND_ACQUIRE &&
                c->mode != COMMAND_MODE_ELECTION &&
                (c->value_len > 0 || c->hold_ms > 0));
}

unsigned carried(int type)
{
        switch (type) {
        case COMMAND_OPEN:
                return T_NONCE | T_TTL | T_DELAY | T_NAME;
        case COMMAND_CLOSE:
                return T_SESSION | T_SEQ | T_ACK;
        case COMMAND_EXPIRE:
                return T_SESSION | T_DELAY;
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
        case COMMAND_REVOKE:
                return T_SESSION | T_DELAY | T_NAME; /* the name: who asked */
        case COMMAND_UNBLOCK:
                return T_TARGET | T_NAME;
        case COMMAND_REVOKE_LOCK: /* the address: who asked */
                return T_SESSION | T_DELAY | T_TOKEN | T_NAME | T_ADDRESS;
        case COMMAND_PROCLAIM:
        case COMMAND_SET_VALUE:
                return T_SESSION | T_SEQ | T_ACK | T_OWNER | T_TOKEN | T_NAME |
                       T_VALUE;
        case COMMAND_EXTEND:
                return T_SESSION | T_SEQ | T_ACK | T_OWNER | T_TOKEN | T_NAME |
                       T_HOLD;
        case COMMAND_EXPIRE_HOLD:
                return T_SESSION | T_DELAY | T_TOKEN | T_TARGET | T_NAME;
        default:
                return 0;
        }
}

/* Types whose first string is a lock name (not a client name or address). */
bool has_lock_name(int type)
{
        return type != COMMAND_OPEN && type != COMMAND_MEMBER &&
               type != COMMAND_REVOKE && (carried(type) & T_NAME) != 0;
}

/* The shortest and longest valid first string of `type` (for MEMBER, of a
 * set: a removal has both addresses empty). 0 and 0 without a string. */
unsigned name_min(int type)
{
        return has_lock_name(type) || type == COMMAND_MEMBER ? 1 : 0;
}

unsigned name_max(int type)
{
        if (type == COMMAND_OPEN || type == COMMAND_REVOKE) {
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
uint8_t spec_version(const struct command *c)
{
        if (c->type == COMMAND_SET_VALUE || c->type == COMMAND_EXTEND ||
            c->type == COMMAND_EXPIRE_HOLD ||
            (c->type == COMMAND_ACQUIRE && c->mode != COMMAND_MODE_ELECTION &&
             (c->value_len > 0 || c->hold_ms > 0))) {
                return 4;
        }
        return c->type == COMMAND_REVOKE || c->type == COMMAND_UNBLOCK ||
                       c->type == COMMAND_REVOKE_LOCK ||
                       c->type == COMMAND_PROCLAIM ||
                       ((c->type == COMMAND_EXPIRE ||
                         c->type == COMMAND_OPEN) &&
                        c->delay_ms != 0) ||
                       (c->type == COMMAND_ACQUIRE &&
                        (c->mode == COMMAND_MODE_SEMAPHORE ||
                         c->mode == COMMAND_MODE_ELECTION))
                   ? 3
                   : 2;
}

struct spec_layout spec_layout(const struct command *c, uint8_t *out)
{
        struct spec s = {out, 0};
        struct spec_layout l = {0, 0, 0, 0, 0, 0};
        bool has_string = true;

        le(&s, spec_version(c), 1);
        le(&s, c->type, 1);
        le(&s, 0, 2);
        switch (c->type) {
        case COMMAND_OPEN:
                le(&s, c->nonce, 8);
                le(&s, c->ttl_ms, 4);
                if (c->hash != NULL) {
                        memcpy(s.p + s.len, c->hash, COMMAND_HASH_SIZE);
                } else {
                        memset(s.p + s.len, 0, COMMAND_HASH_SIZE);
                }
                s.len += COMMAND_HASH_SIZE;
                if (spec_version(c) >= 3) {
                        le(&s, c->delay_ms, 4); /* its own lock-delay */
                }
                break;
        case COMMAND_CLOSE:
                le(&s, c->session, 8);
                le(&s, c->seq, 8);
                le(&s, c->ack, 8);
                has_string = false;
                break;
        case COMMAND_EXPIRE:
                le(&s, c->session, 8);
                if (spec_version(c) >= 3) {
                        le(&s, c->delay_ms, 4); /* a lock-delay */
                }
                has_string = false;
                break;
        case COMMAND_ACQUIRE:
                le(&s, c->session, 8);
                le(&s, c->seq, 8);
                le(&s, c->ack, 8);
                le(&s, c->owner, 8);
                le(&s, c->wait_ms, 4);
                le(&s, c->mode, 1);
                if (spec_version(c) >= 3) {
                        le(&s, c->permits, 4);
                        le(&s, c->limit, 4);
                }
                break;
        case COMMAND_RELEASE:
        case COMMAND_PROCLAIM:
        case COMMAND_SET_VALUE:
        case COMMAND_EXTEND:
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
        case COMMAND_REVOKE:
                le(&s, c->session, 8);
                le(&s, c->delay_ms, 4);
                break;
        case COMMAND_UNBLOCK:
                le(&s, c->target, 8);
                break;
        case COMMAND_REVOKE_LOCK:
        case COMMAND_EXPIRE_HOLD: /* and then its target */
                le(&s, c->session, 8);
                le(&s, c->delay_ms, 4);
                le(&s, c->token, 8);
                le(&s, c->target, c->type == COMMAND_EXPIRE_HOLD ? 8 : 0);
                break;
        default:
                has_string = false;
                break;
        }
        if (has_string) {
                l.name_at = s.len;
                string(&s, c->name, c->name_len);
        }
        if (carries_value(c)) {
                l.value_at = s.len;
                string(&s, c->value, c->value_len);
        }
        if (carries_hold(c)) {
                l.hold_at = s.len;
                le(&s, c->hold_ms, 4);
        }
        if (c->type == COMMAND_MEMBER || c->type == COMMAND_REVOKE_LOCK) {
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

size_t spec_encode(const struct command *c, uint8_t *out)
{
        return spec_layout(c, out).len;
}

/* The reference layout of `c`, without keeping the bytes. */
struct spec_layout layout_of(const struct command *c)
{
        uint8_t scratch[SPEC_MAX];

        return spec_layout(c, scratch);
}

/* --- Helpers ------------------------------------------------------------- */

static const char lock_name[] = "orders/2024/eu-west";
static const char client_name[] = "worker-7@host";
static const char raft_address[] = "10.0.0.1:7001";
static const char client_address[] = "10.0.0.1:7101";
static const char value[] = "http://10.0.0.9:8080/";

/* A command of `type` with every field of the struct set, carried or not,
 * to a distinct value whose bytes all differ. A MEMBER is a set. */
struct command full(int type)
{
        struct command c;

        memset(&c, 0, sizeof c);
        c.type = (uint8_t)type;
        c.mode = COMMAND_MODE_SHARED;
        c.ttl_ms = 0x1a2b3c4dU;
        c.delay_ms = 0x3c4d5e6fU;
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
        c.value = value;
        c.value_len = sizeof value - 1;
        /* An EXTEND's hold time; an ACQUIRE's would make it version 4,
         * as a value does: the tests of hold times add one. */
        c.hold_ms = type == COMMAND_EXTEND ? 0x7a8b9cadU : 0;
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
struct command only_carried(struct command c)
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
        if (!(f & T_DELAY)) {
                c.delay_ms = 0;
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
        if (!carries_value(&c)) {
                c.value = NULL;
                c.value_len = 0;
        }
        if (!carries_hold(&c)) {
                c.hold_ms = 0;
        }
        return c;
}

/* A MEMBER removal: both addresses empty. */
struct command member_removal(void)
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
void assert_same(const struct command *a, const struct command *b)
{
        assert_int_equal(a->type, b->type);
        assert_int_equal(a->mode, b->mode);
        assert_int_equal(a->ttl_ms, b->ttl_ms);
        assert_int_equal(a->wait_ms, b->wait_ms);
        assert_int_equal(a->permits, b->permits);
        assert_int_equal(a->delay_ms, b->delay_ms);
        assert_int_equal(a->limit, b->limit);
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
        if (a->type == COMMAND_OPEN) {
                static const uint8_t zero[COMMAND_HASH_SIZE];
                assert_memory_equal(a->hash != NULL ? a->hash : zero,
                                    b->hash != NULL ? b->hash : zero,
                                    COMMAND_HASH_SIZE);
        }
        assert_int_equal(a->hold_ms, b->hold_ms);
        assert_int_equal(a->value_len, b->value_len);
        if (a->value_len > 0) {
                assert_non_null(a->value);
                assert_non_null(b->value);
                assert_memory_equal(a->value, b->value, a->value_len);
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
int decode_exact(struct command *c, const uint8_t *bytes, size_t len,
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

int decode_bytes(const uint8_t *bytes, size_t len)
{
        struct command c;

        return decode_exact(&c, bytes, len, NULL);
}

/* The encoded size the header's table gives for `c`. */
size_t expected_size(const struct command *c)
{
        return layout_of(c).len;
}

size_t samples(struct command *out, const char *text)
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
        /* An EXPIRE without a delay: version 2, and shorter. */
        assert_true(n < MAX_SAMPLES);
        out[n] = only_carried(full(COMMAND_EXPIRE));
        out[n++].delay_ms = 0;
        /* An election's candidate, whose value comes after its name, and
         * one with the longest value. */
        for (k = 0; k < 2; k++) {
                assert_true(n < MAX_SAMPLES);
                out[n] = full(COMMAND_ACQUIRE);
                out[n].mode = COMMAND_MODE_ELECTION;
                out[n] = only_carried(out[n]);
                if (k == 1) {
                        out[n].value = text;
                        out[n].value_len = COMMAND_VALUE_MAX;
                }
                assert_int_equal(command_validate(&out[n]), 0);
                n++;
        }
        return n;
}
