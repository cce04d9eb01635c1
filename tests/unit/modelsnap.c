/* The check of lockfsm's snapshot against the reference model, field by
 * field, in the format of docs/fsm.md. */
#include "modelsnap.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "../../src/proto/command.h"

/* A bounds-checked little-endian reader for the snapshot format. */
struct rd {
        const uint8_t *p;
        size_t left;
        bool bad;
};

static uint64_t rd_n(struct rd *r, unsigned n)
{
        uint64_t v = 0;

        if (r->bad || r->left < n) {
                r->bad = true;
                return 0;
        }
        for (unsigned i = 0; i < n; i++) {
                v |= (uint64_t)r->p[i] << (8 * i);
        }
        r->p += n;
        r->left -= n;
        return v;
}

/* Compares a string field; false (and the reader bad) when it differs. */
static bool rd_str(struct rd *r, const char *want, size_t len)
{
        size_t n = (size_t)rd_n(r, 1);

        if (r->bad || n != len || r->left < n || memcmp(r->p, want, n) != 0) {
                return false;
        }
        r->p += n;
        r->left -= n;
        return true;
}

static uint64_t fnv1a(const uint8_t *p, size_t n)
{
        uint64_t h = 0xcbf29ce484222325ULL;

        for (size_t i = 0; i < n; i++) {
                h = (h ^ p[i]) * 0x100000001b3ULL;
        }
        return h;
}

/* A snapshot being read, and where the first difference goes. */
struct snapcheck {
        struct rd r;
        char *why;
        size_t cap;
};

