/* Unit tests for the per-thread error detail behind baton_errmsg(). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <string.h>

#include "../../include/baton.h"
#include "../../src/client/errmsg.h"

/* A thread that never failed gets the code's own text. */
static void nothing_recorded_is_strerror(void **state)
{
        (void)state;
        assert_string_equal(baton_errmsg(BATON_ECONNECT),
                            baton_strerror(BATON_ECONNECT));
        assert_string_equal(baton_errmsg(0), baton_strerror(0));
}

/* The detail belongs to the code it was recorded with, and only to it. */
static void detail_only_for_its_code(void **state)
{
        (void)state;
        assert_int_equal(errmsg_set(BATON_ECONNECT, "%s: connection refused",
                                    "127.0.0.1:7101"),
                         BATON_ECONNECT);
        assert_string_equal(baton_errmsg(BATON_ECONNECT),
                            "127.0.0.1:7101: connection refused");
        assert_string_equal(baton_errmsg(BATON_ETLS),
                            baton_strerror(BATON_ETLS));
        /* A later failure of another code replaces it. */
        errmsg_set(BATON_ETLS, "certificate has expired");
        assert_string_equal(baton_errmsg(BATON_ECONNECT),
                            baton_strerror(BATON_ECONNECT));
        assert_string_equal(baton_errmsg(BATON_ETLS),
                            "certificate has expired");
        /* An empty detail says nothing more than the code. */
        errmsg_set(BATON_ETLS, "%s", "");
        assert_string_equal(baton_errmsg(BATON_ETLS),
                            baton_strerror(BATON_ETLS));
}

/* A detail longer than the record is cut short, never overrun. */
static void long_detail_is_cut(void **state)
{
        char big[ERRMSG_MAX * 2];

        (void)state;
        memset(big, 'x', sizeof big - 1);
        big[sizeof big - 1] = '\0';
        errmsg_set(BATON_EINVAL, "%s", big);
        assert_int_equal(strlen(baton_errmsg(BATON_EINVAL)), ERRMSG_MAX - 1);
}

static void *other_thread(void *arg)
{
        const char **seen = arg;

        *seen = baton_errmsg(BATON_ECONNECT);
        return NULL;
}

/* Each thread sees its own calls' details, as with errno. */
static void details_are_per_thread(void **state)
{
        const char *seen = NULL;
        pthread_t t;

        (void)state;
        errmsg_set(BATON_ECONNECT, "this thread's detail");
        assert_int_equal(pthread_create(&t, NULL, other_thread, &seen), 0);
        assert_int_equal(pthread_join(t, NULL), 0);
        assert_string_equal(seen, baton_strerror(BATON_ECONNECT));
        assert_string_equal(baton_errmsg(BATON_ECONNECT),
                            "this thread's detail");
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(nothing_recorded_is_strerror),
            cmocka_unit_test(detail_only_for_its_code),
            cmocka_unit_test(long_detail_is_cut),
            cmocka_unit_test(details_are_per_thread),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
