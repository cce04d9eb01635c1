/* The lock state machine's data model: sessions, locks, holds, tombstones. */
#include "state.h"

#include <assert.h>
#include <string.h>

#include "../../include/baton/errors.h"
#include "quota.h"

/* The pool's slabs, committed one at a time: large against the largest
 * record (about 400 bytes: a session with a 255-byte name). */
#define STATE_SLAB (64 * 1024)

/* Every record with a link lives in the pool's region, where a 32-bit
 * link reaches it (rqueue.h), and state_close() leaves them all to the
 * pool: none may be too large for it (names and values are at most 255
 * bytes). */
static_assert(sizeof(struct lock) + UINT8_MAX <= POOL_MAX, "lock in slabs");
static_assert(sizeof(struct hold) + UINT8_MAX + HOLD_CLOCK_SIZE <= POOL_MAX,
              "hold in slabs");
static_assert(sizeof(struct session) + UINT8_MAX <= POOL_MAX,
              "session in slabs");

/* A record's bytes with a name of `len` bytes: the name begins inside the
 * struct's tail padding (a lock's at byte 63 of 64), and never less than
 * the whole struct. */
#define WITH_NAME(type, len)                                                   \
        (offsetof(type, name) + (len) > sizeof(type)                           \
             ? offsetof(type, name) + (len)                                    \
             : sizeof(type))

/* What each record was allocated with: what pool_free() is given, and
 * what state_records_room() counts. */
static size_t session_bytes(const struct session *s)
{
        return WITH_NAME(struct session, s->name_len);
}

static size_t memo_bytes(const struct session *s)
{
        return s->memo_cap * sizeof *s->memo;
}

/* 55 bytes before the name: a name of up to 17 bytes takes 72. */
static_assert(offsetof(struct lock, name) == 55, "struct lock grew");

static size_t lock_bytes(const struct lock *l)
{
        return WITH_NAME(struct lock, l->name_len);
}

static size_t hold_bytes(const struct hold *h)
{
        return sizeof *h + h->value_len + (h->timed ? HOLD_CLOCK_SIZE : 0);
}

static uint64_t session_id_hash(const void *record)
{
        return hash_u64(((const struct session *)record)->id);
}

static uint64_t session_nonce_hash(const void *record)
{
        return hash_u64(((const struct session *)record)->nonce);
}

static uint64_t lock_name_hash(const void *record)
{
        const struct lock *l = record;
        return hash_bytes(l->name, l->name_len);
}

int state_init(struct lockfsm *f, const struct lockfsm_limits *limits,
               const struct mem *mem)
{
        memset(f, 0, sizeof *f);
        f->limits = *limits;
        f->mem = mem;
        pool_init(&f->pool, mem, STATE_SLAB);
        /* Tables that grow with the state grow a little at a time (a
         * doubling at a million locks that moved them all in one apply
         * froze the loop) and never write into the records they hold,
         * whose pages a snapshot's child shares (ptable.h). */
        ptable_init(&f->sessions, mem, session_id_hash, &f->pool.base);
        ptable_init(&f->nonces, mem, session_nonce_hash, &f->pool.base);
        ptable_init(&f->locks, mem, lock_name_hash, &f->pool.base);
        hmap_init(&f->tombs, mem);
        hmap_init(&f->uses, mem);
        /* Tombstones live in a preallocated ring, so ending a session never
         * allocates. */
        f->tomb_ring =
            mem_calloc(mem, limits->max_tombstones, sizeof *f->tomb_ring);
        if (f->tomb_ring == NULL) {
                return BATON_ENOMEM;
        }
        f->lists = pool_alloc(&f->pool, sizeof *f->lists);
        if (f->lists == NULL ||
            hmap_reserve(&f->tombs, limits->max_tombstones) != 0) {
                hmap_close(&f->tombs);
                mem_free(mem, f->tomb_ring);
                pool_close(&f->pool);
                return BATON_ENOMEM;
        }
        rqueue_init(&f->lists->session_list);
        rqueue_init(&f->lists->lock_list);
        lockchain_init(&f->touched);
        lockchain_init(&f->deferred);
        return 0;
}

