/* Linearizability of one lock's history against an owner-aware fenced mutex. */
#include "lincheck.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * The checker works on a private copy of the operations in which sessions are
 * renumbered 1..k (0 = no session, a free lock), so that the model state fits
 * in a few words and "dead" can be an array of counters kept beside it: which
 * sessions are dead follows from which CLOSE/EXPIRE ops were linearized, so
 * the cached configuration need not hold it (see make_key()).
 */

/* Enough for any of our ops: (2^31 - 1) entries of two per op. */
#define MAX_OPS ((size_t)1 << 29)

/* The first size of the cache's slot table (a power of two). */
#define CACHE_SLOTS0 1024

struct op {
        size_t pos; /* in the caller's array, for messages */
        int kind;
        bool known;
        uint32_t session; /* 1..sessions */
        uint32_t holder;  /* HOLDER: 0 = free, else 1..sessions */
        uint64_t token;
        uint64_t index;
        int64_t invoke;
        int64_t complete; /* INT64_MAX for info ops */
};

struct state {
        uint32_t owner; /* 0 = free */
        /* The owner's token; 0 while an info grant's token has not been
         * pinned by a later release or holder query. */
        uint64_t token;
        /* The highest token granted. An unpinned grant's token is only
         * known to be above the highest before it; the least such value is
         * kept, because a smaller highest token only allows more later. */
        uint64_t high;
        /* The owner's hold came from an info acquire and nothing has
         * observed it yet (see search_run). */
        bool unseen;
};

struct checker {
        const struct lincheck_op *src;
        struct op *ops;
        size_t n;
        size_t n_known;
        uint64_t *ids; /* sorted distinct session ids: session k is ids[k-1] */
        size_t n_ids;
        uint32_t *dead; /* per session, index 0 unused: kills applied */
};

static bool is_kill(int kind)
{
        return kind == LINCHECK_CLOSE || kind == LINCHECK_EXPIRE;
}

const char *lincheck_kind_name(int kind)
{
        switch (kind) {
        case LINCHECK_ACQUIRE:
                return "acquire";
        case LINCHECK_BUSY:
                return "busy";
        case LINCHECK_RELEASE:
                return "release";
        case LINCHECK_HOLDER:
                return "holder";
        case LINCHECK_CLOSE:
                return "close";
        case LINCHECK_EXPIRE:
                return "expire";
        default:
                return "?";
        }
}

/* --- The sequential model ------------------------------------------------ */

/* Does the owner's token match an observed token `t`? An unpinned token is
 * pinned to `t` when `t` could have been granted then. */
static bool token_matches(struct state *s, uint64_t t)
{
        if (t == 0) {
                return true;
        }
        if (s->token != 0) {
                return s->token == t;
        }
        if (t < s->high) {
                return false;
        }
        s->token = t;
        s->high = t;
        return true;
}

/* Applies `o` to `*s` if it is legal there (the dead counters are the
 * caller's to update for CLOSE/EXPIRE); `*s` is unchanged otherwise. */
static bool step(const struct op *o, const uint32_t *dead, struct state *s)
{
        struct state t = *s;

        switch (o->kind) {
        case LINCHECK_ACQUIRE:
                if (t.owner != 0 || dead[o->session] > 0) {
                        return false;
                }
                if (o->token == 0) {
                        t.token = 0;
                        t.high++;
                } else if (o->token > t.high) {
                        t.token = o->token;
                        t.high = o->token;
                } else {
                        return false;
                }
                t.owner = o->session;
                t.unseen = !o->known;
                break;
        case LINCHECK_BUSY:
                if (t.owner == 0 || t.owner == o->session) {
                        return false;
                }
                t.unseen = false;
                break;
        case LINCHECK_RELEASE:
                if (t.owner != o->session || !token_matches(&t, o->token)) {
                        return false;
                }
                t.owner = 0;
                t.token = 0;
                t.unseen = false;
                break;
        case LINCHECK_HOLDER:
                if (o->holder == 0) {
                        if (t.owner != 0) {
                                return false;
                        }
                } else if (t.owner != o->holder ||
                           !token_matches(&t, o->token)) {
                        return false;
                }
                t.unseen = false;
                break;
        case LINCHECK_CLOSE:
        case LINCHECK_EXPIRE:
                if (t.owner == o->session) {
                        t.owner = 0;
                        t.token = 0;
                        t.unseen = false;
                }
                break;
        default:
                return false;
        }
        *s = t;
        return true;
}

