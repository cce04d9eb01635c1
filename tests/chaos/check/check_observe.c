/*
 * Checker S14 of a chaos run: the observers (the election workload's
 * workers each watch their election and log every event, f=observe lines:
 * docs/chaos.md, "History lines").
 *
 * A watch is told every GRANT, RELEASE and PROCLAIM of its name, in log
 * order, each at its position (index, ord): the entry that made it and its
 * order among that entry's GRANTs, RELEASEs and PROCLAIMs of any name,
 * from 1 (src/server/gateway/watchfeed.c). The merged apply log numbers its
 * events the same way, so for each observer, line by line:
 *
 * - its events come in strictly increasing position (else FAIL: out of
 *   order, or told twice);
 * - each is the event of the watched name at that position in the apply
 *   logs, with the same kind, session, owner, token, mode and value (else
 *   FAIL; UNKNOWN when no node logged that entry in full);
 * - from the first event after a watch opened from now (the start, or a
 *   compacted marker) each event is the next of the name in the apply
 *   logs (else FAIL: a gap, naming the first event missed; UNKNOWN when
 *   an entry in between was logged by no node in full). A watch resumed
 *   after an end (from=last) continues the run;
 * - the first event after a watch opened from now is not preceded by an
 *   event of the name whose entry no node had applied when the open
 *   returned (the earliest mono_ns of the entry in the apply logs after
 *   the open line's t): the watch started at the serving node's applied
 *   index, so it must have been told of that one (a gap at the start).
 *   Skipped when the plan ran a clock fault (mono_ns on other scales).
 */
#include "check_observe.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_util.h"
#include "util.h"

/* A watch event as the apply logs have it. */
struct wev {
        int key;
        uint64_t index;
        uint32_t ord;
        const struct applylog_event *ev;
        int64_t mono_ns; /* the entry's earliest apply on any node */
};

static int cmp_pos(uint64_t ia, uint32_t oa, uint64_t ib, uint32_t ob)
{
        if (ia != ib) {
                return ia < ib ? -1 : 1;
        }
        return oa < ob ? -1 : oa > ob;
}

static int cmp_wev(const void *p, const void *q)
{
        const struct wev *x = p, *y = q;

        if (x->key != y->key) {
                return x->key < y->key ? -1 : 1;
        }
        return cmp_pos(x->index, x->ord, y->index, y->ord);
}

static bool watch_relevant(const struct applylog_event *ev)
{
        return ev->type == APPLYLOG_GRANT || ev->type == APPLYLOG_RELEASE ||
               ev->type == APPLYLOG_PROCLAIM;
}

static int kind_of(const struct applylog_event *ev)
{
        return ev->type == APPLYLOG_GRANT     ? HISTORY_OBS_GRANTED
               : ev->type == APPLYLOG_RELEASE ? HISTORY_OBS_RELEASED
                                              : HISTORY_OBS_PROCLAIMED;
}

static const char *kind_name(int kind)
{
        switch (kind) {
        case HISTORY_OBS_GRANTED:
                return "granted";
        case HISTORY_OBS_RELEASED:
                return "released";
        case HISTORY_OBS_PROCLAIMED:
                return "proclaimed";
        default:
                return "unknown";
        }
}

/* The observer's name of an apply log's mode (observe.c's), NULL when the
 * line has none. */
static const char *mode_name(int mode)
{
        switch (mode) {
        case APPLYLOG_MODE_EXCLUSIVE:
                return "exclusive";
        case APPLYLOG_MODE_SHARED:
                return "shared";
        case APPLYLOG_MODE_SEMAPHORE:
                return "semaphore";
        case APPLYLOG_MODE_LEADER:
                return "leader";
        case APPLYLOG_MODE_NONE:
                return NULL;
        default:
                return "unknown";
        }
}

/* Every watch event of the names `watched` (by name id) in the merged
 * log, by name, then position; the indexes of entries no node logged in
 * full into `*cut` (sorted). */
static struct wev *collect(const struct run *r, const bool *watched,
                           size_t *n_out, uint64_t **cut, size_t *n_cut)
{
        const struct applylog *a = &r->applylog;
        struct wev *v = NULL;
        size_t n = 0, cap = 0, cap_cut = 0, i, j, m;

        *cut = NULL;
        *n_cut = 0;
        for (i = 0; i < a->n_merged; i++) {
                const struct applylog_ref *ref = &a->merged[i];
                const struct applylog_event *ev = applylog_events(a, ref, &m);
                uint32_t ord = 0;
                if (!a->nodes[ref->node].entries[ref->entry].complete) {
                        util_push((void **)cut, n_cut, &cap_cut, &ref->index,
                                  sizeof ref->index);
                }
                for (j = 0; j < m; j++) {
                        if (!watch_relevant(&ev[j])) {
                                continue;
                        }
                        ord++;
                        if (ev[j].lock >= 0 && watched[ev[j].lock]) {
                                struct wev w = {ev[j].lock, ev[j].index, ord,
                                                &ev[j], ref->mono_ns};
                                util_push((void **)&v, &n, &cap, &w, sizeof w);
                        }
                }
        }
        util_sort(v, n, sizeof *v, cmp_wev);
        *n_out = n;
        return v;
}

