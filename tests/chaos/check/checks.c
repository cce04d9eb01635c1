/*
 * The checkers of a chaos run. How each decides ("the log" is the merged
 * apply log of struct applylog, read in index order and, within an entry,
 * in event order; a verdict is FAIL on the first proof, UNKNOWN when the
 * evidence is missing, PASS otherwise; the detail names the first problem
 * and counts the rest):
 *
 * S1  Per lock, a GRANT while an earlier grant is live fails. A grant ends
 *     at the RELEASE of its token or at the END of its session.
 * S2  Per lock, for ok acquires A and B with A completed before B was
 *     invoked, token(A) < token(B); equal tokens of one session are a
 *     reentrant acquire.
 * S3  Each ok acquire's token is the index of a GRANT of that lock to that
 *     session (unless the history has no session for it). An index inside
 *     the logged range that no node logged cannot be a grant (every command
 *     leaves a RESULT); one outside it is UNKNOWN. Two processes (or two
 *     named sessions) told the same token of a lock fail.
 * S4  Each ok release has a RELEASE command of that lock and token in the
 *     log (its RELEASE event, or for a reentrant hold its successful
 *     RESULT); each ok close an END of its session; each ok write an
 *     accepted register write of that worker, key, value and base version;
 *     and each register key ends at value = its number of accepted writes
 *     (each write is the value read + 1). Missing logs make it UNKNOWN.
 * S5  Per register key, in log order: accepted tokens never go down, and
 *     each accepted write's base version is the version current then
 *     (else a lost update, reported with the writer it overwrote).
 * S6  Each refusal (token t < max m) is a fencing save when grant t of that
 *     lock ended (its RELEASE, or its session's END) at an index <= m:
 *     a handoff releases and grants in one entry, release first. Otherwise
 *     the two grants overlapped: FAIL. Grants not found: UNKNOWN.
 * S7  Per lock, lincheck_run() over the operations of linops.h.
 * S8  Per lock, replaying QUEUE, UNQUEUE and GRANT: a handoff (a GRANT
 *     made by another command than the waiter's own ACQUIRE) goes to the
 *     head of the queue; a GRANT made by the acquirer's own ACQUIRE finds
 *     the queue empty; no GRANT or QUEUE for a session after its END.
 * S9  Every index two nodes logged has the same events (all fields but
 *     mono_ns; a term of 0 matches any); an entry cut short compares as a
 *     prefix; a node that applied an index twice (a restart) applied it
 *     the same way.
 * S10 (a) Unless the plan ran a clock fault: an END by EXPIRE, applied
 *     first at mono_ns T, fails if its session's worker reported, on a
 *     completion before T, a lease end after T. (b) After a session's END
 *     only refusals happen to it: UNQUEUE, a RESULT with an error, or a
 *     retried CLOSE answered CLOSED again.
 * L1  After the last heal-all, every worker has an ok acquire and an ok
 *     release marked phase=final completing within 15 s of it.
 * L2  Between successive ok completions (all workers, all operations) a
 *     gap of 2 s or more fails unless a fault interval, extended by the
 *     plan's TTL plus two election timeouts, overlaps it.
 * L3  At the end of the log no lock is held and no waiter queued.
 * L4  Every exit in RUN/exits was expected, and no node.log or worker
 *     stderr holds "AddressSanitizer", "runtime error", "Assertion" or
 *     "LeakSanitizer".
 */
#include "checks.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lincheck.h"
#include "linops.h"

#define SEC INT64_C(1000000000)

/* L1: the final acquire and release must complete this soon after the
 * final heal. */
#define FINAL_WITHIN_NS (15 * SEC)

/* L2: a window this long without an ok completion is unavailability. */
#define GAP_NS (2 * SEC)

static const char *const names[CHECK_COUNT] = {
    "S1", "S2", "S3",  "S4", "S5", "S6", "S7",
    "S8", "S9", "S10", "L1", "L2", "L3", "L4",
};

static const char *const verdicts[] = {"PASS", "FAIL", "UNKNOWN"};

const char *checks_name(int id)
{
        return id >= 0 && id < CHECK_COUNT ? names[id] : "?";
}

int checks_parse_name(const char *s)
{
        int i;

        for (i = 0; i < CHECK_COUNT; i++) {
                if (strcmp(s, names[i]) == 0) {
                        return i;
                }
        }
        return -1;
}

const char *checks_verdict_name(int verdict)
{
        return verdict >= 0 && verdict <= CHECK_UNKNOWN ? verdicts[verdict]
                                                        : "?";
}

int checks_parse_verdict(const char *s)
{
        int i;

        for (i = 0; i <= CHECK_UNKNOWN; i++) {
                if (strcmp(s, verdicts[i]) == 0) {
                        return i;
                }
        }
        return -1;
}

void checks_options_init(struct check_options *o)
{
        o->budget = LINCHECK_DEFAULT_BUDGET;
}

int checks_exit_status(const struct check_result res[CHECK_COUNT])
{
        bool safety = false, liveness = false, unknown = false;
        int i;

        for (i = 0; i < CHECK_COUNT; i++) {
                if (res[i].verdict == CHECK_FAIL) {
                        if (i <= CHECK_S10) {
                                safety = true;
                        } else {
                                liveness = true;
                        }
                } else if (res[i].verdict == CHECK_UNKNOWN) {
                        unknown = true;
                }
        }
        if (safety) {
                return 1;
        }
        if (liveness) {
                return 3;
        }
        return unknown ? 2 : 0;
}