void state_close(struct lockfsm *f)
{
        /* Locks and holds all live in the pool's region: closing the pool
         * frees them without reading a million records. Sessions are
         * walked, as an outcome array can be too large for the pool. */
        while (!rqueue_empty(&f->lists->session_list)) {
                struct session *s = RQUEUE_DATA(
                    rqueue_head(&f->lists->session_list), struct session, link);
                rqueue_remove(&s->link);
                state_session_free(f, s);
        }
        f->lists = NULL;
        lockchain_init(&f->touched);
        lockchain_init(&f->deferred);
        ptable_close(&f->sessions);
        ptable_close(&f->nonces);
        ptable_close(&f->locks);
        hmap_close(&f->tombs);
        quota_close(f);
        mem_free(f->mem, f->tomb_ring);
        f->tomb_ring = NULL;
        pool_close(&f->pool);
}

void state_move(struct lockfsm *dst, struct lockfsm *src)
{
        /* The lists' heads are in the pool's region, which stays where it
         * is: only the struct moves, with the pool's base that the tables
         * count their slots from. */
        *dst = *src;
        dst->sessions.base = &dst->pool.base;
        dst->nonces.base = &dst->pool.base;
        dst->locks.base = &dst->pool.base;
        memset(src, 0, sizeof *src);
}

static size_t holds_room(const struct rqueue *list)
{
        const struct rqueue *q;
        size_t room = 0;

        RQUEUE_FOREACH(q, list)
        {
                const struct hold *h = RQUEUE_DATA(q, struct hold, lock_link);
                room += pool_room(hold_bytes(h));
        }
        return room;
}

size_t state_records_room(const struct lockfsm *f)
{
        size_t room = pool_room(sizeof *f->lists);
        const struct rqueue *q;

        RQUEUE_FOREACH(q, &f->lists->session_list)
        {
                const struct session *s = RQUEUE_DATA(q, struct session, link);
                room += pool_room(session_bytes(s));
                if (s->memo != NULL) {
                        room += pool_room(memo_bytes(s));
                }
        }
        RQUEUE_FOREACH(q, &f->lists->lock_list)
        {
                const struct lock *l = RQUEUE_DATA(q, struct lock, link);
                room += pool_room(lock_bytes(l)) + holds_room(&l->holders) +
                        holds_room(&l->waiters);
        }
        return room;
}

static bool session_id_is(const void *record, const void *key)
{
        return ((const struct session *)record)->id == *(const uint64_t *)key;
}

static bool session_nonce_is(const void *record, const void *key)
{
        return ((const struct session *)record)->nonce ==
               *(const uint64_t *)key;
}

struct session *state_session(const struct lockfsm *f, uint64_t id)
{
        return ptable_find(&f->sessions, hash_u64(id), session_id_is, &id);
}

struct session *state_session_by_nonce(const struct lockfsm *f, uint64_t nonce)
{
        return ptable_find(&f->nonces, hash_u64(nonce), session_nonce_is,
                           &nonce);
}

struct name_key {
        const char *name;
        size_t len;
};

static bool lock_name_is(const void *record, const void *key)
{
        const struct lock *l = record;
        const struct name_key *k = key;
        return l->name_len == k->len && memcmp(l->name, k->name, k->len) == 0;
}

struct lock *state_lock(const struct lockfsm *f, const char *name, size_t len)
{
        struct name_key k = {name, len};
        return ptable_find(&f->locks, hash_bytes(name, len), lock_name_is, &k);
}

int state_tomb(const struct lockfsm *f, uint64_t id)
{
        struct hnode *n;

        for (n = hmap_first(&f->tombs, hash_u64(id)); n != NULL;
             n = hmap_next(n)) {
                struct tomb *t = HMAP_DATA(n, struct tomb, by_id);
                if (t->id == id) {
                        return t->reason;
                }
        }
        return 0;
}

