/* Unit tests for batond's command line: flags over the file, every form
 * of a flag, its errors, and --help. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../include/baton.h"
#include "../../src/server/config/config.h"
#include "../../src/server/config/tlsconfig.h"
#include "configcase.h"

/* Flags win over the file, before or after --config. */
static void flags_override_file(void **state)
{
        struct configcase_tmpfile t;
        struct config c;
        char errmsg[CONFIG_ERRMSG_MAX];
        char config_eq[128];

        (void)state;
        configcase_tmp_write(&t, GOOD
                             "election-timeout-ms = 400\nlog-level = warn\n");
        snprintf(config_eq, sizeof config_eq, "--config=%s", t.path);
        {
                char *argv[] = {"batond", "--election-timeout-ms=500",
                                "--config", t.path, NULL};
                assert_int_equal(configcase_parse(&c, argv, errmsg), 0);
                assert_int_equal(c.election_timeout_ms, 500);
                assert_int_equal(c.log_level, LOG_WARN);
                assert_int_equal(c.n_members, 3);
        }
        {
                char *argv[] = {"batond", config_eq, "--election-timeout-ms",
                                "500", NULL};
                assert_int_equal(configcase_parse(&c, argv, errmsg), 0);
                assert_int_equal(c.election_timeout_ms, 500);
                assert_int_equal(c.log_level, LOG_WARN);
        }
        {
                char *argv[] = {"batond",  "--log-level", "error",
                                config_eq, "--id=3",      NULL};
                assert_int_equal(configcase_parse(&c, argv, errmsg), 0);
                assert_int_equal(c.election_timeout_ms, 400);
                assert_int_equal(c.log_level, LOG_ERROR);
                assert_int_equal(c.id, 3);
                assert_int_equal(config_validate(&c, errmsg, sizeof errmsg), 0);
        }
        {
                /* A later flag wins over an earlier one. */
                char *argv[] = {"batond", "--id=2", "--id", "3", NULL};
                assert_int_equal(configcase_parse(&c, argv, errmsg), 0);
                assert_int_equal(c.id, 3);
        }
        configcase_tmp_remove(&t);
}

/* Any --member replaces the file's list; several accumulate. */
static void member_flags_replace_file(void **state)
{
        struct configcase_tmpfile t;
        struct config c;
        char errmsg[CONFIG_ERRMSG_MAX];

        (void)state;
        configcase_tmp_write(&t, GOOD);
        {
                char *argv[] = {"batond",
                                "--member",
                                "7 127.0.0.1:9001 127.0.0.1:9101",
                                "--config",
                                t.path,
                                "--member=8 127.0.0.1:9002 127.0.0.1:9102",
                                "--id=8",
                                NULL};
                assert_int_equal(configcase_parse(&c, argv, errmsg), 0);
                assert_int_equal(c.n_members, 2);
                assert_int_equal(c.members[0].id, 7);
                assert_string_equal(c.members[0].raft_address,
                                    "127.0.0.1:9001");
                assert_int_equal(c.members[1].id, 8);
                assert_string_equal(c.members[1].client_address,
                                    "127.0.0.1:9102");
                assert_null(settings_member(&c, 1));
                assert_int_equal(config_validate(&c, errmsg, sizeof errmsg), 0);
        }
        {
                char *argv[] = {
                    "batond", "--member=7 127.0.0.1:9001 127.0.0.1:9101",
                    "--member=7 127.0.0.1:9002 127.0.0.1:9102", NULL};
                assert_int_equal(configcase_parse(&c, argv, errmsg),
                                 BATON_EINVAL);
                assert_string_equal(errmsg, "flag --member: duplicate id 7");
        }
        configcase_tmp_remove(&t);
}

/* Both spellings of a flag, for every type. */
static void flag_forms(void **state)
{
        struct config c;
        char errmsg[CONFIG_ERRMSG_MAX];
        char *argv[] = {"batond",
                        "--id",
                        "18446744073709551615",
                        "--data-dir=/srv/baton",
                        "--snapshot-compression",
                        "no",
                        "--max-frame=32768",
                        "--metrics-address",
                        "127.0.0.1:9100",
                        "--apply-log=",
                        "--log-level",
                        "debug",
                        "--help",
                        "--version",
                        NULL};

        (void)state;
        assert_int_equal(configcase_parse(&c, argv, errmsg), 0);
        assert_true(c.id == UINT64_MAX);
        assert_string_equal(c.data_dir, "/srv/baton");
        assert_false(c.snapshot_compression);
        assert_int_equal(c.max_frame, 32768);
        assert_string_equal(c.metrics_address, "127.0.0.1:9100");
        assert_string_equal(c.apply_log, "");
        assert_int_equal(c.log_level, LOG_DEBUG);
}

