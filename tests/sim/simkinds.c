/* test_simclient's clients, kind by kind (simkinds.h). */
#include "simkinds.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "sim.h"

const char *const kinds_names[KINDS_NAMES] = {
    "alpha", "beta", "gamma", "rw0", "rw1", "sem0", "sem1", "vote0", "vote1"};

const char *const kinds_kind_names[N_KINDS] = {
    "exclusive", "shared", "semaphore", "multi", "election"};

/* The semaphores' sizes: a small one, where a few clients fill it, and a
 * larger one, where permits of many kinds mix. */
static const uint32_t sem_limits[KINDS_SEMS] = {3, 5};

uint32_t kinds_sem_limit(unsigned i)
{
        return i >= KINDS_SEM && i < KINDS_SEM + KINDS_SEMS
                   ? sem_limits[i - KINDS_SEM]
                   : 0;
}

int kinds_index(const char *name, size_t len)
{
        for (unsigned i = 0; i < KINDS_NAMES; i++) {
                if (strlen(kinds_names[i]) == len &&
                    memcmp(kinds_names[i], name, len) == 0) {
                        return (int)i;
                }
        }
        return -1;
}

/* Each kind 1..6, and now and then a client that never asks for one of
 * them: the mixes differ from client to client, and every kind stays
 * common across the 24 clients. */
void kinds_profile(struct kprofile *p, struct rng *rng)
{
        for (unsigned i = 0; i < N_KINDS; i++) {
                p->weight[i] = rng_chance(rng, 10) ? 0 : rng_range(rng, 1, 6);
        }
        p->weight[KIND_EXCLUSIVE] += 1; /* never an empty mix */
        for (unsigned i = 0; i < KINDS_SEMS; i++) {
                p->permits[i] = rng_range(rng, 1, sem_limits[i] - 1);
        }
}

static enum kind pick_kind(const struct kprofile *p, struct rng *rng)
{
        unsigned total = 0, draw;

        for (unsigned i = 0; i < N_KINDS; i++) {
                total += p->weight[i];
        }
        draw = rng_below(rng, total);
        for (unsigned i = 0; i < N_KINDS; i++) {
                if (draw < p->weight[i]) {
                        return (enum kind)i;
                }
                draw -= p->weight[i];
        }
        return KIND_EXCLUSIVE;
}

/* 2 or 3 distinct names of the five locks, each shared now and then
 * where the name allows it (rw0, rw1). */
static void draw_multi(struct rng *rng, struct kcall *c)
{
        size_t used = 0;

        c->n = rng_range(rng, 2, KINDS_MULTI_MAX);
        for (unsigned i = 0; i < c->n; i++) {
                unsigned name;
                bool again;

                do {
                        name = rng_below(rng, KINDS_LOCKS);
                        again = false;
                        for (unsigned j = 0; j < i; j++) {
                                again = again || c->names[j] == name;
                        }
                } while (again);
                c->names[i] = name;
                c->modes[i] = name >= KINDS_PLAIN && rng_chance(rng, 50)
                                  ? COMMAND_MODE_SHARED
                                  : COMMAND_MODE_EXCLUSIVE;
                (void)command_list_add(c->list, sizeof c->list, &used,
                                       c->modes[i], kinds_names[name],
                                       strlen(kinds_names[name]));
        }
        c->ask.list = c->list;
        c->ask.list_len = (uint16_t)used;
        c->ask.n_names = (uint8_t)c->n;
}

void kinds_draw(const struct kprofile *p, struct rng *rng, struct kcall *c)
{
        memset(c, 0, sizeof *c);
        c->kind = pick_kind(p, rng);
        c->n = 1;
        switch (c->kind) {
        case KIND_EXCLUSIVE:
                c->names[0] = rng_below(rng, KINDS_LOCKS);
                c->modes[0] = COMMAND_MODE_EXCLUSIVE;
                break;
        case KIND_SHARED:
                c->names[0] = KINDS_PLAIN + rng_below(rng, 2);
                c->modes[0] = COMMAND_MODE_SHARED;
                break;
        case KIND_SEMAPHORE: {
                unsigned s = rng_below(rng, KINDS_SEMS);

                c->names[0] = KINDS_SEM + s;
                c->modes[0] = COMMAND_MODE_SEMAPHORE;
                c->ask.permits = p->permits[s];
                c->ask.limit = sem_limits[s];
                break;
        }
        case KIND_MULTI:
                draw_multi(rng, c);
                return;
        case KIND_ELECTION:
                c->names[0] = KINDS_ELECT + rng_below(rng, KINDS_ELECTS);
                c->modes[0] = COMMAND_MODE_ELECTION;
                snprintf(c->value, sizeof c->value, "sim-c%08" PRIx32,
                         (uint32_t)rng_next(rng));
                c->ask.value = c->value;
                c->ask.value_len = (uint8_t)strlen(c->value);
                break;
        default:
                break;
        }
        c->ask.mode = c->modes[0];
}

