/* The report of a chaos run: RUN/results and RUN/summary. */
#include "report.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

void report_results(FILE *f, const struct check_result res[CHECK_COUNT])
{
        int i;

        for (i = 0; i < CHECK_COUNT; i++) {
                fprintf(f, "%s %s %s\n", checks_name(i),
                        checks_verdict_name(res[i].verdict), res[i].detail);
        }
}

/* The plan's parameters the summary repeats (RUN/plan has them all). */
static const char *const plan_keys[] = {
    "seed",    "nemesis",     "nodes",   "time_s", "ttl_ms", "workloads",
    "network", "clock_fault", "fencing", "server", "mix",
};

/* A mixed run (scripts/chaos --mix): how many faults each nemesis drawn
 * made, from the "fault=mix" lines before each, in order of first draw. */
static void report_mix(FILE *f, const struct nemlog *nl)
{
        const char *names[64];
        size_t counts[64], n = 0, i, j;

        for (i = 0; i < nl->n_actions; i++) {
                const struct nemlog_action *a = &nl->actions[i];
                if (a->action != NEMLOG_INFO || strcmp(a->fault, "mix") != 0) {
                        continue;
                }
                for (j = 0; j < n && strcmp(names[j], a->target) != 0; j++) {
                }
                if (j == n && n < 64) {
                        names[n] = a->target;
                        counts[n++] = 0;
                }
                if (j < n) {
                        counts[j]++;
                }
        }
        if (n == 0) {
                return;
        }
        fprintf(f, "mix drew:");
        for (i = 0; i < n; i++) {
                fprintf(f, "%s %s x%zu", i > 0 ? "," : "", names[i], counts[i]);
        }
        fprintf(f, "\n");
}

void report_summary(FILE *f, const struct run *r,
                    const struct check_result res[CHECK_COUNT],
                    const struct check_stats *st)
{
        const struct nemlog *nl = &r->nemlog;
        size_t passed = 0, failed = 0, unknown = 0, i;
        char a[32];

        fprintf(f, "run: %s\n", r->dir);
        fprintf(f, "plan:");
        for (i = 0; i < sizeof plan_keys / sizeof plan_keys[0]; i++) {
                const char *v = nemlog_plan_get(nl, plan_keys[i]);
                if (v != NULL) {
                        fprintf(f, " %s=%s", plan_keys[i], v);
                }
        }
        fprintf(f, "%s\n", nl->plan_present ? "" : " (no plan file)");
        fprintf(f, "operations: %zu ok, %zu fail, %zu info\n", st->ops_ok,
                st->ops_fail, st->ops_info);
        fprintf(f, "faults injected: %zu\n", st->faults);
        report_mix(f, nl);
        fprintf(f, "elections: %zu\n", st->elections);
        fprintf(f, "fencing saves: %zu\n", st->fencing_saves);
        if (st->longest_gap_ns < 0) {
                fprintf(f, "longest window without ok operations: -\n");
        } else {
                fprintf(f, "longest window without ok operations: %s\n",
                        util_fmt_secs(a, sizeof a, st->longest_gap_ns));
        }
        if (!st->has_heal) {
                fprintf(f, "recovery after heal-all: - (no heal-all)\n");
        } else if (st->recovery_ns < 0) {
                fprintf(f, "recovery after heal-all: never (no ok operation "
                           "after it)\n");
        } else {
                fprintf(f, "recovery after heal-all: %s\n",
                        util_fmt_secs(a, sizeof a, st->recovery_ns));
        }
        if (r->history.n_bad + r->history.n_torn + r->history.n_orphans > 0) {
                fprintf(f,
                        "history lines skipped: %zu malformed, %zu torn, %zu "
                        "completions without invoke%s%s\n",
                        r->history.n_bad, r->history.n_torn,
                        r->history.n_orphans,
                        r->history.n_bad > 0 ? "; first: " : "",
                        r->history.first_bad);
        }
        report_results(f, res);
        for (i = 0; i < CHECK_COUNT; i++) {
                passed += res[i].verdict == CHECK_PASS;
                failed += res[i].verdict == CHECK_FAIL;
                unknown += res[i].verdict == CHECK_UNKNOWN;
        }
        if (unknown > 0) {
                fprintf(f, "%zu passed, %zu failed, %zu unknown\n", passed,
                        failed, unknown);
        } else {
                fprintf(f, "%zu passed, %zu failed\n", passed, failed);
        }
}

/* Write the results (or the summary) to `path`; 0 or -1 with `errmsg`. */
static int write_file(const char *path, const struct run *r,
                      const struct check_result *res,
                      const struct check_stats *st, bool summary, char *errmsg,
                      size_t cap)
{
        FILE *f = fopen(path, "w");

        if (f == NULL) {
                snprintf(errmsg, cap, "%s: %s", path, strerror(errno));
                return -1;
        }
        if (summary) {
                report_summary(f, r, res, st);
        } else {
                report_results(f, res);
        }
        if (fclose(f) != 0) {
                snprintf(errmsg, cap, "%s: %s", path, strerror(errno));
                return -1;
        }
        return 0;
}

int report_write(const struct run *r,
                 const struct check_result res[CHECK_COUNT],
                 const struct check_stats *st, char *errmsg, size_t cap)
{
        char path[4096];

        snprintf(path, sizeof path, "%s/results", r->dir);
        if (write_file(path, r, res, st, false, errmsg, cap) != 0) {
                return -1;
        }
        snprintf(path, sizeof path, "%s/summary", r->dir);
        return write_file(path, r, res, st, true, errmsg, cap);
}