/* The watch event at (index, ord) of any name in the merged log, or NULL;
 * `*logged` says whether that entry is there, `*complete` whether in
 * full. */
static const struct applylog_event *event_at(const struct run *r,
                                             uint64_t index, uint32_t ord,
                                             bool *logged, bool *complete)
{
        const struct applylog *a = &r->applylog;
        const struct applylog_ref *ref = applylog_find(a, index);
        const struct applylog_event *ev;
        uint32_t k = 0;
        size_t m, j;

        *logged = ref != NULL;
        *complete = false;
        if (ref == NULL) {
                return NULL;
        }
        *complete = a->nodes[ref->node].entries[ref->entry].complete;
        ev = applylog_events(a, ref, &m);
        for (j = 0; j < m; j++) {
                if (watch_relevant(&ev[j]) && ++k == ord) {
                        return &ev[j];
                }
        }
        return NULL;
}

/* Whether an entry in (from, to] was logged by no node in full. */
static bool cut_between(const uint64_t *cut, size_t n_cut, uint64_t from,
                        uint64_t to)
{
        size_t i;

        for (i = 0; i < n_cut; i++) {
                if (cut[i] > from && cut[i] <= to) {
                        return true;
                }
        }
        return false;
}

/* The range of `v` (sorted by cmp_wev) of name `key`. */
static const struct wev *of_key(const struct wev *v, size_t n, int key,
                                size_t *count)
{
        size_t lo = 0, hi = n, from;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (v[mid].key < key) {
                        lo = mid + 1;
                } else {
                        hi = mid;
                }
        }
        from = lo;
        while (lo < n && v[lo].key == key) {
                lo++;
        }
        *count = lo - from;
        return v + from;
}

/* The position of (index, ord) in `evs` (n of them), or -1. */
static long find_pos(const struct wev *evs, size_t n, uint64_t index,
                     uint32_t ord)
{
        size_t lo = 0, hi = n;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (cmp_pos(evs[mid].index, evs[mid].ord, index, ord) < 0) {
                        lo = mid + 1;
                } else {
                        hi = mid;
                }
        }
        return lo < n && evs[lo].index == index && evs[lo].ord == ord ? (long)lo
                                                                      : -1;
}

/* "GRANT (ACQUIRE) of election-0 session 5 token 12 value w1.0.3" */
static void describe(const struct run *r, const struct applylog_event *ev,
                     char *buf, size_t cap)
{
        const char *v = applylog_value(&r->applylog, ev);

        snprintf(buf, cap,
                 "%s (%s) of %s session %" PRIu64 " token %" PRIu64 "%s%s",
                 applylog_event_name(ev->type), applylog_cause_name(ev->cause),
                 run_name(r, ev->lock), ev->session, ev->token,
                 v[0] != '\0' ? " value " : "", v);
}

/* What differs between an observer's event and the apply log's, or
 * NULL. */
static const char *differs(const struct run *r, const struct history_obs *o,
                           const struct applylog_event *ev)
{
        const char *mode = mode_name(ev->mode);
        const char *value = applylog_value(&r->applylog, ev);

        if (o->kind != kind_of(ev)) {
                return "kind";
        }
        if (o->session != ev->session) {
                return "session";
        }
        if (o->token != ev->token) {
                return "token";
        }
        if (o->owner != ev->owner) {
                return "owner";
        }
        if (mode != NULL && o->mode[0] != '\0' && strcmp(mode, o->mode) != 0) {
                return "mode";
        }
        /* A GRANT's and a PROCLAIM's value; a RELEASE carries none. */
        if (ev->type != APPLYLOG_RELEASE && ev->value >= 0 &&
            strcmp(value, o->value) != 0) {
                return "value";
        }
        return NULL;
}

struct s14 {
        const struct run *r;
        const struct wev *all;
        size_t n_all;
        const uint64_t *cut;
        size_t n_cut;
        bool clock_fault;
        struct check_note bad, unknown;
        size_t n_gaps, n_order, n_wrong, n_start;
        size_t n_events, n_opens, n_resumes, n_compacted, n_ends,
            n_starts_checked;
};

