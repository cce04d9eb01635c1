/* Checkers S2, S3 and S6 of a chaos run: the tokens clients were told. */
#include "check_tokens.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "check_util.h"

/* --- S2 ------------------------------------------------------------------- */

/* An ok acquire, for S2 and S3. */
struct acq {
        int key;
        uint64_t token;
        uint64_t session;
        uint64_t process;
        int worker;
        int64_t invoke_ns, complete_ns;
        bool shared; /* an acquire of the read lock */
        bool sem;    /* an acquire of a semaphore's permits */
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
                        struct acq a = {h->key,         h->token,  h->session,
                                        h->process,     h->worker, h->invoke_ns,
                                        h->complete_ns, h->shared, h->sem};
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
void check_s2(const struct run *r, struct check_result *res)
{
        size_t n, i, j, k, a_at;
        struct acq *by_c = ok_acquires(r, &n);
        struct acq *by_i = util_calloc(n, sizeof *by_i);
        struct check_note bad = {0, ""};

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
                        check_note(&bad,
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
                check_set(res, CHECK_FAIL, "%s (%zu acquires)", bad.first,
                          bad.count);
        } else {
                check_set(res, CHECK_PASS,
                          "%zu ok acquires: tokens increase in real-time order",
                          n);
        }
        free(by_c);
        free(by_i);
}

/* --- S3 ------------------------------------------------------------------- */

void check_s3(const struct run *r, struct check_result *res)
{
        const struct applylog *a = &r->applylog;
        size_t n, i;
        struct acq *v = ok_acquires(r, &n);
        struct check_note bad = {0, ""}, unknown = {0, ""};

        for (i = 0; i < n; i++) {
                bool logged;
                const struct applylog_event *g = check_grant_of(
                    r, v[i].key, v[i].token, v[i].session, &logged);
                /* Every command leaves at least a RESULT, so an index inside
                 * the logged range that no node logged was no command (a
                 * barrier, a configuration): surely no grant. Outside the
                 * range the logs just do not tell. */
                bool within = a->n_merged > 0 &&
                              v[i].token >= a->merged[0].index &&
                              v[i].token <= a->merged[a->n_merged - 1].index;
                if (!logged && !within) {
                        check_note(&unknown,
                                   "no apply log reaches index %" PRIu64
                                   " (w%d's token for lock %s)",
                                   v[i].token, v[i].worker,
                                   run_name(r, v[i].key));
                } else if (g == NULL) {
                        check_note(&bad,
                                   "lock %s: w%d was told token %" PRIu64
                                   " but index %" PRIu64 " is no GRANT of it",
                                   run_name(r, v[i].key), v[i].worker,
                                   v[i].token, v[i].token);
                } else if (v[i].session != 0 && g->session != v[i].session) {
                        check_note(&bad,
                                   "lock %s: w%d (session %" PRIu64
                                   ") was told token %" PRIu64
                                   ", granted to session %" PRIu64,
                                   run_name(r, v[i].key), v[i].worker,
                                   v[i].session, v[i].token, g->session);
                }
        }
        /* One token, one session: a process is one handle, so two processes
         * reporting a token are two sessions. Only readers admitted
         * together share one, and a semaphore's holders admitted
         * together. */
        util_sort(v, n, sizeof *v, cmp_acq_token);
        for (i = 1; i < n; i++) {
                const struct acq *x = &v[i - 1], *y = &v[i];
                if (x->key != y->key || x->token != y->token ||
                    (x->shared && y->shared) || (x->sem && y->sem)) {
                        continue;
                }
                if (x->process != y->process ||
                    (x->session != 0 && y->session != 0 &&
                     x->session != y->session)) {
                        check_note(&bad,
                                   "lock %s: token %" PRIu64
                                   " reported to w%d (p=%" PRIu64
                                   ") and w%d (p=%" PRIu64 ")",
                                   run_name(r, x->key), x->token, x->worker,
                                   x->process, y->worker, y->process);
                }
        }
        if (bad.count > 0) {
                check_set(res, CHECK_FAIL, "%s (%zu problems)", bad.first,
                          bad.count);
        } else if (unknown.count > 0) {
                check_set(res, CHECK_UNKNOWN, "%s (%zu grants not in any log)",
                          unknown.first, unknown.count);
        } else {
                check_set(
                    res, CHECK_PASS,
                    "%zu ok acquires: each a committed GRANT to its session "
                    "at index = token, tokens unique but readers' (and "
                    "semaphore holders') admitted together",
                    n);
        }
        free(v);
}

/* --- S6 ------------------------------------------------------------------- */

/*
 * A semaphore holder's refusal (the register read in the apply logs that
 * its grant ended): a fencing save when the merged log holds that grant
 * and its end, else FAIL (a current holder turned away), or UNKNOWN when
 * the grant is in no log. 1 save, 0 not.
 */
static int sem_refusal(const struct run *r, const struct reglog_line *l,
                       struct check_note *bad, struct check_note *unknown)
{
        bool logged;
        const struct applylog_event *g =
            check_grant_of(r, l->key, l->token, l->session, &logged);

