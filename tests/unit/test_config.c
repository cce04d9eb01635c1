/* Unit tests for batond's configuration: table, file, flags, validation. */
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

/* Loading `text` fails with "PATH:LINE: " followed by `what`. */
static void expect_file_error(const char *text, int line, const char *what)
{
        struct config c;
        char path[64];
        char errmsg[CONFIG_ERRMSG_MAX];
        char want[CONFIG_ERRMSG_MAX];

        errmsg[0] = '\0';
        assert_int_equal(configcase_load(&c, text, path, errmsg), BATON_EINVAL);
        snprintf(want, sizeof want, "%s:%d: %s", path, line, what);
        if (strncmp(errmsg, want, strlen(want)) != 0) {
                fail_msg("got '%s', want a message starting '%s'", errmsg,
                         want);
        }
}

/* `base` followed by `extra` loads, and validation fails with `what`. */
static void expect_invalid_on(const char *base, const char *extra,
                              const char *what)
{
        struct config c;
        char text[2048];
        char errmsg[CONFIG_ERRMSG_MAX];

        snprintf(text, sizeof text, "%s%s", base, extra);
        errmsg[0] = '\0';
        assert_int_equal(configcase_load(&c, text, NULL, errmsg), 0);
        assert_int_equal(config_validate(&c, errmsg, sizeof errmsg),
                         BATON_EINVAL);
        if (strncmp(errmsg, what, strlen(what)) != 0) {
                fail_msg("got '%s', want a message starting '%s'", errmsg,
                         what);
        }
}

/* GOOD followed by `extra` loads, and validation fails with `what`. */
static void expect_invalid(const char *extra, const char *what)
{
        expect_invalid_on(GOOD, extra, what);
}

/* Every key has the default config.h documents. */
static void defaults(void **state)
{
        struct config c;
        char errmsg[CONFIG_ERRMSG_MAX];

        (void)state;
        config_defaults(&c);
        assert_int_equal(c.id, 0);
        assert_string_equal(c.data_dir, "");
        assert_int_equal(c.n_members, 0);
        assert_int_equal(c.election_timeout_ms, 300);
        assert_int_equal(c.heartbeat_timeout_ms, 50);
        assert_int_equal(c.snapshot_threshold, 4096);
        assert_int_equal(c.snapshot_trailing, 2048);
        assert_true(c.snapshot_compression);
        assert_int_equal(c.max_connections, 10000);
        assert_int_equal(c.max_frame, 65536);
        assert_int_equal(c.output_limit, 1048576);
        assert_int_equal(c.max_sessions, 65536);
        assert_int_equal(c.max_locks_per_session, 1024);
        assert_int_equal(c.max_waiters_per_lock, 4096);
        assert_int_equal(c.max_inflight_entries, 8192);
        assert_int_equal(c.min_ttl_ms, 0);
        assert_int_equal(c.max_ttl_ms, 3600000);
        assert_string_equal(c.metrics_address, "");
        assert_string_equal(c.apply_log, "");
        assert_int_equal(c.log_level, LOG_INFO);
        assert_int_equal(c.log_format, LOG_TEXT);
        assert_int_equal(c.ready_max_lag, 1000);
        /* The defaults alone name no node. */
        assert_int_equal(config_validate(&c, errmsg, sizeof errmsg),
                         BATON_EINVAL);
        assert_string_equal(errmsg, "id: not set");
}

