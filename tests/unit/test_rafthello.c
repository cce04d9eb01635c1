/* Unit tests for the data directory's part of the raft hellos
 * (rafthello.c): the addition behind the address's NUL, as a node of
 * batond 0.1 and one of this build read it; the TLS hello and the verdict
 * arriving in any pieces; and the judge. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "../../src/server/raft/rafthello.h"

static const struct rafthello_ext ext = {UINT64_C(0x1122334455667788),
                                         UINT64_C(0x99aabbccddeeff01)};

static void field_round_trip(void **state)
{
        uint8_t field[ADDRESS_MAX];
        char address[ADDRESS_MAX + 1];
        struct rafthello_ext e;
        bool has = false;
        size_t n;

        (void)state;
        n = rafthello_field(field, sizeof field, "10.0.0.1:7001", &ext);
        assert_int_equal(n, 13 + 1 + RAFTHELLO_EXT_LEN);
        /* What batond 0.1 takes for the address: the C string. */
        assert_string_equal((const char *)field, "10.0.0.1:7001");
        assert_int_equal(
            rafthello_split(field, n, address, sizeof address, &e, &has), 0);
        assert_string_equal(address, "10.0.0.1:7001");
        assert_true(has);
        assert_memory_equal(&e, &ext, sizeof e);
}

static void field_without_addition(void **state)
{
        /* batond 0.1's TLS hello (no NUL) and libraft's TCP handshake
         * (NUL-padded to 8 bytes). */
        uint8_t tls[] = "10.0.0.1:7001";
        uint8_t tcp[16] = "10.0.0.1:7001";
        char address[ADDRESS_MAX + 1];
        struct rafthello_ext e;
        bool has = true;

        (void)state;
        assert_int_equal(
            rafthello_split(tls, 13, address, sizeof address, &e, &has), 0);
        assert_false(has);
        assert_string_equal(address, "10.0.0.1:7001");
        has = true;
        assert_int_equal(
            rafthello_split(tcp, sizeof tcp, address, sizeof address, &e, &has),
            0);
        assert_false(has);
        assert_int_equal(
            rafthello_split(tcp, 0, address, sizeof address, &e, &has), -1);
        assert_int_equal(rafthello_split(tcp, sizeof tcp, address, 5, &e, &has),
                         -1);
}

static void long_address_goes_alone(void **state)
{
        char address[ADDRESS_MAX + 1];
        uint8_t field[ADDRESS_MAX];
        bool has = true;
        size_t n;

        (void)state;
        /* 44 bytes fit with the addition under ADDRESS_MAX, 45 do not. */
        memset(address, 'a', 44);
        address[44] = '\0';
        assert_int_equal(rafthello_field(field, sizeof field, address, &ext),
                         ADDRESS_MAX);
        address[44] = 'a';
        address[45] = '\0';
        assert_int_equal(rafthello_field(field, sizeof field, address, &ext),
                         0);
        n = rafthello_own_field(field, sizeof field, address, &ext, &has);
        assert_false(has);
        assert_int_equal(n, 45);
        n = rafthello_own_field(field, sizeof field, "h:1", NULL, &has);
        assert_false(has);
        assert_int_equal(n, 3);
}

static void tls_hello_in_pieces(void **state)
{
        uint8_t field[ADDRESS_MAX], hello[RAFTHELLO_TLS_MAX + 5];
        struct rafthello_hello h;
        struct rafthello_in in;
        size_t len, i, n;
        bool done = false;
        long used;

        (void)state;
        n = rafthello_field(field, sizeof field, "127.0.0.1:9001", &ext);
        len = rafthello_tls_encode(hello, 7, field, n);
        memcpy(hello + len, "raft!", 5); /* raft's bytes follow */
        memset(&in, 0, sizeof in);
        memset(&h, 0, sizeof h);
        for (i = 0; i < len && !done; i++) {
                used = rafthello_tls_take(&in, hello + i, 1, &done, &h);
                assert_int_equal(used, 1);
        }
        assert_true(done);
        assert_int_equal(i, len);
        assert_int_equal(h.id, 7);
        assert_string_equal(h.address, "127.0.0.1:9001");
        assert_true(h.has_ext);
        assert_memory_equal(&h.ext, &ext, sizeof ext);
        /* All at once: the hello's bytes are taken, raft's left. */
        memset(&in, 0, sizeof in);
        used = rafthello_tls_take(&in, hello, len + 5, &done, &h);
        assert_true(done);
        assert_int_equal(used, (long)len);
}

