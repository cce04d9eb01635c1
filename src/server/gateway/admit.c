/* Who may do what, decided in one place before a request is routed: the
 * role a frame type needs, the administrator a revoke needs, and session
 * ownership on the leader (ATTACH proves it). */
#include "admit.h"

#include <stdio.h>
#include <string.h>

#include "../../../include/baton/errors.h"
#include "../../proto/attach.h"
#include "gwaudit.h"
#include "gwlog.h"
#include "names.h"
#include "../config/roles.h"
#include "access.h"
#include "gateway.h"
#include "pending.h"

bool admit_equal(const uint8_t *a, const uint8_t *b, size_t n)
{
        /* Every byte is compared whatever the first difference, so how long
         * it takes does not tell a guesser how much of a hash was right;
         * volatile keeps the compiler from stopping at a difference. */
        volatile uint8_t diff = 0;
        size_t i;

        for (i = 0; i < n; i++) {
                diff |= a[i] ^ b[i];
        }
        return diff == 0;
}

/* ATTACH: the connection owns the session if the secret (in p->buf)
 * hashes to what the session's OPEN carried, compared in constant time. */
static void attach(struct gateway *g, const struct gateway_now *now,
                   struct pending *p)
{
        const struct lockfsm *f = g->host->lockfsm(g->host);
        const uint8_t *want = lockfsm_session_hash(f, p->key_a);
        int st = lockfsm_session_status(f, p->key_a);
        uint8_t got[ATTACH_HASH_SIZE];
        struct lockfsm_result res;

        if (st != 0) {
                pending_settle_status(p, now, st);
                return;
        }
        if (g->host->hash_secret(g->host, p->buf, got) != 0) {
                pending_settle_status(p, now, BATON_ENOMEM);
                return;
        }
        if (want == NULL || !admit_equal(got, want, ATTACH_HASH_SIZE)) {
                if (p->to.conn != NULL) {
                        struct log_fields lf = {.session = p->key_a,
                                                .connection = p->to.conn->id,
                                                .request = p->to.id};
                        gwlog(g, LOG_WARN, &lf,
                              "refused ATTACH to session %llu from '%s' "
                              "(connection %llu): wrong secret",
                              (unsigned long long)p->key_a,
                              p->to.conn->identity,
                              (unsigned long long)p->to.conn->id);
                }
                gwaudit_id(g, p->to.conn, "ATTACH", p->key_a, BATON_EPERM,
                           "wrong secret");
                g->stats.refused++;
                pending_settle_status(p, now, BATON_EPERM);
                return;
        }
        if (p->to.conn != NULL) {
                gateway_conn_attach(p->to.conn, p->key_a);
        }
        memset(&res, 0, sizeof res);
        res.kind = PROTO_KIND_OPENED;
        res.session = p->key_a;
        pending_settle(p, now, g->host->last_applied(g->host), &res);
}

/* The session `p` acts in, or 0 when it acts in none. */
static uint64_t acts_in(const struct pending *p)
{
        if (p->frame_type == PROTO_KEEPALIVE) {
                return p->key_a;
        }
        if (p->frame_type == PROTO_COMMAND && p->cmd.type != COMMAND_OPEN &&
            p->cmd.type != COMMAND_REVOKE &&
            p->cmd.type != COMMAND_REVOKE_LOCK) {
                return p->cmd.session; /* a REVOKE is an operator's */
        }
        return 0;
}

/* The audit line of `p`, refused in `session`: not its connection's. */
static void refused_in(struct gateway *g, const struct pending *p,
                       uint64_t session)
{
        const char *why = "not attached to the session";

        if (p->frame_type == PROTO_COMMAND) {
                gwaudit_command(g, p->to.conn, NULL, &p->cmd, BATON_EPERM, why);
        } else {
                gwaudit_id(g, p->to.conn, proto_type_name(p->frame_type),
                           session, BATON_EPERM, why);
        }
}

/* A request about to be served, in arrival order: ATTACH is answered here,
 * from the applied state (a serving leader has applied every OPEN whose
 * answer any client saw, and a session's hash never changes); a request
 * in a session its connection is not attached to is answered BATON_EPERM
 * while the session is live (logged), else with the session's status.
 * True when `p` goes on to be served; false when it was answered (and
 * freed). */
