/* A harness node's HTTP endpoints (metrics, health) over a plain socket,
 * and its memory; part of the harness (harness.h includes it). */
#ifndef TESTS_INTEGRATION_HARNESSHTTP_H
#define TESTS_INTEGRATION_HARNESSHTTP_H

#include <stddef.h>

struct harness;

/*
 * GET /metrics from node `id`'s metrics address over a plain socket
 * (HTTP/1.0, read to EOF). The body, NUL-terminated, goes to `buf`.
 * Returns its length, or -1 with h->errmsg (no answer within timeout_ms,
 * a status other than 200, or a reply that does not fit).
 */
long harness_metrics(struct harness *h, unsigned id, char *buf, size_t cap,
                     int timeout_ms);

/*
 * GET `path` from node `id`'s metrics address over a plain socket
 * (HTTP/1.0, read to EOF): `*status` gets the status code, `buf` the body,
 * NUL-terminated. Returns its length, or -1 with h->errmsg (no answer
 * within timeout_ms, not HTTP, or a reply that does not fit).
 */
long harness_http_get(struct harness *h, unsigned id, const char *path,
                      int *status, char *buf, size_t cap, int timeout_ms);

/* VmRSS of node `id` in KiB, from /proc/PID/status; -1 if unknown. */
long harness_rss_kib(const struct harness *h, unsigned id);

#endif /* TESTS_INTEGRATION_HARNESSHTTP_H */
