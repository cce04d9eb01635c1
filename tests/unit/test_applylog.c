/* Golden lines of the apply log (src/server/host/applylog.c): the chaos
 * checkers (tests/chaos/check/applylog.c) and the ops tests read these
 * files, so every byte of an event, ENTRY and ACL line is pinned here, up
 * to the mono_ns each line ends with, which must be CLOCK_MONOTONIC's. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../include/baton/errors.h"
#include "../../src/fsm/acl.h"
#include "../../src/fsm/lockfsm.h"
#include "../../src/proto/command.h"
#include "../../src/server/host/applylog.h"

#define LINE_MAX_BYTES 4096

static int64_t mono_ns(void)
{
        struct timespec t;

        clock_gettime(CLOCK_MONOTONIC, &t);
        return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* A formatted line, and the monotonic clock read around its formatting. */
struct line {
        char buf[LINE_MAX_BYTES];
        size_t len;
        int64_t before, after;
};

/* `l` must be `want`, then `,"mono_ns":N}\n` with N read while it was
 * formatted. */
static void expect_line(const struct line *l, const char *want)
{
        size_t n = strlen(want);
        const char *tail;
        char *end;
        long long ns;

        assert_int_equal(l->len, strlen(l->buf));
        if (l->len < n || memcmp(l->buf, want, n) != 0) {
                fail_msg("got  %s\nwant %s,\"mono_ns\":N}", l->buf, want);
        }
        tail = l->buf + n;
        if (strncmp(tail, ",\"mono_ns\":", 11) != 0) {
                fail_msg("no mono_ns after the fields: %s", l->buf);
        }
        ns = strtoll(tail + 11, &end, 10);
        assert_true(end > tail + 11);
        assert_string_equal(end, "}\n");
        assert_true(ns >= l->before && ns <= l->after);
}

static void event(struct line *l, const struct lockfsm_event *ev)
{
        l->before = mono_ns();
        l->len = applylog_format(l->buf, sizeof l->buf, 7, ev);
        l->after = mono_ns();
        l->buf[l->len] = '\0';
}

/* A shared GRANT: every field, and a lock name of bytes that JSON
 * escapes ('"', '\\', a control byte and one above 0x7e). */
static void grant_line(void **state)
{
        static const char name[] = {'q', '/', '"', '\\', 0x01, (char)0xff, 'z'};
        struct lockfsm_event ev;
        struct line l;

        (void)state;
        memset(&ev, 0, sizeof ev);
        ev.type = LOCKFSM_EV_GRANT;
        ev.cause = COMMAND_ACQUIRE;
        ev.index = 42;
        ev.session = 3;
        ev.seq = 5;
        ev.owner = 9;
        ev.token = 42;
        ev.mode = COMMAND_MODE_SHARED;
        ev.nonce = 77;  /* not in the line */
        ev.wait_ms = 8; /* nor this */
        ev.name = name;
        ev.name_len = sizeof name;
        event(&l, &ev);
        expect_line(&l, "{\"index\":42,\"term\":7,\"event\":\"GRANT\","
                        "\"cause\":\"ACQUIRE\",\"session\":3,\"seq\":5,"
                        "\"owner\":9,\"token\":42,\"status\":0,\"mode\":1,"
                        "\"permits\":0,\"lock\":\"q/\\\"\\\\\\u0001\\u00ffz\"");
}

/* An UNQUEUE with its status, of a semaphore: mode and permits. */
static void unqueue_line(void **state)
{
        struct lockfsm_event ev;
        struct line l;

        (void)state;
        memset(&ev, 0, sizeof ev);
        ev.type = LOCKFSM_EV_UNQUEUE;
        ev.cause = COMMAND_TIMEOUT;
        ev.index = 18446744073709551615ULL;
        ev.session = 12;
        ev.seq = 3;
        ev.owner = 1;
        ev.mode = COMMAND_MODE_SEMAPHORE;
        ev.permits = 4096;
        ev.status = BATON_ETIMEDOUT;
        ev.name = "pool";
        ev.name_len = 4;
        event(&l, &ev);
        expect_line(&l, "{\"index\":18446744073709551615,\"term\":7,"
                        "\"event\":\"UNQUEUE\",\"cause\":\"TIMEOUT\","
                        "\"session\":12,\"seq\":3,\"owner\":1,\"token\":0,"
                        "\"status\":-12,\"mode\":2,\"permits\":4096,"
                        "\"lock\":\"pool\"");
}

/* An election's GRANT and PROCLAIM carry the value; its RELEASE does
 * not, and neither does a lock's GRANT that happens to have one. */