static bool differ(struct snapcheck *k, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Records the difference and returns false, so checks read as
 * `return differ(...)`. */
static bool differ(struct snapcheck *k, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(k->why, k->cap, fmt, ap);
        va_end(ap);
        return false;
}

#define WANT(cond, ...)                                                        \
        do {                                                                   \
                if (k->r.bad || !(cond)) {                                     \
                        return differ(k, "snapshot: " __VA_ARGS__);            \
                }                                                              \
        } while (0)

/* The header (checksum, magic, version, indices, clock) and the tombstones. */
static bool check_header(struct snapcheck *k, const struct model *m,
                         const uint8_t *buf, size_t len, uint64_t index)
{
        uint64_t v;

        WANT(len >= 8 && fnv1a(buf, len - 8) ==
                             rd_n(&(struct rd){buf + len - 8, 8, false}, 8),
             "bad checksum");
        k->r.left -= 8;
        WANT(rd_n(&k->r, 4) == 0x534e5442, "bad magic");
        WANT(rd_n(&k->r, 2) == 13, "bad version");
        WANT(rd_n(&k->r, 2) == 0, "bad flags");
        v = rd_n(&k->r, 8);
        WANT(v == index, "last_index %" PRIu64 ", expected %" PRIu64, v, index);
        v = rd_n(&k->r, 8);
        WANT(v == m->stamp, "stamp %" PRIu64 ", expected %" PRIu64, v,
             m->stamp);
        v = rd_n(&k->r, 8);
        WANT(v == m->clock_ms, "clock %" PRIu64 ", expected %" PRIu64, v,
             m->clock_ms);
        v = rd_n(&k->r, 4);
        WANT(v == m->nt, "%" PRIu64 " tombstones, expected %u", v, m->nt);
        for (unsigned i = 0; i < m->nt; i++) {
                v = rd_n(&k->r, 8);
                WANT(v == m->t[i].session,
                     "tombstone %u is %" PRIu64 ", expected %" PRIu64, i, v,
                     m->t[i].session);
                v = rd_n(&k->r, 1);
                WANT(v == (uint64_t)-m->t[i].status,
                     "tombstone %u reason %" PRIu64, i, v);
        }
        return true;
}

/* The outcomes session `s` remembers. */
static bool check_outcomes(struct snapcheck *k, const struct msess *s)
{
        uint64_t v;

        for (unsigned j = 0; j < s->nout; j++) {
                const struct lockfsm_result *want = &s->out[j].res;
                struct lockfsm_result got;
                char a[256], b[256];

                memset(&got, 0, sizeof got);
                v = rd_n(&k->r, 8);
                WANT(v == s->out[j].seq,
                     "session %" PRIu64 " remembers seq %" PRIu64
                     ", expected %" PRIu64,
                     s->id, v, s->out[j].seq);
                got.kind = (uint8_t)rd_n(&k->r, 1);
                got.status = (int)(int32_t)rd_n(&k->r, 4);
                got.session = rd_n(&k->r, 8);
                got.owner = rd_n(&k->r, 8);
                got.token = rd_n(&k->r, 8);
                got.count = (uint32_t)rd_n(&k->r, 4);
                got.waiters = (uint32_t)rd_n(&k->r, 4);
                if (!k->r.bad && !m_result_eq(want, &got, false)) {
                        m_result_str(a, sizeof a, want);
                        m_result_str(b, sizeof b, &got);
                }
                WANT(m_result_eq(want, &got, false),
                     "session %" PRIu64 " seq %" PRIu64
                     " remembers %s, expected %s",
                     s->id, s->out[j].seq, b, a);
        }
        return true;
}

static bool check_sessions(struct snapcheck *k, const struct model *m)
{
        uint64_t v;

        v = rd_n(&k->r, 4);
        WANT(v == m->ns, "%" PRIu64 " sessions, expected %u", v, m->ns);
        for (unsigned i = 0; i < m->ns; i++) {
                const struct msess *s = &m->s[i];

                v = rd_n(&k->r, 8);
                WANT(v == s->id, "session %u is %" PRIu64 ", expected %" PRIu64,
                     i, v, s->id);
                WANT(rd_n(&k->r, 8) == s->nonce, "session %" PRIu64 " nonce",
                     s->id);
                WANT(rd_n(&k->r, 4) == s->ttl, "session %" PRIu64 " ttl",
                     s->id);
                v = rd_n(&k->r, 8);
                WANT(v == s->floor,
                     "session %" PRIu64 " floor %" PRIu64 ", expected %" PRIu64,
                     s->id, v, s->floor);
                WANT(rd_str(&k->r, s->client, s->client_len),
                     "session %" PRIu64 " client name", s->id);
                WANT(k->r.left >= COMMAND_HASH_SIZE &&
                         memcmp(k->r.p, s->hash, COMMAND_HASH_SIZE) == 0,
                     "session %" PRIu64 " owner hash", s->id);
                k->r.p += COMMAND_HASH_SIZE;
                k->r.left -= COMMAND_HASH_SIZE;
                v = rd_n(&k->r, 4);
                WANT(v == s->delay,
                     "session %" PRIu64 " lock-delay %" PRIu64 ", expected %u",
                     s->id, v, s->delay);
                v = rd_n(&k->r, 4);
                WANT(v == s->revoked,
                     "session %" PRIu64 " revoked %" PRIu64 ", expected %u",
                     s->id, v, s->revoked);
                v = rd_n(&k->r, 8);
                WANT(v == s->principal,
                     "session %" PRIu64 " principal %" PRIx64
                     ", expected %" PRIx64,
                     s->id, v, s->principal);
                v = rd_n(&k->r, 1);
                WANT(v == s->nout,
                     "session %" PRIu64 " remembers %" PRIu64
                     " outcomes, expected %u",
                     s->id, v, s->nout);
                if (!check_outcomes(k, s)) {
                        return false;
                }
        }
        return true;
}

/* The holders of lock `i`, `l`; `*used` gets the permits they hold. */
static bool check_holders(struct snapcheck *k, const struct mlock *l,
                          unsigned i, uint64_t *used_out)
{
        uint64_t v, used = 0;

        used = 0;
        for (unsigned j = 0; j < l->nh; j++) {
                const struct mhold *h = &l->h[j];

                WANT(rd_n(&k->r, 8) == h->session, "lock %u holder %u session",
                     i, j);
                WANT(rd_n(&k->r, 8) == h->owner, "lock %u holder %u owner", i,
                     j);
                WANT(rd_n(&k->r, 8) == h->seq, "lock %u holder %u seq", i, j);
                WANT(rd_n(&k->r, 8) == h->token, "lock %u holder %u token", i,
                     j);
                WANT(rd_n(&k->r, 4) == h->count, "lock %u holder %u count", i,
                     j);
                WANT(rd_n(&k->r, 1) ==
                         (l->election ? COMMAND_MODE_EXCLUSIVE : h->mode),
                     "lock %u holder %u mode", i, j);
                v = l->semaphore ? rd_n(&k->r, 4) : 0;
                WANT(v == h->permits, "lock %u holder %u permits", i, j);
                used += v;
                WANT(rd_n(&k->r, 4) == h->granted_s, "lock %u holder %u time",
                     i, j);
                WANT(rd_str(&k->r, h->value, h->value_len),
                     "lock %u holder %u value", i, j);
                WANT(rd_n(&k->r, 4) == h->hold_ms,
                     "lock %u holder %u hold time", i, j);
                WANT(rd_n(&k->r, 8) == h->armed,
                     "lock %u holder %u hold clock's entry", i, j);
        }
        *used_out = used;
        return true;
}

/* The waiters of lock `i`, `l`. */
static bool check_waiters(struct snapcheck *k, const struct mlock *l,
                          unsigned i)
{
        for (unsigned j = 0; j < l->nw; j++) {
                const struct mwaiter *w = &l->w[j];

                WANT(rd_n(&k->r, 8) == w->session, "lock %u waiter %u session",
                     i, j);
                WANT(rd_n(&k->r, 8) == w->owner, "lock %u waiter %u owner", i,
                     j);
                WANT(rd_n(&k->r, 8) == w->seq, "lock %u waiter %u seq", i, j);
                WANT(rd_n(&k->r, 8) == w->queued_at,
                     "lock %u waiter %u queued_at", i, j);
                WANT(rd_n(&k->r, 4) == w->wait_ms, "lock %u waiter %u wait_ms",
                     i, j);
                WANT(rd_n(&k->r, 1) ==
                         ((l->election ? COMMAND_MODE_EXCLUSIVE : w->mode) |
                          (w->multi ? 0x40u : 0u)),
                     "lock %u waiter %u mode, and whether it is a "
                     "multi-lock's",
                     i, j);
                WANT(rd_n(&k->r, l->semaphore ? 4 : 0) == w->permits,
                     "lock %u waiter %u permits", i, j);
                WANT(rd_str(&k->r, w->value, w->value_len),
                     "lock %u waiter %u value", i, j);
                WANT(rd_n(&k->r, 4) == w->hold_ms,
                     "lock %u waiter %u hold time", i, j);
                WANT(rd_n(&k->r, 8) == 0, "lock %u waiter %u hold clock", i, j);
        }
        return true;
}

static bool check_locks(struct snapcheck *k, const struct model *m)
{
        uint64_t v, used = 0;

        v = rd_n(&k->r, 4);
        WANT(v == m->nl, "%" PRIu64 " locks, expected %u", v, m->nl);
        for (unsigned i = 0; i < m->nl; i++) {
                const struct mlock *l = &m->l[i];

                WANT(rd_str(&k->r, l->name, l->name_len), "lock %u name", i);
                v = rd_n(&k->r, 8);
                WANT(v == l->created,
                     "lock \"%.*s\" created %" PRIu64 ", expected %" PRIu64,
                     l->name_len, l->name, v, l->created);
                WANT(rd_n(&k->r, 1) ==
                         ((l->semaphore  ? COMMAND_MODE_SEMAPHORE
                           : l->election ? COMMAND_MODE_ELECTION
                                         : COMMAND_MODE_EXCLUSIVE) |
                          (l->blocked ? 0x80u : 0u)),
                     "lock %u kind, and its lock-delay", i);
                WANT(!(l->semaphore || l->blocked) ||
                         rd_n(&k->r, 4) == l->limit,
                     "semaphore %u limit, or lock %u delay", i, i);
                v = rd_n(&k->r, 4);
                WANT(v == l->nh, "lock %u has %" PRIu64 " holders, expected %u",
                     i, v, l->nh);
                if (!check_holders(k, l, i, &used)) {
                        return false;
                }
                /* Whatever the model says: a semaphore's holders hold at
                 * most its permits. */
                WANT(used <= l->limit,
                     "semaphore \"%.*s\" grants %" PRIu64 " of %" PRIu32
                     " permits",
                     l->name_len, l->name, used, l->limit);
                v = rd_n(&k->r, 4);
                WANT(v == l->nw, "lock %u has %" PRIu64 " waiters, expected %u",
                     i, v, l->nw);
                if (!check_waiters(k, l, i)) {
                        return false;
                }
        }
        return true;
}

#undef WANT

bool modelsnap_check(const struct model *m, const uint8_t *buf, size_t len,
                     uint64_t index, char *why, size_t cap)
{
        struct snapcheck k = {{buf, len, false}, why, cap};

        if (!check_header(&k, m, buf, len, index) || !check_sessions(&k, m) ||
            !check_locks(&k, m)) {
                return false;
        }
        if (k.r.left != 0) {
                return differ(&k, "snapshot: %zu bytes left over", k.r.left);
        }
        return true;
}
