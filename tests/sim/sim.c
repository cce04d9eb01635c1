/* What the parts of a simulated run share: its log and failure messages. */
#include "sim.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

void say(struct sim *s, const char *fmt, ...)
{
        va_list ap;

        if (!s->verbose) {
                return;
        }
        printf("# t=%" PRIu64 " ", (uint64_t)simcluster_now(&s->c));
        va_start(ap, fmt);
        vprintf(fmt, ap);
        va_end(ap);
        printf("\n");
}

int fail(char *reason, size_t cap, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(reason, cap, fmt, ap);
        va_end(ap);
        return -1;
}
