/* Cases of test_proto on the body readers, and fuzzing. */
#include "test_proto_bodies.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../include/baton.h"
#include "../../src/proto/command.h"
#include "../../src/proto/proto.h"
#include "../../src/proto/reply.h"
#include "../../src/proto/query.h"
#include "../../src/proto/member.h"
#include "../../src/proto/status.h"
#include "../../src/proto/keepalive.h"
#include "../lib/failalloc.h"
#include "protofix.h"

/* --- Strict body readers --------------------------------------------------
 */

/* Every truncation of every body is refused, and so is one byte more. */
void bodies_truncated_or_trailing(void **state)
{
        struct frame *corpus = make_corpus();
        uint8_t body[FRAME_MAX + 1];
        size_t len, k;
        uint8_t type;
        int i;

        (void)state;
        for (i = 0; i < N_CORPUS; i++) {
                type = corpus[i].b[1];
                len = corpus[i].len - PROTO_HEADER_SIZE;
                memcpy(body, corpus[i].b + PROTO_HEADER_SIZE, len);
                assert_int_equal(read_body(type, body, len), 0);
                for (k = 0; k < len; k++) {
                        int rv = read_body(type, body, k);

                        if (type == PROTO_COMMAND) {
                                assert_true(rv < 0);
                        } else {
                                assert_int_equal(rv, BATON_EMALFORMED);
                        }
                }
                body[len] = 0;
                assert_true(read_body(type, body, len + 1) < 0);
                if (type != PROTO_COMMAND) {
                        assert_int_equal(read_body(type, body, len + 1),
                                         BATON_EMALFORMED);
                }
        }
        free(corpus);
}

/* Fixed-size bodies must be exactly their size. */
void fixed_bodies_exact(void **state)
{
        uint8_t body[64] = {0};
        struct proto_result res;
        uint64_t u64;
        uint32_t u32, revoked;
        size_t k;

        (void)state;
        for (k = 0; k < sizeof body; k++) {
                assert_int_equal(proto_read_u64(body, k, &u64),
                                 k == 8 ? 0 : BATON_EMALFORMED);
                assert_int_equal(
                    proto_read_keepalive_ok(body, k, 0, &u32, &revoked),
                    k == 4 ? 0 : BATON_EMALFORMED);
                assert_int_equal(proto_read_result(body, k, 0, &res),
                                 k == 45 ? 0 : BATON_EMALFORMED);
        }
        assert_int_equal(proto_read_u64(NULL, 0, &u64), BATON_EMALFORMED);
}

/* Lock names in QUERY and CHECK follow command.h, with their own code. */
void bodies_bad_lock_names(void **state)
{
        uint8_t body[8 + 1 + 8];
        struct proto_string s;
        uint64_t token;

        (void)state;
        body[0] = 0; /* empty name */
        assert_int_equal(proto_read_query(body, 1, &s), BATON_ENAME);
        memcpy(body, "\3a\0b", 4); /* NUL inside */
        assert_int_equal(proto_read_query(body, 4, &s), BATON_ENAME);
        memcpy(body, "\3abc", 4);
        assert_int_equal(proto_read_query(body, 4, &s), 0);

        memset(body, 0, 8);
        body[8] = 0;
        assert_int_equal(proto_read_check(body, 9, &s, &token), BATON_ENAME);
        memcpy(body + 8, "\2\0x", 3);
        assert_int_equal(proto_read_check(body, 11, &s, &token), BATON_ENAME);
        memcpy(body + 8, "\2yx", 3);
        assert_int_equal(proto_read_check(body, 11, &s, &token), 0);
        /* A short body is malformed, not a bad name. */
        assert_int_equal(proto_read_check(body, 10, &s, &token),
                         BATON_EMALFORMED);
}

