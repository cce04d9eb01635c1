/* The check of raft's files in a data directory before raft loads them. */
#include "diskscan.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../../include/baton/errors.h"

#define SEG_FORMAT   1 /* libraft's UV__DISK_FORMAT */
#define SEG_MAX_SIZE (8u * 1024 * 1024)
/* libraft's own bound on a batch's entry count (uvLoadEntriesBatch). */
#define SEG_MAX_ENTRIES (SEG_MAX_SIZE / 32)
#define META_SIZE       32
#define MAX_NAMES       4096

/* libraft's CRC32 (libiberty's: polynomial 0x04c11db7, most significant
 * bit first, no reflection), which zlib's crc32() is not. */
static uint32_t crc32_raft(uint32_t crc, const uint8_t *p, size_t n)
{
        size_t i;
        int b;

        for (i = 0; i < n; i++) {
                uint32_t c = (uint32_t)(((crc >> 24) ^ p[i]) & 0xff) << 24;

                for (b = 0; b < 8; b++) {
                        c = (c & 0x80000000u) ? (c << 1) ^ 0x04c11db7u : c << 1;
                }
                crc = (crc << 8) ^ c;
        }
        return crc;
}

static uint64_t get64(const uint8_t *p)
{
        uint64_t v = 0;
        int i;

        for (i = 7; i >= 0; i--) {
                v = (v << 8) | p[i];
        }
        return v;
}

static uint32_t get32(const uint8_t *p)
{
        return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
               (uint32_t)p[3] << 24;
}

static int damaged(struct diskscan *s, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(s->errmsg, sizeof s->errmsg, fmt, ap);
        va_end(ap);
        return BATON_ECORRUPT;
}

/* The whole file `name` of `dir` into *buf (malloc'ed), or -1 if absent. */
static int slurp(struct diskscan *s, const char *dir, const char *name,
                 uint8_t **buf, size_t *len)
{
        char path[PATH_MAX + 256];
        struct stat st;
        ssize_t got;
        size_t off = 0;
        int fd;

        *buf = NULL;
        *len = 0;
        snprintf(path, sizeof path, "%s/%s", dir, name);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0 && errno == ENOENT) {
                return -1;
        }
        if (fd < 0 || fstat(fd, &st) != 0) {
                snprintf(s->errmsg, sizeof s->errmsg, "%s: %s", path,
                         strerror(errno));
                if (fd >= 0) {
                        close(fd);
                }
                return BATON_EIO;
        }
        *buf = malloc((size_t)st.st_size + 1);
        if (*buf == NULL) {
                close(fd);
                return BATON_ENOMEM;
        }
        while (off < (size_t)st.st_size &&
               (got = read(fd, *buf + off, (size_t)st.st_size - off)) > 0) {
                off += (size_t)got;
        }
        close(fd);
        *len = off;
        return 0;
}

static bool zeros(const uint8_t *p, size_t n)
{
        size_t i;

        for (i = 0; i < n; i++) {
                if (p[i] != 0) {
                        return false;
                }
        }
        return true;
}

/* One batch at `off`: 0 with its end, entry count and last entry's term,
 * or why not (and whether it runs past the end of the file). */
struct batch {
        size_t end;
        uint64_t n;
        uint64_t last_term;
        const char *why;
        bool past_end;
};

static int batch_read(const uint8_t *p, size_t len, size_t off, struct batch *b)
{
        size_t hlen, dlen = 0, i;

        b->past_end = false;
        if (len - off < 16) {
                b->past_end = true;
                b->why = "the file ends inside a batch's preamble";
                return -1;
        }
        b->n = get64(p + off + 8);
        if (b->n == 0 || b->n > SEG_MAX_ENTRIES) {
                b->why =
                    b->n == 0 ? "entry count zero" : "entry count too high";
                return -1;
        }
        hlen = 8 + 16 * (size_t)b->n;
        if (len - off - 8 < hlen) {
                b->past_end = true;
                b->why = "the file ends inside a batch's header";
                return -1;
        }
        if (crc32_raft(0, p + off + 8, hlen) != get32(p + off)) {
                b->why = "header checksum mismatch";
                return -1;
        }
        for (i = 0; i < b->n; i++) {
                dlen += get32(p + off + 16 + 16 * i + 12);
        }
        b->last_term = get64(p + off + 16 + 16 * (b->n - 1));
        if (len - off - 8 - hlen < dlen) {
                b->past_end = true;
                b->why = "the file ends inside a batch's entries";
                return -1;
        }
        if (crc32_raft(0, p + off + 8 + hlen, dlen) != get32(p + off + 4)) {
                b->why = "data checksum mismatch";
                return -1;
        }
        b->end = off + 8 + hlen + dlen;
        return 0;
}

