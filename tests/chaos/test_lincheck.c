/*
 * Tests of the linearizability checker (tests/chaos/check/lincheck): hand
 * written histories with the verdict each must get, and randomly generated
 * valid histories (a simulated sequential execution stretched into
 * overlapping intervals), with their mutations that must be caught. Prints
 * TAP; BATON_LINCHECK_VERBOSE=1 prints every verdict's detail.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check/lincheck.h"

/* The complete time of an op whose outcome is unknown. */
#define INFO INT64_MAX
/* For check()'s `fast`: either path may decide. */
#define ANY   (-1)
#define MAXOP 2048

static unsigned tests_run, tests_failed;
static bool verbose;

struct hist {
        struct lincheck_op ops[MAXOP];
        size_t n;
};

static struct hist h; /* the current test's history */

static struct lincheck_op *add(int kind, uint64_t p, uint64_t s, int64_t inv,
                               int64_t cmp)
{
        struct lincheck_op *o = &h.ops[h.n++];

        if (h.n > MAXOP) {
                fprintf(stderr, "test history too long\n");
                exit(2);
        }
        memset(o, 0, sizeof(*o));
        o->kind = kind;
        o->process = p;
        o->session = s;
        o->invoke_ns = inv;
        o->complete_ns = cmp;
        o->known = cmp != INFO;
        return o;
}

static struct lincheck_op *acq(uint64_t p, uint64_t s, int64_t inv, int64_t cmp,
                               uint64_t token)
{
        struct lincheck_op *o = add(LINCHECK_ACQUIRE, p, s, inv, cmp);

        o->token = token;
        return o;
}

static struct lincheck_op *busy(uint64_t p, uint64_t s, int64_t inv,
                                int64_t cmp)
{
        return add(LINCHECK_BUSY, p, s, inv, cmp);
}

static struct lincheck_op *rel(uint64_t p, uint64_t s, int64_t inv, int64_t cmp,
                               uint64_t token)
{
        struct lincheck_op *o = add(LINCHECK_RELEASE, p, s, inv, cmp);

        o->token = token;
        return o;
}

static struct lincheck_op *hold(uint64_t p, uint64_t s, int64_t inv,
                                int64_t cmp, uint64_t holder, uint64_t token)
{
        struct lincheck_op *o = add(LINCHECK_HOLDER, p, s, inv, cmp);

        o->holder = holder;
        o->token = token;
        return o;
}

static struct lincheck_op *closed(uint64_t p, uint64_t s, int64_t inv,
                                  int64_t cmp)
{
        return add(LINCHECK_CLOSE, p, s, inv, cmp);
}

/* The synthetic expiry: pending from the earliest moment it may happen. */
static struct lincheck_op *expire(uint64_t s, int64_t earliest)
{
        return add(LINCHECK_EXPIRE, 0, s, earliest, INFO);
}

static void start(void)
{
        h.n = 0;
}

/* --- TAP -------------------------------------------------------------------
 */

static bool ok(bool cond, const char *name)
{
        tests_run++;
        if (!cond) {
                tests_failed++;
        }
        printf("%s %u - %s\n", cond ? "ok" : "not ok", tests_run, name);
        fflush(stdout);
        return cond;
}

static const char *verdict_name(int v)
{
        return v == LINCHECK_VALID     ? "VALID"
               : v == LINCHECK_INVALID ? "INVALID"
               : v == LINCHECK_UNKNOWN ? "UNKNOWN"
                                       : "?";
}

/* Runs the checker on `ops` and says whether it decided `verdict` (and, if
 * `fast` is not ANY, by that path). */
static bool check_ops(const struct lincheck_op *ops, size_t n, uint64_t budget,
                      int verdict, int fast, struct lincheck_result *res)
{
        bool good;
        int rv = lincheck_run(ops, n, budget, res);

        good = rv == 0 && res->verdict == verdict &&
               (fast == ANY || res->fast == (fast == 1));
        if (!good || verbose) {
                printf(
                    "# rv=%d verdict=%s (expected %s) fast=%d explored=%" PRIu64
                    ": %s\n",
                    rv, verdict_name(res->verdict), verdict_name(verdict),
                    res->fast, res->explored, res->detail);
        }
        return good;
}

