/* A randomized model-based test of the lock state machine: a small reference
 * model, written from docs/fsm.md (and docs/security.md for the quotas per
 * identity), runs in lockstep with lockfsm.
 *
 * To reproduce a failure, BATON_MODEL_SEED=S runs seed S alone (and compares
 * the whole state after every step); BATON_MODEL_TRACE=1 prints every entry
 * with both answers; BATON_MODEL_STEPS=N changes the length of a sequence;
 * BATON_MODEL_STATS=1 prints how often each outcome came up, to see that the
 * generator still reaches every rule.
 *
 * The reference model is in model.c, the command generator in modelgen.c;
 * this file runs them against lockfsm and compares. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../include/baton.h"
#include "../../src/proto/command.h"
#include "../../src/fsm/acl.h"
#include "../../src/fsm/entry.h"
#include "../../src/fsm/lockfsm.h"
#include "../lib/rng.h"
#include "../../src/lib/mem.h"
#include "model.h"
#include "modelcmd.h"
#include "modelgen.h"
#include "modelquota.h"
#include "modelsnap.h"
#include "modeltally.h"

/* How much work the seed ranges do, and how often the machine is
 * snapshotted, restored and replayed in lockstep. */
enum {
        STEPS = 200,
        SEEDS_PER_CASE = 500,
        CHECKPOINT = 16,
        STATE_EVERY = 4, /* snapshot-vs-model comparisons; each costs a lot */
        NEGATIVE_SEEDS = 200,
};

/* ------------------------------------------------------------------------ */
/* The checker. */

/* The first disagreement found, with what it takes to reproduce it. */
struct mismatch {
        uint64_t seed;
        unsigned step;
        char cmd[640];
        char what[1024];
};

/* Per-sequence memory of the events seen, for the invariants that span
 * entries: tokens per lock, and sessions that have ended. */
struct lasttoken {
        uint8_t name_len;
        char name[COMMAND_NAME_MAX];
        uint64_t token;
        bool writer; /* a writer was granted with `token` */
        /* The owners granted with `token`: only they may share it with
         * a writer (one owner's downgrade or upgrade in one entry). */
        uint64_t session[CAP_HOLDERS], owner[CAP_HOLDERS];
        unsigned n;
};

struct run {
        uint64_t seed;
        unsigned bugs;
        bool trace;
        bool every; /* compare the whole state after every step */
        struct model m;
        struct gen g;
        struct lockfsm *f; /* the machine under test */
        struct lockfsm *r; /* a replica restored from f's last snapshot */
        /* The access lists whose quotas f and r meet, one per node as in
         * batond: an ACL entry changes each after its machine applied it. */
        struct acl acl, racl;
        struct evlog fev;  /* events of f for this entry */
        struct evlog rev;  /* events of r */
        struct evlog mev;  /* events the model predicts */
        uint8_t buf[4096]; /* the last entry */
        size_t len;
        unsigned began; /* events of the last entry's start */
        struct lasttoken last[CAP_KNOWN];
        unsigned nlast;
        uint64_t opened[CAP_KNOWN];
        unsigned nopened;
        uint64_t ended[CAP_KNOWN];
        unsigned nended;
        struct mismatch *mm;
        struct tally *tally; /* NULL: not counted */
};