/* Set a verdict; the detail is made one line. */
__attribute__((format(printf, 3, 4))) static void
set(struct check_result *res, int verdict, const char *fmt, ...)
{
        va_list ap;
        char *p;

        res->verdict = verdict;
        va_start(ap, fmt);
        vsnprintf(res->detail, sizeof res->detail, fmt, ap);
        va_end(ap);
        for (p = res->detail; *p != '\0'; p++) {
                if (*p == '\n' || *p == '\r' || *p == '\t') {
                        *p = ' ';
                }
        }
}

/* A first-failure note: keeps the first message and counts the rest. */
struct note {
        size_t count;
        char first[400];
};

__attribute__((format(printf, 2, 3))) static void note(struct note *n,
                                                       const char *fmt, ...)
{
        va_list ap;

        if (n->count++ > 0) {
                return;
        }
        va_start(ap, fmt);
        vsnprintf(n->first, sizeof n->first, fmt, ap);
        va_end(ap);
}

static double secs(int64_t ns)
{
        return (double)ns / 1e9;
}

/* The event that made grant `token` of `lock` (a GRANT at index = token),
 * or NULL; `*logged` says whether any node logged that index at all. */
static const struct applylog_event *grant_at(const struct run *r, int lock,
                                             uint64_t token, bool *logged)
{
        const struct applylog_ref *ref = applylog_find(&r->applylog, token);
        const struct applylog_event *ev;
        size_t n, i;

        *logged = ref != NULL;
        if (ref == NULL) {
                return NULL;
        }
        ev = applylog_events(&r->applylog, ref, &n);
        for (i = 0; i < n; i++) {
                if (ev[i].type == APPLYLOG_GRANT && ev[i].lock == lock &&
                    ev[i].token == token) {
                        return &ev[i];
                }
        }
        return NULL;
}

/* Whether `ev` comes after the END of its session. */
static bool after_end(const struct run *r, const struct applylog_event *ev,
                      uint64_t *end_index)
{
        const struct applylog_fact *end;

        if (ev->session == 0) {
                return false;
        }
        end = applylog_end(&r->applylog, ev->session);
        if (end == NULL || ev->index <= end->index) {
                return false;
        }
        *end_index = end->index;
        return true;
}

/* --- S1, S8, L3: one replay of the merged apply log ----------------------- */

struct waiter {
        uint64_t session;
        uint64_t seq;
};

/* A lock during the replay. */
struct lockstate {
        bool held;
        uint64_t session, token;
        struct waiter *queue; /* FIFO */
        size_t n_queue, cap_queue;
};

struct replay {
        const struct run *r;
        struct lockstate *locks;          /* by name id */
        struct applylog_fact *by_session; /* grants by session, lock */
        size_t n_grants, n_handoffs, n_queued;
        struct note s1, s8;
};

static int cmp_by_session(const void *p, const void *q)
{
        const struct applylog_fact *x = p, *y = q;

        if (x->session != y->session) {
                return x->session < y->session ? -1 : 1;
        }
        return x->lock < y->lock ? -1 : x->lock > y->lock;
}

static bool queue_remove(struct lockstate *l, uint64_t session, uint64_t seq)
{
        size_t i;

        for (i = 0; i < l->n_queue; i++) {
                if (l->queue[i].session == session && l->queue[i].seq == seq) {
                        memmove(&l->queue[i], &l->queue[i + 1],
                                (l->n_queue - i - 1) * sizeof *l->queue);
                        l->n_queue--;
                        return true;
                }
        }
        return false;
}

static void on_grant(struct replay *rp, const struct applylog_event *ev)
{
        const struct run *r = rp->r;
        struct lockstate *l = &rp->locks[ev->lock];
        const char *name = run_name(r, ev->lock);
        uint64_t end;

        rp->n_grants++;
        /* S1: the previous grant must have ended. */
        if (l->held) {
                note(&rp->s1,
                     "lock %s: GRANT at index %" PRIu64 " to session %" PRIu64
                     " while token %" PRIu64 " of session %" PRIu64 " was live",
                     name, ev->index, ev->session, l->token, l->session);
        }
        /* S8: never to an ended session; a handoff (a grant made by another
         * session's RELEASE, CLOSE or EXPIRE) goes to the head of the
         * queue; a grant made by the waiter's own ACQUIRE finds the lock
         * free, and a free lock has no queue. */
        if (after_end(r, ev, &end)) {
                note(&rp->s8,
                     "lock %s: GRANT at index %" PRIu64 " to session %" PRIu64
                     " after its END at %" PRIu64,
                     name, ev->index, ev->session, end);
        }
        if (ev->cause == APPLYLOG_C_ACQUIRE) {
                if (l->n_queue > 0) {
                        note(&rp->s8,
                             "lock %s: GRANT at index %" PRIu64
                             " to a new ACQUIRE of session %" PRIu64
                             " while session %" PRIu64 " was queued",
                             name, ev->index, ev->session, l->queue[0].session);
                }
                queue_remove(l, ev->session, ev->seq);
        } else {
                rp->n_handoffs++;
                if (l->n_queue > 0 && l->queue[0].session == ev->session &&
                    l->queue[0].seq == ev->seq) {
                        queue_remove(l, ev->session, ev->seq);
                } else if (queue_remove(l, ev->session, ev->seq)) {
                        note(&rp->s8,
                             "lock %s: GRANT at index %" PRIu64
                             " to session %" PRIu64 " (seq %" PRIu64
                             ") ahead of session %" PRIu64 " (seq %" PRIu64
                             "), queued earlier",
                             name, ev->index, ev->session, ev->seq,
                             l->queue[0].session, l->queue[0].seq);
                } else {
                        note(&rp->s8,
                             "lock %s: GRANT at index %" PRIu64
                             " (%s) to session %" PRIu64 " (seq %" PRIu64
                             "), which was not queued",
                             name, ev->index, applylog_cause_name(ev->cause),
                             ev->session, ev->seq);
                }
        }
        l->held = true;
        l->session = ev->session;
        l->token = ev->token;
}

