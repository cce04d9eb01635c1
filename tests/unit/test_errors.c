/* Unit tests for BATON_ERROR_MAP: the codes, baton_strerror(), baton_errname().
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <limits.h>
#include <string.h>

#include "../../include/baton.h"

#define UNKNOWN "unknown error"

/* Every code in the order of its number, -1 first. */
static const int codes[] = {
    BATON_ENOMEM,
    BATON_EINVAL,
    BATON_EMALFORMED,
    BATON_EVERSION,
    BATON_ENAME,
    BATON_ENOSESSION,
    BATON_EEXPIRED,
    BATON_ECLOSED,
    BATON_EBUSY,
    BATON_ENOTHOLDER,
    BATON_ESTALE,
    BATON_ETIMEDOUT,
    BATON_ECANCELLED,
    BATON_ENOTWAITING,
    BATON_EWAITING,
    BATON_ETOOMANYSESSIONS,
    BATON_ETOOMANYLOCKS,
    BATON_ETOOMANYWAITERS,
    BATON_EINFLIGHT,
    BATON_ESEQ,
    BATON_ETTL,
    BATON_EUNSUPPORTED,
    BATON_EOVERFLOW,
    BATON_ECORRUPT,
    BATON_ENOTFOUND,
    BATON_ENOTLEADER,
    BATON_EUNKNOWN,
    BATON_ETOOBIG,
    BATON_ETOOMANYCONNS,
    BATON_EUNAVAILABLE,
    BATON_ESHUTDOWN,
    BATON_EIO,
    BATON_ENOSPC,
    BATON_ECANTCHANGE,
    BATON_ENOANSWER,
    BATON_ETLS,
    BATON_EPERM,
    BATON_EUPGRADE,
    BATON_EKIND,
    BATON_EPERMITS,
    BATON_ETOOMANYPERMITS,
    BATON_EHELD,
    BATON_ETOOMANYHOLDERS,
    BATON_ETOOMANYNAMES,
    BATON_EDELAY,
    BATON_ECOMPACTED,
    BATON_ESLOW,
    BATON_ETOOMANYWATCHES,
    BATON_ENOBACKUP,
    BATON_ENOTREADY,
    BATON_ENOMEMBER,
    BATON_EIDINUSE,
    BATON_EISLEADER,
    BATON_EUNREACHABLE,
    BATON_ECONNECT,
    BATON_ENOTVOTER,
    BATON_EADDRINUSE,
    BATON_EQUOTA,
};

#define N_CODES (sizeof codes / sizeof codes[0])

/* The codes are wire protocol: exactly -1..-58, contiguous, none skipped. */
static void codes_are_contiguous(void **state)
{
        size_t i;

        (void)state;
        assert_int_equal(N_CODES, 58);
        for (i = 0; i < N_CODES; i++) {
                assert_int_equal(codes[i], -(int)(i + 1));
        }
}

/* Zero is success. */
static void zero_is_success(void **state)
{
        (void)state;
        assert_string_equal(baton_strerror(0), "success");
}

/* Every code has a real, non-empty text of its own. */
static void every_code_has_a_text(void **state)
{
        size_t i;

        (void)state;
        for (i = 0; i < N_CODES; i++) {
                const char *text = baton_strerror(codes[i]);

                assert_non_null(text);
                assert_true(strlen(text) > 0);
                assert_string_not_equal(text, UNKNOWN);
                assert_string_not_equal(text, "success");
        }
}

/* No two codes share a text, so a message identifies its code. */
static void texts_are_distinct(void **state)
{
        size_t i, j;

        (void)state;
        for (i = 0; i < N_CODES; i++) {
                for (j = i + 1; j < N_CODES; j++) {
                        assert_string_not_equal(baton_strerror(codes[i]),
                                                baton_strerror(codes[j]));
                }
        }
}

/* Spot checks that each text belongs to its code, not a neighbour. */
static void texts_match_their_codes(void **state)
{
        (void)state;
        assert_string_equal(baton_strerror(BATON_ENOMEM), "out of memory");
        assert_string_equal(baton_strerror(BATON_EINVAL), "invalid argument");
        assert_non_null(strstr(baton_strerror(BATON_EMALFORMED), "malformed"));
        assert_non_null(strstr(baton_strerror(BATON_EVERSION), "version"));
        assert_non_null(strstr(baton_strerror(BATON_ENAME), "name"));
        assert_non_null(strstr(baton_strerror(BATON_ENOSESSION), "session"));
        assert_non_null(strstr(baton_strerror(BATON_EEXPIRED), "expired"));
        assert_non_null(strstr(baton_strerror(BATON_ECLOSED), "closed"));
        assert_non_null(strstr(baton_strerror(BATON_ESTALE), "stale"));
        assert_non_null(strstr(baton_strerror(BATON_ETIMEDOUT), "timed out"));
        assert_non_null(strstr(baton_strerror(BATON_ECANCELLED), "cancel"));
        assert_non_null(strstr(baton_strerror(BATON_ETTL), "TTL"));
        assert_non_null(strstr(baton_strerror(BATON_ECORRUPT), "snapshot"));
        assert_non_null(
            strstr(baton_strerror(BATON_ENOTFOUND), "no such lock"));
}