/* The first offset after `off` (8-aligned) where a whole valid batch
 * starts, or 0. */
static size_t valid_after(const uint8_t *p, size_t len, size_t off)
{
        struct batch b;
        size_t at;

        for (at = off + 8; at + 24 <= len; at += 8) {
                if (get64(p + at + 8) != 0 && batch_read(p, len, at, &b) == 0) {
                        return at;
                }
        }
        return 0;
}

/* What the segments say of the log's end, for the metadata's check. */
struct logend {
        uint64_t closed_end;   /* the highest closed segment's last index */
        uint64_t closed_term;  /* ... and its last entry's term */
        unsigned long open_no; /* the highest open segment with entries */
        uint64_t open_term;    /* ... and its last entry's term */
};

static int closed_segment(struct diskscan *s, const char *name,
                          const uint8_t *p, size_t len, struct logend *e)
{
        unsigned long long first, last;
        uint64_t n = 0, term = 0;
        struct batch b;
        size_t off = 8;

        if (sscanf(name, "%16llu-%16llu", &first, &last) != 2) {
                return 0;
        }
        if (len < 8 || get64(p) != SEG_FORMAT) {
                return damaged(s, "%s at byte 0: %s", name,
                               len < 8 ? "shorter than its format word"
                                       : "not segment format 1");
        }
        while (off < len) {
                if (batch_read(p, len, off, &b) != 0) {
                        return damaged(s, "%s at byte %zu: %s", name, off,
                                       b.why);
                }
                n += b.n;
                term = b.last_term;
                off = b.end;
        }
        if (n != last - first + 1) {
                return damaged(s,
                               "%s at byte %zu: %" PRIu64 " entries, its "
                               "name says %llu (truncated)",
                               name, len, n, last - first + 1);
        }
        if (last > e->closed_end) {
                e->closed_end = last;
                e->closed_term = term;
        }
        return 0;
}

static int open_segment(struct diskscan *s, const char *name, const uint8_t *p,
                        size_t len, struct logend *e)
{
        unsigned long no;
        uint64_t term = 0;
        struct batch b;
        size_t off = 8, next;

        if (sscanf(name, "open-%lu", &no) != 1 || zeros(p, len)) {
                return 0;
        }
        if (len < 8 || get64(p) != SEG_FORMAT) {
                return damaged(s, "%s at byte 0: not segment format 1", name);
        }
        while (off < len && !zeros(p + off, len - off)) {
                if (batch_read(p, len, off, &b) == 0) {
                        term = b.last_term;
                        off = b.end;
                        continue;
                }
                if (b.past_end && len < SEG_MAX_SIZE) {
                        return damaged(s,
                                       "%s at byte %zu: %s, %zu bytes "
                                       "long (truncated)",
                                       name, off, b.why, len);
                }
                next = valid_after(p, len, off);
#ifndef BATON_CHAOS_TRUST_CORRUPT
                if (next != 0) {
                        return damaged(s,
                                       "%s at byte %zu: %s, and a valid "
                                       "batch follows at byte %zu: raft "
                                       "would drop the entries from there",
                                       name, off, b.why, next);
                }
#else
                (void)next; /* the control trusts the batches after it */
#endif
                snprintf(s->note, sizeof s->note,
                         "%s at byte %zu: %s in its last batch, as a crash "
                         "in the middle of a write leaves it: raft drops "
                         "that batch",
                         name, off, b.why);
                break;
        }
        if (term != 0 && no >= e->open_no) {
                e->open_no = no;
                e->open_term = term;
        }
        return 0;
}

/* snapshot-T-I-M.meta: format, its CRC32 (in a 64-bit word) over the
 * configuration's index and length and the configuration. */
