/* Checker S17 of a chaos run: grants with a hold time end on time
 * (check_hold.h). */
#include "check_hold.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_util.h"
#include "util.h"

#define NS_PER_MS INT64_C(1000000)

/* A GRANT with a hold time, or an EXTEND of one. */
struct timed {
        int lock;
        uint64_t session;
        uint64_t token;
        uint64_t index;
        int64_t mono_ns; /* the entry's first apply */
        uint32_t hold_ms;
};

/* The first apply of a term's first entry. */
struct term_start {
        uint64_t index;
        int64_t mono_ns;
};

/* What the scan of the merged log found. */
struct scan {
        struct timed *grants, *extends;
        size_t n_grants, n_extends;
        struct term_start *terms; /* by index */
        size_t n_terms;
};

static void scan_log(const struct applylog *a, struct scan *s)
{
        size_t cap_g = 0, cap_e = 0, cap_t = 0, i, j, n;
        uint64_t term = 0;

        memset(s, 0, sizeof *s);
        for (i = 0; i < a->n_merged; i++) {
                const struct applylog_ref *ref = &a->merged[i];
                const struct applylog_event *ev = applylog_events(a, ref, &n);
                if (n > 0 && ev[0].term > term) {
                        struct term_start t = {ref->index, ref->mono_ns};
                        term = ev[0].term;
                        util_push((void **)&s->terms, &s->n_terms, &cap_t, &t,
                                  sizeof t);
                }
                for (j = 0; j < n; j++) {
                        struct timed t = {ev[j].lock,   ev[j].session,
                                          ev[j].token,  ev[j].index,
                                          ref->mono_ns, ev[j].hold_ms};
                        if (ev[j].hold_ms == 0) {
                                continue;
                        }
                        if (ev[j].type == APPLYLOG_GRANT) {
                                util_push((void **)&s->grants, &s->n_grants,
                                          &cap_g, &t, sizeof t);
                        } else if (ev[j].type == APPLYLOG_EXTEND) {
                                util_push((void **)&s->extends, &s->n_extends,
                                          &cap_e, &t, sizeof t);
                        }
                }
        }
}

static void scan_free(struct scan *s)
{
        free(s->grants);
        free(s->extends);
        free(s->terms);
}

/* The grant's clock: from its last EXTEND applied before `end` (an
 * index), else from the GRANT. A run has few EXTENDs: a scan of them. */
static struct timed clock_of(const struct scan *s, const struct timed *g,
                             uint64_t end)
{
        struct timed c = *g;
        size_t i;

        for (i = 0; i < s->n_extends; i++) {
                const struct timed *e = &s->extends[i];
                if (e->lock == g->lock && e->token == g->token &&
                    e->index > c.index && e->index < end) {
                        c = *e;
                }
        }
        return c;
}

/* The first apply of the latest term begun at or before index `end`. */
static int64_t term_before(const struct scan *s, uint64_t end)
{
        int64_t t = INT64_MIN;
        size_t i;

        for (i = 0; i < s->n_terms && s->terms[i].index <= end; i++) {
                t = s->terms[i].mono_ns;
        }
        return t;
}

/* Whether a fault that may slow a live leader overlaps [from, to]: any
 * but the kills and the partitions (after which a new leader restarts
 * the clocks) and those that strike a client alone. */
static bool slowed(const struct run *r, int64_t from, int64_t to)
{
        static const char *const harmless[] = {
            "kill-", "partition", "power-cut", "pause-client", "client-cut"};
        const struct nemlog *nl = &r->nemlog;
        size_t i, k;

        if (run_clock_fault(r)) {
                return true;
        }
        for (i = 0; i < nl->n_intervals; i++) {
                const struct nemlog_interval *v = &nl->intervals[i];
                bool ok = false;
                if (v->end < from || v->start > to) {
                        continue;
                }
                for (k = 0; k < sizeof harmless / sizeof *harmless; k++) {
                        ok = ok || strncmp(v->fault, harmless[k],
                                           strlen(harmless[k])) == 0;
                }
                if (!ok) {
                        return true;
                }
        }
        return false;
}

