/* batond's TLS settings read out of its config: the checks on them, each
 * port's credentials, and the identity each node presents. */
#ifndef SERVER_TLSCONFIG_H
#define SERVER_TLSCONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "../../tls/tls.h"
#include "settings.h"

/* With tls (or metrics-tls) on: the CA, certificate and key are set, and
 * tls-peer-identity holds "{id}". 0, or BATON_EINVAL with a message
 * naming the key. */
int tlsconfig_check(const struct config *c, char *errmsg, size_t errmsg_size);

/* The identity node `id` presents on the raft port: tls-peer-identity with
 * "{id}" replaced by the id, into `out`. 0, or BATON_EINVAL when it does
 * not fit in `size` bytes. */
int tlsconfig_peer_identity(const struct config *c, uint64_t id, char *out,
                            size_t size);

/* The credentials of a port clients come to (the client port, the metrics
 * port): the node's certificate and key, client certificates checked
 * against tls-client-ca (else tls-ca) and tls-crl. The files are read now.
 * 0, or BATON_ETLS / BATON_ENOMEM with the reason in `errmsg`. */
int tlsconfig_client_port(const struct config *c, struct tls_ctx **out,
                          char *errmsg, size_t size);

/* The credentials of the metrics port: those of the client port, with the
 * client certificate optional, since /health and /ready over TLS are for
 * anyone and /metrics checks the certificate's role itself (scrapegate.h).
 * 0, or as tlsconfig_client_port(). */
int tlsconfig_metrics_port(const struct config *c, struct tls_ctx **out,
                           char *errmsg, size_t size);

#endif /* SERVER_TLSCONFIG_H */
