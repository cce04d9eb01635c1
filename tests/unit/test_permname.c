/* Unit tests for the names of permissions on lock names (src/lib/permname.h):
 * every set written as batonctl prints it and read back, and every text
 * that is not a list of permissions refused. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "../../include/baton.h"
#include "../../src/lib/permname.h"

/* Each set of the three bits as written: read alone, else without it. */
static void every_set_written(void **state)
{
        static const char *const want[8] = {
            "",       "read",   "lock",        "lock",
            "manage", "manage", "lock,manage", "lock,manage"};
        char buf[PERMNAME_MAX];
        int perms;

        (void)state;
        for (perms = 0; perms < 8; perms++) {
                assert_string_equal(permname_format(perms, buf, sizeof buf),
                                    want[perms]);
        }
        /* Bits of no permission are left out. */
        assert_string_equal(
            permname_format(8 | BATON_PERM_LOCK, buf, sizeof buf), "lock");
        /* A short buffer is cut, never overrun. */
        memset(buf, 'x', sizeof buf);
        permname_format(7, buf, 6);
        assert_string_equal(buf, "lock,");
        assert_string_equal(permname_bit(BATON_PERM_READ), "read");
        assert_string_equal(permname_bit(BATON_PERM_MANAGE), "manage");
        assert_null(permname_bit(3));
}

/* What is written reads back as the set the cluster stores: read added
 * to lock and manage. */
static void every_list_read(void **state)
{
        static const struct {
                const char *text;
                int perms;
        } ok[] = {
            {"read", 1},        {"lock", 3},
            {"manage", 5},      {"lock,manage", 7},
            {"manage,lock", 7}, {"read,lock", 3},
            {"read,read", 1},   {"read,lock,manage", 7},
        };
        static const char *const bad[] = {
            "",      ",",     "lock,",       ",lock", "lock,,manage",
            "write", "Lock",  "lock manage", " lock", "lock ",
            "all",   "locks", "rea",         "none",
        };
        size_t i;
        int perms;

        (void)state;
        for (i = 0; i < sizeof ok / sizeof ok[0]; i++) {
                perms = -1;
                assert_int_equal(permname_parse(ok[i].text, &perms), 0);
                assert_int_equal(perms, ok[i].perms);
        }
        for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
                perms = -1;
                assert_int_equal(permname_parse(bad[i], &perms), -1);
                assert_int_equal(perms, -1);
        }
        assert_int_equal(permname_parse(NULL, &perms), -1);
        for (perms = 1; perms < 8; perms++) {
                char buf[PERMNAME_MAX];
                int back = 0;
                assert_int_equal(
                    permname_parse(permname_format(perms, buf, sizeof buf),
                                   &back),
                    0);
                assert_int_equal(back, perms == 2 || perms == 4 || perms == 6
                                           ? perms | BATON_PERM_READ
                                           : perms);
        }
}

/* A refusal by the rules names the permission and the name, the prefix,
 * or a multi-lock's names. */
static void refusal_named(void **state)
{
        char buf[512], long_name[100];

        (void)state;
        permname_refused(buf, sizeof buf, BATON_PERM_LOCK, "team-b/deploy", 13,
                         false);
        assert_string_equal(buf, "permission denied: no rule gives this "
                                 "client's identity or groups lock on "
                                 "\"team-b/deploy\" (batonctl rule list "
                                 "shows the rules)");
        permname_refused(buf, sizeof buf, BATON_PERM_READ, "team-b/", 7, true);
        assert_non_null(strstr(buf, " read on names under \"team-b/\" "));
        permname_refused(buf, sizeof buf, BATON_PERM_LOCK, NULL, 0, false);
        assert_non_null(strstr(buf, " lock on one of its names "));
        /* A long name is cut; a bit of no permission is still said. */
        memset(long_name, 'n', sizeof long_name);
        permname_refused(buf, sizeof buf, 3, long_name, sizeof long_name,
                         false);
        assert_non_null(strstr(buf, " access on \"nnnn"));
        assert_non_null(strstr(buf, "nnn...\" "));
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(every_set_written),
            cmocka_unit_test(every_list_read),
            cmocka_unit_test(refusal_named),
        };

        return cmocka_run_group_tests_name("permname", tests, NULL, NULL);
}
