/* Checker S12 of a chaos run: a semaphore's pool at the register. */
#include "check_sem.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_util.h"
#include "util.h"

/* A holder inside a pool: from its accepted ENTER to its LEAVE (or a
 * refusal, or its worker's next ENTER of the pool). */
struct presence {
        int key;
        int worker;
        uint64_t token;
        uint64_t session;
        unsigned line;    /* its ENTER's line in register.log */
        bool stale_noted; /* counted once as a stale holder inside */
};

/* A holder the register refused: it must stay refused. */
struct refusal {
        int key;
        int worker;
        uint64_t token;
        uint64_t session;
        unsigned line;
};

/* A holder's grant as the apply logs tell it: current at the indexes
 * [start, end). */
struct span {
        struct presence *p;
        uint64_t start, end;
        uint32_t permits;
};

struct semcheck {
        const struct run *r;
        uint32_t *limits; /* check_sem_limits() */
        bool *noted;      /* per key: its missing limit was noted */
        struct presence *in;
        size_t n_in, cap_in;
        struct refusal *out;
        size_t n_out, cap_out;
        struct span *spans;
        size_t cap_spans;
        size_t enters, most, over, stale;
        struct check_note bad, unknown;
};

static struct presence *find(struct semcheck *c, int key, int worker)
{
        size_t i;

        for (i = 0; i < c->n_in; i++) {
                if (c->in[i].key == key && c->in[i].worker == worker) {
                        return &c->in[i];
                }
        }
        return NULL;
}

static void drop(struct semcheck *c, struct presence *p)
{
        *p = c->in[--c->n_in];
}

static bool refused_before(const struct semcheck *c,
                           const struct reglog_line *l, unsigned *at)
{
        size_t i;

        for (i = 0; i < c->n_out; i++) {
                const struct refusal *f = &c->out[i];
                if (f->key == l->key && f->worker == l->worker &&
                    f->token == l->token && f->session == l->session) {
                        *at = f->line;
                        return true;
                }
        }
        return false;
}

/* The grants of the holders inside pool `key` into c->spans: their count,
 * or -1 (noted UNKNOWN) when the apply logs lack one. */
static long spans_of(struct semcheck *c, int key)
{
        size_t i, n = 0;

        if (c->cap_spans < c->n_in) {
                c->cap_spans = c->n_in;
                c->spans = realloc(c->spans, c->cap_spans * sizeof *c->spans);
                if (c->spans == NULL) {
                        abort();
                }
        }
        for (i = 0; i < c->n_in; i++) {
                struct presence *p = &c->in[i];
                const struct applylog_event *g;
                uint64_t end;
                bool logged;

                if (p->key != key) {
                        continue;
                }
                g = check_grant_of(c->r, key, p->token, p->session, &logged);
                if (g == NULL || g->session != p->session) {
                        check_note(&c->unknown,
                                   "semaphore %s: no GRANT of token %" PRIu64
                                   " to session %" PRIu64
                                   " in the apply logs (w%d, "
                                   "register.log:%u)",
                                   run_name(c->r, key), p->token, p->session,
                                   p->worker, p->line);
                        return -1;
                }
                end = check_grant_end(c->r, key, p->token, p->session);
                c->spans[n++] =
                    (struct span){p, p->token, end != 0 ? end : UINT64_MAX,
                                  applylog_permits(g)};
        }
        return (long)n;
}

/* The index where the most permits of `s` were current at once (one of
 * the grants' own indexes), and that many in `*most`. */
static uint64_t busiest(const struct span *s, size_t n, uint64_t *most)
{
        uint64_t at = 0;
        size_t i, j;

        *most = 0;
        for (i = 0; i < n; i++) {
                uint64_t cur = 0;
                for (j = 0; j < n; j++) {
                        if (s[j].start <= s[i].start && s[i].start < s[j].end) {
                                cur += s[j].permits;
                        }
                }
                if (cur > *most) {
                        *most = cur;
                        at = s[i].start;
                }
        }
        return at;
}

/* FAIL: the holders of `s` current at index `at` were inside at once. */
static void overlap(struct semcheck *c, const struct reglog_line *l,
                    uint32_t limit, const struct span *s, size_t n, uint64_t at,
                    uint64_t permits)
{
        char who[240];
        size_t i, used = 0, k = 0;

        who[0] = '\0';
        for (i = 0; i < n; i++) {
                if (s[i].start > at || at >= s[i].end) {
                        continue;
                }
                k++;
                if (used < sizeof who) {
                        used += (size_t)snprintf(
                            who + used, sizeof who - used,
                            "%sw%d token %" PRIu64 " session %" PRIu64,
                            used > 0 ? ", " : "", s[i].p->worker, s[i].p->token,
                            s[i].p->session);
                }
        }
        check_note(&c->bad,
                   "semaphore %s (%" PRIu32 " permits): %zu holders inside "
                   "the register at once (register.log:%u), their grants "
                   "all current at index %" PRIu64 " (%" PRIu64 " permits): %s",
                   run_name(c->r, l->key), limit, k, l->line, at, permits, who);
}

/* After an accepted ENTER of pool `l->key`: more permits inside than the
 * semaphore has are a violation if that many grants were current at one
 * index; else some inside are stale holders (their grants had ended). */
