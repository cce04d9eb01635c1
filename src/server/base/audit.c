/* The audit trail: one JSON line for each administrator's request this
 * node served and for each request it refused for want of permission or
 * authentication (docs/security.md, "Audit trail"). */
#include "audit.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "../../../include/baton/errors.h"
#include "../../lib/json.h"
#include "log.h"

int audit_open(struct audit *a, const char *path, uint64_t node)
{
        memset(a, 0, sizeof *a);
        a->node = node;
        a->path = path != NULL ? path : "";
        return linefile_open(&a->file, path);
}

int audit_reopen(struct audit *a)
{
        return linefile_reopen(&a->file, a->path);
}

void audit_close(struct audit *a)
{
        if (a != NULL) {
                linefile_close(&a->file);
        }
}

bool audit_on(const struct audit *a)
{
        return a != NULL && linefile_on(&a->file);
}

/* `,"key":` and `s` (NULL: "") as a JSON string; whether `s` was kept
 * exactly. */
static bool put_text(struct wcursor *w, const char *key, const char *s,
                     size_t n)
{
        wcursor_bytes(w, ",\"", 2);
        wcursor_bytes(w, key, strlen(key));
        wcursor_bytes(w, "\":", 2);
        return json_text(w, s != NULL ? s : "", s != NULL ? n : 0);
}

static size_t len_of(const char *s)
{
        return s != NULL ? strlen(s) : 0;
}

size_t audit_format(char *buf, size_t cap, const struct timespec *ts,
                    uint64_t node, const struct audit_event *e)
{
        char time[LOG_STAMP_MAX];
        char head[LOG_STAMP_MAX + 64];
        struct wcursor w;
        bool exact;
        int n;

        log_stamp(time, sizeof time, ts);
        n = snprintf(head, sizeof head, "{\"time\":\"%s\",\"node\":%" PRIu64,
                     time, node);
        wcursor_init(&w, buf, cap);
        wcursor_bytes(&w, head, (size_t)n);
        put_text(&w, "identity", e->identity, len_of(e->identity));
        put_text(&w, "address", e->address, len_of(e->address));
        put_text(&w, "action", e->action, len_of(e->action));
        exact = put_text(&w, "target", e->target, e->target_len);
        if (!exact) {
                /* A lock name is any bytes: an auditor can still tell
                 * which one. */
                wcursor_bytes(&w, ",\"target_hex\":", 14);
                json_hex(&w, e->target, e->target_len);
        }
        put_text(&w, "result", e->result == 0 ? "ok" : baton_errname(e->result),
                 e->result == 0 ? 2 : strlen(baton_errname(e->result)));
        put_text(&w, "detail", e->detail, len_of(e->detail));
        wcursor_bytes(&w, "}\n", 2);
        return w.bad ? 0 : w.len;
}

/* A line was lost for `why` (an errno): count it, and say so at the first
 * of a run. */
static void lost(struct audit *a, int why)
{
        a->lost++;
        if (!a->failing) {
                a->failing = true;
                log_error("audit log %s: cannot write a line (%s); audit "
                          "lines are lost until a write succeeds again "
                          "(baton_audit_write_errors_total counts them)",
                          a->path, strerror(why));
        }
}

void audit_write(struct audit *a, const struct audit_event *e)
{
        char line[AUDIT_LINE_MAX];
        struct timespec now;
        size_t n;
        int rv;

        if (!audit_on(a)) {
                return;
        }
        clock_gettime(CLOCK_REALTIME, &now);
        n = audit_format(line, sizeof line, &now, a->node, e);
        if (n == 0) {
                lost(a, EMSGSIZE);
                return;
        }
        rv = linefile_put(&a->file, line, n);
        if (rv != 0) {
                lost(a, rv);
                return;
        }
        a->lines++;
        if (a->failing) {
                a->failing = false;
                log_warn("audit log %s: writing again; %" PRIu64
                         " lines lost so far",
                         a->path, a->lost);
        }
}