        if (g == NULL || g->session != l->session) {
                check_note(unknown,
                           "semaphore %s: no GRANT of token %" PRIu64
                           " to session %" PRIu64 " in the apply logs "
                           "(register.log:%u)",
                           run_name(r, l->key), l->token, l->session, l->line);
                return 0;
        }
        if (check_grant_end(r, l->key, l->token, l->session) != 0) {
                return 1;
        }
        check_note(bad,
                   "semaphore %s: w%d's %s with token %" PRIu64
                   " refused (the register saw its end at index %" PRIu64
                   "), but grant %" PRIu64 " of session %" PRIu64
                   " never ended in the apply logs (register.log:%u)",
                   run_name(r, l->key), l->worker, reglog_op_name(l->op),
                   l->token, l->ended, l->token, l->session, l->line);
        return 0;
}

void check_s6(const struct run *r, struct check_result *res,
              struct check_stats *st)
{
        const struct reglog *rl = &r->reglog;
        struct check_note bad = {0, ""}, unknown = {0, ""};
        size_t i, stale = 0, saves = 0;

        for (i = 0; i < rl->n; i++) {
                const struct reglog_line *l = &rl->lines[i];
                const struct applylog_event *gm, *live;
                uint64_t bound = reglog_bound(l);
                bool logged_m;
                int ended;

                if (l->sem && !l->ok) {
                        stale++;
                        saves += (size_t)sem_refusal(r, l, &bad, &unknown);
                        continue;
                }
                if (l->ok || l->sem || l->token >= bound) {
                        continue;
                }
                stale++;
                /* The register key is the lock's name. A writer's request
                 * is fenced by every token seen, a reader's by the writers'
                 * (reglog_bound()): either way, a correct lock service
                 * ended every grant made at the refused token before it
                 * made the grant of the bound. */
                gm = check_grant_at(r, l->key, bound, &logged_m);
                ended = check_grants_ended(r, l->key, l->token, bound, &live);
                if (gm == NULL || ended < 0) {
                        check_note(&unknown,
                                   "register %s: no GRANT of token %" PRIu64
                                   " or %" PRIu64 " in the apply logs",
                                   run_name(r, l->key), l->token, bound);
                        continue;
                }
                if (ended > 0) {
                        saves++;
                        continue;
                }
                check_note(&bad,
                           "register %s: w%d's %s %s with token %" PRIu64
                           " refused (bound %" PRIu64 "), but grant %" PRIu64
                           " (session %" PRIu64 ") had not ended when grant "
                           "%" PRIu64 " (session %" PRIu64
                           ") was made: overlap (register.log:%u)",
                           run_name(r, l->key), l->worker,
                           l->reader ? "reader's" : "writer's",
                           reglog_op_name(l->op), l->token, bound, l->token,
                           live->session, bound, gm->session, l->line);
        }
        st->fencing_saves = saves;
        if (bad.count > 0) {
                check_set(res, CHECK_FAIL,
                          "%s (%zu overlaps, %zu fencing saves)", bad.first,
                          bad.count, saves);
        } else if (unknown.count > 0) {
                check_set(
                    res, CHECK_UNKNOWN,
                    "%s (%zu of %zu refusals unclassified, %zu fencing saves)",
                    unknown.first, unknown.count, stale, saves);
        } else {
                check_set(res, CHECK_PASS,
                          "%zu stale refusals, %zu fencing saves, no overlap",
                          stale, saves);
        }
}