/* END: the session's grants end with it (the state machine reports their
 * RELEASEs first; this only matters if it did not). */
static void on_end(struct replay *rp, const struct applylog_event *ev)
{
        struct applylog_fact key = {.session = ev->session, .lock = -1};
        size_t lo = 0, hi = rp->r->applylog.n_grants;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (cmp_by_session(&rp->by_session[mid], &key) < 0) {
                        lo = mid + 1;
                } else {
                        hi = mid;
                }
        }
        for (; lo < rp->r->applylog.n_grants &&
               rp->by_session[lo].session == ev->session;
             lo++) {
                struct lockstate *l = &rp->locks[rp->by_session[lo].lock];
                if (l->held && l->session == ev->session) {
                        l->held = false;
                }
        }
}

static void replay_event(struct replay *rp, const struct applylog_event *ev)
{
        struct lockstate *l = ev->lock >= 0 ? &rp->locks[ev->lock] : NULL;
        uint64_t end;

        switch (ev->type) {
        case APPLYLOG_GRANT:
                if (l != NULL) {
                        on_grant(rp, ev);
                }
                break;
        case APPLYLOG_RELEASE:
                /* A RELEASE of another token than the live one changes
                 * nothing here; S4 and S6 look at releases by token. */
                if (l != NULL && l->held && l->token == ev->token) {
                        l->held = false;
                }
                break;
        case APPLYLOG_QUEUE:
                if (l == NULL) {
                        break;
                }
                rp->n_queued++;
                if (after_end(rp->r, ev, &end)) {
                        note(&rp->s8,
                             "lock %s: QUEUE at index %" PRIu64
                             " of session %" PRIu64
                             " after its END at %" PRIu64,
                             run_name(rp->r, ev->lock), ev->index, ev->session,
                             end);
                }
                util_push((void **)&l->queue, &l->n_queue, &l->cap_queue,
                          &(struct waiter){ev->session, ev->seq},
                          sizeof(struct waiter));
                break;
        case APPLYLOG_UNQUEUE:
                if (l != NULL) {
                        queue_remove(l, ev->session, ev->seq);
                }
                break;
        case APPLYLOG_END:
                on_end(rp, ev);
                break;
        default:
                break;
        }
}

static void check_replay(const struct run *r, struct check_result *s1,
                         struct check_result *s8, struct check_result *l3)
{
        const struct applylog *a = &r->applylog;
        struct replay rp;
        struct note left = {0, ""};
        size_t i, j, n, held = 0, waiting = 0;

        memset(&rp, 0, sizeof rp);
        rp.r = r;
        rp.locks = util_calloc(r->names.n, sizeof *rp.locks);
        rp.by_session = util_calloc(a->n_grants, sizeof *rp.by_session);
        if (a->n_grants > 0) {
                memcpy(rp.by_session, a->grants,
                       a->n_grants * sizeof *a->grants);
        }
        util_sort(rp.by_session, a->n_grants, sizeof *rp.by_session,
                  cmp_by_session);
        for (i = 0; i < a->n_merged; i++) {
                const struct applylog_event *ev =
                    applylog_events(a, &a->merged[i], &n);
                for (j = 0; j < n; j++) {
                        replay_event(&rp, &ev[j]);
                }
        }
        for (i = 0; i < r->names.n; i++) {
                struct lockstate *l = &rp.locks[i];
                if (l->held) {
                        held++;
                        note(&left,
                             "lock %s held by session %" PRIu64
                             " (token %" PRIu64 ")",
                             run_name(r, (int)i), l->session, l->token);
                }
                if (l->n_queue > 0) {
                        waiting += l->n_queue;
                        note(&left,
                             "lock %s has %zu queued waiter(s), first "
                             "session %" PRIu64,
                             run_name(r, (int)i), l->n_queue,
                             l->queue[0].session);
                }
                free(l->queue);
        }
        if (rp.s1.count > 0) {
                set(s1, CHECK_FAIL, "%s (%zu overlapping grants)", rp.s1.first,
                    rp.s1.count);
        } else {
                set(s1, CHECK_PASS,
                    "%zu grants over %zu indexes, each ended before the next",
                    rp.n_grants, a->n_merged);
        }
        if (rp.s8.count > 0) {
                set(s8, CHECK_FAIL, "%s (%zu violations)", rp.s8.first,
                    rp.s8.count);
        } else {
                set(s8, CHECK_PASS,
                    "%zu waiters queued, %zu handoffs in queue order",
                    rp.n_queued, rp.n_handoffs);
        }
        if (left.count > 0) {
                set(l3, CHECK_FAIL,
                    "at index %" PRIu64 ": %zu locks held, %zu waiters "
                    "queued; %s",
                    a->n_merged > 0 ? a->merged[a->n_merged - 1].index : 0,
                    held, waiting, left.first);
        } else {
                set(l3, CHECK_PASS,
                    "at index %" PRIu64 " every lock is free and every "
                    "queue empty",
                    a->n_merged > 0 ? a->merged[a->n_merged - 1].index : 0);
        }
        free(rp.by_session);
        free(rp.locks);
}