static void election_value(void **state)
{
        struct lockfsm_event ev;
        struct line l;

        (void)state;
        memset(&ev, 0, sizeof ev);
        ev.type = LOCKFSM_EV_PROCLAIM;
        ev.cause = COMMAND_PROCLAIM;
        ev.index = 100;
        ev.session = 4;
        ev.seq = 2;
        ev.owner = 5;
        ev.token = 90;
        ev.mode = COMMAND_MODE_ELECTION;
        ev.name = "leader";
        ev.name_len = 6;
        ev.value = "host-b:80\n";
        ev.value_len = 10;
        event(&l, &ev);
        expect_line(&l, "{\"index\":100,\"term\":7,\"event\":\"PROCLAIM\","
                        "\"cause\":\"PROCLAIM\",\"session\":4,\"seq\":2,"
                        "\"owner\":5,\"token\":90,\"status\":0,\"mode\":3,"
                        "\"permits\":0,\"lock\":\"leader\","
                        "\"value\":\"host-b:80\\u000a\"");
        ev.type = LOCKFSM_EV_RELEASE;
        ev.cause = COMMAND_RELEASE;
        event(&l, &ev);
        expect_line(&l, "{\"index\":100,\"term\":7,\"event\":\"RELEASE\","
                        "\"cause\":\"RELEASE\",\"session\":4,\"seq\":2,"
                        "\"owner\":5,\"token\":90,\"status\":0,\"mode\":3,"
                        "\"permits\":0,\"lock\":\"leader\"");
        ev.type = LOCKFSM_EV_GRANT;
        ev.cause = COMMAND_ACQUIRE;
        ev.mode = COMMAND_MODE_EXCLUSIVE;
        event(&l, &ev);
        expect_line(&l, "{\"index\":100,\"term\":7,\"event\":\"GRANT\","
                        "\"cause\":\"ACQUIRE\",\"session\":4,\"seq\":2,"
                        "\"owner\":5,\"token\":90,\"status\":0,\"mode\":0,"
                        "\"permits\":0,\"lock\":\"leader\"");
}

/* A REVOKE's END says who asked ("by"); a RESULT names no lock. */
static void end_by_and_result(void **state)
{
        struct lockfsm_result res;
        struct lockfsm_event ev;
        struct line l;

        (void)state;
        memset(&res, 0, sizeof res);
        memset(&ev, 0, sizeof ev);
        ev.type = LOCKFSM_EV_END;
        ev.cause = COMMAND_REVOKE;
        ev.index = 7;
        ev.session = 2;
        ev.status = -3;
        ev.by = "CN=ops \"1\"";
        ev.by_len = 10;
        event(&l, &ev);
        expect_line(&l, "{\"index\":7,\"term\":7,\"event\":\"END\","
                        "\"cause\":\"REVOKE\",\"session\":2,\"seq\":0,"
                        "\"owner\":0,\"token\":0,\"status\":-3,\"mode\":0,"
                        "\"permits\":0,\"lock\":\"\",\"by\":\"CN=ops "
                        "\\\"1\\\"\"");
        memset(&ev, 0, sizeof ev);
        ev.type = LOCKFSM_EV_RESULT;
        ev.cause = COMMAND_OPEN;
        ev.index = 8;
        ev.session = 6;
        ev.seq = 1;
        ev.result = &res;
        event(&l, &ev);
        expect_line(&l, "{\"index\":8,\"term\":7,\"event\":\"RESULT\","
                        "\"cause\":\"OPEN\",\"session\":6,\"seq\":1,"
                        "\"owner\":0,\"token\":0,\"status\":0,\"mode\":0,"
                        "\"permits\":0,\"lock\":\"\"");
}

/* The ENTRY line after an entry's events: its kind as the cause, every
 * other field 0 or empty. */
static void entry_line(void **state)
{
        struct line l;

        (void)state;
        l.before = mono_ns();
        l.len =
            applylog_format_entry(l.buf, sizeof l.buf, 7, 43, COMMAND_BATCH);
        l.after = mono_ns();
        l.buf[l.len] = '\0';
        expect_line(&l, "{\"index\":43,\"term\":7,\"event\":\"ENTRY\","
                        "\"cause\":\"BATCH\",\"session\":0,\"seq\":0,"
                        "\"owner\":0,\"token\":0,\"status\":0,\"mode\":0,"
                        "\"permits\":0,\"lock\":\"\"");
        l.before = mono_ns();
        l.len =
            applylog_format_entry(l.buf, sizeof l.buf, 2, 1, COMMAND_MEMBER);
        l.after = mono_ns();
        l.buf[l.len] = '\0';
        expect_line(&l, "{\"index\":1,\"term\":2,\"event\":\"ENTRY\","
                        "\"cause\":\"MEMBER\",\"session\":0,\"seq\":0,"
                        "\"owner\":0,\"token\":0,\"status\":0,\"mode\":0,"
                        "\"permits\":0,\"lock\":\"\"");
}

