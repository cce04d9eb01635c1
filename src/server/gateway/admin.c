/* Cluster administration: MEMBER_ADD, MEMBER_REMOVE and TRANSFER, carried
 * out through the node's configuration changes and leadership transfer. */
#include "admin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../../include/baton/cluster.h"
#include "../../../include/baton/errors.h"
#include "gwaudit.h"
#include "gwlog.h"
#include "../config/members.h"
#include "gateway.h"
#include "gwreq.h"
#include "pending.h"
#include "reply.h"
#include "../../proto/member.h"

/* How long a MEMBER_ADD waits for the new node to answer at its raft
 * address before it is refused as unreachable: well inside a client's
 * default 5 s, and far above a connection's and a TLS handshake's cost
 * on a network where raft itself works. */
#define ADMIN_PROBE_MS 2000

/* A MEMBER_ADD, MEMBER_REMOVE or TRANSFER from its arrival to its answer:
 * one request of the host's at a time (the probe, the directory entry,
 * then each configuration change; or the transfer), each going on at
 * `next`; freed by done(), or once closed by on_step(). */
struct admin {
        struct gateway_req req;
        void (*next)(struct admin *a, int status);
        struct reply_to to;
        struct gateway *g;
        /* MEMBER_ADDs of the same member with the same addresses that came
         * while this one ran: answered with it, as retries of it. */
        struct admin *joined;
        uint64_t member;
        char raft_address[PROTO_ADDRESS_MAX + 1];
        char client_address[PROTO_ADDRESS_MAX + 1];
        /* Its audit line: what was asked, by whom. */
        const char *action;
        struct gwaudit_who who;
};

static void on_step(struct gateway_req *req, const struct gateway_now *now,
                    int status);
static void abandon(struct gateway_req *req, const struct gateway_now *now);

/* Whether an admin request may go on: its body parsed (`rv` 0; else the
 * connection fails with `malformed`) and this node serves (else it is
 * answered NOT_LEADER). */
static bool admissible(struct gateway *g, struct gateway_conn *c, uint64_t id,
                       int rv, const char *malformed)
{
        if (rv != 0) {
                reply_fail(g, c, id, BATON_EMALFORMED, malformed);
                return false;
        }
        if (!g->serving) {
                pending_not_leader(g, c, id);
                return false;
        }
        return true;
}

/* The record of an admissible() request `h` about `member`; NULL when
 * the request has been answered already. */
static struct admin *admit(struct gateway *g, struct gateway_conn *c,
                           const struct proto_header *h, int rv,
                           const char *malformed, uint64_t member)
{
        struct admin *a;

        if (!admissible(g, c, h->id, rv, malformed)) {
                return NULL;
        }
        a = calloc(1, sizeof *a);
        if (a == NULL) {
                gwaudit_id(g, c, proto_type_name(h->type), member, BATON_ENOMEM,
                           NULL);
                reply_status(g, c, h->id, BATON_ENOMEM);
                return NULL;
        }
        gwreq_init(&a->req, g, a, on_step, abandon);
        a->g = g;
        a->member = member;
        a->action = proto_type_name(h->type);
        gwaudit_who_init(&a->who, c);
        reply_to_init(&a->to, c, h->id);
        return a;
}

/* The audit line of `a`, answered `r`: what it asked of which member, and
 * for an add the addresses, for a transfer done where leadership went. */
static void audit(struct admin *a, const struct proto_result *r)
{
        char target[21], detail[2 * PROTO_ADDRESS_MAX + 32];
        struct audit_event e = {.action = a->action,
                                .target = target,
                                .result = r->status,
                                .detail = detail};

        e.target_len = (size_t)snprintf(target, sizeof target, "%llu",
                                        (unsigned long long)a->member);
        detail[0] = '\0';
        if (a->raft_address[0] != '\0') {
                snprintf(detail, sizeof detail, "raft %s client %s",
                         a->raft_address, a->client_address);
        } else if (r->kind == PROTO_KIND_TRANSFERRED) {
                snprintf(detail, sizeof detail, "leader %llu",
                         (unsigned long long)r->owner);
        }
        gwaudit_as(a->g, &a->who, &e);
}

/* Answer one record with `r`, unless its client left; the record stays. */
static void reply(struct admin *a, const struct proto_result *r)
{
        if (r->status == BATON_EUNKNOWN) {
                a->g->stats.unknown++;
        }
        audit(a, r);
        reply_result(a->g, a->to.conn, a->to.id, r);
        reply_to_close(&a->to);
}

/* Answer one record with `r`, unless its client left, and free it. */
static void answer(struct admin *a, const struct proto_result *r)
{
        reply(a, r);
        free(a);
}