/* A file that sets every key, with comments, blanks and indentation. */
static void full_file(void **state)
{
        static const char text[] = "# a comment\n"
                                   "; another comment\n"
                                   "\n"
                                   "id = 2\n"
                                   "  data-dir=/var/lib/baton/node2\n"
                                   "member = 1 10.0.0.1:7001 10.0.0.1:7101\n"
                                   "member = 2\t10.0.0.2:7001   10.0.0.2:7101\n"
                                   "member = 3 10.0.0.3:7001 10.0.0.3:7101\n"
                                   "election-timeout-ms = 1000\n"
                                   "heartbeat-timeout-ms = 100\n"
                                   "snapshot-threshold = 1024\n"
                                   "snapshot-trailing = 128\n"
                                   "snapshot-compression = off\n"
                                   "max-connections = 10\n"
                                   "max-frame = 4096\n"
                                   "output-limit = 65536\n"
                                   "max-sessions = 5\n"
                                   "max-locks-per-session = 6\n"
                                   "max-waiters-per-lock = 7\n"
                                   "max-inflight-entries = 8\n"
                                   "min-ttl-ms = 2000\n"
                                   "max-ttl-ms = 60000\n"
                                   "metrics-address = 0.0.0.0:9100\n"
                                   "apply-log = /var/log/baton/apply.jsonl\n"
                                   "tls-ca = /etc/baton/tls/ca.crt\n"
                                   "tls-cert = /etc/baton/tls/node2.crt\n"
                                   "tls-key = /etc/baton/tls/node2.key\n"
                                   "log-level = debug\r\n";
        struct config c;
        char errmsg[CONFIG_ERRMSG_MAX];
        const struct config_member *m;

        (void)state;
        assert_int_equal(configcase_load(&c, text, NULL, errmsg), 0);
        assert_int_equal(config_validate(&c, errmsg, sizeof errmsg), 0);
        assert_int_equal(c.id, 2);
        assert_string_equal(c.data_dir, "/var/lib/baton/node2");
        assert_int_equal(c.n_members, 3);
        assert_int_equal(c.members[0].id, 1);
        assert_string_equal(c.members[0].raft_address, "10.0.0.1:7001");
        assert_string_equal(c.members[0].client_address, "10.0.0.1:7101");
        m = settings_member(&c, 2);
        assert_non_null(m);
        assert_ptr_equal(m, &c.members[1]);
        assert_string_equal(m->raft_address, "10.0.0.2:7001");
        assert_string_equal(m->client_address, "10.0.0.2:7101");
        assert_null(settings_member(&c, 4));
        assert_int_equal(c.election_timeout_ms, 1000);
        assert_int_equal(c.heartbeat_timeout_ms, 100);
        assert_int_equal(c.snapshot_threshold, 1024);
        assert_int_equal(c.snapshot_trailing, 128);
        assert_false(c.snapshot_compression);
        assert_int_equal(c.max_connections, 10);
        assert_int_equal(c.max_frame, 4096);
        assert_int_equal(c.output_limit, 65536);
        assert_int_equal(c.max_sessions, 5);
        assert_int_equal(c.max_locks_per_session, 6);
        assert_int_equal(c.max_waiters_per_lock, 7);
        assert_int_equal(c.max_inflight_entries, 8);
        assert_int_equal(c.min_ttl_ms, 2000);
        assert_int_equal(c.max_ttl_ms, 60000);
        assert_string_equal(c.metrics_address, "0.0.0.0:9100");
        assert_string_equal(c.apply_log, "/var/log/baton/apply.jsonl");
        assert_int_equal(c.log_level, LOG_DEBUG);
}

/* min-ttl-ms = 0 becomes twice the election timeout. */
static void min_ttl_resolved(void **state)
{
        struct config c;
        char errmsg[CONFIG_ERRMSG_MAX];

        (void)state;
        assert_int_equal(configcase_load(&c, GOOD "election-timeout-ms = 400\n",
                                         NULL, errmsg),
                         0);
        assert_int_equal(c.min_ttl_ms, 0);
        assert_int_equal(config_validate(&c, errmsg, sizeof errmsg), 0);
        assert_int_equal(c.min_ttl_ms, 800);
        /* Validating again changes nothing. */
        assert_int_equal(config_validate(&c, errmsg, sizeof errmsg), 0);
        assert_int_equal(c.min_ttl_ms, 800);
}

/* Every spelling of a boolean. */
static void bool_spellings(void **state)
{
        static const struct {
                const char *text;
                bool value;
        } cases[] = {
            {"true", true}, {"yes", true},    {"on", true},  {"1", true},
            {"TRUE", true}, {"false", false}, {"no", false}, {"off", false},
            {"0", false},   {"Off", false},
        };
        struct config c;
        char text[256];
        char errmsg[CONFIG_ERRMSG_MAX];
        size_t i;

        (void)state;
        for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
                snprintf(text, sizeof text, "snapshot-compression = %s\n",
                         cases[i].text);
                assert_int_equal(configcase_load(&c, text, NULL, errmsg), 0);
                assert_int_equal(c.snapshot_compression, cases[i].value);
        }
}