static void not_a_hello(void **state)
{
        uint8_t field[] = "h:1", hello[RAFTHELLO_TLS_MAX];
        struct rafthello_hello h;
        struct rafthello_in in;
        bool done;
        size_t len;

        (void)state;
        len = rafthello_tls_encode(hello, 7, field, 3);
        hello[0] ^= 1;
        memset(&in, 0, sizeof in);
        assert_int_equal(rafthello_tls_take(&in, hello, len, &done, &h), -1);
        len = rafthello_tls_encode(hello, 0, field, 3); /* id 0 */
        memset(&in, 0, sizeof in);
        assert_int_equal(rafthello_tls_take(&in, hello, len, &done, &h), -1);
        len = rafthello_tls_encode(hello, 7, field, 0); /* no address */
        memset(&in, 0, sizeof in);
        assert_int_equal(rafthello_tls_take(&in, hello, len, &done, &h), -1);
        hello[16] = ADDRESS_MAX + 1; /* too long */
        memset(&in, 0, sizeof in);
        assert_int_equal(rafthello_tls_take(&in, hello, 18, &done, &h), -1);
}

static void verdicts(void **state)
{
        struct rafthello_verdict v = {RAFTHELLO_INCARNATION, 1, 2, 3}, w;
        uint8_t buf[RAFTHELLO_VERDICT_LEN + 4];
        struct rafthello_in in;
        bool done = false;
        size_t i;

        (void)state;
        rafthello_verdict_encode(buf, &v);
        memset(&in, 0, sizeof in);
        for (i = 0; i < RAFTHELLO_VERDICT_LEN; i++) {
                assert_int_equal(
                    rafthello_verdict_take(&in, buf + i, 1, &done, &w), 1);
                assert_int_equal(done, i + 1 == RAFTHELLO_VERDICT_LEN);
        }
        /* Field by field: the structs' padding is not theirs to compare. */
        assert_int_equal(w.code, v.code);
        assert_int_equal(w.cluster, v.cluster);
        assert_int_equal(w.incarnation, v.incarnation);
        assert_int_equal(w.known, v.known);
        /* REMOVED, the newest code, decodes. */
        buf[3] = RAFTHELLO_REMOVED;
        memset(&in, 0, sizeof in);
        assert_int_equal(
            rafthello_verdict_take(&in, buf, RAFTHELLO_VERDICT_LEN, &done, &w),
            RAFTHELLO_VERDICT_LEN);
        assert_int_equal(w.code, RAFTHELLO_REMOVED);
        /* A code this build does not know, or no verdict at all. */
        buf[3] = 9;
        memset(&in, 0, sizeof in);
        assert_int_equal(
            rafthello_verdict_take(&in, buf, sizeof buf, &done, &w), -1);
        memset(buf, 0, sizeof buf);
        memset(&in, 0, sizeof in);
        assert_int_equal(
            rafthello_verdict_take(&in, buf, sizeof buf, &done, &w), -1);
}

static void judge(void **state)
{
        struct dirid self;

        (void)state;
        memset(&self, 0, sizeof self);
        self.cluster = 10;
        self.node = 1;
        self.incarnation = 100;
        dirid_remember(&self, 2, 200);
        assert_int_equal(rafthello_judge(&self, 2, true, 10, 200),
                         RAFTHELLO_OK);
        assert_int_equal(rafthello_judge(&self, 2, true, 11, 200),
                         RAFTHELLO_CLUSTER);
        /* Not knowing a cluster yet is no difference. */
        assert_int_equal(rafthello_judge(&self, 2, true, 0, 200), RAFTHELLO_OK);
        /* A voter with another directory, and not a voter. */
        assert_int_equal(rafthello_judge(&self, 2, true, 10, 201),
                         RAFTHELLO_INCARNATION);
        assert_int_equal(rafthello_judge(&self, 2, false, 10, 201),
                         RAFTHELLO_OK);
        /* Never heard of: anything goes. */
        assert_int_equal(rafthello_judge(&self, 3, true, 10, 300),
                         RAFTHELLO_OK);
        self.cluster = 0;
        assert_int_equal(rafthello_judge(&self, 3, true, 11, 300),
                         RAFTHELLO_OK);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(field_round_trip),
            cmocka_unit_test(field_without_addition),
            cmocka_unit_test(long_address_goes_alone),
            cmocka_unit_test(tls_hello_in_pieces),
            cmocka_unit_test(not_a_hello),
            cmocka_unit_test(verdicts),
            cmocka_unit_test(judge),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
