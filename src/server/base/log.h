/* batond's log: leveled lines on stderr, as text or as one JSON object per
 * line. Only batond logs (STYLE rule 12). */
#ifndef SERVER_LOG_H
#define SERVER_LOG_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

enum log_level { LOG_ERROR = 0, LOG_WARN, LOG_INFO, LOG_DEBUG };

/* How a line is written (the log-format key). */
enum log_format {
        LOG_TEXT = 0, /* "2024-05-01T12:00:00.123Z info message" */
        LOG_JSON,     /* {"time":...,"level":...,"node":N,"message":...} */
};

/* What a line is about, for log-format = json (text lines leave these to
 * the message): each field that is 0 is left out of the object. */
struct log_fields {
        uint64_t session;    /* the session the line is about */
        uint64_t seq;        /* the request's sequence in that session */
        uint64_t connection; /* the client connection */
        uint64_t request;    /* the request's id on its connection */
};

/* Set once in main, before the loop runs: the one mutable global. */
void log_set_level(enum log_level level);
int log_enabled(enum log_level level);

/* Set once in main, with the level: the format, and the node id that JSON
 * lines carry. */
void log_set_format(enum log_format format, uint64_t node_id);

void log_write(enum log_level level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* As log_write(), with what the line is about (`f` borrowed; NULL: none). */
void log_write_fields(enum log_level level, const struct log_fields *f,
                      const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/*
 * One JSON line (with its newline) for `message` into `buf`: time (RFC 3339
 * UTC with milliseconds, from `ts`), level, node, message, then the
 * non-zero fields of `f` (may be NULL). Returns its length, or 0 when it
 * does not fit. Exposed for tests.
 */
size_t log_format_json(char *buf, size_t cap, enum log_level level,
                       const struct timespec *ts, uint64_t node,
                       const struct log_fields *f, const char *message);

/* The time `ts` (CLOCK_REALTIME) as RFC 3339 UTC with milliseconds,
 * "2024-05-01T12:00:00.123Z", into `buf` (LOG_STAMP_MAX bytes will do),
 * as every line of the log and of the audit trail dates itself. */
#define LOG_STAMP_MAX 40
void log_stamp(char *buf, size_t cap, const struct timespec *ts);

#define log_error(...) log_write(LOG_ERROR, __VA_ARGS__)
#define log_warn(...)  log_write(LOG_WARN, __VA_ARGS__)
#define log_info(...)  log_write(LOG_INFO, __VA_ARGS__)
#define log_debug(...)                                                         \
        do {                                                                   \
                if (log_enabled(LOG_DEBUG)) {                                  \
                        log_write(LOG_DEBUG, __VA_ARGS__);                     \
                }                                                              \
        } while (0)

/* The same with a struct log_fields pointer first. */
#define log_warn_f(f, ...) log_write_fields(LOG_WARN, f, __VA_ARGS__)
#define log_info_f(f, ...) log_write_fields(LOG_INFO, f, __VA_ARGS__)
#define log_debug_f(f, ...)                                                    \
        do {                                                                   \
                if (log_enabled(LOG_DEBUG)) {                                  \
                        log_write_fields(LOG_DEBUG, f, __VA_ARGS__);           \
                }                                                              \
        } while (0)

#endif /* SERVER_LOG_H */