static bool check(uint64_t budget, int verdict, int fast)
{
        struct lincheck_result res;

        return check_ops(h.ops, h.n, budget, verdict, fast, &res);
}

/* Like check(), and the detail must contain `needle`. */
static bool check_detail(int verdict, const char *needle)
{
        struct lincheck_result res;

        if (!check_ops(h.ops, h.n, 0, verdict, ANY, &res)) {
                return false;
        }
        if (strstr(res.detail, needle) == NULL) {
                printf("# detail lacks \"%s\": %s\n", needle, res.detail);
                return false;
        }
        return true;
}

/* --- Valid histories --------------------------------------------------------
 *
 * Times are small integers; sessions 10, 20, 30 belong to processes 1, 2, 3.
 */

static bool valid_empty(void)
{
        start();
        return check(0, LINCHECK_VALID, ANY);
}

static bool valid_sequential_chain(void)
{
        start();
        acq(1, 10, 0, 10, 5);
        rel(1, 10, 20, 30, 5);
        acq(2, 20, 40, 50, 8);
        rel(2, 20, 60, 70, 8);
        acq(1, 10, 80, 90, 12);
        rel(1, 10, 100, 110, 12);
        return check(0, LINCHECK_VALID, 0);
}

static bool valid_concurrent_tries(void)
{
        start();
        /* Both try at once: 10 wins, 20 is refused, then 20 wins later. */
        acq(1, 10, 0, 20, 5);
        busy(2, 20, 1, 19);
        /* Invoked before the grant, completed after it: placed after. */
        busy(3, 30, -5, 12);
        rel(1, 10, 30, 40, 5);
        acq(2, 20, 35, 45, 7); /* overlaps the release: placed after it */
        busy(1, 10, 50, 60);
        return check(0, LINCHECK_VALID, 0);
}

static bool valid_info_acquire_no_effect(void)
{
        start();
        acq(1, 10, 0, INFO, 0); /* never took effect */
        acq(2, 20, 10, 20, 5);
        rel(2, 20, 30, 40, 5);
        hold(3, 30, 50, 60, 0, 0);
        acq(3, 30, 70, 80, 9);
        hold(2, 20, 90, 100, 30, 9);
        expire(10, 500);
        return check(0, LINCHECK_VALID, 0);
}

static bool valid_info_acquire_took_effect(void)
{
        start();
        acq(1, 10, 0, INFO, 0); /* took effect: the reads show it */
        hold(2, 20, 10, 20, 10, 3);
        busy(2, 20, 22, 28);
        expire(10, 30);
        hold(3, 30, 31, 35, 10, 3); /* the expiry may come later */
        acq(2, 20, 40, 50, 5);
        hold(3, 30, 60, 70, 20, 5);
        return check(0, LINCHECK_VALID, 0);
}

static bool valid_grant_after_expire(void)
{
        start();
        acq(1, 10, 0, 10, 5);
        busy(2, 20, 20, 30);
        expire(10, 40);
        acq(2, 20, 35, 60, 9); /* the expiry fits between 40 and 60 */
        acq(3, 30, 70, 80, 0); /* an ok acquire whose token was not seen */
        expire(20, 65);
        rel(3, 30, 90, 100, 0);
        return check(0, LINCHECK_VALID, 0);
}

static bool valid_holder_reads(void)
{
        start();
        hold(3, 30, 0, 5, 0, 0);
        acq(1, 10, 0, 10, 5);
        hold(2, 20, 5, 15, 10, 5); /* concurrent with the grant */
        hold(3, 30, 20, 30, 10, 5);
        hold(2, 20, 21, 29, 10, 5);
        rel(1, 10, 40, 50, 5);
        hold(2, 20, 45, 55, 0, 0); /* concurrent with the release */
        hold(3, 30, 44, 48, 10, 5);
        hold(3, 30, 60, 70, 0, 0);
        return check(0, LINCHECK_VALID, 0);
}

