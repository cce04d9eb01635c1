/* The command generator of test_model. */
#include "modelgen.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <string.h>

#include "../../include/baton.h"
#include "../../src/fsm/entry.h"
#include "modelquota.h"

/* ------------------------------------------------------------------------ */
/* The generator: random commands aimed at the interesting cases. */

const char *const lock_names[7] = {"alpha",       "beta", "gamma", "delta",
                                   ELECTION_NAME, "pool", "slots"};

void gen_init(struct gen *g, uint64_t seed)
{
        memset(g, 0, sizeof *g);
        g->rng.s = seed;
        memset(g->long_name, 'z', sizeof g->long_name);
        memset(g->long_value, 'v', sizeof g->long_value);
        g->clock_ms = 1795651200000ULL; /* 2026-11-26 */
}

static struct gsess *gen_sess(struct gen *g, uint64_t id)
{
        for (unsigned i = 0; i < g->ns; i++) {
                if (g->s[i].id == id) {
                        return &g->s[i];
                }
        }
        return NULL;
}

static void gen_name(struct gen *g, struct command *c)
{
        if (chance(&g->rng, 3)) {
                c->name = g->long_name;
                c->name_len = COMMAND_NAME_MAX;
                return;
        }
        /* One hot lock, so that queues fill up. */
        c->name =
            lock_names[chance(&g->rng, 30) ? 0
                                           : rng_below(&g->rng, NLOCK_NAMES)];
        c->name_len = (uint8_t)strlen(c->name);
}

/* The model's locks move when one is deleted: copy the name out. */
static void gen_copy_name(struct gen *g, struct command *c,
                          const struct mlock *l)
{
        memcpy(g->name, l->name, l->name_len);
        c->name = g->name;
        c->name_len = l->name_len;
}

/* A semaphore ACQUIRE: mostly of one of the semaphore names with its
 * number of permits (3 for "pool", 2 for "slots") and 1..that many
 * permits; now and then another name, number or count, each refused. */
static void gen_permits(struct gen *g, struct command *c)
{
        unsigned i;

        if (chance(&g->rng, 85)) {
                i = NLOCK_NAMES - NSEM_NAMES + rng_below(&g->rng, NSEM_NAMES);
                c->name = lock_names[i];
                c->name_len = (uint8_t)strlen(c->name);
        }
        c->limit = c->name_len == 4 && memcmp(c->name, "pool", 4) == 0 ? 3 : 2;
        if (chance(&g->rng, 8)) {
                c->limit = rng_below(&g->rng, LIM_PERMITS + 2);
        }
        c->permits = chance(&g->rng, 50) ? 1 : 1 + rng_below(&g->rng, 3);
        if (chance(&g->rng, 4)) {
                c->permits = chance(&g->rng, 50) ? 0 : c->limit + 1;
        }
}

/* A grant's value: empty, short, or as long as one can be. */
static void gen_value(struct gen *g, struct command *c)
{
        static const char *const values[] = {"", "a", "10.0.0.1:8080",
                                             "{\"node\":2}"};
        uint32_t p = rng_below(&g->rng, 100);

        if (p < 8) {
                c->value = g->long_value;
                c->value_len = COMMAND_VALUE_MAX;
                return;
        }
        c->value = values[p % 4];
        c->value_len = (uint8_t)strlen(c->value);
}

/* A campaign: mostly for the election, now and then for another name
 * (BATON_EKIND when it is a lock or a semaphore). */
static void gen_candidate(struct gen *g, struct command *c)
{
        if (chance(&g->rng, 85)) {
                c->name = ELECTION_NAME;
                c->name_len = (uint8_t)strlen(c->name);
        }
        gen_value(g, c);
}

/* The leader's UNBLOCK of a lock in its lock-delay (now and then of an
 * instance that is over, or of a lock in none); false if none is. */
