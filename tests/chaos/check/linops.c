/* The operations checker S7 gives the linearizability search. */
#include "linops.h"

#include <stdlib.h>
#include <string.h>

#define SYNTHETIC_PROCESS (UINT64_C(1) << 62)

/* An operation and the lock it belongs to, before grouping. */
struct keyed {
        int key;
        struct lincheck_op op;
};

/* A (session or token, lock) pair, for sorted lookups. */
struct pair {
        uint64_t a;
        int key;
};

struct build {
        const struct run *r;
        struct keyed *all;
        size_t n_all, cap_all;
        struct pair *touched; /* (session, lock) */
        size_t n_touched, cap_touched;
        struct pair *released; /* (token, lock) of history releases */
        size_t n_released, cap_released;
        bool *used;      /* per applylog grant: reported or attributed */
        bool *used_busy; /* per applylog busy refusal: attributed */
        uint64_t next_process;
        size_t n_attributed, n_synthetic;
};

static int cmp_pairs(const void *p, const void *q)
{
        const struct pair *x = p, *y = q;

        if (x->a != y->a) {
                return x->a < y->a ? -1 : 1;
        }
        return x->key < y->key ? -1 : x->key > y->key;
}

static void sort_unique(struct pair *v, size_t *n)
{
        size_t i, k = 0;

        util_sort(v, *n, sizeof *v, cmp_pairs);
        for (i = 0; i < *n; i++) {
                if (k == 0 || cmp_pairs(&v[k - 1], &v[i]) != 0) {
                        v[k++] = v[i];
                }
        }
        *n = k;
}

static bool has_pair(const struct pair *v, size_t n, uint64_t a, int key)
{
        struct pair k = {a, key};

        return util_bsearch(&k, v, n, sizeof *v, cmp_pairs) != NULL;
}

static void push(struct build *b, int key, const struct lincheck_op *op)
{
        struct keyed k = {key, *op};

        util_push((void **)&b->all, &b->n_all, &b->cap_all, &k, sizeof k);
}

static struct lincheck_op from(const struct history_op *h, int kind)
{
        struct lincheck_op op;

        memset(&op, 0, sizeof op);
        op.kind = kind;
        op.process = h->process;
        op.session = h->session_eff;
        op.invoke_ns = h->invoke_ns;
        op.known = h->type == HISTORY_OK || h->type == HISTORY_FAIL;
        op.complete_ns = op.known ? h->complete_ns : INT64_MAX;
        return op;
}

/* The index of the RELEASE event a RELEASE command of grant `token` of
 * `key` made, or 0 (a grant that ended with its session has none). */
static uint64_t release_index(const struct run *r, int key, uint64_t token)
{
        size_t n, i;
        const struct applylog_fact *f =
            applylog_releases(&r->applylog, key, token, &n);

        for (i = 0; i < n; i++) {
                if (f[i].type == APPLYLOG_RELEASE &&
                    f[i].cause == APPLYLOG_C_RELEASE) {
                        return f[i].index;
                }
        }
        return 0;
}

/* The first grant of `h`'s lock to its session applied after its invoke
 * that no acquire reported: what an acquire of unknown outcome got. */
static const struct applylog_fact *attribute(struct build *b,
                                             const struct history_op *h)
{
        const struct applylog *a = &b->r->applylog;
        size_t n, i;
        const struct applylog_fact *g =
            applylog_grants(a, h->key, h->session_eff, &n);

        for (i = 0; i < n; i++) {
                size_t at = (size_t)(&g[i] - a->grants);
                if (!b->used[at] && g[i].mono_ns >= h->invoke_ns) {
                        b->used[at] = true;
                        return &g[i];
                }
        }
        return NULL;
}

/* The index of the refusal a BUSY got: the first RESULT refusing its
 * session's acquire of that lock with BATON_EBUSY applied within the op's
 * real time (every node applies an entry after the invoke that proposed
 * it, and the leader before its answer), or 0. */
static uint64_t busy_index(struct build *b, const struct history_op *h)
{
        const struct applylog *a = &b->r->applylog;
        size_t n, i;
        const struct applylog_fact *f =
            applylog_busies(a, h->key, h->session_eff, &n);

        for (i = 0; i < n; i++) {
                size_t at = (size_t)(&f[i] - a->busies);
                if (!b->used_busy[at] && f[i].mono_ns >= h->invoke_ns &&
                    f[i].mono_ns <= h->complete_ns) {
                        b->used_busy[at] = true;
                        return f[i].index;
                }
        }
        return 0;
}

