/* An intrusive chained hash map whose growth is separated from insertion. */
#ifndef LIB_HMAP_H
#define LIB_HMAP_H

#include <stddef.h>
#include <stdint.h>

#include "mem.h"

/*
 * The map stores embedded nodes and their hashes; callers compare keys
 * themselves while walking the candidates of a hash. Growth happens only in
 * hmap_reserve(), which can fail; insertion after a successful reserve never
 * allocates and never fails, so a caller can make every allocation before it
 * changes any state.
 */
struct hnode {
        struct hnode *next;
        uint64_t hash;
};

struct hmap {
        struct hnode **buckets;
        size_t n_buckets; /* 0 or a power of two */
        size_t count;
        const struct mem *mem;
};

#define HMAP_DATA(N, T, M) ((T *)(void *)((char *)(N)-offsetof(T, M)))

void hmap_init(struct hmap *m, const struct mem *mem);
/* Frees the bucket array; the nodes belong to the caller. */
void hmap_close(struct hmap *m);
/* Make room for `n` nodes in total. 0 or BATON_ENOMEM (map unchanged). */
int hmap_reserve(struct hmap *m, size_t n);
/* Insert a node; the caller has reserved room for it. */
void hmap_insert(struct hmap *m, struct hnode *node, uint64_t hash);
void hmap_remove(struct hmap *m, struct hnode *node);
/* First node with this hash, or NULL; continue with hmap_next(). */
struct hnode *hmap_first(const struct hmap *m, uint64_t hash);
struct hnode *hmap_next(const struct hnode *node);

uint64_t hash_u64(uint64_t v);
uint64_t hash_bytes(const void *p, size_t n);

#endif /* LIB_HMAP_H */