/* --- S2 ------------------------------------------------------------------- */

/* An ok acquire, for S2 and S3. */
struct acq {
        int key;
        uint64_t token;
        uint64_t session;
        uint64_t process;
        int worker;
        int64_t invoke_ns, complete_ns;
};

static int cmp_acq_complete(const void *p, const void *q)
{
        const struct acq *x = p, *y = q;

        if (x->key != y->key) {
                return x->key < y->key ? -1 : 1;
        }
        return x->complete_ns < y->complete_ns
                   ? -1
                   : x->complete_ns > y->complete_ns;
}

static int cmp_acq_invoke(const void *p, const void *q)
{
        const struct acq *x = p, *y = q;

        if (x->key != y->key) {
                return x->key < y->key ? -1 : 1;
        }
        return x->invoke_ns < y->invoke_ns ? -1 : x->invoke_ns > y->invoke_ns;
}

static int cmp_acq_token(const void *p, const void *q)
{
        const struct acq *x = p, *y = q;

        if (x->key != y->key) {
                return x->key < y->key ? -1 : 1;
        }
        return x->token < y->token ? -1 : x->token > y->token;
}

static struct acq *ok_acquires(const struct run *r, size_t *n)
{
        struct acq *v = NULL;
        size_t cap = 0, i;

        *n = 0;
        for (i = 0; i < r->history.n; i++) {
                const struct history_op *h = &r->history.ops[i];
                if (h->f == HISTORY_ACQUIRE && h->type == HISTORY_OK &&
                    h->key >= 0 && h->has_token) {
                        struct acq a = {h->key,        h->token,  h->session,
                                        h->process,    h->worker, h->invoke_ns,
                                        h->complete_ns};
                        util_push((void **)&v, n, &cap, &a, sizeof a);
                }
        }
        return v;
}

/*
 * For each lock, sweep the acquires by invoke time while adding, by
 * completion time, those that completed before: the highest token among
 * them must be below the new acquire's. An equal token of the same session
 * is a reentrant acquire, not a violation.
 */
static void check_s2(const struct run *r, struct check_result *res)
{
        size_t n, i, j, k, a_at;
        struct acq *by_c = ok_acquires(r, &n);
        struct acq *by_i = util_calloc(n, sizeof *by_i);
        struct note bad = {0, ""};

        if (n > 0) {
                memcpy(by_i, by_c, n * sizeof *by_c);
        }
        util_sort(by_c, n, sizeof *by_c, cmp_acq_complete);
        util_sort(by_i, n, sizeof *by_i, cmp_acq_invoke);
        for (i = 0, a_at = 0; i < n; i = j) {
                const struct acq *max = NULL;
                int key = by_i[i].key;

                while (a_at < n && by_c[a_at].key < key) {
                        a_at++;
                }
                for (j = i; j < n && by_i[j].key == key; j++) {
                        const struct acq *b = &by_i[j];
                        for (k = a_at; k < n && by_c[k].key == key &&
                                       by_c[k].complete_ns < b->invoke_ns;
                             k++) {
                                if (max == NULL || by_c[k].token > max->token) {
                                        max = &by_c[k];
                                }
                        }
                        a_at = k;
                        if (max == NULL || (max->token < b->token) ||
                            (max->token == b->token &&
                             max->session == b->session && b->session != 0)) {
                                continue;
                        }
                        note(&bad,
                             "lock %s: w%d's acquire got token %" PRIu64
                             " and completed at %" PRId64
                             " before w%d's acquire, invoked at %" PRId64
                             ", got token %" PRIu64,
                             run_name(r, key), max->worker, max->token,
                             max->complete_ns, b->worker, b->invoke_ns,
                             b->token);
                }
        }
        if (bad.count > 0) {
                set(res, CHECK_FAIL, "%s (%zu acquires)", bad.first, bad.count);
        } else {
                set(res, CHECK_PASS,
                    "%zu ok acquires: tokens increase in real-time order", n);
        }
        free(by_c);
        free(by_i);
}

/* --- S3 ------------------------------------------------------------------- */

