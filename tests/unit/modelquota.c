/* Quotas per identity in test_model (modelquota.h). */
#include "modelquota.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../include/baton.h"
#include "../../src/lib/cursor.h"

/* The subjects the generator gives quotas: the default, then the teams
 * whose principals OPENs carry. */
static const char *const subjects[CAP_QUOTAS] = {ACL_QUOTA_DEFAULT, "team-1",
                                                 "team-2", "team-3"};

/* ------------------------------------------------------------------------ */
/* The reference model. */

/* The limits of `principal`: its identity's own quota, else the
 * default's, else none; a session opened without a principal counts for
 * no one. */
static const uint32_t *m_limits(const struct model *m, uint64_t principal)
{
        const uint32_t *fallback = NULL;

        if (principal == 0 || (m->bugs & BUG_QUOTA_IGNORE)) {
                return NULL;
        }
        for (unsigned i = 0; i < m->nq; i++) {
                if (m->q[i].principal == principal) {
                        return m->q[i].limit;
                }
                if (m->q[i].principal == 0) {
                        fallback = m->q[i].limit;
                }
        }
        return fallback;
}

/* Whose quotas the live session `sid` counts in (0: no one's). */
static uint64_t m_principal_of(const struct model *m, uint64_t sid)
{
        for (unsigned i = 0; i < m->ns; i++) {
                if (m->s[i].id == sid) {
                        return m->s[i].principal;
                }
        }
        return 0;
}

void m_quota_use(const struct model *m, uint64_t principal,
                 uint32_t used[ACL_QUOTA_COUNTED])
{
        memset(used, 0, ACL_QUOTA_COUNTED * sizeof used[0]);
        if (principal == 0) {
                return;
        }
        for (unsigned i = 0; i < m->ns; i++) {
                if (m->s[i].principal == principal) {
                        used[ACL_QUOTA_SESSIONS]++;
                        used[ACL_QUOTA_LOCKS] += m->s[i].leaked;
                }
        }
        /* Every grant and every wait is a place, a multi-lock's one per
         * name; a wait turns into a grant in the same place. */
        for (unsigned i = 0; i < m->nl; i++) {
                const struct mlock *l = &m->l[i];
                for (unsigned j = 0; j < l->nh; j++) {
                        used[ACL_QUOTA_LOCKS] +=
                            m_principal_of(m, l->h[j].session) == principal;
                }
                for (unsigned j = 0; j < l->nw; j++) {
                        bool mine =
                            m_principal_of(m, l->w[j].session) == principal;
                        used[ACL_QUOTA_LOCKS] += mine;
                        used[ACL_QUOTA_WAITERS] += mine;
                }
        }
}

/* Refuse with quota `kind` of `limit` when `more` on top of `used` pass
 * it (0: no limit); nothing more is never refused. */
static bool m_over(const uint32_t *limit, int kind, uint32_t used,
                   uint32_t more, struct lockfsm_result *r)
{
        if (limit[kind] == 0 || more == 0 ||
            (uint64_t)used + more <= limit[kind]) {
                return false;
        }
        *r = rejected(BATON_EQUOTA);
        r->waiters = (uint32_t)kind;
        r->count = limit[kind];
        return true;
}

bool m_quota_open(const struct model *m, uint64_t principal,
                  struct lockfsm_result *r)
{
        const uint32_t *limit = m_limits(m, principal);
        uint32_t used[ACL_QUOTA_COUNTED];

        if (limit == NULL) {
                return false;
        }
        m_quota_use(m, principal, used);
        return m_over(limit, ACL_QUOTA_SESSIONS, used[ACL_QUOTA_SESSIONS], 1,
                      r);
}

bool m_quota_holds(const struct model *m, uint64_t sid, uint32_t holds,
                   uint32_t waits, struct lockfsm_result *r)
{
        uint64_t principal = m_principal_of(m, sid);
        const uint32_t *limit = m_limits(m, principal);
        uint32_t used[ACL_QUOTA_COUNTED];

        if (limit == NULL) {
                return false;
        }
        m_quota_use(m, principal, used);
        return m_over(limit, ACL_QUOTA_LOCKS, used[ACL_QUOTA_LOCKS], holds,
                      r) ||
               m_over(limit, ACL_QUOTA_WAITERS, used[ACL_QUOTA_WAITERS], waits,
                      r);
}

/* QUOTA_SET replaces the subject's whole quota, unless every limit is 0
 * (refused: nothing changes); QUOTA_REMOVE takes it out. */
static void m_quota_change(struct model *m, const struct command *c)
{
        bool dflt = c->name_len == 1 && c->name[0] == ACL_QUOTA_DEFAULT[0];
        uint64_t principal = dflt ? 0 : acl_principal(c->name, c->name_len);
        uint32_t limit[ACL_QUOTA_KINDS];
        bool any = false;
        struct rcursor r;
        unsigned i = 0;

        while (i < m->nq && m->q[i].principal != principal) {
                i++;
        }
        if (c->mode == COMMAND_ACL_QUOTA_REMOVE && i < m->nq) {
                m->q[i] = m->q[--m->nq];
        }
        if (c->mode != COMMAND_ACL_QUOTA_SET) {
                return;
        }
        rcursor_init(&r, c->list, c->list_len);
        for (unsigned k = 0; k < ACL_QUOTA_KINDS; k++) {
                limit[k] = rcursor_u32(&r);
                any |= limit[k] != 0;
        }
        if (!any) {
                return;
        }
        if (i == CAP_QUOTAS) {
                m->overflow = true;
                return;
        }
        m->nq += i == m->nq;
        m->q[i].principal = principal;
        memcpy(m->q[i].limit, limit, sizeof limit);
}