/* The end of grant `g`: its first RELEASE event, else its session's
 * END; NULL while it lasts. */
static const struct applylog_fact *end_of(const struct run *r,
                                          const struct timed *g)
{
        size_t n, i;
        const struct applylog_fact *f =
            applylog_releases(&r->applylog, g->lock, g->token, &n);
        const struct applylog_fact *end;

        for (i = 0; i < n; i++) {
                if (f[i].type == APPLYLOG_RELEASE &&
                    f[i].session == g->session) {
                        return &f[i];
                }
        }
        end = applylog_end(&r->applylog, g->session);
        return end != NULL && end->index > g->index ? end : NULL;
}

struct tally {
        struct check_note early, late;
        size_t expired, held, unjudged;
        int64_t latest_ns; /* the most past its hold any judged end came */
};

static void judge(const struct run *r, const struct scan *s,
                  const struct timed *g, struct tally *t)
{
        const struct applylog_fact *end = end_of(r, g);
        struct timed c;
        int64_t base, past_ns, term;

        if (end == NULL) {
                t->held++;
                return;
        }
        c = clock_of(s, g, end->index);
        if (end->cause == APPLYLOG_C_EXPIRE_HOLD) {
                t->expired++;
                if (end->mono_ns <
                    c.mono_ns + ((int64_t)c.hold_ms - CHECK_HOLD_EARLY_MS) *
                                    NS_PER_MS) {
                        check_note(&t->early,
                                   "lock %s token %" PRIu64
                                   ": EXPIRE_HOLD at index %" PRIu64
                                   " %.3f s after its clock began at index "
                                   "%" PRIu64 ", before its hold of %" PRIu32
                                   " ms",
                                   run_name(r, g->lock), g->token, end->index,
                                   check_secs(end->mono_ns - c.mono_ns),
                                   c.index, c.hold_ms);
                }
        }
        term = term_before(s, end->index);
        base = term > c.mono_ns ? term : c.mono_ns;
        if (slowed(r, base, end->mono_ns)) {
                t->unjudged++;
                return;
        }
        past_ns = end->mono_ns - base - (int64_t)c.hold_ms * NS_PER_MS;
        if (past_ns > t->latest_ns) {
                t->latest_ns = past_ns;
        }
        if (past_ns > CHECK_HOLD_SLACK_MS * NS_PER_MS) {
                check_note(
                    &t->late,
                    "lock %s token %" PRIu64 " (hold %" PRIu32
                    " ms from index %" PRIu64 "): ended at index %" PRIu64
                    " %.3f s past its hold, more than %d ms",
                    run_name(r, g->lock), g->token, c.hold_ms, c.index,
                    end->index, check_secs(past_ns), CHECK_HOLD_SLACK_MS);
        }
}

void check_s17(const struct run *r, struct check_result *res)
{
        struct tally t;
        struct scan s;
        size_t i;

        memset(&t, 0, sizeof t);
        t.latest_ns = INT64_MIN;
        scan_log(&r->applylog, &s);
        for (i = 0; i < s.n_grants; i++) {
                judge(r, &s, &s.grants[i], &t);
        }
        if (t.early.count > 0) {
                check_set(res, CHECK_FAIL,
                          "a grant ended before its hold: %s (%zu grants)",
                          t.early.first, t.early.count);
        } else if (t.late.count > 0) {
                check_set(res, CHECK_FAIL,
                          "a grant outlived its hold: %s (%zu grants)",
                          t.late.first, t.late.count);
        } else if (s.n_grants == 0) {
                check_set(res, CHECK_PASS, "no grant had a hold time");
        } else {
                check_set(res, CHECK_PASS,
                          "%zu grants with hold times: %zu ended by their "
                          "hold, none early; the latest end %.3f s past its "
                          "hold (bound %d ms); %zu not timed (a fault slowed "
                          "the leader), %zu held at the end",
                          s.n_grants, t.expired,
                          t.latest_ns == INT64_MIN ? 0.0
                                                   : check_secs(t.latest_ns),
                          CHECK_HOLD_SLACK_MS, t.unjudged, t.held);
        }
        scan_free(&s);
}
