/* Checkers S9 and S10 of a chaos run: the nodes agree; ended sessions. */
#include "check_nodes.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "check_util.h"

/* --- S9 ------------------------------------------------------------------- */

void check_s9(const struct run *r, struct check_result *res)
{
        const struct applylog *a = &r->applylog;
        struct check_note bad = {0, ""};
        size_t i, j, k, compared = 0, present = 0, skipped = 0;

        for (i = 0; i < a->n_nodes; i++) {
                const struct applylog_node *nd = &a->nodes[i];

                present += nd->present;
                skipped += nd->n_bad + nd->n_torn;
                if (nd->mismatch[0] != '\0') {
                        check_note(&bad, "%s", nd->mismatch);
                }
                for (j = 0; j < nd->n_entries; j++) {
                        const struct applylog_entry *e = &nd->entries[j];
                        const struct applylog_ref *ref =
                            applylog_find(a, e->index);
                        const struct applylog_event *x, *y;
                        size_t n_ref, n;

                        if (ref == NULL || ref->node == (int)i) {
                                continue;
                        }
                        compared++;
                        x = applylog_events(a, ref, &n_ref);
                        y = &nd->events[e->first];
                        n = e->n;
                        /* An entry cut short compares as a prefix. */
                        for (k = 0; k < n && k < n_ref; k++) {
                                if (!applylog_same_event(&x[k], &y[k])) {
                                        break;
                                }
                        }
                        if (k < n && k < n_ref) {
                                check_note(&bad,
                                           "index %" PRIu64
                                           ": %s has %.180s, %s "
                                           "has %.180s",
                                           e->index, a->nodes[ref->node].name,
                                           x[k].text, nd->name, y[k].text);
                        } else if (n != n_ref && e->complete &&
                                   a->nodes[ref->node]
                                       .entries[ref->entry]
                                       .complete) {
                                check_note(&bad,
                                           "index %" PRIu64 ": %s logged %zu "
                                           "events, %s %zu",
                                           e->index, a->nodes[ref->node].name,
                                           n_ref, nd->name, n);
                        }
                }
        }
        if (bad.count > 0) {
                check_set(res, CHECK_FAIL, "%s (%zu disagreements)", bad.first,
                          bad.count);
        } else {
                check_set(
                    res, CHECK_PASS,
                    "%zu apply logs agree: %zu indexes, %zu compared across "
                    "nodes (%zu torn or malformed lines skipped)",
                    present, a->n_merged, compared, skipped);
        }
}

/* --- S10 ------------------------------------------------------------------ */

/* A lease a worker reported, for S10. */
struct lease {
        uint64_t session;
        int64_t t;     /* the completion that reported it */
        int64_t lease; /* the local lease end */
        int worker;
};

static int cmp_lease(const void *p, const void *q)
{
        const struct lease *x = p, *y = q;

        if (x->session != y->session) {
                return x->session < y->session ? -1 : 1;
        }
        return x->t < y->t ? -1 : x->t > y->t;
}

void check_s10(const struct run *r, struct check_result *res)
{
        const struct applylog *a = &r->applylog;
        bool clock_fault = run_clock_fault(r);
        struct lease *ls = NULL;
        size_t n_ls = 0, cap = 0, i, j, n, expiries = 0;
        struct check_note early = {0, ""}, after = {0, ""};

        for (i = 0; i < r->history.n; i++) {
                const struct history_op *h = &r->history.ops[i];
                if (h->has_lease && h->complete_ns != INT64_MAX) {
                        struct lease l = {h->session_eff, h->complete_ns,
                                          h->lease, h->worker};
                        util_push((void **)&ls, &n_ls, &cap, &l, sizeof l);
                }
        }
        util_sort(ls, n_ls, sizeof *ls, cmp_lease);
        /* (a) An expiry applied before a lease end the session's worker
         * had already been told. */
        for (i = 0; i < a->n_ends && !clock_fault; i++) {
                const struct applylog_fact *e = &a->ends[i];
                struct lease key = {e->session, INT64_MIN, 0, 0};
                const struct lease *best = NULL;
                size_t lo = 0, hi = n_ls;

                if (e->cause != APPLYLOG_C_EXPIRE) {
                        continue;
                }
                expiries++;
                while (lo < hi) {
                        size_t mid = lo + (hi - lo) / 2;
                        if (cmp_lease(&ls[mid], &key) < 0) {
                                lo = mid + 1;
                        } else {
                                hi = mid;
                        }
                }
                for (; lo < n_ls && ls[lo].session == e->session &&
                       ls[lo].t < e->mono_ns;
                     lo++) {
                        if (best == NULL || ls[lo].lease > best->lease) {
                                best = &ls[lo];
                        }
                }
                if (best != NULL && e->mono_ns < best->lease) {
                        check_note(
                            &early,
                            "session %" PRIu64 " expired at index %" PRIu64
                            " (applied at %" PRId64 "), %.3f s before the "
                            "lease end w%d was told at %" PRId64,
                            e->session, e->index, e->mono_ns,
                            check_secs(best->lease - e->mono_ns), best->worker,
                            best->t);
                }
        }
        /* (b) Nothing happens to a session after its END but refusals (and
         * a retried CLOSE answered CLOSED again). */
        for (i = 0; i < a->n_merged; i++) {
                const struct applylog_event *ev =
                    applylog_events(a, &a->merged[i], &n);
                for (j = 0; j < n; j++) {
                        uint64_t end;
                        if (ev[j].type == APPLYLOG_UNQUEUE ||
                            (ev[j].type == APPLYLOG_RESULT &&
                             (ev[j].status != 0 ||
                              ev[j].cause == APPLYLOG_C_CLOSE)) ||
                            !check_after_end(r, &ev[j], &end)) {
                                continue;
                        }
                        check_note(
                            &after,
                            "session %" PRIu64 ": %s (%s) at index %" PRIu64
                            " after its END at %" PRIu64,
                            ev[j].session, applylog_event_name(ev[j].type),
                            applylog_cause_name(ev[j].cause), ev[j].index, end);
                }
        }
        if (early.count > 0 || after.count > 0) {
                check_set(res, CHECK_FAIL,
                          "%s (%zu early expiries, %zu events "
                          "after an END)",
                          early.count > 0 ? early.first : after.first,
                          early.count, after.count);
        } else if (clock_fault) {
                check_set(
                    res, CHECK_PASS,
                    "expiry timing not checked: the plan ran a clock fault; "
                    "nothing happened to a session after its END (%zu ENDs)",
                    a->n_ends);
        } else {
                check_set(
                    res, CHECK_PASS,
                    "%zu expiries, none before an acknowledged lease; nothing "
                    "happened to a session after its END (%zu ENDs)",
                    expiries, a->n_ends);
        }
        free(ls);
}