/* Answer `a` and every retry that joined it, and free them. */
static void answer_all(struct admin *a, const struct proto_result *r)
{
        struct admin *next;

        for (; a != NULL; a = next) {
                next = a->joined;
                answer(a, r);
        }
}

/* The last step of an admin request: answer it, and every retry that
 * joined it. */
static void done(struct admin *a, int status)
{
        struct proto_result r;

        if (status != 0) {
                gwlog(a->g, LOG_WARN, NULL, "member %llu: %s",
                      (unsigned long long)a->member, baton_strerror(status));
        }
        if (a->g->adding == a) {
                a->g->adding = NULL;
        }
        memset(&r, 0, sizeof r);
        r.status = status;
        answer_all(a, &r);
}

/* A request of `a`'s completed: go on at a->next; once the core closed,
 * only free it (abandon() answered it). */
static void on_step(struct gateway_req *req, const struct gateway_now *now,
                    int status)
{
        struct admin *a = req->data;

        (void)now;
        if (a->g->closed) {
                free(a);
                return;
        }
        a->next(a, status);
}

/* gateway_close() with `a`'s request still out: what became of it is
 * unknown (a configuration change may still commit, a transfer still
 * happen). Answer it and every retry that joined it; the record waits
 * for its completion. */
static void abandon(struct gateway_req *req, const struct gateway_now *now)
{
        struct admin *a = req->data;
        struct proto_result r;

        (void)now;
        if (a->g->adding == a) {
                a->g->adding = NULL;
        }
        memset(&r, 0, sizeof r);
        r.status = BATON_EUNKNOWN;
        answer_all(a->joined, &r);
        a->joined = NULL;
        reply(a, &r);
        a->to.conn = NULL;
}

/* Propose taking `member` out of the directory, as the leader's own
 * MEMBER entry. */
static void unrecord(struct gateway *g, uint64_t member)
{
        struct command c;

        memset(&c, 0, sizeof c);
        c.type = COMMAND_MEMBER;
        c.mode = COMMAND_MEMBER_REMOVE;
        c.target = member;
        pending_queue_own(g, &c);
}

/* A MEMBER_ADD that failed after recording the member's addresses: take
 * them out of the directory again unless raft did add the member. */
static void forget_member(struct admin *a)
{
        struct gateway_host *h = a->g->host;

        if (h->has_member(h, a->member) || !a->g->serving) {
                return; /* a later leader's directory is not ours to fix */
        }
        unrecord(a->g, a->member);
}

static void on_assigned(struct admin *a, int status)
{
        if (status == 0) {
                gwlog(a->g, LOG_INFO, NULL, "member %llu added as a voter",
                      (unsigned long long)a->member);
        } else if (status == BATON_EUNAVAILABLE) {
                /* libraft gave up catching it up: it stopped answering.
                 * It stays a spare, which neither votes nor replicates; a
                 * retry of the same add carries on from there, and a
                 * MEMBER_REMOVE takes it out (docs/operations.md). */
                gwlog(a->g, LOG_WARN, NULL,
                      "member %llu did not answer while catching up; "
                      "left as a spare",
                      (unsigned long long)a->member);
                status = BATON_EUNREACHABLE;
        }
        done(a, status);
}

/* Make the member a voter: only after it caught up (libraft's catch-up
 * rounds), so that quorum never waits on it. */
static void promote(struct admin *a)
{
        int rv;

        a->next = on_assigned;
        rv = gwreq_change(&a->req, GATEWAY_PROMOTE, a->member, NULL);
        if (rv != 0) {
                done(a, rv);
        }
}

static void on_added(struct admin *a, int status)
{
        if (status != 0) {
                forget_member(a);
                done(a, status);
                return;
        }
        promote(a);
}

static void on_recorded(struct admin *a, int status)
{
        const struct lockfsm_result *res = a->req.result;
        int rv;

        if (status != 0) {
                done(a, status);
                return;
        }
        if (res != NULL && res->status != 0) {
                done(a, res->status);
                return;
        }
        a->next = on_added;
        rv = gwreq_change(&a->req, GATEWAY_ADD, a->member, a->raft_address);
        if (rv != 0) {
                done(a, rv);
        }
}

