/* Unit tests for who gets what on the metrics port (scrapegate.c): TLS or
 * plain HTTP from the first byte, the answer each path gets over each, by
 * port and role, the 403 bodies, and the liveness-only bodies of /health
 * and /ready (health.c) that plain HTTP gets. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "../../include/baton.h"
#include "../../src/server/ops/health.h"
#include "../../src/server/config/roles.h"
#include "../../src/server/ops/scrapegate.h"

static const struct scrapegate_port loop_plain = {false, true};
static const struct scrapegate_port net_plain = {false, false};
static const struct scrapegate_port loop_tls = {true, true};
static const struct scrapegate_port net_tls = {true, false};

static enum scrapegate_wire sniff(const char *p, size_t n)
{
        return scrapegate_sniff((const uint8_t *)p, n);
}

static void sniff_tells_tls_http_and_garbage(void **state)
{
        (void)state;
        assert_int_equal(sniff("", 0), SCRAPEGATE_MORE);
        assert_int_equal(sniff("\x16\x03\x01", 3), SCRAPEGATE_TLS);
        assert_int_equal(sniff("\x16", 1), SCRAPEGATE_TLS);
        assert_int_equal(sniff("GET / HTTP/1.0", 14), SCRAPEGATE_HTTP);
        assert_int_equal(sniff("HEAD", 4), SCRAPEGATE_HTTP);
        assert_int_equal(sniff("\x00\x01", 2), SCRAPEGATE_OTHER);
        assert_int_equal(sniff("get /", 5), SCRAPEGATE_OTHER);
        assert_int_equal(sniff("\x80\x01", 2), SCRAPEGATE_OTHER);
        assert_int_equal(sniff("\r\n", 2), SCRAPEGATE_OTHER);
}

static void paths(void **state)
{
        (void)state;
        assert_int_equal(scrapegate_path("/health"), SCRAPEGATE_HEALTH);
        assert_int_equal(scrapegate_path("/ready"), SCRAPEGATE_READY);
        assert_int_equal(scrapegate_path("/metrics"), SCRAPEGATE_METRICS);
        assert_int_equal(scrapegate_path("/"), SCRAPEGATE_METRICS);
        assert_int_equal(scrapegate_path(""), SCRAPEGATE_METRICS);
        assert_int_equal(scrapegate_path("/readyz"), SCRAPEGATE_METRICS);
}

/* Plain HTTP: liveness and a 403 for metrics, except on a loopback port
 * without TLS, the node's own tools, which get everything as before. */
static void plain_http(void **state)
{
        const struct scrapegate_port *gated[] = {&net_plain, &loop_tls,
                                                 &net_tls};

        (void)state;
        for (int p = SCRAPEGATE_HEALTH; p <= SCRAPEGATE_METRICS; p++) {
                assert_int_equal(
                    scrapegate_decide(&loop_plain, false, p, ROLES_NONE),
                    SCRAPEGATE_FULL);
        }
        for (unsigned i = 0; i < 3; i++) {
                /* The role is never looked at without TLS. */
                assert_int_equal(scrapegate_decide(gated[i], false,
                                                   SCRAPEGATE_HEALTH,
                                                   ROLES_ADMIN),
                                 SCRAPEGATE_LIVENESS);
                assert_int_equal(scrapegate_decide(gated[i], false,
                                                   SCRAPEGATE_READY,
                                                   ROLES_ADMIN),
                                 SCRAPEGATE_LIVENESS);
                assert_int_equal(scrapegate_decide(gated[i], false,
                                                   SCRAPEGATE_METRICS,
                                                   ROLES_ADMIN),
                                 SCRAPEGATE_NEEDS_TLS);
        }
}

/* TLS: the full /health and /ready to anyone; metrics to read and admin. */
static void over_tls(void **state)
{
        const struct scrapegate_port *ports[] = {&loop_tls, &net_tls};

        (void)state;
        for (unsigned i = 0; i < 2; i++) {
                for (int role = ROLES_NONE; role <= ROLES_ADMIN; role++) {
                        bool reads = role == ROLES_READ || role == ROLES_ADMIN;
                        assert_int_equal(scrapegate_role_reads(role), reads);
                        assert_int_equal(scrapegate_decide(ports[i], true,
                                                           SCRAPEGATE_HEALTH,
                                                           role),
                                         SCRAPEGATE_FULL);
                        assert_int_equal(scrapegate_decide(ports[i], true,
                                                           SCRAPEGATE_READY,
                                                           role),
                                         SCRAPEGATE_FULL);
                        assert_int_equal(
                            scrapegate_decide(ports[i], true,
                                              SCRAPEGATE_METRICS, role),
                            reads ? SCRAPEGATE_FULL : SCRAPEGATE_NEEDS_ROLE);
                }
        }
        assert_false(scrapegate_role_reads(7));
}