static bool valid_close_and_info_release(void)
{
        start();
        acq(1, 10, 0, 10, 5);
        closed(1, 10, 20, 30); /* releases the hold */
        acq(2, 20, 40, 50, 8);
        rel(2, 20, 60, INFO, 8); /* took effect: the grant below shows it */
        acq(3, 30, 70, 80, 11);
        rel(1, 11, 90, INFO, 11); /* not the owner: cannot have happened */
        hold(1, 11, 100, 110, 30, 11);
        return check(0, LINCHECK_VALID, 0);
}

/* Raft indexes as the apply logs give them; two reads at one read index. */
static void indexed_history(void)
{
        start();
        acq(1, 10, 0, 10, 5)->index = 5;
        busy(2, 20, 2, 12)->index = 6;
        hold(3, 30, 8, 14, 10, 5)->index = 6;
        hold(2, 20, 13, 15, 10, 5)->index = 6;
        rel(1, 10, 20, 30, 5)->index = 8;
        acq(2, 20, 25, 40, 9)->index = 9;
        acq(1, 10, 31, INFO, 0); /* no index: taken not to have happened */
        expire(10, 100);
        hold(3, 30, 50, 60, 20, 9)->index = 9;
        closed(2, 20, 70, 80)->index = 12;
        hold(3, 30, 90, 95, 0, 0)->index = 12;
}

static bool valid_fast_path(void)
{
        indexed_history();
        return check(0, LINCHECK_VALID, 1);
}

static bool valid_fast_path_missing_index(void)
{
        indexed_history();
        h.ops[4].index = 0; /* the release */
        return check(0, LINCHECK_VALID, 0);
}

static bool valid_fast_path_inconsistent_index(void)
{
        indexed_history();
        /* Swapped: the order breaks real time and the replay, the history
         * itself stays valid. */
        h.ops[0].index = 9;
        h.ops[5].index = 5;
        return check(0, LINCHECK_VALID, 0);
}

/* --- Invalid histories ------------------------------------------------------
 */

static bool invalid_double_grant(void)
{
        start();
        acq(1, 10, 0, 10, 5);
        acq(2, 20, 5, 15, 6);
        rel(1, 10, 20, 30, 5);
        return check_detail(LINCHECK_INVALID, "cannot place");
}

static bool invalid_token_goes_back(void)
{
        start();
        acq(1, 10, 0, 10, 5);
        rel(1, 10, 20, 30, 5);
        acq(2, 20, 40, 50, 4);
        return check_detail(LINCHECK_INVALID, "acquire ops[2]");
}

static bool invalid_duplicate_token(void)
{
        start();
        acq(1, 10, 0, 10, 5);
        rel(1, 10, 20, 30, 5);
        acq(2, 20, 25, 50, 5);
        return check(0, LINCHECK_INVALID, 0);
}

static bool invalid_release_by_non_owner(void)
{
        start();
        acq(1, 10, 0, 10, 5);
        rel(2, 20, 20, 30, 5);
        return check_detail(LINCHECK_INVALID, "release ops[1]");
}

static bool invalid_release_wrong_token(void)
{
        start();
        acq(1, 10, 0, 10, 5);
        rel(1, 10, 20, 30, 4);
        return check(0, LINCHECK_INVALID, 0);
}

static bool invalid_lost_acknowledgement(void)
{
        start();
        acq(1, 10, 0, 10, 5);
        rel(1, 10, 20, 30, 5);
        hold(2, 20, 40, 50, 10, 5);
        return check_detail(LINCHECK_INVALID, "holder ops[2]");
}

static bool invalid_busy_after_release(void)
{
        start();
        acq(1, 10, 0, 10, 5);
        rel(1, 10, 20, 30, 5);
        busy(2, 20, 40, 50);
        return check(0, LINCHECK_INVALID, 0);
}

static bool invalid_stale_holder_read(void)
{
        start();
        acq(1, 10, 0, 10, 5);
        rel(1, 10, 20, 30, 5);
        acq(2, 20, 40, 50, 9);
        hold(3, 30, 60, 70, 10, 5); /* a deposed leader's answer */
        return check_detail(LINCHECK_INVALID, "holder ops[3]");
}

static bool invalid_expiry_too_early(void)
{
        start();
        acq(1, 10, 0, 10, 5);
        expire(10, 100); /* the lease ran until 100 */
        acq(2, 20, 50, 60, 9);
        return check_detail(LINCHECK_INVALID, "acquire ops[2]");
}