static void unknown_key(void **state)
{
        (void)state;
        expect_file_error("id = 1\n\nelection-timeout = 300\n", 3,
                          "unknown key 'election-timeout'");
        expect_file_error("id = 1\nID = 1\n", 2, "unknown key 'ID'");
}

static void bad_number(void **state)
{
        (void)state;
        expect_file_error(GOOD "election-timeout-ms = abc\n", GOOD_LINES + 1,
                          "election-timeout-ms: 'abc' is not a decimal");
        expect_file_error("election-timeout-ms = -300\n", 1,
                          "election-timeout-ms: '-300' is not a decimal");
        expect_file_error("election-timeout-ms = +300\n", 1,
                          "election-timeout-ms: '+300' is not a decimal");
        expect_file_error("election-timeout-ms =\n", 1,
                          "election-timeout-ms: '' is not a decimal");
        expect_file_error("id = 1.5\n", 1, "id: junk after the number");
}

static void out_of_range(void **state)
{
        (void)state;
        expect_file_error(GOOD "election-timeout-ms = 99\n", GOOD_LINES + 1,
                          "election-timeout-ms: 99 is out of range 100..60000");
        expect_file_error("election-timeout-ms = 60001\n", 1,
                          "election-timeout-ms: 60001 is out of range");
        expect_file_error("heartbeat-timeout-ms = 9\n", 1,
                          "heartbeat-timeout-ms: 9 is out of range 10..10000");
        /* Above what the field holds, and above 2^64. */
        expect_file_error("max-sessions = 4294967296\n", 1,
                          "max-sessions: 4294967296 is out of range");
        expect_file_error("id = 18446744073709551616\n", 1,
                          "id: 18446744073709551616 is out of range 1..2^64-1");
        expect_file_error("id = 0\n", 1, "id: 0 is out of range");
}

static void junk_after_number(void **state)
{
        (void)state;
        expect_file_error(GOOD "election-timeout-ms = 300ms\n", GOOD_LINES + 1,
                          "election-timeout-ms: junk after the number in "
                          "'300ms'");
        expect_file_error("max-frame = 0x1000\n", 1,
                          "max-frame: junk after the number");
        expect_file_error("max-frame = 4096 8192\n", 1,
                          "max-frame: junk after the number");
        /* '#' is not an inline comment: only whole lines are comments. */
        expect_file_error("max-frame = 4096 # bytes\n", 1,
                          "max-frame: junk after the number");
}

static void bad_bool(void **state)
{
        (void)state;
        expect_file_error("\n\nsnapshot-compression = maybe\n", 3,
                          "snapshot-compression: 'maybe' is not a boolean");
        expect_file_error("snapshot-compression = 2\n", 1,
                          "snapshot-compression: '2' is not a boolean");
}

/* log-format takes text or json, nothing else; ready-max-lag a number. */
static void log_format_and_ready_lag(void **state)
{
        struct config c;
        char errmsg[CONFIG_ERRMSG_MAX];
        char path[64];

        (void)state;
        config_defaults(&c);
        assert_int_equal(configcase_load(&c,
                                         GOOD "log-format = json\n"
                                              "ready-max-lag = 0\n",
                                         path, errmsg),
                         0);
        assert_int_equal(c.log_format, LOG_JSON);
        assert_int_equal(c.ready_max_lag, 0);
        expect_file_error("log-format = xml\n", 1,
                          "log-format: 'xml' is not a log format (text, json)");
        expect_file_error("log-format = JSON\n", 1,
                          "log-format: 'JSON' is not a log format");
        expect_file_error("ready-max-lag = -1\n", 1,
                          "ready-max-lag: '-1' is not a decimal number");
}

