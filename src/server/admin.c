/* Cluster administration: MEMBER_ADD, MEMBER_REMOVE and TRANSFER, carried
 * out through the node's configuration changes and leadership transfer. */
#include "admin.h"

#include <stdlib.h>
#include <string.h>

#include "../../include/baton.h"
#include "log.h"
#include "members.h"
#include "pending.h"
#include "reply.h"

/* A MEMBER_ADD or MEMBER_REMOVE from its arrival to its answer: one node
 * request at a time (the directory entry, then each configuration
 * change), freed by done(). */
struct admin {
        struct node_request req;
        struct reply_to to;
        struct gateway *g;
        uint64_t member;
        char raft_address[PROTO_ADDRESS_MAX + 1];
};

/* Whether an admin request may go on: its body parsed (`rv` 0; else the
 * connection fails with `malformed`) and this node serves (else it is
 * answered NOT_LEADER). */
static bool admissible(struct gateway *g, struct conn *c, uint64_t id, int rv,
                       const char *malformed)
{
        if (rv != 0) {
                conn_fail(c, id, BATON_EMALFORMED, malformed);
                return false;
        }
        if (!node_serving(g->node)) {
                reply_not_leader(g, c, id);
                return false;
        }
        return true;
}

/* The record of an admissible() request `id` about `member`; NULL when
 * the request has been answered already. */
static struct admin *admit(struct gateway *g, struct conn *c, uint64_t id,
                           int rv, const char *malformed, uint64_t member)
{
        struct admin *a;

        if (!admissible(g, c, id, rv, malformed)) {
                return NULL;
        }
        a = calloc(1, sizeof *a);
        if (a == NULL) {
                reply_status(c, id, BATON_ENOMEM);
                return NULL;
        }
        a->req.data = a;
        a->g = g;
        a->member = member;
        reply_to_init(&a->to, c, id);
        return a;
}

/* The last step of an admin request: answer it, unless its client left. */
static void done(struct admin *a, int status)
{
        if (status != 0) {
                log_warn("member %llu: %s", (unsigned long long)a->member,
                         baton_strerror(status));
        }
        if (status == BATON_EUNKNOWN) {
                a->g->stats.unknown++;
        }
        reply_status(a->to.conn, a->to.id, status);
        reply_to_close(&a->to);
        free(a);
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
        if (node_has_member(a->g->node, a->member, NULL) ||
            !node_serving(a->g->node)) {
                return; /* a later leader's directory is not ours to fix */
        }
        unrecord(a->g, a->member);
}

static void on_assigned(struct node_request *req, int status)
{
        struct admin *a = req->data;

        if (status == 0) {
                log_info("member %llu added as a voter",
                         (unsigned long long)a->member);
        }
        done(a, status);
}

static void on_added(struct node_request *req, int status)
{
        struct admin *a = req->data;
        int rv;

        if (status != 0) {
                forget_member(a);
                done(a, status);
                return;
        }
        /* A voter only after it caught up, so quorum never waits on it. */
        rv = node_promote(a->g->node, &a->req, a->member, on_assigned);
        if (rv != 0) {
                done(a, rv);
        }
}

static void on_recorded(struct node_request *req, int status)
{
        struct admin *a = req->data;
        int rv;

        if (status != 0) {
                done(a, status);
                return;
        }
        if (req->result != NULL && req->result->status != 0) {
                done(a, req->result->status);
                return;
        }
        rv =
            node_add(a->g->node, &a->req, a->member, a->raft_address, on_added);
        if (rv != 0) {
                done(a, rv);
        }
}

/* Propose the MEMBER entry that records the new member's addresses. */
static void record(struct admin *a, const struct proto_string *raft,
                   const struct proto_string *client)
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
        cmd.name = raft->p;
        cmd.name_len = raft->len;
        cmd.address = client->p;
        cmd.address_len = client->len;
        len = command_encode(&cmd, buf, sizeof buf);
        if (len == 0) {
                done(a, BATON_EINVAL);
                return;
        }
        entry = node_entry_alloc(len);
        if (entry == NULL) {
                done(a, BATON_ENOMEM);
                return;
        }
        memcpy(entry, buf, len);
        rv = node_apply(a->g->node, &a->req, entry, len, on_recorded);
        if (rv != 0) {
                node_entry_free(entry);
                done(a, rv);
        }
}

void admin_member_add(struct gateway *g, struct conn *c,
                      const struct proto_header *h, const uint8_t *body)
{
        struct proto_string raft, client;
        char client_address[PROTO_ADDRESS_MAX + 1];
        char msg[CONFIG_ERRMSG_MAX];
        struct admin *a;
        uint64_t id = 0;
        int rv = proto_read_member_add(body, h->length, &id, &raft, &client);

        a = admit(g, c, h->id, rv, "bad MEMBER_ADD", id);
        if (a == NULL) {
                return;
        }
        memcpy(a->raft_address, raft.p, raft.len);
        memcpy(client_address, client.p, client.len);
        client_address[client.len] = '\0';
        /* The addresses are checked as the config's member lines are: a
         * raft address libraft cannot use would add a voter that never
         * catches up. */
        if (members_parse_pair(a->raft_address, client_address, msg,
                               sizeof msg) != 0) {
                log_warn("member add %llu refused: %s", (unsigned long long)id,
                         msg);
                done(a, BATON_EINVAL);
                return;
        }
        /* Refused before anything is recorded: an existing member's
         * directory entry must never be overwritten by a failed add. */
        if (id == 0 || node_has_member(g->node, id, a->raft_address)) {
                done(a, BATON_EINVAL);
                return;
        }
        record(a, &raft, &client);
}

static void on_removed(struct node_request *req, int status)
{
        struct admin *a = req->data;

        if (status == 0) {
                /* Best effort: a stale directory entry only names an
                 * address nobody is sent to. */
                if (node_serving(a->g->node)) {
                        unrecord(a->g, a->member);
                }
                log_info("member %llu removed", (unsigned long long)a->member);
        }
        done(a, status);
}

void admin_member_remove(struct gateway *g, struct conn *c,
                         const struct proto_header *h, const uint8_t *body)
{
        struct admin *a;
        uint64_t id = 0;
        int rv = proto_read_u64(body, h->length, &id);

        a = admit(g, c, h->id, rv, "bad MEMBER_REMOVE", id);
        if (a == NULL) {
                return;
        }
        rv = node_remove(g->node, &a->req, id, on_removed);
        if (rv != 0) {
                done(a, rv);
        }
}

static void on_transfer_done(struct node *n)
{
        log_info("leadership transfer finished");
        (void)n;
}

void admin_transfer(struct gateway *g, struct conn *c,
                    const struct proto_header *h, const uint8_t *body)
{
        uint64_t target = 0;
        int rv = proto_read_u64(body, h->length, &target);

        if (!admissible(g, c, h->id, rv, "bad TRANSFER")) {
                return;
        }
        reply_status(c, h->id,
                     node_transfer(g->node, target, on_transfer_done));
}