/* Propose the MEMBER entry that records the new member's addresses. */
static void record(struct admin *a)
{
        uint8_t buf[COMMAND_MAX_SIZE];
        struct command cmd;
        size_t len;
        void *entry;
        int rv;

        memset(&cmd, 0, sizeof cmd);
        cmd.type = COMMAND_MEMBER;
        cmd.mode = COMMAND_MEMBER_SET;
        cmd.target = a->member;
        cmd.name = a->raft_address;
        cmd.name_len = (uint8_t)strlen(a->raft_address);
        cmd.address = a->client_address;
        cmd.address_len = (uint8_t)strlen(a->client_address);
        len = command_encode(&cmd, buf, sizeof buf);
        if (len == 0) {
                done(a, BATON_EINVAL);
                return;
        }
        entry = gwreq_entry_alloc(a->g, len);
        if (entry == NULL) {
                done(a, BATON_ENOMEM);
                return;
        }
        memcpy(entry, buf, len);
        a->next = on_recorded;
        rv = gwreq_propose(&a->req, entry, len);
        if (rv != 0) {
                gwreq_entry_free(a->g, entry);
                done(a, rv);
        }
}

/* The new node answered at its raft address, or did not. */
static void on_probed(struct admin *a, int status)
{
        if (status != 0) {
                gwlog(a->g, LOG_WARN, NULL,
                      "member add %llu refused: no node answers as "
                      "member %llu at %s",
                      (unsigned long long)a->member,
                      (unsigned long long)a->member, a->raft_address);
                done(a, status);
                return;
        }
        record(a);
}

/* Whether `s` holds the NUL-terminated `text`. */
static bool same(const struct proto_string *s, const char *text)
{
        return s->len == strlen(text) && memcmp(s->p, text, s->len) == 0;
}

static const struct proto_member *member_of(const struct proto_status *st,
                                            uint64_t id)
{
        unsigned i;

        for (i = 0; i < st->n_members; i++) {
                if (st->members[i].id == id) {
                        return &st->members[i];
                }
        }
        return NULL;
}

/*
 * What to do with a MEMBER_ADD of `a`'s member and addresses, from raft's
 * configuration and the directory: 0 to add it, 1 when it is a member
 * already with these very addresses (a retry: it carries on), or the
 * refusal. Decided before anything is recorded: an existing member's
 * directory entry must never be overwritten by an add that fails.
 */
static int judge_add(struct admin *a)
{
        struct proto_status st;
        const struct proto_member *m;
        unsigned i;

        a->g->host->status(a->g->host, &st, NULL);
        m = member_of(&st, a->member);
        if (m != NULL) {
                return same(&m->raft_address, a->raft_address) &&
                               same(&m->client_address, a->client_address)
                           ? 1
                           : BATON_EIDINUSE;
        }
        for (i = 0; i < st.n_members; i++) {
                m = &st.members[i];
                if (same(&m->raft_address, a->raft_address) ||
                    same(&m->client_address, a->client_address) ||
                    same(&m->raft_address, a->client_address) ||
                    same(&m->client_address, a->raft_address)) {
                        return BATON_EADDRINUSE;
                }
        }
        return 0;
}

/* A retry of the add under way (same member, same addresses) joins it;
 * true when `a` did. */
static bool join(struct admin *a)
{
        struct admin *run = a->g->adding;

        if (run == NULL || run->member != a->member ||
            strcmp(run->raft_address, a->raft_address) != 0 ||
            strcmp(run->client_address, a->client_address) != 0) {
                return false;
        }
        a->joined = run->joined;
        run->joined = a;
        gwlog(a->g, LOG_INFO, NULL, "member add %llu: joined the add under way",
              (unsigned long long)a->member);
        return true;
}

/* Go on with a member that is in raft's configuration already, with the
 * addresses asked for: a voter is done, a spare or standby is promoted
 * (the first add stopped before that, or its client gave up waiting). */
static void carry_on(struct admin *a)
{
        struct proto_status st;
        const struct proto_member *m;

        a->g->host->status(a->g->host, &st, NULL);
        m = member_of(&st, a->member);
        if (m != NULL && m->role == BATON_MEMBER_VOTER) {
                done(a, 0);
                return;
        }
        gwlog(a->g, LOG_INFO, NULL,
              "member add %llu: a member already, not a voter yet; "
              "promoting it",
              (unsigned long long)a->member);
        a->g->adding = a;
        promote(a);
}

/* Take the addresses of a parsed MEMBER_ADD: 0, or BATON_EINVAL (logged)
 * when they are not what the config's member lines accept. */
static int take_addresses(struct admin *a, const struct proto_string *raft,
                          const struct proto_string *client)
{
        char msg[CONFIG_ERRMSG_MAX];

        memcpy(a->raft_address, raft->p, raft->len);
        memcpy(a->client_address, client->p, client->len);
        /* A raft address libraft cannot use would add a voter that never
         * catches up. */
        if (members_parse_pair(a->raft_address, a->client_address, msg,
                               sizeof msg) != 0) {
                gwlog(a->g, LOG_WARN, NULL, "member add %llu refused: %s",
                      (unsigned long long)a->member, msg);
                return BATON_EINVAL;
        }
        return 0;
}

