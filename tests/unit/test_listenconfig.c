/* Unit tests for the addresses batond binds (client-listen, raft-listen):
 * their defaults, the forms they take, and the clashes refused at start. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../include/baton.h"
#include "../../src/server/config/config.h"

/* Parse node 1's flags (plain text, three members on 10.0.0.N) followed
 * by `extra` (NULL-terminated) and validate; the result, message in
 * `errmsg`. */
static int configure(struct config *c, char *errmsg, const char *const *extra)
{
        char *argv[32] = {
            "batond",
            "--id",
            "1",
            "--data-dir",
            "/tmp/baton-listen-test",
            "--tls",
            "false",
            "--member",
            "1 10.0.0.1:7001 baton1.example.net:7101",
            "--member",
            "2 10.0.0.2:7001 baton2.example.net:7101",
            "--member",
            "3 10.0.0.3:7001 baton3.example.net:7101",
        };
        int argc = 13;
        int rv;

        while (*extra != NULL) {
                argv[argc++] = (char *)*extra++;
        }
        config_defaults(c);
        rv = config_parse_args(c, argc, argv, errmsg, CONFIG_ERRMSG_MAX);
        if (rv != 0) {
                return rv;
        }
        return config_validate(c, errmsg, CONFIG_ERRMSG_MAX);
}

/* `extra` is refused with a message that starts with `want`. */
static void refused(const char *const *extra, const char *want)
{
        struct config c;
        char errmsg[CONFIG_ERRMSG_MAX] = "";

        assert_int_equal(configure(&c, errmsg, extra), BATON_EINVAL);
        if (strncmp(errmsg, want, strlen(want)) != 0) {
                fail_msg("got '%s', want a message starting '%s'", errmsg,
                         want);
        }
}

/* Unset, each binds the member line's address: what it does without the
 * keys. */
static void defaults_are_the_member_line(void **state)
{
        static const char *const none[] = {NULL};
        struct config c;
        char errmsg[CONFIG_ERRMSG_MAX];

        (void)state;
        assert_int_equal(configure(&c, errmsg, none), 0);
        assert_string_equal(c.client_listen, "baton1.example.net:7101");
        assert_string_equal(c.raft_listen, "10.0.0.1:7001");
        /* The member line, what the others are told, is untouched. */
        assert_string_equal(c.members[0].client_address,
                            "baton1.example.net:7101");
        assert_string_equal(c.members[0].raft_address, "10.0.0.1:7001");
}

/* IPv4, IPv6 and both wildcards, on either port; the member line stays
 * the advertised address. */
static void forms_accepted(void **state)
{
        static const char *const forms[][4] = {
            {"--client-listen", "0.0.0.0:7101", "--raft-listen",
             "0.0.0.0:7001"},
            {"--client-listen", "[::]:7101", "--raft-listen", "[::]:7001"},
            {"--client-listen", "127.0.0.1:7101", "--raft-listen",
             "127.0.0.1:7001"},
            {"--client-listen", "[::1]:7101", "--raft-listen", "[::1]:7001"},
            /* Behind a port mapping: another port inside. */
            {"--client-listen", "172.17.0.2:9101", "--raft-listen",
             "172.17.0.2:9001"},
        };
        struct config c;
        char errmsg[CONFIG_ERRMSG_MAX];
        const char *extra[5];
        size_t i;

        (void)state;
        for (i = 0; i < sizeof forms / sizeof forms[0]; i++) {
                memcpy(extra, forms[i], sizeof forms[i]);
                extra[4] = NULL;
                if (configure(&c, errmsg, extra) != 0) {
                        fail_msg("%s %s %s %s: %s", forms[i][0], forms[i][1],
                                 forms[i][2], forms[i][3], errmsg);
                }
                assert_string_equal(c.client_listen, forms[i][1]);
                assert_string_equal(c.raft_listen, forms[i][3]);
                assert_string_equal(c.members[0].client_address,
                                    "baton1.example.net:7101");
                assert_string_equal(c.members[0].raft_address, "10.0.0.1:7001");
        }
}

