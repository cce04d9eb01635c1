/* Quotas per identity at a node's gateway (quotas.h). */
#include "quotas.h"

#include <string.h>

#include "../../../include/baton/errors.h"
#include "../../fsm/acl.h"
#include "../config/roles.h"
#include "core.h"
#include "gateway.h"

/* The applied list when `c` is subject to its quotas, else NULL. */
static const struct acl *limited(struct gateway *g,
                                 const struct gateway_conn *c)
{
        const struct acl *a;

        if (c->plain || c->role == ROLES_ADMIN || c->identity[0] == '\0') {
                return NULL;
        }
        a = g->host->acl(g->host);
        return acl_has_quotas(a) ? a : NULL;
}

uint64_t quotas_principal(struct gateway *g, const struct gateway_conn *c)
{
        return limited(g, c) != NULL
                   ? acl_principal(c->identity, strlen(c->identity))
                   : 0;
}

int quotas_take_open(struct gateway *g, const struct gateway_conn *c,
                     struct pending *p)
{
        uint8_t buf[COMMAND_MAX_SIZE];
        size_t n;

        p->cmd.principal = quotas_principal(g, c);
        n = command_encode(&p->cmd, buf, sizeof buf);
        if (n == 0) {
                return BATON_EINVAL;
        }
        memcpy(p->buf, buf, n);
        p->len = n;
        return command_decode(&p->cmd, p->buf, p->len);
}