struct session *state_session_alloc(struct lockfsm *f, size_t name_len)
{
        struct session *s =
            pool_alloc(&f->pool, WITH_NAME(struct session, name_len));

        if (s == NULL) {
                return NULL;
        }
        memset(s, 0, WITH_NAME(struct session, name_len));
        s->name_len = (uint8_t)name_len;
        rqueue_init(&s->link);
        rqueue_init(&s->grants);
        rqueue_init(&s->waits);
        return s;
}

void state_session_free(struct lockfsm *f, struct session *s)
{
        if (s == NULL) {
                return;
        }
        pool_free(&f->pool, s->memo, memo_bytes(s));
        pool_free(&f->pool, s, session_bytes(s));
}

int state_session_reserve(struct lockfsm *f)
{
        if (ptable_reserve(&f->sessions, f->sessions.count + 1) != 0 ||
            ptable_reserve(&f->nonces, f->nonces.count + 1) != 0) {
                return BATON_ENOMEM;
        }
        return 0;
}

void state_session_link(struct lockfsm *f, struct session *s)
{
        /* Ids are entry indexes, so appending keeps the list ordered. */
        assert(rqueue_empty(&f->lists->session_list) ||
               RQUEUE_DATA(rqueue_tail(&f->lists->session_list), struct session,
                           link)
                       ->id < s->id);
        ptable_insert(&f->sessions, s, session_id_hash(s));
        if (s->nonce != 0) {
                ptable_insert(&f->nonces, s, session_nonce_hash(s));
        }
        rqueue_push_tail(&f->lists->session_list, &s->link);
        f->n_sessions++;
        if (s->use != NULL) {
                s->use->sessions++;
        }
}

void state_session_end(struct lockfsm *f, struct session *s, int reason)
{
        assert(s->n_holds == 0);
        ptable_remove(&f->sessions, s, session_id_hash(s));
        if (s->nonce != 0) {
                ptable_remove(&f->nonces, s, session_nonce_hash(s));
        }
        rqueue_remove(&s->link);
        f->n_sessions--;
        if (s->use != NULL) {
                s->use->sessions--;
                quota_unuse(f, s->use);
        }
        state_tomb_add(f, s->id, reason);
        state_session_free(f, s);
}

struct lock *state_lock_alloc(struct lockfsm *f, const char *name, size_t len)
{
        struct lock *l = pool_alloc(&f->pool, WITH_NAME(struct lock, len));

        if (l == NULL) {
                return NULL;
        }
        memset(l, 0, sizeof *l);
        rqueue_init(&l->link);
        rqueue_init(&l->holders);
        rqueue_init(&l->waiters);
        l->name_len = (uint8_t)len;
        memcpy(l->name, name, len);
        return l;
}

void state_lock_free(struct lockfsm *f, struct lock *l)
{
        if (l != NULL) {
                pool_free(&f->pool, l, lock_bytes(l));
        }
}

int state_lock_reserve(struct lockfsm *f, size_t n)
{
        return ptable_reserve(&f->locks, f->locks.count + n);
}

void state_lock_link(struct lockfsm *f, struct lock *l)
{
        ptable_insert(&f->locks, l, lock_name_hash(l));
        rqueue_push_tail(&f->lists->lock_list, &l->link);
        f->n_locks++;
}

void state_lock_drop(struct lockfsm *f, struct lock *l)
{
        assert(l->n_holders == 0 && l->n_waiters == 0);
        ptable_remove(&f->locks, l, lock_name_hash(l));
        /* An entry's locks stay until its end (grant_settle()). */
        assert(!l->touched && !l->deferred);
        rqueue_remove(&l->link);
        f->n_locks--;
        state_lock_free(f, l);
}

