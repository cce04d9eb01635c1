/*
 * Self-tests of chaos-check's checkers, printing TAP. Each directory under
 * tests/chaos/cases/ is a small hand-written run directory (docs/chaos.md,
 * "Run directory") with a file `expect` naming the verdict each checker
 * must give ("S7 FAIL"; a checker it does not name must PASS), and
 * optionally a file `options` ("budget=N" for S7's search). The cases are
 * the checkers' documentation by example: `valid` passes everything, and
 * each other case breaks one invariant (the checkers that must notice it,
 * and any that notice it as well, are listed in its `expect`).
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "check/checks.h"
#include "check/report.h"
#include "check/run.h"
#include "check/util.h"

#ifndef CHAOS_CASES_DIR
#error "CHAOS_CASES_DIR must name tests/chaos/cases"
#endif

static int n_test;
static int n_failed;

static void tap(bool ok, const char *name, const char *why)
{
        n_test++;
        if (!ok) {
                n_failed++;
        }
        printf("%s %d - %s%s%s\n", ok ? "ok" : "not ok", n_test, name,
               why[0] != '\0' ? ": " : "", why);
}

static int cmp_str(const void *a, const void *b)
{
        return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Read `expect` (and `options`) of a case; -1 with `why` on error. */
static int read_expect(const char *dir, int expect[CHECK_COUNT],
                       struct check_options *o, char *why, size_t cap)
{
        char path[4200], *buf, *line;
        size_t len, pos = 0;
        bool complete;
        int i;

        for (i = 0; i < CHECK_COUNT; i++) {
                expect[i] = CHECK_PASS;
        }
        snprintf(path, sizeof path, "%s/expect", dir);
        if (util_read_file(path, &buf, &len) != 0) {
                snprintf(why, cap, "no expect file");
                return -1;
        }
        while ((line = util_next_line(buf, len, &pos, &complete)) != NULL) {
                char id[16], verdict[16];
                int c, v;
                if (line[0] == '\0' || line[0] == '#') {
                        continue;
                }
                if (sscanf(line, "%15s %15s", id, verdict) != 2 ||
                    (c = checks_parse_name(id)) < 0 ||
                    (v = checks_parse_verdict(verdict)) < 0) {
                        snprintf(why, cap, "bad expect line '%.60s'", line);
                        free(buf);
                        return -1;
                }
                expect[c] = v;
        }
        free(buf);
        checks_options_init(o);
        snprintf(path, sizeof path, "%s/options", dir);
        if (util_read_file(path, &buf, &len) == 0) {
                char *b = strstr(buf, "budget=");
                if (b != NULL) {
                        o->budget = strtoull(b + 7, NULL, 10);
                }
                free(buf);
        }
        return 0;
}

static void run_case(const char *name)
{
        char dir[4096], why[1024], errmsg[512];
        struct check_result res[CHECK_COUNT];
        int expect[CHECK_COUNT];
        struct check_options o;
        struct check_stats st;
        struct run r;
        size_t used = 0;
        int i;

        snprintf(dir, sizeof dir, "%s/%s", CHAOS_CASES_DIR, name);
        why[0] = '\0';
        if (read_expect(dir, expect, &o, why, sizeof why) != 0) {
                tap(false, name, why);
                return;
        }
        if (run_load(&r, dir, errmsg, sizeof errmsg) != 0) {
                tap(false, name, errmsg);
                return;
        }
        checks_run(&r, &o, res, &st);
        for (i = 0; i < CHECK_COUNT; i++) {
                if (res[i].verdict != expect[i] && used < sizeof why) {
                        used += (size_t)snprintf(
                            why + used, sizeof why - used, "%s%s %s not %s",
                            used > 0 ? ", " : "", checks_name(i),
                            checks_verdict_name(res[i].verdict),
                            checks_verdict_name(expect[i]));
                }
        }
        tap(why[0] == '\0', name, why);
        /* Every verdict as a TAP comment: the cases double as examples. */
        for (i = 0; i < CHECK_COUNT; i++) {
                printf("#   %s %s %s\n", checks_name(i),
                       checks_verdict_name(res[i].verdict), res[i].detail);
        }
        run_free(&r);
}

