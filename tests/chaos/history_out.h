/* Writing chaos history lines (docs/chaos.md, "History lines"): one
 * key=value line per event, each appended with a single write(2). */
#ifndef CHAOS_HISTORY_OUT_H
#define CHAOS_HISTORY_OUT_H

#include <stddef.h>
#include <stdint.h>

/* Longest line, newline included; a longer one is cut at a field. */
#define HISTORY_LINE_MAX 1024

/* One line under construction. */
struct history_line {
        char buf[HISTORY_LINE_MAX];
        size_t len;
};

/* Open `path` for appending (created if missing): a file descriptor, or -1
 * with errno set. */
int history_open(const char *path);

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t history_now_ns(void);

/* Start a line with the fields every event has: t, p, w, type, f, key.
 * The strings are copied. */
void history_line_start(struct history_line *l, uint64_t t, uint64_t p, int w,
                        const char *type, const char *f, const char *key);

/* Append " name=v". */
void history_line_u64(struct history_line *l, const char *name, uint64_t v);

/* Append " name=s"; `s` must hold no space or newline. */
void history_line_str(struct history_line *l, const char *name, const char *s);

/* Append the newline and write the whole line with one write(2) on `fd`
 * (opened with O_APPEND), so that a crash never leaves half a line. 0, or
 * -1 with errno set. */
int history_line_write(int fd, struct history_line *l);

#endif /* CHAOS_HISTORY_OUT_H */
