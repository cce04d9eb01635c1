/* The monotonic clock in microseconds, for timing work in the server. */
#ifndef LIB_MONOTONIC_H
#define LIB_MONOTONIC_H

#include <stdint.h>
#include <time.h>

static inline uint64_t monotonic_us(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

#endif /* LIB_MONOTONIC_H */
