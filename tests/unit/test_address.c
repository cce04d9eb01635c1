/* Unit tests of the address parser: host:port and [ipv6]:port. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "../../include/baton.h"
#include "../../src/lib/address.h"

static void accepts(const char *s, enum address_kind kind, const char *host,
                    unsigned port)
{
        struct address a;

        if (address_parse(s, &a) != 0) {
                fail_msg("'%s' refused: %s", s, a.errmsg);
        }
        assert_int_equal(a.kind, kind);
        assert_string_equal(a.host, host);
        assert_int_equal(a.port, port);
}

static void refuses(const char *s, const char *why)
{
        struct address a;

        if (address_parse(s, &a) != BATON_EINVAL) {
                fail_msg("'%s' accepted", s);
        }
        assert_non_null(a.errmsg);
        if (strstr(a.errmsg, why) == NULL) {
                fail_msg("'%s': '%s' does not say '%s'", s, a.errmsg, why);
        }
}

static void test_ipv4(void **state)
{
        struct address a;

        (void)state;
        accepts("127.0.0.1:7101", ADDRESS_IPV4, "127.0.0.1", 7101);
        accepts("0.0.0.0:1", ADDRESS_IPV4, "0.0.0.0", 1);
        accepts("255.255.255.255:65535", ADDRESS_IPV4, "255.255.255.255",
                65535);
        assert_int_equal(address_parse("10.0.0.2:80", &a), 0);
        assert_string_equal(a.service, "80");
        refuses("256.0.0.1:1", "numeric IPv4");
        refuses("1.2.3:4", "numeric IPv4");
        refuses("1.2.3.4.5:4", "numeric IPv4");
        refuses("01.2.3.4:4", "numeric IPv4");
        refuses("1..3.4:4", "numeric IPv4");
}

static void test_ipv6(void **state)
{
        (void)state;
        accepts("[::1]:7101", ADDRESS_IPV6, "::1", 7101);
        accepts("[::]:1", ADDRESS_IPV6, "::", 1);
        accepts("[fe80::1:2]:65535", ADDRESS_IPV6, "fe80::1:2", 65535);
        accepts("[::ffff:127.0.0.1]:9", ADDRESS_IPV6, "::ffff:127.0.0.1", 9);
        refuses("::1:7101", "brackets");
        refuses("[::1]7101", "no ':port'");
        refuses("[::1:7101", "without its ']'");
        refuses("[]:7101", "IPv6");
        refuses("[localhost]:7101", "IPv6");
        refuses("[1.2.3.4]:7101", "IPv6");
        refuses("[::1]:", "port is missing");
}

static void test_names(void **state)
{
        (void)state;
        accepts("localhost:7101", ADDRESS_NAME, "localhost", 7101);
        accepts("node-1.example.com:1", ADDRESS_NAME, "node-1.example.com", 1);
        accepts("3com.com:2", ADDRESS_NAME, "3com.com", 2);
        accepts("a:3", ADDRESS_NAME, "a", 3);
        accepts("1.2.3.a:3", ADDRESS_NAME, "1.2.3.a", 3);
        refuses("-node:1", "'-'");
        refuses("node-:1", "'-'");
        refuses("a..b:1", "empty label");
        refuses("a.:1", "empty label");
        refuses(".a:1", "empty label");
        refuses("no_underscore:1", "letters, digits");
        refuses("sp ace:1", "letters, digits");
        refuses("ünicode:1", "letters, digits");
}

static void test_ports(void **state)
{
        (void)state;
        refuses("127.0.0.1", "no ':port'");
        refuses("localhost", "no ':port'");
        refuses("127.0.0.1:", "port is missing");
        refuses(":7101", "host is missing");
        refuses("127.0.0.1:0", "1..65535");
        refuses("127.0.0.1:65536", "1..65535");
        refuses("127.0.0.1:99999", "1..65535");
        refuses("127.0.0.1:100000", "1..65535");
        refuses("127.0.0.1:07101", "leading zeros");
        refuses("127.0.0.1:-1", "decimal");
        refuses("127.0.0.1:+1", "decimal");
        refuses("127.0.0.1:12x", "decimal");
        refuses("127.0.0.1:7101 ", "decimal");
        refuses("", "empty");
}

static void test_lengths(void **state)
{
        char s[ADDRESS_MAX + 8];
        char host[ADDRESS_MAX];

        (void)state;
        /* "aaa.aaa...a:65535", 64 bytes in all: the longest accepted. */
        memset(host, 'a', 58);
        host[3] = '.';
        host[58] = '\0';
        snprintf(s, sizeof s, "%s:65535", host);
        assert_int_equal(strlen(s), ADDRESS_MAX);
        accepts(s, ADDRESS_NAME, host, 65535);
        /* One byte more is refused, whatever the form. */
        snprintf(s, sizeof s, "b%s:65535", host);
        refuses(s, "over 64 bytes");
        memset(s, '1', ADDRESS_MAX + 1);
        memcpy(s, "[::1]:", 6);
        s[ADDRESS_MAX + 1] = '\0';
        refuses(s, "over 64 bytes");
        /* The longest IPv6 text fits, brackets and port included. */
        accepts("[ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255]:65535",
                ADDRESS_IPV6, "ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255",
                65535);
        /* A single label of 62 bytes: the longest host there is room for. */
        memset(host, 'x', 62);
        host[62] = '\0';
        snprintf(s, sizeof s, "%s:1", host);
        accepts(s, ADDRESS_NAME, host, 1);
        snprintf(s, sizeof s, "y%s:1", host);
        refuses(s, "over 64 bytes");
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_ipv4),    cmocka_unit_test(test_ipv6),
            cmocka_unit_test(test_names),   cmocka_unit_test(test_ports),
            cmocka_unit_test(test_lengths),
        };
        return cmocka_run_group_tests_name("address", tests, NULL, NULL);
}
