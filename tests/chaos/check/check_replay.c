/* Checkers S1, S8 and L3 of a chaos run: one replay of the apply log. */
#include "check_replay.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "check_util.h"

/* --- S1, S8, L3: one replay of the merged apply log ----------------------- */

/* A GRANT's mode is its "mode" (applylog_shared()); in an apply log
 * without modes, the rwlock workload's readers are told by their owner tag,
 * APPLYLOG_OWNER_READER. Every other grant is exclusive. */

struct waiter {
        uint64_t session;
        uint64_t seq;
};

/* A live grant: a writer's, or one of the readers'. */
struct holder {
        uint64_t session, token;
        bool reader;
};

/* A lock during the replay: a writer, or any number of readers. */
struct lockstate {
        struct holder *holders;
        size_t n_holders, cap_holders;
        struct waiter *queue; /* FIFO */
        size_t n_queue, cap_queue;
};

struct replay {
        const struct run *r;
        struct lockstate *locks;          /* by name id */
        struct applylog_fact *by_session; /* grants by session, lock */
        size_t n_grants, n_shared, n_handoffs, n_queued;
        struct check_note s1, s8;
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

/* Remove holder `i` of `l`. */
static void holder_remove(struct lockstate *l, size_t i)
{
        l->holders[i] = l->holders[--l->n_holders];
}

/* The live grant a GRANT of mode `reader` may not overlap, or NULL: any
 * grant for a writer, a writer's for a reader. */
static const struct holder *conflict(const struct lockstate *l, bool reader)
{
        size_t i;

        for (i = 0; i < l->n_holders; i++) {
                if (!reader || !l->holders[i].reader) {
                        return &l->holders[i];
                }
        }
        return NULL;
}

static void on_grant(struct replay *rp, const struct applylog_event *ev)
{
        const struct run *r = rp->r;
        struct lockstate *l = &rp->locks[ev->lock];
        const char *name = run_name(r, ev->lock);
        bool reader = applylog_shared(ev);
        const struct holder *h = conflict(l, reader);
        uint64_t end;

        rp->n_grants++;
        rp->n_shared += reader;
        /* S1: the previous grant must have ended (readers only overlap
         * readers). */
        if (h != NULL) {
                check_note(&rp->s1,
                           "lock %s: GRANT (%s) at index %" PRIu64
                           " to session %" PRIu64 " while token %" PRIu64
                           " (%s) of session %" PRIu64 " was live",
                           name, reader ? "shared" : "exclusive", ev->index,
                           ev->session, h->token,
                           h->reader ? "shared" : "exclusive", h->session);
        }
        /* S8: never to an ended session; a handoff (a grant made by another
         * session's RELEASE, CLOSE or EXPIRE) goes to the head of the
         * queue; a grant made by the waiter's own ACQUIRE finds the lock
         * free, and a free lock has no queue. */
        if (check_after_end(r, ev, &end)) {
                check_note(&rp->s8,
                           "lock %s: GRANT at index %" PRIu64
                           " to session %" PRIu64 " after its END at %" PRIu64,
                           name, ev->index, ev->session, end);
        }
        if (ev->cause == APPLYLOG_C_ACQUIRE) {
                if (l->n_queue > 0) {
                        check_note(&rp->s8,
                                   "lock %s: GRANT at index %" PRIu64
                                   " to a new ACQUIRE of session %" PRIu64
                                   " while session %" PRIu64 " was queued",
                                   name, ev->index, ev->session,
                                   l->queue[0].session);
                }
                queue_remove(l, ev->session, ev->seq);
        } else {
                rp->n_handoffs++;
                if (l->n_queue > 0 && l->queue[0].session == ev->session &&
                    l->queue[0].seq == ev->seq) {
                        queue_remove(l, ev->session, ev->seq);
                } else if (queue_remove(l, ev->session, ev->seq)) {
                        check_note(&rp->s8,
                                   "lock %s: GRANT at index %" PRIu64
                                   " to session %" PRIu64 " (seq %" PRIu64
                                   ") ahead of session %" PRIu64
                                   " (seq %" PRIu64 "), queued earlier",
                                   name, ev->index, ev->session, ev->seq,
                                   l->queue[0].session, l->queue[0].seq);
                } else {
                        check_note(&rp->s8,
                                   "lock %s: GRANT at index %" PRIu64
                                   " (%s) to session %" PRIu64 " (seq %" PRIu64
                                   "), which was not queued",
                                   name, ev->index,
                                   applylog_cause_name(ev->cause), ev->session,
                                   ev->seq);
                }
        }
        util_push((void **)&l->holders, &l->n_holders, &l->cap_holders,
                  &(struct holder){ev->session, ev->token, reader},
                  sizeof(struct holder));
}

/* A RELEASE ends the grant of its token and session (readers admitted
 * together share a token); one of another token changes nothing here,
 * S4 and S6 look at releases by token. */
static void on_release(struct lockstate *l, const struct applylog_event *ev)
{
        size_t i, any = l->n_holders;

        for (i = 0; i < l->n_holders; i++) {
                if (l->holders[i].token != ev->token) {
                        continue;
                }
                if (l->holders[i].session == ev->session) {
                        holder_remove(l, i);
                        return;
                }
                if (any == l->n_holders) {
                        any = i;
                }
        }
        if (any < l->n_holders) {
                holder_remove(l, any);
        }
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
                size_t i = 0;
                while (i < l->n_holders) {
                        if (l->holders[i].session == ev->session) {
                                holder_remove(l, i);
                        } else {
                                i++;
                        }
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
                if (l != NULL) {
                        on_release(l, ev);
                }
                break;
        case APPLYLOG_QUEUE:
                if (l == NULL) {
                        break;
                }
                rp->n_queued++;
                if (check_after_end(rp->r, ev, &end)) {
                        check_note(&rp->s8,
                                   "lock %s: QUEUE at index %" PRIu64
                                   " of session %" PRIu64
                                   " after its END at %" PRIu64,
                                   run_name(rp->r, ev->lock), ev->index,
                                   ev->session, end);
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

void check_replay(const struct run *r, struct check_result *s1,
                  struct check_result *s8, struct check_result *l3)
{
        const struct applylog *a = &r->applylog;
        struct replay rp;
        struct check_note left = {0, ""};
        size_t i, j, n, n_held = 0, waiting = 0, state = 0;

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
                bool held = l->n_holders > 0;
                if (held && l->n_queue == 0 && run_state_lock(r, (int)i)) {
                        state++; /* --state's ballast, held by design */
                } else if (held) {
                        n_held++;
                        check_note(&left,
                                   "lock %s held by session %" PRIu64
                                   " (token %" PRIu64 ")%s",
                                   run_name(r, (int)i), l->holders[0].session,
                                   l->holders[0].token,
                                   l->n_holders > 1 ? " and others" : "");
                }
                if (l->n_queue > 0) {
                        waiting += l->n_queue;
                        check_note(&left,
                                   "lock %s has %zu queued waiter(s), first "
                                   "session %" PRIu64,
                                   run_name(r, (int)i), l->n_queue,
                                   l->queue[0].session);
                }
                free(l->queue);
                free(l->holders);
        }
        if (rp.s1.count > 0) {
                check_set(s1, CHECK_FAIL, "%s (%zu overlapping grants)",
                          rp.s1.first, rp.s1.count);
        } else {
                check_set(s1, CHECK_PASS,
                          "%zu grants over %zu indexes, each ended before "
                          "the next (%zu shared grants: readers together)",
                          rp.n_grants, a->n_merged, rp.n_shared);
        }
        if (rp.s8.count > 0) {
                check_set(s8, CHECK_FAIL, "%s (%zu violations)", rp.s8.first,
                          rp.s8.count);
        } else {
                check_set(s8, CHECK_PASS,
                          "%zu waiters queued, %zu handoffs in queue order",
                          rp.n_queued, rp.n_handoffs);
        }
        if (left.count > 0) {
                check_set(l3, CHECK_FAIL,
                          "at index %" PRIu64 ": %zu locks held, %zu waiters "
                          "queued; %s",
                          a->n_merged > 0 ? a->merged[a->n_merged - 1].index
                                          : 0,
                          n_held, waiting, left.first);
        } else {
                check_set(l3, CHECK_PASS,
                          "at index %" PRIu64 " every lock is free and every "
                          "queue empty%s",
                          a->n_merged > 0 ? a->merged[a->n_merged - 1].index
                                          : 0,
                          state > 0 ? ", but the locks --state holds" : "");
        }
        free(rp.by_session);
        free(rp.locks);
}
