/* The audit trail's lines and file (src/server/base/audit.c): every field
 * of a line, in order, as valid JSON whatever an identity or a lock name
 * holds; a trail that is off; the reopen that logrotate needs; and a disk
 * that refuses writes, which costs lines (counted, logged once per run of
 * them) and never the node. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "../../include/baton/errors.h"
#include "../../src/server/base/audit.h"

/* 2024-05-01T12:00:00.123Z */
static const struct timespec WHEN = {1714564800, 123456789};

/* `e`'s line from node 3 at WHEN, as JSON; the caller decrefs it. The
 * line is one line, ends with its newline and has nothing after the
 * object. */
static json_t *line_of(const struct audit_event *e, char *buf, size_t cap)
{
        json_error_t err;
        size_t n = audit_format(buf, cap, &WHEN, 3, e);
        json_t *j;

        assert_true(n > 0 && n < cap);
        buf[n] = '\0';
        assert_int_equal(n, strlen(buf));
        assert_int_equal(buf[n - 1], '\n');
        assert_null(memchr(buf, '\n', n - 1));
        j = json_loadb(buf, n, 0, &err);
        if (j == NULL) {
                fail_msg("not JSON (%s): %s", err.text, buf);
        }
        return j;
}

static const char *text(json_t *j, const char *key)
{
        json_t *v = json_object_get(j, key);

        if (!json_is_string(v)) {
                fail_msg("no string \"%s\"", key);
        }
        return json_string_value(v);
}

/* An administrator's ACL change: every field, in the documented order. */
static void every_field(void **state)
{
        struct audit_event e = {.identity = "admin",
                                .address = "10.0.0.7:51234",
                                .action = "ACL_SET",
                                .target = "alice",
                                .target_len = 5,
                                .result = 0,
                                .detail = "role admin"};
        char buf[AUDIT_LINE_MAX];
        json_t *j;

        (void)state;
        j = line_of(&e, buf, sizeof buf);
        assert_string_equal(
            buf, "{\"time\":\"2024-05-01T12:00:00.123Z\",\"node\":3,"
                 "\"identity\":\"admin\",\"address\":\"10.0.0.7:51234\","
                 "\"action\":\"ACL_SET\",\"target\":\"alice\","
                 "\"result\":\"ok\",\"detail\":\"role admin\"}\n");
        assert_int_equal(json_object_size(j), 8);
        json_decref(j);
}

/* A refusal with nothing known but the action: every field is still
 * there, "" for what is missing, and the result is the code's name. */
static void refusal_fields(void **state)
{
        struct audit_event e = {.action = "CONNECT", .result = BATON_ETLS};
        char buf[AUDIT_LINE_MAX];
        json_t *j;

        (void)state;
        j = line_of(&e, buf, sizeof buf);
        assert_int_equal(json_object_size(j), 8);
        assert_int_equal(json_integer_value(json_object_get(j, "node")), 3);
        assert_string_equal(text(j, "time"), "2024-05-01T12:00:00.123Z");
        assert_string_equal(text(j, "identity"), "");
        assert_string_equal(text(j, "address"), "");
        assert_string_equal(text(j, "target"), "");
        assert_string_equal(text(j, "detail"), "");
        assert_string_equal(text(j, "result"), "BATON_ETLS");
        json_decref(j);
        e.result = BATON_EPERM;
        j = line_of(&e, buf, sizeof buf);
        assert_string_equal(text(j, "result"), "BATON_EPERM");
        json_decref(j);
}

/* Identities and details are certificate text and words, lock names any
 * bytes but NUL: quotes, backslashes, newlines and control characters are
 * escaped, UTF-8 is kept, and a name that is not all text comes with its
 * bytes in hex, so an auditor can tell which lock it was. */