static bool gen_unblock(struct gen *g, struct model *m, struct command *c)
{
        for (unsigned i = 0; i < m->nl; i++) {
                if (!m->l[i].blocked) {
                        continue;
                }
                c->type = COMMAND_UNBLOCK;
                gen_copy_name(g, c, &m->l[i]);
                c->target = chance(&g->rng, 90)
                                ? m->l[i].created
                                : m->l[i].created - rng_below(&g->rng, 3);
                return true;
        }
        return false;
}

static uint64_t gen_owner(struct gen *g)
{
        return chance(&g->rng, 3) ? 7 : 1 + rng_below(&g->rng, 2);
}

/* A token that is probably not the current grant of anything. */
static uint64_t gen_stale(struct gen *g, uint64_t current)
{
        uint32_t p = rng_below(&g->rng, 100);

        if (p < 50 && g->ntokens > 0) {
                return g->tokens[rng_below(&g->rng, g->ntokens)];
        }
        if (p < 80 && current > 1) {
                return current - 1 - rng_below(&g->rng, (uint32_t)current - 1);
        }
        return p < 90 ? current + 1 : rng_below(&g->rng, 3);
}

/* Mostly a live session, sometimes an ended one or one that never was. */
static uint64_t gen_session(struct gen *g, const struct model *m,
                            uint64_t index)
{
        uint32_t p = rng_below(&g->rng, 100);

        if (p < 82 && m->ns > 0) {
                return m->s[rng_below(&g->rng, m->ns)].id;
        }
        if (p < 94 && g->ns > 0) {
                return g->s[rng_below(&g->rng, g->ns)].id;
        }
        switch (rng_below(&g->rng, 4)) {
        case 0:
                return 0;
        case 1:
                return UINT64_MAX;
        case 2:
                return index;
        default:
                return 1 + rng_below(&g->rng, (uint32_t)index);
        }
}

/* Sequence numbers mostly fresh; sometimes zero, below the ack floor or
 * reused; acks that advance, lag behind or run ahead of the seq. */
static void gen_seq(struct gen *g, struct command *c)
{
        struct gsess *gs = gen_sess(g, c->session);
        uint32_t p = rng_below(&g->rng, 100);

        if (gs == NULL) {
                c->seq = 1 + rng_below(&g->rng, 5);
                c->ack = rng_below(&g->rng, 2);
                return;
        }
        c->ack = gs->ack;
        if (p < 88) {
                c->seq = gs->next_seq++;
        } else if (p < 92) {
                c->seq = 0;
        } else if (p < 96 && gs->ack > 1) {
                c->seq = 1 + rng_below(&g->rng, (uint32_t)gs->ack - 1);
                c->ack = rng_below(&g->rng, (uint32_t)c->seq + 1);
        } else {
                c->seq = 1 + rng_below(&g->rng, (uint32_t)gs->next_seq);
        }
        p = rng_below(&g->rng, 100);
        if (p < 55 && c->seq >= c->ack) {
                c->ack += rng_below(&g->rng, (uint32_t)(c->seq - c->ack + 1));
        } else if (p < 59) {
                c->ack = c->seq + 1 + rng_below(&g->rng, 3);
        } else if (p < 63 && c->ack > 0) {
                c->ack = rng_below(&g->rng, (uint32_t)c->ack);
        }
        if (c->ack <= c->seq && c->ack > gs->ack) {
                gs->ack = c->ack;
        }
}

static void gen_remember(struct gen *g, const struct command *c)
{
        struct gsess *gs = gen_sess(g, c->session);

        if (gs == NULL) {
                return;
        }
        gs->hist[gs->hpos].c = *c;
        if (c->name_len > 0) {
                memcpy(gs->hist[gs->hpos].name, c->name, c->name_len);
                gs->hist[gs->hpos].c.name = gs->hist[gs->hpos].name;
        }
        if (c->list_len > 0) {
                memcpy(gs->hist[gs->hpos].list, c->list, c->list_len);
                gs->hist[gs->hpos].c.list = gs->hist[gs->hpos].list;
        }
        gs->hpos = (gs->hpos + 1) % CAP_HIST;
        if (gs->nhist < CAP_HIST) {
                gs->nhist++;
        }
}

