/* The report of a chaos run: RUN/results (one line per checker) and
 * RUN/summary (the counts, the verdicts, and "N passed, N failed"). */
#ifndef CHAOS_CHECK_REPORT_H
#define CHAOS_CHECK_REPORT_H

#include <stdio.h>

#include "checks.h"
#include "run.h"

/* Write one `<ID> <PASS|FAIL|UNKNOWN> <detail>` line per checker. */
void report_results(FILE *f, const struct check_result res[CHECK_COUNT]);

/*
 * Write the summary: the plan, operations ok/fail/info, faults injected,
 * elections, fencing saves, the longest window without an ok operation,
 * the recovery time after heal-all, each checker's line, and last
 * "N passed, N failed" (", N unknown" appended when some checker could not
 * decide).
 */
void report_summary(FILE *f, const struct run *r,
                    const struct check_result res[CHECK_COUNT],
                    const struct check_stats *st);

/* Write RUN/results and RUN/summary into the run directory. 0, or -1 with
 * a message in `errmsg`. */
int report_write(const struct run *r,
                 const struct check_result res[CHECK_COUNT],
                 const struct check_stats *st, char *errmsg, size_t cap);

#endif /* CHAOS_CHECK_REPORT_H */
