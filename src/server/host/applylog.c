/* The apply log: one JSON line per state machine event, for checkers. */
#include "applylog.h"

#include <fcntl.h>
#include <stdbool.h>
#include <inttypes.h>
#include <stdio.h>
#include <sys/uio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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

/* Open `path` to append, and whether its last line was cut: -1 (errno
 * set) when it cannot be opened. */
static int open_log(const char *path, bool *torn)
{
        int fd = open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
        off_t end;
        char last;

        *torn = false;
        if (fd < 0) {
                return -1;
        }
        end = lseek(fd, 0, SEEK_END);
        if (end > 0 && pread(fd, &last, 1, end - 1) == 1) {
                *torn = last != '\n';
        }
        return fd;
}

int applylog_open(struct applylog *a, const char *path)
{
        a->fd = -1;
        a->torn = false;
        if (path == NULL || path[0] == '\0') {
                return 0;
        }
        a->fd = open_log(path, &a->torn);
        return a->fd < 0 ? BATON_EIO : 0;
}

int applylog_reopen(struct applylog *a, const char *path)
{
        bool torn;
        int fd;

        if (a->fd < 0) {
                return 0;
        }
        /* The new file first: a path that cannot be opened leaves the
         * lines going where they went. */
        fd = open_log(path, &torn);
        if (fd < 0) {
                return BATON_EIO;
        }
        close(a->fd);
        a->fd = fd;
        a->torn = torn;
        return 0;
}

void applylog_close(struct applylog *a)
{
        if (a->fd >= 0) {
                close(a->fd);
                a->fd = -1;
        }
}

static void put_line(struct applylog *a, const char *line, size_t n)
{
        struct iovec iov[2] = {{(void *)"\n", 1}, {(void *)line, n}};
        int first = a->torn ? 0 : 1;
        size_t want = n + (a->torn ? 1 : 0);
        ssize_t rv;

        if (n == 0) {
                return;
        }
        /* One writev(2), so the newline that ends a cut line and the line
         * after it go out together. A checker's aid must never stop the
         * node: a line that fails is dropped, one cut short is ended by
         * the next. */
        rv = writev(a->fd, &iov[first], 2 - first);
        if (rv < 0) {
                return;
        }
        a->torn = (size_t)rv < want;
}

void applylog_write(struct applylog *a, uint64_t term,
                    const struct lockfsm_event *ev)
{
        /* A 255-byte name and value, each byte escaped in 6. */
        char line[4096];

        if (a->fd >= 0) {
                put_line(a, line, applylog_format(line, sizeof line, term, ev));
        }
}

void applylog_write_entry(struct applylog *a, uint64_t term, uint64_t index,
                          uint8_t kind)
{
        char line[256];

        if (a->fd >= 0) {
                put_line(a, line,
                         applylog_format_entry(line, sizeof line, term, index,
                                               kind));
        }
}

size_t applylog_format_acl(char *buf, size_t cap, uint64_t term, uint64_t index,
                           const struct command *c, int status)
{
        static const char *const events[] = {"ACL_SET", "ACL_REMOVE",
                                             "ACL_SEED"};
        struct lockfsm_event ev;

        if (c->mode > COMMAND_ACL_SEED) {
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

        if (a->fd >= 0) {
                put_line(a, line,
                         applylog_format_acl(line, sizeof line, term, index, c,
                                             status));
        }
}