/* The summary of the valid case ends with "N passed, N failed". */
/* chaos-check's summary of case NAME (every checker run), in a temporary
 * file rewound to its start; NULL after a failed tap line for WHAT. */
static FILE *case_summary(const char *name, const char *what)
{
        char dir[4096], errmsg[512];
        struct check_result res[CHECK_COUNT];
        struct check_options o;
        struct check_stats st;
        struct run r;
        FILE *f;

        snprintf(dir, sizeof dir, "%s/%s", CHAOS_CASES_DIR, name);
        if (run_load(&r, dir, errmsg, sizeof errmsg) != 0) {
                tap(false, what, errmsg);
                return NULL;
        }
        checks_options_init(&o);
        checks_run(&r, &o, res, &st);
        f = tmpfile();
        if (f == NULL) {
                run_free(&r);
                tap(false, what, "tmpfile failed");
                return NULL;
        }
        report_summary(f, &r, res, &st);
        run_free(&r);
        rewind(f);
        return f;
}

static void test_summary(void)
{
        char line[512], last[512] = "";
        bool ok;
        FILE *f = case_summary("valid", "summary");

        if (f == NULL) {
                return;
        }
        while (fgets(line, sizeof line, f) != NULL) {
                snprintf(last, sizeof last, "%s", line);
        }
        fclose(f);
        ok = strcmp(last, "21 passed, 0 failed\n") == 0;
        last[strcspn(last, "\n")] = '\0';
        tap(ok, "summary ends with '21 passed, 0 failed'", ok ? "" : last);
}

/* The summary of a mixed run says what each fault's nemesis was. */
static void test_mix_summary(void)
{
        const char *want = "mix drew: pause-client x1, member-add-remove "
                           "x1, kill-leader x1\n";
        char line[512];
        bool ok = false;
        FILE *f = case_summary("mix_membership", "mix summary");

        if (f == NULL) {
                return;
        }
        while (!ok && fgets(line, sizeof line, f) != NULL) {
                ok = strcmp(line, want) == 0;
        }
        fclose(f);
        tap(ok, "a mixed run's summary says what the mix drew", "");
}

/* Exit statuses: safety beats liveness beats unknown. */
static void test_exit_status(void)
{
        struct check_result res[CHECK_COUNT];

        memset(res, 0, sizeof res);
        tap(checks_exit_status(res) == 0, "exit 0 when all pass", "");
        res[CHECK_S7].verdict = CHECK_UNKNOWN;
        tap(checks_exit_status(res) == 2, "exit 2 when one is unknown", "");
        res[CHECK_L2].verdict = CHECK_FAIL;
        tap(checks_exit_status(res) == 3, "exit 3 when liveness fails", "");
        res[CHECK_S1].verdict = CHECK_FAIL;
        tap(checks_exit_status(res) == 1, "exit 1 when safety fails", "");
}

int main(void)
{
        DIR *d = opendir(CHAOS_CASES_DIR);
        struct dirent *e;
        char **names = NULL, path[4096];
        size_t n = 0, cap = 0, i;
        struct stat st;

        if (d == NULL) {
                printf("1..0 # SKIP no cases at %s\n", CHAOS_CASES_DIR);
                return 0;
        }
        while ((e = readdir(d)) != NULL) {
                char *copy;
                snprintf(path, sizeof path, "%s/%s", CHAOS_CASES_DIR,
                         e->d_name);
                if (e->d_name[0] == '.' || stat(path, &st) != 0 ||
                    !S_ISDIR(st.st_mode)) {
                        continue;
                }
                copy = util_strndup(e->d_name, strlen(e->d_name));
                util_push((void **)&names, &n, &cap, &copy, sizeof copy);
        }
        closedir(d);
        util_sort(names, n, sizeof *names, cmp_str);
        printf("1..%zu\n", n + 6);
        for (i = 0; i < n; i++) {
                run_case(names[i]);
                free(names[i]);
        }
        free(names);
        test_summary();
        test_mix_summary();
        test_exit_status();
        return n_failed > 0 ? 1 : 0;
}
