/* The metric families a Prometheus user expects of any server, and the
 * node's raft, request and grant families beyond metrics.c's: build and
 * process, leaders seen and voters reached, requests' waits, holds and
 * keepalive gaps, expiries and revokes, the data directory's write times
 * and the certificate's end. */
#ifndef SERVER_METRICSNODE_H
#define SERVER_METRICSNODE_H

#include "metrics.h"
#include "promtext.h"

/* Append those families, read from `m`'s sources now. */
void metricsnode_render(struct promtext *o, const struct metrics *m);

#endif /* SERVER_METRICSNODE_H */
