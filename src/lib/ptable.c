/* An open-addressing table of record pointers (linear probing). */
#include "ptable.h"

#include <assert.h>
#include <stdlib.h>

#include "../../include/baton/errors.h"

/* A slot of the old array whose record was removed during a doubling: a
 * probe goes past it. Never a record's slot (see pack()). */
#define GONE UINT32_MAX

/* Old slots moved by each insert and remove while a doubling is under
 * way. A doubling starts when the table is 3/4 full and gives it twice
 * the slots, so the move (n_old / MOVE_STEP calls) is over long before
 * the new array can fill (that takes 3/4 * n_old inserts). */
#define MOVE_STEP 4

#define MIN_SLOTS 16

/* The records the table holds at most with `n` slots. */
static size_t room(size_t n)
{
        return n - n / 4;
}

/* A record's slot: its offset from the region's start in 8-byte units,
 * plus one so that 0 is an empty slot. */
static uint32_t pack(const struct ptable *t, const void *record)
{
        uintptr_t a = (uintptr_t)record, b = (uintptr_t)*t->base;

        /* A record outside the region, or misaligned, would be another
         * record's slot: the caller broke ptable.h's contract. */
        if (*t->base == NULL || a < b || (a - b) % 8 != 0 ||
            (a - b) / 8 >= (uintptr_t)GONE - 1) {
                abort();
        }
        return (uint32_t)((a - b) / 8 + 1);
}

static void *unpack(const struct ptable *t, uint32_t v)
{
        return (void *)(*t->base + ((size_t)v - 1) * 8);
}

void ptable_init(struct ptable *t, const struct mem *mem, ptable_hash_fn hash,
                 char *const *base)
{
        t->slots = NULL;
        t->n_slots = 0;
        t->count = 0;
        t->old = NULL;
        t->n_old = 0;
        t->moved = 0;
        t->hash = hash;
        t->mem = mem;
        t->base = base;
}

void ptable_close(struct ptable *t)
{
        mem_free(t->mem, t->slots);
        mem_free(t->mem, t->old);
        ptable_init(t, t->mem, t->hash, t->base);
}

/* Put `v` (of a record with this hash) in the first empty slot from its
 * home on. */
static void put(uint32_t *slots, size_t n, uint32_t v, uint64_t hash)
{
        size_t i = hash & (n - 1);

        while (slots[i] != 0) {
                i = (i + 1) & (n - 1);
        }
        slots[i] = v;
}

/* Move up to `k` more old slots; the old array goes once the last is
 * moved. Probes of the old array never look before `moved`; the slots
 * there are emptied all the same, so that a probe that did would miss
 * rather than find a record that may since have been removed. */
static void move_some(struct ptable *t, size_t k)
{
        while (t->old != NULL && k-- > 0) {
                uint32_t v = t->old[t->moved];
                t->old[t->moved++] = 0;
                if (v != 0 && v != GONE) {
                        put(t->slots, t->n_slots, v, t->hash(unpack(t, v)));
                }
                if (t->moved == t->n_old) {
                        mem_free(t->mem, t->old);
                        t->old = NULL;
                        t->n_old = 0;
                        t->moved = 0;
                }
        }
}

int ptable_reserve(struct ptable *t, size_t n)
{
        size_t size = t->n_slots == 0 ? MIN_SLOTS : t->n_slots;
        uint32_t *s;

        if (n <= room(t->n_slots)) {
                return 0;
        }
        while (room(size) < n) {
                if (size > SIZE_MAX / 2 / sizeof *s) {
                        return BATON_ENOMEM;
                }
                size *= 2;
        }
        s = mem_calloc(t->mem, size, sizeof *s);
        if (s == NULL) {
                return BATON_ENOMEM;
        }
        /* A doubling still under way ends first (the current array has
         * room for every record): only a reserve of more than the table
         * grew by since can get here. */
        move_some(t, SIZE_MAX);
        if (t->count == 0) {
                mem_free(t->mem, t->slots);
        } else {
                t->old = t->slots;
                t->n_old = t->n_slots;
                t->moved = 0;
        }
        t->slots = s;
        t->n_slots = size;
        return 0;
}

