/* Quotas per identity in the lock state machine (quota.h). */
#include "quota.h"

#include "../../include/baton/errors.h"
#include "acl.h"
#include "lockfsm.h"
#include "step.h"

void quota_close(struct lockfsm *f)
{
        size_t i;

        for (i = 0; i < f->uses.n_buckets; i++) {
                struct hnode *n = f->uses.buckets[i];
                while (n != NULL) {
                        struct hnode *next = n->next;
                        mem_free(f->mem, HMAP_DATA(n, struct quota_use, node));
                        n = next;
                }
        }
        hmap_close(&f->uses);
}

const struct quota_use *quota_use_find(const struct lockfsm *f,
                                       uint64_t principal)
{
        struct hnode *n;

        for (n = hmap_first(&f->uses, hash_u64(principal)); n != NULL;
             n = hmap_next(n)) {
                struct quota_use *u = HMAP_DATA(n, struct quota_use, node);
                if (u->principal == principal) {
                        return u;
                }
        }
        return NULL;
}

struct quota_use *quota_use_get(struct lockfsm *f, uint64_t principal)
{
        struct quota_use *u = (struct quota_use *)quota_use_find(f, principal);

        if (u != NULL) {
                return u;
        }
        if (hmap_reserve(&f->uses, f->uses.count + 1) != 0 ||
            (u = mem_calloc(f->mem, 1, sizeof *u)) == NULL) {
                return NULL;
        }
        u->principal = principal;
        hmap_insert(&f->uses, &u->node, hash_u64(principal));
        return u;
}

void quota_unuse(struct lockfsm *f, struct quota_use *u)
{
        if (u != NULL && u->sessions == 0) {
                hmap_remove(&f->uses, &u->node);
                mem_free(f->mem, u);
        }
}

/* The limits of `principal`, or NULL. */
static const uint32_t *limits_of(const struct lockfsm *f, uint64_t principal)
{
        return principal != 0 && f->quota_cb != NULL
                   ? f->quota_cb(f->quota_data, principal)
                   : NULL;
}

/* Refuse with the quota `kind` whose limit is `limit`. */
static int refuse(struct lockfsm_result *res, int kind, uint32_t limit)
{
        step_reject(res, BATON_EQUOTA);
        res->waiters = (uint32_t)kind;
        res->count = limit;
        return BATON_EQUOTA;
}

/* Whether `used` + `more` passes `limit` (0: none). */
static bool over(uint32_t limit, uint32_t used, uint32_t more)
{
        return limit != 0 && more > 0 && (uint64_t)used + more > limit;
}

int quota_check_open(const struct lockfsm *f, uint64_t principal,
                     struct lockfsm_result *res)
{
        const uint32_t *limit = limits_of(f, principal);
        const struct quota_use *u;

        if (limit == NULL) {
                return 0;
        }
        u = quota_use_find(f, principal);
        if (over(limit[ACL_QUOTA_SESSIONS], u != NULL ? u->sessions : 0, 1)) {
                return refuse(res, ACL_QUOTA_SESSIONS,
                              limit[ACL_QUOTA_SESSIONS]);
        }
        return 0;
}

int quota_check_holds(const struct lockfsm *f, const struct session *s,
                      uint32_t holds, uint32_t waits,
                      struct lockfsm_result *res)
{
        const struct quota_use *u = s->use;
        const uint32_t *limit;

        if (u == NULL || (limit = limits_of(f, u->principal)) == NULL) {
                return 0;
        }
        if (over(limit[ACL_QUOTA_LOCKS], u->holds, holds)) {
                return refuse(res, ACL_QUOTA_LOCKS, limit[ACL_QUOTA_LOCKS]);
        }
        if (over(limit[ACL_QUOTA_WAITERS], u->waits, waits)) {
                return refuse(res, ACL_QUOTA_WAITERS, limit[ACL_QUOTA_WAITERS]);
        }
        return 0;
}

const char *quota_check_counts(const struct lockfsm *f)
{
        uint64_t sessions = 0, holds = 0, waits = 0;
        struct rqueue *q;
        size_t i;

        /* O(sessions + records), as the restore that calls it: every
         * counted session's record is in the map, and the records' sums
         * are the counted sessions'. */
        RQUEUE_FOREACH(q, &f->lists->session_list)
        {
                const struct session *s = RQUEUE_DATA(q, struct session, link);
                struct rqueue *w;
                if (s->use == NULL) {
                        continue;
                }
                if (quota_use_find(f, s->use->principal) != s->use) {
                        return "a session counts in a record not in the map";
                }
                sessions++;
                holds += s->n_holds;
                RQUEUE_FOREACH(w, &s->waits)
                {
                        waits++;
                }
        }
        for (i = 0; i < f->uses.n_buckets; i++) {
                struct hnode *h;
                for (h = f->uses.buckets[i]; h != NULL; h = h->next) {
                        const struct quota_use *u =
                            HMAP_DATA(h, struct quota_use, node);
                        if (u->sessions == 0 || u->waits > u->holds) {
                                return "a quota record of no session, or "
                                       "with more waits than holds";
                        }
                        sessions -= u->sessions;
                        holds -= u->holds;
                        waits -= u->waits;
                }
        }
        return sessions == 0 && holds == 0 && waits == 0
                   ? NULL
                   : "quota counts differ from the sessions'";
}

void lockfsm_quota_use(const struct lockfsm *f, uint64_t principal,
                       uint32_t used[ACL_QUOTA_COUNTED])
{
        const struct quota_use *u = quota_use_find(f, principal);

        used[ACL_QUOTA_SESSIONS] = u != NULL ? u->sessions : 0;
        used[ACL_QUOTA_LOCKS] = u != NULL ? u->holds : 0;
        used[ACL_QUOTA_WAITERS] = u != NULL ? u->waits : 0;
}

void lockfsm_set_quota_cb(struct lockfsm *f, lockfsm_quota_cb cb, void *data)
{
        f->quota_cb = cb;
        f->quota_data = data;
}
