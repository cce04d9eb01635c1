/* Checkers L1, L2 and L4 of a chaos run: progress, exits and logs. */
#include "check_live.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "check_util.h"

#define SEC INT64_C(1000000000)

/* L1: the final acquire and release must complete this soon after the
 * final heal. */
#define FINAL_WITHIN_NS (15 * SEC)

/* L2: a window this long without an ok completion is unavailability. */
#define GAP_NS (2 * SEC)

/* --- L1, L2 --------------------------------------------------------------- */

static int cmp_i64(const void *p, const void *q)
{
        int64_t x = *(const int64_t *)p, y = *(const int64_t *)q;

        return x < y ? -1 : x > y;
}

void check_l1(const struct run *r, struct check_result *res,
              struct check_stats *st)
{
        const struct nemlog *nl = &r->nemlog;
        int64_t deadline;
        int max_w = -1, w, workers = 0;
        bool *seen, *acq, *rel;
        struct check_note bad = {0, ""};
        size_t i;

        st->has_heal = nl->has_heal;
        st->recovery_ns = -1;
        if (!nl->has_heal) {
                check_set(res, CHECK_PASS,
                          "no heal-all in the nemesis log: "
                          "nothing to measure");
                return;
        }
        deadline = nl->heal_t + FINAL_WITHIN_NS;
        for (i = 0; i < r->history.n; i++) {
                const struct history_op *h = &r->history.ops[i];
                if (h->worker > max_w) {
                        max_w = h->worker;
                }
                if (h->type == HISTORY_OK && h->complete_ns >= nl->heal_t &&
                    (st->recovery_ns < 0 ||
                     h->complete_ns - nl->heal_t < st->recovery_ns)) {
                        st->recovery_ns = h->complete_ns - nl->heal_t;
                }
        }
        if (max_w < 0) {
                check_set(res, CHECK_FAIL, "no worker history after heal-all");
                return;
        }
        seen = util_calloc((size_t)max_w + 1, 1);
        acq = util_calloc((size_t)max_w + 1, 1);
        rel = util_calloc((size_t)max_w + 1, 1);
        for (i = 0; i < r->history.n; i++) {
                const struct history_op *h = &r->history.ops[i];
                bool in_time = h->final && h->type == HISTORY_OK &&
                               h->complete_ns <= deadline;

                if (h->worker < 0) {
                        continue;
                }
                seen[h->worker] = true;
                if (in_time && h->f == HISTORY_ACQUIRE) {
                        acq[h->worker] = true;
                } else if (in_time && h->f == HISTORY_RELEASE) {
                        rel[h->worker] = true;
                }
        }
        for (w = 0; w <= max_w; w++) {
                if (!seen[w]) {
                        continue;
                }
                workers++;
                if (!acq[w] || !rel[w]) {
                        check_note(
                            &bad,
                            "w%d: no ok final %s within 15 s of the heal "
                            "at %" PRId64,
                            w, !acq[w] ? "acquire" : "release", nl->heal_t);
                }
        }
        if (bad.count > 0) {
                check_set(res, CHECK_FAIL, "%s (%zu of %d workers)", bad.first,
                          bad.count, workers);
        } else {
                check_set(res, CHECK_PASS,
                          "%d workers acquired and released within 15 s of the "
                          "final heal",
                          workers);
        }
        free(seen);
        free(acq);
        free(rel);
}

/* How long a fault's effects may outlast it. A killed worker incarnation's
 * session holds its locks until a leader expires it, and a new leader
 * gives every session a full TTL: after a leader change, waiters may wait
 * a TTL plus an election or two without any fault active. */
static int64_t plan_ms(const struct run *r, const char *key)
{
        const char *v = nemlog_plan_get(&r->nemlog, key);
        int64_t ms;

        return v != NULL && util_parse_i64(v, &ms) && ms > 0 ? ms : 0;
}

static int64_t fault_aftermath_ns(const struct run *r)
{
        return (plan_ms(r, "ttl_ms") + 2 * plan_ms(r, "election_timeout_ms")) *
               1000000;
}

void check_l2(const struct run *r, struct check_result *res,
              struct check_stats *st)
{
        const struct nemlog *nl = &r->nemlog;
        int64_t *t = util_calloc(r->history.n, sizeof *t);
        int64_t worst_bad = -1, worst_bad_at = 0;
        size_t n = 0, i, j, bad = 0;
        const char *covered_by = NULL;
        int64_t after = fault_aftermath_ns(r);

