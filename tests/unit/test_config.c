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

/* Every key of the table, as config.h's struct lists them. */
static const char *const all_keys[] = {
    "id",
    "data-dir",
    "member",
    "client-listen",
    "raft-listen",
    "join",
    "cluster-name",
    "election-timeout-ms",
    "heartbeat-timeout-ms",
    "restore-margin",
    "snapshot-threshold",
    "snapshot-trailing",
    "snapshot-compression",
    "max-connections",
    "max-frame",
    "output-limit",
    "max-sessions",
    "max-locks-per-session",
    "max-waiters-per-lock",
    "max-permits",
    "max-holders-per-lock",
    "max-names-per-acquire",
    "max-lock-delay-ms",
    "lock-delay-ms",
    "max-watches",
    "max-watches-per-connection",
    "watch-batch-ms",
    "watch-history",
    "max-inflight-entries",
    "min-ttl-ms",
    "max-ttl-ms",
    "metrics-address",
    "metrics-tls",
    "metrics-max-connections",
    "ready-max-lag",
    "apply-log",
    "tls",
    "tls-ca",
    "tls-cert",
    "tls-key",
    "tls-crl",
    "tls-client-ca",
    "tls-expiry-warn-days",
    "tls-peer-identity",
    "handshake-timeout-ms",
    "idle-timeout-ms",
    "max-connections-per-address",
    "role",
    "default-role",
    "log-level",
    "log-format",
};

#define N_ALL_KEYS (sizeof all_keys / sizeof all_keys[0])

/* The members of a file, without its TLS files. */
#define GOOD_MEMBERS                                                           \
        "id = 1\n"                                                             \
        "data-dir = /tmp/baton-test\n"                                         \
        "member = 1 127.0.0.1:7001 127.0.0.1:7101\n"                           \
        "member = 2 127.0.0.1:7002 127.0.0.1:7102\n"                           \
        "member = 3 127.0.0.1:7003 127.0.0.1:7103\n"

/* A file that loads and validates; tests append one bad line to it. */
#define GOOD                                                                   \
        GOOD_MEMBERS                                                           \
        "tls-ca = /etc/baton/tls/ca.crt\n"                                     \
        "tls-cert = /etc/baton/tls/node1.crt\n"                                \
        "tls-key = /etc/baton/tls/node1.key\n"
#define GOOD_LINES 8

struct tmpfile {
        char path[64];
};

/* Write `text` to a fresh file under /tmp. */
static void tmp_write(struct tmpfile *t, const char *text)
{
        size_t len = strlen(text);
        int fd;

        strcpy(t->path, "/tmp/baton-config-XXXXXX");
        fd = mkstemp(t->path);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, text, len), (ssize_t)len);
        assert_int_equal(close(fd), 0);
}

static void tmp_remove(struct tmpfile *t)
{
        assert_int_equal(unlink(t->path), 0);
}

/* Load `text` as a file; returns the result, message in `errmsg`. */
static int load_text(struct config *c, const char *text, char *path_out,
                     char *errmsg)
{
        struct tmpfile t;
        int rv;

        tmp_write(&t, text);
        config_defaults(c);
        rv = config_load_file(c, t.path, errmsg, CONFIG_ERRMSG_MAX);
        if (path_out != NULL) {
                strcpy(path_out, t.path);
        }
        tmp_remove(&t);
        return rv;
}

