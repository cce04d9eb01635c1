/* TAP on stdout for the test programs that print it themselves: numbered
 * "ok" and "not ok" lines, "# " comments, and the plan at the end. */
#include "tap.h"

#include <stdarg.h>
#include <stdio.h>

bool tap_ok(struct tap *t, bool cond, const char *fmt, ...)
{
        va_list ap;

        t->run++;
        if (!cond) {
                t->failed++;
        }
        printf("%s %u - ", cond ? "ok" : "not ok", t->run);
        va_start(ap, fmt);
        vprintf(fmt, ap);
        va_end(ap);
        printf("\n");
        fflush(stdout);
        return cond;
}

void tap_diag(const char *fmt, ...)
{
        va_list ap;

        printf("# ");
        va_start(ap, fmt);
        vprintf(fmt, ap);
        va_end(ap);
        printf("\n");
        fflush(stdout);
}

int tap_plan(const struct tap *t)
{
        printf("1..%u\n", t->run);
        return t->failed != 0;
}
