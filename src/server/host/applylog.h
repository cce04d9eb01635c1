/* The apply log: one JSON line per state machine event, for checkers. */
#ifndef SERVER_APPLYLOG_H
#define SERVER_APPLYLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../fsm/lockfsm.h"
#include "../base/linefile.h"

/*
 * Each line: {"index":N,"term":N,"event":"GRANT","cause":"RELEASE",
 * "session":N,"seq":N,"owner":N,"token":N,"status":N,"lock":"name",
 * "mono_ns":N}, with "hold_ms":N before "mono_ns" on the GRANT or EXTEND
 * of a grant with a hold time; the lock name keeps every byte (json_bytes():
 * each byte outside printable ASCII is \u00XX). After the events of an entry
 * comes one line with event "ENTRY" (cause BATCH, or the type of the entry's
 * one command; the other fields 0), so a reader knows where an entry ends: one
 * missing means the node stopped while applying it. Lines are written
 * with one write(2) each, unbuffered (base/linefile.h: a line a kill or a
 * full disk cuts short stays cut, and the next starts on a line of its
 * own).
 */
struct applylog {
        struct linefile file;
};

/* Open (append, create) `path`; "" or NULL leaves the log off. 0 or
 * BATON_EIO (linefile_open()). */
int applylog_open(struct applylog *a, const char *path);

/* Open `path` again and write there from now on, for logrotate
 * (linefile_reopen()): 0, or BATON_EIO (errno says why) with the old file
 * still in use. A log that is off stays off. */
int applylog_reopen(struct applylog *a, const char *path);
void applylog_close(struct applylog *a);
void applylog_write(struct applylog *a, uint64_t term,
                    const struct lockfsm_event *ev);

/* The ENTRY line after the events of the entry at `index`. */
void applylog_write_entry(struct applylog *a, uint64_t term, uint64_t index,
                          uint8_t kind);

/* The line of an ACL entry (src/fsm/acl.h): event ACL_SET, ACL_REMOVE,
 * ACL_SEED, RULE_SET, RULE_REMOVE, QUOTA_SET or QUOTA_REMOVE, cause ACL,
 * the identity (a rule's or a quota's subject) as "lock", its role (a rule's
 * permission bits) as "mode", who asked as "by", and the status the list gave
 * it. It follows the lock state machine's RESULT for the entry
 * (BATON_EMALFORMED: not its command) and comes before the entry's ENTRY line.
 */
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