/* Loading `text` fails with "PATH:LINE: " followed by `what`. */
static void expect_file_error(const char *text, int line, const char *what)
{
        struct config c;
        char path[64];
        char errmsg[CONFIG_ERRMSG_MAX];
        char want[CONFIG_ERRMSG_MAX];

        errmsg[0] = '\0';
        assert_int_equal(load_text(&c, text, path, errmsg), BATON_EINVAL);
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
        assert_int_equal(load_text(&c, text, NULL, errmsg), 0);
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
        assert_int_equal(load_text(&c, text, NULL, errmsg), 0);
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
        assert_int_equal(
            load_text(&c, GOOD "election-timeout-ms = 400\n", NULL, errmsg), 0);
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
                assert_int_equal(load_text(&c, text, NULL, errmsg), 0);
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
        assert_int_equal(load_text(&c,
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

static int parse(struct config *c, char **argv, char *errmsg);

/* Host names and IPv6 literals, where each is accepted. */
static void names_and_ipv6(void **state)
{
        struct config c;
        char errmsg[CONFIG_ERRMSG_MAX];
        char longest[CONFIG_ADDRESS_MAX + 64];

        (void)state;
        assert_int_equal(load_text(&c,
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
                assert_int_equal(parse(&c, argv, errmsg), 0);
                assert_string_equal(c.metrics_address, "localhost:9100");
        }
        /* 64 bytes, the wire's limit, fit in a member line; 65 do not. */
        snprintf(longest, sizeof longest,
                 "id = 1\ndata-dir = /tmp/x\ntls = off\nmember = 1 %.59s:7001 "
                 "127.0.0.1:7101\n",
                 "a23456789.123456789.123456789.123456789.123456789."
                 "123456789");
        assert_int_equal(load_text(&c, longest, NULL, errmsg), 0);
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
                          "member: expected 'ID RAFT_ADDRESS CLIENT_ADDRESS', "
                          "got '4 127.0.0.1:7004'");
        expect_file_error("member = 4 127.0.0.1:7004 127.0.0.1:7104 x\n", 1,
                          "member: expected 'ID RAFT_ADDRESS CLIENT_ADDRESS'");
        expect_file_error("member =\n", 1,
                          "member: expected 'ID RAFT_ADDRESS CLIENT_ADDRESS'");
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
        assert_int_equal(load_text(&c, GOOD, NULL, errmsg), 0);
        c.id = 4;
        assert_int_equal(config_validate(&c, errmsg, sizeof errmsg),
                         BATON_EINVAL);
        assert_string_equal(errmsg, "id: 4 is not one of the members");
        /* The same from a file. */
        assert_int_equal(load_text(&c,
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
        assert_int_equal(load_text(&c,
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
        assert_int_equal(load_text(&c, text, NULL, errmsg), 0);
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
        assert_int_equal(load_text(&c,
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
            load_text(&c, "id = 1\ndata-dir = /tmp/x\n", NULL, errmsg), 0);
        assert_int_equal(config_validate(&c, errmsg, sizeof errmsg),
                         BATON_EINVAL);
        assert_true(strncmp(errmsg, "member: none listed", 19) == 0);

        /* A struct filled by hand is checked as strictly as a file. */
        assert_int_equal(load_text(&c, GOOD, NULL, errmsg), 0);
        c.max_frame = 1;
        assert_int_equal(config_validate(&c, errmsg, sizeof errmsg),
                         BATON_EINVAL);
        assert_string_equal(errmsg, "max-frame: 1 is out of range 1024..65536");
        assert_int_equal(load_text(&c, GOOD, NULL, errmsg), 0);
        c.members[2].id = 1;
        assert_int_equal(config_validate(&c, errmsg, sizeof errmsg),
                         BATON_EINVAL);
        assert_string_equal(errmsg, "member: duplicate id 1");
        assert_int_equal(load_text(&c, GOOD, NULL, errmsg), 0);
        strcpy(c.members[1].client_address, "host_1:1");
        assert_int_equal(config_validate(&c, errmsg, sizeof errmsg),
                         BATON_EINVAL);
        assert_string_equal(errmsg,
                            "member 2: client address 'host_1:1': the host "
                            "name may hold only letters, digits, '-' and '.' "
                            "(expected host:port, [ipv6]:port)");
        assert_int_equal(load_text(&c, GOOD, NULL, errmsg), 0);
        strcpy(c.members[1].raft_address, "[::1]:1");
        assert_int_equal(config_validate(&c, errmsg, sizeof errmsg),
                         BATON_EINVAL);
        assert_true(strncmp(errmsg, "member 2: raft address '[::1]:1': libraft",
                            40) == 0);
}

/* Parse argv (NULL-terminated) over defaults. */
static int parse(struct config *c, char **argv, char *errmsg)
{
        int argc = 0;

        while (argv[argc] != NULL) {
                argc++;
        }
        config_defaults(c);
        return config_parse_args(c, argc, argv, errmsg, CONFIG_ERRMSG_MAX);
}

/* Flags win over the file, before or after --config. */
static void flags_override_file(void **state)
{
        struct tmpfile t;
        struct config c;
        char errmsg[CONFIG_ERRMSG_MAX];
        char config_eq[128];

        (void)state;
        tmp_write(&t, GOOD "election-timeout-ms = 400\nlog-level = warn\n");
        snprintf(config_eq, sizeof config_eq, "--config=%s", t.path);
        {
                char *argv[] = {"batond", "--election-timeout-ms=500",
                                "--config", t.path, NULL};
                assert_int_equal(parse(&c, argv, errmsg), 0);
                assert_int_equal(c.election_timeout_ms, 500);
                assert_int_equal(c.log_level, LOG_WARN);
                assert_int_equal(c.n_members, 3);
        }
        {
                char *argv[] = {"batond", config_eq, "--election-timeout-ms",
                                "500", NULL};
                assert_int_equal(parse(&c, argv, errmsg), 0);
                assert_int_equal(c.election_timeout_ms, 500);
                assert_int_equal(c.log_level, LOG_WARN);
        }
        {
                char *argv[] = {"batond",  "--log-level", "error",
                                config_eq, "--id=3",      NULL};
                assert_int_equal(parse(&c, argv, errmsg), 0);
                assert_int_equal(c.election_timeout_ms, 400);
                assert_int_equal(c.log_level, LOG_ERROR);
                assert_int_equal(c.id, 3);
                assert_int_equal(config_validate(&c, errmsg, sizeof errmsg), 0);
        }
        {
                /* A later flag wins over an earlier one. */
                char *argv[] = {"batond", "--id=2", "--id", "3", NULL};
                assert_int_equal(parse(&c, argv, errmsg), 0);
                assert_int_equal(c.id, 3);
        }
        tmp_remove(&t);
}

/* Any --member replaces the file's list; several accumulate. */
static void member_flags_replace_file(void **state)
{
        struct tmpfile t;
        struct config c;
        char errmsg[CONFIG_ERRMSG_MAX];

        (void)state;
        tmp_write(&t, GOOD);
        {
                char *argv[] = {"batond",
                                "--member",
                                "7 127.0.0.1:9001 127.0.0.1:9101",
                                "--config",
                                t.path,
                                "--member=8 127.0.0.1:9002 127.0.0.1:9102",
                                "--id=8",
                                NULL};
                assert_int_equal(parse(&c, argv, errmsg), 0);
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
                assert_int_equal(parse(&c, argv, errmsg), BATON_EINVAL);
                assert_string_equal(errmsg, "flag --member: duplicate id 7");
        }
        tmp_remove(&t);
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
        assert_int_equal(parse(&c, argv, errmsg), 0);
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
        assert_int_equal(parse(&c, argv, errmsg), BATON_EINVAL);
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
        assert_int_equal(parse(&c, argv, errmsg), BATON_EIO);
        assert_string_equal(errmsg, "/nonexistent/b.conf: cannot open: No "
                                    "such file or directory");
}

/* An error in the file named by --config keeps its file:line. */
static void flag_config_file_error(void **state)
{
        struct tmpfile t;
        struct config c;
        char errmsg[CONFIG_ERRMSG_MAX];
        char want[CONFIG_ERRMSG_MAX];

        (void)state;
        tmp_write(&t, "id = 1\nbogus = 2\n");
        {
                char *argv[] = {"batond", "--id=1", "--config", t.path, NULL};
                assert_int_equal(parse(&c, argv, errmsg), BATON_EINVAL);
        }
        snprintf(want, sizeof want, "%s:2: unknown key 'bogus'", t.path);
        assert_string_equal(errmsg, want);
        tmp_remove(&t);
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

/* Capture config_print_help() in `*text`, which the caller frees. */
static void help_text(char **text)
{
        size_t len = 0;
        FILE *f;

        *text = NULL;
        f = open_memstream(text, &len);
        assert_non_null(f);
        config_print_help(f);
        assert_int_equal(fclose(f), 0);
        assert_non_null(*text);
        assert_int_equal(strlen(*text), len);
}

/* The help lists every key, one row each, after the KEY header row. */
static void help_lists_every_key(void **state)
{
        char *text;
        char *rows;
        char *line;
        char *save = NULL;
        size_t n_rows = 0;
        size_t i;
        bool seen[N_ALL_KEYS] = {false};

        (void)state;
        help_text(&text);
        rows = strstr(text, "\nKEY ");
        assert_non_null(rows);
        for (line = strtok_r(rows + 1, "\n", &save); line != NULL;
             line = strtok_r(NULL, "\n", &save)) {
                if (strncmp(line, "KEY ", 4) == 0) {
                        continue;
                }
                n_rows++;
                for (i = 0; i < N_ALL_KEYS; i++) {
                        size_t len = strlen(all_keys[i]);
                        if (strncmp(line, all_keys[i], len) == 0 &&
                            line[len] == ' ') {
                                assert_false(seen[i]);
                                seen[i] = true;
                        }
                }
        }
        assert_int_equal(n_rows, N_ALL_KEYS);
        for (i = 0; i < N_ALL_KEYS; i++) {
                if (!seen[i]) {
                        fail_msg("help does not list '%s'", all_keys[i]);
                }
        }
        free(text);
}

/* Read a file of the source tree (automake's test harness sets $srcdir);
 * NULL when run by hand without it. */
static char *read_source(const char *rel)
{
        const char *srcdir = getenv("srcdir");
        char path[4096];
        FILE *f;
        char *buf;
        long len;

        if (srcdir == NULL) {
                return NULL;
        }
        snprintf(path, sizeof path, "%s/%s", srcdir, rel);
        f = fopen(path, "rb");
        if (f == NULL) {
                fail_msg("cannot open %s", path);
        }
        assert_int_equal(fseek(f, 0, SEEK_END), 0);
        len = ftell(f);
        assert_true(len >= 0);
        rewind(f);
        buf = malloc((size_t)len + 1);
        assert_non_null(buf);
        assert_int_equal(fread(buf, 1, (size_t)len, f), (size_t)len);
        buf[len] = '\0';
        fclose(f);
        return buf;
}

/* The example configs load and validate, list every key, and give every
 * key but the node's own its default. */
static void example_configs(void **state)
{
        static const unsigned sizes[] = {3, 5};
        struct config c;
        struct config d;
        char rel[128];
        char path[4096];
        char errmsg[CONFIG_ERRMSG_MAX];
        char want[64];
        char *text;
        unsigned s;
        unsigned node;
        size_t i;

        (void)state;
        if (getenv("srcdir") == NULL) {
                skip();
        }
        for (s = 0; s < 2; s++) {
                for (node = 1; node <= sizes[s]; node++) {
                        snprintf(rel, sizeof rel,
                                 "deploy/baton-%u.conf.d/node%u.conf", sizes[s],
                                 node);
                        text = read_source(rel);
                        for (i = 0; i < N_ALL_KEYS; i++) {
                                snprintf(want, sizeof want,
                                         "\n%s =", all_keys[i]);
                                if (strstr(text, want) == NULL) {
                                        fail_msg("%s does not set %s", rel,
                                                 all_keys[i]);
                                }
                        }
                        free(text);
                        snprintf(path, sizeof path, "%s/%s", getenv("srcdir"),
                                 rel);
                        config_defaults(&c);
                        if (config_load_file(&c, path, errmsg, sizeof errmsg) !=
                            0) {
                                fail_msg("%s", errmsg);
                        }
                        config_defaults(&d);
                        d.id = c.id;
                        memcpy(d.data_dir, c.data_dir, sizeof d.data_dir);
                        d.n_members = c.n_members;
                        memcpy(d.members, c.members, sizeof d.members);
                        /* The node's own credentials; TLS is on. */
                        assert_true(c.tls);
                        d.tls = c.tls;
                        memcpy(d.tls_ca, c.tls_ca, sizeof d.tls_ca);
                        memcpy(d.tls_cert, c.tls_cert, sizeof d.tls_cert);
                        memcpy(d.tls_key, c.tls_key, sizeof d.tls_key);
                        assert_memory_equal(&c, &d, sizeof c);
                        assert_int_equal(c.id, node);
                        assert_int_equal(c.n_members, sizes[s]);
                        for (i = 0; i < sizes[s]; i++) {
                                snprintf(want, sizeof want, "127.0.0.1:%zu",
                                         7001 + i);
                                assert_string_equal(c.members[i].raft_address,
                                                    want);
                                snprintf(want, sizeof want, "127.0.0.1:%zu",
                                         7101 + i);
                                assert_string_equal(c.members[i].client_address,
                                                    want);
                        }
                        if (config_validate(&c, errmsg, sizeof errmsg) != 0) {
                                fail_msg("%s: %s", rel, errmsg);
                        }
                }
        }
}

/* deploy/README.md's table is the help's table, row for row: a row
 * "KEY  TYPE  DEFAULT  RANGE  DESCRIPTION" (columns split by two or more
 * spaces) is "| `KEY` | TYPE | DEFAULT | RANGE | DESCRIPTION |" there. */
static void readme_matches_help(void **state)
{
        char *readme;
        char *text;
        char *line;
        char *save = NULL;
        char row[1024];
        size_t n_rows = 0;

        (void)state;
        readme = read_source("deploy/README.md");
        if (readme == NULL) {
                skip();
        }
        help_text(&text);
        line = strstr(text, "\nKEY ");
        assert_non_null(line);
        line = strchr(line + 1, '\n');
        assert_non_null(line);
        for (line = strtok_r(line + 1, "\n", &save); line != NULL;
             line = strtok_r(NULL, "\n", &save)) {
                const char *p = line;
                size_t len = 0;
                int col = 0;

                len += (size_t)snprintf(row, sizeof row, "| `");
                while (*p != '\0') {
                        if (p[0] == ' ' && p[1] == ' ') {
                                p += strspn(p, " ");
                                len += (size_t)snprintf(
                                    row + len, sizeof row - len, "%s",
                                    col == 0 ? "` | " : " | ");
                                col++;
                                continue;
                        }
                        assert_true(len + 1 < sizeof row);
                        row[len++] = *p++;
                        row[len] = '\0';
                }
                assert_int_equal(col, 4);
                snprintf(row + len, sizeof row - len, " |\n");
                if (strstr(readme, row) == NULL) {
                        fail_msg("deploy/README.md lacks the row\n%s", row);
                }
                n_rows++;
        }
        assert_int_equal(n_rows, N_ALL_KEYS);
        free(text);
        free(readme);
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
            cmocka_unit_test(flags_override_file),
            cmocka_unit_test(member_flags_replace_file),
            cmocka_unit_test(flag_forms),
            cmocka_unit_test(flag_errors),
            cmocka_unit_test(flag_config_unreadable),
            cmocka_unit_test(flag_config_file_error),
            cmocka_unit_test(wants_help),
            cmocka_unit_test(help_lists_every_key),
            cmocka_unit_test(example_configs),
            cmocka_unit_test(readme_matches_help),
        };

        return cmocka_run_group_tests_name("config", tests, NULL, NULL);
}