/* The run of one observer: the f=observe lines of file `file`, from
 * `first`, `n` of them. */
static void one_observer(struct s14 *s, const struct history_obs *lines,
                         size_t n)
{
        const struct run *r = s->r;
        int watched = -1;
        bool anchored = false, has_last = false;
        long cur = -1; /* the last event matched, in evs */
        const struct wev *evs = NULL;
        size_t n_evs = 0, i;
        uint64_t last_index = 0;
        uint32_t last_ord = 0;
        int64_t open_t = -1; /* a from-now open not yet followed by an event */
        char what[300];

        for (i = 0; i < n; i++) {
                const struct history_obs *o = &lines[i];
                const char *who = r->history.files[o->file];
                const struct applylog_event *ev;
                bool logged, complete;
                const char *diff;
                long at;

                switch (o->type) {
                case HISTORY_OBS_OPEN:
                        s->n_opens++;
                        if (watched != o->key) {
                                watched = o->key;
                                evs = of_key(s->all, s->n_all, watched, &n_evs);
                                anchored = false;
                        }
                        if (o->from_last) {
                                s->n_resumes++;
                        } else {
                                anchored = false;
                                open_t = o->t;
                        }
                        continue;
                case HISTORY_OBS_COMPACTED:
                        s->n_compacted++;
                        anchored = false;
                        open_t = -1;
                        continue;
                case HISTORY_OBS_END:
                        s->n_ends++;
                        continue;
                default:
                        break;
                }
                s->n_events++;
                if (has_last &&
                    cmp_pos(o->index, o->ord, last_index, last_ord) <= 0) {
                        s->n_order++;
                        check_note(&s->bad,
                                   "observer %s:%u of %s: told (%" PRIu64
                                   ",%" PRIu32 ") %s after (%" PRIu64
                                   ",%" PRIu32 "): out of order or twice",
                                   who, o->line, run_name(r, o->key), o->index,
                                   o->ord, kind_name(o->kind), last_index,
                                   last_ord);
                        continue;
                }
                has_last = true;
                last_index = o->index;
                last_ord = o->ord;
                if (watched < 0 || o->key != watched) {
                        s->n_wrong++;
                        check_note(&s->bad,
                                   "observer %s:%u watching %s: told (%" PRIu64
                                   ",%" PRIu32 ") %s of %s",
                                   who, o->line, run_name(r, watched), o->index,
                                   o->ord, kind_name(o->kind),
                                   run_name(r, o->key));
                        anchored = false;
                        continue;
                }
                at = find_pos(evs, n_evs, o->index, o->ord);
                if (at < 0) {
                        ev = event_at(r, o->index, o->ord, &logged, &complete);
                        if (ev == NULL && (!logged || !complete)) {
                                check_note(&s->unknown,
                                           "observer %s:%u of %s: (%" PRIu64
                                           ",%" PRIu32 ") is in no apply log%s",
                                           who, o->line, run_name(r, o->key),
                                           o->index, o->ord,
                                           logged ? " in full" : "");
                        } else {
                                s->n_wrong++;
                                if (ev != NULL) {
                                        describe(r, ev, what, sizeof what);
                                } else {
                                        snprintf(what, sizeof what,
                                                 "no such event");
                                }
                                check_note(
                                    &s->bad,
                                    "observer %s:%u of %s: told (%" PRIu64
                                    ",%" PRIu32 ") %s token %" PRIu64
                                    ", but the apply logs have there: "
                                    "%s",
                                    who, o->line, run_name(r, o->key), o->index,
                                    o->ord, kind_name(o->kind), o->token, what);
                        }
                        anchored = false;
                        continue;
                }
                diff = differs(r, o, evs[at].ev);
                if (diff != NULL) {
                        s->n_wrong++;
                        describe(r, evs[at].ev, what, sizeof what);
                        check_note(&s->bad,
                                   "observer %s:%u of %s: (%" PRIu64 ",%" PRIu32
                                   ") %s session %" PRIu64 " token %" PRIu64
                                   " differs in its %s from the apply logs' %s",
                                   who, o->line, run_name(r, o->key), o->index,
                                   o->ord, kind_name(o->kind), o->session,
                                   o->token, diff, what);
                }
                if (anchored && at != cur + 1) {
                        const struct wev *miss = &evs[cur + 1];
                        if (cut_between(s->cut, s->n_cut, evs[cur].index,
                                        o->index)) {
                                check_note(&s->unknown,
                                           "observer %s:%u of %s: %ld events "
                                           "between (%" PRIu64 ",%" PRIu32
                                           ") and (%" PRIu64 ",%" PRIu32
                                           "), and an entry between them no "
                                           "node logged in full",
                                           who, o->line, run_name(r, o->key),
                                           at - cur - 1, evs[cur].index,
                                           evs[cur].ord, o->index, o->ord);
                        } else {
                                s->n_gaps++;
                                describe(r, miss->ev, what, sizeof what);
                                check_note(
                                    &s->bad,
                                    "observer %s:%u of %s: gap: told (%" PRIu64
                                    ",%" PRIu32 ") %s right after (%" PRIu64
                                    ",%" PRIu32 "); the apply logs have %ld "
                                    "event(s) of it in between, first (%" PRIu64
                                    ",%" PRIu32 ") %s",
                                    who, o->line, run_name(r, o->key), o->index,
                                    o->ord, kind_name(o->kind), evs[cur].index,
                                    evs[cur].ord, at - cur - 1, miss->index,
                                    miss->ord, what);
                        }
                } else if (!anchored && open_t >= 0 && !s->clock_fault) {
                        /* Earliest applies grow with the index: the first
                         * event applied after the open is enough. */
                        long k = at;
                        s->n_starts_checked++;
                        while (k > 0 && evs[k - 1].mono_ns > open_t) {
                                k--;
                        }
                        if (k < at) {
                                s->n_start++;
                                describe(r, evs[k].ev, what, sizeof what);
                                check_note(
                                    &s->bad,
                                    "observer %s:%u of %s: gap at the start: "
                                    "its watch opened from now at %" PRId64
                                    ", its first event is (%" PRIu64 ",%" PRIu32
                                    "), but (%" PRIu64 ",%" PRIu32
                                    ") %s was first applied at %" PRId64
                                    ", after the open (%ld such)",
                                    who, o->line, run_name(r, o->key), open_t,
                                    o->index, o->ord, evs[k].index, evs[k].ord,
                                    what, evs[k].mono_ns, at - k);
                        }
                }
                anchored = true;
                cur = at;
                open_t = -1;
        }
}