static void bad_address(void **state)
{
        (void)state;
        expect_file_error(GOOD "metrics-address = local_host:9100\n",
                          GOOD_LINES + 1,
                          "metrics-address: 'local_host:9100': the host name "
                          "may hold only letters, digits, '-' and '.' "
                          "(expected host:port, [ipv6]:port)");
        expect_file_error("metrics-address = 127.0.0.256:9100\n", 1,
                          "metrics-address: '127.0.0.256:9100': not a "
                          "numeric IPv4 address");
        expect_file_error("metrics-address = 127.0.0.1\n", 1,
                          "metrics-address: '127.0.0.1': no ':port' "
                          "(expected host:port, [ipv6]:port)");
        expect_file_error("metrics-address = 127.0.0.1:0\n", 1,
                          "metrics-address: '127.0.0.1:0': the port must be");
        expect_file_error("metrics-address = 127.0.0.1:65536\n", 1,
                          "metrics-address: '127.0.0.1:65536': the port");
        expect_file_error("metrics-address = 127.0.0.1:\n", 1,
                          "metrics-address: '127.0.0.1:': the port");
        expect_file_error("metrics-address = 127.0.1:9100\n", 1,
                          "metrics-address: '127.0.1:9100': not a numeric");
        expect_file_error("metrics-address = 127.0.0.01:9100\n", 1,
                          "metrics-address: '127.0.0.01:9100': not a "
                          "numeric IPv4");
        expect_file_error("metrics-address = 127.0.0.1:9100x\n", 1,
                          "metrics-address: '127.0.0.1:9100x': the port");
        expect_file_error("metrics-address = ::1:9100\n", 1,
                          "metrics-address: '::1:9100': an IPv6 address must "
                          "be written in brackets");
        expect_file_error("metrics-address = [::1:9100\n", 1,
                          "metrics-address: '[::1:9100': '[' without");
        expect_file_error("metrics-address = "
                          "a234567890123456789012345678901234567890"
                          "1234567890123456789012345:1\n",
                          1, "metrics-address: 'a2345");
        /* The same checks hold inside a member line. */
        expect_file_error("member = 1 node_1:7001 127.0.0.1:7101\n", 1,
                          "member: raft address 'node_1:7001': the host "
                          "name");
        expect_file_error("member = 1 127.0.0.1:7001 127.0.0.1:0\n", 1,
                          "member: client address '127.0.0.1:0': the port");
        /* libraft 0.22.1 cannot start on an IPv6 raft address. */
        expect_file_error("member = 1 [::1]:7001 127.0.0.1:7101\n", 1,
                          "member: raft address '[::1]:7001': libraft 0.22.1 "
                          "cannot use an IPv6 raft address");
}

/* Host names and IPv6 literals, where each is accepted. */
static void names_and_ipv6(void **state)
{
        struct config c;
        char errmsg[CONFIG_ERRMSG_MAX];
        char longest[CONFIG_ADDRESS_MAX + 64];

        (void)state;
        assert_int_equal(
            configcase_load(&c,
                            "id = 2\n"
                            "data-dir = /tmp/x\n"
                            "member = 1 localhost:7001 [::1]:7101\n"
                            "member = 2 node-2.example.com:7001 "
                            "[fe80::2]:7101\n"
                            "member = 3 10.0.0.3:7001 node3:7101\n"
                            "metrics-address = [::]:9100\n"
                            "tls = off\n",
                            NULL, errmsg),
            0);
        assert_int_equal(config_validate(&c, errmsg, sizeof errmsg), 0);
        assert_string_equal(c.members[0].raft_address, "localhost:7001");
        assert_string_equal(c.members[0].client_address, "[::1]:7101");
        assert_string_equal(c.members[1].raft_address,
                            "node-2.example.com:7001");
        assert_string_equal(c.members[2].client_address, "node3:7101");
        assert_string_equal(c.metrics_address, "[::]:9100");
        {
                char *argv[] = {"batond", "--metrics-address=localhost:9100",
                                NULL};
                assert_int_equal(configcase_parse(&c, argv, errmsg), 0);
                assert_string_equal(c.metrics_address, "localhost:9100");
        }
        /* 64 bytes, the wire's limit, fit in a member line; 65 do not. */
        snprintf(longest, sizeof longest,
                 "id = 1\ndata-dir = /tmp/x\ntls = off\nmember = 1 %.59s:7001 "
                 "127.0.0.1:7101\n",
                 "a23456789.123456789.123456789.123456789.123456789."
                 "123456789");
        assert_int_equal(configcase_load(&c, longest, NULL, errmsg), 0);
        assert_int_equal(config_validate(&c, errmsg, sizeof errmsg), 0);
        assert_int_equal(strlen(c.members[0].raft_address), 64);
        expect_file_error("member = 1 "
                          "a23456789.123456789.123456789.123456789.123456789."
                          "1234567890:7001 127.0.0.1:7101\n",
                          1,
                          "member: raft address 'a23456789.123456789.12345"
                          "6789.123456789.123456789.1234567890:7001': the "
                          "address is over 64 bytes");
}