        for (i = 0; i < r->history.n; i++) {
                if (r->history.ops[i].type == HISTORY_OK) {
                        t[n++] = r->history.ops[i].complete_ns;
                }
        }
        util_sort(t, n, sizeof *t, cmp_i64);
        st->longest_gap_ns = -1;
        for (i = 1; i < n; i++) {
                int64_t gap = t[i] - t[i - 1];
                const char *fault = NULL;

                if (gap > st->longest_gap_ns) {
                        st->longest_gap_ns = gap;
                        st->longest_gap_at = t[i - 1];
                        covered_by = NULL;
                }
                if (gap < GAP_NS) {
                        continue;
                }
                for (j = 0; j < nl->n_intervals && fault == NULL; j++) {
                        const struct nemlog_interval *iv = &nl->intervals[j];
                        if (iv->start < t[i] && iv->end + after > t[i - 1]) {
                                fault = iv->fault;
                        }
                }
                if (gap == st->longest_gap_ns) {
                        covered_by = fault;
                }
                if (fault == NULL) {
                        bad++;
                        if (gap > worst_bad) {
                                worst_bad = gap;
                                worst_bad_at = t[i - 1];
                        }
                }
        }
        free(t);
        if (n == 0 && r->history.n > 0) {
                check_set(res, CHECK_FAIL,
                          "no operation succeeded (%zu invoked)", r->history.n);
        } else if (bad > 0) {
                check_set(
                    res, CHECK_FAIL,
                    "%zu windows of 2 s or more without an ok operation and "
                    "no fault; the longest %.3f s from %" PRId64,
                    bad, check_secs(worst_bad), worst_bad_at);
        } else if (st->longest_gap_ns < 0) {
                check_set(res, CHECK_PASS, "fewer than two ok operations");
        } else {
                check_set(res, CHECK_PASS,
                          "longest window without an ok operation %.3f s from "
                          "%" PRId64 "%s%s",
                          check_secs(st->longest_gap_ns), st->longest_gap_at,
                          covered_by != NULL ? ", during fault " : "",
                          covered_by != NULL ? covered_by : "");
        }
}

/* --- L4 ------------------------------------------------------------------- */

static const char *const reports[] = {
    "AddressSanitizer",
    "runtime error",
    "Assertion",
    "LeakSanitizer",
};

/* Scan one log for sanitizer and assertion reports. */
static void scan_log(const char *path, const char *shown,
                     struct check_note *bad, size_t *scanned)
{
        char *buf;
        size_t len, i;

        if (util_read_file(path, &buf, &len) != 0) {
                return;
        }
        (*scanned)++;
        for (i = 0; i < sizeof reports / sizeof reports[0]; i++) {
                const char *at =
                    memmem(buf, len, reports[i], strlen(reports[i]));
                if (at != NULL) {
                        const char *eol =
                            memchr(at, '\n', len - (size_t)(at - buf));
                        int w = (int)((eol != NULL ? eol : buf + len) - at);
                        check_note(bad, "%s: %.*s", shown, w > 160 ? 160 : w,
                                   at);
                }
        }
        free(buf);
}

void check_l4(const struct run *r, struct check_result *res)
{
        const struct nemlog *nl = &r->nemlog;
        const struct applylog *a = &r->applylog;
        struct check_note bad = {0, ""};
        char path[4096], shown[512];
        size_t i, scanned = 0;

        for (i = 0; i < nl->n_exits; i++) {
                const struct nemlog_exit *e = &nl->exits[i];
                if (!e->expected) {
                        check_note(&bad,
                                   "%s (pid %" PRId64
                                   ") exited with status %" PRId64
                                   " at %" PRId64 ", not caused by the nemesis",
                                   e->proc, e->pid, e->status, e->t);
                }
        }
        for (i = 0; i < a->n_nodes; i++) {
                snprintf(shown, sizeof shown, "nodes/%s/node.log",
                         a->nodes[i].name);
                snprintf(path, sizeof path, "%s/%s", r->dir, shown);
                scan_log(path, shown, &bad, &scanned);
        }
        for (i = 0; i < r->history.n_files; i++) {
                /* workers/wJ.err beside history/wJ.log */
                const char *f = r->history.files[i];
                snprintf(shown, sizeof shown, "workers/%.*s.err",
                         (int)(strlen(f) - 4), f);
                snprintf(path, sizeof path, "%s/%s", r->dir, shown);
                scan_log(path, shown, &bad, &scanned);
        }
        if (bad.count > 0) {
                check_set(res, CHECK_FAIL, "%s (%zu problems)", bad.first,
                          bad.count);
        } else {
                check_set(
                    res, CHECK_PASS,
                    "%zu exits, all caused by the nemesis%s; no sanitizer or "
                    "assertion report in %zu logs",
                    nl->n_exits, nl->exits_present ? "" : " (no exits file)",
                    scanned);
        }
}