static bool invalid_acquire_after_close(void)
{
        start();
        closed(1, 10, 0, 10);
        acq(1, 10, 20, 30, 5);
        return check(0, LINCHECK_INVALID, 0);
}

static bool invalid_info_pin_conflict(void)
{
        start();
        /* The unseen token of an info grant is pinned by a read, then a
         * later grant reuses it. */
        acq(1, 10, 0, INFO, 0);
        hold(2, 20, 10, 20, 10, 7);
        expire(10, 30);
        acq(2, 20, 40, 50, 7);
        return check(0, LINCHECK_INVALID, 0);
}

static bool invalid_indexed_order_hides_nothing(void)
{
        /* A fast path that fails must not decide: here the index order
         * replays, but real time says the read came after the release. */
        start();
        acq(1, 10, 0, 10, 5)->index = 5;
        rel(1, 10, 20, 30, 5)->index = 7;
        hold(2, 20, 40, 50, 10, 5)->index = 6;
        return check(0, LINCHECK_INVALID, 0);
}

/* --- Unknown and malformed --------------------------------------------------
 */

/* Many sessions with an unknown acquire pending, then a chain of acquires
 * and releases that a search needs more than 10 states to walk. */
static void many_info_history(void)
{
        uint64_t s;
        int64_t t = 1000;
        uint64_t token = 100;
        int i;

        start();
        for (s = 100; s < 112; s++) {
                acq(s, s, (int64_t)s, INFO, 0);
                expire(s, 2000);
        }
        for (i = 0; i < 12; i++) {
                acq(1, 10, t, t + 10, ++token);
                rel(1, 10, t + 20, t + 30, token);
                t += 40;
        }
}

static bool unknown_tiny_budget(void)
{
        struct lincheck_result res;

        many_info_history();
        if (!check_ops(h.ops, h.n, 10, LINCHECK_UNKNOWN, 0, &res)) {
                return false;
        }
        return strstr(res.detail, "budget") != NULL && res.explored > 10;
}

static bool unknown_history_decided_with_budget(void)
{
        many_info_history();
        return check(0, LINCHECK_VALID, 0);
}

static bool unknown_malformed(void)
{
        struct lincheck_result res;

        start();
        acq(1, 10, 50, 40, 5); /* completes before its invoke */
        if (!check_ops(h.ops, h.n, 0, LINCHECK_UNKNOWN, 0, &res)) {
                return false;
        }
        start();
        add(42, 1, 10, 0, 10);
        return check_ops(h.ops, h.n, 0, LINCHECK_UNKNOWN, 0, &res);
}

/* --- Random histories -------------------------------------------------------
 */

/*
 * A simulated execution: at linearization points L1 < L2 < ... one process
 * (of five) performs one op on the model, and the op's interval is stretched
 * around its point, up to 30 before and after, without overlapping the
 * process's previous op. So the history is valid by construction, with
 * several ops pending at once. Raft indexes count the writes; a token is its
 * grant's index, as in Baton. Some ops are unknown-outcome: an acquire that
 * did or did not happen, a release that happened; the process then moves on
 * as a new incarnation with a new session, and the abandoned session
 * expires, 50..150 after that, which frees the lock if it held it. Like the
 * chaos workers, which move to a fresh key after the second unknown op, a
 * history has few of them (`max_unknown`), because each one pending
 * multiplies the states a search must visit to prove a history invalid.
 */
#define PROCS   5
#define HORIZON 30

struct rng {
        uint64_t s;
};

static uint64_t rnd(struct rng *r, uint64_t n)
{
        uint64_t x = (r->s += 0x9e3779b97f4a7c15ULL);

        x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
        x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
        x ^= x >> 31;
        return n == 0 ? 0 : x % n;
}

struct proc {
        uint64_t id;
        uint64_t session;
        int64_t free_at; /* completion of its last op */
};

struct sim {
        struct rng r;
        struct proc p[PROCS];
        uint64_t owner, token, index, next_session;
        unsigned unknown, max_unknown;
        int64_t L;
        /* The abandoned session holding the lock, if any, and when its
         * expiry may happen. */
        uint64_t orphan;
        int64_t orphan_at;
        size_t orphan_op;
};

