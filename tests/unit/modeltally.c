/* How often each outcome came up in test_model's runs. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "../../include/baton.h"
#include "modeltally.h"

/* A RESULT event's part in the quotas' counts. */
static void modeltally_quota(struct tally *t, const struct ev *v)
{
        if (v->type != LOCKFSM_EV_RESULT || !v->has_result) {
                return;
        }
        t->quota_changes += v->cause == COMMAND_ACL;
        if (v->result.status != BATON_EQUOTA) {
                return;
        }
        if (v->result.duplicate) {
                t->quota_retries++;
        } else if (v->result.waiters < ACL_QUOTA_COUNTED) {
                t->quota[v->result.waiters]++;
        }
}

void modeltally_count(struct tally *t, const struct model *m,
                      const struct evlog *mev,
                      const struct lockfsm_result *want, bool undecodable,
                      bool batch, unsigned began)
{
        unsigned grants = 0;

        t->steps++;
        t->undecodable += undecodable;
        if (want->status < 0 && -want->status < N_STATUS) {
                t->status[-want->status]++;
        } else if (want->kind < 16) {
                t->kind[want->kind]++;
        }
        t->duplicates += want->duplicate;
        for (unsigned i = 0; i < mev->n; i++) {
                const struct ev *v = &mev->ev[i];
                const struct ev *n = &mev->ev[i + 1];

                /* A multi-lock's second name: the same seq. */
                if (i + 1 < mev->n && v->type == LOCKFSM_EV_GRANT &&
                    n->type == LOCKFSM_EV_GRANT && n->session == v->session &&
                    n->seq == v->seq &&
                    (i == 0 || v[-1].type != LOCKFSM_EV_GRANT ||
                     v[-1].session != v->session || v[-1].seq != v->seq)) {
                        t->multi_now += v->cause == COMMAND_MULTI;
                        t->multi_later += v->cause != COMMAND_MULTI;
                }
                grants += v->type == LOCKFSM_EV_GRANT;
                t->handovers +=
                    v->type == LOCKFSM_EV_GRANT && v->cause != COMMAND_ACQUIRE;
                t->successions += v->type == LOCKFSM_EV_GRANT &&
                                  v->cause != COMMAND_ACQUIRE &&
                                  v->mode == COMMAND_MODE_ELECTION;
                t->proclaims += v->type == LOCKFSM_EV_PROCLAIM;
                modeltally_quota(t, v);
        }
        t->multi_grants += grants > 1;
        t->batches += batch;
        t->begun += began > 0;
        for (unsigned i = 0; i < m->nl; i++) {
                if (m->l[i].nh == 0 && !m->l[i].blocked) {
                        t->deferred++;
                        break;
                }
        }
        for (unsigned i = 0; i < m->nl; i++) {
                if (m->l[i].blocked) {
                        t->blocked++;
                        break;
                }
        }
        for (unsigned i = 0; i < m->nl; i++) {
                if (m->l[i].nh > 1) {
                        t->shared++;
                        break;
                }
        }
}

void modeltally_print(const struct tally *t)
{
        print_message("# %lu steps, %lu undecodable, %lu duplicates, "
                      "%lu handovers, %lu multi-grant entries, %lu ends "
                      "with tied tokens, %lu batches, %lu entries that "
                      "deferred a grant, %lu that began with one, %lu "
                      "after which a lock was in its lock-delay, %lu "
                      "after which a lock had several holders, %lu "
                      "multi-locks granted at once and %lu after waiting, "
                      "%lu leaders who waited, %lu proclaims\n",
                      t->steps, t->undecodable, t->duplicates, t->handovers,
                      t->multi_grants, t->ties, t->batches, t->deferred,
                      t->begun, t->blocked, t->shared, t->multi_now,
                      t->multi_later, t->successions, t->proclaims);
        print_message("# %lu quota sets and removes; refused BATON_EQUOTA: "
                      "%lu by sessions, %lu by locks, %lu by waiters, and "
                      "%lu retries of such answered from memory\n",
                      t->quota_changes, t->quota[ACL_QUOTA_SESSIONS],
                      t->quota[ACL_QUOTA_LOCKS], t->quota[ACL_QUOTA_WAITERS],
                      t->quota_retries);
        for (unsigned k = 1; k < 16; k++) {
                if (t->kind[k] > 0) {
                        print_message("#   kind %2u: %lu\n", k, t->kind[k]);
                }
        }
        for (unsigned e = 1; e < N_STATUS; e++) {
                if (t->status[e] > 0) {
                        print_message("#   %-36s %lu\n",
                                      baton_strerror(-(int)e), t->status[e]);
                }
        }
}
