/* Unit tests for the process_* figures' parsing (procstats.c), the long
 * histogram bounds hold times are counted with (histogram.c), and the
 * Prometheus text of a histogram with either bounds (promtext.c). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "../../src/server/base/histogram.h"
#include "../../src/server/ops/procstats.h"
#include "../../src/server/ops/promtext.h"

/* A /proc/PID/stat line whose command name holds a space and a ')'. */
static const char stat_line[] =
    "4242 (bat ond)) S 1 4242 4242 0 -1 4194560 1200 0 0 0 250 150 0 0 20 "
    "0 3 0 500 17226973184 2025 18446744073709551615 1 1 0 0 0 0 0 4096 "
    "0 0 0 0 17 1 0 0 0 0 0\n";

static void parses_stat(void **state)
{
        struct procstats p;

        (void)state;
        memset(&p, 0, sizeof p);
        assert_true(procstats_parse_stat(stat_line, 100, 4096, 1000000, &p));
        /* utime 250 + stime 150 ticks at 100 a second. */
        assert_true(p.cpu_seconds > 3.99 && p.cpu_seconds < 4.01);
        /* Started 500 ticks after boot. */
        assert_true(p.start_time > 1000004.99 && p.start_time < 1000005.01);
        assert_int_equal(p.virtual_bytes, 17226973184ULL);
        assert_int_equal(p.resident_bytes, 2025ULL * 4096);
}

static void refuses_what_does_not_parse(void **state)
{
        struct procstats p;

        (void)state;
        memset(&p, 0, sizeof p);
        assert_false(
            procstats_parse_stat("4242 bat ond S 1", 100, 4096, 0, &p));
        assert_false(
            procstats_parse_stat("4242 (x) S 1 2 3", 100, 4096, 0, &p));
        assert_false(procstats_parse_stat(stat_line, 0, 4096, 0, &p));
}

/* This process: it runs, holds descriptors, and may hold more. */
static void reads_itself(void **state)
{
        struct procstats p;

        (void)state;
        procstats_read(&p);
        assert_true(p.known);
        assert_true(p.fds_known);
        assert_true(p.open_fds >= 3); /* stdin, stdout, stderr */
        assert_true(p.open_fds <= p.max_fds);
        assert_true(p.resident_bytes > 0);
        assert_true(p.start_time > 1e9);
}

/* Hold times of a minute and of two hours land in buckets of their own,
 * which the short bounds (up to 5 s) would put both in +Inf. */
static void long_bounds(void **state)
{
        struct histogram h;
        char buf[2048];
        struct promtext o = {buf, sizeof buf, 0};

        (void)state;
        memset(&h, 0, sizeof h);
        histogram_add_long(&h, 60ULL * 1000000000);
        histogram_add_long(&h, 7200ULL * 1000000000);
        histogram_add_long(&h, 100ULL * 86400 * 1000000000);
        assert_int_equal(h.buckets[6], 1);  /* le 60 */
        assert_int_equal(h.buckets[11], 1); /* le 7200 */
        assert_int_equal(h.buckets[HISTOGRAM_N_BUCKETS - 1], 1);
        promtext_histogram(&o, "x_seconds", NULL, NULL, &h,
                           histogram_long_bounds_us);
        assert_true(o.len < sizeof buf);
        assert_non_null(strstr(buf, "x_seconds_bucket{le=\"60\"} 1\n"));
        assert_non_null(strstr(buf, "x_seconds_bucket{le=\"30\"} 0\n"));
        assert_non_null(strstr(buf, "x_seconds_bucket{le=\"7200\"} 2\n"));
        assert_non_null(strstr(buf, "x_seconds_bucket{le=\"86400\"} 2\n"));
        assert_non_null(strstr(buf, "x_seconds_bucket{le=\"+Inf\"} 3\n"));
        assert_non_null(strstr(buf, "x_seconds_count 3\n"));
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(parses_stat),
            cmocka_unit_test(refuses_what_does_not_parse),
            cmocka_unit_test(reads_itself),
            cmocka_unit_test(long_bounds),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
