/* Linearizable reads and keepalives: QUERY, CHECK, LIST and KEEPALIVE,
 * answered from this node's state machine once a raft barrier proves it
 * still leads; and backups, whose first request waits for the same
 * barrier. */
#include "reads.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../../include/baton/errors.h"
#include "../../proto/attach.h"
#include "../../proto/backup.h"
#include "admit.h"
#include "gateway.h"
#include "gwaudit.h"
#include "gwreq.h"
#include "leader.h"
#include "names.h"
#include "pending.h"
#include "sessview.h"
#include "../../proto/query.h"
#include "../../proto/keepalive.h"
#include "../../proto/list.h"
#include "../../proto/sesslist.h"

/* The reads one barrier answers. */
struct readbatch {
        struct gateway_req req;
        struct queue members;
};

/* A LIST, or a QUERY of every holder, being answered: the entries
 * gathered so far (names borrowed from the state machine, which does not
 * change until the reply is written). */
struct listing {
        struct gateway *g;
        const struct gateway_now *now; /* for each holder's time left */
        const struct lockfsm *f;
        uint16_t shape;   /* the reply's flags: 0, PROTO_FLAG_NAMES (with
                             _VALUES: a LIST's), _HOLDERS, _HOLDERS |
                             _VALUES, either with _LEFT */
        const char *name; /* the holders of one lock: its name */
        uint8_t name_len;
        struct proto_lock_entry *e;
        uint32_t n;
        uint32_t limit;
        size_t size; /* body bytes so far */
        bool more;
        /* A LIST's asker when rules on names close some to it (names.h):
         * those are left out. NULL: every name is listed. */
        const struct gateway_conn *asker;
};

/* Room for `limit` entries of a reply in `shape` to `p`; false when out
 * of memory (then `p` is answered so). */
static bool listing_init(struct listing *ls, const struct gateway_now *now,
                         const struct lockfsm *f, struct pending *p,
                         uint16_t shape, uint32_t limit)
{
        memset(ls, 0, sizeof *ls);
        ls->g = p->g;
        ls->now = now;
        ls->f = f;
        ls->shape = shape;
        ls->limit = limit;
        ls->size = PROTO_LIST_REPLY_FIXED;
        ls->e = calloc(limit, sizeof *ls->e);
        if (ls->e == NULL) {
                pending_settle_status(p, now, BATON_ENOMEM);
                return false;
        }
        return true;
}

/* The next entry, of `size` encoded bytes, or NULL when the limit or the
 * frame is reached (the reply then says there is more). */
static struct proto_lock_entry *listing_add(struct listing *ls, size_t size)
{
        if (ls->n == ls->limit || ls->size + size > PROTO_MAX_BODY) {
                ls->more = true;
                return NULL;
        }
        ls->size += size;
        return &ls->e[ls->n++];
}

/* Write the LIST_REPLY, then forget the listing and `p`. */
static void listing_send(struct listing *ls, const struct gateway_now *now,
                         struct pending *p)
{
        struct gateway_conn *c = p->to.conn;
        size_t cap = PROTO_HEADER_SIZE + ls->size;
        uint8_t *out = c != NULL ? reply_reserve(p->g, c, cap) : NULL;
        size_t n = 0;

        if (out != NULL) {
                n = proto_write_list_reply(out, cap, p->to.id, ls->shape, ls->e,
                                           ls->n, ls->more);
                reply_frame(p->g, c, p->to.id, n);
        }
        free(ls->e);
        pending_free(p, now);
}

/* lockfsm_foreach_holder()'s callback: the first grant's value, into the
 * proto_string `data`; stops there. */
static bool first_value(void *data, const struct lockfsm_holder *h)
{
        struct proto_string *v = data;

        v->p = h->value;
        v->len = h->value_len;
        return false;
}

static bool list_one(void *data, const char *name, size_t name_len,
                     const struct lockfsm_result *holder)
{
        struct listing *ls = data;
        struct proto_string value = {NULL, 0};
        const char *client = NULL;
        uint8_t client_len = 0;
        struct proto_lock_entry *e;

        if (ls->asker != NULL &&
            (names_perms(ls->g, ls->asker, name, name_len) & ACL_PERM_READ) ==
                0) {
                return true; /* closed to the asker: not listed */
        }
        if (ls->shape & PROTO_FLAG_NAMES) {
                client =
                    lockfsm_session_name(ls->f, holder->session, &client_len);
        }
        if (ls->shape & PROTO_FLAG_VALUES) {
                /* The grant the entry describes is the first holder's. */
                lockfsm_foreach_holder(ls->f, name, name_len, first_value,
                                       &value);
        }
        e = listing_add(
            ls, (ls->shape & PROTO_FLAG_VALUES)
                    ? PROTO_LIST_ENTRY_NAMES_VALUES_SIZE(name_len, client_len,
                                                         value.len)
                : (ls->shape & PROTO_FLAG_NAMES)
                    ? PROTO_LIST_ENTRY_NAMES_SIZE(name_len, client_len)
                    : PROTO_LIST_ENTRY_SIZE(name_len));
        if (e == NULL) {
                return false;
        }
        e->name.p = name;
        e->name.len = (uint8_t)name_len;
        e->session = holder->session;
        e->owner = holder->owner;
        e->token = holder->token;
        e->count = holder->count;
        e->waiters = holder->waiters;
        e->client_name.p = client;
        e->client_name.len = client_len;
        e->value = value;
        return true;
}