static bool owns(struct gateway *g, const struct gateway_now *now,
                 struct pending *p)
{
        struct gateway_conn *c = p->to.conn;
        uint64_t session;
        int st;

        if (p->internal) {
                return true;
        }
        if (p->frame_type == PROTO_ATTACH) {
                attach(g, now, p);
                return false;
        }
        session = acts_in(p);
        if (session == 0 || (c != NULL && gateway_conn_attached(c, session))) {
                return true;
        }
        /* A session that is over: say so, as the state machine would. */
        st = lockfsm_session_status(g->host->lockfsm(g->host), session);
        if (st == 0) {
                struct log_fields f = {.session = session,
                                       .seq = p->cmd.seq,
                                       .connection = c != NULL ? c->id : 0,
                                       .request = p->to.id};
                st = BATON_EPERM;
                g->stats.refused++;
                gwlog(g, LOG_WARN, &f,
                      "refused %s in session %llu from '%s' "
                      "(connection %llu): not attached to it",
                      p->frame_type == PROTO_COMMAND
                          ? command_type_name(p->cmd.type)
                          : proto_type_name(p->frame_type),
                      (unsigned long long)session, c != NULL ? c->identity : "",
                      c != NULL ? (unsigned long long)c->id : 0ULL);
                refused_in(g, p, session);
        }
        pending_settle_status(p, now, st);
        return false;
}

/* Whether only the leader answers requests of `type`: a node that does
 * not serve sends them on (NOT_LEADER). */
static bool leaders_only(uint8_t type)
{
        return type != PROTO_STATUS && type != PROTO_PING &&
               type != PROTO_WATCH && type != PROTO_UNWATCH &&
               type != PROTO_BACKUP;
}

/* "role lock": why `c` was refused, for its audit line. */
static const char *role_of(const struct gateway_conn *c, char *buf, size_t size)
{
        snprintf(buf, size, "role %s", roles_name(c->role));
        return buf;
}

bool admit_frame(struct gateway *g, struct gateway_conn *c,
                 const struct proto_header *h, const uint8_t *body)
{
        char why[32];
        int cmd_type;

        access_refresh(g, c);
        if (h->type >= PROTO_RESULT || roles_allows(c->role, h->type)) {
                return true; /* a response type is malformed, below */
        }
        cmd_type =
            h->type == PROTO_COMMAND ? command_peek_type(body, h->length) : 0;
        if (!g->serving && leaders_only(h->type)) {
                pending_not_leader(g, c, h->id);
                pending_count(g, h->type, cmd_type, BATON_ENOTLEADER);
                return false;
        }
        pending_count(g, h->type, cmd_type, BATON_EPERM);
        g->stats.refused++;
        gwlog(g, LOG_WARN,
              &(struct log_fields){.connection = c->id, .request = h->id},
              "refused %s from '%s' (connection %llu): role %s",
              proto_type_name(h->type), c->identity, (unsigned long long)c->id,
              roles_name(c->role));
        gwaudit_refused(g, c, h, body, role_of(c, why, sizeof why));
        reply_status(g, c, h->id, BATON_EPERM);
        return false;
}

/* What a REVOKE of a session must be allowed on: each of its grants and
 * waits, by a manager of the names; the first name refused. */
struct manages {
        struct gateway *g;
        const struct gateway_conn *c;
        unsigned holds;
        const char *refused; /* borrowed for the walk only: copied out */
        uint8_t refused_len;
        char name[COMMAND_NAME_MAX];
};

static bool manages_hold(void *data, const struct lockfsm_session_hold *h)
{
        struct manages *m = data;

        m->holds++;
        if ((names_perms(m->g, m->c, h->name, h->name_len) & ACL_PERM_MANAGE) ==
            0) {
                memcpy(m->name, h->name, h->name_len);
                m->refused = m->name;
                m->refused_len = h->name_len;
                return false;
        }
        return true;
}

