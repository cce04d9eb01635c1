/* Latency histograms with fixed buckets, as Prometheus exposes them. */
#ifndef SERVER_HISTOGRAM_H
#define SERVER_HISTOGRAM_H

#include <stdint.h>

/* Bucket upper bounds, in microseconds, from 100 µs to 5 s; the last
 * bucket is +Inf. */
#define HISTOGRAM_N_BUCKETS 15
extern const uint64_t histogram_bounds_us[HISTOGRAM_N_BUCKETS - 1];

/* The bounds of histograms of long durations (how long locks are held),
 * in microseconds, from 10 ms to a day. */
extern const uint64_t histogram_long_bounds_us[HISTOGRAM_N_BUCKETS - 1];

struct histogram {
        uint64_t count;
        uint64_t sum_us;
        uint64_t max_us;
        uint64_t buckets[HISTOGRAM_N_BUCKETS]; /* not cumulative */
};

/* Count one observation of `ns` nanoseconds. */
void histogram_add(struct histogram *h, uint64_t ns);

/* Count one observation of `ns` nanoseconds into a histogram of
 * histogram_long_bounds_us. */
void histogram_add_long(struct histogram *h, uint64_t ns);

#endif /* SERVER_HISTOGRAM_H */
