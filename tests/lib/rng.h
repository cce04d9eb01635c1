/* Seeded randomness for tests: splitmix64, so a seed names one sequence. */
#ifndef TESTS_RNG_H
#define TESTS_RNG_H

#include <stdint.h>

#include "../../src/lib/hmap.h"

struct rng {
        uint64_t s;
};

/* splitmix64: a Weyl sequence through the same finaliser as hash_u64. */
static inline uint64_t rng_next(struct rng *r)
{
        return hash_u64(r->s += 0x9e3779b97f4a7c15ULL);
}

/* Uniform enough in [0, n) for tests; 0 when n is 0. */
static inline uint32_t rng_below(struct rng *r, uint32_t n)
{
        return n == 0 ? 0 : (uint32_t)(rng_next(r) % n);
}

#endif /* TESTS_RNG_H */