void admin_member_add(struct gateway *g, struct gateway_conn *c,
                      const struct proto_header *h, const uint8_t *body)
{
        struct proto_string raft, client;
        struct admin *a;
        uint64_t id = 0;
        int rv = proto_read_member_add(body, h->length, &id, &raft, &client);

        a = admit(g, c, h, rv, "bad MEMBER_ADD", id);
        if (a == NULL) {
                return;
        }
        rv = id == 0 ? BATON_EINVAL : take_addresses(a, &raft, &client);
        if (rv == 0 && join(a)) {
                return;
        }
        if (rv == 0 && g->adding != NULL) {
                rv = BATON_ECANTCHANGE; /* libraft would refuse it later */
        }
        rv = rv != 0 ? rv : judge_add(a);
        if (rv == 1) {
                carry_on(a);
                return;
        }
        if (rv == 0) {
                a->g->adding = a;
                a->next = on_probed;
                rv = gwreq_probe(&a->req, id, a->raft_address, ADMIN_PROBE_MS);
        }
        if (rv != 0) {
                done(a, rv);
        }
}

static void on_removed(struct admin *a, int status)
{
        if (status == 0) {
                /* Best effort: a stale directory entry only names an
                 * address nobody is sent to. */
                if (a->g->serving) {
                        unrecord(a->g, a->member);
                }
                gwlog(a->g, LOG_INFO, NULL, "member %llu removed",
                      (unsigned long long)a->member);
        }
        done(a, status);
}

void admin_member_remove(struct gateway *g, struct gateway_conn *c,
                         const struct proto_header *h, const uint8_t *body)
{
        struct admin *a;
        uint64_t id = 0;
        int rv = proto_read_u64(body, h->length, &id);

        a = admit(g, c, h, rv, "bad MEMBER_REMOVE", id);
        if (a == NULL) {
                return;
        }
        a->next = on_removed;
        rv = g->host->has_member(g->host, id)
                 ? gwreq_change(&a->req, GATEWAY_REMOVE, id, NULL)
                 : BATON_ENOMEMBER;
        if (rv != 0) {
                done(a, rv);
        }
}

/* The transfer ended (always with status 0): answer where leadership
 * went. This node leading still means the target did not take over in
 * time. */
static void on_transferred(struct admin *a, int status)
{
        struct proto_result r;
        const char *address;
        uint64_t leader = 0;

        (void)status;
        a->g->host->leader(a->g->host, &leader, &address);
        memset(&r, 0, sizeof r);
        if (leader == a->g->cfg->id) {
                r.status = BATON_EUNREACHABLE;
                gwlog(a->g, LOG_WARN, NULL,
                      "leadership transfer to %llu failed: still leader",
                      (unsigned long long)a->member);
        } else {
                r.kind = PROTO_KIND_TRANSFERRED;
                r.session = a->g->cfg->id;
                r.owner = leader;
                gwlog(a->g, LOG_INFO, NULL, "leadership transferred to %llu",
                      (unsigned long long)leader);
        }
        answer(a, &r);
}

/* Whether leadership can go to `target` (0: any other voter): 0, or the
 * refusal, from raft's configuration. */
static int judge_transfer(struct gateway *g, uint64_t target)
{
        struct proto_status st;
        const struct proto_member *m;
        unsigned i;

        if (target == g->cfg->id) {
                return BATON_EISLEADER;
        }
        g->host->status(g->host, &st, NULL);
        if (target == 0) {
                for (i = 0; i < st.n_members; i++) {
                        m = &st.members[i];
                        if (m->id != g->cfg->id &&
                            m->role == BATON_MEMBER_VOTER) {
                                return 0;
                        }
                }
                return BATON_ENOTVOTER;
        }
        m = member_of(&st, target);
        if (m == NULL) {
                return BATON_ENOMEMBER;
        }
        return m->role == BATON_MEMBER_VOTER ? 0 : BATON_ENOTVOTER;
}

void admin_transfer(struct gateway *g, struct gateway_conn *c,
                    const struct proto_header *h, const uint8_t *body)
{
        uint64_t target = 0;
        struct admin *a;
        int rv = proto_read_u64(body, h->length, &target);

        a = admit(g, c, h, rv, "bad TRANSFER", target);
        if (a == NULL) {
                return;
        }
        rv = judge_transfer(g, target);
        if (rv == 0) {
                a->next = on_transferred;
                rv = gwreq_transfer(&a->req, target);
        }
        if (rv != 0) {
                done(a, rv);
        }
}