/* Strings other than lock names: no NUL, no longer than their limit. */
void bodies_bad_strings(void **state)
{
        uint8_t body[FRAME_MAX];
        struct proto_status *st = malloc(sizeof *st);
        struct proto_string a, b;
        uint64_t id;
        size_t n;
        int status;

        (void)state;
        assert_non_null(st);
        /* NOT_LEADER with a 65-byte address. */
        memset(body, 0, 8);
        body[8] = PROTO_ADDRESS_MAX + 1;
        memset(body + 9, '7', PROTO_ADDRESS_MAX + 1);
        n = 9 + PROTO_ADDRESS_MAX + 1;
        assert_int_equal(proto_read_not_leader(body, n, &id, &a),
                         BATON_EMALFORMED);
        body[8] = PROTO_ADDRESS_MAX;
        assert_int_equal(proto_read_not_leader(body, n - 1, &id, &a), 0);
        body[9] = '\0';
        assert_int_equal(proto_read_not_leader(body, n - 1, &id, &a),
                         BATON_EMALFORMED);

        /* ERROR with a NUL in its message. */
        memcpy(body, "\xfd\xff\xff\xff\3a\0b", 8);
        assert_int_equal(proto_read_error(body, 8, &status, &a),
                         BATON_EMALFORMED);
        body[6] = 'c';
        assert_int_equal(proto_read_error(body, 8, &status, &a), 0);
        assert_int_equal(status, BATON_EMALFORMED);

        /* MEMBER_ADD: both addresses present and in range. */
        memset(body, 0, 8);
        memcpy(body + 8, "\0\3a:1", 5);
        assert_int_equal(proto_read_member_add(body, 13, &id, &a, &b),
                         BATON_EMALFORMED);
        memcpy(body + 8, "\3a:1\0", 5);
        assert_int_equal(proto_read_member_add(body, 13, &id, &a, &b),
                         BATON_EMALFORMED);
        memcpy(body + 8, "\3a:1\3b:2", 8);
        assert_int_equal(proto_read_member_add(body, 16, &id, &a, &b), 0);
        body[8] = PROTO_ADDRESS_MAX + 1;
        memset(body + 9, 'x', PROTO_ADDRESS_MAX + 1);
        body[9 + PROTO_ADDRESS_MAX + 1] = 1;
        body[9 + PROTO_ADDRESS_MAX + 2] = 'y';
        assert_int_equal(
            proto_read_member_add(body, 9 + PROTO_ADDRESS_MAX + 3, &id, &a, &b),
            BATON_EMALFORMED);

        /* STATUS_REPLY with too many members, however many bytes follow. */
        memset(body, 0, sizeof body);
        body[73] = PROTO_MAX_MEMBERS + 1;
        for (n = 74; n < sizeof body; n += 11) {
                assert_int_equal(proto_read_status(body, n, 0, st, NULL),
                                 BATON_EMALFORMED);
        }
        body[73] = 255;
        assert_int_equal(proto_read_status(body, sizeof body, 0, st, NULL),
                         BATON_EMALFORMED);
        /* PROTO_MAX_MEMBERS empty members: fine. */
        body[73] = PROTO_MAX_MEMBERS;
        assert_int_equal(
            proto_read_status(body, 74 + PROTO_MAX_MEMBERS * 11, 0, st, NULL),
            0);
        assert_int_equal(st->n_members, PROTO_MAX_MEMBERS);
        /* A member address one byte too long. */
        body[74 + 9] = PROTO_ADDRESS_MAX + 1;
        assert_int_equal(proto_read_status(body,
                                           74 + PROTO_MAX_MEMBERS * 11 +
                                               PROTO_ADDRESS_MAX + 1,
                                           0, st, NULL),
                         BATON_EMALFORMED);
        free(st);
}

/* --- Fuzz -----------------------------------------------------------------
 */

/* Copies a decoded string into a C string for the writers that take one. */
static const char *cstr(struct proto_string s, char *buf)
{
        memcpy(buf, s.p, s.len);
        buf[s.len] = '\0';
        return buf;
}

/*
 * Passes `body` to every body reader. Whatever a reader accepts must be
 * exactly what its writer produces from the decoded values: decoding is
 * strict, so there is only one encoding of anything. Returns how many
 * readers accepted.
 */
static int read_all(const uint8_t *body, size_t len, struct proto_status *st)
{
        char c1[256], c2[256];
        uint8_t out[FRAME_MAX];
        struct proto_string s1, s2;
        struct proto_result res;
        uint64_t u64;
        uint32_t u32, revoked;
        int status, ok = 0;
        size_t n;

#define SAME(expr)                                                             \
        do {                                                                   \
                n = (expr);                                                    \
                assert_int_equal(n, PROTO_HEADER_SIZE + len);                  \
                if (len > 0) {                                                 \
                        assert_memory_equal(out + PROTO_HEADER_SIZE, body,     \
                                            len);                              \
                }                                                              \
                ok++;                                                          \
        } while (0)

        if (proto_read_u64(body, len, &u64) == 0) {
                SAME(proto_write_keepalive(out, sizeof out, 1, 0, u64));
        }
        if (proto_read_keepalive_ok(body, len, 0, &u32, &revoked) == 0) {
                SAME(proto_write_keepalive_ok(out, sizeof out, 1, 0, u32, 0));
        }
        if (proto_read_query(body, len, &s1) == 0) {
                SAME(proto_write_query(out, sizeof out, 1, 0, s1.p, s1.len));
        }
        if (proto_read_check(body, len, &s1, &u64) == 0) {
                SAME(proto_write_check(out, sizeof out, 1, s1.p, s1.len, u64));
        }
        if (proto_read_member_add(body, len, &u64, &s1, &s2) == 0) {
                SAME(proto_write_member_add(out, sizeof out, 1, u64,
                                            cstr(s1, c1), cstr(s2, c2)));
        }
        if (proto_read_result(body, len, 0, &res) == 0) {
                SAME(proto_write_result(out, sizeof out, 1, 0, &res));
        }
        if (proto_read_not_leader(body, len, &u64, &s1) == 0) {
                SAME(proto_write_not_leader(out, sizeof out, 1, u64,
                                            cstr(s1, c1)));
        }
        if (proto_read_error(body, len, &status, &s1) == 0) {
                SAME(proto_write_error(out, sizeof out, 1, status,
                                       cstr(s1, c1)));
        }
        if (proto_read_status(body, len, 0, st, NULL) == 0) {
                assert_true(st->n_members <= PROTO_MAX_MEMBERS);
                SAME(proto_write_status(out, sizeof out, 1, 0, st, NULL));
        }
#undef SAME
        return ok;
}

