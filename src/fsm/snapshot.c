/* Deterministic serialization of the lock state machine (docs/fsm.md). */
#include "snapshot.h"

#include <stddef.h>
#include <string.h>

#include "../../include/baton/errors.h"
#include "../lib/cursor.h"
#include "../proto/proto.h"
#include "acl.h"
#include "grant.h"
#include "holdtime.h"
#include "quota.h"
#include "state.h"

static const uint8_t magic[4] = {'B', 'T', 'N', 'S'};

static void put_result(struct wcursor *w, const struct lockfsm_result *r)
{
        wcursor_u8(w, r->kind);
        wcursor_u32(w, (uint32_t)r->status);
        wcursor_u64(w, r->session);
        wcursor_u64(w, r->owner);
        wcursor_u64(w, r->token);
        wcursor_u32(w, r->count);
        wcursor_u32(w, r->waiters);
}

static void put_session(struct wcursor *w, const struct session *s)
{
        unsigned i;

        wcursor_u64(w, s->id);
        wcursor_u64(w, s->nonce);
        wcursor_u32(w, s->ttl_ms);
        wcursor_u64(w, s->floor);
        wcursor_u8(w, s->name_len);
        wcursor_bytes(w, s->name, s->name_len);
        wcursor_bytes(w, s->hash, sizeof s->hash);
        wcursor_u32(w, s->lock_delay_ms);
        wcursor_u32(w, s->revoked);
        wcursor_u64(w, s->use != NULL ? s->use->principal : 0);
        wcursor_u8(w, s->n_memo);
        for (i = 0; i < s->n_memo; i++) {
                struct lockfsm_result res;
                state_memo_result(&s->memo[i], &res);
                wcursor_u64(w, s->memo[i].seq);
                put_result(w, &res);
        }
}

/* Every hold's value, and then its hold clock, last in its record
 * (version 12; in version 11 an election's value only). */
static void put_value(struct wcursor *w, const struct hold *h)
{
        struct hold_clock k = hold_clock(h);

        wcursor_u8(w, h->value_len);
        wcursor_bytes(w, h->value, h->value_len);
        wcursor_u32(w, k.hold_ms);
        wcursor_u64(w, k.armed);
}

static void put_lock(struct wcursor *w, const struct lock *l)
{
        struct rqueue *q;

        wcursor_u8(w, l->name_len);
        wcursor_bytes(w, l->name, l->name_len);
        wcursor_u64(w, l->created);
        wcursor_u8(w, l->mode | (l->blocked ? SNAPSHOT_BLOCKED : 0));
        if (l->mode == COMMAND_MODE_SEMAPHORE || l->blocked) {
                wcursor_u32(w, l->limit);
        }
        wcursor_u32(w, l->n_holders);
        RQUEUE_FOREACH(q, &l->holders)
        {
                const struct hold *h = RQUEUE_DATA(q, struct hold, lock_link);
                wcursor_u64(w, hold_session(h)->id);
                wcursor_u64(w, h->owner);
                wcursor_u64(w, h->seq);
                wcursor_u64(w, h->token);
                wcursor_u32(w, h->count);
                wcursor_u8(w, h->mode);
                if (l->mode == COMMAND_MODE_SEMAPHORE) {
                        wcursor_u32(w, h->permits);
                }
                wcursor_u32(w, h->granted_s);
                put_value(w, h);
        }
        wcursor_u32(w, l->n_waiters);
        RQUEUE_FOREACH(q, &l->waiters)
        {
                const struct hold *h = RQUEUE_DATA(q, struct hold, lock_link);
                wcursor_u64(w, hold_session(h)->id);
                wcursor_u64(w, h->owner);
                wcursor_u64(w, h->seq);
                wcursor_u64(w, h->queued_at);
                wcursor_u32(w, h->wait_ms);
                wcursor_u8(w, h->mode | (h->multi ? SNAPSHOT_MULTI : 0));
                if (l->mode == COMMAND_MODE_SEMAPHORE) {
                        wcursor_u32(w, h->permits);
                }
                put_value(w, h);
        }
}

