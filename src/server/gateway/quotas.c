/* Quotas per identity at a node's gateway (quotas.h). */
#include "quotas.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../../include/baton/errors.h"
#include "../../fsm/acl.h"
#include "../config/roles.h"
#include "core.h"
#include "gateway.h"
#include "gwaudit.h"
#include "gwlog.h"
#include "reply.h"

/* One identity's bucket of requests on this node, in thousandths of a
 * request: `rate` requests a second refill it up to `rate` (one second's
 * worth of burst). */
struct rate {
        struct hnode node; /* gateway.rates, by principal */
        uint64_t principal;
        uint64_t milli;
        uint64_t at_ms; /* when it was last refilled */
};

/* Buckets kept before idle ones are dropped: a bucket unused for a
 * second is full, the same as a new one, so dropping it changes nothing. */
#define RATES_SWEEP 4096

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
        p->cmd.principal = quotas_principal(g, c);
        return pending_recode(p);
}

void quotas_init(struct gateway *g)
{
        hmap_init(&g->rates, &mem_libc);
}

/* Drop the buckets unused since `before_ms` (every one: 0 - 1). */
static void sweep(struct gateway *g, uint64_t before_ms)
{
        size_t i;

        for (i = 0; i < g->rates.n_buckets; i++) {
                struct hnode *n = g->rates.buckets[i];
                while (n != NULL) {
                        struct hnode *next = n->next;
                        struct rate *r = HMAP_DATA(n, struct rate, node);
                        if (r->at_ms < before_ms) {
                                hmap_remove(&g->rates, n);
                                free(r);
                        }
                        n = next;
                }
        }
}

void quotas_close(struct gateway *g)
{
        sweep(g, UINT64_MAX);
        hmap_close(&g->rates);
}

/* The bucket of `principal`, full when new; NULL when out of memory (the
 * request then goes on: a quota is no reason to fail a node). */
static struct rate *bucket(struct gateway *g, uint64_t principal,
                           uint32_t limit, uint64_t now_ms)
{
        struct hnode *n;
        struct rate *r;

        for (n = hmap_first(&g->rates, hash_u64(principal)); n != NULL;
             n = hmap_next(n)) {
                r = HMAP_DATA(n, struct rate, node);
                if (r->principal == principal) {
                        return r;
                }
        }
        if (g->rates.count >= RATES_SWEEP && now_ms >= 1000) {
                sweep(g, now_ms - 1000);
        }
        if (hmap_reserve(&g->rates, g->rates.count + 1) != 0 ||
            (r = calloc(1, sizeof *r)) == NULL) {
                return NULL;
        }
        r->principal = principal;
        r->milli = (uint64_t)limit * 1000;
        r->at_ms = now_ms;
        hmap_insert(&g->rates, &r->node, hash_u64(principal));
        return r;
}

/* Whether a request of `principal` fits its bucket now (taking it). */
static bool take_token(struct gateway *g, uint64_t principal, uint32_t limit,
                       uint64_t now_ms)
{
        struct rate *r = bucket(g, principal, limit, now_ms);
        uint64_t full = (uint64_t)limit * 1000;

        if (r == NULL) {
                return true;
        }
        if (now_ms > r->at_ms) {
                /* limit a second: limit thousandths a millisecond. */
                r->milli += (now_ms - r->at_ms) * limit;
                r->at_ms = now_ms;
        }
        if (r->milli > full) {
                r->milli = full;
        }
        if (r->milli < 1000) {
                return false;
        }
        r->milli -= 1000;
        return true;
}

/* The watches open on this node by connections of `c`'s identity. */
static uint64_t watches_of(const struct gateway *g,
                           const struct gateway_conn *c)
{
        const struct queue *q;
        uint64_t n = 0;

        QUEUE_FOREACH(q, &g->conns)
        {
                const struct gateway_conn *o =
                    QUEUE_DATA(q, struct gateway_conn, core_link);
                if (o->n_watches > 0 && strcmp(o->identity, c->identity) == 0) {
                        n += o->n_watches;
                }
        }
        return n;
}

/* Whether frames of `type` count against the rate. */
static bool counted(uint8_t type)
{
        return type == PROTO_COMMAND || type == PROTO_QUERY ||
               type == PROTO_CHECK || type == PROTO_LIST ||
               type == PROTO_SESSIONS || type == PROTO_WATCH;
}

/* Answer request `h` BATON_EQUOTA for quota `kind` of `limit`. */
static void refuse(struct gateway *g, struct gateway_conn *c,
                   const struct proto_header *h, const uint8_t *body, int kind,
                   uint32_t limit)
{
        struct proto_result r;
        char why[64];

        memset(&r, 0, sizeof r);
        r.status = BATON_EQUOTA;
        r.kind = PROTO_KIND_REJECTED;
        r.count = limit;
        r.waiters = (uint32_t)kind;
        g->stats.quota_refused[kind]++;
        snprintf(why, sizeof why, "quota %s = %u used up", acl_quota_name(kind),
                 limit);
        gwlog(g, LOG_WARN,
              &(struct log_fields){.connection = c->id, .request = h->id},
              "refused %s from '%s' (connection %llu): %s",
              proto_type_name(h->type), c->identity, (unsigned long long)c->id,
              why);
        gwaudit_refused(g, c, h, body, why);
        reply_result(g, c, h->id, &r);
}

bool quotas_admit(struct gateway *g, const struct gateway_now *now,
                  struct gateway_conn *c, const struct proto_header *h,
                  const uint8_t *body)
{
        const struct acl *a;
        const uint32_t *limit;
        uint64_t principal;

        if (!counted(h->type) || (a = limited(g, c)) == NULL) {
                return true;
        }
        principal = acl_principal(c->identity, strlen(c->identity));
        if ((limit = acl_quota_of(a, principal)) == NULL) {
                return true;
        }
        if (limit[ACL_QUOTA_RATE] != 0 &&
            !take_token(g, principal, limit[ACL_QUOTA_RATE], now->ms)) {
                refuse(g, c, h, body, ACL_QUOTA_RATE, limit[ACL_QUOTA_RATE]);
                return false;
        }
        if (h->type == PROTO_WATCH && limit[ACL_QUOTA_WATCHES] != 0 &&
            watches_of(g, c) >= limit[ACL_QUOTA_WATCHES]) {
                refuse(g, c, h, body, ACL_QUOTA_WATCHES,
                       limit[ACL_QUOTA_WATCHES]);
                return false;
        }
        return true;
}