static bool holder_one(void *data, const struct lockfsm_holder *h)
{
        struct listing *ls = data;
        uint8_t client_len = 0;
        const char *client =
            lockfsm_session_name(ls->f, h->session, &client_len);
        bool values = ls->shape & PROTO_FLAG_VALUES;
        bool left = ls->shape & PROTO_FLAG_LEFT;
        struct proto_lock_entry *e = listing_add(
            ls,
            (values ? PROTO_LIST_ENTRY_VALUES_SIZE(ls->name_len, client_len,
                                                   h->value_len)
                    : PROTO_LIST_ENTRY_HOLDERS_SIZE(ls->name_len, client_len)) +
                (left ? PROTO_LIST_ENTRY_LEFT_SIZE : 0));

        if (e == NULL) {
                return false;
        }
        e->name.p = ls->name;
        e->name.len = ls->name_len;
        e->session = h->session;
        e->owner = h->owner;
        e->token = h->token;
        e->count = h->count;
        e->waiters = h->waiters;
        e->client_name.p = client;
        e->client_name.len = client_len;
        e->mode = h->mode;
        e->permits = h->permits;
        e->limit = h->limit;
        e->granted_s = h->granted_s;
        e->value.p = h->value;
        e->value.len = h->value_len;
        if (left) {
                e->left_ms =
                    sessview_left_ms(ls->g, ls->now, h->session,
                                     lockfsm_session_ttl(ls->f, h->session));
        }
        return true;
}

/* A QUERY with PROTO_FLAG_HOLDERS: every holder, in a LIST_REPLY (with
 * PROTO_FLAG_VALUES too, each with its value; with PROTO_FLAG_LEFT, each
 * with the time this leader's lease leaves its session, as SESSIONS
 * says it). */
static void answer_holders(const struct gateway_now *now,
                           const struct lockfsm *f, struct pending *p)
{
        struct listing ls;

        if (!listing_init(&ls, now, f, p,
                          p->flags & (PROTO_FLAG_HOLDERS | PROTO_FLAG_VALUES |
                                      PROTO_FLAG_LEFT),
                          PROTO_LIST_MAX)) {
                return;
        }
        ls.name = p->cmd.name;
        ls.name_len = p->cmd.name_len;
        lockfsm_foreach_holder(f, p->cmd.name, p->cmd.name_len, holder_one,
                               &ls);
        listing_send(&ls, now, p);
}

static void answer_list(const struct gateway_now *now, const struct lockfsm *f,
                        struct pending *p)
{
        struct listing ls;

        if (!listing_init(&ls, now, f, p,
                          p->flags & (PROTO_FLAG_NAMES | PROTO_FLAG_VALUES),
                          p->limit)) {
                return;
        }
        if (p->to.conn != NULL && !names_open(p->g, p->to.conn)) {
                ls.asker = p->to.conn;
        }
        lockfsm_foreach_lock(f, p->cmd.name, p->cmd.name_len, list_one, &ls);
        listing_send(&ls, now, p);
}

/* The time since the session's last keepalive (or since this leader
 * started its lease: its OPEN, or this node's election), from the lease
 * that keepalive dated: arrival + ttl. */
static void keepalive_gap(struct gateway *g, const struct pending *p,
                          uint32_t ttl)
{
        const struct lease *l = leases_find(&g->deadlines.leases, p->key_a);

        if (l != NULL && l->at >= ttl && p->received >= l->at - ttl) {
                histogram_add_long(&g->stats.keepalive_gap,
                                   (p->received - (l->at - ttl)) * 1000000);
        }
}

/* A keepalive of a live session restarts its lease deadline; asked with
 * PROTO_FLAG_REVOKED, its answer says how many of the session's grants
 * were revoked, so its client learns that one was. */
