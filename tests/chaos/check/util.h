/* Small helpers shared by chaos-check's parsers: memory, files, key=value
 * lines, numbers and a table that turns lock names into small integers. */
#ifndef CHAOS_CHECK_UTIL_H
#define CHAOS_CHECK_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * chaos-check is a short-lived test tool that reads a finished run: running
 * out of memory there has no useful recovery, so the allocation helpers
 * print a message and abort instead of making every parser unwind.
 */
void *util_malloc(size_t size);
void *util_calloc(size_t n, size_t size);
void *util_realloc(void *p, size_t size);
char *util_strndup(const char *s, size_t n);

/* Make room for `need` elements of `size` bytes in the array `*p` whose
 * capacity is `*cap` elements (doubling). */
void util_reserve(void **p, size_t *cap, size_t need, size_t size);

/* Append one element (copied from `elem`) to the array `*p` of `*n`
 * elements; returns a pointer to the new element. */
void *util_push(void **p, size_t *n, size_t *cap, const void *elem,
                size_t size);

/*
 * Read a whole file into a NUL-terminated buffer (owned by the caller, free
 * it with free()). Returns 0, or -1 with errno set (ENOENT when it does not
 * exist). The NUL terminator is not counted in `*len`.
 */
int util_read_file(const char *path, char **buf, size_t *len);

/*
 * Iterate over the lines of a buffer: returns the next line (NUL-terminated
 * in place, the newline replaced) and advances `*pos`, or NULL at the end.
 * `*complete` is false for a last line with no newline: a writer may have
 * been stopped in the middle of it.
 */
char *util_next_line(char *buf, size_t len, size_t *pos, bool *complete);

/* What util_load_log() found besides the records: whether there was a
 * file, and the lines it skipped. */
struct util_log {
        bool present;  /* the file exists */
        size_t n_bad;  /* malformed lines skipped */
        size_t n_torn; /* unterminated last line skipped */
};

/*
 * Read the log at `path`, one record a line: each complete, non-empty line
 * goes to `parse` with its number (from 1) and a zeroed record of `size`
 * bytes at the end of the array `*lines` of `*n` (capacity `*cap`), which
 * keeps the record when `parse` returns true, and counts the line in
 * log->n_bad when it returns false. An unterminated last line is counted
 * in log->n_torn (a writer stopped in the middle of it). A missing file is
 * an empty log, log->present false. 0, or -1 with "PATH: reason" in
 * `errmsg`.
 */
int util_load_log(const char *path, size_t size,
                  bool (*parse)(char *line, unsigned lineno, void *rec,
                                void *arg),
                  void *arg, void **lines, size_t *n, size_t *cap,
                  struct util_log *log, char *errmsg, size_t errcap);

/* One key=value field of a line; both point into the line, NUL-terminated. */
struct util_kv {
        const char *key;
        const char *value;
};

/*
 * Split a line in place at single spaces into key=value fields. Fields
 * without '=' are skipped. Returns the number of fields stored (at most
 * `cap`).
 */
size_t util_split_kv(char *line, struct util_kv *kv, size_t cap);

/* The value of `key` among `kv`, or NULL. */
const char *util_kv_get(const struct util_kv *kv, size_t n, const char *key);

/* Parse a whole decimal number; false when `s` is NULL, empty, has other
 * characters or overflows. */
bool util_parse_u64(const char *s, uint64_t *out);
bool util_parse_i64(const char *s, int64_t *out);

/* A table of distinct strings (lock names), each given a small id in order
 * of first appearance, so per-lock state can live in plain arrays. */
struct util_strtab {
        char **names; /* by id */
        size_t n, cap;
        int *slots; /* open addressing: id + 1, or 0 for empty */
        size_t n_slots;
};

void util_strtab_init(struct util_strtab *t);
void util_strtab_close(struct util_strtab *t);

/* The id of `s` (`len` bytes), added when new. */
int util_strtab_intern(struct util_strtab *t, const char *s, size_t len);

/* The id of `s`, or -1 when it was never interned. */
int util_strtab_find(const struct util_strtab *t, const char *s);

/* qsort() and bsearch() that accept an empty array given as NULL (which
 * the C library declares undefined). */
void util_sort(void *base, size_t n, size_t size,
               int (*cmp)(const void *, const void *));
void *util_bsearch(const void *key, const void *base, size_t n, size_t size,
                   int (*cmp)(const void *, const void *));

/* Format a duration in nanoseconds as seconds with three decimals into
 * `buf` ("1.250 s"); returns `buf`. */
char *util_fmt_secs(char *buf, size_t cap, int64_t ns);

#endif /* CHAOS_CHECK_UTIL_H */
