/* batond's log: leveled lines on stderr, as text or as one JSON object per
 * line. Only batond logs (STYLE rule 12). */
#include "log.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../../lib/json.h"

/* The one mutable global (STYLE rule 9), set once in main. */
static struct {
        enum log_level level;
        enum log_format format;
        uint64_t node;
} current = {LOG_INFO, LOG_TEXT, 0};

static const char *const names[] = {"error", "warn", "info", "debug"};

/* A message longer than this is cut in a JSON line (text lines are not). */
#define MESSAGE_MAX 2048

void log_set_level(enum log_level level)
{
        current.level = level;
}

int log_enabled(enum log_level level)
{
        return level <= current.level;
}

void log_set_format(enum log_format format, uint64_t node_id)
{
        current.format = format;
        current.node = node_id;
}

void log_stamp(char *buf, size_t cap, const struct timespec *ts)
{
        struct tm tm;
        size_t n;

        gmtime_r(&ts->tv_sec, &tm);
        n = strftime(buf, cap, "%Y-%m-%dT%H:%M:%S", &tm);
        snprintf(buf + n, cap - n, ".%03ldZ", ts->tv_nsec / 1000000);
}

static void put_field(struct wcursor *w, const char *key, uint64_t v)
{
        char text[48];
        int n;

        if (v != 0) {
                n = snprintf(text, sizeof text, ",\"%s\":%" PRIu64, key, v);
                wcursor_bytes(w, text, (size_t)n);
        }
}

size_t log_format_json(char *buf, size_t cap, enum log_level level,
                       const struct timespec *ts, uint64_t node,
                       const struct log_fields *f, const char *message)
{
        struct wcursor w;
        char head[128];
        char time[40];
        int n;

        log_stamp(time, sizeof time, ts);
        n = snprintf(head, sizeof head,
                     "{\"time\":\"%s\",\"level\":\"%s\",\"node\":%" PRIu64
                     ",\"message\":",
                     time, names[level], node);
        wcursor_init(&w, buf, cap);
        wcursor_bytes(&w, head, (size_t)n);
        json_text(&w, message, strlen(message));
        if (f != NULL) {
                put_field(&w, "session", f->session);
                put_field(&w, "seq", f->seq);
                put_field(&w, "connection", f->connection);
                put_field(&w, "request", f->request);
        }
        wcursor_bytes(&w, "}\n", 2);
        return w.bad ? 0 : w.len;
}

static void write_json(enum log_level level, const struct timespec *ts,
                       const struct log_fields *f, const char *fmt, va_list ap)
{
        /* Each byte of the message escaped in at most 6, and the fields. */
        char message[MESSAGE_MAX];
        char line[6 * MESSAGE_MAX + 512];
        size_t n;

        vsnprintf(message, sizeof message, fmt, ap);
        n = log_format_json(line, sizeof line, level, ts, current.node, f,
                            message);
        /* One write, so that lines of a node do not interleave. */
        fwrite(line, 1, n, stderr);
}

static void write_line(enum log_level level, const struct log_fields *f,
                       const char *fmt, va_list ap)
{
        struct timespec ts;
        char time[40];

        clock_gettime(CLOCK_REALTIME, &ts);
        if (current.format == LOG_JSON) {
                write_json(level, &ts, f, fmt, ap);
                return;
        }
        log_stamp(time, sizeof time, &ts);
        fprintf(stderr, "%s %s ", time, names[level]);
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
}

void log_write(enum log_level level, const char *fmt, ...)
{
        va_list ap;

        if (!log_enabled(level)) {
                return;
        }
        va_start(ap, fmt);
        write_line(level, NULL, fmt, ap);
        va_end(ap);
}

void log_write_fields(enum log_level level, const struct log_fields *f,
                      const char *fmt, ...)
{
        va_list ap;

        if (!log_enabled(level)) {
                return;
        }
        va_start(ap, fmt);
        write_line(level, f, fmt, ap);
        va_end(ap);
}
