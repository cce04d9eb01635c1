/* The audit trail: one JSON line for each administrator's request this
 * node served and for each request it refused for want of permission or
 * authentication (docs/security.md, "Audit trail"). */
#ifndef SERVER_AUDIT_H
#define SERVER_AUDIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "linefile.h"

/*
 * Each line, in this order, every field always there:
 *
 *   {"time":"2024-05-01T12:00:00.123Z","node":1,"identity":"admin",
 *    "address":"10.0.0.7:51234","action":"ACL_SET","target":"alice",
 *    "result":"ok","detail":"role admin"}
 *
 * time: when the line was written (the wall clock, RFC 3339 UTC with
 * milliseconds); node: this node's id; result: "ok", or the BATON_E*
 * name of the code that answered the request (baton_errname()); the
 * rest as struct audit_event says ("" for what it does not give). Strings
 * are JSON text (json_text(): valid UTF-8 kept, control characters,
 * quotes and backslashes escaped, any other byte U+FFFD); when the
 * target's bytes are not all kept so, "target_hex" follows "target" with
 * all of them in hex. Lines go to the file as base/linefile.h writes
 * them: unbuffered, one write(2) each.
 */
struct audit_event {
        /* The client certificate's identity, as the roles are decided
         * from (NULL or "": none: tls = off, or none proved). */
        const char *identity;
        const char *address; /* the client's ip:port (NULL or "": unknown) */
        const char *action;  /* what was asked: docs/security.md's names */
        /* What it acted on, `target_len` bytes of any value (a lock's
         * name, a session's or member's id, an identity); NULL: none. */
        const char *target;
        size_t target_len;
        int result;         /* 0, or the BATON_E* code it was answered */
        const char *detail; /* more, in words (NULL or "": none) */
};

/* Caller-allocated; used from one thread (batond: the loop's). */
struct audit {
        struct linefile file;
        uint64_t node;
        const char *path; /* borrowed, for the log's lines */
        uint64_t lines;   /* written whole */
        /* Lines lost: a write that failed or was cut short (a full
         * disk), or a line too long for its buffer. The node carries on
         * (baton_audit_write_errors_total). */
        uint64_t lost;
        bool failing; /* the last line was lost: its burst was logged */
};

/* The longest line audit_write() writes; a longer one is lost. */
#define AUDIT_LINE_MAX 8192

/* Open the trail at `path` (borrowed for the trail's life; append,
 * create, mode 0640) for node `node`; "" or NULL leaves it off, and
 * audit_write() does nothing. 0, or BATON_EIO (errno says why) with it
 * off. */
int audit_open(struct audit *a, const char *path, uint64_t node);

/* SIGHUP: open the path again and write there from now on, for logrotate
 * (linefile_reopen()). 0, or BATON_EIO (errno says why) with the old file
 * still in use. A trail that is off stays off. */
int audit_reopen(struct audit *a);

/* Accepts one that is off, and NULL. */
void audit_close(struct audit *a);

/* Whether lines go anywhere (false for NULL). */
bool audit_on(const struct audit *a);

/*
 * Write `e`'s line (borrowed for the call), dated now. A line that is lost
 * is counted in a->lost, and the first of a run of them logged (a warning
 * with the reason); the first line written whole after the run is logged
 * too, with how many were lost. Never stops the node. Nothing when `a` is
 * NULL or off.
 */
void audit_write(struct audit *a, const struct audit_event *e);

/* Format `e`'s line (with its newline) into `buf`, dated `ts` (the wall
 * clock), from node `node`: its length, or 0 when it does not fit.
 * Exposed for tests (tests/unit/test_audit.c). */
size_t audit_format(char *buf, size_t cap, const struct timespec *ts,
                    uint64_t node, const struct audit_event *e);

#endif /* SERVER_AUDIT_H */