static void check_s3(const struct run *r, struct check_result *res)
{
        const struct applylog *a = &r->applylog;
        size_t n, i;
        struct acq *v = ok_acquires(r, &n);
        struct note bad = {0, ""}, unknown = {0, ""};

        for (i = 0; i < n; i++) {
                bool logged;
                const struct applylog_event *g =
                    grant_at(r, v[i].key, v[i].token, &logged);
                /* Every command leaves at least a RESULT, so an index inside
                 * the logged range that no node logged was no command (a
                 * barrier, a configuration): surely no grant. Outside the
                 * range the logs just do not tell. */
                bool within = a->n_merged > 0 &&
                              v[i].token >= a->merged[0].index &&
                              v[i].token <= a->merged[a->n_merged - 1].index;
                if (!logged && !within) {
                        note(&unknown,
                             "no apply log reaches index %" PRIu64
                             " (w%d's token for lock %s)",
                             v[i].token, v[i].worker, run_name(r, v[i].key));
                } else if (g == NULL) {
                        note(&bad,
                             "lock %s: w%d was told token %" PRIu64
                             " but index %" PRIu64 " is no GRANT of it",
                             run_name(r, v[i].key), v[i].worker, v[i].token,
                             v[i].token);
                } else if (v[i].session != 0 && g->session != v[i].session) {
                        note(&bad,
                             "lock %s: w%d (session %" PRIu64
                             ") was told token %" PRIu64
                             ", granted to session %" PRIu64,
                             run_name(r, v[i].key), v[i].worker, v[i].session,
                             v[i].token, g->session);
                }
        }
        /* One token, one session: a process is one handle, so two processes
         * reporting a token are two sessions. */
        util_sort(v, n, sizeof *v, cmp_acq_token);
        for (i = 1; i < n; i++) {
                const struct acq *x = &v[i - 1], *y = &v[i];
                if (x->key != y->key || x->token != y->token) {
                        continue;
                }
                if (x->process != y->process ||
                    (x->session != 0 && y->session != 0 &&
                     x->session != y->session)) {
                        note(&bad,
                             "lock %s: token %" PRIu64
                             " reported to w%d (p=%" PRIu64
                             ") and w%d (p=%" PRIu64 ")",
                             run_name(r, x->key), x->token, x->worker,
                             x->process, y->worker, y->process);
                }
        }
        if (bad.count > 0) {
                set(res, CHECK_FAIL, "%s (%zu problems)", bad.first, bad.count);
        } else if (unknown.count > 0) {
                set(res, CHECK_UNKNOWN, "%s (%zu grants not in any log)",
                    unknown.first, unknown.count);
        } else {
                set(res, CHECK_PASS,
                    "%zu ok acquires: each a committed GRANT to its session "
                    "at index = token, tokens unique",
                    n);
        }
        free(v);
}

/* --- S4, S5 --------------------------------------------------------------- */

/* An accepted write of the register log, for matching the history's. */
struct wr {
        int key;
        int worker;
        uint64_t value;
        uint64_t based;
};

static int cmp_wr(const void *p, const void *q)
{
        const struct wr *x = p, *y = q;

        if (x->key != y->key) {
                return x->key < y->key ? -1 : 1;
        }
        if (x->worker != y->worker) {
                return x->worker < y->worker ? -1 : 1;
        }
        if (x->value != y->value) {
                return x->value < y->value ? -1 : 1;
        }
        return x->based < y->based ? -1 : x->based > y->based;
}

/* Per register key: the accepted writes, the last value and version. */
struct regkey {
        size_t writes;
        uint64_t value;
        uint64_t version;
        uint64_t token; /* the highest accepted */
        bool any;
        int last_worker;
        uint64_t last_token;
};

static void check_s4(const struct run *r, struct check_result *res)
{
        const struct reglog *rl = &r->reglog;
        struct regkey *keys = util_calloc(r->names.n, sizeof *keys);
        struct wr *wrs = NULL;
        size_t n_wrs = 0, cap = 0, i, checked = 0;
        struct note lost = {0, ""}, unknown = {0, ""};
        bool have_log = r->applylog.n_merged > 0;

        for (i = 0; i < rl->n; i++) {
                const struct reglog_line *l = &rl->lines[i];
                if (l->write && l->ok) {
                        struct wr w = {l->key, l->worker, l->value, l->based};
                        util_push((void **)&wrs, &n_wrs, &cap, &w, sizeof w);
                        keys[l->key].writes++;
                        keys[l->key].value = l->value;
                        keys[l->key].any = true;
                }
        }
        util_sort(wrs, n_wrs, sizeof *wrs, cmp_wr);
        for (i = 0; i < r->history.n; i++) {
                const struct history_op *h = &r->history.ops[i];
                size_t n, k;
                const struct applylog_fact *f;
                bool found = false;

                if (h->type != HISTORY_OK) {
                        continue;
                }
                if (h->f == HISTORY_RELEASE && h->key >= 0 && h->has_token) {
                        checked++;
                        if (!have_log) {
                                note(&unknown, "no apply logs");
                                continue;
                        }
                        f = applylog_releases(&r->applylog, h->key, h->token,
                                              &n);
                        for (k = 0; k < n && !found; k++) {
                                found = f[k].cause == APPLYLOG_C_RELEASE;
                        }
                        if (!found) {
                                note(&lost,
                                     "w%d's release of lock %s token %" PRIu64
                                     " (ok at %" PRId64 ") is in no apply log",
                                     h->worker, run_name(r, h->key), h->token,
                                     h->complete_ns);
                        }
                } else if (h->f == HISTORY_CLOSE &&
                           !(h->session_eff & HISTORY_SESSION_UNKNOWN)) {
                        checked++;
                        if (!have_log) {
                                note(&unknown, "no apply logs");
                        } else if (applylog_end(&r->applylog, h->session_eff) ==
                                   NULL) {
                                note(&lost,
                                     "w%d's close of session %" PRIu64
                                     " (ok at %" PRId64 ") has no END",
                                     h->worker, h->session_eff, h->complete_ns);
                        }
                } else if (h->f == HISTORY_WRITE && h->key >= 0 &&
                           h->has_value && h->has_version) {
                        struct wr w = {h->key, h->worker, h->value, h->version};
                        checked++;
                        if (!rl->present) {
                                note(&unknown, "no register log");
                        } else if (util_bsearch(&w, wrs, n_wrs, sizeof *wrs,
                                                cmp_wr) == NULL) {
                                note(&lost,
                                     "w%d's write of %" PRIu64
                                     " to %s (based on version %" PRIu64
                                     ", ok at %" PRId64
                                     ") was not accepted by the register",
                                     h->worker, h->value, run_name(r, h->key),
                                     h->version, h->complete_ns);
                        }
                }
        }
        /* Each accepted write wrote the value it read plus one: with no
         * lost update the final value is the number of writes. */
        for (i = 0; i < r->names.n; i++) {
                if (keys[i].any && keys[i].value != keys[i].writes) {
                        note(&lost,
                             "register %s ends at value %" PRIu64
                             " after %zu accepted writes",
                             run_name(r, (int)i), keys[i].value,
                             keys[i].writes);
                }
        }
        if (lost.count > 0) {
                set(res, CHECK_FAIL, "%s (%zu lost)", lost.first, lost.count);
        } else if (unknown.count > 0) {
                set(res, CHECK_UNKNOWN,
                    "%s: %zu acknowledged operations "
                    "unchecked",
                    unknown.first, unknown.count);
        } else {
                set(res, CHECK_PASS,
                    "%zu acknowledged releases, closes and writes all found; "
                    "%zu accepted writes",
                    checked, n_wrs);
        }
        free(keys);
        free(wrs);
}