/* The process moves on after an unknown outcome; its old session expires. */
static void abandon(struct sim *m, struct proc *p, int64_t lin)
{
        int64_t at = lin + 50 + (int64_t)rnd(&m->r, 101);

        if (m->owner == p->session) {
                m->orphan = p->session;
                m->orphan_at = at;
                m->orphan_op = h.n;
        }
        expire(p->session, at);
        p->id++;
        p->session = m->next_session++;
        p->free_at = lin + (int64_t)rnd(&m->r, HORIZON + 1);
}

static void sim_step(struct sim *m, struct proc *p, int64_t inv, int64_t cmp)
{
        uint64_t c = rnd(&m->r, 100);
        struct lincheck_op *o;

        /* Unknown outcomes are the top 10 or so of each range of c. */
        if (m->unknown >= m->max_unknown && c >= 90) {
                c = rnd(&m->r, 90);
        }
        if (c >= 90) {
                m->unknown++;
        }

        if (m->owner == p->session) {
                if (c < 75) {
                        rel(p->id, p->session, inv, cmp, m->token)->index =
                            ++m->index;
                        m->owner = 0;
                } else if (c < 83) {
                        hold(p->id, p->session, inv, cmp, m->owner, m->token)
                            ->index = m->index;
                } else if (c < 90) {
                        closed(p->id, p->session, inv, cmp)->index = ++m->index;
                        m->owner = 0;
                        p->session = m->next_session++;
                } else {
                        /* An unknown release that happened. */
                        rel(p->id, p->session, inv, INFO, m->token)->index =
                            ++m->index;
                        m->owner = 0;
                        abandon(m, p, m->L);
                        return;
                }
        } else if (m->owner != 0) {
                if (c < 55) {
                        busy(p->id, p->session, inv, cmp)->index = ++m->index;
                } else if (c < 90) {
                        hold(p->id, p->session, inv, cmp, m->owner, m->token)
                            ->index = m->index;
                } else {
                        /* An unknown acquire that did not happen. */
                        acq(p->id, p->session, inv, INFO, 0);
                        abandon(m, p, m->L);
                        return;
                }
        } else {
                if (c < 60) {
                        m->token = ++m->index;
                        m->owner = p->session;
                        acq(p->id, p->session, inv, cmp, m->token)->index =
                            m->token;
                } else if (c < 90) {
                        hold(p->id, p->session, inv, cmp, 0, 0)->index =
                            m->index;
                } else if (c < 95) {
                        /* An unknown acquire that happened. */
                        m->token = ++m->index;
                        m->owner = p->session;
                        o = acq(p->id, p->session, inv, INFO, 0);
                        o->index = m->token;
                        abandon(m, p, m->L);
                        return;
                } else {
                        acq(p->id, p->session, inv, INFO, 0);
                        abandon(m, p, m->L);
                        return;
                }
        }
        p->free_at = cmp;
}

static void random_history(uint64_t seed, size_t n_ops, unsigned max_unknown)
{
        struct sim m;
        size_t i;

        memset(&m, 0, sizeof(m));
        m.r.s = seed;
        m.max_unknown = max_unknown;
        m.next_session = 1000;
        m.index = 1;
        m.L = 100;
        for (i = 0; i < PROCS; i++) {
                m.p[i].id = (i + 1) * 1000;
                m.p[i].session = m.next_session++;
        }
        start();
        while (h.n < n_ops) {
                struct proc *p = &m.p[rnd(&m.r, PROCS)];
                int64_t lo, inv, cmp;

                m.L += 1 + (int64_t)rnd(&m.r, 8);
                if (m.orphan != 0 && m.owner == m.orphan &&
                    m.L >= m.orphan_at) {
                        /* The orphan's expiry takes effect now. */
                        h.ops[m.orphan_op].index = ++m.index;
                        m.owner = 0;
                        m.orphan = 0;
                        continue;
                }
                if (p->free_at >= m.L) {
                        continue;
                }
                lo = p->free_at + 1;
                if (lo < m.L - HORIZON) {
                        lo = m.L - HORIZON;
                }
                inv = lo + (int64_t)rnd(&m.r, (uint64_t)(m.L - lo + 1));
                cmp = m.L + (int64_t)rnd(&m.r, HORIZON + 1);
                sim_step(&m, p, inv, cmp);
        }
}

