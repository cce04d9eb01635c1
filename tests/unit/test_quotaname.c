/* Unit tests for the names of quota kinds (src/lib/quotaname.h): every
 * KIND=N word read as config files and batonctl write it, every other
 * word refused, and limits written back as words. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "../../include/baton.h"
#include "../../src/lib/quotaname.h"

/* Parse `word` (no NUL needed after it: it is copied without one). */
static int parse(const char *word, uint32_t limit[BATON_QUOTA_KINDS])
{
        char buf[64];
        size_t n = strlen(word);

        memcpy(buf, word, n);
        memset(buf + n, '7', sizeof buf - n); /* digits past the word */
        return quotaname_parse_word(buf, n, limit);
}

static void words_read(void **state)
{
        uint32_t limit[BATON_QUOTA_KINDS] = {0};

        (void)state;
        assert_int_equal(parse("sessions=2", limit), 0);
        assert_int_equal(parse("locks=10", limit), 0);
        assert_int_equal(parse("waiters=0", limit), 0);
        assert_int_equal(parse("watches=4294967295", limit), 0);
        assert_int_equal(parse("rate=50", limit), 0);
        assert_int_equal(limit[BATON_QUOTA_SESSIONS], 2);
        assert_int_equal(limit[BATON_QUOTA_LOCKS], 10);
        assert_int_equal(limit[BATON_QUOTA_WAITERS], 0);
        assert_int_equal(limit[BATON_QUOTA_WATCHES], 4294967295u);
        assert_int_equal(limit[BATON_QUOTA_RATE], 50);
        /* none lifts a limit. */
        assert_int_equal(parse("locks=none", limit), 0);
        assert_int_equal(limit[BATON_QUOTA_LOCKS], 0);
}

static void bad_words_refused(void **state)
{
        static const char *const kinds[] = {"lock=1", "Locks=1", "=1",
                                            "locks",  "",        "rate:1"};
        static const char *const numbers[] = {"locks=",
                                              "locks=-1",
                                              "locks=+1",
                                              "locks= 1",
                                              "locks=1x",
                                              "locks=4294967296",
                                              "locks=99999999999999999999",
                                              "locks=nonE"};
        uint32_t limit[BATON_QUOTA_KINDS] = {1, 1, 1, 1, 1};
        size_t i;

        (void)state;
        for (i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
                assert_int_equal(parse(kinds[i], limit), -1);
        }
        for (i = 0; i < sizeof numbers / sizeof numbers[0]; i++) {
                assert_int_equal(parse(numbers[i], limit), -2);
        }
        for (i = 0; i < BATON_QUOTA_KINDS; i++) {
                assert_int_equal(limit[i], 1); /* unchanged */
        }
}

static void limits_written(void **state)
{
        uint32_t limit[BATON_QUOTA_KINDS] = {0, 100, 0, 0, 50};
        uint32_t every[BATON_QUOTA_KINDS] = {
            4294967295u, 4294967295u, 4294967295u, 4294967295u, 4294967295u};
        uint32_t none[BATON_QUOTA_KINDS] = {0};
        char buf[QUOTANAME_TEXT_MAX];

        (void)state;
        assert_string_equal(quotaname_format(limit, buf, sizeof buf),
                            "locks=100 rate=50");
        assert_string_equal(quotaname_format(none, buf, sizeof buf), "");
        assert_string_equal(quotaname_format(every, buf, sizeof buf),
                            "sessions=4294967295 locks=4294967295 "
                            "waiters=4294967295 watches=4294967295 "
                            "rate=4294967295");
        assert_string_equal(quotaname(BATON_QUOTA_WATCHES), "watches");
        assert_string_equal(quotaname(BATON_QUOTA_KINDS), "unknown");
        assert_string_equal(quotaname(-1), "unknown");
}

/* A quota's refusal names the quota and its limit, and where to look. */
static void refusal_named(void **state)
{
        char buf[256];

        (void)state;
        quotaname_refused(buf, sizeof buf, BATON_QUOTA_LOCKS, 10);
        assert_string_equal(buf, "quota locks = 10 of this client's identity "
                                 "used up (batonctl quota list shows each "
                                 "identity's quota and use)");
        /* A kind a newer node sends is still said. */
        quotaname_refused(buf, sizeof buf, 9, 1);
        assert_non_null(strstr(buf, "quota unknown = 1 "));
        quotaname_refused(buf, sizeof buf, UINT32_MAX, 1);
        assert_non_null(strstr(buf, "quota unknown = 1 "));
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(words_read),
            cmocka_unit_test(bad_words_refused),
            cmocka_unit_test(limits_written),
            cmocka_unit_test(refusal_named),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