static void acl(struct line *l, const struct command *c, int status)
{
        l->before = mono_ns();
        l->len = applylog_format_acl(l->buf, sizeof l->buf, 0, 44, c, status);
        l->after = mono_ns();
        l->buf[l->len] = '\0';
}

/* An ACL entry's line: ACL_SET, ACL_REMOVE or ACL_SEED, cause ACL, the
 * identity as "lock", the role as "mode", who asked as "by". */
static void acl_lines(void **state)
{
        struct command c;
        struct line l;

        (void)state;
        memset(&c, 0, sizeof c);
        c.type = COMMAND_ACL;
        c.mode = COMMAND_ACL_SET;
        c.role = ACL_LOCK;
        c.name = "CN=worker-1";
        c.name_len = 11;
        c.address = "CN=admin";
        c.address_len = 8;
        acl(&l, &c, 0);
        expect_line(&l, "{\"index\":44,\"term\":0,\"event\":\"ACL_SET\","
                        "\"cause\":\"ACL\",\"session\":0,\"seq\":0,"
                        "\"owner\":0,\"token\":0,\"status\":0,\"mode\":2,"
                        "\"permits\":0,\"lock\":\"CN=worker-1\","
                        "\"by\":\"CN=admin\"");
        c.mode = COMMAND_ACL_REMOVE;
        c.role = 0;
        acl(&l, &c, BATON_ENOTFOUND);
        expect_line(&l, "{\"index\":44,\"term\":0,\"event\":\"ACL_REMOVE\","
                        "\"cause\":\"ACL\",\"session\":0,\"seq\":0,"
                        "\"owner\":0,\"token\":0,\"status\":-25,\"mode\":0,"
                        "\"permits\":0,\"lock\":\"CN=worker-1\","
                        "\"by\":\"CN=admin\"");
        memset(&c, 0, sizeof c);
        c.type = COMMAND_ACL;
        c.mode = COMMAND_ACL_SEED;
        acl(&l, &c, 0);
        expect_line(&l, "{\"index\":44,\"term\":0,\"event\":\"ACL_SEED\","
                        "\"cause\":\"ACL\",\"session\":0,\"seq\":0,"
                        "\"owner\":0,\"token\":0,\"status\":0,\"mode\":0,"
                        "\"permits\":0,\"lock\":\"\"");
        /* A rule on names: its subject as "lock", its permission bits as
         * "mode". */
        c.mode = COMMAND_ACL_RULE_SET;
        c.role = ACL_PERM_READ | ACL_PERM_LOCK;
        c.name = "team-a";
        c.name_len = 6;
        c.address = "CN=admin";
        c.address_len = 8;
        acl(&l, &c, 0);
        expect_line(&l, "{\"index\":44,\"term\":0,\"event\":\"RULE_SET\","
                        "\"cause\":\"ACL\",\"session\":0,\"seq\":0,"
                        "\"owner\":0,\"token\":0,\"status\":0,\"mode\":3,"
                        "\"permits\":0,\"lock\":\"team-a\","
                        "\"by\":\"CN=admin\"");
        c.mode = COMMAND_ACL_RULE_REMOVE;
        c.role = 0;
        acl(&l, &c, BATON_ENOTFOUND);
        expect_line(&l, "{\"index\":44,\"term\":0,\"event\":\"RULE_REMOVE\","
                        "\"cause\":\"ACL\",\"session\":0,\"seq\":0,"
                        "\"owner\":0,\"token\":0,\"status\":-25,\"mode\":0,"
                        "\"permits\":0,\"lock\":\"team-a\","
                        "\"by\":\"CN=admin\"");
        /* A quota: its subject as "lock" (its limits are in `batonctl
         * quota list`). */
        c.mode = COMMAND_ACL_QUOTA_SET;
        c.name = "*";
        c.name_len = 1;
        acl(&l, &c, 0);
        expect_line(&l, "{\"index\":44,\"term\":0,\"event\":\"QUOTA_SET\","
                        "\"cause\":\"ACL\",\"session\":0,\"seq\":0,"
                        "\"owner\":0,\"token\":0,\"status\":0,\"mode\":0,"
                        "\"permits\":0,\"lock\":\"*\","
                        "\"by\":\"CN=admin\"");
        c.mode = COMMAND_ACL_QUOTA_REMOVE;
        acl(&l, &c, BATON_ENOTFOUND);
        expect_line(&l, "{\"index\":44,\"term\":0,\"event\":\"QUOTA_REMOVE\","
                        "\"cause\":\"ACL\",\"session\":0,\"seq\":0,"
                        "\"owner\":0,\"token\":0,\"status\":-25,\"mode\":0,"
                        "\"permits\":0,\"lock\":\"*\","
                        "\"by\":\"CN=admin\"");
        /* A mode the list does not know has no line. */
        c.mode = COMMAND_ACL_QUOTA_REMOVE + 1;
        assert_int_equal(applylog_format_acl(l.buf, sizeof l.buf, 0, 44, &c, 0),
                         0);
}

