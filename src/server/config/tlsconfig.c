/* batond's TLS settings read out of its config (see tlsconfig.h). */
#include "tlsconfig.h"

#include <stdio.h>
#include <string.h>

#include "../../../include/baton.h"

/* TLS is on unless turned off, and then needs its three files. Without
 * "{id}" every node would present the same identity, and one node's key
 * could speak for all. */
int tlsconfig_check(const struct config *c, char *errmsg, size_t errmsg_size)
{
        static const char *const hint =
            "set tls-ca, tls-cert and tls-key (scripts/cluster up makes "
            "them), or tls = off for a trusted single host";
        char identity[CONFIG_IDENTITY_MAX];

        if (!c->tls && !c->metrics_tls) {
                return 0;
        }
        if (c->tls_ca[0] == '\0') {
                return settings_fail(errmsg, errmsg_size,
                                     "tls-ca: not set, and TLS is on: %s",
                                     hint);
        }
        if (c->tls_cert[0] == '\0') {
                return settings_fail(errmsg, errmsg_size,
                                     "tls-cert: not set, and TLS is on: %s",
                                     hint);
        }
        if (c->tls_key[0] == '\0') {
                return settings_fail(errmsg, errmsg_size,
                                     "tls-key: not set, and TLS is on: %s",
                                     hint);
        }
        if (c->tls && strstr(c->tls_peer_identity, "{id}") == NULL) {
                return settings_fail(errmsg, errmsg_size,
                                     "tls-peer-identity: '%s' has no {id}, so "
                                     "every node would have the same identity",
                                     c->tls_peer_identity);
        }
        if (tlsconfig_peer_identity(c, UINT64_MAX, identity, sizeof identity) !=
            0) {
                return settings_fail(errmsg, errmsg_size,
                                     "tls-peer-identity: too long");
        }
        return 0;
}

int tlsconfig_peer_identity(const struct config *c, uint64_t id, char *out,
                            size_t size)
{
        const char *at = strstr(c->tls_peer_identity, "{id}");
        int n;

        if (at == NULL) {
                n = snprintf(out, size, "%s", c->tls_peer_identity);
        } else {
                n = snprintf(out, size, "%.*s%llu%s",
                             (int)(at - c->tls_peer_identity),
                             c->tls_peer_identity, (unsigned long long)id,
                             at + strlen("{id}"));
        }
        return n < 0 || (size_t)n >= size ? BATON_EINVAL : 0;
}

int tlsconfig_client_port(const struct config *c, struct tls_ctx **out,
                          char *errmsg, size_t size)
{
        struct tls_files f;

        f.ca = c->tls_client_ca[0] != '\0' ? c->tls_client_ca : c->tls_ca;
        f.cert = c->tls_cert;
        f.key = c->tls_key;
        f.crl = c->tls_crl;
        return tls_ctx_create(out, TLS_SERVER, &f, errmsg, size);
}

int tlsconfig_metrics_port(const struct config *c, struct tls_ctx **out,
                           char *errmsg, size_t size)
{
        int rv = tlsconfig_client_port(c, out, errmsg, size);

        if (rv == 0) {
                tls_ctx_client_cert_optional(*out);
        }
        return rv;
}