/* An unknown ACQUIRE, with the grant the apply logs show for it if any. */
static void unknown_acquire(struct build *b, const struct history_op *h)
{
        const struct applylog_fact *g = attribute(b, h);
        struct lincheck_op op = from(h, LINCHECK_ACQUIRE);
        uint64_t rel;

        op.known = false;
        op.complete_ns = INT64_MAX;
        if (g == NULL) {
                push(b, h->key, &op);
                return;
        }
        b->n_attributed++;
        op.token = g->index;
        op.index = g->index;
        push(b, h->key, &op);
        /* The library releases a grant its caller gave up on. */
        rel = release_index(b->r, h->key, g->index);
        if (rel != 0 &&
            !has_pair(b->released, b->n_released, g->index, h->key)) {
                op.kind = LINCHECK_RELEASE;
                op.process = b->next_process++;
                op.index = rel;
                push(b, h->key, &op);
                b->n_synthetic++;
        }
}

/* The index of the END of `session` if `cause` ended it, else 0. */
static uint64_t end_index(const struct run *r, uint64_t session, int cause)
{
        const struct applylog_fact *end = applylog_end(&r->applylog, session);

        return end != NULL && end->cause == cause ? end->index : 0;
}

/* `proto` (a CLOSE or an EXPIRE) on every lock `session` touched; returns
 * how many operations that made. */
static size_t on_touched(struct build *b, uint64_t session,
                         const struct lincheck_op *proto)
{
        size_t lo = 0, hi = b->n_touched, n = 0;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (b->touched[mid].a < session) {
                        lo = mid + 1;
                } else {
                        hi = mid;
                }
        }
        for (; lo < b->n_touched && b->touched[lo].a == session; lo++) {
                struct lincheck_op op = *proto;
                op.session = session;
                push(b, b->touched[lo].key, &op);
                n++;
        }
        return n;
}

static void from_history(struct build *b)
{
        const struct history *hs = &b->r->history;
        struct lincheck_op op;
        size_t i;

        for (i = 0; i < hs->n; i++) {
                const struct history_op *h = &hs->ops[i];
                bool unknown =
                    h->type == HISTORY_INFO || h->type == HISTORY_NONE;

                switch (h->f) {
                case HISTORY_ACQUIRE:
                        if (h->key < 0) {
                                break;
                        }
                        if (h->type == HISTORY_OK) {
                                op = from(h, LINCHECK_ACQUIRE);
                                op.token = h->token;
                                op.index = h->token;
                                push(b, h->key, &op);
                        } else if (h->type == HISTORY_FAIL &&
                                   strcmp(h->err, "BATON_EBUSY") == 0) {
                                op = from(h, LINCHECK_BUSY);
                                op.index = busy_index(b, h);
                                push(b, h->key, &op);
                        } else if (unknown) {
                                unknown_acquire(b, h);
                        }
                        break;
                case HISTORY_RELEASE:
                        if (h->key < 0 || h->type == HISTORY_FAIL) {
                                break;
                        }
                        op = from(h, LINCHECK_RELEASE);
                        op.token = h->token;
                        op.index = release_index(b->r, h->key, h->token);
                        push(b, h->key, &op);
                        break;
                case HISTORY_HOLDER:
                        if (h->key < 0 || h->type != HISTORY_OK) {
                                break;
                        }
                        op = from(h, LINCHECK_HOLDER);
                        op.holder = h->holder;
                        op.token = h->token;
                        op.index = h->has_index ? h->index : 0;
                        push(b, h->key, &op);
                        break;
                case HISTORY_CLOSE:
                        if (h->type == HISTORY_FAIL) {
                                break;
                        }
                        op = from(h, LINCHECK_CLOSE);
                        op.index =
                            end_index(b->r, h->session_eff, APPLYLOG_C_CLOSE);
                        on_touched(b, h->session_eff, &op);
                        break;
                default:
                        break;
                }
        }
}