void kinds_granted(struct kinds_run *kr, struct kcall *c, struct rng *rng,
                   uint64_t session, uint64_t seq, uint64_t token)
{
        kr->grants[c->kind]++;
        c->token = token;
        c->session = session;
        c->next = 0;
        c->proclaims = c->kind == KIND_ELECTION ? rng_below(rng, 3) : 0;
        if (seq == 0) {
                return;
        }
        if (kr->n_acks == KINDS_ACKS_MAX) {
                kr->acks_over++;
                return;
        }
        struct kack *a = &kr->acks[kr->n_acks++];

        *a = (struct kack){session, seq, token, (uint8_t)c->n, {0}};
        for (unsigned i = 0; i < c->n; i++) {
                a->names[i] = (uint8_t)c->names[i];
        }
}

bool kinds_next_command(struct kcall *c, struct rng *rng, struct command *k,
                        bool *proclaim)
{
        const char *name;

        if (c->next >= c->n) {
                return false;
        }
        name = kinds_names[c->names[c->next]];
        memset(k, 0, sizeof *k);
        k->owner = 1;
        k->name = name;
        k->name_len = (uint8_t)strlen(name);
        k->token = c->token;
        *proclaim = c->proclaims > 0;
        if (*proclaim) {
                /* A leader that advertises a new address, and leads on. */
                c->proclaims--;
                snprintf(c->value, sizeof c->value, "sim-p%08" PRIx32,
                         (uint32_t)rng_next(rng));
                k->type = COMMAND_PROCLAIM;
                k->value = c->value;
                k->value_len = (uint8_t)strlen(c->value);
                return true;
        }
        k->type = COMMAND_RELEASE;
        c->next++;
        return true;
}

static bool granted_at(const struct simnode *n, const struct kack *a,
                       unsigned name)
{
        const char *want = kinds_names[name];
        size_t len = strlen(want);

        for (size_t k = sim_first_event(n, a->token);
             k < n->n_events && n->events[k].index == a->token; k++) {
                const struct simevent *ev = &n->events[k];

                if (ev->type == LOCKFSM_EV_GRANT && ev->session == a->session &&
                    ev->seq == a->seq && ev->name_len == len &&
                    memcmp(ev->name, want, len) == 0) {
                        return true;
                }
        }
        return false;
}

int kinds_check_acks(const struct kinds_run *kr, const struct simnode *n,
                     char *reason, size_t cap)
{
        for (unsigned i = 0; i < kr->n_acks; i++) {
                const struct kack *a = &kr->acks[i];

                for (unsigned j = 0; j < a->n; j++) {
                        if (!granted_at(n, a, a->names[j])) {
                                return fail(reason, cap,
                                            "grant of %s (name %u of %u) to "
                                            "session %" PRIx64 " seq %" PRIu64
                                            " token %" PRIu64
                                            " acknowledged, not in the log",
                                            kinds_names[a->names[j]], j + 1,
                                            a->n, a->session, a->seq, a->token);
                        }
                }
        }
        return 0;
}

void kinds_break_ack(struct kinds_run *kr)
{
        for (unsigned i = 0; i < kr->n_acks; i++) {
                struct kack *a = &kr->acks[i];
                unsigned other = 0;

                if (a->n < 2) {
                        continue;
                }
                for (unsigned j = 0; j < a->n; j++) {
                        if (a->names[j] == other) {
                                other++;
                                j = (unsigned)-1; /* from the start again */
                        }
                }
                a->names[a->n - 1] = (uint8_t)other;
                return;
        }
}
