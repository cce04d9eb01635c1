/* The cluster's access list on this node: the roles of clients from the
 * applied list, the first leader's seed, and administrators' ACL requests. */
#include "access.h"

#include <stdlib.h>
#include <string.h>

#include "../../../include/baton/errors.h"
#include "gwaudit.h"
#include "gwlog.h"
#include "../config/roles.h"
#include "gateway.h"
#include "gwreq.h"
#include "pending.h"
#include "reply.h"
#include "../../proto/aclwire.h"

/* An ACL SET or REMOVE from its arrival to its answer. Its outcome is
 * taken when its entry is applied (access_on_applied()): the raft callback runs
 * later, when other entries may have been applied over raft's result. */
struct aclreq {
        struct gateway_req req;
        struct reply_to to;
        struct gateway *g;
        struct queue link; /* g->acl_inflight */
        uint8_t mode;      /* COMMAND_ACL_SET or _REMOVE */
        uint8_t role;
        uint8_t len;
        char identity[ACL_IDENTITY_MAX + 1];
        bool decided; /* its entry was applied, with `status` */
        int status;
        struct gwaudit_who who; /* who asked, for its audit line */
};

void access_init(struct gateway *g)
{
        roles_config_acl(g->cfg, &g->config_acl);
        queue_init(&g->acl_inflight);
        access_compare(g);
}

enum roles_role access_role(struct gateway *g, const char *identity)
{
        return roles_decide(g->host->acl(g->host), &g->config_acl, g->cfg,
                            identity);
}

void access_refresh(struct gateway *g, struct gateway_conn *c)
{
        uint64_t epoch;

        if (c->plain) {
                return; /* plain mode: every client is an administrator */
        }
        epoch = g->host->acl_epoch(g->host);
        if (c->role_epoch != epoch) {
                c->role = (uint8_t)access_role(g, c->identity);
                c->role_epoch = epoch;
        }
}

void access_compare(struct gateway *g)
{
        const struct acl *a = g->host->acl(g->host);

        if (g->acl_compared || !a->seeded || !g->cfg->tls) {
                return;
        }
        g->acl_compared = true;
        if (!acl_equal(a, &g->config_acl)) {
                gwlog(g, LOG_WARN, NULL,
                      "role lines in the config differ from the cluster's "
                      "access list, which wins: batonctl acl list");
        }
}

void access_seed(struct gateway *g, uint64_t now_ms)
{
        g->acl_due_ms = now_ms + ACCESS_SEED_DELAY_MS(g->cfg);
}

void access_tick(struct gateway *g, uint64_t now_ms)
{
        uint8_t table[ACL_ENCODED_MAX];
        struct command c;

        if (!g->cfg->tls || g->host->acl(g->host)->seeded ||
            now_ms < g->acl_due_ms) {
                return;
        }
        g->acl_due_ms = now_ms + ACCESS_SEED_DELAY_MS(g->cfg);
        memset(&c, 0, sizeof c);
        c.type = COMMAND_ACL;
        c.mode = COMMAND_ACL_SEED;
        c.list = table;
        c.list_len = (uint16_t)acl_encode(&g->config_acl, table, sizeof table);
        gwlog(g, LOG_INFO, NULL,
              "access list: proposing the config's %u role lines and "
              "default-role %s as the cluster's",
              g->config_acl.n, acl_role_name(g->config_acl.default_role));
        pending_queue_own(g, &c);
}

/* The first request waiting for this entry's outcome, if any. */
static void decide(struct gateway *g, const struct command *c, int status)
{
        struct queue *q;

        QUEUE_FOREACH(q, &g->acl_inflight)
        {
                struct aclreq *a = QUEUE_DATA(q, struct aclreq, link);
                if (!a->decided && a->mode == c->mode && a->role == c->role &&
                    a->len == c->name_len &&
                    memcmp(a->identity, c->name, a->len) == 0) {
                        a->decided = true;
                        a->status = status;
                        return;
                }
        }
}

void access_on_applied(struct gateway *g, uint64_t index,
                       const struct command *c, int status)
{
        const struct acl *a = g->host->acl(g->host);

        if (c->mode == COMMAND_ACL_SEED) {
                /* The first seed sets the list, a later one changes
                 * nothing: either way, say what the list is now. */
                gwlog(g, LOG_INFO, NULL,
                      "access list (entry %llu): seed %s; the list has "
                      "%u rules, default-role %s",
                      (unsigned long long)index,
                      status == 0 ? "applied" : baton_strerror(status), a->n,
                      acl_role_name(a->default_role));
        } else {
                gwlog(g, LOG_INFO, NULL,
                      "access list (entry %llu): %s '%.*s'%s%s by '%.*s': "
                      "%s",
                      (unsigned long long)index,
                      c->mode == COMMAND_ACL_SET ? "set" : "remove",
                      (int)c->name_len, c->name,
                      c->mode == COMMAND_ACL_SET ? " to " : "",
                      c->mode == COMMAND_ACL_SET ? acl_role_name(c->role) : "",
                      (int)c->address_len, c->address,
                      status == 0 ? "done" : baton_strerror(status));
                decide(g, c, status);
        }
        access_compare(g);
}

/* Answer `a` with `status`, or with its entry's outcome when that was
 * applied; then nobody waits on it. */
