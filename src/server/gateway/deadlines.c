/* The leader's clocks: session lease deadlines and waiter wait deadlines. */
#include "deadlines.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../../../include/baton/errors.h"

static uint64_t key_hash(uint64_t session, uint64_t seq)
{
        return hash_u64(session ^ hash_u64(seq));
}

static struct deadline *find(const struct deadlines *d, uint64_t session,
                             uint64_t seq)
{
        struct hnode *n;

        for (n = hmap_first(&d->items, key_hash(session, seq)); n != NULL;
             n = hmap_next(n)) {
                struct deadline *x = HMAP_DATA(n, struct deadline, by_key);
                if (x->session == session && x->seq == seq) {
                        return x;
                }
        }
        return NULL;
}

static void swap(struct deadlines *d, uint32_t i, uint32_t j)
{
        struct deadline *t = d->heap[i];

        d->heap[i] = d->heap[j];
        d->heap[j] = t;
        d->heap[i]->pos = i;
        d->heap[j]->pos = j;
}

static void sift_up(struct deadlines *d, uint32_t i)
{
        while (i > 0 && d->heap[(i - 1) / 2]->at > d->heap[i]->at) {
                swap(d, i, (i - 1) / 2);
                i = (i - 1) / 2;
        }
}

static void sift_down(struct deadlines *d, uint32_t i)
{
        for (;;) {
                uint32_t l = 2 * i + 1, r = l + 1, m = i;
                if (l < d->n && d->heap[l]->at < d->heap[m]->at) {
                        m = l;
                }
                if (r < d->n && d->heap[r]->at < d->heap[m]->at) {
                        m = r;
                }
                if (m == i) {
                        return;
                }
                swap(d, i, m);
                i = m;
        }
}

/* A lease: what leases.h packs, for the session's seq 0. */
static bool is_lease(uint64_t session, uint64_t seq, size_t name_len)
{
        return seq == 0 && session != 0 && name_len == 0;
}

/* The earliest lease if it is due no later than every other deadline. */
static const struct lease *lease_first(const struct deadlines *d)
{
        const struct lease *l = leases_first(&d->leases);

        return l != NULL && (d->n == 0 || l->at <= d->heap[0]->at) ? l : NULL;
}

uint64_t deadlines_next(const struct deadlines *d)
{
        const struct lease *l = d->held ? NULL : lease_first(d);
        uint64_t item = d->n > 0 ? d->heap[0]->at : DEADLINES_NEVER;

        if (l != NULL) {
                return l->at;
        }
        return d->held && d->held_until < item ? d->held_until : item;
}

/* Ask the owner for a call at the earliest deadline: its one timer. */
static void rearm(struct deadlines *d)
{
        d->arm(d->data, deadlines_next(d));
}

void deadlines_run(struct deadlines *d, uint64_t now, uint32_t max_leases)
{
        const struct lease *l;
        uint32_t fired = 0;

        d->held = false;
        for (;;) {
                l = lease_first(d);
                if (l != NULL && l->at <= now && fired == max_leases) {
                        /* Due, and left where it is: the items behind it
                         * still fire, in their order among themselves. */
                        d->held = true;
                        d->held_until = now + d->retry_ms;
                        l = NULL;
                }
                if (l != NULL && l->at <= now) {
                        struct deadline x;
                        fired++;
                        memset(&x, 0, sizeof x);
                        x.session = l->session;
                        leases_move_first(&d->leases, now + d->retry_ms);
                        d->fire(d->data, &x);
                } else if (l == NULL && d->n > 0 && d->heap[0]->at <= now) {
                        struct deadline *x = d->heap[0];
                        x->at = now + d->retry_ms;
                        sift_down(d, 0);
                        d->fire(d->data, x);
                } else {
                        break;
                }
        }
        rearm(d);
}

void deadlines_kick(struct deadlines *d)
{
        if (d->held) {
                d->held = false;
                rearm(d);
        }
}

void deadlines_init(struct deadlines *d, uint64_t retry_ms,
                    deadlines_fire_cb fire, deadlines_arm_cb arm, void *data)
{
        memset(d, 0, sizeof *d);
        d->retry_ms = retry_ms;
        d->fire = fire;
        d->arm = arm;
        d->data = data;
        leases_init(&d->leases);
        hmap_init(&d->items, &mem_libc);
}

void deadlines_clear(struct deadlines *d)
{
        uint32_t i;

        for (i = 0; i < d->n; i++) {
                hmap_remove(&d->items, &d->heap[i]->by_key);
                free(d->heap[i]);
        }
        d->n = 0;
        d->held = false;
        leases_clear(&d->leases);
        rearm(d);
}

void deadlines_close(struct deadlines *d)
{
        deadlines_clear(d);
        free(d->heap);
        d->heap = NULL;
        hmap_close(&d->items);
        leases_clear(&d->leases);
}

int deadlines_set(struct deadlines *d, uint64_t session, uint64_t seq,
                  const char *name, size_t name_len, uint64_t at)
{
        struct deadline *x;
        int rv;

        if (is_lease(session, seq, name_len)) {
                rv = leases_set(&d->leases, session, at);
                rearm(d);
                return rv;
        }
        x = find(d, session, seq);

        if (x == NULL) {
                if (d->n == d->cap) {
                        uint32_t cap = d->cap == 0 ? 64 : d->cap * 2;
                        struct deadline **h = realloc(d->heap, cap * sizeof *h);
                        if (h == NULL) {
                                return BATON_ENOMEM;
                        }
                        d->heap = h;
                        d->cap = cap;
                }
                if (hmap_reserve(&d->items, d->items.count + 1) != 0 ||
                    (x = calloc(1, sizeof *x + name_len)) == NULL) {
                        return BATON_ENOMEM;
                }
                x->session = session;
                x->seq = seq;
                x->name_len = (uint8_t)name_len;
                if (name_len > 0) {
                        memcpy(x->name, name, name_len);
                }
                hmap_insert(&d->items, &x->by_key, key_hash(session, seq));
                x->pos = d->n;
                d->heap[d->n++] = x;
        }
        x->at = at;
        sift_up(d, x->pos);
        sift_down(d, x->pos);
        rearm(d);
        return 0;
}

void deadlines_drop(struct deadlines *d, uint64_t session, uint64_t seq)
{
        struct deadline *x;
        uint32_t i;

        if (is_lease(session, seq, 0)) {
                leases_drop(&d->leases, session);
                rearm(d);
                return;
        }
        x = find(d, session, seq);
        if (x == NULL) {
                return;
        }
        i = x->pos;
        swap(d, i, d->n - 1);
        d->n--;
        if (i < d->n) {
                sift_up(d, i);
                sift_down(d, i);
        }
        hmap_remove(&d->items, &x->by_key);
        free(x);
        rearm(d);
}
