/* Unit tests for batond's log: the text lines as they always were, and
 * log-format = json's one object per line. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <regex.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../src/server/base/log.h"

/* 2024-02-29T23:59:58.007Z */
static const struct timespec leap = {1709251198, 7000000};

static void json_line(void **state)
{
        struct log_fields f = {.session = 12, .seq = 3};
        char buf[512];
        size_t n;

        (void)state;
        n = log_format_json(buf, sizeof buf, LOG_WARN, &leap, 2, NULL,
                            "raft_apply: no space");
        assert_true(n > 0 && n < sizeof buf);
        buf[n] = '\0';
        assert_string_equal(buf, "{\"time\":\"2024-02-29T23:59:58.007Z\","
                                 "\"level\":\"warn\",\"node\":2,"
                                 "\"message\":\"raft_apply: no space\"}\n");
        /* Fields that are known, and only those, follow the message. */
        n = log_format_json(buf, sizeof buf, LOG_INFO, &leap, 2, &f,
                            "session 12: lease expired");
        buf[n] = '\0';
        assert_non_null(strstr(buf, "\"message\":\"session 12: lease "
                                    "expired\",\"session\":12,\"seq\":3}\n"));
        assert_null(strstr(buf, "connection"));
        f.connection = 9;
        f.request = 77;
        n = log_format_json(buf, sizeof buf, LOG_DEBUG, &leap, 2, &f, "x");
        buf[n] = '\0';
        assert_non_null(strstr(buf, "\"level\":\"debug\""));
        assert_non_null(strstr(buf, ",\"session\":12,\"seq\":3,"
                                    "\"connection\":9,\"request\":77}\n"));
}

/* Quotes, backslashes, newlines and bytes that are not UTF-8 in a message
 * (an identity from a certificate, a path) keep the line one JSON line. */
static void json_escapes(void **state)
{
        char buf[512];
        size_t n;

        (void)state;
        n = log_format_json(buf, sizeof buf, LOG_ERROR, &leap, 1, NULL,
                            "refused '\"x\\y'\nnext\xff");
        buf[n] = '\0';
        assert_non_null(strstr(buf, "\"message\":\"refused '\\\"x\\\\y'\\n"
                                    "next\xef\xbf\xbd\"}"));
        assert_int_equal(strchr(buf, '\n') - buf, (long)n - 1);
}

static void json_too_long(void **state)
{
        char buf[64];

        (void)state;
        assert_int_equal(log_format_json(buf, sizeof buf, LOG_INFO, &leap, 1,
                                         NULL,
                                         "a message longer than the "
                                         "line's room"),
                         0);
}

/* Run `fn` with stderr going to a file; returns what it wrote. */
static char *captured(void (*fn)(void))
{
        char path[] = "/tmp/baton-test-log-XXXXXX";
        int fd = mkstemp(path);
        int saved = dup(STDERR_FILENO);
        static char out[4096];
        FILE *f;
        size_t n;

        assert_true(fd >= 0 && saved >= 0);
        fflush(stderr);
        dup2(fd, STDERR_FILENO);
        fn();
        fflush(stderr);
        dup2(saved, STDERR_FILENO);
        close(saved);
        close(fd);
        f = fopen(path, "r");
        assert_non_null(f);
        n = fread(out, 1, sizeof out - 1, f);
        out[n] = '\0';
        fclose(f);
        unlink(path);
        return out;
}

static void write_some(void)
{
        struct log_fields f = {.session = 5, .connection = 8};

        log_info("node %d: hello", 1);
        log_warn_f(&f, "refused ATTACH to session %d", 5);
        log_debug("not written at info");
}

static bool matches(const char *text, const char *pattern)
{
        regex_t re;
        bool ok;

        assert_int_equal(regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB), 0);
        ok = regexec(&re, text, 0, NULL, 0) == 0;
        regfree(&re);
        return ok;
}

/* The text format is what batond has always written: a fields argument
 * changes nothing there. */
static void text_lines(void **state)
{
        const char *out;

        (void)state;
        log_set_level(LOG_INFO);
        log_set_format(LOG_TEXT, 3);
        out = captured(write_some);
        if (!matches(out, "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:"
                          "[0-9]{2}\\.[0-9]{3}Z info node 1: hello\n"
                          "[0-9-]{10}T[0-9:]{8}\\.[0-9]{3}Z warn refused "
                          "ATTACH to session 5\n$")) {
                fail_msg("text lines changed:\n%s", out);
        }
}

static void json_lines(void **state)
{
        const char *out;

        (void)state;
        log_set_level(LOG_INFO);
        log_set_format(LOG_JSON, 3);
        out = captured(write_some);
        log_set_format(LOG_TEXT, 0);
        if (!matches(out, "^\\{\"time\":\"[0-9-]{10}T[0-9:]{8}\\.[0-9]{3}Z\","
                          "\"level\":\"info\",\"node\":3,\"message\":\"node "
                          "1: hello\"\\}\n"
                          "\\{\"time\":\"[^\"]+\",\"level\":\"warn\","
                          "\"node\":3,\"message\":\"refused ATTACH to "
                          "session 5\",\"session\":5,\"connection\":8\\}\n$")) {
                fail_msg("unexpected JSON lines:\n%s", out);
        }
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(json_line),     cmocka_unit_test(json_escapes),
            cmocka_unit_test(json_too_long), cmocka_unit_test(text_lines),
            cmocka_unit_test(json_lines),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
