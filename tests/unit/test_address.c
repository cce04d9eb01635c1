/* Unit tests of the numeric "a.b.c.d:port" address parser. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>

#include "../../include/baton.h"
#include "../../src/lib/address.h"

static void test_accepts_numeric_ipv4_with_port(void **state)
{
        struct sockaddr_in a;

        (void)state;
        assert_int_equal(address_parse("127.0.0.1:7101", &a), 0);
        assert_int_equal(a.sin_family, AF_INET);
        assert_int_equal(ntohs(a.sin_port), 7101);
        assert_int_equal(ntohl(a.sin_addr.s_addr), 0x7f000001);
        assert_int_equal(address_parse("0.0.0.0:1", &a), 0);
        assert_int_equal(address_parse("255.255.255.255:65535", &a), 0);
}

static void test_refuses_everything_else(void **state)
{
        static const char *const bad[] = {
            "",
            "127.0.0.1",
            "127.0.0.1:",
            ":7101",
            "localhost:1",
            "127.0.0.1:0",
            "127.0.0.1:65536",
            "127.0.0.1:-1",
            "127.0.0.1:12x",
            "256.0.0.1:1",
            "1.2.3:4",
            "::1:7101",
            "127.0.0.1:7101 ",
            "a very long host name that "
            "does not fit in the buffer:1",
        };
        struct sockaddr_in a;
        size_t i;

        (void)state;
        for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
                assert_int_equal(address_parse(bad[i], &a), BATON_EINVAL);
        }
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_accepts_numeric_ipv4_with_port),
            cmocka_unit_test(test_refuses_everything_else),
        };
        return cmocka_run_group_tests_name("address", tests, NULL, NULL);
}
