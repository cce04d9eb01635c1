/* Whether raft can write its data directory, episode by episode (see
 * diskfull.h). */
#include "diskfull.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* libraft 0.22.1's words (src/uv_prepare.c, src/uv_append.c,
 * src/uv_snapshot.c), each with what follows it. */
static const struct {
        const char *prefix;
        enum diskfull_line line;
        enum diskfull_kind kind;
} lines[] = {
    {"retry creating segment ", DISKFULL_LINE_FAILED, DISKFULL_SEGMENT},
    {"completed creation of ", DISKFULL_LINE_WORKED, DISKFULL_SEGMENT},
    {"retry failed write (", DISKFULL_LINE_FAILED, DISKFULL_ENTRIES},
    {"retry snapshot write", DISKFULL_LINE_FAILED, DISKFULL_SNAPSHOT},
};

enum diskfull_line diskfull_classify(const char *message,
                                     enum diskfull_kind *kind, char *what,
                                     size_t cap)
{
        size_t i, n, len;
        const char *rest;

        for (i = 0; i < sizeof lines / sizeof lines[0]; i++) {
                n = strlen(lines[i].prefix);
                if (strncmp(message, lines[i].prefix, n) != 0) {
                        continue;
                }
                rest = message + n;
                len = strlen(rest);
                /* "retry failed write (MESSAGE)": the message alone. */
                if (lines[i].kind == DISKFULL_ENTRIES && len > 0 &&
                    rest[len - 1] == ')') {
                        len--;
                }
                if (cap > 0) {
                        snprintf(what, cap, "%.*s", (int)len, rest);
                }
                *kind = lines[i].kind;
                return lines[i].line;
        }
        return DISKFULL_LINE_OTHER;
}

const char *diskfull_kind_name(enum diskfull_kind k)
{
        switch (k) {
        case DISKFULL_SEGMENT:
                return "segment";
        case DISKFULL_ENTRIES:
                return "entries";
        case DISKFULL_SNAPSHOT:
                return "snapshot";
        case DISKFULL_ROOM:
                return "room";
        }
        return "unknown";
}

void diskfull_init(struct diskfull *d, uint64_t quiet_ms)
{
        memset(d, 0, sizeof *d);
        d->quiet_ms = quiet_ms;
}

/* The episode ends once no kind fails. */
static enum diskfull_change maybe_end(struct diskfull *d, uint64_t now)
{
        int k;

        if (!d->on || d->no_room) {
                return DISKFULL_SAME;
        }
        for (k = 0; k < DISKFULL_N_KINDS; k++) {
                if (d->failing[k]) {
                        return DISKFULL_SAME;
                }
        }
        d->on = false;
        d->ended_ms = now;
        return DISKFULL_ENDED;
}

/* An episode begins with `k`, `what` (copied; may be NULL). */
static void begin(struct diskfull *d, enum diskfull_kind k, const char *what,
                  uint64_t now)
{
        d->on = true;
        d->since_ms = now;
        d->episodes++;
        d->episode_errors = 0;
        d->first_kind = k;
        snprintf(d->first_what, sizeof d->first_what, "%s",
                 what != NULL ? what : "");
}

enum diskfull_change diskfull_failed(struct diskfull *d, enum diskfull_kind k,
                                     const char *what, uint64_t now)
{
        bool began = !d->on;

        if (began) {
                begin(d, k, what, now);
        }
        d->errors[k]++;
        d->failing[k] = true;
        d->last_failed_ms[k] = now;
        d->episode_errors++;
        return began ? DISKFULL_BEGAN : DISKFULL_SAME;
}

enum diskfull_change diskfull_room(struct diskfull *d, bool lacking,
                                   uint64_t now)
{
        d->no_room = lacking;
        if (lacking && !d->on) {
                begin(d, DISKFULL_ROOM, NULL, now);
                return DISKFULL_BEGAN;
        }
        return maybe_end(d, now);
}

enum diskfull_change diskfull_worked(struct diskfull *d, enum diskfull_kind k,
                                     uint64_t now)
{
        d->failing[k] = false;
        return maybe_end(d, now);
}

enum diskfull_change diskfull_tick(struct diskfull *d, uint64_t now)
{
        int k;

        for (k = 0; k < DISKFULL_N_KINDS; k++) {
                if (d->failing[k] && now >= d->last_failed_ms[k] &&
                    now - d->last_failed_ms[k] > d->quiet_ms) {
                        d->failing[k] = false;
                }
        }
        return maybe_end(d, now);
}

uint64_t diskfull_errors(const struct diskfull *d)
{
        uint64_t n = 0;
        int k;

        for (k = 0; k < DISKFULL_N_KINDS; k++) {
                n += d->errors[k];
        }
        return n;
}

int diskfull_cause(const struct diskfull_space *s, uint64_t need)
{
        if (!s->known) {
                return 0;
        }
        if (s->read_only) {
                return EROFS;
        }
        if (s->free_bytes < need || s->free_inodes == 0) {
                return ENOSPC;
        }
        return 0;
}