static void check_s5(const struct run *r, struct check_result *res)
{
        const struct reglog *rl = &r->reglog;
        struct regkey *keys = util_calloc(r->names.n, sizeof *keys);
        struct note bad = {0, ""};
        size_t i, writes = 0, n_keys = 0;

        for (i = 0; i < rl->n; i++) {
                const struct reglog_line *l = &rl->lines[i];
                struct regkey *k = &keys[l->key];

                if (!l->ok) {
                        continue;
                }
                if (!k->any) {
                        n_keys++;
                }
                if (k->any && l->token < k->token) {
                        note(&bad,
                             "register %s: w%d's %s with token %" PRIu64
                             " accepted after token %" PRIu64
                             " (register.log:%u)",
                             run_name(r, l->key), l->worker,
                             l->write ? "write" : "read", l->token, k->token,
                             l->line);
                }
                if (!k->any || l->token > k->token) {
                        k->token = l->token;
                }
                k->any = true;
                if (!l->write) {
                        continue;
                }
                writes++;
                if (l->based != k->version) {
                        if (k->version > 0) {
                                note(&bad,
                                     "register %s: lost update: w%d's write "
                                     "(token %" PRIu64
                                     ") based on version %" PRIu64
                                     " accepted at version %" PRIu64
                                     ", last written by w%d (token %" PRIu64
                                     ") (register.log:%u)",
                                     run_name(r, l->key), l->worker, l->token,
                                     l->based, k->version, k->last_worker,
                                     k->last_token, l->line);
                        } else {
                                note(&bad,
                                     "register %s: w%d's write based on "
                                     "version %" PRIu64
                                     " accepted at version 0 "
                                     "(register.log:%u)",
                                     run_name(r, l->key), l->worker, l->based,
                                     l->line);
                        }
                }
                k->version = l->version;
                k->last_worker = l->worker;
                k->last_token = l->token;
        }
        if (bad.count > 0) {
                set(res, CHECK_FAIL, "%s (%zu violations)", bad.first,
                    bad.count);
        } else {
                set(res, CHECK_PASS,
                    "%zu accepted writes on %zu keys: tokens non-decreasing, "
                    "every write based on the current version (%zu "
                    "malformed or torn register lines skipped)",
                    writes, n_keys, rl->n_bad + rl->n_torn);
        }
        free(keys);
}

/* --- S6 ------------------------------------------------------------------- */

/* The index where grant `token` of `lock` ended: its first RELEASE event
 * (any cause), else its session's END; 0 if it never ended. */
static uint64_t grant_end(const struct run *r, int lock, uint64_t token,
                          uint64_t session)
{
        size_t n, i;
        const struct applylog_fact *f =
            applylog_releases(&r->applylog, lock, token, &n);
        const struct applylog_fact *end;

        for (i = 0; i < n; i++) {
                if (f[i].type == APPLYLOG_RELEASE) {
                        return f[i].index;
                }
        }
        end = applylog_end(&r->applylog, session);
        return end != NULL && end->index >= token ? end->index : 0;
}

static void check_s6(const struct run *r, struct check_result *res,
                     struct check_stats *st)
{
        const struct reglog *rl = &r->reglog;
        struct note bad = {0, ""}, unknown = {0, ""};
        size_t i, stale = 0, saves = 0;

        for (i = 0; i < rl->n; i++) {
                const struct reglog_line *l = &rl->lines[i];
                const struct applylog_event *gt, *gm;
                bool logged_t, logged_m;
                uint64_t ended;

                if (l->ok || l->token >= l->max) {
                        continue;
                }
                stale++;
                /* The register key is the lock's name. */
                gt = grant_at(r, l->key, l->token, &logged_t);
                gm = grant_at(r, l->key, l->max, &logged_m);
                if (gt == NULL || gm == NULL) {
                        note(&unknown,
                             "register %s: no GRANT of token %" PRIu64
                             " or %" PRIu64 " in the apply logs",
                             run_name(r, l->key), l->token, l->max);
                        continue;
                }
                /* A handoff ends the old grant and makes the new one in the
                 * same entry, RELEASE first: ending at index m is in time. */
                ended = grant_end(r, l->key, l->token, gt->session);
                if (ended != 0 && ended <= l->max) {
                        saves++;
                        continue;
                }
                note(&bad,
                     "register %s: w%d's token %" PRIu64
                     " refused (max %" PRIu64 "), but grant %" PRIu64
                     " (session %" PRIu64 ") %s when grant %" PRIu64
                     " (session %" PRIu64 ") was made: overlap",
                     run_name(r, l->key), l->worker, l->token, l->max, l->token,
                     gt->session, ended == 0 ? "never ended" : "had not ended",
                     l->max, gm->session);
        }
        st->fencing_saves = saves;
        if (bad.count > 0) {
                set(res, CHECK_FAIL, "%s (%zu overlaps, %zu fencing saves)",
                    bad.first, bad.count, saves);
        } else if (unknown.count > 0) {
                set(res, CHECK_UNKNOWN,
                    "%s (%zu of %zu refusals unclassified, %zu fencing saves)",
                    unknown.first, unknown.count, stale, saves);
        } else {
                set(res, CHECK_PASS,
                    "%zu stale refusals, %zu fencing saves, no overlap", stale,
                    saves);
        }
}