/* Sessions and processes, for the synthetic operations. */
struct sess {
        uint64_t session;
        int64_t first_invoke;
        int64_t lease; /* largest lease=, or INT64_MIN */
};

struct proc {
        uint64_t process;
        uint64_t last_session;
        int64_t last_t; /* the last completion (or invoke) */
        bool closes;    /* logs a close */
};

static int cmp_sess(const void *p, const void *q)
{
        const struct sess *x = p, *y = q;

        return x->session < y->session ? -1 : x->session > y->session;
}

static int cmp_proc(const void *p, const void *q)
{
        const struct proc *x = p, *y = q;

        return x->process < y->process ? -1 : x->process > y->process;
}

/* A grant the leader ended when its hold ran out (EXPIRE_HOLD): its
 * holder is not told, as it is not told of its session's expiry. An
 * unknown RELEASE of that grant by its session, invoked when the grant
 * was first applied (S17 times the expiry itself). */
static void hold_expiries(struct build *b)
{
        const struct applylog *a = &b->r->applylog;
        struct lincheck_op op;
        size_t i, n, k;

        for (i = 0; i < a->n_releases; i++) {
                const struct applylog_fact *f = &a->releases[i];
                const struct applylog_fact *g;
                if (f->type != APPLYLOG_RELEASE ||
                    f->cause != APPLYLOG_C_EXPIRE_HOLD ||
                    !has_pair(b->touched, b->n_touched, f->session, f->lock)) {
                        continue;
                }
                memset(&op, 0, sizeof op);
                op.kind = LINCHECK_RELEASE;
                op.process = b->next_process++;
                op.session = f->session;
                op.token = f->token;
                op.invoke_ns = f->mono_ns;
                g = applylog_grants(a, f->lock, f->session, &n);
                for (k = 0; k < n; k++) {
                        if (g[k].index == f->token) {
                                op.invoke_ns = g[k].mono_ns;
                        }
                }
                op.complete_ns = INT64_MAX;
                op.known = false;
                op.index = f->index;
                push(b, f->lock, &op);
                b->n_synthetic++;
        }
}

static void synthetic(struct build *b)
{
        const struct history *hs = &b->r->history;
        bool clock_fault = run_clock_fault(b->r);
        struct sess *ss = NULL;
        struct proc *ps = NULL;
        size_t n_s = 0, cap_s = 0, n_p = 0, cap_p = 0, i, j, k;
        struct lincheck_op op;

        for (i = 0; i < hs->n; i++) {
                const struct history_op *h = &hs->ops[i];
                struct sess s = {h->session_eff, h->invoke_ns,
                                 h->has_lease ? h->lease : INT64_MIN};
                struct proc p = {h->process, h->session_eff,
                                 h->complete_ns != INT64_MAX ? h->complete_ns
                                                             : h->invoke_ns,
                                 h->f == HISTORY_CLOSE};
                util_push((void **)&ss, &n_s, &cap_s, &s, sizeof s);
                util_push((void **)&ps, &n_p, &cap_p, &p, sizeof p);
        }
        /* qsort is not stable: fold each group by its extreme values, not
         * by position. Histories are in invoke order, so the last session
         * of a process is the one of its latest invoke. */
        util_sort(ss, n_s, sizeof *ss, cmp_sess);
        for (i = 0, k = 0; i < n_s; i = j) {
                struct sess s = ss[i];
                for (j = i + 1; j < n_s && ss[j].session == s.session; j++) {
                        if (ss[j].first_invoke < s.first_invoke) {
                                s.first_invoke = ss[j].first_invoke;
                        }
                        if (ss[j].lease > s.lease) {
                                s.lease = ss[j].lease;
                        }
                }
                ss[k++] = s;
        }
        n_s = k;
        for (i = 0; i < n_s; i++) {
                memset(&op, 0, sizeof op);
                op.kind = LINCHECK_EXPIRE;
                op.process = b->next_process++;
                op.invoke_ns = clock_fault || ss[i].lease == INT64_MIN
                                   ? ss[i].first_invoke
                                   : ss[i].lease;
                op.complete_ns = INT64_MAX;
                op.known = false;
                op.index = end_index(b->r, ss[i].session, APPLYLOG_C_EXPIRE);
                b->n_synthetic += on_touched(b, ss[i].session, &op);
        }
        /* The last op of each process: its invokes are in order, so the
         * entry with the largest time wins. */
        util_sort(ps, n_p, sizeof *ps, cmp_proc);
        for (i = 0; i < n_p; i = j) {
                struct proc p = ps[i];
                for (j = i + 1; j < n_p && ps[j].process == p.process; j++) {
                        if (ps[j].last_t >= p.last_t) {
                                p.last_t = ps[j].last_t;
                                p.last_session = ps[j].last_session;
                        }
                        p.closes = p.closes || ps[j].closes;
                }
                if (p.closes) {
                        continue;
                }
                memset(&op, 0, sizeof op);
                op.kind = LINCHECK_CLOSE;
                op.process = b->next_process++;
                op.invoke_ns = p.last_t;
                op.complete_ns = INT64_MAX;
                op.known = false;
                op.index = end_index(b->r, p.last_session, APPLYLOG_C_CLOSE);
                b->n_synthetic += on_touched(b, p.last_session, &op);
        }
        free(ss);
        free(ps);
}