static bool gen_retry(struct gen *g, struct command *c)
{
        struct gsess *gs;

        if (g->ns == 0) {
                return false;
        }
        gs = &g->s[rng_below(&g->rng, g->ns)];
        if (gs->nhist == 0) {
                return false;
        }
        *c = gs->hist[rng_below(&g->rng, gs->nhist)].c;
        if (chance(&g->rng, 30) && gs->ack <= c->seq) {
                c->ack = gs->ack;
        }
        return true;
}

/* Picks a random waiter of the model (of `sid` if non-zero). */
static bool gen_waiter(struct gen *g, struct model *m, uint64_t sid,
                       struct mlock **lp, struct mwaiter **wp)
{
        unsigned n = 0, k;

        for (unsigned i = 0; i < m->nl; i++) {
                for (unsigned j = 0; j < m->l[i].nw; j++) {
                        n += sid == 0 || m->l[i].w[j].session == sid;
                }
        }
        if (n == 0) {
                return false;
        }
        k = rng_below(&g->rng, n);
        for (unsigned i = 0; i < m->nl; i++) {
                for (unsigned j = 0; j < m->l[i].nw; j++) {
                        if (sid != 0 && m->l[i].w[j].session != sid) {
                                continue;
                        }
                        if (k-- == 0) {
                                *lp = &m->l[i];
                                *wp = &m->l[i].w[j];
                                return true;
                        }
                }
        }
        return false;
}

static void gen_open(struct gen *g, const struct model *m, struct command *c)
{
        uint32_t p = rng_below(&g->rng, 100);
        static const uint32_t bad_ttl[] = {0, LIM_MIN_TTL - 1, LIM_MAX_TTL + 1,
                                           UINT32_MAX};

        c->type = COMMAND_OPEN;
        if (p < 15 && m->ns > 0) {
                c->nonce = m->s[rng_below(&g->rng, m->ns)].nonce;
        } else if (p < 20) {
                c->nonce = 0;
        } else if (p < 25 && g->ns > 0) {
                c->nonce = g->s[rng_below(&g->rng, g->ns)].nonce;
        } else {
                c->nonce = rng_next(&g->rng);
        }
        c->ttl_ms = chance(&g->rng, 92)
                        ? LIM_MIN_TTL +
                              rng_below(&g->rng, LIM_MAX_TTL - LIM_MIN_TTL + 1)
                        : bad_ttl[rng_below(&g->rng, 4)];
        c->name_len = chance(&g->rng, 3) ? COMMAND_CLIENT_NAME_MAX
                                         : (uint8_t)rng_below(&g->rng, 9);
        for (unsigned i = 0; i < c->name_len; i++) {
                g->client[i] = (char)('a' + rng_below(&g->rng, 26));
        }
        c->name = g->client;
        /* The owner's hash, opaque to the machine; now and then none (a
         * version 1 OPEN), which it keeps as all zero. */
        for (unsigned i = 0; i < COMMAND_HASH_SIZE; i++) {
                g->hash[i] = (uint8_t)rng_next(&g->rng);
        }
        c->hash = chance(&g->rng, 90) ? g->hash : NULL;
        /* Whose quotas it counts in (the leader writes it). */
        c->principal = gen_principal(g);
        /* A lock-delay of its own now and then, rarely above the limit. */
        p = rng_below(&g->rng, 100);
        c->delay_ms = p < 75   ? 0
                      : p < 97 ? 1 + rng_below(&g->rng, LIM_DELAY)
                               : LIM_DELAY + 1 + rng_below(&g->rng, 100);
}

/* A MULTI's names: usually two or three, now and then one too many, the
 * hot lock often among them, a semaphore's name or a name twice now and
 * then; mostly writers, some readers, and rarely a mode no lock has. */
