/* The checks batond makes of its own certificate before it starts
 * (src/server/config/certcheck.h): chained to the CA, naming the host of the
 * node's client address as clients check it, not expired; and the
 * warning of one that expires soon (src/server/ops/certwatch.h).
 * Certificates are made by tests/lib/certs.c in a temporary directory. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../include/baton.h"
#include "../../src/server/config/certcheck.h"
#include "../../src/server/ops/certwatch.h"
#include "../lib/certs.h"

#define DAY_S 86400

static char dir[] = "/tmp/baton-test-certcheck-XXXXXX";

static const char *path(const char *name)
{
        static char buf[8][256];
        static unsigned next;
        char *p = buf[next++ % 8];

        snprintf(p, sizeof buf[0], "%s/%s", dir, name);
        return p;
}

/* NAME.crt and NAME.key from `ca` for CN `cn` with `san`. */
static int issue(struct certs_ca *ca, const char *name, const char *cn,
                 const char *san, int from_days, int to_days)
{
        char crt[64], key[64];

        snprintf(crt, sizeof crt, "%s.crt", name);
        snprintf(key, sizeof key, "%s.key", name);
        return certs_issue(ca, cn, san, from_days, to_days, path(crt),
                           path(key), NULL);
}

static int make_certs(void **state)
{
        struct certs_ca *ca = certs_ca_create("baton test CA");
        struct certs_ca *other = certs_ca_create("another CA");
        int rv = 0;

        (void)state;
        if (mkdtemp(dir) == NULL || ca == NULL || other == NULL) {
                return -1;
        }
        rv |= certs_ca_write(ca, path("ca.crt"));
        rv |= certs_ca_write(other, path("other-ca.crt"));
        rv |= issue(ca, "loop", "node-1",
                    "DNS:node-1,IP:127.0.0.1,DNS:localhost", -1, 825);
        rv |= issue(ca, "hosted", "node-4",
                    "DNS:node-4,IP:127.0.0.1,DNS:localhost,"
                    "DNS:baton4.example.net,IP:10.0.0.4,IP:2001:db8::4",
                    -1, 825);
        rv |= issue(ca, "cn-only", "baton4.example.net", NULL, -1, 825);
        rv |= issue(ca, "wild", "node-5", "DNS:*.example.net", -1, 825);
        rv |= issue(other, "foreign", "node-1", "IP:127.0.0.1", -1, 825);
        rv |= issue(ca, "expired", "node-1", "IP:127.0.0.1", -30, -1);
        rv |= issue(ca, "later", "node-1", "IP:127.0.0.1", 2, 30);
        certs_ca_destroy(ca);
        certs_ca_destroy(other);
        return rv;
}

static int remove_certs(void **state)
{
        char cmd[300];

        (void)state;
        snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
        return system(cmd) == 0 ? 0 : -1;
}

static char said[CERTCHECK_ERRMSG_MAX];
static int64_t not_after;

/* certcheck_start() of DIR/NAME.crt against DIR/CA for `address` now. */
static int check(const char *name, const char *ca, const char *address)
{
        char crt[64];

        snprintf(crt, sizeof crt, "%s.crt", name);
        said[0] = '\0';
        not_after = 0;
        return certcheck_start(path(crt), path(ca), address,
                               (int64_t)time(NULL), &not_after, said,
                               sizeof said);
}

static void has(const char *needle)
{
        if (strstr(said, needle) == NULL) {
                fail_msg("'%s' not in: %s", needle, said);
        }
}

static void names_the_address(void **state)
{
        int64_t now = (int64_t)time(NULL);

        (void)state;
        assert_int_equal(check("loop", "ca.crt", "127.0.0.1:7101"), 0);
        assert_true(not_after > now + 824 * DAY_S &&
                    not_after < now + 826 * DAY_S);
        assert_int_equal(check("loop", "ca.crt", "localhost:7101"), 0);
        assert_int_equal(check("hosted", "ca.crt", "10.0.0.4:7101"), 0);
        assert_int_equal(check("hosted", "ca.crt", "baton4.example.net:7101"),
                         0);
        assert_int_equal(check("hosted", "ca.crt", "[2001:db8::4]:7101"), 0);
        /* As clients check a name: a wildcard covers one label. */
        assert_int_equal(check("wild", "ca.crt", "baton5.example.net:7101"), 0);
}

/* scripts/certs without --node-san: loopback only, and a multi-host
 * member line; refused naming the file, the host and what it has. */
