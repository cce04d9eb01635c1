/* Seeded randomness for tests: splitmix64, so a seed names one sequence. */
#ifndef TESTS_RNG_H
#define TESTS_RNG_H

#include <stddef.h>
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

/* A draw that is never 0, as a client core's environment gives its
 * random numbers (src/client/coreenv.h). */
static inline uint64_t rng_nonzero(struct rng *r)
{
        uint64_t v;

        do {
                v = rng_next(r);
        } while (v == 0);
        return v;
}

/* `n` bytes of draws into `buf`, eight from each, lowest byte first: a
 * seeded stand-in for a session's secret. */
static inline void rng_fill(struct rng *r, uint8_t *buf, size_t n)
{
        uint64_t v = 0;

        for (size_t i = 0; i < n; i++) {
                if (i % 8 == 0) {
                        v = rng_next(r);
                }
                buf[i] = (uint8_t)(v >> (8 * (i % 8)));
        }
}

#endif /* TESTS_RNG_H */
