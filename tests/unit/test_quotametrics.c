/* The quota metrics (src/server/ops/quotametrics.h): each quota's limits,
 * the use of each identity a quota names, labels escaped, and nothing
 * while the access list has no quota. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "../../include/baton.h"
#include "../../src/server/ops/quotametrics.h"

static char out[8192];

static const char *render(const struct acl *a, const struct lockfsm *f)
{
        static const uint64_t refused[ACL_QUOTA_KINDS] = {[ACL_QUOTA_RATE] = 7};
        struct promtext o = {out, sizeof out, 0};

        quotametrics_render(&o, a, f, refused);
        assert_true(o.len < sizeof out);
        out[o.len] = '\0';
        return out;
}

static void open_as(struct lockfsm *f, uint64_t index, uint64_t principal)
{
        struct command c = {.type = COMMAND_OPEN,
                            .nonce = index,
                            .ttl_ms = 10000,
                            .principal = principal};
        struct lockfsm_result r;

        assert_int_equal(lockfsm_apply_command(f, index, &c, &r), 0);
        assert_int_equal(r.status, 0);
}

static void test_limits_and_use(void **state)
{
        static const uint32_t team[ACL_QUOTA_KINDS] = {
            [ACL_QUOTA_SESSIONS] = 3, [ACL_QUOTA_RATE] = 50};
        static const uint32_t fallback[ACL_QUOTA_KINDS] = {[ACL_QUOTA_LOCKS] =
                                                               10};
        static struct acl a;
        struct lockfsm *f = lockfsm_create(NULL, NULL);
        const char *id = "CN=te\"am\\a";

        (void)state;
        acl_start(&a, ACL_LOCK);
        /* No quota: the refusals' counter alone. */
        render(&a, f);
        assert_non_null(
            strstr(out, "baton_quota_refused_total{quota=\"rate\"} 7\n"));
        assert_non_null(
            strstr(out, "baton_quota_refused_total{quota=\"locks\"} 0\n"));
        assert_null(strstr(out, "baton_quota_limit"));
        assert_null(strstr(out, "baton_quota_used"));
        assert_int_equal(acl_quota_put(&a, id, strlen(id), team), 0);
        assert_int_equal(acl_quota_put(&a, "*", 1, fallback), 0);
        open_as(f, 1, acl_principal(id, strlen(id)));
        open_as(f, 2, acl_principal(id, strlen(id)));
        open_as(f, 3, acl_principal("other", 5));
        render(&a, f);
        assert_non_null(strstr(out, "# TYPE baton_quota_limit gauge\n"));
        assert_non_null(strstr(out, "baton_quota_limit{identity=\"*\","
                                    "quota=\"locks\"} 10\n"));
        assert_non_null(strstr(out, "baton_quota_limit{identity=\"CN=te\\\"am"
                                    "\\\\a\",quota=\"rate\"} 50\n"));
        /* No series for a kind with no limit. */
        assert_null(strstr(out, "identity=\"*\",quota=\"sessions\""));
        assert_non_null(strstr(out, "baton_quota_used{identity=\"CN=te\\\"am"
                                    "\\\\a\",quota=\"sessions\"} 2\n"));
        assert_non_null(strstr(out, "baton_quota_used{identity=\"CN=te\\\"am"
                                    "\\\\a\",quota=\"locks\"} 0\n"));
        /* An identity no quota names has no series: the default's use is
         * no one identity's, and the series stay bounded by the list. */
        assert_null(strstr(out, "baton_quota_used{identity=\"*\""));
        assert_null(strstr(out, "other"));
        lockfsm_destroy(f);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_limits_and_use),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