/* Writes everything but the checksum; with a NULL buffer it only counts. */
static void put_state(struct wcursor *w, const struct lockfsm *f)
{
        struct rqueue *q;
        uint32_t i;

        wcursor_bytes(w, magic, sizeof magic);
        wcursor_u16(w, SNAPSHOT_VERSION);
        wcursor_u16(w, 0);
        wcursor_u64(w, f->last_index);
        wcursor_u64(w, f->stamp);
        wcursor_u64(w, f->clock_ms);
        wcursor_u32(w, f->tomb_count);
        for (i = 0; i < f->tomb_count; i++) {
                const struct tomb *t = &f->tomb_ring[(f->tomb_head + i) %
                                                     f->limits.max_tombstones];
                wcursor_u64(w, t->id);
                wcursor_u8(w, (uint8_t)-t->reason);
        }
        wcursor_u32(w, (uint32_t)f->n_sessions);
        RQUEUE_FOREACH(q, &f->lists->session_list)
        {
                put_session(w, RQUEUE_DATA(q, struct session, link));
        }
        wcursor_u32(w, (uint32_t)f->n_locks);
        RQUEUE_FOREACH(q, &f->lists->lock_list)
        {
                put_lock(w, RQUEUE_DATA(q, struct lock, link));
        }
}

/* FNV-1a over the body: catches truncation and corruption on restore. */
static uint64_t checksum(const uint8_t *p, size_t n)
{
        uint64_t h = 0xcbf29ce484222325ULL;
        size_t i;

        for (i = 0; i < n; i++) {
                h ^= p[i];
                h *= 0x100000001b3ULL;
        }
        return h;
}

int snapshot_encode(const struct lockfsm *f, void **buf, size_t *len)
{
        struct wcursor w;
        size_t size;
        uint8_t *p;

        wcursor_init(&w, NULL, 0);
        put_state(&w, f);
        size = w.len + 8;
        p = mem_alloc(f->mem, size);
        if (p == NULL) {
                return BATON_ENOMEM;
        }
        wcursor_init(&w, p, size);
        put_state(&w, f);
        wcursor_u64(&w, checksum(p, size - 8));
        if (w.bad || w.len != size) {
                /* The two walks are the same code: this cannot happen. */
                mem_free(f->mem, p);
                return BATON_ENOMEM;
        }
        *buf = p;
        *len = size;
        return 0;
}

static int get_result(struct rcursor *r, struct lockfsm_result *res)
{
        memset(res, 0, sizeof *res);
        res->kind = rcursor_u8(r);
        res->status = (int32_t)rcursor_u32(r);
        res->session = rcursor_u64(r);
        res->owner = rcursor_u64(r);
        res->token = rcursor_u64(r);
        res->count = rcursor_u32(r);
        res->waiters = rcursor_u32(r);
        /* The outcomes a session remembers: a client command's (an
         * EXTEND's is UPDATED). */
        if ((res->kind > PROTO_KIND_CURRENT &&
             res->kind != PROTO_KIND_PROCLAIMED &&
             res->kind != PROTO_KIND_UPDATED) ||
            res->status > 0) {
                return BATON_ECORRUPT;
        }
        return 0;
}