/* --- S7 ------------------------------------------------------------------- */

static void check_s7(const struct run *r, const struct check_options *o,
                     struct check_result *res)
{
        struct linops lo;
        struct note bad = {0, ""}, unknown = {0, ""};
        size_t i, fast = 0;
        uint64_t explored = 0;

        linops_build(&lo, r);
        for (i = 0; i < lo.n_keys; i++) {
                const struct linops_key *k = &lo.keys[i];
                struct lincheck_result out;
                int rv;

                memset(&out, 0, sizeof out);
                rv = lincheck_run(lo.ops + k->first, k->n, o->budget, &out);
                explored += out.explored;
                if (rv != 0) {
                        note(&unknown, "lock %s: the search failed (%d)",
                             run_name(r, k->key), rv);
                } else if (out.verdict == LINCHECK_INVALID) {
                        note(&bad, "lock %s: %s", run_name(r, k->key),
                             out.detail);
                } else if (out.verdict != LINCHECK_VALID) {
                        note(&unknown, "lock %s: %s", run_name(r, k->key),
                             out.detail);
                } else if (out.fast) {
                        fast++;
                }
        }
        if (bad.count > 0) {
                set(res, CHECK_FAIL, "%s (%zu of %zu locks not linearizable)",
                    bad.first, bad.count, lo.n_keys);
        } else if (unknown.count > 0) {
                set(res, CHECK_UNKNOWN, "%s (%zu of %zu locks undecided)",
                    unknown.first, unknown.count, lo.n_keys);
        } else {
                set(res, CHECK_PASS,
                    "%zu locks, %zu ops linearizable (%zu locks by the index "
                    "fast path, %" PRIu64 " search states; %zu synthetic "
                    "ops, %zu unknown acquires placed by the apply logs)",
                    lo.n_keys, lo.n, fast, explored, lo.n_synthetic,
                    lo.n_attributed);
        }
        linops_free(&lo);
}

/* --- S9 ------------------------------------------------------------------- */

static void check_s9(const struct run *r, struct check_result *res)
{
        const struct applylog *a = &r->applylog;
        struct note bad = {0, ""};
        size_t i, j, k, compared = 0, present = 0, skipped = 0;

        for (i = 0; i < a->n_nodes; i++) {
                const struct applylog_node *nd = &a->nodes[i];

                present += nd->present;
                skipped += nd->n_bad + nd->n_torn;
                if (nd->mismatch[0] != '\0') {
                        note(&bad, "%s", nd->mismatch);
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
                                note(&bad,
                                     "index %" PRIu64 ": %s has %.180s, %s "
                                     "has %.180s",
                                     e->index, a->nodes[ref->node].name,
                                     x[k].text, nd->name, y[k].text);
                        } else if (n != n_ref && e->complete &&
                                   a->nodes[ref->node]
                                       .entries[ref->entry]
                                       .complete) {
                                note(&bad,
                                     "index %" PRIu64 ": %s logged %zu "
                                     "events, %s %zu",
                                     e->index, a->nodes[ref->node].name, n_ref,
                                     nd->name, n);
                        }
                }
        }
        if (bad.count > 0) {
                set(res, CHECK_FAIL, "%s (%zu disagreements)", bad.first,
                    bad.count);
        } else {
                set(res, CHECK_PASS,
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

static void check_s10(const struct run *r, struct check_result *res)
{
        const struct applylog *a = &r->applylog;
        bool clock_fault = run_clock_fault(r);
        struct lease *ls = NULL;
        size_t n_ls = 0, cap = 0, i, j, n, expiries = 0;
        struct note early = {0, ""}, after = {0, ""};

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
                        note(&early,
                             "session %" PRIu64 " expired at index %" PRIu64
                             " (applied at %" PRId64 "), %.3f s before the "
                             "lease end w%d was told at %" PRId64,
                             e->session, e->index, e->mono_ns,
                             secs(best->lease - e->mono_ns), best->worker,
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
                            !after_end(r, &ev[j], &end)) {
                                continue;
                        }
                        note(&after,
                             "session %" PRIu64 ": %s (%s) at index %" PRIu64
                             " after its END at %" PRIu64,
                             ev[j].session, applylog_event_name(ev[j].type),
                             applylog_cause_name(ev[j].cause), ev[j].index,
                             end);
                }
        }
        if (early.count > 0 || after.count > 0) {
                set(res, CHECK_FAIL,
                    "%s (%zu early expiries, %zu events "
                    "after an END)",
                    early.count > 0 ? early.first : after.first, early.count,
                    after.count);
        } else if (clock_fault) {
                set(res, CHECK_PASS,
                    "expiry timing not checked: the plan ran a clock fault; "
                    "nothing happened to a session after its END (%zu ENDs)",
                    a->n_ends);
        } else {
                set(res, CHECK_PASS,
                    "%zu expiries, none before an acknowledged lease; nothing "
                    "happened to a session after its END (%zu ENDs)",
                    expiries, a->n_ends);
        }
        free(ls);
}

