/* Reads of the lock state machine: QUERY, CHECK and the walks over locks and
 * waiters, answered from local state or applied as log entries. */
#include "lookup.h"

#include <assert.h>
#include <string.h>

#include "../../include/baton/errors.h"
#include "../proto/proto.h"
/* It defines lockfsm_query() and the walks: the machine's reads, declared in
 * its interface. */
#include "lockfsm.h"
#include "state.h"
#include "step.h"

void lookup_apply(const struct lockfsm *f, const struct command *c,
                  struct lockfsm_result *res)
{
        if (c->type == COMMAND_QUERY) {
                lockfsm_query(f, c->name, c->name_len, res);
                return;
        }
        assert(c->type == COMMAND_CHECK);
        lockfsm_check_token(f, c->name, c->name_len, c->token, res);
}

void lockfsm_check_token(const struct lockfsm *f, const char *name, size_t len,
                         uint64_t token, struct lockfsm_result *res)
{
        const struct lock *l = state_lock(f, name, len);
        struct rqueue *q;

        lockfsm_query(f, name, len, res);
        if (res->kind != PROTO_KIND_HOLDER) {
                res->status = BATON_ESTALE;
                res->kind = PROTO_KIND_REJECTED;
                return;
        }
        /* Current: the token of any grant held now (readers admitted by
         * one entry share it). */
        RQUEUE_FOREACH(q, &l->holders)
        {
                const struct hold *h = RQUEUE_DATA(q, struct hold, lock_link);
                if (h->token == token) {
                        step_describe(res, PROTO_KIND_CURRENT, h);
                        res->waiters = l->n_waiters;
                        return;
                }
        }
        res->status = BATON_ESTALE;
        res->kind = PROTO_KIND_REJECTED;
}

void lockfsm_query(const struct lockfsm *f, const char *name, size_t len,
                   struct lockfsm_result *res)
{
        struct lock *l = state_lock(f, name, len);
        struct hold *h;

        memset(res, 0, sizeof *res);
        if (l == NULL || l->n_holders == 0) {
                /* Free, or between holders until the next entry. */
                res->kind = PROTO_KIND_FREE;
                res->waiters = l != NULL ? l->n_waiters : 0;
                return;
        }
        h = state_first_holder(l);
        step_describe(res, PROTO_KIND_HOLDER, h);
        res->waiters = l->n_waiters;
}

void lockfsm_foreach_blocked(const struct lockfsm *f,
                             void (*cb)(void *data, const char *name,
                                        size_t name_len, uint64_t created,
                                        uint32_t delay_ms),
                             void *data)
{
        struct rqueue *q;

        RQUEUE_FOREACH(q, &f->lists->lock_list)
        {
                const struct lock *l = RQUEUE_DATA(q, struct lock, link);
                if (l->blocked) {
                        cb(data, l->name, l->name_len, l->created, l->delay_ms);
                }
        }
}

void lockfsm_foreach_waiter(const struct lockfsm *f,
                            void (*cb)(void *data, uint64_t session,
                                       uint64_t seq, const char *name,
                                       size_t name_len, uint32_t wait_ms),
                            void *data)
{
        struct rqueue *lq, *wq;

        RQUEUE_FOREACH(lq, &f->lists->lock_list)
        {
                const struct lock *l = RQUEUE_DATA(lq, struct lock, link);
                RQUEUE_FOREACH(wq, &l->waiters)
                {
                        const struct hold *h =
                            RQUEUE_DATA(wq, struct hold, lock_link);
                        cb(data, hold_session(h)->id, h->seq, l->name,
                           l->name_len, h->wait_ms);
                }
        }
}

void lockfsm_foreach_holder(
    const struct lockfsm *f, const char *name, size_t len,
    bool (*cb)(void *data, const struct lockfsm_holder *h), void *data)
{
        const struct lock *l = state_lock(f, name, len);
        struct lockfsm_holder out;
        struct rqueue *q;

        if (l == NULL) {
                return;
        }
        RQUEUE_FOREACH(q, &l->holders)
        {
                const struct hold *h = RQUEUE_DATA(q, struct hold, lock_link);
                out.session = hold_session(h)->id;
                out.owner = h->owner;
                out.token = h->token;
                out.count = h->count;
                out.mode = l->mode == COMMAND_MODE_ELECTION
                               ? COMMAND_MODE_ELECTION
                               : h->mode;
                out.permits = h->permits;
                out.value = h->value;
                out.value_len = h->value_len;
                out.limit = l->mode == COMMAND_MODE_SEMAPHORE ? l->limit : 0;
                out.waiters = l->n_waiters;
                out.granted_s = h->granted_s;
                if (!cb(data, &out)) {
                        return;
                }
        }
}

void lockfsm_foreach_lock(const struct lockfsm *f, const char *prefix,
                          size_t len,
                          bool (*cb)(void *data, const char *name,
                                     size_t name_len,
                                     const struct lockfsm_result *holder),
                          void *data)
{
        struct lockfsm_result res;
        struct rqueue *q;

        RQUEUE_FOREACH(q, &f->lists->lock_list)
        {
                const struct lock *l = RQUEUE_DATA(q, struct lock, link);
                const struct hold *h;

                if (l->n_holders == 0 || l->name_len < len ||
                    (len > 0 && memcmp(l->name, prefix, len) != 0)) {
                        continue;
                }
                h = state_first_holder(l);
                step_describe(&res, PROTO_KIND_HOLDER, h);
                res.waiters = l->n_waiters;
                if (!cb(data, l->name, l->name_len, &res)) {
                        return;
                }
        }
}