/* A bad value names the key, as a flag and in a file. */
static void bad_values_name_the_key(void **state)
{
        static const char *const no_port[] = {"--client-listen", "0.0.0.0",
                                              NULL};
        static const char *const bad_port[] = {"--raft-listen", "0.0.0.0:70001",
                                               NULL};
        static const char *const bad_host[] = {"--client-listen",
                                               "10.0.0.256:7101", NULL};
        struct config c;
        char path[] = "/tmp/baton-listen-XXXXXX";
        char errmsg[CONFIG_ERRMSG_MAX];
        char want[CONFIG_ERRMSG_MAX];
        FILE *f;
        int fd;

        (void)state;
        refused(no_port, "flag --client-listen: '0.0.0.0': no ':port'");
        refused(bad_port, "flag --raft-listen: '0.0.0.0:70001': the port");
        refused(bad_host, "flag --client-listen: '10.0.0.256:7101': not a");
        fd = mkstemp(path);
        assert_true(fd >= 0);
        f = fdopen(fd, "w");
        assert_non_null(f);
        fputs("id = 1\n"
              "data-dir = /tmp/x\n"
              "member = 1 10.0.0.1:7001 10.0.0.1:7101\n"
              "client-listen = every-interface\n",
              f);
        assert_int_equal(fclose(f), 0);
        config_defaults(&c);
        assert_int_equal(config_load_file(&c, path, errmsg, sizeof errmsg),
                         BATON_EINVAL);
        assert_int_equal(remove(path), 0);
        snprintf(want, sizeof want,
                 "%s:4: client-listen: 'every-interface': no ':port'", path);
        if (strncmp(errmsg, want, strlen(want)) != 0) {
                fail_msg("got '%s', want '%s'", errmsg, want);
        }
}

/* Two of this node's listeners on one port are refused before anything
 * binds, naming both keys: the same address, or a wildcard and any
 * address on its port. */
static void clashes_refused(void **state)
{
        static const char *const same[] = {"--client-listen", "10.0.0.1:7001",
                                           NULL};
        static const char *const v4_any[] = {"--client-listen", "0.0.0.0:7101",
                                             "--raft-listen", "127.0.0.1:7101",
                                             NULL};
        static const char *const v6_any[] = {"--raft-listen", "[::]:7001",
                                             "--client-listen",
                                             "127.0.0.1:7001", NULL};
        static const char *const metrics[] = {"--client-listen", "0.0.0.0:7101",
                                              "--metrics-address",
                                              "127.0.0.1:7101", NULL};
        static const char *const http[] = {"--http-listen", "0.0.0.0:7201",
                                           "--metrics-address",
                                           "127.0.0.1:7201", NULL};
        static const char *const apart[] = {"--raft-listen", "0.0.0.0:7001",
                                            "--client-listen", "[::1]:7001",
                                            NULL};
        struct config c;
        char errmsg[CONFIG_ERRMSG_MAX];

        (void)state;
        refused(same, "client-listen: 10.0.0.1:7001 takes the port of "
                      "raft-listen 10.0.0.1:7001 (the member line's)");
        refused(v4_any, "client-listen: 0.0.0.0:7101 takes the port of "
                        "raft-listen 127.0.0.1:7101");
        refused(v6_any, "client-listen: 127.0.0.1:7001 takes the port of "
                        "raft-listen [::]:7001");
        refused(metrics, "metrics-address: 127.0.0.1:7101 takes the port of "
                         "client-listen 0.0.0.0:7101");
        refused(http, "http-listen: 0.0.0.0:7201 takes the port of "
                      "metrics-address 127.0.0.1:7201");
        /* An IPv4 wildcard and an IPv6 address are separate sockets. */
        assert_int_equal(configure(&c, errmsg, apart), 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(defaults_are_the_member_line),
            cmocka_unit_test(forms_accepted),
            cmocka_unit_test(bad_values_name_the_key),
            cmocka_unit_test(clashes_refused),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