void ptable_insert(struct ptable *t, void *record, uint64_t hash)
{
        assert(t->count < room(t->n_slots));
        move_some(t, MOVE_STEP);
        put(t->slots, t->n_slots, pack(t, record), hash);
        t->count++;
}

/* The current array's probe sequence for `hash`, from its home to the
 * first empty slot: the index of the first slot for which `match` holds,
 * or n_slots. */
static size_t probe(const struct ptable *t, uint64_t hash,
                    bool (*match)(const struct ptable *t, uint32_t v,
                                  const void *arg),
                    const void *arg)
{
        size_t mask = t->n_slots - 1, i;
        uint32_t v;

        if (t->n_slots == 0) {
                return 0;
        }
        for (i = hash & mask; (v = t->slots[i]) != 0; i = (i + 1) & mask) {
                if (match(t, v, arg)) {
                        return i;
                }
        }
        return t->n_slots;
}

/*
 * The old array's probe sequence for `hash`: from its home, or from
 * `moved` if the home was moved, around the part not moved yet. A record
 * whose sequence passed through the moved part (or began there) is found
 * by skipping it, since the slots moved were full; one that lay in it was
 * moved. Returns the slot index of the first full slot for which `match`
 * holds, or n_old.
 */
static size_t old_probe(const struct ptable *t, uint64_t hash,
                        bool (*match)(const struct ptable *t, uint32_t v,
                                      const void *arg),
                        const void *arg)
{
        size_t span = t->n_old - t->moved, i = hash & (t->n_old - 1), k;

        if (i < t->moved) {
                i = t->moved;
        }
        for (k = 0; k < span; k++) {
                uint32_t v = t->old[i];
                if (v == 0) {
                        break;
                }
                if (v != GONE && match(t, v, arg)) {
                        return i;
                }
                if (++i == t->n_old) {
                        i = t->moved;
                }
        }
        return t->n_old;
}

struct find_arg {
        ptable_eq_fn eq;
        const void *key;
};

static bool find_match(const struct ptable *t, uint32_t v, const void *arg)
{
        const struct find_arg *a = arg;
        return a->eq(unpack(t, v), a->key);
}

static bool slot_match(const struct ptable *t, uint32_t v, const void *arg)
{
        (void)t;
        return v == *(const uint32_t *)arg;
}

void *ptable_find(const struct ptable *t, uint64_t hash, ptable_eq_fn eq,
                  const void *key)
{
        struct find_arg a = {eq, key};
        size_t i = probe(t, hash, find_match, &a);

        if (i != t->n_slots) {
                return unpack(t, t->slots[i]);
        }
        if (t->old != NULL) {
                i = old_probe(t, hash, find_match, &a);
                if (i != t->n_old) {
                        return unpack(t, t->old[i]);
                }
        }
        return NULL;
}

/* Whether home `h` lies cyclically in (i, j]: the record there cannot
 * move back to the hole at i. */
static bool home_between(size_t h, size_t i, size_t j)
{
        return i <= j ? (h > i && h <= j) : (h > i || h <= j);
}

/* Empty slot `i` of the current array, shifting back the records after it
 * that the hole would hide from their probes. */
static void delete_at(struct ptable *t, size_t i)
{
        size_t mask = t->n_slots - 1, j;
        uint32_t v;

        for (j = (i + 1) & mask; (v = t->slots[j]) != 0; j = (j + 1) & mask) {
                size_t h = t->hash(unpack(t, v)) & mask;
                if (!home_between(h, i, j)) {
                        t->slots[i] = v;
                        i = j;
                }
        }
        t->slots[i] = 0;
}

void ptable_remove(struct ptable *t, const void *record, uint64_t hash)
{
        uint32_t v = pack(t, record);
        size_t i;

        move_some(t, MOVE_STEP);
        t->count--;
        i = probe(t, hash, slot_match, &v);
        if (i != t->n_slots) {
                delete_at(t, i);
                return;
        }
        assert(t->old != NULL);
        i = old_probe(t, hash, slot_match, &v);
        assert(i != t->n_old);
        t->old[i] = GONE;
}
