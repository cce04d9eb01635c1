/* Prometheus text exposition written into a caller's buffer
 * (promtext.h). */
#include "promtext.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

void promtext_put(struct promtext *o, const char *fmt, ...)
{
        va_list ap;
        int n;

        va_start(ap, fmt);
        n = vsnprintf(o->len < o->cap ? o->p + o->len : NULL,
                      o->len < o->cap ? o->cap - o->len : 0, fmt, ap);
        va_end(ap);
        if (n > 0) {
                o->len += (size_t)n;
        }
}

void promtext_counter(struct promtext *o, const char *name, const char *help,
                      uint64_t v)
{
        promtext_put(o, "# HELP %s %s\n# TYPE %s counter\n%s %" PRIu64 "\n",
                     name, help, name, name, v);
}

void promtext_gauge(struct promtext *o, const char *name, const char *help,
                    uint64_t v)
{
        promtext_put(o, "# HELP %s %s\n# TYPE %s gauge\n%s %" PRIu64 "\n", name,
                     help, name, name, v);
}

void promtext_histogram(struct promtext *o, const char *name, const char *label,
                        const char *value, const struct histogram *h,
                        const uint64_t *bounds)
{
        char lab[64] = "", sep[72] = "";
        uint64_t cum = 0;
        unsigned b;

        if (label != NULL) {
                snprintf(lab, sizeof lab, "{%s=\"%s\"}", label, value);
                snprintf(sep, sizeof sep, "%s=\"%s\",", label, value);
        }
        for (b = 0; b < HISTOGRAM_N_BUCKETS; b++) {
                cum += h->buckets[b];
                if (b < HISTOGRAM_N_BUCKETS - 1) {
                        promtext_put(o, "%s_bucket{%sle=\"%g\"} %" PRIu64 "\n",
                                     name, sep, (double)bounds[b] / 1e6, cum);
                } else {
                        promtext_put(o,
                                     "%s_bucket{%sle=\"+Inf\"} %" PRIu64 "\n",
                                     name, sep, cum);
                }
        }
        promtext_put(o, "%s_sum%s %.6f\n%s_count%s %" PRIu64 "\n", name, lab,
                     (double)h->sum_us / 1e6, name, lab, h->count);
}