static void gen_multi(struct gen *g, struct command *c)
{
        unsigned n = 1 + rng_below(&g->rng, LIM_NAMES + 1);
        bool long_used = false;
        size_t len = 0;

        c->type = COMMAND_MULTI;
        for (unsigned i = 0; i < n; i++) {
                uint32_t p = rng_below(&g->rng, 100);
                uint8_t mode = p < 70   ? COMMAND_MODE_EXCLUSIVE
                               : p < 97 ? COMMAND_MODE_SHARED
                                        : (uint8_t)(2 + rng_below(&g->rng, 3));
                gen_name(g, c);
                if (c->name_len == COMMAND_NAME_MAX && long_used) {
                        c->name = lock_names[0];
                        c->name_len = (uint8_t)strlen(c->name);
                }
                long_used |= c->name_len == COMMAND_NAME_MAX;
                assert_int_equal(command_list_add(g->list, sizeof g->list, &len,
                                                  mode, c->name, c->name_len),
                                 0);
        }
        c->name = NULL;
        c->name_len = 0;
        c->n_names = (uint8_t)n;
        c->list = g->list;
        c->list_len = (uint16_t)len;
}

/* A PROCLAIM of a leader of an election, or a SET_VALUE of any holder
 * (mostly with its token, now and then a stale one), or now and then of
 * anyone's anything; false when there is nothing to change. */
static bool gen_proclaim(struct gen *g, struct model *m, uint64_t index,
                         struct command *c)
{
        const struct mlock *l =
            m->nl > 0 ? &m->l[rng_below(&g->rng, m->nl)] : NULL;

        if (l == NULL || l->nh == 0) {
                return false;
        }
        /* PROCLAIM is an election's (EKIND now and then for a lock's);
         * SET_VALUE any grant's. */
        c->type = l->election ? (chance(&g->rng, 50) ? COMMAND_PROCLAIM
                                                     : COMMAND_SET_VALUE)
                  : chance(&g->rng, 85) ? COMMAND_SET_VALUE
                                        : COMMAND_PROCLAIM;
        gen_copy_name(g, c, l);
        c->session = l->h[0].session;
        c->owner = l->h[0].owner;
        c->token =
            chance(&g->rng, 85) ? l->h[0].token : gen_stale(g, l->h[0].token);
        if (chance(&g->rng, 10)) {
                c->session = gen_session(g, m, index);
                c->owner = gen_owner(g);
        }
        gen_value(g, c);
        gen_seq(g, c);
        gen_remember(g, c);
        return true;
}

/* A random holder of a random lock, or NULL when there is none. */
static const struct mhold *gen_any_hold(struct gen *g, const struct model *m,
                                        const struct mlock **l)
{
        *l = m->nl > 0 ? &m->l[rng_below(&g->rng, m->nl)] : NULL;
        return *l != NULL && (*l)->nh > 0
                   ? &(*l)->h[rng_below(&g->rng, (*l)->nh)]
                   : NULL;
}

/* Hold times: the holder's EXTEND (mostly of its grant with its token,
 * now and then stale, over the limit, or another session's), or the
 * leader's EXPIRE_HOLD (mostly naming the clock's entry, now and then an
 * older one, as when an EXTEND came first). False when no one holds
 * anything. */
static bool gen_hold_time(struct gen *g, struct model *m, uint64_t index,
                          struct command *c)
{
        const struct mlock *l;
        const struct mhold *h = gen_any_hold(g, m, &l);

        if (h == NULL) {
                return false;
        }
        gen_copy_name(g, c, l);
        c->session = h->session;
        if (chance(&g->rng, 50)) {
                c->type = COMMAND_EXPIRE_HOLD;
                c->target = chance(&g->rng, 90) ? h->seq : h->seq + 1;
                c->token = chance(&g->rng, 80) ? h->armed : gen_stale(g, index);
                c->delay_ms =
                    chance(&g->rng, 50) ? 0 : 1 + rng_below(&g->rng, 1000);
                return true;
        }
        c->type = COMMAND_EXTEND;
        c->owner = h->owner;
        c->token = chance(&g->rng, 85) ? h->token : gen_stale(g, h->token);
        c->hold_ms = chance(&g->rng, 90)
                         ? 1 + rng_below(&g->rng, LIM_HOLD_MS)
                         : LIM_HOLD_MS + 1 + rng_below(&g->rng, 1000);
        if (chance(&g->rng, 10)) {
                c->session = gen_session(g, m, index);
                c->owner = gen_owner(g);
        }
        gen_seq(g, c);
        gen_remember(g, c);
        return true;
}