/* --- L1, L2 --------------------------------------------------------------- */

static int cmp_i64(const void *p, const void *q)
{
        int64_t x = *(const int64_t *)p, y = *(const int64_t *)q;

        return x < y ? -1 : x > y;
}

static void check_l1(const struct run *r, struct check_result *res,
                     struct check_stats *st)
{
        const struct nemlog *nl = &r->nemlog;
        int64_t deadline;
        int max_w = -1, w, workers = 0;
        bool *seen, *acq, *rel;
        struct note bad = {0, ""};
        size_t i;

        st->has_heal = nl->has_heal;
        st->recovery_ns = -1;
        if (!nl->has_heal) {
                set(res, CHECK_PASS,
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
                set(res, CHECK_FAIL, "no worker history after heal-all");
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
                        note(&bad,
                             "w%d: no ok final %s within 15 s of the heal "
                             "at %" PRId64,
                             w, !acq[w] ? "acquire" : "release", nl->heal_t);
                }
        }
        if (bad.count > 0) {
                set(res, CHECK_FAIL, "%s (%zu of %d workers)", bad.first,
                    bad.count, workers);
        } else {
                set(res, CHECK_PASS,
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

static void check_l2(const struct run *r, struct check_result *res,
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
                set(res, CHECK_FAIL, "no operation succeeded (%zu invoked)",
                    r->history.n);
        } else if (bad > 0) {
                set(res, CHECK_FAIL,
                    "%zu windows of 2 s or more without an ok operation and "
                    "no fault; the longest %.3f s from %" PRId64,
                    bad, secs(worst_bad), worst_bad_at);
        } else if (st->longest_gap_ns < 0) {
                set(res, CHECK_PASS, "fewer than two ok operations");
        } else {
                set(res, CHECK_PASS,
                    "longest window without an ok operation %.3f s from "
                    "%" PRId64 "%s%s",
                    secs(st->longest_gap_ns), st->longest_gap_at,
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
static void scan_log(const char *path, const char *shown, struct note *bad,
                     size_t *scanned)
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
                        note(bad, "%s: %.*s", shown, w > 160 ? 160 : w, at);
                }
        }
        free(buf);
}

static void check_l4(const struct run *r, struct check_result *res)
{
        const struct nemlog *nl = &r->nemlog;
        const struct applylog *a = &r->applylog;
        struct note bad = {0, ""};
        char path[4096], shown[512];
        size_t i, scanned = 0;

        for (i = 0; i < nl->n_exits; i++) {
                const struct nemlog_exit *e = &nl->exits[i];
                if (!e->expected) {
                        note(&bad,
                             "%s (pid %" PRId64 ") exited with status %" PRId64
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
                set(res, CHECK_FAIL, "%s (%zu problems)", bad.first, bad.count);
        } else {
                set(res, CHECK_PASS,
                    "%zu exits, all caused by the nemesis%s; no sanitizer or "
                    "assertion report in %zu logs",
                    nl->n_exits, nl->exits_present ? "" : " (no exits file)",
                    scanned);
        }
}

/* --- all ------------------------------------------------------------------ */

static int cmp_u64s(const void *p, const void *q)
{
        uint64_t x = *(const uint64_t *)p, y = *(const uint64_t *)q;

        return x < y ? -1 : x > y;
}

static void count(const struct run *r, struct check_stats *st)
{
        const struct applylog *a = &r->applylog;
        uint64_t *terms = util_calloc(a->n_merged, sizeof *terms);
        size_t i, n = 0, distinct = 0;

        for (i = 0; i < r->history.n; i++) {
                switch (r->history.ops[i].type) {
                case HISTORY_OK:
                        st->ops_ok++;
                        break;
                case HISTORY_FAIL:
                        st->ops_fail++;
                        break;
                default:
                        st->ops_info++;
                        break;
                }
        }
        st->faults = r->nemlog.n_faults;
        for (i = 0; i < a->n_merged; i++) {
                size_t m;
                const struct applylog_event *ev =
                    applylog_events(a, &a->merged[i], &m);
                if (m > 0 && ev[0].term != 0) {
                        terms[n++] = ev[0].term;
                }
        }
        util_sort(terms, n, sizeof *terms, cmp_u64s);
        for (i = 0; i < n; i++) {
                distinct += i == 0 || terms[i] != terms[i - 1];
        }
        st->elections = distinct > 0 ? distinct - 1 : 0;
        free(terms);
}

void checks_run(const struct run *r, const struct check_options *o,
                struct check_result res[CHECK_COUNT], struct check_stats *st)
{
        memset(res, 0, CHECK_COUNT * sizeof *res);
        memset(st, 0, sizeof *st);
        count(r, st);
        check_replay(r, &res[CHECK_S1], &res[CHECK_S8], &res[CHECK_L3]);
        check_s2(r, &res[CHECK_S2]);
        check_s3(r, &res[CHECK_S3]);
        check_s4(r, &res[CHECK_S4]);
        check_s5(r, &res[CHECK_S5]);
        check_s6(r, &res[CHECK_S6], st);
        check_s7(r, o, &res[CHECK_S7]);
        check_s9(r, &res[CHECK_S9]);
        check_s10(r, &res[CHECK_S10]);
        check_l1(r, &res[CHECK_L1], st);
        check_l2(r, &res[CHECK_L2], st);
        check_l4(r, &res[CHECK_L4]);
}