struct hold *state_hold_alloc(struct lockfsm *f, size_t value_len, bool timed)
{
        size_t size =
            sizeof(struct hold) + value_len + (timed ? HOLD_CLOCK_SIZE : 0);
        struct hold *h = pool_alloc(&f->pool, size);

        if (h != NULL) {
                memset(h, 0, size);
                rqueue_init(&h->lock_link);
                rqueue_init(&h->session_link);
                h->value_len = (uint8_t)value_len;
                h->timed = timed;
        }
        return h;
}

void state_hold_free(struct lockfsm *f, struct hold *h)
{
        if (h != NULL) {
                pool_free(&f->pool, h, hold_bytes(h));
        }
}

/* Orders a session's grants by (token, lock age), a function of the log. */
static bool grant_before(const struct hold *a, const struct hold *b)
{
        if (a->token != b->token) {
                return a->token < b->token;
        }
        return hold_lock(a)->created < hold_lock(b)->created;
}

void state_grant_attach(struct lockfsm *f, struct hold *h)
{
        struct rqueue *at = rqueue_tail(&hold_session(h)->grants);

        h->waiting = false;
        h->multi = false; /* a multi-lock's grants are grants like others */
        rqueue_push_tail(&hold_lock(h)->holders, &h->lock_link);
        hold_lock(h)->n_holders++;
        hold_lock(h)->n_writers += h->mode == COMMAND_MODE_EXCLUSIVE;
        hold_lock(h)->used += h->permits;
        /* New grants carry the largest token so far; only the handovers of
         * one CLOSE or EXPIRE tie, so this walk is short. */
        while (at != &hold_session(h)->grants &&
               grant_before(h, RQUEUE_DATA(at, struct hold, session_link))) {
                at = rqueue_prev(at);
        }
        rqueue_insert_after(at, &h->session_link);
        hold_session(h)->n_holds++;
        if (hold_session(h)->use != NULL) {
                hold_session(h)->use->holds++;
        }
        f->n_grants++;
}

bool state_wait_after(const struct hold *a, const struct hold *b)
{
        return a->queued_at > b->queued_at ||
               (a->queued_at == b->queued_at &&
                hold_lock(a)->created > hold_lock(b)->created);
}

void state_wait_attach(struct lockfsm *f, struct hold *h)
{
        struct rqueue *at = rqueue_tail(&hold_session(h)->waits);

        h->waiting = true;
        rqueue_push_tail(&hold_lock(h)->waiters, &h->lock_link);
        hold_lock(h)->n_waiters++;
        /* Ordered by (queued_at, lock age): new waits go last, and a
         * restore, which attaches them lock by lock, walks back to their
         * place; a multi-lock's waits, which share queued_at, end up in
         * the same order either way. */
        while (
            at != &hold_session(h)->waits &&
            state_wait_after(RQUEUE_DATA(at, struct hold, session_link), h)) {
                at = rqueue_prev(at);
        }
        rqueue_insert_after(at, &h->session_link);
        hold_session(h)->n_holds++;
        if (hold_session(h)->use != NULL) {
                hold_session(h)->use->holds++;
                hold_session(h)->use->waits++;
        }
        f->n_waiters++;
}

struct hold *state_first_holder(const struct lock *l)
{
        struct rqueue *q;

        if (l->n_holders == 0) {
                return NULL;
        }
        if (l->n_writers > 0) {
                RQUEUE_FOREACH(q, &l->holders)
                {
                        struct hold *h = RQUEUE_DATA(q, struct hold, lock_link);
                        if (h->mode == COMMAND_MODE_EXCLUSIVE) {
                                return h;
                        }
                }
        }
        return RQUEUE_DATA(rqueue_head(&l->holders), struct hold, lock_link);
}

