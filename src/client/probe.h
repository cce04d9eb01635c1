/* A one-shot STATUS of one node over a short connection of its own, for
 * baton_status() on a given endpoint (never the handle's connection). */
#ifndef CLIENT_PROBE_H
#define CLIENT_PROBE_H

#include <stdint.h>

#include "../../include/baton.h"
#include "../proto/proto.h"
#include "../tls/tls.h"

/* Ask `endpoint` ("host:port" or "[ipv6]:port") for its status before
 * `deadline` (CLOCK_MONOTONIC ms), over TLS with `tls` (borrowed; NULL:
 * plain). One connection attempt. 0, BATON_EINVAL, BATON_EIO,
 * BATON_ENOANSWER, BATON_ETLS or BATON_EMALFORMED. */
int probe_status(const char *endpoint, struct tls_ctx *tls, int64_t deadline,
                 struct baton_status *out);

#endif /* CLIENT_PROBE_H */
