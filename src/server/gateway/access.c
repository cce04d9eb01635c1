/* The cluster's access list on this node: the roles of clients from the
 * applied list, the first leader's seed, and administrators' ACL requests. */
#include "access.h"

#include <stdio.h>
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
#include "../../lib/cursor.h"
#include "../../proto/aclwire.h"

/* An ACL SET, REMOVE, RULE_SET, RULE_REMOVE, QUOTA_SET or QUOTA_REMOVE
 * from its arrival to its answer. Its outcome is taken when its entry is
 * applied (access_on_applied()): the raft callback runs later, when other
 * entries may have been applied over raft's result. */
struct aclreq {
        struct gateway_req req;
        struct reply_to to;
        struct gateway *g;
        struct queue link;          /* g->acl_inflight */
        struct proto_acl_request r; /* as asked; strings point below */
        uint8_t mode;               /* COMMAND_ACL_SET, ... */
        char identity[ACL_IDENTITY_MAX + 1];
        /* A rule's table: kind, prefix length, prefix; a quota set's:
         * its limits (command.h). */
        uint8_t table[2 + ACL_PREFIX_LEN_MAX];
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
                      "role, rule or quota lines in the config differ from "
                      "the cluster's access list, which wins: batonctl acl "
                      "list, batonctl rule list, batonctl quota list");
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
              "access list: proposing the config's %u role lines, %u "
              "rule lines, %u quota lines and default-role %s as the "
              "cluster's",
              g->config_acl.n, g->config_acl.n_prefix, g->config_acl.n_quota,
              acl_role_name(g->config_acl.default_role));
        pending_queue_own(g, &c);
}

/* The bytes of `a`'s table: a rule's or a quota set's, else none. */
static size_t table_len(const struct aclreq *a)
{
        switch (a->mode) {
        case COMMAND_ACL_RULE_SET:
        case COMMAND_ACL_RULE_REMOVE:
                return 2 + (size_t)a->table[1];
        case COMMAND_ACL_QUOTA_SET:
                return COMMAND_ACL_QUOTA_TABLE;
        default:
                return 0;
        }
}

/* Whether `a` asked for the ACL entry `c`. */
static bool asked(const struct aclreq *a, const struct command *c)
{
        size_t len = table_len(a);

        return a->mode == c->mode && a->r.role == c->role &&
               a->r.identity.len == c->name_len &&
               memcmp(a->identity, c->name, c->name_len) == 0 &&
               c->list_len == len &&
               (len == 0 || memcmp(a->table, c->list, len) == 0);
}

/* The first request waiting for this entry's outcome, if any. */
static void decide(struct gateway *g, const struct command *c, int status)
{
        struct queue *q;

        QUEUE_FOREACH(q, &g->acl_inflight)
        {
                struct aclreq *a = QUEUE_DATA(q, struct aclreq, link);
                if (!a->decided && asked(a, c)) {
                        a->decided = true;
                        a->status = status;
                        return;
                }
        }
}

/* A quota set's limits, " sessions=2 locks=10", into `buf`. */
static void quota_text(const struct command *c, char *buf, size_t size)
{
        uint32_t limit[ACL_QUOTA_KINDS] = {0};
        struct rcursor r;
        unsigned k;

        rcursor_init(&r, c->list, c->list_len);
        for (k = 0; k < ACL_QUOTA_KINDS; k++) {
                limit[k] = rcursor_u32(&r);
        }
        buf[0] = ' ';
        acl_quota_text(limit, buf + 1, size - 1);
}

/* The log line of an applied SET, REMOVE, RULE_SET, RULE_REMOVE,
 * QUOTA_SET or QUOTA_REMOVE. */
