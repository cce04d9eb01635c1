/* Writing chaos history lines: a bounded line builder and one write(2) per
 * line. */
#include "history_out.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int history_open(const char *path)
{
        return open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
}

uint64_t history_now_ns(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * UINT64_C(1000000000) +
               (uint64_t)ts.tv_nsec;
}

/* Append formatted text, keeping room for the newline; a field that does
 * not fit is dropped whole, so a line never ends inside a value. */
__attribute__((format(printf, 2, 3))) static void append(struct history_line *l,
                                                         const char *fmt, ...)
{
        size_t room = sizeof l->buf - 1 - l->len;
        va_list ap;
        int n;

        va_start(ap, fmt);
        n = vsnprintf(l->buf + l->len, room, fmt, ap);
        va_end(ap);
        if (n < 0 || (size_t)n >= room) {
                l->buf[l->len] = '\0';
                return;
        }
        l->len += (size_t)n;
}

void history_line_start(struct history_line *l, uint64_t t, uint64_t p, int w,
                        const char *type, const char *f, const char *key)
{
        l->len = 0;
        l->buf[0] = '\0';
        append(l, "t=%llu p=%llu w=%d type=%s f=%s key=%s",
               (unsigned long long)t, (unsigned long long)p, w, type, f, key);
}

void history_line_u64(struct history_line *l, const char *name, uint64_t v)
{
        append(l, " %s=%llu", name, (unsigned long long)v);
}

void history_line_str(struct history_line *l, const char *name, const char *s)
{
        append(l, " %s=%s", name, s);
}

int history_line_write(int fd, struct history_line *l)
{
        ssize_t n;

        l->buf[l->len] = '\n';
        do {
                n = write(fd, l->buf, l->len + 1);
        } while (n < 0 && errno == EINTR);
        l->buf[l->len] = '\0';
        if (n < 0) {
                return -1;
        }
        if ((size_t)n != l->len + 1) {
                errno = ENOSPC; /* a regular file only writes short when full */
                return -1;
        }
        return 0;
}
