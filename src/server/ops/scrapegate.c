/* Who gets what on the metrics port (see scrapegate.h). */
#include "scrapegate.h"

#include <stdio.h>
#include <string.h>

#include "../config/roles.h"

/* A TLS record of type handshake; every TLS client opens with one. */
#define HANDSHAKE_RECORD 0x16

enum scrapegate_wire scrapegate_sniff(const uint8_t *p, size_t n)
{
        if (n == 0) {
                return SCRAPEGATE_MORE;
        }
        if (p[0] == HANDSHAKE_RECORD) {
                return SCRAPEGATE_TLS;
        }
        /* Every HTTP method is a token of upper-case letters (GET, HEAD);
         * anything else is neither protocol, and waiting for more of it
         * would only hold a connection until its deadline. */
        if (p[0] >= 'A' && p[0] <= 'Z') {
                return SCRAPEGATE_HTTP;
        }
        return SCRAPEGATE_OTHER;
}

enum scrapegate_path scrapegate_path(const char *path)
{
        if (strcmp(path, "/health") == 0) {
                return SCRAPEGATE_HEALTH;
        }
        if (strcmp(path, "/ready") == 0) {
                return SCRAPEGATE_READY;
        }
        return SCRAPEGATE_METRICS;
}

bool scrapegate_role_reads(int role)
{
        return role == ROLES_READ || role == ROLES_ADMIN;
}

enum scrapegate_answer scrapegate_decide(const struct scrapegate_port *port,
                                         bool over_tls,
                                         enum scrapegate_path path, int role)
{
        if (!over_tls) {
                if (!port->tls && port->loopback) {
                        return SCRAPEGATE_FULL;
                }
                return path == SCRAPEGATE_METRICS ? SCRAPEGATE_NEEDS_TLS
                                                  : SCRAPEGATE_LIVENESS;
        }
        if (path != SCRAPEGATE_METRICS || scrapegate_role_reads(role)) {
                return SCRAPEGATE_FULL;
        }
        return SCRAPEGATE_NEEDS_ROLE;
}

size_t scrapegate_refusal(enum scrapegate_answer a,
                          const struct scrapegate_port *port,
                          const char *identity, const char *role, char *buf,
                          size_t cap)
{
        static const char need[] =
            "metrics need TLS and a client certificate whose role is read "
            "or admin";
        int n;

        if (a == SCRAPEGATE_NEEDS_ROLE &&
            (identity == NULL || identity[0] == '\0')) {
                n = snprintf(buf, cap,
                             "%s; this connection presented no client "
                             "certificate\n",
                             need);
        } else if (a == SCRAPEGATE_NEEDS_ROLE) {
                n = snprintf(buf, cap,
                             "metrics need a client certificate whose role is "
                             "read or admin; this one's identity '%s' has "
                             "role %s\n",
                             identity, role != NULL ? role : "none");
        } else if (port->tls) {
                n = snprintf(buf, cap,
                             "%s; over plain HTTP this port answers only "
                             "/health and /ready, with liveness\n",
                             need);
        } else {
                n = snprintf(buf, cap,
                             "%s; this port has no TLS (metrics-tls = false) "
                             "and is not on loopback, so it answers only "
                             "/health and /ready, with liveness: set "
                             "metrics-tls = true\n",
                             need);
        }
        return n < 0 ? 0 : (size_t)n;
}