void check_s14(const struct run *r, struct check_result *res)
{
        const struct history *h = &r->history;
        bool *watched = util_calloc(r->names.n + 1, sizeof *watched);
        struct s14 s;
        uint64_t *cut;
        struct wev *all;
        size_t i, j, n_observers = 0, n_names = 0;

        memset(&s, 0, sizeof s);
        s.r = r;
        s.clock_fault = run_clock_fault(r);
        if (h->n_obs == 0) {
                check_set(res, CHECK_PASS,
                          "no observers (the election workload's workers "
                          "watch their election)");
                free(watched);
                return;
        }
        for (i = 0; i < h->n_obs; i++) {
                if (h->obs[i].key >= 0 && !watched[h->obs[i].key]) {
                        watched[h->obs[i].key] = true;
                        n_names++;
                }
        }
        all = collect(r, watched, &s.n_all, &cut, &s.n_cut);
        s.all = all;
        s.cut = cut;
        /* The observer lines are in file order: one observer per file. */
        for (i = 0; i < h->n_obs; i = j) {
                for (j = i + 1;
                     j < h->n_obs && h->obs[j].file == h->obs[i].file; j++) {
                }
                n_observers++;
                one_observer(&s, &h->obs[i], j - i);
        }
        if (s.bad.count > 0) {
                check_set(res, CHECK_FAIL,
                          "%s (%zu gaps, %zu at a start, %zu out of order, "
                          "%zu unlike the apply logs)",
                          s.bad.first, s.n_gaps, s.n_start, s.n_order,
                          s.n_wrong);
        } else if (r->applylog.n_merged == 0 && s.n_events > 0) {
                check_set(res, CHECK_UNKNOWN,
                          "%zu events of %zu observers, but no apply logs",
                          s.n_events, n_observers);
        } else if (s.unknown.count > 0) {
                check_set(res, CHECK_UNKNOWN, "%s (%zu undecided)",
                          s.unknown.first, s.unknown.count);
        } else {
                check_set(res, CHECK_PASS,
                          "%zu observers of %zu names told %zu events, each "
                          "the next of its name in the apply logs (%zu of "
                          "them there), in order (%zu watches opened: %zu "
                          "resumed after an end, %zu ends, %zu compacted "
                          "restarts; %s)",
                          n_observers, n_names, s.n_events, s.n_all, s.n_opens,
                          s.n_resumes, s.n_ends, s.n_compacted,
                          s.clock_fault ? "starts not checked: clock fault"
                                        : "starts checked against the apply "
                                          "times");
        }
        free(all);
        free(cut);
        free(watched);
}