/* --- Messages ------------------------------------------------------------ */

/* Appends to `out->detail`, truncating quietly. */
static void add(struct lincheck_result *out, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void add(struct lincheck_result *out, const char *fmt, ...)
{
        size_t len = strlen(out->detail);
        va_list ap;

        if (len + 1 >= sizeof(out->detail)) {
                return;
        }
        va_start(ap, fmt);
        vsnprintf(out->detail + len, sizeof(out->detail) - len, fmt, ap);
        va_end(ap);
}

/* Names an op by its caller's fields, so that the reader can find it. */
static void add_op(struct lincheck_result *out, const struct checker *c,
                   size_t pos)
{
        const struct lincheck_op *o = &c->src[pos];

        add(out, "%s ops[%zu] p=%" PRIu64 " session=%" PRIu64,
            lincheck_kind_name(o->kind), pos, o->process, o->session);
        if (o->kind == LINCHECK_HOLDER) {
                add(out, " holder=%" PRIu64, o->holder);
        }
        if (o->kind == LINCHECK_ACQUIRE || o->kind == LINCHECK_RELEASE ||
            o->kind == LINCHECK_HOLDER) {
                add(out, " token=%" PRIu64, o->token);
        }
        if (o->known) {
                add(out, " invoke=%" PRId64 " complete=%" PRId64, o->invoke_ns,
                    o->complete_ns);
        } else {
                add(out, " info invoke=%" PRId64, o->invoke_ns);
        }
}

static void add_state(struct lincheck_result *out, const struct checker *c,
                      const struct state *s)
{
        if (s->owner == 0) {
                add(out, "free");
        } else if (s->token != 0) {
                add(out, "held by session %" PRIu64 " token %" PRIu64,
                    c->ids[s->owner - 1], s->token);
        } else {
                add(out,
                    "held by session %" PRIu64 " token unknown (>= %" PRIu64
                    ")",
                    c->ids[s->owner - 1], s->high);
        }
        add(out, ", highest token %" PRIu64, s->high);
}

/* --- Preparation ---------------------------------------------------------- */

static int cmp_u64(const void *a, const void *b)
{
        uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

        return x < y ? -1 : x > y;
}

static uint32_t session_number(const struct checker *c, uint64_t id)
{
        const uint64_t *p = bsearch(&id, c->ids, c->n_ids, sizeof(*p), cmp_u64);

        return p == NULL ? 0 : (uint32_t)(p - c->ids) + 1;
}

/* An info holder query or refusal carries no observation: leaving it out is
 * always one of the allowed choices, and it can never change the state. */
static bool says_nothing(const struct lincheck_op *o)
{
        return !o->known &&
               (o->kind == LINCHECK_HOLDER || o->kind == LINCHECK_BUSY);
}

/* Copies the ops the checker needs; 1 if one is malformed (reported in
 * `out`), 0, or -ENOMEM. */
static int prepare(struct checker *c, const struct lincheck_op *src, size_t n,
                   struct lincheck_result *out)
{
        size_t i, k;

        c->src = src;
        for (i = 0; i < n; i++) {
                const struct lincheck_op *o = &src[i];

                if (o->kind < LINCHECK_ACQUIRE || o->kind > LINCHECK_EXPIRE ||
                    (o->known && o->complete_ns < o->invoke_ns)) {
                        add(out, "malformed op: ");
                        add_op(out, c, i);
                        return 1;
                }
        }
        if (n > MAX_OPS) {
                add(out, "too many ops for one lock: %zu", n);
                return 1;
        }
        c->ops = calloc(n + 1, sizeof(*c->ops));
        c->ids = calloc(2 * n + 1, sizeof(*c->ids));
        if (c->ops == NULL || c->ids == NULL) {
                return -ENOMEM;
        }
        for (i = 0; i < n; i++) {
                c->ids[c->n_ids++] = src[i].session;
                if (src[i].kind == LINCHECK_HOLDER && src[i].holder != 0) {
                        c->ids[c->n_ids++] = src[i].holder;
                }
        }
        qsort(c->ids, c->n_ids, sizeof(*c->ids), cmp_u64);
        for (i = 0, k = 0; i < c->n_ids; i++) {
                if (k == 0 || c->ids[k - 1] != c->ids[i]) {
                        c->ids[k++] = c->ids[i];
                }
        }
        c->n_ids = k;
        c->dead = calloc(c->n_ids + 1, sizeof(*c->dead));
        if (c->dead == NULL) {
                return -ENOMEM;
        }
        for (i = 0; i < n; i++) {
                const struct lincheck_op *o = &src[i];
                struct op *p;

                if (says_nothing(o)) {
                        continue;
                }
                p = &c->ops[c->n++];
                p->pos = i;
                p->kind = o->kind;
                p->known = o->known;
                p->session = session_number(c, o->session);
                p->holder = o->kind == LINCHECK_HOLDER && o->holder != 0
                                ? session_number(c, o->holder)
                                : 0;
                p->token = o->token;
                p->index = o->index;
                p->invoke = o->invoke_ns;
                p->complete = o->known ? o->complete_ns : INT64_MAX;
                c->n_known += o->known;
        }
        return 0;
}

/* --- Fast path ------------------------------------------------------------ */

/* The order of ops that share an index. A handoff grants the head waiter
 * in the entry that freed the lock, so the waiter's ACQUIRE shares the
 * index of that RELEASE, CLOSE or EXPIRE and goes after it; a read at read
 * index i sees the entry at i, so reads go last. */
static int rank(int kind)
{
        switch (kind) {
        case LINCHECK_RELEASE:
        case LINCHECK_CLOSE:
        case LINCHECK_EXPIRE:
                return 0;
        case LINCHECK_HOLDER:
                return 2;
        default:
                return 1;
        }
}

static int cmp_index_order(const void *a, const void *b)
{
        const struct op *x = *(const struct op *const *)a;
        const struct op *y = *(const struct op *const *)b;
        int rx = rank(x->kind), ry = rank(y->kind);

        if (x->index != y->index) {
                return x->index < y->index ? -1 : 1;
        }
        if (rx != ry) {
                return rx - ry;
        }
        if (x->invoke != y->invoke) {
                return x->invoke < y->invoke ? -1 : 1;
        }
        return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* The Raft index order, when every op that must be placed reports one, is
 * usually a linearization already: checking it is linear, where the search
 * may not be. 1 if it is one, 0 if not (the search decides), or -ENOMEM. */
static int fast_path(struct checker *c, struct lincheck_result *out)
{
        const struct op **order;
        struct state s = {0, 0, 0, false};
        int64_t max_invoke = INT64_MIN;
        size_t i, m = 0;
        bool ok = true;

        for (i = 0; i < c->n; i++) {
                if (c->ops[i].known && c->ops[i].index == 0) {
                        return 0;
                }
        }
        order = malloc((c->n + 1) * sizeof(*order));
        if (order == NULL) {
                return -ENOMEM;
        }
        /* An info op with an index was seen to take effect; one without is
         * taken not to have, which is one of its allowed outcomes. */
        for (i = 0; i < c->n; i++) {
                if (c->ops[i].index != 0) {
                        order[m++] = &c->ops[i];
                }
        }
        qsort(order, m, sizeof(*order), cmp_index_order);
        for (i = 0; i < m && ok; i++) {
                const struct op *o = order[i];

                /* Placing o after every earlier op is consistent with real
                 * time unless o completed before one of them was invoked. */
                if (o->complete < max_invoke || !step(o, c->dead, &s)) {
                        ok = false;
                        break;
                }
                if (o->invoke > max_invoke) {
                        max_invoke = o->invoke;
                }
                if (is_kill(o->kind)) {
                        c->dead[o->session]++;
                }
        }
        memset(c->dead, 0, (c->n_ids + 1) * sizeof(*c->dead));
        free(order);
        if (ok) {
                out->fast = true;
                out->explored = m;
                add(out, "fast path: %zu ops in Raft index order", m);
        }
        return ok;
}

/* --- The cache of visited configurations ---------------------------------- */

/*
 * An open-addressing hash set of fixed-width keys (the linearized-ops bitset,
 * then the state's three words) stored back to back in one array; the slots
 * hold key numbers + 1. Both arrays only grow, by doubling, and the total is
 * kept under a byte budget so that a hopeless search ends as UNKNOWN instead
 * of exhausting the machine.
 */
struct cache {
        size_t width; /* words per key */
        uint64_t *keys;
        size_t count, cap; /* keys stored, room for keys */
        uint32_t *slots;
        size_t mask; /* slots - 1 */
        size_t max_bytes;
};

static uint64_t mix(uint64_t x)
{
        x ^= x >> 30;
        x *= 0xbf58476d1ce4e5b9ULL;
        x ^= x >> 27;
        x *= 0x94d049bb133111ebULL;
        x ^= x >> 31;
        return x;
}

static uint64_t hash_key(const uint64_t *k, size_t width)
{
        uint64_t h = width;
        size_t i;

        for (i = 0; i < width; i++) {
                h = mix(h ^ k[i]) + i;
        }
        return h;
}

static int cache_init(struct cache *c, size_t width, size_t max_bytes)
{
        c->width = width;
        c->keys = NULL;
        c->count = 0;
        c->cap = 0;
        c->mask = CACHE_SLOTS0 - 1;
        c->max_bytes = max_bytes;
        c->slots = calloc(CACHE_SLOTS0, sizeof(*c->slots));
        return c->slots == NULL ? -ENOMEM : 0;
}

static void cache_close(struct cache *c)
{
        free(c->keys);
        free(c->slots);
}

static size_t cache_bytes(size_t width, size_t cap, size_t slots)
{
        return cap * width * sizeof(uint64_t) + slots * sizeof(uint32_t);
}

/* Makes room for one more key: 0, -ENOMEM, or -ENOSPC past the budget. */
static int cache_reserve(struct cache *c)
{
        size_t slots = c->mask + 1;

        if (c->count == c->cap) {
                size_t cap = c->cap == 0 ? CACHE_SLOTS0 / 2 : 2 * c->cap;
                uint64_t *keys;

                if (c->count >= UINT32_MAX - 1 ||
                    cache_bytes(c->width, cap, slots) > c->max_bytes) {
                        return -ENOSPC;
                }
                keys = realloc(c->keys, cap * c->width * sizeof(*keys));
                if (keys == NULL) {
                        return -ENOMEM;
                }
                c->keys = keys;
                c->cap = cap;
        }
        /* Keep the load at most one half, so probes stay short. */
        if (2 * (c->count + 1) > slots) {
                uint32_t *grown;
                size_t i, mask = 2 * slots - 1;

                if (cache_bytes(c->width, c->cap, 2 * slots) > c->max_bytes) {
                        return -ENOSPC;
                }
                grown = calloc(2 * slots, sizeof(*grown));
                if (grown == NULL) {
                        return -ENOMEM;
                }
                for (i = 0; i < c->count; i++) {
                        size_t j =
                            hash_key(c->keys + i * c->width, c->width) & mask;

                        while (grown[j] != 0) {
                                j = (j + 1) & mask;
                        }
                        grown[j] = (uint32_t)i + 1;
                }
                free(c->slots);
                c->slots = grown;
                c->mask = mask;
        }
        return 0;
}

/* 1 if `key` is new (now stored), 0 if seen before, or a cache_reserve()
 * error. */
static int cache_add(struct cache *c, const uint64_t *key)
{
        size_t bytes = c->width * sizeof(*key);
        size_t j;
        int rv;

        j = hash_key(key, c->width) & c->mask;
        while (c->slots[j] != 0) {
                if (memcmp(c->keys + (c->slots[j] - 1) * c->width, key,
                           bytes) == 0) {
                        return 0;
                }
                j = (j + 1) & c->mask;
        }
        rv = cache_reserve(c);
        if (rv != 0) {
                return rv;
        }
        /* A grown table has moved every key: probe again. */
        j = hash_key(key, c->width) & c->mask;
        while (c->slots[j] != 0) {
                j = (j + 1) & c->mask;
        }
        memcpy(c->keys + c->count * c->width, key, bytes);
        c->slots[j] = (uint32_t)++c->count;
        return 1;
}

/* --- Wing & Gong / Lowe search -------------------------------------------- */

/*
 * The history is a doubly linked list of entries in time order: entry 2i is
 * op i's invocation, 2i+1 its completion (info ops have none: they may stay
 * pending forever), and entry 2n is the head. The ops whose invocation comes
 * before the first completion in the list are exactly those that may be
 * linearized next. Linearizing one removes its entries from the list
 * ("lifting" it) and pushes a frame; reaching a completion means its op
 * should have been linearized already, so the search backtracks. Lowe's
 * refinement: a configuration (set of linearized ops, model state) that was
 * reached before has nothing new to offer and is skipped.
 */
struct frame {
        uint32_t op;
        struct state before;
};

struct search {
        struct checker *c;
        int32_t *next, *prev;
        int32_t head;
        uint64_t *bits; /* the ops linearized */
        size_t words;
        uint64_t *key;
        struct frame *stack;
        struct cache cache;
        uint32_t *info; /* the info ops */
        size_t n_info;
        uint32_t *acq_left; /* per session: acquires not linearized */
};

struct entry {
        int64_t t;
        int32_t id;
};

static int cmp_entry(const void *a, const void *b)
{
        const struct entry *x = a, *y = b;

        if (x->t != y->t) {
                return x->t < y->t ? -1 : 1;
        }
        /* At equal times an invocation goes before a completion: the two ops
         * overlap, as the fast path's real-time rule also says. */
        if ((x->id & 1) != (y->id & 1)) {
                return (x->id & 1) - (y->id & 1);
        }
        return x->id < y->id ? -1 : x->id > y->id;
}

static int search_init(struct search *s, struct checker *c)
{
        struct entry *e;
        size_t i, m = 0, n = c->n;
        int32_t last;
        int rv;

        memset(s, 0, sizeof(*s));
        s->c = c;
        s->head = (int32_t)(2 * n);
        s->words = (n + 63) / 64;
        s->next = malloc((2 * n + 1) * sizeof(*s->next));
        s->prev = malloc((2 * n + 1) * sizeof(*s->prev));
        s->bits = calloc(s->words + 1, sizeof(*s->bits));
        s->key = calloc(s->words + 3, sizeof(*s->key));
        s->stack = malloc((n + 1) * sizeof(*s->stack));
        s->info = malloc((n + 1) * sizeof(*s->info));
        s->acq_left = calloc(c->n_ids + 1, sizeof(*s->acq_left));
        e = malloc((2 * n + 1) * sizeof(*e));
        rv = cache_init(&s->cache, s->words + 3, LINCHECK_MEMORY_BUDGET);
        if (s->next == NULL || s->prev == NULL || s->bits == NULL ||
            s->key == NULL || s->stack == NULL || s->info == NULL ||
            s->acq_left == NULL || e == NULL || rv != 0) {
                free(e);
                return -ENOMEM;
        }
        for (i = 0; i < n; i++) {
                if (!c->ops[i].known) {
                        s->info[s->n_info++] = (uint32_t)i;
                }
                if (c->ops[i].kind == LINCHECK_ACQUIRE) {
                        s->acq_left[c->ops[i].session]++;
                }
        }
        for (i = 0; i < n; i++) {
                e[m].t = c->ops[i].invoke;
                e[m++].id = (int32_t)(2 * i);
                if (c->ops[i].known) {
                        e[m].t = c->ops[i].complete;
                        e[m++].id = (int32_t)(2 * i + 1);
                }
        }
        qsort(e, m, sizeof(*e), cmp_entry);
        last = s->head;
        for (i = 0; i < m; i++) {
                s->next[last] = e[i].id;
                s->prev[e[i].id] = last;
                last = e[i].id;
        }
        s->next[last] = -1;
        free(e);
        return 0;
}

static void search_close(struct search *s)
{
        free(s->next);
        free(s->prev);
        free(s->bits);
        free(s->key);
        free(s->stack);
        free(s->info);
        free(s->acq_left);
        cache_close(&s->cache);
}

static void unlink_entry(struct search *s, int32_t e)
{
        s->next[s->prev[e]] = s->next[e];
        if (s->next[e] >= 0) {
                s->prev[s->next[e]] = s->prev[e];
        }
}

/* The entry kept its neighbours: only the reverse order of unlinking puts
 * them back right. */
static void relink_entry(struct search *s, int32_t e)
{
        s->next[s->prev[e]] = e;
        if (s->next[e] >= 0) {
                s->prev[s->next[e]] = e;
        }
}

static void lift(struct search *s, size_t i)
{
        unlink_entry(s, (int32_t)(2 * i));
        if (s->c->ops[i].known) {
                unlink_entry(s, (int32_t)(2 * i + 1));
        }
}

static void unlift(struct search *s, size_t i)
{
        if (s->c->ops[i].known) {
                relink_entry(s, (int32_t)(2 * i + 1));
        }
        relink_entry(s, (int32_t)(2 * i));
}

/* Can the info op `o`, not linearized, still make a difference? Once the
 * answer is no it stays no: sessions only die and the highest token only
 * grows. */
static bool moot(const struct search *s, const struct op *o,
                 const struct state *st)
{
        const uint32_t *dead = s->c->dead;

        switch (o->kind) {
        case LINCHECK_ACQUIRE:
                return dead[o->session] > 0 ||
                       (o->token != 0 && o->token <= st->high);
        case LINCHECK_RELEASE:
                /* The owner's pinned token is the highest, and any later
                 * grant's is above it. */
                return dead[o->session] > 0 ||
                       (o->token != 0 && o->token < st->high);
        case LINCHECK_CLOSE:
        case LINCHECK_EXPIRE:
                return dead[o->session] > 0 || (st->owner != o->session &&
                                                s->acq_left[o->session] == 0);
        default:
                return true;
        }
}

/*
 * The cached configuration. Its future depends on the state and on which
 * ops can still be linearized, so an info op that can no longer make a
 * difference counts as linearized: a search that placed it and one that
 * skipped it then meet in one configuration. (Whether a session is dead
 * matters only to its acquires; while one of them can still happen, its
 * kills are not moot, so their bits tell.)
 */
static void make_key(struct search *s, const struct state *st)
{
        size_t k;

        memcpy(s->key, s->bits, s->words * sizeof(*s->key));
        for (k = 0; k < s->n_info; k++) {
                uint32_t i = s->info[k];

                if ((s->key[i / 64] >> (i % 64) & 1) == 0 &&
                    moot(s, &s->c->ops[i], st)) {
                        s->key[i / 64] |= (uint64_t)1 << (i % 64);
                }
        }
        s->key[s->words] = (uint64_t)st->owner << 1 | st->unseen;
        s->key[s->words + 1] = st->token;
        s->key[s->words + 2] = st->high;
}

/* Takes op i out of the linearized set, its bit and its counters. */
static void undo(struct search *s, size_t i)
{
        const struct op *o = &s->c->ops[i];

        s->bits[i / 64] &= ~((uint64_t)1 << (i % 64));
        if (is_kill(o->kind)) {
                s->c->dead[o->session]--;
        }
        if (o->kind == LINCHECK_ACQUIRE) {
                s->acq_left[o->session]++;
        }
}

/* Where the search got furthest: the op it could not place there. */
struct deepest {
        size_t placed; /* known ops placed; SIZE_MAX: not yet set */
        size_t op;
        size_t last; /* the op placed last, SIZE_MAX for none */
        struct state state;
};

static void report_invalid(const struct search *s, const struct deepest *d,
                           struct lincheck_result *out)
{
        const struct checker *c = s->c;

        add(out, "not linearizable: cannot place ");
        add_op(out, c, c->ops[d->op].pos);
        add(out, "; furthest: %zu of %zu acknowledged ops placed, ", d->placed,
            c->n_known);
        if (d->last != SIZE_MAX) {
                add(out, "last ");
                add_op(out, c, c->ops[d->last].pos);
                add(out, ", ");
        }
        add(out, "then ");
        add_state(out, c, &d->state);
}

/* Places op `i` (`o`), leading to state `nx`, on the search's path: the
 * key needs the dead sessions and acquires left as they will be, so those
 * are applied first, then the key goes into the cache. 1 when the state is
 * new; 0 when it was seen before, or a negative error (-ENOSPC: the cache's
 * budget ran out, said in `out`), both with the op taken off again. */
static int place(struct search *s, const struct op *o, size_t i,
                 const struct state *nx, struct lincheck_result *out)
{
        struct checker *c = s->c;
        int rv;

        s->bits[i / 64] |= (uint64_t)1 << (i % 64);
        if (is_kill(o->kind)) {
                c->dead[o->session]++;
        }
        if (o->kind == LINCHECK_ACQUIRE) {
                s->acq_left[o->session]--;
        }
        make_key(s, nx);
        rv = cache_add(&s->cache, s->key);
        if (rv <= 0) {
                undo(s, i);
        }
        if (rv == -ENOSPC) {
                add(out,
                    "memory budget of %zu MiB for the search cache ran out "
                    "after %" PRIu64 " states",
                    (size_t)(LINCHECK_MEMORY_BUDGET >> 20), out->explored);
                out->verdict = LINCHECK_UNKNOWN;
        }
        return rv;
}

static int search_run(struct search *s, uint64_t budget,
                      struct lincheck_result *out)
{
        struct checker *c = s->c;
        struct state st = {0, 0, 0, false};
        struct deepest d = {SIZE_MAX, 0, SIZE_MAX, {0, 0, 0, false}};
        size_t depth = 0, left = c->n_known;
        int32_t e = s->next[s->head];

        for (;;) {
                size_t i;

                if (left == 0) {
                        add(out,
                            "linearized %zu acknowledged ops and %zu "
                            "unknown-outcome ops",
                            c->n_known, depth - c->n_known);
                        out->verdict = LINCHECK_VALID;
                        return 0;
                }
                /* While a known op is pending its completion is in the list,
                 * so the walk meets it before the end. */
                if (e >= 0 && (e & 1) == 0) {
                        struct state nx = st;
                        const struct op *o;
                        int rv;

                        i = (size_t)e / 2;
                        o = &c->ops[i];
                        e = s->next[e];
                        /* Killing a session that does not own the lock only
                         * forbids its later acquires, so an info kill is
                         * never needed then: it can still happen later.
                         * Killing the owner of a hold that came from an
                         * info acquire nobody has observed since leaves
                         * the lock as if neither had happened, but with a
                         * higher token and a dead session: dropping both
                         * is never worse. */
                        if (!o->known && is_kill(o->kind) &&
                            (st.owner != o->session || st.unseen)) {
                                continue;
                        }
                        if (!step(o, c->dead, &nx)) {
                                continue;
                        }
                        rv = place(s, o, i, &nx, out);
                        if (rv == -ENOSPC) {
                                return 0;
                        }
                        if (rv < 0) {
                                return rv;
                        }
                        if (rv == 0) {
                                continue;
                        }
                        if (++out->explored > budget) {
                                add(out,
                                    "search budget of %" PRIu64
                                    " states ran out (furthest: %zu of %zu "
                                    "acknowledged ops placed)",
                                    budget,
                                    d.placed == SIZE_MAX ? c->n_known - left
                                                         : d.placed,
                                    c->n_known);
                                out->verdict = LINCHECK_UNKNOWN;
                                return 0;
                        }
                        s->stack[depth].op = (uint32_t)i;
                        s->stack[depth++].before = st;
                        st = nx;
                        left -= o->known;
                        lift(s, i);
                        e = s->next[s->head];
                        continue;
                }
                /* A completion: its op had to be placed before this point.
                 * (The end of the list is treated alike, though it cannot be
                 * reached while a known op is pending.) */
                if (e >= 0 &&
                    (d.placed == SIZE_MAX || c->n_known - left > d.placed)) {
                        d.placed = c->n_known - left;
                        d.op = (size_t)e / 2;
                        d.last = depth > 0 ? s->stack[depth - 1].op : SIZE_MAX;
                        d.state = st;
                }
                if (depth == 0) {
                        if (d.placed == SIZE_MAX) {
                                add(out, "not linearizable");
                                out->verdict = LINCHECK_INVALID;
                                return 0;
                        }
                        report_invalid(s, &d, out);
                        out->verdict = LINCHECK_INVALID;
                        return 0;
                }
                i = s->stack[--depth].op;
                st = s->stack[depth].before;
                unlift(s, i);
                undo(s, i);
                left += c->ops[i].known;
                e = s->next[2 * i];
        }
}

/* --- Entry point ---------------------------------------------------------- */

int lincheck_run(const struct lincheck_op *ops, size_t n, uint64_t budget,
                 struct lincheck_result *out)
{
        struct checker c;
        struct search s;
        int rv;

        memset(out, 0, sizeof(*out));
        memset(&c, 0, sizeof(c));
        out->verdict = LINCHECK_UNKNOWN;
        if (budget == 0) {
                budget = LINCHECK_DEFAULT_BUDGET;
        }
        rv = prepare(&c, ops, n, out);
        if (rv != 0) {
                goto out;
        }
        rv = fast_path(&c, out);
        if (rv != 0) {
                if (rv > 0) {
                        out->verdict = LINCHECK_VALID;
                }
                goto out;
        }
        rv = search_init(&s, &c);
        if (rv == 0) {
                rv = search_run(&s, budget, out);
        }
        search_close(&s);
out:
        free(c.ops);
        free(c.ids);
        free(c.dead);
        if (rv < 0) {
                out->verdict = LINCHECK_UNKNOWN;
                out->detail[0] = '\0';
                add(out, "out of memory");
                return rv;
        }
        return 0;
}