static void answer_keepalive(struct gateway *g, const struct gateway_now *now,
                             const struct lockfsm *f, struct pending *p)
{
        struct gateway_conn *c = p->to.conn;
        int st = lockfsm_session_status(f, p->key_a);
        uint32_t ttl;
        uint8_t *out;

        if (st != 0) {
                pending_settle_status(p, now, st);
                return;
        }
        if (leader_expiring(g, p->key_a)) {
                /* Its lease ran out before this barrier applied, and the
                 * EXPIRE is out: an OK would date a lease the cluster is
                 * ending. Asked again, it is answered BATON_EEXPIRED once
                 * the END applies (or OK, should no EXPIRE commit and a
                 * later leader renew it). */
                pending_settle_status(p, now, BATON_EUNKNOWN);
                return;
        }
        /* Dated from arrival: the client dates its lease from its send,
         * earlier, so the leader never expires it first. Only while
         * serving: a barrier that completes after leadership was lost
         * still answers, but a lease kept then would fire on a node that
         * no longer serves, and its EXPIRE would wait in `unsent` until
         * the node leads again, when the client may have renewed
         * elsewhere; the next leader restarts every lease anyway. */
        ttl = lockfsm_session_ttl(f, p->key_a);
        if (g->serving) {
                keepalive_gap(g, p, ttl);
                deadlines_set(&g->deadlines, p->key_a, 0, NULL, 0,
                              p->received + ttl);
        }
        out = c != NULL ? reply_reserve(g, c, REPLY_MAX) : NULL;
        if (out != NULL) {
                uint16_t flags = p->flags & PROTO_FLAG_REVOKED;

                reply_frame(
                    g, c, p->to.id,
                    proto_write_keepalive_ok(
                        out, REPLY_MAX, p->to.id, flags, ttl,
                        flags != 0 ? lockfsm_session_revoked(f, p->key_a) : 0));
        }
        pending_free(p, now);
}

/* A QUERY that asked for client names: a free lock's is empty. */
static void answer_query_names(const struct gateway_now *now,
                               const struct lockfsm *f, struct pending *p,
                               uint64_t applied,
                               const struct lockfsm_result *res)
{
        const char *name = NULL;
        uint8_t len = 0;

        if (res->kind == PROTO_KIND_HOLDER) {
                name = lockfsm_session_name(f, res->session, &len);
        }
        reply_outcome_names(p->g, p->to.conn, p->to.id, applied, res, name,
                            len);
        p->status = res->status;
        pending_free(p, now);
}

/* The first BACKUP `p`: its barrier has applied, so the host pins a state
 * that holds everything acknowledged before it arrived. */
static void start_backup(struct gateway *g, const struct gateway_now *now,
                         struct pending *p)
{
        char detail[48];
        int rv;

        if (p->to.conn == NULL) {
                pending_free(p, now); /* the client left */
                return;
        }
        snprintf(detail, sizeof detail, "state at index %llu",
                 (unsigned long long)g->host->last_applied(g->host));
        rv = g->host->backup_start(g->host, p->to.conn, p->to.id);
        gwaudit(g, p->to.conn,
                &(struct audit_event){
                    .action = "BACKUP", .result = rv, .detail = detail});
        if (rv != 0) {
                pending_settle_status(p, now, rv);
                return;
        }
        pending_free(p, now);
}

static void answer_read(struct gateway *g, const struct gateway_now *now,
                        struct pending *p)
{
        const struct lockfsm *f = g->host->lockfsm(g->host);
        uint64_t applied = g->host->last_applied(g->host);
        struct lockfsm_result res;

        switch (p->frame_type) {
        case PROTO_QUERY:
                if (p->flags & PROTO_FLAG_HOLDERS) {
                        answer_holders(now, f, p);
                        return;
                }
                lockfsm_query(f, p->cmd.name, p->cmd.name_len, &res);
                if (p->flags & PROTO_FLAG_NAMES) {
                        answer_query_names(now, f, p, applied, &res);
                        return;
                }
                pending_settle(p, now, applied, &res);
                return;
        case PROTO_CHECK:
                lockfsm_check_token(f, p->cmd.name, p->cmd.name_len, p->token,
                                    &res);
                pending_settle(p, now, applied, &res);
                return;
        case PROTO_LIST:
                answer_list(now, f, p);
                return;
        case PROTO_SESSIONS:
                sessview_answer(g, now, f, p);
                return;
        case PROTO_BACKUP:
                start_backup(g, now, p);
                return;

        default: /* PROTO_KEEPALIVE */
                answer_keepalive(g, now, f, p);
                return;
        }
}

static void on_read_barrier(struct gateway_req *req,
                            const struct gateway_now *now, int status)
{
        struct readbatch *rb = req->data;
        struct gateway *g = req->g;

        g->read_barriers_out--;
        /* A committed barrier of this leader's term proves it still led
         * after every read in the batch arrived: no newer leader can have
         * changed the answer or expired the session before. (Closed, the
         * core sent them on already: abandon_reads().) */
        while (!queue_empty(&rb->members)) {
                struct pending *p =
                    QUEUE_DATA(queue_head(&rb->members), struct pending, link);
                if (status == 0) {
                        answer_read(g, now, p);
                } else {
                        pending_redirect(p);
                }
        }
        free(rb);
}