void state_hold_detach(struct lockfsm *f, struct hold *h)
{
        rqueue_remove(&h->lock_link);
        rqueue_remove(&h->session_link);
        hold_session(h)->n_holds--;
        if (hold_session(h)->use != NULL) {
                hold_session(h)->use->holds--;
                hold_session(h)->use->waits -= h->waiting;
        }
        if (h->waiting) {
                hold_lock(h)->n_waiters--;
                f->n_waiters--;
        } else {
                hold_lock(h)->n_holders--;
                hold_lock(h)->n_writers -= h->mode == COMMAND_MODE_EXCLUSIVE;
                hold_lock(h)->used -= h->permits;
                f->n_grants--;
        }
}

void state_tomb_add(struct lockfsm *f, uint64_t id, int reason)
{
        uint32_t max = f->limits.max_tombstones;
        struct tomb *t;

        if (max == 0) {
                return;
        }
        if (f->tomb_count == max) {
                /* Forget the oldest ended session. */
                t = &f->tomb_ring[f->tomb_head];
                hmap_remove(&f->tombs, &t->by_id);
                f->tomb_head = (f->tomb_head + 1) % max;
                f->tomb_count--;
        }
        t = &f->tomb_ring[(f->tomb_head + f->tomb_count) % max];
        t->id = id;
        t->reason = reason;
        hmap_insert(&f->tombs, &t->by_id, hash_u64(id));
        f->tomb_count++;
}

int state_memo_reserve(struct lockfsm *f, struct session *s, unsigned n)
{
        struct memo *m;

        assert(n <= f->limits.max_inflight && n >= s->n_memo);
        /* Grow to exactly what is in flight: a client that waits for each
         * answer needs one slot, and a burst costs one copy per request
         * of at most max_inflight small records. Shrink once a burst has
         * passed, if memory allows; keeping the larger array is as good. */
        if (n <= s->memo_cap && (n == 0 || 2 * (unsigned)n > s->memo_cap)) {
                return 0;
        }
        m = pool_alloc(&f->pool, n * sizeof *m);
        if (m == NULL) {
                return n <= s->memo_cap ? 0 : BATON_ENOMEM;
        }
        if (s->n_memo > 0) {
                memcpy(m, s->memo, s->n_memo * sizeof *m);
        }
        pool_free(&f->pool, s->memo, memo_bytes(s));
        s->memo = m;
        s->memo_cap = (uint8_t)n;
        return 0;
}

struct memo *state_memo_find(struct session *s, uint64_t seq)
{
        uint8_t i;

        for (i = 0; i < s->n_memo; i++) {
                if (s->memo[i].seq == seq) {
                        return &s->memo[i];
                }
        }
        return NULL;
}

void state_memo_ack(struct session *s, uint64_t ack)
{
        uint8_t i, kept = 0;

        if (ack <= s->floor) {
                return;
        }
        s->floor = ack;
        for (i = 0; i < s->n_memo; i++) {
                if (s->memo[i].seq >= ack) {
                        s->memo[kept++] = s->memo[i];
                }
        }
        s->n_memo = kept;
}

void state_memo_put(struct session *s, uint64_t seq,
                    const struct lockfsm_result *res)
{
        uint8_t i = s->n_memo;

        /* Keep the slots sorted by seq: snapshots list them in that order. */
        while (i > 0 && s->memo[i - 1].seq > seq) {
                s->memo[i] = s->memo[i - 1];
                i--;
        }
        assert(s->n_memo < s->memo_cap);
        s->memo[i].seq = seq;
        state_memo_set(&s->memo[i], res);
        s->n_memo++;
}

void state_memo_set(struct memo *m, const struct lockfsm_result *res)
{
        m->owner = res->owner;
        m->token = res->token;
        m->count = res->count;
        m->status = (int16_t)res->status;
        m->kind = res->kind;
        m->quota = (uint8_t)res->waiters;
        m->session = res->session;
}

void state_memo_result(const struct memo *m, struct lockfsm_result *res)
{
        memset(res, 0, sizeof *res);
        res->status = m->status;
        res->kind = m->kind;
        res->duplicate = true;
        res->session = m->session;
        res->owner = m->owner;
        res->token = m->token;
        res->count = m->count;
        res->waiters = m->quota;
}
