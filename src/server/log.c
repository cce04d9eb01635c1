/* batond's log: leveled lines on stderr. Only batond logs (STYLE rule 12). */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <time.h>

static enum log_level current = LOG_INFO;

void log_set_level(enum log_level level)
{
        current = level;
}

int log_enabled(enum log_level level)
{
        return level <= current;
}

void log_write(enum log_level level, const char *fmt, ...)
{
        static const char *const names[] = {"error", "warn", "info", "debug"};
        struct timespec ts;
        struct tm tm;
        char stamp[32];
        va_list ap;

        if (!log_enabled(level)) {
                return;
        }
        clock_gettime(CLOCK_REALTIME, &ts);
        gmtime_r(&ts.tv_sec, &tm);
        strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &tm);
        fprintf(stderr, "%s.%03ldZ %s ", stamp, ts.tv_nsec / 1000000,
                names[level]);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
}
