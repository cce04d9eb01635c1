/* The apply log: one JSON line per state machine event, for checkers. */
#include "applylog.h"

#include <stdbool.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "../../../include/baton/errors.h"
#include "../../lib/json.h"

static const char *event_name(int type)
{
        switch (type) {
        case LOCKFSM_EV_RESULT:
                return "RESULT";
        case LOCKFSM_EV_OPEN:
                return "OPEN";
        case LOCKFSM_EV_END:
                return "END";
        case LOCKFSM_EV_GRANT:
                return "GRANT";
        case LOCKFSM_EV_RELEASE:
                return "RELEASE";
        case LOCKFSM_EV_QUEUE:
                return "QUEUE";
        case LOCKFSM_EV_UNQUEUE:
                return "UNQUEUE";
        case LOCKFSM_EV_BLOCK:
                return "BLOCK";
        case LOCKFSM_EV_UNBLOCK:
                return "UNBLOCK";
        case LOCKFSM_EV_PROCLAIM:
                return "PROCLAIM";
        case LOCKFSM_EV_EXTEND:
                return "EXTEND";
        default:
                return "UNKNOWN";
        }
}

/* Append `,"key":` and the bytes `p` as a JSON string at `*n`; false
 * when `buf` is full. */
static bool put_bytes(char *buf, size_t cap, size_t *n, const char *key,
                      const char *p, size_t len)
{
        size_t k = strlen(key);
        struct wcursor w;

        if (cap - *n < k + 4) {
                return false;
        }
        buf[(*n)++] = ',';
        buf[(*n)++] = '"';
        memcpy(buf + *n, key, k);
        *n += k;
        buf[(*n)++] = '"';
        buf[(*n)++] = ':';
        wcursor_init(&w, buf + *n, cap - *n);
        json_bytes(&w, p, len);
        *n += w.len;
        return !w.bad;
}

/* One line for `ev`, whose event is called `event`. */
static size_t format(char *buf, size_t cap, uint64_t term,
                     const struct lockfsm_event *ev, const char *event)
{
        struct timespec now;
        struct wcursor name;
        int head;
        size_t n;

        /* CLOCK_MONOTONIC is one clock for every process on the machine:
         * checkers place applies between client operations with it. */
        clock_gettime(CLOCK_MONOTONIC, &now);
        head = snprintf(
            buf, cap,
            "{\"index\":%" PRIu64 ",\"term\":%" PRIu64
            ",\"event\":\"%s\",\"cause\":\"%s\",\"session\":%" PRIu64
            ",\"seq\":%" PRIu64 ",\"owner\":%" PRIu64 ",\"token\":%" PRIu64
            ",\"status\":%d,\"mode\":%u"
            ",\"permits\":%" PRIu32 ",\"lock\":",
            ev->index, term, event, command_type_name(ev->cause), ev->session,
            ev->seq, ev->owner, ev->token, ev->status, ev->mode, ev->permits);

        if (head < 0 || (size_t)head >= cap) {
                return 0;
        }
        n = (size_t)head;
        /* Lock names are arbitrary bytes: kept exactly, for the checkers. */
        wcursor_init(&name, buf + n, cap - n);
        json_bytes(&name, ev->name, ev->name_len);
        if (name.bad) {
                return 0;
        }
        n += name.len;
        /* A REVOKE's END: who asked, from its certificate. An
         * election's GRANT, QUEUE or PROCLAIM: the value. */
        if ((ev->by_len > 0 &&
             !put_bytes(buf, cap, &n, "by", ev->by, ev->by_len)) ||
            (ev->mode == COMMAND_MODE_ELECTION &&
             (ev->type == LOCKFSM_EV_GRANT || ev->type == LOCKFSM_EV_QUEUE ||
              ev->type == LOCKFSM_EV_PROCLAIM) &&
             !put_bytes(buf, cap, &n, "value", ev->value, ev->value_len))) {
                return 0;
        }
        /* A grant's hold time, from its GRANT or EXTEND's entry: the
         * chaos checkers time its end against it. */
        if ((ev->type == LOCKFSM_EV_GRANT || ev->type == LOCKFSM_EV_EXTEND) &&
            ev->hold_ms > 0) {
                head = snprintf(buf + n, cap - n, ",\"hold_ms\":%" PRIu32,
                                ev->hold_ms);
                if (head < 0 || (size_t)head >= cap - n) {
                        return 0;
                }
                n += (size_t)head;
        }
        /* Last, so that lines of one entry compare equal across nodes up
         * to here. */
        head = snprintf(buf + n, cap - n, ",\"mono_ns\":%" PRId64 "}\n",
                        (int64_t)now.tv_sec * 1000000000 + now.tv_nsec);
        if (head < 0 || (size_t)head >= cap - n) {
                return 0;
        }
        return n + (size_t)head;
}

size_t applylog_format(char *buf, size_t cap, uint64_t term,
                       const struct lockfsm_event *ev)
{
        return format(buf, cap, term, ev, event_name(ev->type));
}

size_t applylog_format_entry(char *buf, size_t cap, uint64_t term,
                             uint64_t index, uint8_t kind)
{
        struct lockfsm_event ev;

        memset(&ev, 0, sizeof ev);
        ev.index = index;
        ev.cause = kind;
        return format(buf, cap, term, &ev, "ENTRY");
}

int applylog_open(struct applylog *a, const char *path)
{
        return linefile_open(&a->file, path);
}

int applylog_reopen(struct applylog *a, const char *path)
{
        return linefile_reopen(&a->file, path);
}

void applylog_close(struct applylog *a)
{
        linefile_close(&a->file);
}

/* A checker's aid must never stop the node: a line that fails is
 * dropped, one cut short is ended by the next. */
static void put_line(struct applylog *a, const char *line, size_t n)
{
        (void)linefile_put(&a->file, line, n);
}

void applylog_write(struct applylog *a, uint64_t term,
                    const struct lockfsm_event *ev)
{
        /* A 255-byte name and value, each byte escaped in 6. */
        char line[4096];

        if (linefile_on(&a->file)) {
                put_line(a, line, applylog_format(line, sizeof line, term, ev));
        }
}

void applylog_write_entry(struct applylog *a, uint64_t term, uint64_t index,
                          uint8_t kind)
{
        char line[256];

        if (linefile_on(&a->file)) {
                put_line(a, line,
                         applylog_format_entry(line, sizeof line, term, index,
                                               kind));
        }
}

size_t applylog_format_acl(char *buf, size_t cap, uint64_t term, uint64_t index,
                           const struct command *c, int status)
{
        static const char *const events[] = {
            "ACL_SET",     "ACL_REMOVE", "ACL_SEED",    "RULE_SET",
            "RULE_REMOVE", "QUOTA_SET",  "QUOTA_REMOVE"};
        struct lockfsm_event ev;

        if (c->mode > COMMAND_ACL_QUOTA_REMOVE) {
                return 0;
        }
        memset(&ev, 0, sizeof ev);
        ev.index = index;
        ev.cause = COMMAND_ACL;
        ev.status = status;
        ev.mode = c->role;
        ev.name = c->name;
        ev.name_len = c->name_len;
        ev.by = c->address;
        ev.by_len = c->address_len;
        return format(buf, cap, term, &ev, events[c->mode]);
}

void applylog_write_acl(struct applylog *a, uint64_t term, uint64_t index,
                        const struct command *c, int status)
{
        char line[4096];

        if (linefile_on(&a->file)) {
                put_line(a, line,
                         applylog_format_acl(line, sizeof line, term, index, c,
                                             status));
        }
}