/* A random holder of `l`, or NULL when it has none. */
static const struct mhold *gen_hold(struct gen *g, const struct mlock *l)
{
        return l->nh > 0 ? &l->h[rng_below(&g->rng, l->nh)] : NULL;
}

/* An administrator's REVOKE_LOCK of a random grant, now and then of a
 * stale token or of a lock no one holds; half with a lock-delay. False
 * when there is no lock to name. */
static bool gen_revoke_lock(struct gen *g, struct model *m, uint64_t index,
                            struct command *c)
{
        const struct mlock *l;
        const struct mhold *h;

        if (m->nl == 0) {
                return false;
        }
        l = &m->l[rng_below(&g->rng, m->nl)];
        h = gen_hold(g, l);
        c->type = COMMAND_REVOKE_LOCK;
        gen_copy_name(g, c, l);
        c->session = h != NULL ? h->session : gen_session(g, m, index);
        c->token = h != NULL && chance(&g->rng, 85)
                       ? h->token
                       : gen_stale(g, h != NULL ? h->token : index);
        c->delay_ms = chance(&g->rng, 50) ? 0 : 1 + rng_below(&g->rng, 1000);
        c->address = "operator";
        c->address_len = 8;
        return true;
}

/* A RELEASE, mostly of a grant the model knows, now and then stale. */
static void gen_release(struct gen *g, struct model *m, uint64_t index,
                        struct command *c)
{
        const struct mhold *h;
        struct mlock *l;

        c->type = COMMAND_RELEASE;
        l = m->nl > 0 && chance(&g->rng, 65) ? &m->l[rng_below(&g->rng, m->nl)]
                                             : NULL;
        h = l != NULL ? gen_hold(g, l) : NULL;
        if (h != NULL) {
                c->session = h->session;
                c->owner = h->owner;
                gen_copy_name(g, c, l);
                c->token =
                    chance(&g->rng, 88) ? h->token : gen_stale(g, h->token);
        } else {
                c->session = gen_session(g, m, index);
                c->owner = gen_owner(g);
                gen_name(g, c);
                l = m_lock(m, c->name, c->name_len);
                h = l != NULL ? gen_hold(g, l) : NULL;
                c->token = h != NULL && chance(&g->rng, 50)
                               ? h->token
                               : gen_stale(g, index);
        }
}

/* An ACQUIRE (or a MULTI) in any mode, with any wait. */
static void gen_acquire(struct gen *g, struct model *m, uint64_t index,
                        struct command *c)
{
        uint32_t p;

        c->type = COMMAND_ACQUIRE;
        c->session = gen_session(g, m, index);
        c->owner = gen_owner(g);
        if (chance(&g->rng, 20)) {
                gen_multi(g, c);
        } else {
                gen_name(g, c);
        }
        p = rng_below(&g->rng, 100);
        c->wait_ms = p < 40   ? COMMAND_WAIT_TRY
                     : p < 70 ? COMMAND_WAIT_FOREVER
                              : 1 + rng_below(&g->rng, 60000);
        p = rng_below(&g->rng, 100);
        if (c->type == COMMAND_MULTI) {
                p = 0; /* each name has its mode */
        }
        c->mode = p < 45   ? COMMAND_MODE_EXCLUSIVE
                  : p < 70 ? COMMAND_MODE_SHARED
                  : p < 85 ? COMMAND_MODE_SEMAPHORE
                  : p < 99 ? COMMAND_MODE_ELECTION
                           : (uint8_t)(4 + rng_below(&g->rng, 252));
        if (c->mode == COMMAND_MODE_SEMAPHORE) {
                gen_permits(g, c);
        }
        if (c->mode == COMMAND_MODE_ELECTION) {
                gen_candidate(g, c);
        } else if (c->type == COMMAND_ACQUIRE && chance(&g->rng, 25)) {
                gen_value(g, c); /* a grant's data (version 4) */
        }
        if (c->type == COMMAND_ACQUIRE && c->mode != COMMAND_MODE_ELECTION &&
            chance(&g->rng, 20)) {
                /* A hold time (version 4), now and then over the limit. */
                c->hold_ms = chance(&g->rng, 90)
                                 ? 1 + rng_below(&g->rng, LIM_HOLD_MS)
                                 : LIM_HOLD_MS + 1 + rng_below(&g->rng, 1000);
        }
}