static int snapshot_meta(struct diskscan *s, const char *dir, const char *name,
                         const uint8_t *p, size_t len, uint64_t *term)
{
        unsigned long long t, i, m;
        char data[NAME_MAX + 1];
        struct stat st;
        char path[PATH_MAX + 256];
        uint32_t crc;

        if (sscanf(name, "snapshot-%llu-%llu-%llu.meta", &t, &i, &m) != 3) {
                return 0;
        }
        if (len < META_SIZE || get64(p) != SEG_FORMAT ||
            get64(p + 24) != len - META_SIZE) {
                return damaged(s, "%s at byte 0: %s", name,
                               len < META_SIZE ? "shorter than its header"
                                               : "its header does not read "
                                                 "(format or length)");
        }
        crc = crc32_raft(0, p + 16, 16);
        crc = crc32_raft(crc, p + META_SIZE, len - META_SIZE);
        if (crc != (uint32_t)get64(p + 8)) {
                return damaged(s,
                               "%s at byte 8: checksum mismatch (raft "
                               "would skip this snapshot)",
                               name);
        }
        snprintf(data, sizeof data, "%.*s", (int)(strlen(name) - 5), name);
        snprintf(path, sizeof path, "%s/%s", dir, data);
        /* libraft makes the .meta before it renames the snapshot's file
         * into place, and skips a .meta without it: a crash in between. */
        if (stat(path, &st) != 0) {
                return 0;
        }
        if (st.st_size == 0) {
                return damaged(s, "%s at byte 0: empty", data);
        }
        if (t > *term) {
                *term = t;
        }
        return 0;
}

struct meta {
        bool present;   /* 32 bytes */
        long long size; /* -1: absent */
        uint64_t format, version, term, vote;
};

static int meta_read(struct diskscan *s, const char *dir, int k, struct meta *m)
{
        char name[16];
        uint8_t *p;
        size_t len;
        int rv;

        snprintf(name, sizeof name, "metadata%d", k);
        memset(m, 0, sizeof *m);
        rv = slurp(s, dir, name, &p, &len);
        if (rv == -1) {
                m->size = -1;
                return 0;
        }
        if (rv != 0) {
                return rv;
        }
        m->size = (long long)len;
        if (len == META_SIZE) {
                m->present = true;
                m->format = get64(p);
                m->version = get64(p + 8);
                m->term = get64(p + 16);
                m->vote = get64(p + 24);
        }
        free(p);
        return 0;
}

/* A short or missing metadataK is a crash while it was first made, unless
 * the other file's version shows it had been written whole before. */
static int meta_whole(struct diskscan *s, const struct meta *m, int k,
                      const struct meta *other)
{
        if (m->present || !other->present ||
            other->version < (uint64_t)(k == 1 ? 2 : 3)) {
                return 0;
        }
        if (m->size < 0) {
                return damaged(s,
                               "metadata%d at byte 0: missing, and "
                               "metadata%d is at version %" PRIu64 ": raft "
                               "would take the older term and vote",
                               k, 3 - k, other->version);
        }
        return damaged(s,
                       "metadata%d at byte %lld: %lld bytes, not %d, and "
                       "metadata%d is at version %" PRIu64 ": raft would "
                       "delete it and forget this node's vote",
                       k, m->size, m->size, META_SIZE, 3 - k, other->version);
}

