/* Small helpers shared by chaos-check's parsers. */
#include "util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void out_of_memory(size_t size)
{
        fprintf(stderr, "chaos-check: out of memory (%zu bytes)\n", size);
        abort();
}

void *util_malloc(size_t size)
{
        void *p = malloc(size == 0 ? 1 : size);

        if (p == NULL) {
                out_of_memory(size);
        }
        return p;
}

void *util_calloc(size_t n, size_t size)
{
        void *p = calloc(n == 0 ? 1 : n, size == 0 ? 1 : size);

        if (p == NULL) {
                out_of_memory(n * size);
        }
        return p;
}

void *util_realloc(void *p, size_t size)
{
        void *q = realloc(p, size == 0 ? 1 : size);

        if (q == NULL) {
                out_of_memory(size);
        }
        return q;
}

char *util_strndup(const char *s, size_t n)
{
        char *p = util_malloc(n + 1);

        memcpy(p, s, n);
        p[n] = '\0';
        return p;
}

void util_reserve(void **p, size_t *cap, size_t need, size_t size)
{
        size_t c = *cap;

        if (need <= c) {
                return;
        }
        if (c < 16) {
                c = 16;
        }
        while (c < need) {
                c *= 2;
        }
        *p = util_realloc(*p, c * size);
        *cap = c;
}

void *util_push(void **p, size_t *n, size_t *cap, const void *elem, size_t size)
{
        char *slot;

        util_reserve(p, cap, *n + 1, size);
        slot = (char *)*p + *n * size;
        memcpy(slot, elem, size);
        (*n)++;
        return slot;
}

int util_read_file(const char *path, char **buf, size_t *len)
{
        FILE *f = fopen(path, "rb");
        char *b = NULL;
        size_t n = 0, cap = 0, got;
        int err;

        if (f == NULL) {
                return -1;
        }
        for (;;) {
                util_reserve((void **)&b, &cap, n + 65536 + 1, 1);
                got = fread(b + n, 1, cap - n - 1, f);
                n += got;
                if (got == 0) {
                        break;
                }
        }
        if (ferror(f)) {
                err = errno;
                fclose(f);
                free(b);
                errno = err;
                return -1;
        }
        fclose(f);
        b[n] = '\0';
        *buf = b;
        *len = n;
        return 0;
}

char *util_next_line(char *buf, size_t len, size_t *pos, bool *complete)
{
        char *start, *nl;

        if (*pos >= len) {
                return NULL;
        }
        start = buf + *pos;
        nl = memchr(start, '\n', len - *pos);
        if (nl == NULL) {
                *complete = false;
                *pos = len;
                return start; /* buf[len] is the NUL */
        }
        *nl = '\0';
        *complete = true;
        *pos = (size_t)(nl - buf) + 1;
        if (nl > start && nl[-1] == '\r') {
                nl[-1] = '\0';
        }
        return start;
}

int util_load_log(const char *path, size_t size,
                  bool (*parse)(char *line, unsigned lineno, void *rec,
                                void *arg),
                  void *arg, void **lines, size_t *n, size_t *cap,
                  struct util_log *log, char *errmsg, size_t errcap)
{
        size_t len, pos = 0;
        unsigned lineno = 0;
        char *buf, *s, *rec;
        bool complete;

        memset(log, 0, sizeof *log);
        if (util_read_file(path, &buf, &len) != 0) {
                if (errno == ENOENT) {
                        return 0;
                }
                snprintf(errmsg, errcap, "%s: %s", path, strerror(errno));
                return -1;
        }
        log->present = true;
        while ((s = util_next_line(buf, len, &pos, &complete)) != NULL) {
                lineno++;
                if (!complete) {
                        log->n_torn += s[0] != '\0';
                        break;
                }
                if (s[0] == '\0') {
                        continue;
                }
                util_reserve(lines, cap, *n + 1, size);
                rec = (char *)*lines + *n * size;
                memset(rec, 0, size);
                if (parse(s, lineno, rec, arg)) {
                        (*n)++;
                } else {
                        log->n_bad++;
                }
        }
        free(buf);
        return 0;
}

size_t util_split_kv(char *line, struct util_kv *kv, size_t cap)
{
        size_t n = 0;
        char *p = line;

        while (*p != '\0' && n < cap) {
                char *end, *eq;

                while (*p == ' ' || *p == '\t') {
                        p++;
                }
                if (*p == '\0') {
                        break;
                }
                end = p;
                while (*end != '\0' && *end != ' ' && *end != '\t') {
                        end++;
                }
                eq = memchr(p, '=', (size_t)(end - p));
                if (*end != '\0') {
                        *end++ = '\0';
                }
                if (eq != NULL && eq != p) {
                        *eq = '\0';
                        kv[n].key = p;
                        kv[n].value = eq + 1;
                        n++;
                }
                p = end;
        }
        return n;
}

