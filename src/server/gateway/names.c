/* Rules on lock names, applied to one client's requests. */
#include "names.h"

#include <stdio.h>

#include "../../../include/baton/errors.h"
#include "../config/roles.h"
#include "core.h"
#include "gateway.h"
#include "gwaudit.h"
#include "gwlog.h"

/* The applied list, or NULL when names are open to every client. */
static const struct acl *closed(struct gateway *g, const struct gateway_conn *c)
{
        const struct acl *a;

        if (c->plain || c->role == ROLES_ADMIN) {
                return NULL;
        }
        a = g->host->acl(g->host);
        return acl_has_prefix_rules(a) ? a : NULL;
}

static struct acl_who who_of(const struct gateway_conn *c)
{
        struct acl_who w = {c->identity, c->groups, c->groups_len};

        return w;
}

bool names_open(struct gateway *g, const struct gateway_conn *c)
{
        return closed(g, c) == NULL;
}

uint8_t names_perms(struct gateway *g, const struct gateway_conn *c,
                    const char *name, size_t len)
{
        const struct acl *a = closed(g, c);
        struct acl_who w;

        if (a == NULL) {
                return ACL_PERM_ALL;
        }
        w = who_of(c);
        return acl_name_perms(a, &w, name, len);
}

bool names_reaches(struct gateway *g, const struct gateway_conn *c,
                   const char *prefix, size_t len, uint8_t perm)
{
        const struct acl *a = closed(g, c);
        struct acl_who w;

        if (a == NULL) {
                return true;
        }
        w = who_of(c);
        return acl_prefix_reaches(a, &w, prefix, len, perm);
}

const char *names_missing(uint8_t perm, const char *name, size_t len,
                          bool prefix, char *buf, size_t size)
{
        char perms[24];
        int shown = len > 64 ? 64 : (int)len;

        acl_perms_name(perm, perms, sizeof perms);
        snprintf(buf, size, "no rule gives %s on %s\"%.*s%s\"", perms,
                 prefix ? "names under " : "", shown, name,
                 len > 64 ? "..." : "");
        return buf;
}

int names_refuse(struct gateway *g, const struct gateway_conn *c,
                 const char *action, const char *target, size_t len,
                 const char *why)
{
        struct audit_event e = {.action = action,
                                .target = target,
                                .target_len = len,
                                .result = BATON_EPERM,
                                .detail = why};

        g->stats.refused++;
        gwlog(g, LOG_WARN, &(struct log_fields){.connection = c->id},
              "refused %s from '%s' (connection %llu): %s", action, c->identity,
              (unsigned long long)c->id, why);
        gwaudit(g, c, &e);
        return BATON_EPERM;
}

int names_admit(struct gateway *g, const struct gateway_conn *c,
                const char *action, const char *name, size_t len, bool prefix,
                uint8_t perm)
{
        char why[NAMES_MISSING_MAX];
        bool ok = prefix ? names_reaches(g, c, name, len, perm)
                         : (names_perms(g, c, name, len) & perm) == perm;

        if (ok) {
                return 0;
        }
        names_missing(perm, name, len, prefix, why, sizeof why);
        return names_refuse(g, c, action, name, len, why);
}