static int get_session(struct lockfsm *f, struct rcursor *r, uint64_t *last,
                       uint16_t version)
{
        struct session *s;
        uint64_t id = rcursor_u64(r), nonce = rcursor_u64(r);
        uint32_t ttl_ms = rcursor_u32(r);
        uint64_t floor = rcursor_u64(r);
        uint8_t name_len = rcursor_u8(r);
        const uint8_t *name = rcursor_bytes(r, name_len);
        const uint8_t *hash =
            version >= 3 ? rcursor_bytes(r, COMMAND_HASH_SIZE) : NULL;
        uint32_t delay = version >= 8 ? rcursor_u32(r) : 0;
        uint32_t revoked = version >= 9 ? rcursor_u32(r) : 0;
        uint64_t principal = version >= 13 ? rcursor_u64(r) : 0;
        uint8_t i, n_memo = rcursor_u8(r);

        if (r->bad || id <= *last || id > f->stamp ||
            name_len > COMMAND_CLIENT_NAME_MAX ||
            n_memo > f->limits.max_inflight ||
            (nonce != 0 && state_session_by_nonce(f, nonce) != NULL)) {
                return BATON_ECORRUPT;
        }
        s = state_session_alloc(f, name_len);
        if (s == NULL || state_memo_reserve(f, s, n_memo) != 0) {
                state_session_free(f, s);
                return BATON_ENOMEM;
        }
        s->id = id;
        s->nonce = nonce;
        s->ttl_ms = ttl_ms;
        s->lock_delay_ms = delay;
        s->revoked = revoked;
        s->floor = floor;
        s->name_len = name_len;
        memcpy(s->name, name, name_len);
        if (hash != NULL) {
                memcpy(s->hash, hash, sizeof s->hash);
        }
        for (i = 0; i < n_memo; i++) {
                uint64_t seq = rcursor_u64(r);
                struct lockfsm_result res;
                /* A memo keeps what a remembered answer can hold: no
                 * waiter count but a BATON_EQUOTA's quota kind, a
                 * BATON_E* code. */
                if (get_result(r, &res) != 0 || r->bad ||
                    (res.waiters != 0 && (res.status != BATON_EQUOTA ||
                                          res.waiters >= ACL_QUOTA_COUNTED)) ||
                    res.status < INT16_MIN ||
                    (i > 0 && seq <= s->memo[i - 1].seq)) {
                        state_session_free(f, s);
                        return BATON_ECORRUPT;
                }
                state_memo_put(s, seq, &res);
        }
        if (state_session_reserve(f) != 0 ||
            (principal != 0 &&
             (s->use = quota_use_get(f, principal)) == NULL)) {
                state_session_free(f, s);
                return BATON_ENOMEM;
        }
        state_session_link(f, s);
        *last = s->id;
        return 0;
}

/* Reads one holder or waiter of `l` into `h`, its value into `*value`
 * (borrowed from `r`; every hold's from version 12, an election's in
 * version 11) and its hold clock into `*k` (version 12). */
static void read_hold(struct rcursor *r, const struct lock *l, bool waiting,
                      uint16_t version, struct hold *h, const uint8_t **value,
                      struct hold_clock *k)
{
        h->owner = rcursor_u64(r);
        h->seq = rcursor_u64(r);
        if (waiting) {
                h->queued_at = rcursor_u64(r);
                h->wait_ms = rcursor_u32(r);
        } else {
                h->token = rcursor_u64(r);
                h->count = rcursor_u32(r);
        }
        h->mode = version >= 4 ? rcursor_u8(r) : COMMAND_MODE_EXCLUSIVE;
        if (waiting && version >= 7 && (h->mode & SNAPSHOT_MULTI)) {
                h->mode &= (uint8_t)~SNAPSHOT_MULTI;
                h->multi = true;
        }
        if (l->mode == COMMAND_MODE_SEMAPHORE) {
                h->permits = rcursor_u32(r);
        }
        if (!waiting && version >= 10) {
                h->granted_s = rcursor_u32(r);
        }
        *value = NULL;
        if (version >= 12 || l->mode == COMMAND_MODE_ELECTION) {
                h->value_len = rcursor_u8(r);
                *value = rcursor_bytes(r, h->value_len);
        }
        k->hold_ms = 0;
        k->armed = 0;
        if (version >= 12) {
                k->hold_ms = rcursor_u32(r);
                k->armed = rcursor_u64(r);
        }
}

