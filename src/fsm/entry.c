/* The Raft log entry that carries lock commands: one or more commands the
 * leader proposes together, applied in order under the entry's index. */
#include "entry.h"

#include <string.h>

#include "../../include/baton/errors.h"
#include "../lib/cursor.h"

static void put_u16(uint8_t *p, uint16_t v)
{
        p[0] = (uint8_t)v;
        p[1] = (uint8_t)(v >> 8);
}

static uint16_t get_u16(const uint8_t *p)
{
        return (uint16_t)(p[0] | p[1] << 8);
}

void entry_writer_init(struct entry_writer *w, void *buf, size_t cap,
                       uint64_t term)
{
        struct wcursor c;

        w->buf = buf;
        w->cap = cap;
        w->len = ENTRY_HEADER_SIZE;
        w->count = 0;
        wcursor_init(&c, buf, cap);
        wcursor_u8(&c, ENTRY_VERSION);
        wcursor_u8(&c, COMMAND_BATCH);
        wcursor_u16(&c, 0);
        wcursor_u32(&c, 0); /* the count, written by finish */
        wcursor_u64(&c, term);
}

/* Room for a record of `len` bytes, and still for the final padding. */
bool entry_writer_fits(const struct entry_writer *w, size_t len)
{
        size_t end = w->len + 2 + len;

        return w->count < ENTRY_MAX_COMMANDS && end >= w->len &&
               (end + 7) / 8 * 8 <= w->cap;
}

bool entry_writer_add(struct entry_writer *w, const void *cmd, size_t len)
{
        if (len == 0 || len > COMMAND_ANY_MAX_SIZE || len % 8 != 0 ||
            !entry_writer_fits(w, len)) {
                return false;
        }
        put_u16(w->buf + w->len, (uint16_t)len);
        memcpy(w->buf + w->len + 2, cmd, len);
        w->len += 2 + len;
        w->count++;
        return true;
}

size_t entry_writer_finish(struct entry_writer *w)
{
        struct wcursor c;

        while (w->len % 8 != 0) {
                w->buf[w->len++] = 0;
        }
        wcursor_init(&c, w->buf + 4, 4);
        wcursor_u32(&c, w->count);
        return w->len;
}

bool entry_is_batch(const void *buf, size_t len)
{
        const uint8_t *p = buf;

        return len >= 2 && p[0] >= COMMAND_VERSION_MIN &&
               p[0] <= COMMAND_VERSION && p[1] == COMMAND_BATCH;
}

unsigned entry_max_version(const void *buf, size_t len)
{
        const uint8_t *p = buf;
        unsigned max = len > 0 ? p[0] : 0;
        struct entry_reader r;
        const uint8_t *cmd;
        size_t n;

        if (entry_is_batch(buf, len) && entry_reader_init(&r, buf, len) == 0) {
                while (entry_reader_next(&r, &cmd, &n)) {
                        if (n > 0 && cmd[0] > max) {
                                max = cmd[0];
                        }
                }
        }
        return max;
}

uint64_t entry_term(const void *buf, size_t len)
{
        struct rcursor c;

        if (!entry_is_batch(buf, len) || len < ENTRY_HEADER_SIZE) {
                return 0;
        }
        rcursor_init(&c, (const uint8_t *)buf + 8, 8);
        return rcursor_u64(&c);
}

int entry_reader_init(struct entry_reader *r, const void *buf, size_t len)
{
        struct rcursor c;
        const uint8_t *p;
        size_t left;
        uint32_t i;
        uint8_t version;

        memset(r, 0, sizeof *r);
        rcursor_init(&c, buf, len);
        version = rcursor_u8(&c);
        if (version < COMMAND_VERSION_MIN || version > COMMAND_VERSION) {
                return c.bad ? BATON_EMALFORMED : BATON_EVERSION;
        }
        if (rcursor_u8(&c) != COMMAND_BATCH || rcursor_u16(&c) != 0) {
                return BATON_EMALFORMED;
        }
        r->count = rcursor_u32(&c);
        r->term = rcursor_u64(&c);
        if (c.bad || r->count > ENTRY_MAX_COMMANDS || len % 8 != 0) {
                return BATON_EMALFORMED;
        }
        /* Every record must fit, and after the last only zero padding,
         * shorter than 8 bytes, may follow. */
        p = c.p;
        left = c.left;
        for (i = 0; i < r->count; i++) {
                size_t n;
                if (left < 2) {
                        return BATON_EMALFORMED;
                }
                n = get_u16(p);
                if (n == 0 || n > COMMAND_ANY_MAX_SIZE || n % 8 != 0 ||
                    n > left - 2) {
                        return BATON_EMALFORMED;
                }
                p += 2 + n;
                left -= 2 + n;
        }
        if (left >= 8) {
                return BATON_EMALFORMED;
        }
        for (i = 0; i < left; i++) {
                if (p[i] != 0) {
                        return BATON_EMALFORMED;
                }
        }
        r->p = c.p;
        r->left = c.left - left;
        return 0;
}

bool entry_reader_next(struct entry_reader *r, const uint8_t **cmd, size_t *len)
{
        size_t n;

        if (r->next == r->count) {
                return false;
        }
        n = get_u16(r->p);
        *cmd = r->p + 2;
        *len = n;
        r->p += 2 + n;
        r->left -= 2 + n;
        r->next++;
        return true;
}
