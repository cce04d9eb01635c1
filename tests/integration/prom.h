/* A checker of the Prometheus text exposition format (version 0.0.4), for
 * what batond serves on its metrics address. */
#ifndef TESTS_INTEGRATION_PROM_H
#define TESTS_INTEGRATION_PROM_H

#include <stdbool.h>
#include <stddef.h>

/* Whether `text` is valid Prometheus text exposition; `*samples` counts.
 * Says why not in `why` (`cap` bytes). */
bool prom_valid(const char *text, unsigned *samples, char *why, size_t cap);

/* The value of the sample written exactly `series` ("name" or
 * "name{labels}"). */
bool prom_value(const char *text, const char *series, double *v);

#endif /* TESTS_INTEGRATION_PROM_H */