/* A line that does not fit is not written at all, never cut short. */
static void too_small(void **state)
{
        static const char name[255] = {0};
        struct lockfsm_event ev;
        char buf[LINE_MAX_BYTES];
        size_t full, cap;

        (void)state;
        memset(&ev, 0, sizeof ev);
        ev.type = LOCKFSM_EV_GRANT;
        ev.cause = COMMAND_ACQUIRE;
        ev.mode = COMMAND_MODE_ELECTION;
        ev.name = name;
        ev.name_len = sizeof name;
        ev.value = name;
        ev.value_len = sizeof name;
        /* A long line: a 255-byte name and value, each byte escaped. */
        full = applylog_format(buf, sizeof buf, 7, &ev);
        assert_true(full > 2 * 255 * 6);
        for (cap = 0; cap < full - 40; cap += 97) {
                assert_int_equal(applylog_format(buf, cap, 7, &ev), 0);
        }
        assert_int_equal(applylog_format_entry(buf, 50, 7, 1, COMMAND_BATCH),
                         0);
}

static bool starts(const char *s, const char *prefix)
{
        return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* The file's bytes, NUL-terminated, in `buf`. */
static void read_all(const char *path, char *buf, size_t cap)
{
        FILE *f = fopen(path, "r");
        size_t n;

        assert_non_null(f);
        n = fread(buf, 1, cap - 1, f);
        buf[n] = '\0';
        fclose(f);
}

/* A node killed in the middle of a line (SIGKILL between two pages of a
 * write) leaves it cut; the next process, appending, starts its first
 * line on a new line, so the cut line does not swallow it, and a file
 * that ends cleanly gets no blank line. */
static void cut_line_ended_at_open(void **state)
{
        char path[] = "/tmp/test_applylog-XXXXXX";
        struct applylog a;
        char buf[LINE_MAX_BYTES];
        const char *second;
        FILE *f;
        int fd = mkstemp(path);

        (void)state;
        assert_true(fd >= 0);
        close(fd);
        f = fopen(path, "w");
        assert_non_null(f);
        fputs("{\"index\":8072,\"term\":3,\"event\":\"RESULT\",\"lo", f);
        fclose(f);
        assert_int_equal(applylog_open(&a, path), 0);
        applylog_write_entry(&a, 3, 8302, COMMAND_BATCH);
        applylog_write_entry(&a, 3, 8303, COMMAND_BATCH);
        applylog_close(&a);
        read_all(path, buf, sizeof buf);
        second = strchr(buf, '\n');
        assert_non_null(second);
        assert_true(starts(second + 1, "{\"index\":8302,"));
        second = strchr(second + 1, '\n');
        assert_non_null(second);
        assert_true(starts(second + 1, "{\"index\":8303,"));
        /* Opened again, ending cleanly: no blank line. */
        assert_int_equal(applylog_open(&a, path), 0);
        applylog_write_entry(&a, 3, 8304, COMMAND_BATCH);
        applylog_close(&a);
        read_all(path, buf, sizeof buf);
        assert_null(strstr(buf, "\n\n"));
        assert_non_null(strstr(buf, "}\n{\"index\":8304,"));
        unlink(path);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(grant_line),
            cmocka_unit_test(unqueue_line),
            cmocka_unit_test(election_value),
            cmocka_unit_test(end_by_and_result),
            cmocka_unit_test(entry_line),
            cmocka_unit_test(acl_lines),
            cmocka_unit_test(too_small),
            cmocka_unit_test(cut_line_ended_at_open),
        };
        return cmocka_run_group_tests_name("applylog", tests, NULL, NULL);
}
