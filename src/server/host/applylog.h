/* The apply log: one JSON line per state machine event, for checkers. */
#ifndef SERVER_APPLYLOG_H
#define SERVER_APPLYLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../fsm/lockfsm.h"

/*
 * Each line: {"index":N,"term":N,"event":"GRANT","cause":"RELEASE",
 * "session":N,"seq":N,"owner":N,"token":N,"status":N,"lock":"name",
 * "mono_ns":N}, with "hold_ms":N before "mono_ns" on the GRANT or EXTEND
 * of a grant with a hold time; the lock name keeps every byte (json_bytes():
 * each byte outside printable ASCII is \u00XX). After the events of an entry
 * comes one line with event "ENTRY" (cause BATCH, or the type of the entry's
 * one command; the other fields 0), so a reader knows where an entry ends: one
 * missing means the node stopped while applying it. Lines are written
 * with one write(2) each, unbuffered, so a node killed with SIGKILL leaves
 * every line of what it applied but the one it was writing: the kernel
 * ends a write early when SIGKILL arrives between two pages, and a full
 * disk cuts one short too. Such a cut line stays cut (a reader skips it),
 * but the next line, even from the next process, starts on a line of its
 * own, so the cut never swallows an event written after it.
 */
struct applylog {
        int fd;    /* -1: off */
        bool torn; /* the file does not end with a newline */
};

/* Open (append, create) `path`; "" or NULL leaves the log off. 0 or
 * BATON_EIO. A file whose last line was cut (above) gets its newline
 * before the first line written. */
int applylog_open(struct applylog *a, const char *path);

/*
 * Open `path` again (append, create) and write there from now on, for
 * logrotate: after the file was renamed, lines go to a new file at the
 * path. Every line is one write(2) and the loop is single-threaded, so no
 * line is split or lost across the two files. A log that is off stays off.
 * 0, or BATON_EIO (errno says why) with the old file still in use.
 */
int applylog_reopen(struct applylog *a, const char *path);
void applylog_close(struct applylog *a);
void applylog_write(struct applylog *a, uint64_t term,
                    const struct lockfsm_event *ev);

/* The ENTRY line after the events of the entry at `index`. */
void applylog_write_entry(struct applylog *a, uint64_t term, uint64_t index,
                          uint8_t kind);

/* The line of an ACL entry (src/fsm/acl.h): event ACL_SET, ACL_REMOVE or
 * ACL_SEED, cause ACL, the identity as "lock", its role as "mode", who
 * asked as "by", and the status the list gave it. It follows the lock
 * state machine's RESULT for the entry (BATON_EMALFORMED: not its
 * command) and comes before the entry's ENTRY line. */
void applylog_write_acl(struct applylog *a, uint64_t term, uint64_t index,
                        const struct command *c, int status);

/* Format one line (with its newline) into `buf`; returns its length, or 0
 * if it does not fit (or, for an ACL entry, its mode is none of the
 * three). Exposed for tests (tests/unit/test_applylog.c). */
size_t applylog_format(char *buf, size_t cap, uint64_t term,
                       const struct lockfsm_event *ev);
size_t applylog_format_entry(char *buf, size_t cap, uint64_t term,
                             uint64_t index, uint8_t kind);
size_t applylog_format_acl(char *buf, size_t cap, uint64_t term, uint64_t index,
                           const struct command *c, int status);

#endif /* SERVER_APPLYLOG_H */
