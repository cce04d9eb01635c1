/* A one-shot STATUS of one node over a short connection of its own, for
 * baton_status() on a given endpoint and baton_status_version() (never the
 * handle's connection). */
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

/* The same with the node's versions (STATUS with PROTO_FLAG_VERSIONS) in
 * `*ver`; a node that refuses the flag (one before 0.2.0) is asked again
 * without it, on a second connection, and `*ver` says nothing but the
 * protocol version. */
int probe_status_version(const char *endpoint, struct tls_ctx *tls,
                         int64_t deadline, struct baton_status *out,
                         struct baton_node_version *ver);

/* probe_status_version() with the node's alarms (PROTO_FLAG_ALARMS) in
 * `*alarms`; a node that refuses the flag (one before 0.3.0) is asked
 * probe_status_version()'s question instead, and `alarms->known` is 0. */
int probe_status_alarms(const char *endpoint, struct tls_ctx *tls,
                        int64_t deadline, struct baton_status *out,
                        struct baton_node_version *ver,
                        struct baton_node_alarms *alarms);

#endif /* CLIENT_PROBE_H */