static void refusal(enum scrapegate_answer a,
                    const struct scrapegate_port *port, const char *identity,
                    const char *role, char *buf, size_t cap)
{
        size_t need = scrapegate_refusal(a, port, identity, role, NULL, 0);
        size_t n = scrapegate_refusal(a, port, identity, role, buf, cap);

        assert_int_equal(n, need);
        assert_true(n > 0 && n < cap);
        assert_int_equal(buf[n - 1], '\n');
}

/* Each 403 says what metrics need and what this request lacks. */
static void refusal_bodies(void **state)
{
        char body[512];

        (void)state;
        refusal(SCRAPEGATE_NEEDS_TLS, &net_tls, NULL, NULL, body, sizeof body);
        assert_non_null(strstr(body, "TLS"));
        assert_non_null(strstr(body, "read or admin"));
        assert_null(strstr(body, "metrics-tls = true"));
        refusal(SCRAPEGATE_NEEDS_TLS, &net_plain, NULL, NULL, body,
                sizeof body);
        assert_non_null(strstr(body, "set metrics-tls = true"));
        refusal(SCRAPEGATE_NEEDS_ROLE, &net_tls, "app-1", "lock", body,
                sizeof body);
        assert_non_null(strstr(body, "'app-1' has role lock"));
        assert_non_null(strstr(body, "read or admin"));
        /* No certificate at all: an empty identity, role none. */
        refusal(SCRAPEGATE_NEEDS_ROLE, &net_tls, "", "none", body, sizeof body);
        assert_non_null(strstr(body, "no client certificate"));
}

/* A leader of term 9 that serves. */
static struct health_facts leader(void)
{
        struct health_facts f;

        memset(&f, 0, sizeof f);
        f.node = 3;
        f.role = BATON_ROLE_LEADER;
        f.serving = true;
        f.term = 9;
        f.leader = 3;
        f.commit_index = 41;
        f.applied_index = 41;
        f.leader_commit = 41;
        f.max_lag = 10;
        return f;
}

static void liveness(const struct health_facts *f, bool ready, char *buf,
                     size_t cap, int *status)
{
        int full_status = 0;
        size_t need = health_render_liveness(f, ready, NULL, 0, status);
        size_t n = health_render_liveness(f, ready, buf, cap, status);

        assert_int_equal(n, need);
        assert_true(n < cap);
        assert_int_equal(buf[n - 1], '\n');
        /* The same verdict as the full body's. */
        health_render(f, ready, NULL, 0, &full_status);
        assert_int_equal(*status, full_status);
}

/* Liveness bodies: status, reason and node; no term, index or leader. */
static void liveness_bodies(void **state)
{
        struct health_facts f = leader();
        char body[256];
        int status = 0;

        (void)state;
        liveness(&f, true, body, sizeof body, &status);
        assert_int_equal(status, 200);
        assert_string_equal(body, "{\"status\":\"ready\",\"reason\":\"ok\","
                                  "\"node\":3}\n");
        liveness(&f, false, body, sizeof body, &status);
        assert_int_equal(status, 200);
        assert_string_equal(body, "{\"status\":\"ok\",\"reason\":\"ok\","
                                  "\"node\":3}\n");
        f.role = BATON_ROLE_FOLLOWER;
        f.serving = false;
        f.leader = 0;
        liveness(&f, true, body, sizeof body, &status);
        assert_int_equal(status, 503);
        assert_string_equal(body, "{\"status\":\"not-ready\","
                                  "\"reason\":\"no-leader\",\"node\":3}\n");
        f.role = BATON_ROLE_UNAVAILABLE;
        liveness(&f, false, body, sizeof body, &status);
        assert_int_equal(status, 503);
        assert_string_equal(body, "{\"status\":\"unavailable\","
                                  "\"reason\":\"raft-not-running\","
                                  "\"node\":3}\n");
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(sniff_tells_tls_http_and_garbage),
            cmocka_unit_test(paths),
            cmocka_unit_test(plain_http),
            cmocka_unit_test(over_tls),
            cmocka_unit_test(refusal_bodies),
            cmocka_unit_test(liveness_bodies),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
