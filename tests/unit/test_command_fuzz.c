/* Cases of test_command that fuzz command_decode. */
#include "test_command_fuzz.h"

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
        if (rv == 0 && bytes[0] != spec_version(&c)) {
                /* An older version is read, never written (a version 2
                 * ACQUIRE of mode 2 is written as 3): no canonical
                 * encoding to compare with. */
                assert_true(bytes[0] >= COMMAND_VERSION_MIN);
                free(copy);
                return rv;
        }
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
        if (carried(type) & T_HOLD) {
                body += 4; /* an EXTEND's hold time: the random bytes */
        }
        total = (body + 7) / 8 * 8;
        if (total > FUZZ_MAX_LEN) {
                return;
        }
        memset(buf + body, 0, total - body);
        *len = total;
}

/* Random bytes never crash decode; anything accepted re-encodes exactly. */
void fuzz_random_bytes(void **state)
{
        uint64_t seed = 0x2545f4914f6cdd1dULL;
        uint8_t buf[FUZZ_MAX_LEN + 1];
        unsigned accepted = 0, by_code[4] = {0};
        unsigned accepted_type[256] = {0}; /* by type byte */
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
                        buf[0] = (uint8_t)(round % 3 == 0   ? 3
                                           : round % 5 == 0 ? 4
                                                            : 2);
                        buf[1] = (uint8_t)(next_rand(&seed) %
                                           (COMMAND_EXPIRE_HOLD + 2));
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
        if (c.type == COMMAND_OPEN || c.type == COMMAND_REVOKE) {
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
void fuzz_single_byte_mutations(void **state)
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