static void answer(struct aclreq *a, int status)
{
        if (status == 0) {
                /* Decided when its entry was applied, before this runs. */
                status = a->decided ? a->status : BATON_EUNKNOWN;
        }
        gwaudit_acl(a->g, NULL, &a->who,
                    a->mode == COMMAND_ACL_SET ? PROTO_ACL_SET
                                               : PROTO_ACL_REMOVE,
                    a->identity, a->len, a->role, status);
        reply_status(a->g, a->to.conn, a->to.id, status);
        reply_to_close(&a->to);
        a->to.conn = NULL;
}

static void on_done(struct gateway_req *req, const struct gateway_now *now,
                    int status)
{
        struct aclreq *a = req->data;

        (void)now;
        if (!a->g->closed) { /* closed: abandon() answered it */
                answer(a, status);
        }
        queue_remove(&a->link);
        free(a);
}

/* gateway_close() with the entry still out: its outcome, if applied,
 * else unknown (it may still commit). */
static void abandon(struct gateway_req *req, const struct gateway_now *now)
{
        (void)now;
        answer(req->data, 0);
}

/* Propose an ACL entry for a SET or REMOVE; the answer comes from
 * on_done(). */
static void change(struct gateway *g, struct gateway_conn *c, uint64_t id,
                   const struct proto_acl_request *r)
{
        uint8_t buf[COMMAND_MAX_SIZE];
        struct aclreq *a = calloc(1, sizeof *a);
        struct command cmd;
        void *entry = NULL;
        size_t len;
        int rv = BATON_ENOMEM;

        if (a == NULL) {
                gwaudit_acl(g, c, NULL, r->op, (const char *)r->identity.p,
                            r->identity.len, r->role, BATON_ENOMEM);
                reply_status(g, c, id, BATON_ENOMEM);
                return;
        }
        gwreq_init(&a->req, g, a, on_done, abandon);
        gwaudit_who_init(&a->who, c);
        a->g = g;
        a->mode = r->op == PROTO_ACL_SET ? COMMAND_ACL_SET : COMMAND_ACL_REMOVE;
        a->role = r->op == PROTO_ACL_SET ? r->role : 0;
        a->len = r->identity.len;
        memcpy(a->identity, r->identity.p, r->identity.len);
        memset(&cmd, 0, sizeof cmd);
        cmd.type = COMMAND_ACL;
        cmd.mode = a->mode;
        cmd.role = a->role;
        cmd.name = a->identity;
        cmd.name_len = a->len;
        cmd.address = c->identity; /* who asked, from the certificate */
        cmd.address_len =
            (uint8_t)strnlen(c->identity, COMMAND_CLIENT_NAME_MAX);
        len = command_encode(&cmd, buf, sizeof buf);
        if (len > 0 && (entry = gwreq_entry_alloc(g, len)) != NULL) {
                memcpy(entry, buf, len);
                rv = gwreq_propose(&a->req, entry, len);
        }
        if (len == 0 || rv != 0) {
                rv = len == 0 ? BATON_EINVAL : rv;
                gwaudit_acl(g, c, NULL, r->op, a->identity, a->len, a->role,
                            rv);
                gwreq_entry_free(g, entry);
                free(a);
                reply_status(g, c, id, rv);
                return;
        }
        reply_to_init(&a->to, c, id);
        queue_push_tail(&g->acl_inflight, &a->link);
}

/* Answer a LIST with this node's applied list, or while the cluster has
 * none, the config's that stands in for it (seeded 0): 0, or
 * BATON_ENOMEM (answered so). */
static int list(struct gateway *g, struct gateway_conn *c, uint64_t id)
{
        const struct acl *a = g->host->acl(g->host);
        struct proto_acl_reply *r = calloc(1, sizeof *r);
        size_t cap = PROTO_HEADER_SIZE + ACL_ENCODED_MAX + 8;
        uint8_t *out;
        unsigned i;

        if (r == NULL) {
                reply_status(g, c, id, BATON_ENOMEM);
                return BATON_ENOMEM;
        }
        r->seeded = a->seeded;
        if (!a->seeded) {
                a = &g->config_acl;
        }
        r->default_role = a->default_role;
        r->n = (uint16_t)a->n;
        for (i = 0; i < a->n; i++) {
                r->rules[i].kind = a->rules[i].kind;
                r->rules[i].role = a->rules[i].role;
                r->rules[i].identity.p = a->rules[i].identity;
                r->rules[i].identity.len = a->rules[i].len;
        }
        out = reply_reserve(g, c, cap);
        if (out != NULL) {
                reply_frame(g, c, id, proto_write_acl_reply(out, cap, id, r));
        }
        free(r);
        return 0;
}

void access_on_frame(struct gateway *g, struct gateway_conn *c,
                     const struct proto_header *h, const uint8_t *body)
{
        struct proto_acl_request r;

        if (proto_read_acl(body, h->length, &r) != 0) {
                reply_fail(g, c, h->id, BATON_EMALFORMED,
                           "malformed ACL request");
                return;
        }
        if (!g->serving) {
                pending_not_leader(g, c, h->id);
                return;
        }
        if (r.op == PROTO_ACL_LIST) {
                gwaudit_acl(g, c, NULL, r.op, NULL, 0, 0, list(g, c, h->id));
        } else if (!g->cfg->tls) {
                gwaudit_acl(g, c, NULL, r.op, (const char *)r.identity.p,
                            r.identity.len, r.role, BATON_EUNSUPPORTED);
                reply_status(g, c, h->id, BATON_EUNSUPPORTED); /* no list */
        } else {
                change(g, c, h->id, &r);
        }
}
