/* TAP on stdout for the test programs that print it themselves: numbered
 * "ok" and "not ok" lines, "# " comments, and the plan at the end. */
#ifndef TESTS_TAP_H
#define TESTS_TAP_H

#include <stdbool.h>

/* One TAP stream: the cases printed so far. */
struct tap {
        unsigned run;    /* cases printed */
        unsigned failed; /* "not ok" among them */
};

/* Print case number t->run + 1: "ok N - " or "not ok N - " and the
 * description; flushes stdout (a child or a crash may follow). Returns
 * `cond`, so that a failed case can be followed by its diagnostics. */
bool tap_ok(struct tap *t, bool cond, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A comment line: "# " and the text; flushes stdout. */
void tap_diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The plan, "1..N" with N the cases printed, as the last line; the exit
 * status of the program: 0 when no case failed, 1 otherwise. */
int tap_plan(const struct tap *t);

#endif /* TESTS_TAP_H */