static void expect_flag_error(char **argv, const char *what)
{
        struct config c;
        char errmsg[CONFIG_ERRMSG_MAX];

        errmsg[0] = '\0';
        assert_int_equal(configcase_parse(&c, argv, errmsg), BATON_EINVAL);
        if (strncmp(errmsg, what, strlen(what)) != 0) {
                fail_msg("got '%s', want a message starting '%s'", errmsg,
                         what);
        }
}

static void flag_errors(void **state)
{
        (void)state;
        {
                char *argv[] = {"batond", "--bogus=1", NULL};
                expect_flag_error(argv, "flag --bogus: unknown flag");
        }
        {
                char *argv[] = {"batond", "--bogus", "1", NULL};
                expect_flag_error(argv, "flag --bogus: unknown flag");
        }
        {
                char *argv[] = {"batond", "--election-timeout-ms=5", NULL};
                expect_flag_error(argv, "flag --election-timeout-ms: 5 is out "
                                        "of range 100..60000");
        }
        {
                char *argv[] = {"batond", "--max-frame", "64k", NULL};
                expect_flag_error(argv,
                                  "flag --max-frame: junk after the number");
        }
        {
                char *argv[] = {"batond", "--metrics-address=localhost:0",
                                NULL};
                expect_flag_error(argv, "flag --metrics-address: "
                                        "'localhost:0': the port must be");
        }
        {
                char *argv[] = {"batond", "--member", "1 127.0.0.1:7001", NULL};
                expect_flag_error(argv, "flag --member: expected 'ID");
        }
        {
                char *argv[] = {"batond", "--id", NULL};
                expect_flag_error(argv, "flag --id: missing value");
        }
        {
                char *argv[] = {"batond", "--data-dir", "--id=1", NULL};
                expect_flag_error(argv, "flag --data-dir: missing value");
        }
        {
                char *argv[] = {"batond", "stray", NULL};
                expect_flag_error(argv, "argument 'stray': expected --KEY");
        }
        {
                char *argv[] = {"batond", "-x", NULL};
                expect_flag_error(argv, "argument '-x': expected --KEY");
        }
        {
                char *argv[] = {"batond", "--config=/a", "--config=/b", NULL};
                expect_flag_error(argv, "flag --config: given twice");
        }
}

/* A file that cannot be read is an I/O error, as config_load_file's. */
static void flag_config_unreadable(void **state)
{
        struct config c;
        char errmsg[CONFIG_ERRMSG_MAX];
        char *argv[] = {"batond", "--config", "/nonexistent/b.conf", NULL};

        (void)state;
        assert_int_equal(configcase_parse(&c, argv, errmsg), BATON_EIO);
        assert_string_equal(errmsg, "/nonexistent/b.conf: cannot open: No "
                                    "such file or directory");
}

/* An error in the file named by --config keeps its file:line. */
static void flag_config_file_error(void **state)
{
        struct configcase_tmpfile t;
        struct config c;
        char errmsg[CONFIG_ERRMSG_MAX];
        char want[CONFIG_ERRMSG_MAX];

        (void)state;
        configcase_tmp_write(&t, "id = 1\nbogus = 2\n");
        {
                char *argv[] = {"batond", "--id=1", "--config", t.path, NULL};
                assert_int_equal(configcase_parse(&c, argv, errmsg),
                                 BATON_EINVAL);
        }
        snprintf(want, sizeof want, "%s:2: unknown key 'bogus'", t.path);
        assert_string_equal(errmsg, want);
        configcase_tmp_remove(&t);
}

static void wants_help(void **state)
{
        char *none[] = {"batond", "--id=1", NULL};
        char *longf[] = {"batond", "--id=1", "--help", NULL};
        char *shortf[] = {"batond", "-h", NULL};

        (void)state;
        assert_false(config_wants_help(2, none));
        assert_true(config_wants_help(3, longf));
        assert_true(config_wants_help(2, shortf));
        assert_false(config_wants_help(1, shortf));
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(flags_override_file),
            cmocka_unit_test(member_flags_replace_file),
            cmocka_unit_test(flag_forms),
            cmocka_unit_test(flag_errors),
            cmocka_unit_test(flag_config_unreadable),
            cmocka_unit_test(flag_config_file_error),
            cmocka_unit_test(wants_help),
        };

        return cmocka_run_group_tests_name("config_flags", tests, NULL, NULL);
}