/* An ACL entry goes alone, and the raft glue gives it to the access list
 * after the lock state answered it (docs/fsm.md): the change counts from
 * the next entry on. A batch's ACL command changes nothing. */
void m_quota_entry(struct model *m, const uint8_t *buf, size_t len)
{
        struct command c;

        if (command_peek_type(buf, len) == COMMAND_ACL &&
            command_decode(&c, buf, len) == 0) {
                m_quota_change(m, &c);
        }
}

/* ------------------------------------------------------------------------ */
/* The generator. */

uint64_t gen_team(unsigned i)
{
        return acl_principal(subjects[i], strlen(subjects[i]));
}

uint64_t gen_principal(struct gen *g)
{
        unsigned i = rng_below(&g->rng, CAP_QUOTAS);

        /* 0: an admin's session, a node's without TLS, or one opened
         * before the first quota, none of them counted. */
        return i == 0 ? 0 : gen_team(i);
}

/* Small limits, so that they are reached: each counted kind none or a
 * few; the per-node kinds, which the state machine must not count, now
 * and then. Every limit 0 now and then too, which the access list
 * refuses. Quotas are removed about as often as set, so that stretches
 * without them keep the rest of the machine busy. */
void gen_quota(struct gen *g, struct command *c)
{
        const char *subject =
            subjects[chance(&g->rng, 10)
                         ? 0
                         : 1 + rng_below(&g->rng, CAP_QUOTAS - 1)];
        struct wcursor w;

        memset(c, 0, sizeof *c);
        c->type = COMMAND_ACL;
        c->mode = chance(&g->rng, 50) ? COMMAND_ACL_QUOTA_REMOVE
                                      : COMMAND_ACL_QUOTA_SET;
        c->name = subject;
        c->name_len = (uint8_t)strlen(subject);
        c->address = "admin";
        c->address_len = 5;
        if (c->mode == COMMAND_ACL_QUOTA_REMOVE) {
                return;
        }
        wcursor_init(&w, g->quota, sizeof g->quota);
        for (unsigned k = 0; k < ACL_QUOTA_COUNTED; k++) {
                /* Waits count in the locks quota too: the waiters quota
                 * refuses only below it. */
                uint32_t most = k == ACL_QUOTA_WAITERS ? 2 : 4;
                wcursor_u32(
                    &w, chance(&g->rng, 40) ? 0 : 1 + rng_below(&g->rng, most));
        }
        wcursor_u32(&w, chance(&g->rng, 20) ? 1 + rng_below(&g->rng, 3) : 0);
        wcursor_u32(&w, chance(&g->rng, 20) ? 1 + rng_below(&g->rng, 99) : 0);
        c->list = g->quota;
        c->list_len = COMMAND_ACL_QUOTA_TABLE;
}

/* ------------------------------------------------------------------------ */
/* The machine's side. */

/* The callback over an access list, as batond's (replay_quotas(),
 * src/server/raft/fsmreplay.c). */
static const uint32_t *quotas_of(void *acl, uint64_t principal)
{
        return acl_quota_of(acl, principal);
}

void modelquota_machine(struct lockfsm *f, struct acl *a)
{
        lockfsm_set_quota_cb(f, quotas_of, a);
}

/* As the raft glue's apply_acl() (src/server/raft/raftfsm.c). */
void modelquota_apply(struct acl *a, const uint8_t *buf, size_t len)
{
        struct command c;

        if (command_peek_type(buf, len) == COMMAND_ACL &&
            command_decode(&c, buf, len) == 0) {
                (void)acl_apply(a, &c);
        }
}

/* A snapshot's image carries the access list (docs/fsm.md). */
int modelquota_carry(struct acl *to, const struct acl *from)
{
        size_t n = acl_encode(from, NULL, 0);
        uint8_t *buf = malloc(n);
        int rv;

        if (buf == NULL) {
                return BATON_ENOMEM;
        }
        acl_encode(from, buf, n);
        rv = acl_decode(to, buf, n);
        free(buf);
        return rv;
}

/* What `f` and the model say of `principal`; false with why. */
static bool use_agrees(const struct lockfsm *f, const struct model *m,
                       uint64_t principal, char *why, size_t cap)
{
        uint32_t got[ACL_QUOTA_COUNTED], want[ACL_QUOTA_COUNTED];

        lockfsm_quota_use(f, principal, got);
        m_quota_use(m, principal, want);
        if (memcmp(got, want, sizeof got) == 0) {
                return true;
        }
        snprintf(why, cap,
                 "lockfsm_quota_use(%" PRIx64 ") = %" PRIu32 " sessions, "
                 "%" PRIu32 " locks, %" PRIu32 " waiters; expected %" PRIu32
                 " %" PRIu32 " %" PRIu32,
                 principal, got[0], got[1], got[2], want[0], want[1], want[2]);
        return false;
}

bool modelquota_use_agrees(const struct lockfsm *f, const struct model *m,
                           char *why, size_t cap)
{
        for (unsigned i = 1; i < CAP_QUOTAS; i++) {
                if (!use_agrees(f, m, gen_team(i), why, cap)) {
                        return false;
                }
        }
        /* A flipped byte may have opened one of anyone else. */
        for (unsigned i = 0; i < m->ns; i++) {
                uint64_t p = m->s[i].principal;
                bool team = false;
                for (unsigned k = 1; k < CAP_QUOTAS; k++) {
                        team |= p == gen_team(k);
                }
                if (!team && !use_agrees(f, m, p, why, cap)) {
                        return false;
                }
        }
        return true;
}