/* Positive codes are not errors Baton defines. */
static void positive_codes_are_unknown(void **state)
{
        static const int positive[] = {1, 2, 3, 24, 25, 26, 1000, INT_MAX};
        size_t i;

        (void)state;
        for (i = 0; i < sizeof positive / sizeof positive[0]; i++) {
                assert_string_equal(baton_strerror(positive[i]), UNKNOWN);
        }
}

/* Negative codes beyond the table are unknown, down to INT_MIN. */
static void out_of_range_codes_are_unknown(void **state)
{
        static const int negative[] = {-59,   -60,    -100,        -1000,
                                       -4096, -65536, INT_MIN + 1, INT_MIN};
        size_t i;

        (void)state;
        for (i = 0; i < sizeof negative / sizeof negative[0]; i++) {
                assert_string_equal(baton_strerror(negative[i]), UNKNOWN);
        }
}

/* No code at all yields NULL, and the texts are stable static strings. */
static void never_null(void **state)
{
        int code;

        (void)state;
        for (code = -5000; code <= 5000; code++) {
                const char *text = baton_strerror(code);

                assert_non_null(text);
                assert_ptr_equal(baton_strerror(code), text);
        }
        assert_non_null(baton_strerror(INT_MAX));
        assert_non_null(baton_strerror(INT_MIN));
}

/* Each code's name is its identifier in baton.h, spelled out. */
static void names_are_the_identifiers(void **state)
{
        (void)state;
        assert_string_equal(baton_errname(0), "BATON_OK");
        assert_string_equal(baton_errname(BATON_ENOMEM), "BATON_ENOMEM");
        assert_string_equal(baton_errname(BATON_EBUSY), "BATON_EBUSY");
        assert_string_equal(baton_errname(BATON_ETIMEDOUT), "BATON_ETIMEDOUT");
        assert_string_equal(baton_errname(BATON_ENOANSWER), "BATON_ENOANSWER");
        assert_string_equal(baton_errname(-35), "BATON_ENOANSWER");
        assert_string_equal(baton_errname(-38), "BATON_EUPGRADE");
        assert_string_equal(baton_errname(-42), "BATON_EHELD");
        assert_string_equal(baton_errname(-43), "BATON_ETOOMANYHOLDERS");
        assert_string_equal(baton_errname(-44), "BATON_ETOOMANYNAMES");
        assert_string_equal(baton_errname(-45), "BATON_EDELAY");
        assert_string_equal(baton_errname(-46), "BATON_ECOMPACTED");
        assert_string_equal(baton_errname(-47), "BATON_ESLOW");
        assert_string_equal(baton_errname(-48), "BATON_ETOOMANYWATCHES");
        assert_string_equal(baton_errname(-49), "BATON_ENOBACKUP");
        assert_string_equal(baton_errname(-50), "BATON_ENOTREADY");
        assert_string_equal(baton_errname(-51), "BATON_ENOMEMBER");
        assert_string_equal(baton_errname(-55), "BATON_ECONNECT");
        assert_string_equal(baton_errname(-57), "BATON_EADDRINUSE");
        assert_string_equal(baton_errname(-58), "BATON_EQUOTA");
        assert_string_equal(baton_errname(-59), "BATON_E?");
        assert_string_equal(baton_errname(1), "BATON_E?");
        assert_string_equal(baton_errname(INT_MIN), "BATON_E?");
}

/* Every code has a distinct name of the form BATON_E... */
static void names_are_distinct(void **state)
{
        size_t i, j;

        (void)state;
        for (i = 0; i < N_CODES; i++) {
                const char *name = baton_errname(codes[i]);

                assert_int_equal(strncmp(name, "BATON_E", 7), 0);
                assert_true(strlen(name) > 7);
                assert_string_not_equal(name, "BATON_E?");
                for (j = i + 1; j < N_CODES; j++) {
                        assert_string_not_equal(name, baton_errname(codes[j]));
                }
        }
}

/* The deprecated name stays the same code, and the two timeouts differ. */
static void deprecated_alias(void **state)
{
        (void)state;
        assert_int_equal(BATON_ETIMEOUT, BATON_ENOANSWER);
        assert_int_not_equal(BATON_ETIMEDOUT, BATON_ENOANSWER);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(codes_are_contiguous),
            cmocka_unit_test(zero_is_success),
            cmocka_unit_test(every_code_has_a_text),
            cmocka_unit_test(texts_are_distinct),
            cmocka_unit_test(texts_match_their_codes),
            cmocka_unit_test(positive_codes_are_unknown),
            cmocka_unit_test(out_of_range_codes_are_unknown),
            cmocka_unit_test(never_null),
            cmocka_unit_test(names_are_the_identifiers),
            cmocka_unit_test(names_are_distinct),
            cmocka_unit_test(deprecated_alias),
        };
        return cmocka_run_group_tests_name("errors", tests, NULL, NULL);
}
