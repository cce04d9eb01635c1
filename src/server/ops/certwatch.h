/* The end of validity of the certificate a node serves with, watched: a
 * warning at start and once a day while it falls within
 * tls-expiry-warn-days, and the time it has left for the metrics. */
#ifndef SERVER_CERTWATCH_H
#define SERVER_CERTWATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "../config/config.h"

/* How often the warning is said again while it holds. */
#define CERTWATCH_PERIOD_MS (24u * 3600u * 1000u)

struct certwatch {
        uv_timer_t timer;
        const struct config *cfg; /* borrowed: tls-cert, the warning days */
        int64_t not_after;        /* seconds since the epoch; 0: no TLS */
        bool active;              /* the timer runs */
};

/*
 * What to say of a certificate `path` that ends at `not_after` at time
 * `now` (seconds since the epoch) with a window of `days`: false when it
 * is good for longer (or `days` is 0), else true with the warning in
 * `out` (one sentence: the file, the days left or that it has expired,
 * and what to do).
 */
bool certwatch_warning(const char *path, int64_t not_after, int64_t now,
                       uint32_t days, char *out, size_t size);

/* Watch cfg->tls_cert, which ends at `not_after` (0: TLS is off, nothing
 * to watch): warns now when due, then once every CERTWATCH_PERIOD_MS.
 * `cfg` is borrowed until certwatch_close(). The timer does not keep the
 * loop alive. */
void certwatch_start(struct certwatch *w, uv_loop_t *loop,
                     const struct config *cfg, int64_t not_after);

/* The certificate was read again (SIGHUP): take its end of validity from
 * the file, and warn now when due. */
void certwatch_reread(struct certwatch *w);

/* Seconds the certificate has left at `now` (negative once expired); 0
 * without TLS. */
int64_t certwatch_left(const struct certwatch *w, int64_t now);

/* Stop and close the timer (its close completes on the loop). */
void certwatch_close(struct certwatch *w);

#endif /* SERVER_CERTWATCH_H */
