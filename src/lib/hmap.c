/* An intrusive chained hash map whose growth is separated from insertion. */
#include "hmap.h"

#include <assert.h>
#include <stdint.h>

#include "../../include/baton/errors.h"

void hmap_init(struct hmap *m, const struct mem *mem)
{
        m->buckets = NULL;
        m->n_buckets = 0;
        m->count = 0;
        m->mem = mem;
}

void hmap_close(struct hmap *m)
{
        mem_free(m->mem, m->buckets);
        m->buckets = NULL;
        m->n_buckets = 0;
        m->count = 0;
}

int hmap_reserve(struct hmap *m, size_t n)
{
        struct hnode **b;
        size_t size = m->n_buckets == 0 ? 16 : m->n_buckets;
        size_t i;

        /* Keep the load factor at or below 1; past half the address space
         * doubling would wrap to 0. */
        if (n > SIZE_MAX / 2 + 1) {
                return BATON_ENOMEM;
        }
        while (size < n) {
                size *= 2;
        }
        if (size == m->n_buckets) {
                return 0;
        }
        b = mem_calloc(m->mem, size, sizeof *b);
        if (b == NULL) {
                return BATON_ENOMEM;
        }
        for (i = 0; i < m->n_buckets; i++) {
                struct hnode *node = m->buckets[i];
                while (node != NULL) {
                        struct hnode *next = node->next;
                        struct hnode **slot = &b[node->hash & (size - 1)];
                        node->next = *slot;
                        *slot = node;
                        node = next;
                }
        }
        mem_free(m->mem, m->buckets);
        m->buckets = b;
        m->n_buckets = size;
        return 0;
}

void hmap_insert(struct hmap *m, struct hnode *node, uint64_t hash)
{
        struct hnode **slot;

        assert(m->count < m->n_buckets);
        slot = &m->buckets[hash & (m->n_buckets - 1)];
        node->hash = hash;
        node->next = *slot;
        *slot = node;
        m->count++;
}

void hmap_remove(struct hmap *m, struct hnode *node)
{
        struct hnode **slot = &m->buckets[node->hash & (m->n_buckets - 1)];

        while (*slot != node) {
                assert(*slot != NULL);
                slot = &(*slot)->next;
        }
        *slot = node->next;
        node->next = NULL;
        m->count--;
}

static struct hnode *match(struct hnode *node, uint64_t hash)
{
        while (node != NULL && node->hash != hash) {
                node = node->next;
        }
        return node;
}

struct hnode *hmap_first(const struct hmap *m, uint64_t hash)
{
        if (m->n_buckets == 0) {
                return NULL;
        }
        return match(m->buckets[hash & (m->n_buckets - 1)], hash);
}

struct hnode *hmap_next(const struct hnode *node)
{
        return match(node->next, node->hash);
}

/* splitmix64's finaliser: a fast bijective mix with good avalanche. */
uint64_t hash_u64(uint64_t v)
{
        v ^= v >> 30;
        v *= 0xbf58476d1ce4e5b9ULL;
        v ^= v >> 27;
        v *= 0x94d049bb133111ebULL;
        v ^= v >> 31;
        return v;
}

/* FNV-1a, finished with the 64-bit mix so low bits are well distributed. */
uint64_t hash_bytes(const void *p, size_t n)
{
        const unsigned char *b = p;
        uint64_t h = 0xcbf29ce484222325ULL;
        size_t i;

        for (i = 0; i < n; i++) {
                h ^= b[i];
                h *= 0x100000001b3ULL;
        }
        return hash_u64(h);
}
