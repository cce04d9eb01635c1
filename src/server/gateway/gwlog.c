/* The request core's log lines: formatted here, only at the levels the
 * core was given, and written by its host (gateway_host.log). */
#include "gwlog.h"

#include <stdarg.h>
#include <stdio.h>

#include "core.h"
#include "gateway.h"

void gwlog(struct gateway *g, enum log_level level, const struct log_fields *f,
           const char *fmt, ...)
{
        char message[GWLOG_MAX];
        va_list ap;

        if (level > g->log_level) {
                return;
        }
        va_start(ap, fmt);
        vsnprintf(message, sizeof message, fmt, ap);
        va_end(ap);
        g->host->log(g->host, level, f, message);
}
