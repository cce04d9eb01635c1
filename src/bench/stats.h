/* baton-bench: the statistics of a run's samples (sorted arrays of µs), and
 * its CPU time. */
#ifndef BENCH_STATS_H
#define BENCH_STATS_H

#include <stddef.h>
#include <stdint.h>

/* qsort() comparators. */
int cmp_u32(const void *a, const void *b);
int cmp_double(const void *a, const void *b);
/* Nearest rank: the 1-based rank of quantile `q` of `n` sorted samples. */
size_t rank_of(size_t n, double q);
/* The `q` quantile of the sorted `s` (0 when there is none). */
uint32_t percentile(const uint32_t *s, size_t n, double q);
/* The longest interval of the window with no completion by anyone (the
 * sorted completion times `done`, in µs); the window's start and end are
 * boundaries. Its start goes to `*at`. */
double longest_silence(const uint32_t *done, size_t total, double duration_s,
                       double *at);

/* The `q` quantile of the samples `lat` (unsorted, `total` of them) whose
 * completion time `done` (µs, paired with `lat`) falls in [from_s, to_s);
 * how many did goes to `*count`. 0 when none did (or out of memory). */
uint32_t window_percentile(const uint32_t *lat, const uint32_t *done,
                           size_t total, double from_s, double to_s, double q,
                           size_t *count);

/* This process's user and system CPU time so far, every thread, in
 * seconds. */
double process_cpu_s(void);

#endif /* BENCH_STATS_H */