static void bad_member_line(void **state)
{
        (void)state;
        expect_file_error(GOOD "member = 4 127.0.0.1:7004\n", GOOD_LINES + 1,
                          "member: expected 'ID RAFT_ADDRESS CLIENT_ADDRESS "
                          "[HTTP_ADDRESS]', got '4 127.0.0.1:7004'");
        expect_file_error("member = 4 127.0.0.1:7004 127.0.0.1:7104 x\n", 1,
                          "member: HTTP address: ");
        expect_file_error(
            "member = 4 127.0.0.1:7004 127.0.0.1:7104 127.0.0.1:7304 y\n", 1,
            "member: expected 'ID RAFT_ADDRESS CLIENT_ADDRESS [HTTP_ADDRESS]'");
        expect_file_error("member =\n", 1,
                          "member: expected 'ID RAFT_ADDRESS CLIENT_ADDRESS");
        expect_file_error("member = four 127.0.0.1:7004 127.0.0.1:7104\n", 1,
                          "member: id 'four' is not a decimal number");
        expect_file_error("member = 0 127.0.0.1:7004 127.0.0.1:7104\n", 1,
                          "member: id 0 is out of range");
}

static void duplicate_member_id(void **state)
{
        (void)state;
        expect_file_error(GOOD "member = 2 127.0.0.1:7004 127.0.0.1:7104\n",
                          GOOD_LINES + 1, "member: duplicate id 2");
}

static void too_many_members(void **state)
{
        char text[4096];
        size_t len = 0;
        int i;

        (void)state;
        for (i = 1; i <= CONFIG_MAX_MEMBERS + 1; i++) {
                len +=
                    (size_t)snprintf(text + len, sizeof text - len,
                                     "member = %d 127.0.0.1:%d 127.0.0.1:%d\n",
                                     i, 7000 + i, 8000 + i);
        }
        expect_file_error(text, CONFIG_MAX_MEMBERS + 1,
                          "member: too many members (at most 16)");
}

/* Section headers, lines that are not `key = value`, overlong lines. */
static void bad_syntax(void **state)
{
        char text[512];

        (void)state;
        expect_file_error("id = 1\n[raft]\nelection-timeout-ms = 300\n", 2,
                          "sections are not supported");
        expect_file_error("id = 1\n\njust words\n", 3,
                          "expected 'key = value'");
        /* The first error is the one reported, whichever kind it is. */
        expect_file_error("id = 1\njust words\nbogus = 1\n", 2,
                          "expected 'key = value'");
        expect_file_error("id = 1\nbogus = 1\njust words\n", 2,
                          "unknown key 'bogus'");
        expect_file_error("id = 1\nbogus = 1\n[x]\n", 2, "unknown key 'bogus'");
        expect_file_error("id = 1\n[x]\nbogus = 1\n", 2,
                          "sections are not supported");
        memset(text, 0, sizeof text);
        strcpy(text, "id = 1\ndata-dir = /");
        memset(text + strlen(text), 'a', 300);
        strcat(text, "\nbogus = 1\n");
        expect_file_error(text, 2, "line too long");
        /* inih's "key: value" is not ours. */
        expect_file_error("id = 1\nlog-level: debug\n", 2,
                          "expected 'key = value'");
        /* A key set twice is refused; member lines add up. */
        expect_file_error(GOOD "election-timeout-ms = 400\n"
                               "election-timeout-ms = 500\n",
                          GOOD_LINES + 2,
                          "election-timeout-ms: set twice (first on line 9)");
        /* A comment may be as long as it likes. */
        memset(text, 0, sizeof text);
        strcpy(text, "# ");
        memset(text + 2, 'a', 300);
        strcat(text, "\nbogus = 1\n");
        expect_file_error(text, 2, "unknown key 'bogus'");
}

static void missing_file(void **state)
{
        struct config c;
        char errmsg[CONFIG_ERRMSG_MAX];

        (void)state;
        config_defaults(&c);
        assert_int_equal(config_load_file(&c, "/nonexistent/baton.conf", errmsg,
                                          sizeof errmsg),
                         BATON_EIO);
        assert_string_equal(errmsg, "/nonexistent/baton.conf: cannot open: "
                                    "No such file or directory");
        assert_int_equal(config_load_file(&c, "/tmp", errmsg, sizeof errmsg),
                         BATON_EIO);
        assert_true(strncmp(errmsg, "/tmp:1: cannot read: ", 21) == 0);
}

