/* An open-addressing table of record pointers, for maps that hold millions
 * of records on an event loop. */
#ifndef LIB_PTABLE_H
#define LIB_PTABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mem.h"

/*
 * The records carry no link and no stored hash: the table is an array of
 * 4-byte slots, each a record's place in the region of address space the
 * records are carved from (pool.h): its offset from the region's start in
 * 8-byte units. Against a chained map with a node in every record, that is
 * 20 bytes less per record and one slot instead of a bucket and a node;
 * against 8-byte slots holding an address with some of its hash, half the
 * table, for a probe that reads each record it passes (a lookup at most
 * 3/4 full passes 1.5 on average when it finds its record).
 *
 * Nothing the table does writes into a record. That matters after a
 * snapshot's fork(): a write to a record's page makes the kernel copy the
 * page, and a chained map that doubles rewrites the link of every record
 * it moves, all over the heap.
 *
 * Growth is separated from insertion, as in hmap.h: ptable_reserve() can
 * fail and does no work in proportion to the table's size (it allocates
 * the larger array and moves nothing); ptable_insert() after a successful
 * reserve cannot fail. While a doubling is under way every insert and
 * remove moves a few slots of the old array, reading each record moved to
 * learn its hash (`hash` below), so no call does work in proportion to the
 * table's size.
 *
 * The table keeps at most 3/4 of its slots full. Records must be aligned
 * to 8 bytes and lie less than 32 GiB past the region's start, `*base`;
 * a record that does not aborts the insert.
 */

/* The hash of a record's key: the same value the caller passes to
 * ptable_insert(), ptable_remove() and ptable_find() for it. */
typedef uint64_t (*ptable_hash_fn)(const void *record);
/* Whether `record` has the key `key` (as the caller of ptable_find()
 * passed it). */
typedef bool (*ptable_eq_fn)(const void *record, const void *key);

struct ptable {
        uint32_t *slots; /* 0: empty; else (address - *base) / 8 + 1 */
        size_t n_slots;  /* 0 or a power of two */
        size_t count;    /* records in `slots` and `old` together */
        /* A doubling under way: the old array's slots from `moved` on
         * still hold their records (or PTABLE_GONE, a record removed from
         * it); those before `moved` are empty. */
        uint32_t *old;
        size_t n_old;
        size_t moved;
        ptable_hash_fn hash;
        const struct mem *mem;
        /* The region's start, read at each call: it may be set after
         * ptable_init(), before the first insert (a pool's first slab). */
        char *const *base;
};

void ptable_init(struct ptable *t, const struct mem *mem, ptable_hash_fn hash,
                 char *const *base);
/* Frees the arrays; the records belong to the caller. */
void ptable_close(struct ptable *t);
/* Make room for `n` records in total. 0 or BATON_ENOMEM (table unchanged). */
int ptable_reserve(struct ptable *t, size_t n);
/* Insert a record whose key is not in the table; the caller has reserved
 * room for it. */
void ptable_insert(struct ptable *t, void *record, uint64_t hash);
/* Remove a record that is in the table. */
void ptable_remove(struct ptable *t, const void *record, uint64_t hash);
/* The record with this key, or NULL. */
void *ptable_find(const struct ptable *t, uint64_t hash, ptable_eq_fn eq,
                  const void *key);

#endif /* LIB_PTABLE_H */
