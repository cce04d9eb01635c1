/* A digest of one simulated run's whole history, so that two runs of one
 * seed can be compared by more than their verdicts. */
#include "digest.h"

#include "../../src/lib/hmap.h"
#include "../../src/server/base/fnv.h"

/* One value into the digest: a splitmix64 step, which costs a few
 * instructions where FNV-1a would take eight rounds. */
static uint64_t mix(uint64_t h, uint64_t v)
{
        return hash_u64(h ^ v);
}

static uint64_t mix_result(uint64_t h, const struct lockfsm_result *r)
{
        h = mix(h, (uint64_t)(int64_t)r->status);
        h = mix(h, r->kind);
        h = mix(h, r->duplicate);
        h = mix(h, r->session);
        h = mix(h, r->owner);
        h = mix(h, r->token);
        h = mix(h, r->count);
        return mix(h, r->waiters);
}

static uint64_t mix_event(uint64_t h, const struct simevent *e)
{
        h = mix(h, e->type);
        h = mix(h, e->cause);
        h = fnv1a64(mix(h, e->name_len), e->name, e->name_len);
        h = mix(h, e->has_result);
        h = mix(h, (uint64_t)(int64_t)e->status);
        h = mix(h, e->wait_ms);
        h = mix(h, e->mode);
        h = mix(h, e->permits);
        h = mix(h, e->index);
        h = mix(h, e->session);
        h = mix(h, e->seq);
        h = mix(h, e->owner);
        h = mix(h, e->token);
        h = mix(h, e->nonce);
        return e->has_result ? mix_result(h, &e->result) : h;
}

static uint64_t mix_node(uint64_t h, struct sim *s, unsigned i)
{
        const struct simnode *n = &s->c.nodes[i];
        struct raft *r = simcluster_raft(&s->c, i);
        size_t k;

        h = mix(h, n->n_entries);
        for (k = 0; k < n->n_entries; k++) {
                const struct simentry *e = &n->entries[k];
                h = fnv1a64(mix(mix(h, e->index), e->len), e->bytes, e->len);
                h = mix_result(mix(h, e->acl), &e->res);
        }
        h = mix(h, n->n_events);
        for (k = 0; k < n->n_events; k++) {
                h = mix_event(h, &n->events[k]);
        }
        h = mix(h, n->n_watch_events);
        h = fnv1a64(mix(h, n->n_watched), n->watched, n->n_watched);
        h = mix(h, raft_current_term(r));
        h = mix(h, raft_voted_for(r));
        h = mix(h, (uint64_t)raft_state(r));
        h = mix(h, raft_last_index(r));
        h = mix(h, raft_commit_index(r));
        h = mix(h, raft_last_applied(r));
        h = mix(h, n->store.latest);
        h = mix(h, simstore_last(&n->store));
        h = mix(h, n->wire.hints);
        return mix(h, n->wire.lowered);
}

static uint64_t mix_prop(uint64_t h, const struct simprop *p)
{
        h = mix(h, p->id);
        h = mix(h, p->node);
        h = mix(h, (uint64_t)(int64_t)p->state);
        h = mix(h, (uint64_t)(int64_t)p->status);
        h = mix(h, p->n_callbacks);
        h = mix(h, p->raft_index);
        h = mix(h, p->proposed_at);
        h = mix(h, p->done_at);
        h = mix(h, p->result.index);
        return mix_result(h, &p->result.res);
}

static uint64_t mix_answer(uint64_t h, const struct simanswer *a)
{
        const struct proto_result *r = &a->res;

        h = mix(h, a->type);
        h = mix(h, a->session);
        h = mix(h, a->seq);
        h = mix(h, a->nonce);
        h = mix(h, a->client);
        h = mix(h, (uint64_t)(int64_t)r->status);
        h = mix(h, r->kind);
        h = mix(h, r->index);
        h = mix(h, r->session);
        h = mix(h, r->owner);
        h = mix(h, r->token);
        h = mix(h, r->count);
        h = mix(h, r->waiters);
        return fnv1a64(h, a->bytes, a->len);
}

uint64_t digest_run(struct sim *s)
{
        uint64_t h = FNV1A64_OFFSET;
        size_t k;
        unsigned i;

        h = mix(h, s->n);
        for (i = 0; i < s->n; i++) {
                h = mix_node(h, s, i);
        }
        h = mix(h, s->c.n_props);
        for (k = 0; k < s->c.n_props; k++) {
                h = mix_prop(h, s->c.props[k]);
        }
        h = mix(h, s->n_answers);
        for (k = 0; k < s->n_answers; k++) {
                h = mix_answer(h, &s->answers[k]);
        }
        h = mix(h, s->requests);
        h = mix(h, s->resends);
        h = mix(h, s->redirects);
        h = mix(h, s->unknowns);
        h = mix(h, s->cuts);
        h = mix(h, s->c.n_steps);
        h = mix(h, simcluster_now(&s->c));
        h = mix(h, s->faults_total);
        h = mix(h, s->multi_now);
        h = mix(h, s->multi_waited);
        h = mix(h, s->multi_left);
        h = mix(h, s->final_index);
        h = mix(h, s->c.violations);
        h = mix(h, s->c.n_bogus);
        return mix(h, s->c.anomalies);
}