static void strip_indexes(void)
{
        size_t i;

        for (i = 0; i < h.n; i++) {
                h.ops[i].index = 0;
        }
}

#define SEEDS       20
#define N_RAND      300
#define FEW_UNKNOWN 3
#define ALL_UNKNOWN 1000 /* no limit: about one op in ten */

/* Gives the k-th acknowledged grant (k >= 1) the token of the one before. */
static bool duplicate_token(size_t k)
{
        size_t i, seen = 0;
        uint64_t prev = 0;

        for (i = 0; i < h.n; i++) {
                struct lincheck_op *o = &h.ops[i];

                if (o->kind != LINCHECK_ACQUIRE || !o->known) {
                        continue;
                }
                if (seen++ == k) {
                        o->token = prev;
                        return true;
                }
                prev = o->token;
        }
        return false;
}

/* Adds a read, strictly after an acknowledged release (the first after op
 * 20), that still shows the released hold. */
static bool lose_release(void)
{
        size_t i;

        for (i = 20; i < h.n; i++) {
                const struct lincheck_op *o = &h.ops[i];

                if (o->kind == LINCHECK_RELEASE && o->known) {
                        hold(9, 9, o->complete_ns + 1, o->complete_ns + 2,
                             o->session, o->token);
                        return true;
                }
        }
        return false;
}

enum mutation { KEEP, DUPLICATE, LOSE };

/* Runs seeds 1..SEEDS: a random history, perhaps without its indexes and
 * mutated, must get `verdict` (or, with `not_valid`, anything but VALID). */
static bool random_case(unsigned max_unknown, bool indexed, enum mutation mut,
                        uint64_t budget, int verdict, int fast, bool not_valid)
{
        uint64_t seed;

        for (seed = 1; seed <= SEEDS; seed++) {
                struct lincheck_result res;
                struct rng r = {seed};
                bool mutated = true, good;

                random_history(seed, N_RAND, max_unknown);
                if (!indexed) {
                        strip_indexes();
                }
                if (mut == DUPLICATE) {
                        mutated = duplicate_token(1 + rnd(&r, 20));
                } else if (mut == LOSE) {
                        mutated = lose_release();
                }
                if (!mutated) {
                        printf("# seed %" PRIu64 ": cannot mutate\n", seed);
                        return false;
                }
                if (not_valid) {
                        good = lincheck_run(h.ops, h.n, budget, &res) == 0 &&
                               res.verdict != LINCHECK_VALID;
                        if (verbose || !good) {
                                printf("# %s: %s\n", verdict_name(res.verdict),
                                       res.detail);
                        }
                } else {
                        good =
                            check_ops(h.ops, h.n, budget, verdict, fast, &res);
                }
                if (!good) {
                        printf("# seed %" PRIu64 "\n", seed);
                        return false;
                }
        }
        return true;
}

static bool random_valid_search(void)
{
        return random_case(FEW_UNKNOWN, false, KEEP, 0, LINCHECK_VALID, 0,
                           false);
}

static bool random_valid_fast(void)
{
        return random_case(FEW_UNKNOWN, true, KEEP, 0, LINCHECK_VALID, 1,
                           false);
}

static bool random_valid_many_unknown(void)
{
        return random_case(ALL_UNKNOWN, false, KEEP, 0, LINCHECK_VALID, 0,
                           false);
}

static bool random_valid_many_unknown_fast(void)
{
        return random_case(ALL_UNKNOWN, true, KEEP, 0, LINCHECK_VALID, 1,
                           false);
}

static bool random_invalid_search(void)
{
        return random_case(FEW_UNKNOWN, false, DUPLICATE, 0, LINCHECK_INVALID,
                           0, false);
}

static bool random_invalid_indexed(void)
{
        return random_case(FEW_UNKNOWN, true, DUPLICATE, 0, LINCHECK_INVALID, 0,
                           false);
}

