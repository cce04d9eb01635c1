/* Checker S15 of a chaos run: the unfenced register's writers never
 * overlap. */
#include "check_unfenced.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_util.h"
#include "util.h"

/* The real-time bound of one grant's writes: the earliest apply of its end
 * (its RELEASE, or its session's END) or of the lock's next GRANT,
 * whichever came first. */
struct bound {
        int key;
        uint64_t token;
        int known;            /* 1: found; 0: the GRANT is not logged */
        int64_t end_ns;       /* INT64_MAX: never ended in the logs */
        uint64_t end_index;   /* 0: never ended */
        const char *end_what; /* "RELEASE", or the END's cause */
        bool expired;         /* ended by its session's expiry */
        int64_t next_ns;      /* INT64_MAX: no later grant */
        uint64_t next_index;  /* the next GRANT's index (its token) */
        uint64_t session;     /* the grant's */
};

static int cmp_bound(const void *p, const void *q)
{
        const struct bound *a = p, *b = q;

        if (a->key != b->key) {
                return a->key < b->key ? -1 : 1;
        }
        return a->token < b->token ? -1 : a->token > b->token;
}

/* The first GRANT of `lock` after index `token`, by any session. */
static const struct applylog_fact *next_grant(const struct run *r, int lock,
                                              uint64_t token)
{
        const struct applylog *a = &r->applylog;
        const struct applylog_fact *best = NULL;
        size_t i;

        for (i = 0; i < a->n_grants; i++) {
                const struct applylog_fact *f = &a->grants[i];
                if (f->lock == lock && f->index > token &&
                    (best == NULL || f->index < best->index)) {
                        best = f;
                }
        }
        return best;
}

static void find_bound(const struct run *r, struct bound *b)
{
        const struct applylog_event *g;
        const struct applylog_fact *next, *end;
        const struct applylog_ref *ref;
        bool logged;

        b->end_ns = b->next_ns = INT64_MAX;
        b->end_what = "";
        g = check_grant_at(r, b->key, b->token, &logged);
        b->known = g != NULL;
        if (g == NULL) {
                return;
        }
        b->session = g->session;
        b->end_index = check_grant_end(r, b->key, b->token, g->session);
        if (b->end_index != 0 &&
            (ref = applylog_find(&r->applylog, b->end_index)) != NULL) {
                b->end_ns = ref->mono_ns;
                end = applylog_end(&r->applylog, g->session);
                b->end_what = end != NULL && end->index == b->end_index
                                  ? applylog_cause_name(end->cause)
                                  : "RELEASE";
                b->expired = end != NULL && end->index == b->end_index &&
                             end->cause == APPLYLOG_C_EXPIRE;
        }
        next = next_grant(r, b->key, b->token);
        if (next != NULL) {
                b->next_ns = next->mono_ns;
                b->next_index = next->index;
        }
}

/* The bound of every (lock, token) the log names, sorted. */
static struct bound *bounds(const struct run *r, size_t *n)
{
        const struct unflog *u = &r->unflog;
        struct bound *b = util_calloc(u->n, sizeof *b);
        size_t i, k = 0;

        for (i = 0; i < u->n; i++) {
                b[i].key = u->lines[i].key;
                b[i].token = u->lines[i].token;
        }
        util_sort(b, u->n, sizeof *b, cmp_bound);
        for (i = 0; i < u->n; i++) {
                if (k == 0 || cmp_bound(&b[k - 1], &b[i]) != 0) {
                        b[k++] = b[i];
                }
        }
        for (i = 0; i < k; i++) {
                find_bound(r, &b[i]);
        }
        *n = k;
        return b;
}

static const struct bound *bound_of(const struct bound *b, size_t n,
                                    const struct unflog_line *l)
{
        struct bound key = {.key = l->key, .token = l->token};

        return bsearch(&key, b, n, sizeof *b, cmp_bound);
}

