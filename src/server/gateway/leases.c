/* The leader's session lease deadlines, packed (leases.h). */
#include "leases.h"

#include <stdlib.h>
#include <string.h>

#include "../../../include/baton/errors.h"
#include "../../lib/hmap.h"

#define EMPTY     UINT32_MAX
#define MIN_SLOTS 64 /* and heap entries */

static uint32_t home(const struct leases *l, uint64_t session)
{
        return (uint32_t)hash_u64(session) & l->mask;
}

/* The slot that holds `session`'s position, or the empty slot where it
 * would go. l->slots is not NULL. */
static uint32_t probe(const struct leases *l, uint64_t session)
{
        uint32_t i = home(l, session);

        while (l->slots[i] != EMPTY &&
               l->heap[l->slots[i]].session != session) {
                i = (i + 1) & l->mask;
        }
        return i;
}

/* Empty slot `i`, and move back the entries after it that may sit closer
 * to their home, so that no probe meets a hole before its entry. */
static void erase_slot(struct leases *l, uint32_t i)
{
        uint32_t j = i, h;

        for (;;) {
                j = (j + 1) & l->mask;
                if (l->slots[j] == EMPTY) {
                        break;
                }
                h = home(l, l->heap[l->slots[j]].session);
                /* Movable to i unless its home lies cyclically in (i, j]. */
                if (i < j ? (h <= i || h > j) : (h <= i && h > j)) {
                        l->slots[i] = l->slots[j];
                        i = j;
                }
        }
        l->slots[i] = EMPTY;
}

static void swap(struct leases *l, uint32_t a, uint32_t b)
{
        uint32_t sa = probe(l, l->heap[a].session);
        uint32_t sb = probe(l, l->heap[b].session);
        struct lease t = l->heap[a];

        l->heap[a] = l->heap[b];
        l->heap[b] = t;
        l->slots[sa] = b;
        l->slots[sb] = a;
}

static void sift_up(struct leases *l, uint32_t i)
{
        while (i > 0 && l->heap[(i - 1) / 2].at > l->heap[i].at) {
                swap(l, i, (i - 1) / 2);
                i = (i - 1) / 2;
        }
}

static void sift_down(struct leases *l, uint32_t i)
{
        for (;;) {
                uint32_t c = 2 * i + 1, m = i;
                if (c < l->n && l->heap[c].at < l->heap[m].at) {
                        m = c;
                }
                if (c + 1 < l->n && l->heap[c + 1].at < l->heap[m].at) {
                        m = c + 1;
                }
                if (m == i) {
                        return;
                }
                swap(l, i, m);
                i = m;
        }
}

/* Room for one more entry in the heap and in the index (rebuilt larger
 * when it would be over 3/4 full). 0 or BATON_ENOMEM, nothing changed. */
static int reserve(struct leases *l)
{
        uint32_t n_slots = l->slots == NULL ? 0 : l->mask + 1;
        uint32_t *slots;
        uint32_t i, s;

        if (l->n == l->cap) {
                uint32_t cap = l->cap == 0 ? MIN_SLOTS : l->cap * 2;
                struct lease *h = realloc(l->heap, cap * sizeof *h);
                if (cap <= l->cap || h == NULL) {
                        return BATON_ENOMEM;
                }
                l->heap = h;
                l->cap = cap;
        }
        if ((uint64_t)(l->n + 1) * 4 <= (uint64_t)n_slots * 3) {
                return 0;
        }
        n_slots = n_slots == 0 ? MIN_SLOTS : n_slots * 2;
        slots = malloc(n_slots * sizeof *slots);
        if (slots == NULL) {
                return BATON_ENOMEM;
        }
        memset(slots, 0xff, n_slots * sizeof *slots);
        free(l->slots);
        l->slots = slots;
        l->mask = n_slots - 1;
        for (i = 0; i < l->n; i++) {
                s = probe(l, l->heap[i].session);
                l->slots[s] = i;
        }
        return 0;
}

void leases_init(struct leases *l)
{
        memset(l, 0, sizeof *l);
}

void leases_clear(struct leases *l)
{
        free(l->heap);
        free(l->slots);
        leases_init(l);
}

int leases_set(struct leases *l, uint64_t session, uint64_t at)
{
        uint32_t s, p;

        if (l->slots != NULL) {
                s = probe(l, session);
                if (l->slots[s] != EMPTY) {
                        p = l->slots[s];
                        l->heap[p].at = at;
                        sift_up(l, p);
                        sift_down(l, p);
                        return 0;
                }
        }
        if (reserve(l) != 0) {
                return BATON_ENOMEM;
        }
        s = probe(l, session);
        p = l->n++;
        l->heap[p] = (struct lease){at, session};
        l->slots[s] = p;
        sift_up(l, p);
        return 0;
}

void leases_drop(struct leases *l, uint64_t session)
{
        uint32_t s, p, last;

        if (l->slots == NULL) {
                return;
        }
        s = probe(l, session);
        if (l->slots[s] == EMPTY) {
                return;
        }
        p = l->slots[s];
        erase_slot(l, s);
        last = --l->n;
        if (p == last) {
                return;
        }
        /* The last entry fills the hole. */
        l->heap[p] = l->heap[last];
        l->slots[probe(l, l->heap[p].session)] = p;
        sift_up(l, p);
        sift_down(l, p);
}

const struct lease *leases_find(const struct leases *l, uint64_t session)
{
        uint32_t s;

        if (l->slots == NULL) {
                return NULL;
        }
        s = probe(l, session);
        return l->slots[s] == EMPTY ? NULL : &l->heap[l->slots[s]];
}

const struct lease *leases_first(const struct leases *l)
{
        return l->n > 0 ? &l->heap[0] : NULL;
}

void leases_move_first(struct leases *l, uint64_t at)
{
        if (l->n > 0) {
                l->heap[0].at = at;
                sift_down(l, 0);
        }
}