static void count_inside(struct semcheck *c, const struct reglog_line *l)
{
        uint32_t limit = c->limits[l->key];
        uint64_t total = 0, most, at, newest = 0;
        long n;
        size_t i;

        if (limit == 0) {
                if (!c->noted[l->key]) {
                        c->noted[l->key] = true;
                        check_note(&c->unknown,
                                   "semaphore %s: no acquire in the history "
                                   "names its permits (limit=)",
                                   run_name(c->r, l->key));
                }
                return;
        }
        n = spans_of(c, l->key);
        if (n < 0) {
                return;
        }
        if ((size_t)n > c->most) {
                c->most = (size_t)n;
        }
        for (i = 0; i < (size_t)n; i++) {
                total += c->spans[i].permits;
                if (c->spans[i].start > newest) {
                        newest = c->spans[i].start;
                }
        }
        if (total <= limit) {
                return;
        }
        c->over++;
        at = busiest(c->spans, (size_t)n, &most);
        if (most > limit) {
                overlap(c, l, limit, c->spans, (size_t)n, at, most);
                return;
        }
        /* A holder whose grant ended before another's was made. */
        for (i = 0; i < (size_t)n; i++) {
                struct presence *p = c->spans[i].p;
                if (c->spans[i].end <= newest && !p->stale_noted) {
                        p->stale_noted = true;
                        c->stale++;
                }
        }
}

static void on_line(struct semcheck *c, const struct reglog_line *l)
{
        struct presence *p = find(c, l->key, l->worker);
        bool same =
            p != NULL && p->token == l->token && p->session == l->session;
        unsigned at;

        if (!l->ok) {
                struct refusal f = {l->key, l->worker, l->token, l->session,
                                    l->line};
                if (same) {
                        drop(c, p); /* told its grant ended (S6 checks it) */
                }
                util_push((void **)&c->out, &c->n_out, &c->cap_out, &f,
                          sizeof f);
                return;
        }
        if (refused_before(c, l, &at)) {
                check_note(&c->bad,
                           "semaphore %s: w%d's %s with token %" PRIu64
                           " accepted after the register refused it "
                           "(register.log:%u): a stale holder let in "
                           "(register.log:%u)",
                           run_name(c->r, l->key), l->worker,
                           reglog_op_name(l->op), l->token, at, l->line);
        }
        if (l->op == REGLOG_ENTER) {
                struct presence np = {l->key,     l->worker, l->token,
                                      l->session, l->line,   false};
                if (p != NULL) {
                        drop(c, p); /* its worker moved on without a LEAVE */
                }
                c->enters++;
                util_push((void **)&c->in, &c->n_in, &c->cap_in, &np,
                          sizeof np);
                count_inside(c, l);
        } else if (l->op == REGLOG_LEAVE && same) {
                drop(c, p);
        }
}

void check_s12(const struct run *r, struct check_result *res)
{
        const struct reglog *rl = &r->reglog;
        bool *pool = util_calloc(r->names.n, sizeof *pool);
        struct semcheck c;
        size_t i, n_pools = 0;
        uint32_t lo = 0, hi = 0;
        char limits[40];

        memset(&c, 0, sizeof c);
        c.r = r;
        c.limits = check_sem_limits(r);
        c.noted = util_calloc(r->names.n, sizeof *c.noted);
        for (i = 0; i < rl->n; i++) {
                const struct reglog_line *l = &rl->lines[i];
                if (l->sem && !pool[l->key]) {
                        uint32_t lim = c.limits[l->key];
                        pool[l->key] = true;
                        n_pools++;
                        if (lim > 0 && (lo == 0 || lim < lo)) {
                                lo = lim;
                        }
                        hi = lim > hi ? lim : hi;
                }
        }
        for (i = 0; i < rl->n; i++) {
                if (rl->lines[i].sem) {
                        on_line(&c, &rl->lines[i]);
                }
        }
        if (c.bad.count > 0) {
                check_set(res, CHECK_FAIL, "%s (%zu violations)", c.bad.first,
                          c.bad.count);
        } else if (c.unknown.count > 0) {
                check_set(res, CHECK_UNKNOWN, "%s (%zu unknown)",
                          c.unknown.first, c.unknown.count);
        } else if (n_pools == 0) {
                check_set(res, CHECK_PASS,
                          "no semaphore pools (no semaphore workload)");
        } else {
                if (lo == hi) {
                        snprintf(limits, sizeof limits, "%" PRIu32, lo);
                } else {
                        snprintf(limits, sizeof limits, "%" PRIu32 "-%" PRIu32,
                                 lo, hi);
                }
                check_set(res, CHECK_PASS,
                          "%zu semaphore pools of %s permits, %zu enters, up "
                          "to %zu holders inside at once: never more permits "
                          "with grants current at one index; more inside %zu "
                          "times, always with a stale holder (%zu holders "
                          "whose grant had ended, not yet refused)",
                          n_pools, limits, c.enters, c.most, c.over, c.stale);
        }
        free(c.in);
        free(c.out);
        free(c.spans);
        free(c.noted);
        free(c.limits);
        free(pool);
}