/* A random input: a corpus frame mutated a little, several glued together,
 * a valid header with random body, or plain noise. */
static size_t random_input(uint8_t *buf, size_t cap, uint64_t *rng,
                           const struct frame *corpus)
{
        size_t len = 0, k, flips;
        const struct frame *f;

        switch (rand_below(rng, 4)) {
        case 0: /* mutated frames */
        case 1:
                do {
                        f = &corpus[rand_below(rng, N_CORPUS)];
                        if (len + f->len > cap) {
                                break;
                        }
                        memcpy(buf + len, f->b, f->len);
                        flips = rand_below(rng, 4);
                        for (k = 0; k < flips; k++) {
                                buf[len + rand_below(rng, f->len)] =
                                    (uint8_t)next_rand(rng);
                        }
                        len += f->len;
                        if (rand_below(rng, 4) == 0) {
                                len -= rand_below(rng, f->len);
                        }
                } while (rand_below(rng, 3) != 0);
                break;
        case 2: { /* a good header, random length and body */
                struct proto_header h = {PROTO_VERSION, 0, 0, 0, 0};

                f = &corpus[rand_below(rng, N_CORPUS)];
                h.type = f->b[1];
                h.length = (uint32_t)rand_below(rng, 128);
                h.id = next_rand(rng);
                proto_header_encode(&h, buf);
                len = PROTO_HEADER_SIZE + rand_below(rng, 160);
                for (k = PROTO_HEADER_SIZE; k < len; k++) {
                        buf[k] = (uint8_t)(rand_below(rng, 3) == 0
                                               ? next_rand(rng)
                                               : rand_below(rng, 8));
                }
                break;
        }
        default: /* noise */
                len = rand_below(rng, 300);
                for (k = 0; k < len; k++) {
                        buf[k] = (uint8_t)next_rand(rng);
                }
                break;
        }
        return len;
}

/* ~20k random inputs through the reader in random splits; every body it
 * yields goes through every body reader. Nothing may crash, read out of
 * bounds or leak, and every feed must keep the reader's promises. */
void fuzz_reader_and_bodies(void **state)
{
        struct frame *corpus = make_corpus();
        struct proto_status *st = malloc(sizeof *st);
        size_t cap = 4 * FRAME_MAX;
        uint8_t *buf = malloc(cap);
        uint64_t rng = 0x2545f4914f6cdd1dULL;
        unsigned long frames = 0, accepted = 0, errors = 0;
        struct proto_reader r;
        struct failalloc fa;
        int iter;

        (void)state;
        assert_non_null(st);
        assert_non_null(buf);
        failalloc_init(&fa);
        for (iter = 0; iter < 20000; iter++) {
                size_t len = random_input(buf, cap, &rng, corpus);
                uint32_t max_body = rand_below(&rng, 2) ? PROTO_MAX_BODY : 200;
                size_t off = 0;

                proto_reader_init(&r, max_body, &fa.mem);
                while (off < len) {
                        size_t chunk = 1 + rand_below(&rng, len - off);
                        long n = proto_reader_feed(&r, buf + off, chunk);

                        if (n < 0) {
                                assert_int_equal(n, r.err);
                                assert_true(n == BATON_EVERSION ||
                                            n == BATON_EMALFORMED ||
                                            n == BATON_ETOOBIG);
                                assert_false(r.ready);
                                assert_int_equal(
                                    proto_reader_feed(&r, buf, len), n);
                                errors++;
                                break;
                        }
                        assert_true(n > 0 && (size_t)n <= chunk);
                        off += (size_t)n;
                        if (r.ready) {
                                assert_true(r.h.length <= max_body);
                                assert_true(r.body_len == r.h.length);
                                assert_true(r.body_cap >= r.body_len);
                                assert_int_equal(r.h.version, PROTO_VERSION);
                                assert_int_equal(r.h.flags, 0);
                                assert_string_not_equal(
                                    proto_type_name(r.h.type), "UNKNOWN");
                                accepted += (unsigned long)read_all(
                                    r.body, r.body_len, st);
                                frames++;
                        }
                }
                assert_true(fa.live <= 1);
                proto_reader_close(&r);
                assert_int_equal(fa.live, 0);

                /* The raw input as a body, too. */
                accepted += (unsigned long)read_all(
                    buf, len > FRAME_MAX ? FRAME_MAX : len, st);
        }
        /* The inputs exercised both sides. */
        assert_true(frames > 8000);
        assert_true(accepted > 4000);
        assert_true(errors > 8000);
        free(buf);
        free(st);
        free(corpus);
}