static void log_change(struct gateway *g, uint64_t index,
                       const struct command *c, int status)
{
        static const char *const verbs[] = {
            [COMMAND_ACL_SET] = "set",
            [COMMAND_ACL_REMOVE] = "remove",
            [COMMAND_ACL_SEED] = "seed",
            [COMMAND_ACL_RULE_SET] = "rule set",
            [COMMAND_ACL_RULE_REMOVE] = "rule remove",
            [COMMAND_ACL_QUOTA_SET] = "quota set",
            [COMMAND_ACL_QUOTA_REMOVE] = "quota remove",
        };
        bool rule = c->mode == COMMAND_ACL_RULE_SET ||
                    c->mode == COMMAND_ACL_RULE_REMOVE;
        char what[40 + ACL_PREFIX_LEN_MAX] = "";
        char perms[24];

        if (c->mode == COMMAND_ACL_SET) {
                snprintf(what, sizeof what, " to %s", acl_role_name(c->role));
        } else if (c->mode == COMMAND_ACL_QUOTA_SET) {
                quota_text(c, what, sizeof what);
        } else if (rule && c->list_len >= 2) {
                snprintf(what, sizeof what, "%s on \"%.*s\"%s%s",
                         c->list[0] == ACL_RULE_GROUP_PREFIX ? " (group)" : "",
                         (int)c->list[1], (const char *)c->list + 2,
                         c->mode == COMMAND_ACL_RULE_SET ? ": " : "",
                         c->mode == COMMAND_ACL_RULE_SET
                             ? acl_perms_name(c->role, perms, sizeof perms)
                             : "");
        }
        gwlog(g, LOG_INFO, NULL,
              "access list (entry %llu): %s '%.*s'%s by '%.*s': %s",
              (unsigned long long)index,
              c->mode <= COMMAND_ACL_QUOTA_REMOVE ? verbs[c->mode] : "change",
              (int)c->name_len, c->name, what, (int)c->address_len, c->address,
              status == 0 ? "done" : baton_strerror(status));
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
                      "%u rules, %u rules on names, %u quotas, default-role "
                      "%s",
                      (unsigned long long)index,
                      status == 0 ? "applied" : baton_strerror(status), a->n,
                      a->n_prefix, a->n_quota, acl_role_name(a->default_role));
        } else {
                log_change(g, index, c, status);
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
        gwaudit_acl(a->g, NULL, &a->who, &a->r, status);
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

/* The ACL entry mode of a change `op`. */
static uint8_t mode_of(uint8_t op)
{
        switch (op) {
        case PROTO_ACL_SET:
                return COMMAND_ACL_SET;
        case PROTO_ACL_REMOVE:
                return COMMAND_ACL_REMOVE;
        case PROTO_ACL_RULE_SET:
                return COMMAND_ACL_RULE_SET;
        case PROTO_ACL_RULE_REMOVE:
                return COMMAND_ACL_RULE_REMOVE;
        case PROTO_ACL_QUOTA_SET:
                return COMMAND_ACL_QUOTA_SET;
        default:
                return COMMAND_ACL_QUOTA_REMOVE;
        }
}

/* Copy the request `r` (borrowed from a frame) into `a`. */
static void take(struct aclreq *a, const struct proto_acl_request *r)
{
        a->r = *r;
        a->mode = mode_of(r->op);
        memcpy(a->identity, r->identity.p, r->identity.len);
        a->r.identity.p = a->identity;
        if (a->mode == COMMAND_ACL_RULE_SET ||
            a->mode == COMMAND_ACL_RULE_REMOVE) {
                a->table[0] = r->kind;
                a->table[1] = r->prefix.len;
                if (r->prefix.len > 0) {
                        memcpy(a->table + 2, r->prefix.p, r->prefix.len);
                }
                a->r.prefix.p = (const char *)a->table + 2;
        }
        if (a->mode == COMMAND_ACL_QUOTA_SET) {
                struct wcursor w;
                unsigned k;
                wcursor_init(&w, a->table, sizeof a->table);
                for (k = 0; k < ACL_QUOTA_KINDS; k++) {
                        wcursor_u32(&w, r->limits[k]);
                }
        }
}

/* The ACL entry of `a`, asked by `c`, into `buf`: its length, 0 when it
 * cannot be encoded. */
static size_t encode_change(const struct aclreq *a,
                            const struct gateway_conn *c, uint8_t *buf,
                            size_t cap)
{
        struct command cmd;

        memset(&cmd, 0, sizeof cmd);
        cmd.type = COMMAND_ACL;
        cmd.mode = a->mode;
        cmd.role = a->r.role;
        cmd.name = a->identity;
        cmd.name_len = (uint8_t)a->r.identity.len;
        cmd.address = c->identity; /* who asked, from the certificate */
        cmd.address_len =
            (uint8_t)strnlen(c->identity, COMMAND_CLIENT_NAME_MAX);
        if (table_len(a) > 0) {
                cmd.list = a->table;
                cmd.list_len = (uint16_t)table_len(a);
        }
        return command_encode(&cmd, buf, cap);
}

/* Propose an ACL entry for a change (every op but LIST); the answer
 * comes from on_done(). */
static void change(struct gateway *g, struct gateway_conn *c, uint64_t id,
                   const struct proto_acl_request *r)
{
        uint8_t buf[COMMAND_MAX_SIZE + ACL_PREFIX_LEN_MAX];
        struct aclreq *a = calloc(1, sizeof *a);
        void *entry = NULL;
        size_t len;
        int rv = BATON_ENOMEM;

        if (a == NULL) {
                gwaudit_acl(g, c, NULL, r, BATON_ENOMEM);
                reply_status(g, c, id, BATON_ENOMEM);
                return;
        }
        gwreq_init(&a->req, g, a, on_done, abandon);
        gwaudit_who_init(&a->who, c);
        a->g = g;
        take(a, r);
        len = encode_change(a, c, buf, sizeof buf);
        if (len > 0 && (entry = gwreq_entry_alloc(g, len)) != NULL) {
                memcpy(entry, buf, len);
                rv = gwreq_propose(&a->req, entry, len);
        }
        if (len == 0 || rv != 0) {
                rv = len == 0 ? BATON_EINVAL : rv;
                gwaudit_acl(g, c, NULL, &a->r, rv);
                gwreq_entry_free(g, entry);
                free(a);
                reply_status(g, c, id, rv);
                return;
        }
        reply_to_init(&a->to, c, id);
        queue_push_tail(&g->acl_inflight, &a->link);
}

/* The quotas of `a` into `r`, with what each identity uses now in this
 * node's applied state (the leader's: it answers LIST). */
static void quotas_of(struct gateway *g, const struct acl *a,
                      struct proto_acl_reply *r)
{
        const struct lockfsm *f = g->host->lockfsm_nowait(g->host);
        unsigned i;

        r->n_quota = (uint16_t)a->n_quota;
        for (i = 0; i < a->n_quota; i++) {
                const struct acl_quota *q = &a->quota[i];
                r->quotas[i].subject.p = q->subject;
                r->quotas[i].subject.len = q->subject_len;
                memcpy(r->quotas[i].limits, q->limit, sizeof q->limit);
                if (q->principal != 0 && f != NULL) {
                        lockfsm_quota_use(f, q->principal, r->quotas[i].used);
                }
        }
}

/* Answer a LIST with this node's applied list, or while the cluster has
 * none, the config's that stands in for it (seeded 0): 0, or
 * BATON_ENOMEM (answered so). */
static int list(struct gateway *g, struct gateway_conn *c, uint64_t id)
{
        const struct acl *a = g->host->acl(g->host);
        struct proto_acl_reply *r = calloc(1, sizeof *r);
        /* The encoding, and each quota's use. */
        size_t cap = PROTO_HEADER_SIZE + ACL_ENCODED_MAX + 8 +
                     PROTO_ACL_QUOTA_MAX * 4 * PROTO_QUOTA_USED;
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
        r->n_prefix = (uint16_t)a->n_prefix;
        for (i = 0; i < a->n_prefix; i++) {
                const struct acl_prefix_rule *p = &a->prefix[i];
                r->prefix[i].kind = p->kind;
                r->prefix[i].perms = p->perms;
                r->prefix[i].subject.p = p->subject;
                r->prefix[i].subject.len = p->subject_len;
                r->prefix[i].prefix.p = p->prefix;
                r->prefix[i].prefix.len = p->prefix_len;
        }
        quotas_of(g, a, r);
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
                gwaudit_acl(g, c, NULL, &r, list(g, c, h->id));
        } else if (!g->cfg->tls) {
                gwaudit_acl(g, c, NULL, &r, BATON_EUNSUPPORTED);
                reply_status(g, c, h->id, BATON_EUNSUPPORTED); /* no list */
        } else {
                change(g, c, h->id, &r);
        }
}
