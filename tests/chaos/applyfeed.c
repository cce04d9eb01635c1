/* The fenced register's view of the nodes' apply logs: the ends of
 * semaphore grants and of sessions. */
#include "applyfeed.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LINE_CAP  4096    /* an apply log line (a lock name: 255 bytes) */
#define CHUNK     65536   /* bytes read at once */
#define N_BUCKETS 8192    /* hash buckets (a power of two) */
#define MAX_ENDS  2000000 /* ends remembered; past it, no more fencing */
#define MODE_SEM  2       /* "mode" of a semaphore's grant */
#define KEY_MAX   255     /* bytes of a lock name */

/* The end of one grant of a semaphore, or (lock "") of one session. */
struct end {
        struct end *next; /* bucket chain */
        uint64_t token;   /* 0 for a session's END */
        uint64_t session;
        uint64_t index; /* where it ended */
        char lock[];
};

/* One node's apply log and the unfinished line read from it. */
struct feedlog {
        char *path;
        int fd;          /* -1 until the file exists */
        bool discarding; /* skipping the rest of an over-long line */
        size_t len;
        char line[LINE_CAP];
};

struct applyfeed {
        struct feedlog logs[APPLYFEED_MAX_LOGS];
        size_t n_logs;
        size_t n_ends;
        struct end *buckets[N_BUCKETS];
        char chunk[CHUNK];
};

/* FNV-1a over the lock name, token and session. */
static size_t bucket_of(const char *lock, uint64_t token, uint64_t session)
{
        uint64_t h = UINT64_C(14695981039346656037);
        uint64_t v[2] = {token, session};
        const unsigned char *p = (const unsigned char *)v;
        size_t i;

        for (; *lock != '\0'; lock++) {
                h = (h ^ (unsigned char)*lock) * UINT64_C(1099511628211);
        }
        for (i = 0; i < sizeof v; i++) {
                h = (h ^ p[i]) * UINT64_C(1099511628211);
        }
        return (size_t)(h & (N_BUCKETS - 1));
}

static const struct end *find(const struct applyfeed *f, const char *lock,
                              uint64_t token, uint64_t session)
{
        const struct end *e;

        for (e = f->buckets[bucket_of(lock, token, session)]; e != NULL;
             e = e->next) {
                if (e->token == token && e->session == session &&
                    strcmp(e->lock, lock) == 0) {
                        return e;
                }
        }
        return NULL;
}

/* Remember an end, the first time it is seen (a restarted node applies
 * its entries again). */
static void remember(struct applyfeed *f, const char *lock, size_t len,
                     uint64_t token, uint64_t session, uint64_t index)
{
        struct end *e;
        size_t b;

        if (f->n_ends >= MAX_ENDS) {
                return;
        }
        e = malloc(sizeof *e + len + 1);
        if (e == NULL) {
                return; /* a grant not known to have ended: no fence */
        }
        memcpy(e->lock, lock, len);
        e->lock[len] = '\0';
        if (find(f, e->lock, token, session) != NULL) {
                free(e);
                return;
        }
        e->token = token;
        e->session = session;
        e->index = index;
        b = bucket_of(e->lock, token, session);
        e->next = f->buckets[b];
        f->buckets[b] = e;
        f->n_ends++;
}

/* The number after `"name":` in `s`: true, or false when there is none. */
static bool number(const char *s, const char *name, uint64_t *out)
{
        char pat[40];
        const char *p;
        char *end;

        snprintf(pat, sizeof pat, "\"%s\":", name);
        p = strstr(s, pat);
        if (p == NULL) {
                return false;
        }
        p += strlen(pat);
        if (*p < '0' || *p > '9') {
                return false;
        }
        errno = 0;
        *out = strtoull(p, &end, 10);
        return errno == 0 && end != p;
}

/*
 * One line of an apply log (src/server/host/applylog.c): a RELEASE of a
 * semaphore's grant or a session's END. Its numbers all come before
 * "lock", whose value is the only string that may hold anything: the line
 * is cut there so that a lock name never passes for a field. A lock name
 * the log escaped is skipped.
 */