static bool diverge(struct run *run, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Records the first mismatch and returns false, so checks read as
 * `return diverge(...)`. */
static bool diverge(struct run *run, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(run->mm->what, sizeof run->mm->what, fmt, ap);
        va_end(ap);
        return false;
}

static void limits(struct lockfsm_limits *l)
{
        lockfsm_limits_default(l);
        l->max_sessions = LIM_SESSIONS;
        l->max_locks_per_session = LIM_LOCKS;
        l->max_waiters_per_lock = LIM_WAITERS;
        l->max_inflight = LIM_INFLIGHT;
        l->max_tombstones = LIM_TOMBS;
        l->min_ttl_ms = LIM_MIN_TTL;
        l->max_ttl_ms = LIM_MAX_TTL;
        l->max_permits = LIM_PERMITS;
        l->max_holders_per_lock = LIM_HOLDERS;
        l->max_names_per_acquire = LIM_NAMES;
        l->max_lock_delay_ms = LIM_DELAY;
        l->max_hold_ms = LIM_HOLD_MS;
}

static struct lockfsm *machine(struct evlog *log, struct acl *acl)
{
        struct lockfsm_limits l;
        struct lockfsm *f;

        limits(&l);
        f = lockfsm_create(&l, NULL);
        assert_non_null(f);
        lockfsm_set_event_cb(f, on_event, log);
        modelquota_machine(f, acl);
        return f;
}

static void describe(char *out, size_t cap, const uint8_t *buf, size_t len,
                     int dec, const struct command *c)
{
        int n;

        if (entry_is_batch(buf, len)) {
                struct entry_reader rd;
                int rv = entry_reader_init(&rd, buf, len);

                snprintf(out, cap, "BATCH of %zu bytes, %u commands%s", len,
                         rd.count, rv != 0 ? ", refused" : "");
                return;
        }
        if (dec != 0) {
                n = snprintf(out, cap, "undecodable (%d) %zu bytes:", dec, len);
                for (size_t i = 0; i < len && n > 0 && (size_t)n + 4 < cap;
                     i++) {
                        n +=
                            snprintf(out + n, cap - (size_t)n, " %02x", buf[i]);
                }
                return;
        }
        snprintf(out, cap,
                 "%s session=%" PRIu64 " seq=%" PRIu64 " ack=%" PRIu64
                 " owner=%" PRIu64 " token=%" PRIu64 " target=%" PRIu64
                 " nonce=%" PRIu64 " ttl=%" PRIu32 " wait=%" PRIu32
                 " mode=%u permits=%" PRIu32 "/%" PRIu32 " name=\"%.*s\"",
                 command_type_name(c->type), c->session, c->seq, c->ack,
                 c->owner, c->token, c->target, c->nonce, c->ttl_ms, c->wait_ms,
                 c->mode, c->permits, c->limit,
                 c->name_len > 24 ? 24 : c->name_len,
                 c->name != NULL ? c->name : "");
}

static bool check_result(struct run *run, const char *what,
                         const struct lockfsm_result *want,
                         const struct lockfsm_result *got)
{
        char a[256], b[256];

        if (m_result_eq(want, got, true)) {
                return true;
        }
        m_result_str(a, sizeof a, want);
        m_result_str(b, sizeof b, got);
        return diverge(run, "%s: expected %s, got %s", what, a, b);
}

static const char *ev_type_name(uint8_t t)
{
        static const char *const names[] = {
            "?",       "RESULT", "OPEN",    "END",   "GRANT",
            "RELEASE", "QUEUE",  "UNQUEUE", "BLOCK", "UNBLOCK",
        };
        return t < sizeof names / sizeof names[0] ? names[t] : "?";
}

static void ev_str(char *out, size_t cap, const struct ev *v)
{
        snprintf(out, cap,
                 "%s(session=%" PRIu64 " seq=%" PRIu64 " owner=%" PRIu64
                 " token=%" PRIu64 " status=%d wait=%" PRIu32
                 " mode=%u permits=%" PRIu32 " name=\"%.*s\")",
                 ev_type_name(v->type), v->session, v->seq, v->owner, v->token,
                 v->status, v->wait_ms, v->mode, v->permits,
                 v->name_len > 24 ? 24 : v->name_len, v->name);
}

/* Replicas must agree on every field of every event. */
static bool ev_same(const struct ev *a, const struct ev *b)
{
        return a->type == b->type && a->cause == b->cause &&
               a->index == b->index && a->session == b->session &&
               a->seq == b->seq && a->owner == b->owner &&
               a->token == b->token && a->nonce == b->nonce &&
               a->wait_ms == b->wait_ms && a->status == b->status &&
               a->mode == b->mode && a->permits == b->permits &&
               a->value_len == b->value_len &&
               memcmp(a->value, b->value, a->value_len) == 0 &&
               a->name_len == b->name_len &&
               memcmp(a->name, b->name, a->name_len) == 0 &&
               a->has_result == b->has_result &&
               (!a->has_result || m_result_eq(&a->result, &b->result, true));
}

/* The fields each event type is documented to carry. */
static bool ev_eq(const struct ev *a, const struct ev *b)
{
        bool lock =
            a->type == LOCKFSM_EV_GRANT || a->type == LOCKFSM_EV_RELEASE ||
            a->type == LOCKFSM_EV_QUEUE || a->type == LOCKFSM_EV_UNQUEUE ||
            a->type == LOCKFSM_EV_PROCLAIM;

        if (a->type != b->type || a->session != b->session ||
            a->value_len != b->value_len ||
            memcmp(a->value, b->value, a->value_len) != 0) {
                return false;
        }
        if (lock && (a->owner != b->owner || a->mode != b->mode ||
                     a->permits != b->permits || a->name_len != b->name_len ||
                     memcmp(a->name, b->name, a->name_len) != 0)) {
                return false;
        }
        switch (a->type) {
        case LOCKFSM_EV_OPEN:
                return a->nonce == b->nonce;
        case LOCKFSM_EV_GRANT:
                return a->seq == b->seq && a->token == b->token;
        case LOCKFSM_EV_RELEASE:
                return a->token == b->token;
        case LOCKFSM_EV_PROCLAIM:
                return a->seq == b->seq && a->token == b->token;
        case LOCKFSM_EV_QUEUE:
                return a->seq == b->seq && a->wait_ms == b->wait_ms;
        case LOCKFSM_EV_UNQUEUE:
                return a->seq == b->seq && a->status == b->status;
        case LOCKFSM_EV_BLOCK:
        case LOCKFSM_EV_UNBLOCK:
                return a->seq == b->seq && a->wait_ms == b->wait_ms &&
                       a->name_len == b->name_len &&
                       memcmp(a->name, b->name, a->name_len) == 0;
        default:
                return true;
        }
}

static bool known(const uint64_t *ids, unsigned n, uint64_t id)
{
        for (unsigned i = 0; i < n; i++) {
                if (ids[i] == id) {
                        return true;
                }
        }
        return false;
}

/* Per lock, tokens never go down, and a token is shared only by readers
 * or by one owner's two grants (docs/fsm.md, "Read/write locks"). */
static bool check_token(struct run *run, const struct ev *v)
{
        struct lasttoken *lt = NULL;
        bool same_owner = false;

        for (unsigned j = 0; j < run->nlast; j++) {
                if (run->last[j].name_len == v->name_len &&
                    memcmp(run->last[j].name, v->name, v->name_len) == 0) {
                        lt = &run->last[j];
                }
        }
        if (lt == NULL && run->nlast < CAP_KNOWN) {
                lt = &run->last[run->nlast++];
                memset(lt, 0, sizeof *lt);
                lt->name_len = v->name_len;
                memcpy(lt->name, v->name, v->name_len);
        }
        if (lt == NULL) {
                return true;
        }
        if (v->token < lt->token) {
                return diverge(run,
                               "GRANT token %" PRIu64
                               " is below the lock's last %" PRIu64,
                               v->token, lt->token);
        }
        if (v->token > lt->token) {
                lt->token = v->token;
                lt->writer = false;
                lt->n = 0;
        }
        for (unsigned k = 0; k < lt->n; k++) {
                same_owner |=
                    lt->session[k] == v->session && lt->owner[k] == v->owner;
        }
        if (lt->n > 0 && !same_owner &&
            (lt->writer || v->mode == COMMAND_MODE_EXCLUSIVE)) {
                return diverge(run,
                               "GRANT token %" PRIu64
                               " shared by a writer and another owner",
                               v->token);
        }
        lt->writer |= v->mode == COMMAND_MODE_EXCLUSIVE;
        if (lt->n < CAP_HOLDERS) {
                lt->session[lt->n] = v->session;
                lt->owner[lt->n++] = v->owner;
        }
        return true;
}

/* The machine's events must be the model's, one by one (RESULTs with
 * their outcomes), and keep the invariants that hold whatever the model
 * says: no event for a session after its END, every GRANT to a session
 * that opened, with the entry's index as its token, and tokens that
 * strictly increase per lock, so no entry grants a lock twice. `type` is
 * the command of a one-command entry, 0 otherwise. */
static bool check_events(struct run *run, uint64_t index, int type)
{
        const struct evlog *log = &run->fev;
        const struct ev *first = NULL; /* the entry's first GRANT */
        unsigned grants = 0;           /* of other locks than first's */
        /* A multi-lock granted, or leaving its queues, in this entry:
         * several locks may change hands at once. */
        bool group = false;
        char a[256], b[256];

        if (log->overflow || run->mev.overflow) {
                return diverge(run, "more events than the log holds");
        }
        for (unsigned i = 0; i < log->n || i < run->mev.n; i++) {
                const struct ev *want = i < run->mev.n ? &run->mev.ev[i] : NULL;
                const struct ev *got = i < log->n ? &log->ev[i] : NULL;

                if (want != NULL && got != NULL && ev_eq(want, got) &&
                    want->cause == got->cause && got->index == index &&
                    got->has_result == want->has_result &&
                    (!want->has_result ||
                     (m_result_eq(&want->result, &got->result, true) &&
                      got->status == want->status))) {
                        continue;
                }
                snprintf(a, sizeof a, "nothing");
                snprintf(b, sizeof b, "nothing");
                if (want != NULL) {
                        ev_str(a, sizeof a, want);
                }
                if (got != NULL) {
                        ev_str(b, sizeof b, got);
                }
                if (want != NULL && got != NULL && want->has_result &&
                    got->has_result) {
                        size_t k = strlen(a), l = strlen(b);

                        m_result_str(a + k, sizeof a - k, &want->result);
                        m_result_str(b + l, sizeof b - l, &got->result);
                }
                return diverge(run,
                               "event %u of %u: expected %s (cause %u), got "
                               "%s (cause %u, index %" PRIu64 ")",
                               i, run->mev.n, a, want != NULL ? want->cause : 0,
                               b, got != NULL ? got->cause : 0,
                               got != NULL ? got->index : 0);
        }

        /* Invariants that hold whatever the model says. */
        for (unsigned i = 0; i < log->n; i++) {
                const struct ev *v = &log->ev[i];

                if (v->type == LOCKFSM_EV_RESULT) {
                        continue; /* a refusal may name any session */
                }
                if (known(run->ended, run->nended, v->session)) {
                        return diverge(run,
                                       "%s event names session %" PRIu64
                                       " after its END",
                                       ev_type_name(v->type), v->session);
                }
                if (v->type == LOCKFSM_EV_OPEN && run->nopened < CAP_KNOWN) {
                        run->opened[run->nopened++] = v->session;
                }
                if (v->type == LOCKFSM_EV_END && run->nended < CAP_KNOWN) {
                        run->ended[run->nended++] = v->session;
                }
                for (unsigned j = 0; j < i; j++) {
                        const struct ev *o = &log->ev[j];
                        group |= (v->type == LOCKFSM_EV_GRANT ||
                                  v->type == LOCKFSM_EV_UNQUEUE) &&
                                 o->type == v->type &&
                                 o->session == v->session && o->seq == v->seq;
                }
                if (v->type != LOCKFSM_EV_GRANT) {
                        continue;
                }
                if (!known(run->opened, run->nopened, v->session)) {
                        return diverge(run,
                                       "GRANT to session %" PRIu64
                                       " that never opened",
                                       v->session);
                }
                if (v->token != index) {
                        return diverge(run,
                                       "GRANT token %" PRIu64
                                       " is not the entry's index",
                                       v->token);
                }
                if (!check_token(run, v)) {
                        return false;
                }
                if (v->cause == COMMAND_BATCH) {
                        continue;
                }
                if (first == NULL) {
                        first = v;
                } else if (first->name_len != v->name_len ||
                           memcmp(first->name, v->name, v->name_len) != 0) {
                        grants++;
                }
        }
        if (grants > 0 && !group && type != 0 && type != COMMAND_CLOSE &&
            type != COMMAND_EXPIRE && type != COMMAND_REVOKE) {
                return diverge(run,
                               "grants of %u locks share token %" PRIu64
                               " outside CLOSE/EXPIRE/REVOKE",
                               grants + 1, index);
        }
        return true;
}

/* Parses the machine's snapshot and compares every field with the
 * model's state (modelsnap.c). */
static bool check_snapshot(struct run *run, const uint8_t *buf, size_t len,
                           uint64_t index)
{
        return modelsnap_check(&run->m, buf, len, index, run->mm->what,
                               sizeof run->mm->what);
}

/* Whether a lock has one of the names the generator makes up. */
static bool generated(const struct run *run, const struct mlock *l)
{
        if (l->name_len == COMMAND_NAME_MAX) {
                return memcmp(l->name, run->g.long_name, l->name_len) == 0;
        }
        for (unsigned i = 0; i < NLOCK_NAMES; i++) {
                if (l->name_len == strlen(lock_names[i]) &&
                    memcmp(l->name, lock_names[i], l->name_len) == 0) {
                        return true;
                }
        }
        return false;
}

/* Lookups that do not go through the log must agree with the model too. */
static bool check_lookups(struct run *run)
{
        struct lockfsm_result got;
        struct lockfsm_stats st;
        struct lockfsm_result want;
        uint64_t waiters = 0, held = 0;
        char what[300];

        /* The generator's names, then every lock the model holds (a
         * flipped byte can create a lock under any name). */
        for (unsigned i = 0; i <= NLOCK_NAMES + run->m.nl; i++) {
                const struct mlock *l =
                    i > NLOCK_NAMES ? &run->m.l[i - NLOCK_NAMES - 1] : NULL;
                const char *name = l != NULL         ? l->name
                                   : i < NLOCK_NAMES ? lock_names[i]
                                                     : run->g.long_name;
                size_t len = l != NULL         ? l->name_len
                             : i < NLOCK_NAMES ? strlen(name)
                                               : COMMAND_NAME_MAX;

                if (l != NULL && generated(run, l)) {
                        continue; /* queried already */
                }
                memset(&got, 0, sizeof got);
                lockfsm_query(run->f, name, len, &got);
                want = m_query(&run->m, name, len);
                if (m_result_eq(&want, &got, true)) {
                        continue;
                }
                snprintf(what, sizeof what, "lockfsm_query(\"%.*s\")",
                         (int)(len > 24 ? 24 : len), name);
                return check_result(run, what, &want, &got);
        }
        for (unsigned i = 0; i < run->m.nl; i++) {
                waiters += run->m.l[i].nw;
                held += run->m.l[i].nh;
        }
        lockfsm_stats(run->f, &st);
        if (st.sessions != run->m.ns || st.locks != run->m.nl ||
            st.grants != held || st.waiters != waiters ||
            st.tombstones != run->m.nt) {
                return diverge(run,
                               "stats sessions=%" PRIu64 " locks=%" PRIu64
                               " grants=%" PRIu64 " waiters=%" PRIu64
                               " tombstones=%" PRIu64 ", expected %u %u %u "
                               "%" PRIu64 " %u",
                               st.sessions, st.locks, st.grants, st.waiters,
                               st.tombstones, run->m.ns, run->m.nl,
                               (unsigned)held, waiters, run->m.nt);
        }
        for (unsigned i = 0; i < run->g.ns; i++) {
                const struct msess *s = m_session(&run->m, run->g.s[i].id);
                uint32_t ttl = lockfsm_session_ttl(run->f, run->g.s[i].id);

                if (ttl != (s != NULL ? s->ttl : 0)) {
                        return diverge(
                            run, "lockfsm_session_ttl(%" PRIu64 ") = %" PRIu32,
                            run->g.s[i].id, ttl);
                }
        }
        return modelquota_use_agrees(run->f, &run->m, run->mm->what,
                                     sizeof run->mm->what);
}

static bool snapshot(struct run *run, struct lockfsm *f, void **buf,
                     size_t *len)
{
        int rv = lockfsm_snapshot(f, buf, len);

        if (rv != 0) {
                return diverge(run, "lockfsm_snapshot: %d", rv);
        }
        return true;
}

/* Everything but last_index, the stamp and the checksum: what "changes
 * nothing" means for an entry that is applied but refused. */
static bool same_state(const uint8_t *a, size_t alen, const uint8_t *b,
                       size_t blen)
{
        return alen == blen && alen >= 32 && memcmp(a, b, 8) == 0 &&
               memcmp(a + 24, b + 24, alen - 32) == 0;
}

/* Snapshot f, check that r (replaying since the last checkpoint) has the
 * same bytes, then restore a fresh replica that must reproduce them. */
static bool checkpoint(struct run *run)
{
        void *a = NULL, *b = NULL, *c = NULL;
        size_t alen, blen, clen;
        bool ok = false;
        int rv;

        if (!snapshot(run, run->f, &a, &alen)) {
                goto out;
        }
        if (run->r != NULL) {
                if (!snapshot(run, run->r, &b, &blen)) {
                        goto out;
                }
                if (alen != blen || memcmp(a, b, alen) != 0) {
                        diverge(run, "the replica's snapshot differs from the "
                                     "machine's");
                        goto out;
                }
        }
        lockfsm_destroy(run->r);
        run->r = machine(&run->rev, &run->racl);
        rv = modelquota_carry(&run->racl, &run->acl);
        if (rv != 0) {
                diverge(run, "the access list's round trip: %d", rv);
                goto out;
        }
        rv = lockfsm_restore(run->r, a, alen);
        if (rv != 0) {
                diverge(run, "lockfsm_restore of a fresh snapshot: %d", rv);
                goto out;
        }
        if (lockfsm_last_index(run->r) != lockfsm_last_index(run->f)) {
                diverge(run, "restored last_index %" PRIu64,
                        lockfsm_last_index(run->r));
                goto out;
        }
        if (lockfsm_check(run->r) != NULL) {
                diverge(run, "lockfsm_check after restore: %s",
                        lockfsm_check(run->r));
                goto out;
        }
        if (!snapshot(run, run->r, &c, &clen)) {
                goto out;
        }
        if (alen != clen || memcmp(a, c, alen) != 0) {
                diverge(run,
                        "snapshot -> restore -> snapshot changed the bytes");
                goto out;
        }
        ok = true;
out:
        mem_free(&mem_libc, a);
        mem_free(&mem_libc, b);
        mem_free(&mem_libc, c);
        return ok;
}

/* Generates the next entry into run->buf and predicts on the model what
 * applying it does: every event in run->mev, RESULTs included, and what
 * lockfsm_apply returns. */
static struct lockfsm_result gen_and_predict(struct run *run, uint64_t index)
{
        struct lockfsm_result want;

        run->mev.n = 0;
        run->mev.overflow = false;
        m_entry_begin(&run->m, index, &run->mev);
        run->began = run->mev.n;
        if (chance(&run->g.rng, 25)) {
                run->len = gen_batch(&run->g, &run->m, index, run->buf,
                                     sizeof run->buf, &run->mev, &want);
        } else {
                run->len = gen_entry(&run->g, &run->m, index, run->buf,
                                     sizeof run->buf);
                want = m_entry(&run->m, &run->g, index, run->buf, run->len,
                               &run->mev);
        }
        m_entry_end(&run->m);
        return want;
}

/* One entry: the model, the machine and the replica apply it, then every
 * check runs. */
static bool step(struct run *run, uint64_t index)
{
        uint8_t *buf = run->buf;
        struct lockfsm_result res, rres, want;
        void *before = NULL, *after = NULL;
        size_t len, blen = 0, alen = 0;
        struct entry_reader rd;
        struct command c;
        const char *bad;
        bool ok = false, batch;
        int dec, rv;

        want = gen_and_predict(run, index);
        len = run->len;
        batch = entry_is_batch(buf, len);
        dec = batch ? entry_reader_init(&rd, buf, len)
                    : command_decode(&c, buf, len);
        if (dec != 0 && !snapshot(run, run->f, &before, &blen)) {
                return false;
        }
        if (run->tally != NULL) {
                modeltally_count(run->tally, &run->m, &run->mev, &want,
                                 dec != 0, batch, run->began);
        }
        if (run->m.overflow || run->mev.overflow) {
                return diverge(run, "the model outgrew its arrays");
        }

        run->fev.n = 0;
        run->fev.overflow = false;
        memset(&res, 0xa5, sizeof res);
        rv = lockfsm_apply(run->f, index, buf, len, &res);
        modelquota_apply(&run->acl, buf, len);
        if (run->trace) {
                char a[256], b[256];

                describe(run->mm->cmd, sizeof run->mm->cmd, buf, len, dec, &c);
                m_result_str(a, sizeof a, &res);
                m_result_str(b, sizeof b, &want);
                print_message("# %" PRIu64 ": %s\n#   -> %s\n#   model %s\n",
                              index, run->mm->cmd, a, b);
        }
        if (rv != 0) {
                diverge(run, "lockfsm_apply returned %d", rv);
                goto out;
        }
        if (!check_result(run, "result", &want, &res) ||
            !check_events(run, index, batch || dec != 0 ? 0 : c.type)) {
                goto out;
        }
        if (lockfsm_last_index(run->f) != index) {
                diverge(run, "lockfsm_last_index is %" PRIu64,
                        lockfsm_last_index(run->f));
                goto out;
        }
        bad = lockfsm_check(run->f);
        if (bad != NULL) {
                diverge(run, "lockfsm_check: %s", bad);
                goto out;
        }
        if (!check_lookups(run)) {
                goto out;
        }
        /* The whole state, parsed from the snapshot, catches what no
         * answer shows yet (a floor, a remembered outcome, a tombstone). */
        if ((run->every || dec != 0 || index % STATE_EVERY == 0) &&
            (!snapshot(run, run->f, &after, &alen) ||
             !check_snapshot(run, after, alen, index))) {
                goto out;
        }
        /* A refused entry changes nothing but its stamp, unless its start
         * handed on a lock an earlier entry left between holders. */
        if (dec != 0 && run->began == 0 &&
            !same_state(before, blen, after, alen)) {
                diverge(run, "an undecodable entry changed the state");
                goto out;
        }

        if (run->r != NULL) {
                run->rev.n = 0;
                run->rev.overflow = false;
                memset(&rres, 0xa5, sizeof rres);
                /* Half the time through the pre-decoded entry point, which
                 * must behave exactly like the byte one. */
                rv = !batch && dec == 0 && index % 2 == 1
                         ? lockfsm_apply_command(run->r, index, &c, &rres)
                         : lockfsm_apply(run->r, index, buf, len, &rres);
                modelquota_apply(&run->racl, buf, len);
                if (rv != 0 || !m_result_eq(&res, &rres, true) ||
                    run->rev.n != run->fev.n) {
                        diverge(run,
                                "the restored replica diverged (rv %d, "
                                "%u events vs %u)",
                                rv, run->rev.n, run->fev.n);
                        goto out;
                }
                for (unsigned i = 0; i < run->fev.n; i++) {
                        if (!ev_same(&run->fev.ev[i], &run->rev.ev[i])) {
                                char a[256], b[256];

                                ev_str(a, sizeof a, &run->fev.ev[i]);
                                ev_str(b, sizeof b, &run->rev.ev[i]);
                                diverge(run,
                                        "event %u of the restored replica "
                                        "differs: %s (cause %u, nonce %" PRIu64
                                        ") vs the machine's %s (cause %u, "
                                        "nonce %" PRIu64 ")",
                                        i, b, run->rev.ev[i].cause,
                                        run->rev.ev[i].nonce, a,
                                        run->fev.ev[i].cause,
                                        run->fev.ev[i].nonce);
                                goto out;
                        }
                }
        }
        ok = true;
out:
        mem_free(&mem_libc, before);
        mem_free(&mem_libc, after);
        return ok;
}

/* Runs one seed; returns true and fills `mm` at the first mismatch. */
static bool run_seed(uint64_t seed, unsigned steps, unsigned bugs, bool trace,
                     bool every, struct tally *tally, struct mismatch *mm)
{
        struct run *run = calloc(1, sizeof *run);
        bool ok = true;

        assert_non_null(run);
        memset(mm, 0, sizeof *mm);
        mm->seed = seed;
        run->seed = seed;
        run->bugs = bugs;
        run->trace = trace;
        run->every = every;
        run->tally = tally;
        run->mm = mm;
        run->m.bugs = bugs;
        gen_init(&run->g, seed);
        /* Seeded, with no quota yet, as the first leader's list. */
        acl_start(&run->acl, ACL_LOCK);
        run->f = machine(&run->fev, &run->acl);
        for (unsigned i = 0; ok && i < steps; i++) {
                mm->step = i;
                ok = step(run, (uint64_t)i + 1);
                if (ok && ((i + 1) % CHECKPOINT == 0 || i + 1 == steps)) {
                        ok = checkpoint(run);
                }
        }
        if (!ok) {
                struct command c;
                int dec = command_decode(&c, run->buf, run->len);

                describe(mm->cmd, sizeof mm->cmd, run->buf, run->len, dec, &c);
        }
        if (tally != NULL) {
                tally->ties += run->m.ties;
        }
        lockfsm_destroy(run->f);
        lockfsm_destroy(run->r);
        free(run);
        return !ok;
}

static unsigned env_steps(void)
{
        const char *s = getenv("BATON_MODEL_STEPS");

        return s != NULL ? (unsigned)strtoul(s, NULL, 10) : STEPS;
}

static void report(const struct mismatch *mm)
{
        print_error("seed %" PRIu64 " step %u (index %u): %s\n"
                    "  command: %s\n"
                    "  reproduce: BATON_MODEL_SEED=%" PRIu64
                    " BATON_MODEL_TRACE=1 ./tests/unit/test_model\n",
                    mm->seed, mm->step, mm->step + 1, mm->what, mm->cmd,
                    mm->seed);
}

/* Runs seeds [first, first + count), or only BATON_MODEL_SEED if set (in
 * the first range; the others are skipped). */
static void run_range(uint64_t first, uint64_t count)
{
        const char *only = getenv("BATON_MODEL_SEED");
        bool trace = getenv("BATON_MODEL_TRACE") != NULL;
        bool stats = getenv("BATON_MODEL_STATS") != NULL;
        struct tally tally;
        struct mismatch mm;

        memset(&tally, 0, sizeof tally);
        if (only != NULL) {
                if (first != 0) {
                        skip();
                }
                first = strtoull(only, NULL, 10);
                count = 1;
        }
        for (uint64_t seed = first; seed < first + count; seed++) {
                if (run_seed(seed, env_steps(), 0, trace, only != NULL,
                             stats ? &tally : NULL, &mm)) {
                        report(&mm);
                        fail_msg("the machine disagrees with the model");
                }
        }
        if (stats) {
                modeltally_print(&tally);
        }
}

static void model_seeds_0_499(void **state)
{
        (void)state;
        run_range(0, SEEDS_PER_CASE);
}

static void model_seeds_500_999(void **state)
{
        (void)state;
        run_range(500, SEEDS_PER_CASE);
}

static void model_seeds_1000_1499(void **state)
{
        (void)state;
        run_range(1000, SEEDS_PER_CASE);
}

static void model_seeds_1500_1999(void **state)
{
        (void)state;
        run_range(1500, SEEDS_PER_CASE);
}

static void model_seeds_2000_2499(void **state)
{
        (void)state;
        run_range(2000, SEEDS_PER_CASE);
}

static void model_seeds_2500_2999(void **state)
{
        (void)state;
        run_range(2500, SEEDS_PER_CASE);
}

/* A checker that cannot fail proves nothing: run it against a deliberately
 * wrong model and require a mismatch within a few seeds. The mismatch counts
 * only if the correct model gets further on the same seed, so that a bug in
 * the machine cannot pass for the wrong model being caught. */
static void negative(unsigned bug, const char *name)
{
        struct mismatch mm, good;

        for (uint64_t seed = 0; seed < NEGATIVE_SEEDS; seed++) {
                if (!run_seed(seed, STEPS, bug, false, false, NULL, &mm)) {
                        continue;
                }
                if (run_seed(seed, STEPS, 0, false, false, NULL, &good) &&
                    good.step <= mm.step) {
                        continue;
                }
                print_message("# %s model caught at seed %" PRIu64
                              " step %u: %s\n",
                              name, mm.seed, mm.step, mm.what);
                return;
        }
        fail_msg("the checker did not tell the %s model from the machine",
                 name);
}

/* A negative control's bug (model.h) and its name in messages. */
struct bug {
        unsigned bug;
        const char *name;
};

static void model_negative(void **state)
{
        const struct bug *b = *state;

        negative(b->bug, b->name);
}

/* The cmocka test `test`: the negative control of bug `b`, called `n`. */
/* clang-format off */
#define NEGATIVE(test, b, n)                                                   \
        {#test, model_negative, NULL, NULL, &(struct bug){b, n}}
/* clang-format on */

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(model_seeds_0_499),
            cmocka_unit_test(model_seeds_500_999),
            cmocka_unit_test(model_seeds_1000_1499),
            cmocka_unit_test(model_seeds_1500_1999),
            cmocka_unit_test(model_seeds_2000_2499),
            cmocka_unit_test(model_seeds_2500_2999),
            NEGATIVE(model_negative_forgetful, BUG_FORGET, "forgetful"),
            NEGATIVE(model_negative_dead_waiter, BUG_DEAD_WAITER,
                     "dead-waiter"),
            NEGATIVE(model_negative_grant_twice, BUG_TWICE, "grant-twice"),
            NEGATIVE(model_negative_starving, BUG_STARVE, "writer-starving"),
            NEGATIVE(model_negative_overgrant, BUG_OVERGRANT,
                     "permit-overgranting"),
            NEGATIVE(model_negative_nodelay, BUG_NODELAY, "delay-ignoring"),
            NEGATIVE(model_negative_proclaim, BUG_PROCLAIM, "stale-proclaim"),
            NEGATIVE(model_negative_partial, BUG_PARTIAL, "partial-multi-lock"),
            NEGATIVE(model_negative_owndelay, BUG_OWNDELAY,
                     "session-delay-ignoring"),
            NEGATIVE(model_negative_quota_leak, BUG_QUOTA_LEAK,
                     "quota-leaking"),
            NEGATIVE(model_negative_quota_ignore, BUG_QUOTA_IGNORE,
                     "quota-ignoring"),
        };

        return cmocka_run_group_tests_name("model", tests, NULL, NULL);
}