/* One well-formed command, in memory. */

static void gen_command(struct gen *g, struct model *m, uint64_t index,
                        struct command *c)
{
        uint32_t p = rng_below(&g->rng, 100);
        const struct mhold *h;
        struct mlock *l;
        struct mwaiter *w;

        memset(c, 0, sizeof *c);
        if (m->ns < 2 && chance(&g->rng, 50)) {
                p = 0;
        }
        if (p < 9) {
                gen_open(g, m, c);
                return;
        }
        if (chance(&g->rng, 12) && gen_unblock(g, m, c)) {
                return;
        }
        if (chance(&g->rng, 4) && gen_revoke_lock(g, m, index, c)) {
                return;
        }
        if (chance(&g->rng, 5) && gen_proclaim(g, m, index, c)) {
                return;
        }
        if (chance(&g->rng, 5) && gen_hold_time(g, m, index, c)) {
                return;
        }
        if (chance(&g->rng, 4)) {
                /* The leader's clock: a second or so on, now and then a
                 * new leader's, behind. */
                c->type = COMMAND_CLOCK;
                g->clock_ms += chance(&g->rng, 90)
                                   ? 900 + rng_below(&g->rng, 400)
                                   : (uint64_t)0 - rng_below(&g->rng, 3000);
                c->time_ms = g->clock_ms;
                return;
        }
        if (p < 18 && gen_retry(g, c)) {
                return;
        }
        if (p < 23) {
                /* One in five an operator's REVOKE, which ends it alike;
                 * half of them with a lock-delay. */
                c->type = chance(&g->rng, 20) ? COMMAND_REVOKE : COMMAND_EXPIRE;
                c->delay_ms =
                    chance(&g->rng, 50) ? 0 : 1 + rng_below(&g->rng, 1000);
                c->session = gen_session(g, m, index);
                /* Prefer holders with waiters: expiry with handover. */
                for (unsigned i = 0; chance(&g->rng, 50) && i < m->nl; i++) {
                        if (m->l[i].nw > 0 && m->l[i].nh > 0) {
                                c->session = m->l[i].h[0].session;
                                break;
                        }
                }
                return;
        }
        if (p < 28) {
                c->type = COMMAND_TIMEOUT;
                if (chance(&g->rng, 75) && gen_waiter(g, m, 0, &l, &w)) {
                        c->session = w->session;
                        c->target = w->seq;
                        gen_copy_name(g, c, l);
                        return;
                }
                c->session = gen_session(g, m, index);
                c->target = 1 + rng_below(&g->rng, 8);
                gen_name(g, c);
                return;
        }
        if (p < 31) {
                c->type = COMMAND_QUERY;
                gen_name(g, c);
                return;
        }
        if (p < 36) {
                c->type = COMMAND_CHECK;
                gen_name(g, c);
                l = m_lock(m, c->name, c->name_len);
                h = l != NULL ? gen_hold(g, l) : NULL;
                c->token = h != NULL && chance(&g->rng, 50)
                               ? h->token
                               : gen_stale(g, h != NULL ? h->token : index);
                return;
        }
        if (p < 40) {
                c->type = COMMAND_CLOSE;
                c->session = gen_session(g, m, index);
        } else if (p < 45) {
                c->type = COMMAND_CANCEL;
                c->session = gen_session(g, m, index);
                if (chance(&g->rng, 70) &&
                    gen_waiter(g, m, c->session, &l, &w)) {
                        c->target = w->seq;
                        gen_copy_name(g, c, l);
                } else {
                        c->target = 1 + rng_below(&g->rng, 8);
                        gen_name(g, c);
                }
        } else if (p < 65) {
                gen_release(g, m, index, c);
        } else {
                gen_acquire(g, m, index, c);
        }
        gen_seq(g, c);
        gen_remember(g, c);
}