static int meta_check(struct diskscan *s, const struct meta m[2],
                      uint64_t log_term, const char *log_what)
{
        const struct meta *cur;
        int k, rv;

        for (k = 1; k <= 2; k++) {
                const struct meta *x = &m[k - 1];

                rv = meta_whole(s, x, k, &m[2 - k]);
                if (rv != 0) {
                        return rv;
                }
                if (x->size > META_SIZE ||
                    (x->present &&
                     (x->format != SEG_FORMAT || x->version == 0 ||
                      x->version % 2 != (uint64_t)(k % 2)))) {
                        return damaged(s, "metadata%d at byte 0: %s", k,
                                       x->size > META_SIZE
                                           ? "longer than 32 bytes"
                                           : "its format or version does "
                                             "not read");
                }
        }
        if (m[0].present && m[1].present && m[0].version + 1 != m[1].version &&
            m[1].version + 1 != m[0].version) {
                return damaged(s,
                               "metadata1 at byte 8: versions %" PRIu64
                               " and %" PRIu64 " (metadata2) are not "
                               "consecutive: one file was rolled back or "
                               "damaged",
                               m[0].version, m[1].version);
        }
        cur = m[0].version > m[1].version ? &m[0] : &m[1];
        if (cur->present && cur->term < log_term) {
                return damaged(s,
                               "metadata%d at byte 16: term %" PRIu64
                               ", below term %" PRIu64 " of %s: the "
                               "metadata lost writes (rolled back or "
                               "damaged)",
                               cur == &m[0] ? 1 : 2, cur->term, log_term,
                               log_what);
        }
        return 0;
}

static int by_name(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The raft files of `dir`, sorted (closed segments by index). */
static int list_files(struct diskscan *s, const char *dir, char ***names,
                      unsigned *n)
{
        struct dirent *de;
        DIR *d = opendir(dir);

        *n = 0;
        *names = calloc(MAX_NAMES, sizeof **names);
        if (d == NULL || *names == NULL) {
                snprintf(s->errmsg, sizeof s->errmsg, "%s: %s", dir,
                         d == NULL ? strerror(errno) : "out of memory");
                if (d != NULL) {
                        closedir(d);
                }
                return d == NULL ? BATON_EIO : BATON_ENOMEM;
        }
        while ((de = readdir(d)) != NULL && *n < MAX_NAMES) {
                if (strncmp(de->d_name, "open-", 5) == 0 ||
                    (de->d_name[0] >= '0' && de->d_name[0] <= '9') ||
                    strncmp(de->d_name, "snapshot-", 9) == 0) {
                        (*names)[(*n)++] = strdup(de->d_name);
                }
        }
        closedir(d);
        qsort(*names, *n, sizeof **names, by_name);
        return 0;
}

static int scan_file(struct diskscan *s, const char *dir, const char *name,
                     struct logend *e, uint64_t *snap_term)
{
        size_t nl = strlen(name);
        uint8_t *p;
        size_t len;
        int rv;

        if (strncmp(name, "snapshot-", 9) == 0 &&
            (nl < 5 || strcmp(name + nl - 5, ".meta") != 0)) {
                return 0; /* a snapshot's bytes: the restore checks them */
        }
        rv = slurp(s, dir, name, &p, &len);
        if (rv != 0) {
                return rv == -1 ? 0 : rv;
        }
        if (name[0] == 'o') {
                s->n_segments++;
                rv = open_segment(s, name, p, len, e);
        } else if (name[0] == 's') {
                s->n_snapshots++;
                rv = snapshot_meta(s, dir, name, p, len, snap_term);
        } else {
                s->n_segments++;
                rv = closed_segment(s, name, p, len, e);
        }
        free(p);
        return rv;
}

int diskscan_check(struct diskscan *s, const char *dir)
{
        struct logend e = {0};
        uint64_t snap_term = 0, log_term;
        struct meta m[2];
        char **names;
        unsigned n, i;
        const char *what;
        int rv;

        s->n_segments = s->n_snapshots = 0;
        s->note[0] = s->errmsg[0] = '\0';
        rv = list_files(s, dir, &names, &n);
        for (i = 0; rv == 0 && i < n; i++) {
                rv = names[i] == NULL
                         ? BATON_ENOMEM
                         : scan_file(s, dir, names[i], &e, &snap_term);
        }
        for (i = 0; i < n; i++) {
                free(names[i]);
        }
        free(names);
        if (rv == 0) {
                rv = meta_read(s, dir, 1, &m[0]);
        }
        if (rv == 0) {
                rv = meta_read(s, dir, 2, &m[1]);
        }
        if (rv != 0) {
                return rv;
        }
        log_term = e.open_no != 0 ? e.open_term : e.closed_term;
        what = e.open_no != 0 ? "the last entry of its open segments"
                              : "its last closed segment's last entry";
        if (snap_term > log_term) {
                log_term = snap_term;
                what = "its newest snapshot";
        }
        return meta_check(s, m, log_term, what);
}
