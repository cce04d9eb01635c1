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

/* A GRANT's mode is its "mode" (applylog_shared(), applylog_semaphore());
 * in an apply log without modes, the rwlock workload's readers are told by
 * their owner tag, APPLYLOG_OWNER_READER. Every other grant is
 * exclusive. */

struct waiter {
        uint64_t session;
        uint64_t seq;
};

/* A live grant: a writer's, one of the readers', or one of a semaphore's
 * holders'. */
struct holder {
        uint64_t session, token;
        int mode;         /* APPLYLOG_MODE_EXCLUSIVE, _SHARED, _SEMAPHORE */
        uint32_t permits; /* a semaphore's */
};

/* A lock during the replay: a writer, any number of readers, or a
 * semaphore's holders. */
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
        uint32_t *limits;                 /* check_sem_limits() */
        size_t n_grants, n_shared, n_sem, n_sem_limited, n_handoffs, n_queued;
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

/* The mode of GRANT `ev`. */
static int grant_mode(const struct applylog_event *ev)
{
        if (applylog_semaphore(ev)) {
                return APPLYLOG_MODE_SEMAPHORE;
        }
        return applylog_shared(ev) ? APPLYLOG_MODE_SHARED
                                   : APPLYLOG_MODE_EXCLUSIVE;
}

static const char *mode_name(int mode)
{
        return mode == APPLYLOG_MODE_SEMAPHORE ? "semaphore"
               : mode == APPLYLOG_MODE_SHARED  ? "shared"
                                               : "exclusive";
}

/* The live grant a GRANT of `mode` may not overlap, or NULL: any grant
 * for a writer, a writer's for a reader, a lock's for a semaphore's holder
 * (kinds do not mix; its permits are counted apart). */
static const struct holder *conflict(const struct lockstate *l, int mode)
{
        size_t i;

        for (i = 0; i < l->n_holders; i++) {
                int m = l->holders[i].mode;
                if (mode == APPLYLOG_MODE_EXCLUSIVE ||
                    (mode == APPLYLOG_MODE_SHARED &&
                     m != APPLYLOG_MODE_SHARED) ||
                    (mode == APPLYLOG_MODE_SEMAPHORE &&
                     m != APPLYLOG_MODE_SEMAPHORE)) {
                        return &l->holders[i];
                }
        }
        return NULL;
}

/* The permits the live grants of semaphore `l` hold. */
static uint64_t permits_held(const struct lockstate *l)
{
        uint64_t n = 0;
        size_t i;

        for (i = 0; i < l->n_holders; i++) {
                n += l->holders[i].permits;
        }
        return n;
}

/* S1: the previous grant must have ended (readers only overlap readers),
 * and a semaphore's holders hold no more permits than it has, when the
 * history says how many that is. */
static void check_exclusion(struct replay *rp, const struct lockstate *l,
                            const struct applylog_event *ev, int mode)
{
        const char *name = run_name(rp->r, ev->lock);
        const struct holder *h = conflict(l, mode);
        uint32_t limit = rp->limits[ev->lock];
        uint64_t held;

        if (h != NULL) {
                check_note(&rp->s1,
                           "lock %s: GRANT (%s) at index %" PRIu64
                           " to session %" PRIu64 " while token %" PRIu64
                           " (%s) of session %" PRIu64 " was live",
                           name, mode_name(mode), ev->index, ev->session,
                           h->token, mode_name(h->mode), h->session);
                return;
        }
        if (mode != APPLYLOG_MODE_SEMAPHORE || limit == 0) {
                return;
        }
        rp->n_sem_limited++;
        held = permits_held(l);
        if (held + applylog_permits(ev) > limit) {
                check_note(
                    &rp->s1,
                    "semaphore %s (%" PRIu32 " permits): GRANT of %" PRIu32
                    " at index %" PRIu64 " to session %" PRIu64
                    " while %zu holders held %" PRIu64 " (one: token %" PRIu64
                    " of session %" PRIu64 "): %" PRIu64 " permits granted",
                    name, limit, applylog_permits(ev), ev->index, ev->session,
                    l->n_holders, held, l->holders[l->n_holders - 1].token,
                    l->holders[l->n_holders - 1].session,
                    held + applylog_permits(ev));
        }
}

static void on_grant(struct replay *rp, const struct applylog_event *ev)
{
        const struct run *r = rp->r;
        struct lockstate *l = &rp->locks[ev->lock];
        const char *name = run_name(r, ev->lock);
        int mode = grant_mode(ev);
        uint64_t end;

        rp->n_grants++;
        rp->n_shared += mode == APPLYLOG_MODE_SHARED;
        rp->n_sem += mode == APPLYLOG_MODE_SEMAPHORE;
        check_exclusion(rp, l, ev, mode);
        /* S8: never to an ended session; a handoff (a grant made by another
         * session's RELEASE, CLOSE or EXPIRE) goes to the head of the
         * queue; a grant made by the waiter's own ACQUIRE (or MULTI: every
         * name at once, each free) finds the lock free, and a free lock
         * has no queue. */
        if (check_after_end(r, ev, &end)) {
                check_note(&rp->s8,
                           "lock %s: GRANT at index %" PRIu64
                           " to session %" PRIu64 " after its END at %" PRIu64,
                           name, ev->index, ev->session, end);
        }
        if (ev->cause == APPLYLOG_C_ACQUIRE || ev->cause == APPLYLOG_C_MULTI) {
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
                  &(struct holder){ev->session, ev->token, mode,
                                   mode == APPLYLOG_MODE_SEMAPHORE
                                       ? applylog_permits(ev)
                                       : 0},
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
        rp.limits = check_sem_limits(r);
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
                          "the next (%zu shared grants: readers together; "
                          "%zu of semaphores' permits, %zu of them within a "
                          "limit the history names)",
                          rp.n_grants, a->n_merged, rp.n_shared, rp.n_sem,
                          rp.n_sem_limited);
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
        free(rp.limits);
}