static void on_line(struct applyfeed *f, char *s)
{
        static const char lock_key[] = ",\"lock\":\"";
        char *lock = strstr(s, lock_key), *q;
        uint64_t index, token, session, mode;
        bool release;

        if (lock == NULL) {
                return;
        }
        *lock = '\0';
        lock += strlen(lock_key);
        release = strstr(s, "\"event\":\"RELEASE\"") != NULL;
        if ((!release && strstr(s, "\"event\":\"END\"") == NULL) ||
            !number(s, "index", &index) || !number(s, "session", &session)) {
                return;
        }
        if (!release) {
                remember(f, "", 0, 0, session, index);
                return;
        }
        if (!number(s, "token", &token) || !number(s, "mode", &mode) ||
            mode != MODE_SEM) {
                return;
        }
        q = strchr(lock, '"');
        if (q == NULL || memchr(lock, '\\', (size_t)(q - lock)) != NULL ||
            q == lock || q - lock > KEY_MAX) {
                return;
        }
        remember(f, lock, (size_t)(q - lock), token, session, index);
}

/* Take the complete lines of `n` bytes read from `lg`; keep the rest. */
static void take(struct applyfeed *f, struct feedlog *lg, const char *buf,
                 size_t n)
{
        while (n > 0) {
                const char *nl = memchr(buf, '\n', n);
                size_t part = nl != NULL ? (size_t)(nl - buf) : n;

                if (!lg->discarding && lg->len + part < LINE_CAP) {
                        memcpy(lg->line + lg->len, buf, part);
                        lg->len += part;
                } else {
                        lg->discarding = true; /* not one of ours: skip */
                        lg->len = 0;
                }
                if (nl == NULL) {
                        return;
                }
                if (!lg->discarding) {
                        lg->line[lg->len] = '\0';
                        on_line(f, lg->line);
                }
                lg->discarding = false;
                lg->len = 0;
                buf += part + 1;
                n -= part + 1;
        }
}

struct applyfeed *applyfeed_create(const char *const *paths, size_t n)
{
        struct applyfeed *f;
        size_t i;

        if (n > APPLYFEED_MAX_LOGS) {
                return NULL;
        }
        f = calloc(1, sizeof *f);
        if (f == NULL) {
                return NULL;
        }
        for (i = 0; i < n; i++) {
                f->logs[i].fd = -1;
                f->logs[i].path = strdup(paths[i]);
                if (f->logs[i].path == NULL) {
                        f->n_logs = i;
                        applyfeed_destroy(f);
                        return NULL;
                }
        }
        f->n_logs = n;
        return f;
}

void applyfeed_destroy(struct applyfeed *f)
{
        size_t i;

        if (f == NULL) {
                return;
        }
        for (i = 0; i < f->n_logs; i++) {
                if (f->logs[i].fd >= 0) {
                        close(f->logs[i].fd);
                }
                free(f->logs[i].path);
        }
        for (i = 0; i < N_BUCKETS; i++) {
                while (f->buckets[i] != NULL) {
                        struct end *e = f->buckets[i];
                        f->buckets[i] = e->next;
                        free(e);
                }
        }
        free(f);
}

void applyfeed_update(struct applyfeed *f)
{
        size_t i;

        for (i = 0; i < f->n_logs; i++) {
                struct feedlog *lg = &f->logs[i];
                ssize_t n;

                if (lg->fd < 0) {
                        lg->fd = open(lg->path, O_RDONLY | O_CLOEXEC);
                        if (lg->fd < 0) {
                                continue; /* not there yet */
                        }
                }
                while ((n = read(lg->fd, f->chunk, sizeof f->chunk)) != 0) {
                        if (n < 0) {
                                if (errno == EINTR) {
                                        continue;
                                }
                                break;
                        }
                        take(f, lg, f->chunk, (size_t)n);
                }
        }
}

uint64_t applyfeed_ended(const struct applyfeed *f, const char *lock,
                         uint64_t token, uint64_t session)
{
        const struct end *e = find(f, lock, token, session);

        if (e == NULL) {
                e = find(f, "", 0, session);
        }
        return e != NULL ? e->index : 0;
}