const char *util_kv_get(const struct util_kv *kv, size_t n, const char *key)
{
        size_t i;

        for (i = 0; i < n; i++) {
                if (strcmp(kv[i].key, key) == 0) {
                        return kv[i].value;
                }
        }
        return NULL;
}

bool util_parse_u64(const char *s, uint64_t *out)
{
        uint64_t v = 0;

        if (s == NULL || *s == '\0') {
                return false;
        }
        for (; *s != '\0'; s++) {
                unsigned d;

                if (*s < '0' || *s > '9') {
                        return false;
                }
                d = (unsigned)(*s - '0');
                if (v > (UINT64_MAX - d) / 10) {
                        return false;
                }
                v = v * 10 + d;
        }
        *out = v;
        return true;
}

bool util_parse_i64(const char *s, int64_t *out)
{
        bool neg = false;
        uint64_t v;

        if (s != NULL && *s == '-') {
                neg = true;
                s++;
        }
        if (!util_parse_u64(s, &v) || v > (uint64_t)INT64_MAX) {
                return false;
        }
        *out = neg ? -(int64_t)v : (int64_t)v;
        return true;
}

/* FNV-1a: lock names are short and this table is not exposed to attackers. */
static uint64_t hash(const char *s, size_t len)
{
        uint64_t h = UINT64_C(14695981039346656037);
        size_t i;

        for (i = 0; i < len; i++) {
                h ^= (unsigned char)s[i];
                h *= UINT64_C(1099511628211);
        }
        return h;
}

void util_strtab_init(struct util_strtab *t)
{
        memset(t, 0, sizeof *t);
}

void util_strtab_close(struct util_strtab *t)
{
        size_t i;

        for (i = 0; i < t->n; i++) {
                free(t->names[i]);
        }
        free(t->names);
        free(t->slots);
        memset(t, 0, sizeof *t);
}

/* The slot holding `s`, or the empty slot where it would go. */
static size_t probe(const struct util_strtab *t, const char *s, size_t len)
{
        size_t mask = t->n_slots - 1;
        size_t i = (size_t)hash(s, len) & mask;

        while (t->slots[i] != 0) {
                const char *name = t->names[t->slots[i] - 1];
                if (strncmp(name, s, len) == 0 && name[len] == '\0') {
                        break;
                }
                i = (i + 1) & mask;
        }
        return i;
}

static void rehash(struct util_strtab *t)
{
        size_t n_slots = t->n_slots == 0 ? 64 : t->n_slots * 2;
        size_t id;

        free(t->slots);
        t->slots = util_calloc(n_slots, sizeof *t->slots);
        t->n_slots = n_slots;
        for (id = 0; id < t->n; id++) {
                const char *name = t->names[id];
                t->slots[probe(t, name, strlen(name))] = (int)id + 1;
        }
}

int util_strtab_intern(struct util_strtab *t, const char *s, size_t len)
{
        size_t slot;
        char *copy;

        /* Keep the load factor at most one half. */
        if ((t->n + 1) * 2 > t->n_slots) {
                rehash(t);
        }
        slot = probe(t, s, len);
        if (t->slots[slot] != 0) {
                return t->slots[slot] - 1;
        }
        copy = util_strndup(s, len);
        util_push((void **)&t->names, &t->n, &t->cap, &copy, sizeof copy);
        t->slots[slot] = (int)t->n;
        return (int)t->n - 1;
}

int util_strtab_find(const struct util_strtab *t, const char *s)
{
        size_t slot;

        if (t->n_slots == 0) {
                return -1;
        }
        slot = probe(t, s, strlen(s));
        return t->slots[slot] == 0 ? -1 : t->slots[slot] - 1;
}

void util_sort(void *base, size_t n, size_t size,
               int (*cmp)(const void *, const void *))
{
        if (n > 1) {
                qsort(base, n, size, cmp);
        }
}

void *util_bsearch(const void *key, const void *base, size_t n, size_t size,
                   int (*cmp)(const void *, const void *))
{
        return n > 0 ? bsearch(key, base, n, size, cmp) : NULL;
}

char *util_fmt_secs(char *buf, size_t cap, int64_t ns)
{
        uint64_t a = ns < 0 ? (uint64_t) - (ns + 1) + 1 : (uint64_t)ns;

        snprintf(buf, cap, "%s%" PRIu64 ".%03u s", ns < 0 ? "-" : "",
                 a / 1000000000, (unsigned)(a % 1000000000 / 1000000));
        return buf;
}