static void id_not_a_member(void **state)
{
        struct config c;
        char errmsg[CONFIG_ERRMSG_MAX];

        (void)state;
        assert_int_equal(configcase_load(&c, GOOD, NULL, errmsg), 0);
        c.id = 4;
        assert_int_equal(config_validate(&c, errmsg, sizeof errmsg),
                         BATON_EINVAL);
        assert_string_equal(errmsg, "id: 4 is not one of the members");
        /* The same from a file. */
        assert_int_equal(
            configcase_load(&c,
                            "id = 4\n"
                            "data-dir = /tmp/x\n"
                            "member = 1 127.0.0.1:7001 127.0.0.1:7101\n",
                            NULL, errmsg),
            0);
        assert_int_equal(config_validate(&c, errmsg, sizeof errmsg),
                         BATON_EINVAL);
        assert_string_equal(errmsg, "id: 4 is not one of the members");
}

static void heartbeat_not_below_election(void **state)
{
        (void)state;
        expect_invalid(
            "election-timeout-ms = 200\nheartbeat-timeout-ms = 200\n",
            "heartbeat-timeout-ms: 200 must be below "
            "election-timeout-ms (200)");
        expect_invalid(
            "election-timeout-ms = 200\nheartbeat-timeout-ms = 201\n",
            "heartbeat-timeout-ms: 201 must be below");
}

static void min_ttl_below_two_elections(void **state)
{
        (void)state;
        expect_invalid("min-ttl-ms = 599\n",
                       "min-ttl-ms: 599 is below 2 x election-timeout-ms "
                       "(600)");
        expect_invalid("election-timeout-ms = 1000\nmin-ttl-ms = 1999\n",
                       "min-ttl-ms: 1999 is below 2 x election-timeout-ms "
                       "(2000)");
}

static void missing_data_dir(void **state)
{
        struct config c;
        char errmsg[CONFIG_ERRMSG_MAX];

        (void)state;
        assert_int_equal(
            configcase_load(&c,
                            "id = 1\n"
                            "member = 1 127.0.0.1:7001 127.0.0.1:7101\n",
                            NULL, errmsg),
            0);
        assert_int_equal(config_validate(&c, errmsg, sizeof errmsg),
                         BATON_EINVAL);
        assert_string_equal(errmsg, "data-dir: not set");
}

/* TLS needs its files; each node's identity has its id in it. */
static void tls_settings(void **state)
{
        static const char files[] =
            "tls-ca = /c\ntls-cert = /n\ntls-key = /k\n";
        struct config c;
        char text[2048];
        char errmsg[CONFIG_ERRMSG_MAX];
        char id[CONFIG_IDENTITY_MAX];

        (void)state;
        /* TLS is on by default. */
        expect_invalid_on(GOOD_MEMBERS, "", "tls-ca: not set, and TLS is on");
        expect_invalid_on(GOOD_MEMBERS, "tls-ca = /c\n",
                          "tls-cert: not set, and TLS is on");
        expect_invalid_on(GOOD_MEMBERS, "tls-ca = /c\ntls-cert = /n\n",
                          "tls-key: not set, and TLS is on");
        expect_invalid_on(GOOD_MEMBERS, "tls = off\nmetrics-tls = true\n",
                          "tls-ca: not set");
        expect_invalid("tls-peer-identity = node\n",
                       "tls-peer-identity: 'node' has no {id}");

        snprintf(text, sizeof text,
                 "%s%stls-peer-identity = baton://n/{id}.x\n", GOOD_MEMBERS,
                 files);
        assert_int_equal(configcase_load(&c, text, NULL, errmsg), 0);
        assert_int_equal(config_validate(&c, errmsg, sizeof errmsg), 0);
        assert_int_equal(tlsconfig_peer_identity(&c, 42, id, sizeof id), 0);
        assert_string_equal(id, "baton://n/42.x");
        assert_int_equal(tlsconfig_peer_identity(&c, 42, id, 8), BATON_EINVAL);
        /* idle-timeout-ms 0 means max-ttl-ms. */
        assert_int_equal(c.idle_timeout_ms, c.max_ttl_ms);
}

