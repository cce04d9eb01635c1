/* A file of lines, each appended with one write(2), that logrotate may
 * rename away: the apply log's and the audit trail's. */
#ifndef SERVER_LINEFILE_H
#define SERVER_LINEFILE_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Lines go out unbuffered, one writev(2) each, so a node killed with
 * SIGKILL leaves every line it wrote but the one it was writing: the
 * kernel ends a write early when SIGKILL arrives between two pages, and a
 * full disk cuts one short too. Such a cut line stays cut (a reader skips
 * it), but the next line, even from the next process, starts on a line of
 * its own, so the cut never swallows a line written after it.
 * Caller-allocated; used from one thread.
 */
struct linefile {
        int fd;    /* -1: off */
        bool torn; /* the file does not end with a newline */
};

/* Open (append, create, mode 0640) `path`; "" or NULL leaves the file
 * off, and every write does nothing. 0, or BATON_EIO (errno says why)
 * with the file off. A file whose last line was cut gets its newline
 * before the first line written. */
int linefile_open(struct linefile *f, const char *path);

/*
 * Open `path` again and write there from now on, for logrotate: after the
 * file was renamed, lines go to a new file at the path. Every line is one
 * write(2), so no line is split or lost across the two files. A file that
 * is off stays off. 0, or BATON_EIO (errno says why) with the old file
 * still in use.
 */
int linefile_reopen(struct linefile *f, const char *path);

/* Close the file; it is off from then on. Accepts one that is off. */
void linefile_close(struct linefile *f);

/* Whether lines go anywhere. */
bool linefile_on(const struct linefile *f);

/*
 * Append the `n` bytes at `line` (borrowed; one line with its newline), in
 * one write(2) with the newline that ends a line cut before it. 0 when
 * the line went out whole (or the file is off, or n is 0), else the errno
 * of the write that failed, or ENOSPC when it was cut short: the line is
 * lost, and the next one starts on a line of its own.
 */
int linefile_put(struct linefile *f, const char *line, size_t n);

#endif /* SERVER_LINEFILE_H */