/* Flip a byte of an encoded command now and then (usually part of a name,
 * sometimes into a NUL), keeping its length. */
static void gen_flip(struct gen *g, uint8_t *buf, size_t len)
{
        size_t i;

        if (!chance(&g->rng, 2)) {
                return;
        }
        i = chance(&g->rng, 25) ? len - 1 : rng_below(&g->rng, (uint32_t)len);
        buf[i] ^= chance(&g->rng, 25) && buf[i] != 0
                      ? buf[i]
                      : (uint8_t)(1 + rng_below(&g->rng, 255));
}

/* The bytes of the next entry: an encoded command, or now and then random
 * bytes or an encoding with one byte flipped. */
size_t gen_entry(struct gen *g, struct model *m, uint64_t index, uint8_t *buf,
                 size_t cap)
{
        struct command c;
        size_t len;

        if (chance(&g->rng, 3) && chance(&g->rng, 40)) {
                len = rng_below(&g->rng, 41);
                for (size_t i = 0; i < len; i++) {
                        buf[i] = (uint8_t)rng_next(&g->rng);
                }
                if (len > 0 && chance(&g->rng, 75)) {
                        buf[0] = COMMAND_VERSION;
                }
                if (len > 1 && chance(&g->rng, 50)) {
                        buf[1] = (uint8_t)(1 + rng_below(&g->rng, 9));
                }
                return len;
        }
        if (chance(&g->rng, 2)) {
                /* A quota change: an ACL entry, which the leader
                 * proposes alone, never in a batch; and never damaged. */
                gen_quota(g, &c);
                len = command_encode(&c, buf, cap);
                assert_true(len > 0);
                return len;
        }
        gen_command(g, m, index, &c);
        len = command_encode(&c, buf, cap);
        assert_true(len > 0);
        gen_flip(g, buf, len);
        return len;
}

/* A RESULT event as lockfsm emits one for command `c` (zeroed for one
 * that did not decode). */
static void m_result_ev(struct evlog *log, uint64_t index,
                        const struct command *c, const struct lockfsm_result *r)
{
        struct ev *v = m_ev(log, LOCKFSM_EV_RESULT, index, c->type);

        v->session = c->type == COMMAND_OPEN ? r->session : c->session;
        v->seq = c->seq;
        v->owner = c->owner;
        v->token = r->token;
        v->nonce = c->nonce;
        v->status = r->status;
        if (c->type != COMMAND_OPEN && c->name != NULL) {
                v->name_len = c->name_len;
                memcpy(v->name, c->name, c->name_len);
        }
        v->has_result = true;
        v->result = *r;
}

/* The client learns from the model's answers, never from the machine's, so
 * a seed names the same commands whatever the implementation does. */
static void gen_observe(struct gen *g, const struct command *c,
                        const struct lockfsm_result *r, const struct ev *ev,
                        unsigned n)
{
        if (c->type == COMMAND_OPEN && r->status == 0 && !r->duplicate &&
            g->ns < CAP_KNOWN) {
                struct gsess *gs = &g->s[g->ns++];

                memset(gs, 0, sizeof *gs);
                gs->id = r->session;
                gs->nonce = c->nonce;
                gs->next_seq = 1;
        }
        for (unsigned i = 0; i < n; i++) {
                if (ev[i].type == LOCKFSM_EV_GRANT) {
                        g->tokens[g->tpos] = ev[i].token;
                        g->tpos = (g->tpos + 1) % CAP_TOKENS;
                        if (g->ntokens < CAP_TOKENS) {
                                g->ntokens++;
                        }
                }
        }
}

/* One command's bytes, applied by the model as lockfsm_apply would: its
 * events and RESULT go to `log`, and the client learns from the answer. */