/* A REVOKE or REVOKE_LOCK of `c`, which is no administrator, where rules
 * on names exist: 0 when it manages what the request ends (a REVOKE_LOCK's
 * name; every grant and wait of a REVOKE's session, which has some), else
 * BATON_EPERM (logged and audited as names_admit() does). */
static int admit_manager(struct gateway *g, struct gateway_conn *c,
                         const struct pending *p)
{
        struct manages m = {.g = g, .c = c};

        if (p->cmd.type == COMMAND_REVOKE_LOCK) {
                return names_admit(g, c, "REVOKE_LOCK", p->cmd.name,
                                   p->cmd.name_len, false, ACL_PERM_MANAGE);
        }
        lockfsm_foreach_session_hold(g->host->lockfsm(g->host), p->cmd.session,
                                     manages_hold, &m);
        if (m.holds > 0 && m.refused == NULL) {
                return 0;
        }
        if (m.refused != NULL) {
                return names_admit(g, c, "REVOKE", m.refused, m.refused_len,
                                   false, ACL_PERM_MANAGE);
        }
        /* A session that holds nothing is in no one's names: only an
         * administrator ends it. */
        return names_refuse(g, c, "REVOKE", "", 0,
                            "the session holds and awaits no lock: only "
                            "an administrator ends it");
}

int admit_revoke(struct gateway *g, struct gateway_conn *c,
                 const struct pending *p)
{
        char why[32];

        if (c->role >= ROLES_LOCK && !names_open(g, c)) {
                return admit_manager(g, c, p);
        }
        if (c->role != ROLES_ADMIN) {
                struct log_fields f = {.session = p->cmd.session,
                                       .connection = c->id,
                                       .request = p->to.id};
                g->stats.refused++;
                gwlog(g, LOG_WARN, &f,
                      "refused %s of session %llu from '%s' "
                      "(connection %llu): role %s",
                      command_type_name(p->cmd.type),
                      (unsigned long long)p->cmd.session, c->identity,
                      (unsigned long long)c->id, roles_name(c->role));
                gwaudit_command(g, c, NULL, &p->cmd, BATON_EPERM,
                                role_of(c, why, sizeof why));
                return BATON_EPERM;
        }
        return 0;
}

int admit_names(struct gateway *g, struct gateway_conn *c,
                const struct command *cmd)
{
        const char *action = command_type_name(cmd->type);
        const char *name;
        uint8_t mode, len;
        size_t at = 0;
        int rv = 0;

        switch (cmd->type) {
        case COMMAND_ACQUIRE:
        case COMMAND_RELEASE:
        case COMMAND_CANCEL:
        case COMMAND_PROCLAIM:
        case COMMAND_SET_VALUE:
        case COMMAND_EXTEND:
                return names_admit(g, c, action, cmd->name, cmd->name_len,
                                   false, ACL_PERM_LOCK);
        case COMMAND_MULTI:
                while (rv == 0 &&
                       command_list_next(cmd, &at, &mode, &name, &len)) {
                        rv = names_admit(g, c, action, name, len, false,
                                         ACL_PERM_LOCK);
                }
                return rv;
        default:
                return 0; /* OPEN, CLOSE: no name; revokes: admit_revoke() */
        }
}

bool admit_route(struct pending *p, const struct gateway_now *now,
                 struct queue *serving)
{
        struct gateway *g = p->g;
        uint64_t leader;
        const char *address;

        if (g->serving) {
                if (!owns(g, now, p)) {
                        return false; /* answered */
                }
                queue_push_tail(serving, &p->link);
                return true;
        }
        g->host->leader(g->host, &leader, &address);
        if (leader == g->cfg->id) {
                queue_push_tail(&g->held, &p->link);
                return true;
        }
        pending_redirect(p);
        return false;
}

void admit_held(struct gateway *g, const struct gateway_now *now)
{
        while (!queue_empty(&g->held)) {
                struct queue *q = queue_head(&g->held);
                struct pending *p = QUEUE_DATA(q, struct pending, link);
                queue_remove(q);
                if (!owns(g, now, p)) {
                        continue; /* answered: ATTACH, or not its session */
                }
                queue_push_tail(
                    p->frame_type == PROTO_COMMAND ? &g->unsent : &g->reads, q);
        }
}