/* gateway_close() with the barrier still out: its reads go elsewhere
 * now; the record waits for its completion. */
static void abandon_reads(struct gateway_req *req,
                          const struct gateway_now *now)
{
        struct readbatch *rb = req->data;

        (void)now;
        pending_redirect_all(&rb->members);
}

void reads_start(struct gateway *g)
{
        struct readbatch *rb;
        int rv;

        if (queue_empty(&g->reads) || g->read_barriers_out > 0) {
                return;
        }
        rb = malloc(sizeof *rb);
        if (rb == NULL) {
                return;
        }
        gwreq_init(&rb->req, g, rb, on_read_barrier, abandon_reads);
        queue_init(&rb->members);
        while (!queue_empty(&g->reads)) {
                struct queue *q = queue_head(&g->reads);
                queue_remove(q);
                queue_push_tail(&rb->members, q);
        }
        rv = gwreq_barrier(&rb->req);
        if (rv != 0) {
                pending_redirect_all(&rb->members);
                free(rb);
                return;
        }
        g->read_barriers_out++;
        g->stats.barriers++;
}

void reads_on_frame(struct gateway *g, const struct gateway_now *now,
                    struct gateway_conn *c, const struct proto_header *h,
                    const uint8_t *body)
{
        struct proto_string name = {NULL, 0};
        struct pending *p;
        int rv = 0;

        /* Room for a name, or ATTACH's secret. */
        p = pending_new(g, now, c, h->id, h->type, COMMAND_NAME_MAX);
        if (p == NULL) {
                reply_status(g, c, h->id, BATON_ENOMEM);
                return;
        }
        p->flags = h->flags;
        if (h->type == PROTO_KEEPALIVE) {
                rv = proto_read_u64(body, h->length, &p->key_a);
        } else if (h->type == PROTO_ATTACH) {
                rv = attach_read(body, h->length, &p->key_a, p->buf);
        } else if (h->type == PROTO_QUERY) {
                rv = proto_read_query(body, h->length, &name);
        } else if (h->type == PROTO_LIST) {
                rv = proto_read_list(body, h->length, &name, &p->limit);
        } else if (h->type == PROTO_SESSIONS) {
                uint8_t mode = 0;

                rv = proto_read_sessions(body, h->length, &p->key_a, &mode,
                                         &p->limit);
                p->key_b = mode;
        } else {
                rv = proto_read_check(body, h->length, &name, &p->token);
        }
        if (rv == BATON_ENAME) {
                pending_settle_status(p, now, rv);
                return;
        }
        if (rv != 0) {
                p->status = rv;
                pending_free(p, now);
                reply_fail(g, c, h->id, rv, "malformed request body");
                return;
        }
        if (name.len > 0) {
                memcpy(p->buf, name.p, name.len);
                p->cmd.name = (const char *)p->buf;
                p->cmd.name_len = name.len;
        }
        if ((h->type == PROTO_QUERY || h->type == PROTO_CHECK ||
             h->type == PROTO_LIST) &&
            (rv = names_admit(g, c, proto_type_name(h->type), name.p, name.len,
                              h->type == PROTO_LIST, ACL_PERM_READ)) != 0) {
                pending_settle_rejected(p, now, rv, ACL_PERM_READ, 0);
                return;
        }
        admit_route(p, now, &g->reads);
}

void reads_on_backup(struct gateway *g, const struct gateway_now *now,
                     struct gateway_conn *c, const struct proto_header *h,
                     const uint8_t *body)
{
        struct proto_backup req;
        struct pending *p;
        int rv;

        if (proto_read_backup(body, h->length, &req) != 0) {
                reply_fail(g, c, h->id, BATON_EMALFORMED, "malformed BACKUP");
                return;
        }
        if (req.backup == 0) {
                rv = req.offset != 0 ? BATON_EINVAL : 0;
                p = rv == 0 ? pending_new(g, now, c, h->id, h->type, 0) : NULL;
                if (p == NULL) {
                        rv = rv != 0 ? rv : BATON_ENOMEM;
                        gwaudit(g, c,
                                &(struct audit_event){.action = "BACKUP",
                                                      .result = rv});
                        reply_status(g, c, h->id, rv);
                        return;
                }
                admit_route(p, now, &g->reads);
                return;
        }
        rv = g->host->backup_chunk(g->host, c, h->id, &req);
        if (rv != 0) {
                reply_status(g, c, h->id, rv);
        }
}