/* Reads one holder or waiter of `l`. */
static int get_hold(struct lockfsm *f, struct rcursor *r, struct lock *l,
                    bool waiting, uint16_t version)
{
        struct session *s = state_session(f, rcursor_u64(r));
        const uint8_t *value;
        struct hold_clock k;
        struct hold t, *h;

        if (s == NULL) {
                return BATON_ECORRUPT;
        }
        memset(&t, 0, sizeof t);
        read_hold(r, l, waiting, version, &t, &value, &k);
        /* The rest of what a hold must be is lockfsm_check()'s, which
         * every restore runs. */
        if (r->bad || t.mode > COMMAND_MODE_SEMAPHORE ||
            (waiting ? t.queued_at > f->stamp : t.token > f->last_index) ||
            (!waiting && t.count == 0) ||
            (t.value_len > 0 && memchr(value, '\0', t.value_len) != NULL) ||
            !holdtime_clock_ok(&t, waiting, k, f->last_index)) {
                return BATON_ECORRUPT;
        }
        h = state_hold_alloc(f, t.value_len, k.hold_ms > 0);
        if (h == NULL) {
                return BATON_ENOMEM;
        }
        memcpy(h, &t, offsetof(struct hold, value));
        h->timed = k.hold_ms > 0;
        if (h->timed) {
                hold_clock_set(h, k);
        }
        rqueue_init(&h->lock_link);
        rqueue_init(&h->session_link);
        if (t.value_len > 0) {
                memcpy(h->value, value, t.value_len);
        }
        hold_set_lock(h, l);
        hold_set_session(h, s);
        if (waiting) {
                state_wait_attach(f, h);
        } else {
                state_grant_attach(f, h);
        }
        return 0;
}

static int get_holds(struct lockfsm *f, struct rcursor *r, struct lock *l,
                     bool waiting, uint16_t version)
{
        uint32_t n = rcursor_u32(r);
        uint32_t i;
        int rv;

        /* A hold takes at least 36 bytes: no count can promise more. */
        if (r->bad || n > r->left / 36) {
                return BATON_ECORRUPT;
        }
        for (i = 0; i < n; i++) {
                if ((rv = get_hold(f, r, l, waiting, version)) != 0) {
                        return rv;
                }
        }
        return 0;
}

static int get_lock(struct lockfsm *f, struct rcursor *r, uint64_t *last,
                    uint16_t version)
{
        uint8_t len = rcursor_u8(r);
        const uint8_t *name = rcursor_bytes(r, len);
        struct lock *l;
        int rv;

        if (r->bad || len == 0 || memchr(name, '\0', len) != NULL ||
            state_lock(f, (const char *)name, len) != NULL) {
                return BATON_ECORRUPT;
        }
        l = state_lock_alloc(f, (const char *)name, len);
        if (l == NULL) {
                return BATON_ENOMEM;
        }
        l->created = rcursor_u64(r);
        l->mode = rcursor_u8(r);
        if (version >= 6 &&
            l->mode == (COMMAND_MODE_EXCLUSIVE | SNAPSHOT_BLOCKED)) {
                l->mode = COMMAND_MODE_EXCLUSIVE;
                l->blocked = true;
                l->delay_ms = rcursor_u32(r);
        } else if (l->mode == COMMAND_MODE_SEMAPHORE && version >= 5) {
                l->limit = rcursor_u32(r);
        }
        if (r->bad || l->created <= *last || l->created > f->stamp ||
            (l->blocked && l->delay_ms == 0) ||
            (l->mode != COMMAND_MODE_EXCLUSIVE &&
             (l->mode != COMMAND_MODE_SEMAPHORE || l->limit == 0) &&
             (l->mode != COMMAND_MODE_ELECTION || version < 11))) {
                state_lock_free(f, l);
                return BATON_ECORRUPT;
        }
        if (state_lock_reserve(f, 1) != 0) {
                state_lock_free(f, l);
                return BATON_ENOMEM;
        }
        /* Linked first, so a failure below leaves it for state_close. */
        state_lock_link(f, l);
        *last = l->created;
        if ((rv = get_holds(f, r, l, false, version)) != 0 ||
            (rv = get_holds(f, r, l, true, version)) != 0) {
                return rv;
        }
        /* One with neither holds nothing. */
        if (l->n_holders == 0 && l->n_waiters == 0 && !l->blocked) {
                return BATON_ECORRUPT;
        }
        return 0;
}

