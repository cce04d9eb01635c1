/* The request core's lines of the audit trail (base/audit.h): each
 * administrator's request it answers and each request it refuses for want
 * of permission, with who sent it, written by its host
 * (gateway_host.audit). */
#include "gwaudit.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../../include/baton/errors.h"
#include "../../fsm/acl.h"
#include "../../proto/aclwire.h"
#include "../../proto/member.h"
#include "core.h"
#include "gateway.h"

void gwaudit_who_init(struct gwaudit_who *w, const struct gateway_conn *c)
{
        snprintf(w->identity, sizeof w->identity, "%s",
                 c->identity != NULL ? c->identity : "");
        snprintf(w->address, sizeof w->address, "%s",
                 c->endpoint != NULL ? c->endpoint : "");
}

struct gwaudit_who *gwaudit_who_new(const struct gateway_conn *c)
{
        struct gwaudit_who *w = malloc(sizeof *w);

        if (w != NULL) {
                gwaudit_who_init(w, c);
        }
        return w;
}

void gwaudit_as(struct gateway *g, const struct gwaudit_who *w,
                struct audit_event *e)
{
        e->identity = w != NULL ? w->identity : "";
        e->address = w != NULL ? w->address : "";
        g->host->audit(g->host, e);
}

void gwaudit(struct gateway *g, const struct gateway_conn *c,
             struct audit_event *e)
{
        e->identity = c != NULL ? c->identity : "";
        e->address = c != NULL ? c->endpoint : "";
        g->host->audit(g->host, e);
}

/* `e` sent by `w`, or when that is NULL by `c`. */
static void from(struct gateway *g, const struct gateway_conn *c,
                 const struct gwaudit_who *w, struct audit_event *e)
{
        if (w != NULL) {
                gwaudit_as(g, w, e);
        } else {
                gwaudit(g, c, e);
        }
}

/* `v` in decimal into `buf` (21 bytes); its length. */
static size_t decimal(char *buf, uint64_t v)
{
        return (size_t)snprintf(buf, 21, "%" PRIu64, v);
}

void gwaudit_id(struct gateway *g, const struct gateway_conn *c,
                const char *action, uint64_t id, int result, const char *detail)
{
        char target[21];
        struct audit_event e = {.action = action,
                                .target = target,
                                .target_len = decimal(target, id),
                                .result = result,
                                .detail = detail};

        gwaudit(g, c, &e);
}

/* A command's line, from `c` or `w` as gwaudit_command() says. */
static void command_line(struct gateway *g, const struct gateway_conn *c,
                         const struct gwaudit_who *w, const struct command *cmd,
                         struct audit_event *e)
{
        char session[21];

        e->action = command_type_name(cmd->type);
        /* A REVOKE's name is who asked (gateway.c's take_revoke()), an
         * OPEN's its client's name: neither is what they act on. */
        if (cmd->name_len > 0 && cmd->type != COMMAND_REVOKE &&
            cmd->type != COMMAND_OPEN) {
                e->target = cmd->name;
                e->target_len = cmd->name_len;
        } else if (cmd->session != 0) {
                e->target = session;
                e->target_len = decimal(session, cmd->session);
        }
        from(g, c, w, e);
}

void gwaudit_command(struct gateway *g, const struct gateway_conn *c,
                     const struct gwaudit_who *w, const struct command *cmd,
                     int result, const char *detail)
{
        struct audit_event e = {.result = result, .detail = detail};
        char grant[64];

        if (detail == NULL && cmd->type == COMMAND_REVOKE_LOCK) {
                snprintf(grant, sizeof grant,
                         "session %" PRIu64 " token %" PRIu64, cmd->session,
                         cmd->token);
                e.detail = grant;
        }
        command_line(g, c, w, cmd, &e);
}