/* A write after its grant had ended, or after the next grant was made. */
static void late(const struct run *r, const struct unflog_line *l,
                 const struct bound *b, struct check_note *bad)
{
        bool next_first = b->next_ns <= b->end_ns;
        int64_t at = next_first ? b->next_ns : b->end_ns;

        if (next_first) {
                check_note(bad,
                           "%s: w%d's command (p=%" PRIu64 ", pid %ld, token "
                           "%" PRIu64 ") wrote at %" PRId64 "%s, %.3f s after "
                           "the lock was granted to token %" PRIu64
                           " (first applied at %" PRId64 "): two holders",
                           run_name(r, l->key), l->worker, l->process, l->pid,
                           l->token, l->t, l->term ? " (after SIGTERM)" : "",
                           check_secs(l->t - at), b->next_index, at);
        } else {
                check_note(bad,
                           "%s: w%d's command (p=%" PRIu64 ", pid %ld, token "
                           "%" PRIu64 ") wrote at %" PRId64 "%s, %.3f s after "
                           "its grant ended (%s of session %" PRIu64
                           " at index %" PRIu64 ", first applied at %" PRId64
                           ")",
                           run_name(r, l->key), l->worker, l->process, l->pid,
                           l->token, l->t, l->term ? " (after SIGTERM)" : "",
                           check_secs(l->t - at), b->end_what, b->session,
                           b->end_index, at);
        }
}

void check_s15(const struct run *r, struct check_result *res)
{
        const struct unflog *u = &r->unflog;
        uint64_t *high = util_calloc(r->names.n + 1, sizeof *high);
        struct check_note bad = {0, ""}, unknown = {0, ""};
        bool clock_fault = run_clock_fault(r);
        int64_t closest = INT64_MAX; /* the write nearest an expiry */
        size_t n_b = 0, i, n_term = 0, n_holders = 0, n_bad = 0;
        struct bound *b;

        if (!u->log.present || u->n == 0) {
                check_set(res, CHECK_PASS, "no unfenced register writes");
                free(high);
                return;
        }
        b = bounds(r, &n_b);
        for (i = 0; i < u->n; i++) {
                const struct unflog_line *l = &u->lines[i];
                const struct bound *lb = bound_of(b, n_b, l);

                size_t before = bad.count;

                n_term += l->term;
                /* In the order of the writes, one holder after another. */
                if (l->token < high[l->key]) {
                        check_note(&bad,
                                   "%s: w%d's command (p=%" PRIu64
                                   ", pid %ld, token %" PRIu64
                                   ") wrote at %" PRId64 " (line %u) after "
                                   "token %" PRIu64 "'s holder had written: "
                                   "two holders",
                                   run_name(r, l->key), l->worker, l->process,
                                   l->pid, l->token, l->t, l->line,
                                   high[l->key]);
                } else {
                        high[l->key] = l->token;
                }
                if (lb == NULL || !lb->known) {
                        check_note(&unknown,
                                   "%s: no GRANT at token %" PRIu64
                                   " in the apply logs (line %u)",
                                   run_name(r, l->key), l->token, l->line);
                } else if (!clock_fault &&
                           (l->t > lb->end_ns || l->t > lb->next_ns)) {
                        late(r, l, lb, &bad);
                }
                n_bad += bad.count > before;
                if (lb != NULL && lb->expired && lb->end_ns - l->t < closest) {
                        closest = lb->end_ns - l->t;
                }
        }
        for (i = 0; i < n_b; i++) {
                n_holders += b[i].known;
        }
        if (bad.count > 0) {
                check_set(res, CHECK_FAIL, "%s (%zu of %zu writes)", bad.first,
                          n_bad, u->n);
        } else if (unknown.count > 0) {
                check_set(res, CHECK_UNKNOWN, "%s (%zu of %zu writes)",
                          unknown.first, unknown.count, u->n);
        } else {
                char near[80] = "no grant expired";
                if (closest != INT64_MAX) {
                        snprintf(near, sizeof near,
                                 "the write nearest an expiry %.3f s before it",
                                 check_secs(closest));
                }
                check_set(res, CHECK_PASS,
                          "%zu writes by %zu holders, none after its grant "
                          "ended%s; %zu written after SIGTERM; %s",
                          u->n, n_holders,
                          clock_fault ? " (not timed: a clock fault ran)" : "",
                          n_term, near);
        }
        free(b);
        free(high);
}