/* Every lock whose queue's head could be admitted waits for the next
 * entry to admit it (lockfsm.h), in lock age order. Only once every lock
 * is in: a multi-lock's head is admissible when all its names are. */
static void find_deferred(struct lockfsm *f)
{
        struct rqueue *q;

        RQUEUE_FOREACH(q, &f->lists->lock_list)
        {
                struct lock *l = RQUEUE_DATA(q, struct lock, link);
                if (grant_admissible(f, l)) {
                        lockchain_push(&f->deferred, l);
                        l->deferred = true;
                }
        }
}

int snapshot_decode(struct lockfsm *f, const void *buf, size_t len)
{
        const uint8_t *p = buf;
        uint64_t last;
        struct rcursor r;
        uint16_t version;
        uint32_t n, i;
        int rv;

        if (len < sizeof magic + 4 + 8 + 8 || memcmp(p, magic, 4) != 0) {
                return BATON_ECORRUPT;
        }
        rcursor_init(&r, p + len - 8, 8);
        if (rcursor_u64(&r) != checksum(p, len - 8)) {
                return BATON_ECORRUPT;
        }
        rcursor_init(&r, p + 4, len - 4 - 8);
        version = rcursor_u16(&r);
        if (version < 1 || version > SNAPSHOT_VERSION) {
                return BATON_EVERSION;
        }
        if (rcursor_u16(&r) != 0) {
                return BATON_ECORRUPT;
        }
        f->last_index = rcursor_u64(&r);
        f->stamp = version == 1 ? f->last_index : rcursor_u64(&r);
        f->clock_ms = version >= 10 ? rcursor_u64(&r) : 0;
        n = rcursor_u32(&r);
        if (r.bad || n > f->limits.max_tombstones) {
                return BATON_ECORRUPT;
        }
        for (i = 0; i < n; i++) {
                uint64_t id = rcursor_u64(&r);
                int reason = -(int)rcursor_u8(&r);
                if (r.bad || state_tomb(f, id) != 0 ||
                    (reason != BATON_EEXPIRED && reason != BATON_ECLOSED)) {
                        return BATON_ECORRUPT;
                }
                state_tomb_add(f, id, reason);
        }
        n = rcursor_u32(&r);
        if (r.bad) {
                return BATON_ECORRUPT;
        }
        if (n > f->limits.max_sessions) {
                /* Not damage: this node runs with a lower limit. */
                return BATON_ETOOMANYSESSIONS;
        }
        for (i = 0, last = 0; i < n; i++) {
                if ((rv = get_session(f, &r, &last, version)) != 0) {
                        return rv;
                }
        }
        /* The lock table is sized once, for every lock: grown a step at
         * a time it would stay up to 3/4 full, and each name's check for
         * a duplicate would read more records on its way (ptable.h). A
         * lock takes 19 bytes at least, so a count the bytes left cannot
         * hold is damage, not a table to allocate. */
        n = rcursor_u32(&r);
        if (r.bad || n > r.left / 19) {
                return BATON_ECORRUPT;
        }
        if (state_lock_reserve(f, n) != 0) {
                return BATON_ENOMEM;
        }
        for (i = 0, last = 0; i < n; i++) {
                if ((rv = get_lock(f, &r, &last, version)) != 0) {
                        return rv;
                }
        }
        if (r.bad || r.left != 0) {
                return BATON_ECORRUPT;
        }
        find_deferred(f);
        return 0;
}

unsigned snapshot_peek_version(const void *buf, size_t len)
{
        struct rcursor r;

        if (len < sizeof magic + 2 || memcmp(buf, magic, 4) != 0) {
                return 0;
        }
        rcursor_init(&r, (const uint8_t *)buf + 4, 2);
        return rcursor_u16(&r);
}
