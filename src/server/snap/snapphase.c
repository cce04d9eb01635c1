/* Staggered snapshot indexes (snapphase.h). */
#include "snapphase.h"

/* 2^64 divided by the golden ratio. */
#define GOLDEN 0x9E3779B97F4A7C15ULL

uint32_t snapphase_of(uint64_t id, uint32_t threshold)
{
        /* The fraction's top 32 bits, scaled to [0, threshold). */
        uint64_t frac = (id * GOLDEN) >> 32;

        return (uint32_t)((frac * threshold) >> 32);
}

uint32_t snapphase_gap(uint64_t id, uint64_t index, uint32_t threshold)
{
        uint64_t past;

        if (threshold == 0) {
                return 0;
        }
        /* How far `index` is past the last index at this node's phase. */
        past = (index % threshold + threshold - snapphase_of(id, threshold)) %
               threshold;
        return (uint32_t)(threshold - past);
}
