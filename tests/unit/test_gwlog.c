/* The request core's log lines (gwlog(), src/server/gateway/gwlog.c):
 * formatted and handed to the host's log op only at the levels the core
 * was given, with the fields as given, and cut where a JSON line is. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "../../src/server/gateway/core.h"
#include "../../src/server/gateway/gateway.h"
#include "../../src/server/gateway/gwlog.h"

/* What the fake host's log op was called with. */
struct seen {
        struct gateway_host host;
        unsigned calls;
        enum log_level level;
        const struct log_fields *f;
        char message[2 * GWLOG_MAX];
};

static void log_op(struct gateway_host *h, enum log_level level,
                   const struct log_fields *f, const char *message)
{
        struct seen *s = h->data;

        s->calls++;
        s->level = level;
        s->f = f;
        snprintf(s->message, sizeof s->message, "%s", message);
}

static void setup(struct gateway *g, struct seen *s, enum log_level level)
{
        memset(g, 0, sizeof *g);
        memset(s, 0, sizeof *s);
        s->host.data = s;
        s->host.log = log_op;
        g->host = &s->host;
        g->log_level = level;
}

static void formats_at_an_enabled_level(void **state)
{
        struct log_fields f = {.session = 7, .connection = 3, .request = 9};
        struct gateway g;
        struct seen s;

        (void)state;
        setup(&g, &s, LOG_INFO);
        gwlog(&g, LOG_WARN, &f, "refused %s from '%s' (connection %llu)",
              "ACQUIRE", "alice", 3ULL);
        assert_int_equal(s.calls, 1);
        assert_int_equal(s.level, LOG_WARN);
        assert_ptr_equal(s.f, &f);
        assert_string_equal(s.message,
                            "refused ACQUIRE from 'alice' (connection 3)");
        gwlog(&g, LOG_INFO, NULL, "member %llu removed", 4ULL);
        assert_int_equal(s.calls, 2);
        assert_int_equal(s.level, LOG_INFO);
        assert_null(s.f);
        assert_string_equal(s.message, "member 4 removed");
}

static void nothing_below_the_level(void **state)
{
        struct gateway g;
        struct seen s;

        (void)state;
        setup(&g, &s, LOG_WARN);
        gwlog(&g, LOG_INFO, NULL, "session %d: lease expired", 1);
        gwlog(&g, LOG_DEBUG, NULL, "debug");
        assert_int_equal(s.calls, 0);
        gwlog(&g, LOG_ERROR, NULL, "reply %d did not encode", 2);
        assert_int_equal(s.calls, 1);
        assert_string_equal(s.message, "reply 2 did not encode");
        setup(&g, &s, LOG_ERROR);
        gwlog(&g, LOG_WARN, NULL, "warn");
        assert_int_equal(s.calls, 0);
}

static void a_long_message_is_cut_as_a_json_line(void **state)
{
        char long_name[GWLOG_MAX + 100];
        struct gateway g;
        struct seen s;

        (void)state;
        memset(long_name, 'x', sizeof long_name - 1);
        long_name[sizeof long_name - 1] = '\0';
        setup(&g, &s, LOG_DEBUG);
        gwlog(&g, LOG_DEBUG, NULL, "name %s", long_name);
        assert_int_equal(s.calls, 1);
        assert_int_equal(strlen(s.message), GWLOG_MAX - 1);
        assert_memory_equal(s.message, "name xxx", 8);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(formats_at_an_enabled_level),
            cmocka_unit_test(nothing_below_the_level),
            cmocka_unit_test(a_long_message_is_cut_as_a_json_line),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