static void another_host_refused(void **state)
{
        (void)state;
        assert_int_equal(check("loop", "ca.crt", "10.0.0.1:7101"), BATON_ETLS);
        has(path("loop.crt"));
        has("does not name 10.0.0.1");
        has("client address 10.0.0.1:7101");
        has("DNS:node-1, IP:127.0.0.1, DNS:localhost");
        has("IP:10.0.0.1");
        assert_int_equal(check("loop", "ca.crt", "baton1.example.net:7101"),
                         BATON_ETLS);
        has("does not name baton1.example.net");
        has("DNS:baton1.example.net");
        /* An address needs an IP SAN, a name a DNS one. */
        assert_int_equal(check("hosted", "ca.crt", "10.0.0.5:7101"),
                         BATON_ETLS);
        assert_int_equal(check("hosted", "ca.crt", "[2001:db8::5]:7101"),
                         BATON_ETLS);
        has("IP:2001:db8::4");
        assert_int_equal(check("hosted", "ca.crt", "node4.example.net:7101"),
                         BATON_ETLS);
        assert_int_equal(check("wild", "ca.crt", "a.b.example.net:7101"),
                         BATON_ETLS);
}

/* The subject's common name is not a host name to clients. */
static void common_name_not_counted(void **state)
{
        (void)state;
        assert_int_equal(check("cn-only", "ca.crt", "baton4.example.net:7101"),
                         BATON_ETLS);
        has("it names none");
}

static void other_ca_refused(void **state)
{
        (void)state;
        assert_int_equal(check("foreign", "ca.crt", "127.0.0.1:7101"),
                         BATON_ETLS);
        has(path("foreign.crt"));
        has("does not chain to tls-ca");
        has(path("ca.crt"));
        /* The negative control: against its own CA it passes. */
        assert_int_equal(check("foreign", "other-ca.crt", "127.0.0.1:7101"), 0);
}

static void expired_refused(void **state)
{
        (void)state;
        assert_int_equal(check("expired", "ca.crt", "127.0.0.1:7101"),
                         BATON_ETLS);
        has(path("expired.crt"));
        has("expired on ");
        assert_int_equal(check("later", "ca.crt", "127.0.0.1:7101"),
                         BATON_ETLS);
        has("not valid before");
}

static void unreadable_named(void **state)
{
        (void)state;
        assert_int_equal(check("missing", "ca.crt", "127.0.0.1:7101"),
                         BATON_ETLS);
        has(path("missing.crt"));
        assert_int_equal(check("loop", "loop.key", "127.0.0.1:7101"),
                         BATON_ETLS);
        has("tls-ca");
}

static void not_after_read(void **state)
{
        int64_t t = 0, now = (int64_t)time(NULL);

        (void)state;
        assert_int_equal(
            certcheck_not_after(path("expired.crt"), &t, said, sizeof said), 0);
        assert_true(t < now && t > now - 2 * DAY_S);
        assert_int_equal(
            certcheck_not_after(path("missing.crt"), &t, said, sizeof said),
            BATON_ETLS);
}

/* The warning: within the window (days left, the date, the remedy), not
 * outside it, never with 0 days, and another one once expired. */
static void expiry_warning(void **state)
{
        char out[512];
        int64_t now = 1800000000; /* 2027-01-15 08:00:00 UTC */

        (void)state;
        assert_true(certwatch_warning("/etc/baton/node1.crt",
                                      now + 20 * DAY_S + 5, now, 30, out,
                                      sizeof out));
        if (strstr(out, "tls-cert /etc/baton/node1.crt expires in 20 days, "
                        "on 2027-02-04 08:00:05 UTC (within "
                        "tls-expiry-warn-days = 30)") == NULL ||
            strstr(out, "scripts/certs") == NULL) {
                fail_msg("%s", out);
        }
        assert_false(certwatch_warning("x.crt", now + 30 * DAY_S, now, 30, out,
                                       sizeof out));
        assert_true(certwatch_warning("x.crt", now + 30 * DAY_S - 1, now, 30,
                                      out, sizeof out));
        assert_false(
            certwatch_warning("x.crt", now + DAY_S, now, 0, out, sizeof out));
        assert_true(
            certwatch_warning("x.crt", now - 1, now, 30, out, sizeof out));
        assert_non_null(strstr(out, "expired on"));
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(names_the_address),
            cmocka_unit_test(another_host_refused),
            cmocka_unit_test(common_name_not_counted),
            cmocka_unit_test(other_ca_refused),
            cmocka_unit_test(expired_refused),
            cmocka_unit_test(unreadable_named),
            cmocka_unit_test(not_after_read),
            cmocka_unit_test(expiry_warning),
        };

        return cmocka_run_group_tests(tests, make_certs, remove_certs);
}