static void odd_strings(void **state)
{
        static const char name[] = {'l',    'o', 'c',  'k',    '\n',
                                    '\xff', '"', '\\', '\x01', 'x'};
        struct audit_event e = {.identity = "CN=\"evil\"\\\n{\"x\":1}",
                                .address = "[::1]:7101",
                                .action = "REVOKE_LOCK",
                                .target = name,
                                .target_len = sizeof name,
                                .result = BATON_ENOTFOUND,
                                .detail = "tab\there \xc3\xa9t\xc3\xa9"};
        char buf[AUDIT_LINE_MAX];
        json_t *j;

        (void)state;
        j = line_of(&e, buf, sizeof buf);
        assert_int_equal(json_object_size(j), 9);
        assert_string_equal(text(j, "identity"), "CN=\"evil\"\\\n{\"x\":1}");
        assert_string_equal(text(j, "detail"), "tab\there \xc3\xa9t\xc3\xa9");
        assert_string_equal(text(j, "target_hex"), "6c6f636b0aff225c0178");
        assert_string_equal(text(j, "result"), "BATON_ENOTFOUND");
        /* target_hex comes right after target. */
        assert_non_null(strstr(buf, "\\u0001x\",\"target_hex\":\"6c6f"));
        json_decref(j);
        /* A name that is text has no target_hex. */
        e.target = "jobs/nightly \xe2\x9c\x93";
        e.target_len = strlen(e.target);
        j = line_of(&e, buf, sizeof buf);
        assert_int_equal(json_object_size(j), 8);
        assert_string_equal(text(j, "target"), "jobs/nightly \xe2\x9c\x93");
        json_decref(j);
}

/* A buffer too small for the line gives 0, never a cut line. */
static void too_small(void **state)
{
        struct audit_event e = {.identity = "admin", .action = "BACKUP"};
        char buf[AUDIT_LINE_MAX];
        size_t n = audit_format(buf, sizeof buf, &WHEN, 1, &e);
        size_t cap;

        (void)state;
        assert_true(n > 0);
        for (cap = 0; cap < n; cap++) {
                assert_int_equal(audit_format(buf, cap, &WHEN, 1, &e), 0);
        }
        assert_int_equal(audit_format(buf, n + 1, &WHEN, 1, &e), n);
}

static char *read_file(const char *path)
{
        FILE *f = fopen(path, "r");
        char *buf = calloc(1, 1 << 16);
        size_t n;

        assert_non_null(buf);
        if (f == NULL) {
                return buf;
        }
        n = fread(buf, 1, (1 << 16) - 1, f);
        buf[n] = '\0';
        fclose(f);
        return buf;
}

static unsigned count(const char *s, const char *what)
{
        unsigned n = 0;

        while ((s = strstr(s, what)) != NULL) {
                n++;
                s += strlen(what);
        }
        return n;
}

/* Off ("" or NULL, or a NULL trail): nothing is written, nothing counted. */
static void off(void **state)
{
        struct audit_event e = {.action = "ACL_LIST"};
        struct audit a;

        (void)state;
        assert_int_equal(audit_open(&a, "", 1), 0);
        assert_false(audit_on(&a));
        audit_write(&a, &e);
        assert_int_equal(a.lines, 0);
        assert_int_equal(a.lost, 0);
        assert_int_equal(audit_reopen(&a), 0);
        assert_false(audit_on(&a));
        audit_close(&a);
        assert_int_equal(audit_open(&a, NULL, 1), 0);
        assert_false(audit_on(&a));
        audit_write(NULL, &e);
        assert_false(audit_on(NULL));
        audit_close(NULL);
}

/* logrotate renames the file and sends SIGHUP: the lines before the
 * reopen are in the renamed file, those after in a new file at the path,
 * each whole, one per event. A path that cannot be opened keeps the old
 * file. */
static void reopen(void **state)
{
        char dir[] = "/tmp/test_audit-XXXXXX";
        char path[64], rotated[80];
        struct audit_event e = {.identity = "admin", .action = "TRANSFER"};
        struct audit a;
        char *before, *after;

        (void)state;
        assert_non_null(mkdtemp(dir));
        snprintf(path, sizeof path, "%s/audit.log", dir);
        snprintf(rotated, sizeof rotated, "%s/audit.log.1", dir);
        assert_int_equal(audit_open(&a, path, 2), 0);
        assert_true(audit_on(&a));
        e.target = "1";
        e.target_len = 1;
        audit_write(&a, &e);
        assert_int_equal(rename(path, rotated), 0);
        e.target = "2";
        audit_write(&a, &e); /* still the renamed file's */
        assert_int_equal(audit_reopen(&a), 0);
        e.target = "3";
        audit_write(&a, &e);
        assert_int_equal(a.lines, 3);
        assert_int_equal(a.lost, 0);
        before = read_file(rotated);
        after = read_file(path);
        assert_int_equal(count(before, "\n"), 2);
        assert_non_null(strstr(before, "\"target\":\"1\""));
        assert_non_null(strstr(before, "\"target\":\"2\""));
        assert_int_equal(count(after, "\n"), 1);
        assert_non_null(strstr(after, "\"target\":\"3\""));
        assert_non_null(strstr(after, "\"node\":2,"));
        free(before);
        free(after);
        /* The directory gone: the reopen fails, the old file stays. */
        unlink(rotated);
        unlink(path);
        assert_int_equal(rmdir(dir), 0);
        assert_int_equal(audit_reopen(&a), BATON_EIO);
        assert_true(audit_on(&a));
        audit_close(&a);
        assert_false(audit_on(&a));
}

