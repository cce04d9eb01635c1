/* Latency histograms with fixed buckets, as Prometheus exposes them. */
#include "histogram.h"

const uint64_t histogram_bounds_us[HISTOGRAM_N_BUCKETS - 1] = {
    100,   250,   500,    1000,   2500,   5000,    10000,
    25000, 50000, 100000, 250000, 500000, 1000000, 5000000};

const uint64_t histogram_long_bounds_us[HISTOGRAM_N_BUCKETS - 1] = {
    10000,      100000,     1000000,     5000000,    10000000,
    30000000,   60000000,   300000000,   600000000,  1800000000,
    3600000000, 7200000000, 21600000000, 86400000000};

static void add(struct histogram *h, const uint64_t *bounds, uint64_t ns)
{
        uint64_t us = ns / 1000;
        unsigned i = 0;

        while (i < HISTOGRAM_N_BUCKETS - 1 && us > bounds[i]) {
                i++;
        }
        h->buckets[i]++;
        h->count++;
        h->sum_us += us;
        if (us > h->max_us) {
                h->max_us = us;
        }
}

void histogram_add(struct histogram *h, uint64_t ns)
{
        add(h, histogram_bounds_us, ns);
}

void histogram_add_long(struct histogram *h, uint64_t ns)
{
        add(h, histogram_long_bounds_us, ns);
}