static struct lockfsm_result m_command(struct model *m, struct gen *g,
                                       uint64_t index, const uint8_t *p,
                                       size_t n, struct evlog *log)
{
        struct lockfsm_result r;
        struct command c;
        unsigned from = log->n;
        int dec = command_decode(&c, p, n);

        if (dec != 0) {
                memset(&c, 0, sizeof c);
                m_stamp(m, index);
                r = rejected(dec);
        } else {
                r = m_apply(m, index, &c, log);
        }
        m_result_ev(log, index, &c, &r);
        if (dec == 0) {
                gen_observe(g, &c, &r, &log->ev[from], log->n - from);
        }
        return r;
}

/* The model's answer to a whole entry, parsed the way lockfsm_apply
 * parses it: a batch's commands in order, or one command. */
struct lockfsm_result m_entry(struct model *m, struct gen *g, uint64_t index,
                              const uint8_t *buf, size_t len, struct evlog *log)
{
        struct lockfsm_result r;
        struct entry_reader rd;
        const uint8_t *p;
        size_t n;
        int rv;

        if (!entry_is_batch(buf, len)) {
                r = m_command(m, g, index, buf, len, log);
                m_quota_entry(m, buf, len);
                return r;
        }
        rv = entry_reader_init(&rd, buf, len);
        if (rv != 0) {
                struct command none;

                memset(&none, 0, sizeof none);
                m_stamp(m, index);
                r = rejected(rv);
                m_result_ev(log, index, &none, &r);
                return r;
        }
        while (entry_reader_next(&rd, &p, &n)) {
                m_command(m, g, index, p, n, log);
        }
        r = outcome(PROTO_KIND_APPLIED, 0, 0);
        r.count = rd.count;
        return r;
}

/* A batch of up to 8 commands, each generated from the model's state
 * after the ones before it were applied (so a batch can grant a lock and
 * release it again: the case of the one-grant-per-entry rule), or now and
 * then generated up front and then damaged, so its framing is tested. */
size_t gen_batch(struct gen *g, struct model *m, uint64_t index, uint8_t *buf,
                 size_t cap, struct evlog *log, struct lockfsm_result *want)
{
        unsigned k = rng_below(&g->rng, 9);
        bool damage = chance(&g->rng, 4);
        struct entry_writer w;
        size_t len;

        entry_writer_init(&w, buf, cap, index);
        for (unsigned i = 0; i < k; i++) {
                uint8_t cmd[COMMAND_ANY_MAX_SIZE];
                struct command c;
                size_t n;

                gen_command(g, m, index, &c);
                n = command_encode(&c, cmd, sizeof cmd);
                assert_true(n > 0);
                gen_flip(g, cmd, n);
                if (!entry_writer_add(&w, cmd, n)) {
                        break;
                }
                if (!damage) {
                        m_command(m, g, index, cmd, n, log);
                }
        }
        len = entry_writer_finish(&w);
        if (!damage) {
                *want = outcome(PROTO_KIND_APPLIED, 0, 0);
                want->count = w.count;
                return len;
        }
        switch (rng_below(&g->rng, 4)) {
        case 0: /* a header byte: version, type, flags, count, term */
                buf[rng_below(&g->rng, ENTRY_HEADER_SIZE)] ^=
                    (uint8_t)(1 + rng_below(&g->rng, 255));
                break;
        case 1: /* a record's length */
                if (w.count > 0) {
                        buf[ENTRY_HEADER_SIZE] ^=
                            (uint8_t)(1 + rng_below(&g->rng, 255));
                }
                break;
        case 2: /* cut short, or run long */
                len = chance(&g->rng, 50) && len > 8 ? len - 8 : len + 8;
                memset(buf + len - 8, 0, len < cap ? 8 : 0);
                break;
        default: /* padding that is not zero */
                if (len > ENTRY_HEADER_SIZE) {
                        buf[len - 1] ^= 1;
                }
                break;
        }
        *want = m_entry(m, g, index, buf, len, log);
        return len;
}
