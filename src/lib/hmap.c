/* An intrusive chained hash map whose growth is separated from insertion. */
#include "hmap.h"

#include <assert.h>
#include <stdint.h>

#include "../../include/baton.h"

/* Old buckets moved to the new array by each insert and remove of a
 * gradual map: a doubling is done long before the map can fill the new
 * array (that takes as many inserts as the old array has buckets). */
#define MOVE_STEP 8

void hmap_init(struct hmap *m, const struct mem *mem)
{
        m->buckets = NULL;
        m->n_buckets = 0;
        m->count = 0;
        m->mem = mem;
        m->old = NULL;
        m->n_old = 0;
        m->moved = 0;
        m->gradual = 0;
}

void hmap_init_gradual(struct hmap *m, const struct mem *mem)
{
        hmap_init(m, mem);
        m->gradual = 1;
}

void hmap_close(struct hmap *m)
{
        int gradual = m->gradual;

        mem_free(m->mem, m->buckets);
        mem_free(m->mem, m->old);
        hmap_init(m, m->mem);
        m->gradual = gradual;
}

/* Push every node of the chain `node` onto its bucket of `b` (size a
 * power of two). */
static void rehash_chain(struct hnode *node, struct hnode **b, size_t size)
{
        while (node != NULL) {
                struct hnode *next = node->next;
                struct hnode **slot = &b[node->hash & (size - 1)];
                node->next = *slot;
                *slot = node;
                node = next;
        }
}

/* Move the nodes of up to `k` more old buckets; the old array goes once
 * the last is moved. */
static void move_some(struct hmap *m, size_t k)
{
        while (m->old != NULL && k-- > 0) {
                rehash_chain(m->old[m->moved], m->buckets, m->n_buckets);
                m->old[m->moved++] = NULL;
                if (m->moved == m->n_old) {
                        mem_free(m->mem, m->old);
                        m->old = NULL;
                        m->n_old = 0;
                        m->moved = 0;
                }
        }
}

/* The chain that holds, or would hold, the nodes of `hash`: an old
 * bucket not moved yet, else the bucket of the current array. */
static struct hnode **chain(const struct hmap *m, uint64_t hash)
{
        if (m->old != NULL) {
                size_t i = hash & (m->n_old - 1);
                if (i >= m->moved) {
                        return &m->old[i];
                }
        }
        return &m->buckets[hash & (m->n_buckets - 1)];
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
        if (m->gradual) {
                /* A doubling still under way ends first: only a reserve
                 * of more than the map grew by since can get here. */
                move_some(m, SIZE_MAX);
                if (m->count == 0) {
                        mem_free(m->mem, m->buckets);
                } else {
                        m->old = m->buckets;
                        m->n_old = m->n_buckets;
                        m->moved = 0;
                }
                m->buckets = b;
                m->n_buckets = size;
                return 0;
        }
        for (i = 0; i < m->n_buckets; i++) {
                rehash_chain(m->buckets[i], b, size);
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
        move_some(m, MOVE_STEP);
        slot = chain(m, hash);
        node->hash = hash;
        node->next = *slot;
        *slot = node;
        m->count++;
}

void hmap_remove(struct hmap *m, struct hnode *node)
{
        struct hnode **slot;

        move_some(m, MOVE_STEP);
        slot = chain(m, node->hash);
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
        return match(*chain(m, hash), hash);
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
