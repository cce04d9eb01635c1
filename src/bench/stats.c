/* baton-bench: the statistics of a run's samples, and its CPU time. */
#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <sys/resource.h>

int cmp_u32(const void *a, const void *b)
{
        uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

        return x < y ? -1 : x > y;
}

int cmp_double(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;

        return x < y ? -1 : x > y;
}

/* Nearest rank: s[ceil(q * n) - 1] of the sorted samples. */
size_t rank_of(size_t n, double q)
{
        size_t r = (size_t)ceil(q * (double)n);

        if (r < 1) {
                r = 1;
        }
        return r > n ? n : r;
}

uint32_t percentile(const uint32_t *s, size_t n, double q)
{
        return n == 0 ? 0 : s[rank_of(n, q) - 1];
}

/* The longest interval of the window with no completion by anyone (the
 * sorted completion times `done`, in µs); the window's start and end are
 * boundaries. Its start goes to `*at`. */
double longest_silence(const uint32_t *done, size_t total, double duration_s,
                       double *at)
{
        double gap = 0, prev = 0;
        size_t k;

        *at = 0;
        for (k = 0; k < total; k++) {
                double t = done[k] / 1e6;

                if (t - prev > gap) {
                        gap = t - prev;
                        *at = prev;
                }
                prev = t;
        }
        if (duration_s - prev > gap) {
                gap = duration_s - prev;
                *at = prev;
        }
        return gap;
}

double process_cpu_s(void)
{
        struct rusage ru;

        getrusage(RUSAGE_SELF, &ru);
        return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
               (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

uint32_t window_percentile(const uint32_t *lat, const uint32_t *done,
                           size_t total, double from_s, double to_s, double q,
                           size_t *count)
{
        uint32_t *in = malloc((total != 0 ? total : 1) * sizeof *in);
        uint32_t v;
        size_t n = 0;

        *count = 0;
        if (in == NULL) {
                return 0;
        }
        for (size_t k = 0; k < total; k++) {
                double t = done[k] / 1e6;
                if (t >= from_s && t < to_s) {
                        in[n++] = lat[k];
                }
        }
        qsort(in, n, sizeof *in, cmp_u32);
        v = percentile(in, n, q);
        free(in);
        *count = n;
        return v;
}