/* The remaining whole-config rules. */
static void other_invalid(void **state)
{
        struct config c;
        char errmsg[CONFIG_ERRMSG_MAX];

        (void)state;
        expect_invalid("snapshot-threshold = 65536\nsnapshot-trailing = 8191\n",
                       "snapshot-trailing: 8191 is below snapshot-threshold "
                       "/ 8 (8192)");
        expect_invalid("min-ttl-ms = 5000\nmax-ttl-ms = 4000\n",
                       "max-ttl-ms: 4000 is below min-ttl-ms (5000)");
        expect_invalid("metrics-address = 127.0.0.1:7101\n",
                       "metrics-address: 127.0.0.1:7101 is also a member");

        /* Addresses must be distinct across members. */
        assert_int_equal(
            configcase_load(&c,
                            "id = 1\ndata-dir = /tmp/x\n"
                            "member = 1 127.0.0.1:7001 127.0.0.1:7101\n"
                            "member = 2 127.0.0.1:7001 127.0.0.1:7102\n",
                            NULL, errmsg),
            0);
        assert_int_equal(config_validate(&c, errmsg, sizeof errmsg),
                         BATON_EINVAL);
        assert_string_equal(errmsg,
                            "member: address 127.0.0.1:7001 is used twice");

        /* No members at all. */
        assert_int_equal(
            configcase_load(&c, "id = 1\ndata-dir = /tmp/x\n", NULL, errmsg),
            0);
        assert_int_equal(config_validate(&c, errmsg, sizeof errmsg),
                         BATON_EINVAL);
        assert_true(strncmp(errmsg, "member: none listed", 19) == 0);

        /* A struct filled by hand is checked as strictly as a file. */
        assert_int_equal(configcase_load(&c, GOOD, NULL, errmsg), 0);
        c.max_frame = 1;
        assert_int_equal(config_validate(&c, errmsg, sizeof errmsg),
                         BATON_EINVAL);
        assert_string_equal(errmsg, "max-frame: 1 is out of range 1024..65536");
        assert_int_equal(configcase_load(&c, GOOD, NULL, errmsg), 0);
        c.members[2].id = 1;
        assert_int_equal(config_validate(&c, errmsg, sizeof errmsg),
                         BATON_EINVAL);
        assert_string_equal(errmsg, "member: duplicate id 1");
        assert_int_equal(configcase_load(&c, GOOD, NULL, errmsg), 0);
        strcpy(c.members[1].client_address, "host_1:1");
        assert_int_equal(config_validate(&c, errmsg, sizeof errmsg),
                         BATON_EINVAL);
        assert_string_equal(errmsg,
                            "member 2: client address 'host_1:1': the host "
                            "name may hold only letters, digits, '-' and '.' "
                            "(expected host:port, [ipv6]:port)");
        assert_int_equal(configcase_load(&c, GOOD, NULL, errmsg), 0);
        strcpy(c.members[1].raft_address, "[::1]:1");
        assert_int_equal(config_validate(&c, errmsg, sizeof errmsg),
                         BATON_EINVAL);
        assert_true(strncmp(errmsg, "member 2: raft address '[::1]:1': libraft",
                            40) == 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(defaults),
            cmocka_unit_test(full_file),
            cmocka_unit_test(min_ttl_resolved),
            cmocka_unit_test(bool_spellings),
            cmocka_unit_test(unknown_key),
            cmocka_unit_test(bad_number),
            cmocka_unit_test(out_of_range),
            cmocka_unit_test(junk_after_number),
            cmocka_unit_test(bad_bool),
            cmocka_unit_test(log_format_and_ready_lag),
            cmocka_unit_test(bad_address),
            cmocka_unit_test(names_and_ipv6),
            cmocka_unit_test(bad_member_line),
            cmocka_unit_test(duplicate_member_id),
            cmocka_unit_test(too_many_members),
            cmocka_unit_test(bad_syntax),
            cmocka_unit_test(missing_file),
            cmocka_unit_test(id_not_a_member),
            cmocka_unit_test(heartbeat_not_below_election),
            cmocka_unit_test(min_ttl_below_two_elections),
            cmocka_unit_test(missing_data_dir),
            cmocka_unit_test(other_invalid),
            cmocka_unit_test(tls_settings),
        };

        return cmocka_run_group_tests_name("config", tests, NULL, NULL);
}