static bool random_invalid_lost_release(void)
{
        return random_case(FEW_UNKNOWN, false, LOSE, 0, LINCHECK_INVALID, 0,
                           false);
}

/* With many unknown ops pending a proof of invalidity may cost more than
 * the budget, but the verdict must never be VALID. */
static bool random_never_valid_many_unknown(void)
{
        return random_case(ALL_UNKNOWN, false, DUPLICATE, 20000, 0, 0, true) &&
               random_case(ALL_UNKNOWN, false, LOSE, 20000, 0, 0, true);
}

/* --- main -------------------------------------------------------------------
 */

struct test {
        const char *name;
        bool (*fn)(void);
};

static const struct test tests[] = {
    {"valid: empty history", valid_empty},
    {"valid: sequential acquire/release chain", valid_sequential_chain},
    {"valid: concurrent tries, one wins, the other is busy",
     valid_concurrent_tries},
    {"valid: info acquire that never took effect",
     valid_info_acquire_no_effect},
    {"valid: info acquire that took effect, then its expiry",
     valid_info_acquire_took_effect},
    {"valid: grant after an expiry its bound allows", valid_grant_after_expire},
    {"valid: holder reads, some concurrent with writes", valid_holder_reads},
    {"valid: close frees the lock; info release that took effect",
     valid_close_and_info_release},
    {"valid: indexed history decided by the fast path", valid_fast_path},
    {"valid: fast path lacks an index, the search decides",
     valid_fast_path_missing_index},
    {"valid: fast path has inconsistent indexes, the search decides",
     valid_fast_path_inconsistent_index},
    {"invalid: double grant", invalid_double_grant},
    {"invalid: token going back", invalid_token_goes_back},
    {"invalid: token granted twice", invalid_duplicate_token},
    {"invalid: acknowledged release by a non-owner",
     invalid_release_by_non_owner},
    {"invalid: acknowledged release with the wrong token",
     invalid_release_wrong_token},
    {"invalid: lost acknowledgement (read after release shows owner)",
     invalid_lost_acknowledgement},
    {"invalid: busy after an acknowledged release", invalid_busy_after_release},
    {"invalid: stale holder read from a deposed leader",
     invalid_stale_holder_read},
    {"invalid: grant while the holder's lease had not run out",
     invalid_expiry_too_early},
    {"invalid: acquire by a closed session", invalid_acquire_after_close},
    {"invalid: info grant's token pinned by a read, then reused",
     invalid_info_pin_conflict},
    {"invalid: index order replays but breaks real time",
     invalid_indexed_order_hides_nothing},
    {"unknown: many info ops and a budget of 10 states", unknown_tiny_budget},
    {"valid: the same history with the default budget",
     unknown_history_decided_with_budget},
    {"unknown: malformed ops", unknown_malformed},
    {"valid: random histories (300 ops, 5 processes), search",
     random_valid_search},
    {"valid: random histories with indexes, fast path", random_valid_fast},
    {"valid: random histories, one op in ten unknown, search",
     random_valid_many_unknown},
    {"valid: random histories, one op in ten unknown, fast path",
     random_valid_many_unknown_fast},
    {"invalid: random histories with a duplicated grant token, search",
     random_invalid_search},
    {"invalid: random histories with a duplicated grant token, indexed",
     random_invalid_indexed},
    {"invalid: random histories with a lost release",
     random_invalid_lost_release},
    {"not valid: mutated random histories, one op in ten unknown",
     random_never_valid_many_unknown},
};

int main(void)
{
        size_t i, n = sizeof(tests) / sizeof(tests[0]);
        struct timespec t0, t1;
        const char *v = getenv("BATON_LINCHECK_VERBOSE");

        verbose = v != NULL && strcmp(v, "0") != 0;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        printf("1..%zu\n", n);
        for (i = 0; i < n; i++) {
                ok(tests[i].fn(), tests[i].name);
        }
        clock_gettime(CLOCK_MONOTONIC, &t1);
        printf("# %u of %u failed, %.0f ms\n", tests_failed, tests_run,
               (double)(t1.tv_sec - t0.tv_sec) * 1e3 +
                   (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
        return tests_failed == 0 ? 0 : 1;
}
