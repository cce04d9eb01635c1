/* What the request core keeps of one client connection: where its
 * answers wait, who its client is, the sessions it proved it owns and its
 * watches; the host embeds it in its own connection record. */
#include "gwconn.h"

#include <string.h>

#include "../config/roles.h"

void gateway_conn_init(struct gateway_conn *c, uint64_t id,
                       const char *identity, bool plain)
{
        memset(c, 0, sizeof *c);
        queue_init(&c->waiting);
        queue_init(&c->host_link);
        queue_init(&c->core_link);
        c->id = id;
        c->identity = identity;
        c->address = "";
        c->endpoint = "";
        c->plain = plain;
        c->role = plain ? ROLES_ADMIN : ROLES_NONE;
}

bool gateway_conn_attached(const struct gateway_conn *c, uint64_t session)
{
        size_t i;

        for (i = 0; i < GATEWAY_MAX_ATTACHED && session != 0; i++) {
                if (c->attached[i] == session) {
                        return true;
                }
        }
        return false;
}

void gateway_conn_attach(struct gateway_conn *c, uint64_t session)
{
        size_t i;

        if (session == 0 || gateway_conn_attached(c, session)) {
                return;
        }
        /* The oldest falls off the end. */
        for (i = GATEWAY_MAX_ATTACHED - 1; i > 0; i--) {
                c->attached[i] = c->attached[i - 1];
        }
        c->attached[0] = session;
}