/* Run `fn` with stderr (batond's log) going to a file; what it logged. */
static char *logged(void (*fn)(struct audit *a), struct audit *a)
{
        char path[] = "/tmp/test_audit-log-XXXXXX";
        int fd = mkstemp(path);
        int saved = dup(STDERR_FILENO);
        char *text;

        assert_true(fd >= 0 && saved >= 0);
        fflush(stderr);
        dup2(fd, STDERR_FILENO);
        fn(a);
        fflush(stderr);
        dup2(saved, STDERR_FILENO);
        close(saved);
        close(fd);
        text = read_file(path);
        unlink(path);
        return text;
}

static void five_lines(struct audit *a)
{
        struct audit_event e = {.identity = "admin", .action = "ACL_LIST"};
        int i;

        for (i = 0; i < 5; i++) {
                audit_write(a, &e);
        }
}

static void reopen_and_write(struct audit *a)
{
        assert_int_equal(audit_reopen(a), 0);
        five_lines(a);
}

/* A full disk (/dev/full: every write fails ENOSPC): the lines are lost
 * and counted, the first of the run is logged with the reason and the
 * rest are not, and the node goes on. Once writes succeed again (the
 * file reopened at a path with room), the first line says so, once. */
static void full_disk(void **state)
{
        char path[] = "/tmp/test_audit-full-XXXXXX";
        struct audit a;
        char *log;
        char *text;
        int fd;

        (void)state;
        if (access("/dev/full", W_OK) != 0) {
                skip();
        }
        assert_int_equal(audit_open(&a, "/dev/full", 1), 0);
        log = logged(five_lines, &a);
        assert_int_equal(a.lost, 5);
        assert_int_equal(a.lines, 0);
        assert_true(a.failing);
        assert_int_equal(count(log, "cannot write a line"), 1);
        assert_int_equal(count(log, "No space left on device"), 1);
        assert_int_equal(count(log, "\n"), 1);
        free(log);
        /* The path now names a file with room (as after logrotate). */
        fd = mkstemp(path);
        assert_true(fd >= 0);
        close(fd);
        a.path = path;
        log = logged(reopen_and_write, &a);
        assert_int_equal(a.lines, 5);
        assert_int_equal(a.lost, 5);
        assert_false(a.failing);
        assert_int_equal(count(log, "writing again; 5 lines lost"), 1);
        assert_int_equal(count(log, "cannot write"), 0);
        free(log);
        text = read_file(path);
        assert_int_equal(count(text, "\"action\":\"ACL_LIST\""), 5);
        free(text);
        audit_close(&a);
        unlink(path);
}

/* A line too long for its buffer, then a short one. */
static void long_then_short(struct audit *a)
{
        static char detail[AUDIT_LINE_MAX];
        struct audit_event e = {.action = "BACKUP", .detail = detail};

        memset(detail, 'd', sizeof detail - 1);
        audit_write(a, &e);
        e.detail = "short";
        audit_write(a, &e);
}

/* A line too long for its buffer is lost the same way, never cut. */
static void too_long(void **state)
{
        char path[] = "/tmp/test_audit-long-XXXXXX";
        struct audit a;
        char *text, *log;
        int fd = mkstemp(path);

        (void)state;
        assert_true(fd >= 0);
        close(fd);
        assert_int_equal(audit_open(&a, path, 1), 0);
        log = logged(long_then_short, &a);
        assert_int_equal(a.lost, 1);
        assert_int_equal(a.lines, 1);
        assert_int_equal(count(log, "Message too long"), 1);
        free(log);
        text = read_file(path);
        assert_int_equal(count(text, "\n"), 1);
        assert_non_null(strstr(text, "\"detail\":\"short\"}\n"));
        free(text);
        audit_close(&a);
        unlink(path);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(every_field), cmocka_unit_test(refusal_fields),
            cmocka_unit_test(odd_strings), cmocka_unit_test(too_small),
            cmocka_unit_test(off),         cmocka_unit_test(reopen),
            cmocka_unit_test(full_disk),   cmocka_unit_test(too_long),
        };

        return cmocka_run_group_tests_name("audit", tests, NULL, NULL);
}