static int cmp_keyed(const void *p, const void *q)
{
        const struct keyed *x = p, *y = q;

        if (x->key != y->key) {
                return x->key < y->key ? -1 : 1;
        }
        if (x->op.invoke_ns != y->op.invoke_ns) {
                return x->op.invoke_ns < y->op.invoke_ns ? -1 : 1;
        }
        return x->op.process < y->op.process ? -1
                                             : x->op.process > y->op.process;
}

void linops_build(struct linops *out, const struct run *r)
{
        const struct history *hs = &r->history;
        struct build b;
        size_t i, j, cap_keys = 0;

        memset(out, 0, sizeof *out);
        memset(&b, 0, sizeof b);
        b.r = r;
        b.next_process = SYNTHETIC_PROCESS;
        b.used = util_calloc(r->applylog.n_grants, sizeof *b.used);
        b.used_busy = util_calloc(r->applylog.n_busies, sizeof *b.used_busy);
        for (i = 0; i < hs->n; i++) {
                const struct history_op *h = &hs->ops[i];
                if (h->key < 0) {
                        continue;
                }
                if (h->f == HISTORY_ACQUIRE || h->f == HISTORY_RELEASE) {
                        struct pair p = {h->session_eff, h->key};
                        util_push((void **)&b.touched, &b.n_touched,
                                  &b.cap_touched, &p, sizeof p);
                }
                if (h->f == HISTORY_RELEASE && h->has_token) {
                        struct pair p = {h->token, h->key};
                        util_push((void **)&b.released, &b.n_released,
                                  &b.cap_released, &p, sizeof p);
                }
                /* Grants reported to an acquire are nobody else's. */
                if (h->f == HISTORY_ACQUIRE && h->type == HISTORY_OK) {
                        size_t n, k;
                        const struct applylog_fact *g = applylog_grants(
                            &r->applylog, h->key, h->session_eff, &n);
                        for (k = 0; k < n; k++) {
                                if (g[k].index == h->token) {
                                        b.used[&g[k] - r->applylog.grants] =
                                            true;
                                }
                        }
                }
        }
        sort_unique(b.touched, &b.n_touched);
        sort_unique(b.released, &b.n_released);
        from_history(&b);
        synthetic(&b);
        hold_expiries(&b);
        util_sort(b.all, b.n_all, sizeof *b.all, cmp_keyed);
        out->ops = util_calloc(b.n_all, sizeof *out->ops);
        out->n = out->cap = b.n_all;
        for (i = 0; i < b.n_all; i = j) {
                struct linops_key k = {b.all[i].key, i, 0};
                for (j = i; j < b.n_all && b.all[j].key == k.key; j++) {
                        out->ops[j] = b.all[j].op;
                }
                k.n = j - i;
                util_push((void **)&out->keys, &out->n_keys, &cap_keys, &k,
                          sizeof k);
        }
        out->n_attributed = b.n_attributed;
        out->n_synthetic = b.n_synthetic;
        free(b.all);
        free(b.touched);
        free(b.released);
        free(b.used);
        free(b.used_busy);
}

void linops_free(struct linops *l)
{
        free(l->ops);
        free(l->keys);
        memset(l, 0, sizeof *l);
}