/* An ACL request's action: its op's name. */
static const char *acl_action(uint8_t op)
{
        static const char *const ops[] = {
            [PROTO_ACL_LIST] = "ACL_LIST",
            [PROTO_ACL_SET] = "ACL_SET",
            [PROTO_ACL_REMOVE] = "ACL_REMOVE",
            [PROTO_ACL_RULE_SET] = "RULE_SET",
            [PROTO_ACL_RULE_REMOVE] = "RULE_REMOVE",
            [PROTO_ACL_QUOTA_SET] = "QUOTA_SET",
            [PROTO_ACL_QUOTA_REMOVE] = "QUOTA_REMOVE",
        };

        return op <= PROTO_ACL_QUOTA_REMOVE ? ops[op] : "ACL";
}

void gwaudit_acl(struct gateway *g, const struct gateway_conn *c,
                 const struct gwaudit_who *w, const struct proto_acl_request *r,
                 int result)
{
        char detail[GWAUDIT_RULE_DETAIL_MAX] = "";
        char perms[24];
        struct audit_event e = {.action = acl_action(r->op),
                                .target = (const char *)r->identity.p,
                                .target_len = r->identity.len,
                                .result = result,
                                .detail = detail};

        if (r->op == PROTO_ACL_SET) {
                snprintf(detail, sizeof detail, "role %s",
                         acl_role_name(r->role));
        } else if (r->op == PROTO_ACL_RULE_SET ||
                   r->op == PROTO_ACL_RULE_REMOVE) {
                snprintf(detail, sizeof detail, "%s%s%son \"%.*s\"",
                         r->kind == PROTO_ACL_KIND_GROUP_PREFIX ? "group; "
                                                                : "",
                         r->op == PROTO_ACL_RULE_SET
                             ? acl_perms_name(r->role, perms, sizeof perms)
                             : "",
                         r->op == PROTO_ACL_RULE_SET ? " " : "",
                         (int)r->prefix.len, (const char *)r->prefix.p);
        } else if (r->op == PROTO_ACL_QUOTA_SET) {
                acl_quota_text(r->limits, detail, sizeof detail);
        }
        from(g, c, w, &e);
}

/* An ACL frame's action and target, as far as it parses. */
static void acl_line(const struct proto_header *h, const uint8_t *body,
                     struct audit_event *e)
{
        struct proto_acl_request r;

        if (proto_read_acl(body, h->length, &r) == 0) {
                e->action = acl_action(r.op);
                e->target = (const char *)r.identity.p;
                e->target_len = r.identity.len;
        }
}

/* A member's id from a MEMBER_ADD, MEMBER_REMOVE or TRANSFER frame, into
 * `buf` as e's target; false when it does not parse. */
static bool member_line(const struct proto_header *h, const uint8_t *body,
                        struct audit_event *e, char *buf)
{
        struct proto_string raft, client;
        uint64_t id = 0;
        int rv =
            h->type == PROTO_MEMBER_ADD
                ? proto_read_member_add(body, h->length, &id, &raft, &client)
                : proto_read_u64(body, h->length, &id);

        if (rv != 0) {
                return false;
        }
        e->target = buf;
        e->target_len = decimal(buf, id);
        return true;
}

void gwaudit_refused(struct gateway *g, const struct gateway_conn *c,
                     const struct proto_header *h, const uint8_t *body,
                     const char *why)
{
        struct audit_event e = {.action = proto_type_name(h->type),
                                .result = BATON_EPERM,
                                .detail = why};
        struct command cmd;
        char member[21];

        switch (h->type) {
        case PROTO_COMMAND:
                if (command_decode(&cmd, body, h->length) == 0) {
                        command_line(g, c, NULL, &cmd, &e);
                        return;
                }
                break;
        case PROTO_ACL:
                acl_line(h, body, &e);
                break;
        case PROTO_MEMBER_ADD:
        case PROTO_MEMBER_REMOVE:
        case PROTO_TRANSFER:
                member_line(h, body, &e, member);
                break;
        default:
                break;
        }
        gwaudit(g, c, &e);
}
