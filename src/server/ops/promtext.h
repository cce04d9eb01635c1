/* Prometheus text exposition (version 0.0.4) written into a caller's
 * buffer: the metric families batond's metrics port serves. */
#ifndef SERVER_PROMTEXT_H
#define SERVER_PROMTEXT_H

#include <stddef.h>
#include <stdint.h>

#include "../base/histogram.h"

/* Text appended at p + len while it fits in `cap`; `len` counts what it
 * would need, so that a caller can retry with a larger buffer. */
struct promtext {
        char *p;
        size_t cap;
        size_t len;
};

/* Append printf-style text. */
void promtext_put(struct promtext *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* A family of one unlabelled sample, with its HELP and TYPE lines. */
void promtext_counter(struct promtext *o, const char *name, const char *help,
                      uint64_t v);
void promtext_gauge(struct promtext *o, const char *name, const char *help,
                    uint64_t v);

/* One series of histogram `h` counted with `bounds` (histogram_bounds_us
 * or histogram_long_bounds_us), its HELP and TYPE lines apart, labelled
 * `label`="`value`" unless `label` is NULL. */
void promtext_histogram(struct promtext *o, const char *name, const char *label,
                        const char *value, const struct histogram *h,
                        const uint64_t *bounds);

#endif /* SERVER_PROMTEXT_H */
