/* The request path: validate, batch into raft, answer from state machine
 * events, linearizable reads and keepalives, leader-side deadlines. */
#include "gateway.h"

#include <stdlib.h>
#include <string.h>

#include "../../include/baton.h"
#include "../fsm/entry.h"
#include "log.h"

/*
 * A request between its arrival and its answer. Client commands are keyed
 * by (session, seq), or (0, nonce) for OPEN, which is what the state
 * machine's events name, so whichever entry settles a request (its own, or
 * another client's RELEASE that hands it a lock) finds it.
 */
struct pending {
        struct hnode by_key;
        struct queue link;      /* unsent, held, reads, or a batch */
        struct queue conn_link; /* conn->pendings */
        struct gateway *g;
        struct conn *conn; /* NULL: the client left, or a leader proposal */
        struct batch *batch;
        uint64_t req_id;
        uint64_t key_a;
        uint64_t key_b;
        uint64_t received;    /* uv_now() at arrival */
        uint64_t received_ns; /* uv_hrtime() at arrival, for latency */
        uint64_t proposed_ns; /* handed to node_apply; 0 never */
        uint64_t applied_ns;  /* its own entry applied; 0 not yet */
        uint64_t token;       /* CHECK */
        uint32_t limit;       /* LIST */
        uint8_t frame_type;
        bool in_map;
        bool internal;   /* the leader's own EXPIRE or TIMEOUT */
        bool redirected; /* answered NOT_LEADER: not counted as served */
        struct node_request req; /* MEMBER_ADD, MEMBER_REMOVE */
        uint64_t member;
        char raft_address[PROTO_ADDRESS_MAX + 1];
        struct command cmd; /* decoded; cmd.name points into buf */
        size_t len;
        uint8_t buf[COMMAND_MAX_SIZE];
};

struct batch {
        struct node_request req;
        struct gateway *g;
        struct queue members;
};

struct readbatch {
        struct node_request req;
        struct gateway *g;
        struct queue members;
};

static uint64_t key_hash(uint64_t a, uint64_t b)
{
        return hash_u64(a ^ hash_u64(b));
}

static struct pending *pending_new(struct gateway *g, struct conn *c,
                                   uint64_t req_id, uint8_t type)
{
        struct pending *p = calloc(1, sizeof *p);

        if (p == NULL) {
                return NULL;
        }
        p->g = g;
        p->conn = c;
        p->req_id = req_id;
        p->frame_type = type;
        p->received = uv_now(g->loop);
        p->received_ns = uv_hrtime();
        queue_init(&p->link);
        queue_init(&p->conn_link);
        if (c != NULL) {
                queue_push_tail(&c->pendings, &p->conn_link);
        }
        return p;
}

static int kind_of(const struct pending *p)
{
        switch (p->frame_type) {
        case PROTO_KEEPALIVE:
                return GATEWAY_KEEPALIVE;
        case PROTO_QUERY:
                return GATEWAY_QUERY;
        case PROTO_CHECK:
                return GATEWAY_CHECK;
        case PROTO_LIST:
                return GATEWAY_LIST;
        default:
                break;
        }
        switch (p->cmd.type) {
        case COMMAND_OPEN:
                return GATEWAY_OPEN;
        case COMMAND_CLOSE:
                return GATEWAY_CLOSE;
        case COMMAND_ACQUIRE:
                return GATEWAY_ACQUIRE;
        case COMMAND_RELEASE:
                return GATEWAY_RELEASE;
        case COMMAND_CANCEL:
                return GATEWAY_CANCEL;
        default:
                return -1;
        }
}

/* Record how long an answered client request took, and for a command
 * where the time went: waiting to be proposed (group commit), then raft
 * (the leader's disk write and a majority's acknowledgements). */
static void observe(struct pending *p)
{
        struct gateway_stats *st = &p->g->stats;
        int kind = kind_of(p);

        if (p->conn == NULL || p->internal || p->redirected || kind < 0) {
                return;
        }
        histogram_add(&st->latency[kind], uv_hrtime() - p->received_ns);
        if (p->proposed_ns != 0 && p->applied_ns != 0) {
                histogram_add(&st->stages[GATEWAY_STAGE_QUEUED],
                              p->proposed_ns - p->received_ns);
                histogram_add(&st->stages[GATEWAY_STAGE_RAFT],
                              p->applied_ns - p->proposed_ns);
        }
}

static void pending_free(struct pending *p)
{
        observe(p);
        if (p->in_map) {
                hmap_remove(&p->g->pending, &p->by_key);
        }
        queue_remove(&p->link);
        queue_remove(&p->conn_link);
        free(p);
}

/* --- Answers -------------------------------------------------------------- */

#define REPLY_MAX (PROTO_HEADER_SIZE + 512)

/* Commit a frame a proto_write_* call produced. A writer refuses (0) only
 * for a field out of range, which is our bug: close the connection with an
 * error rather than leave the client waiting for an answer forever. */
static void send_frame(struct conn *c, uint64_t id, size_t n)
{
        if (n == 0) {
                log_error("connection %llu: reply %llu did not encode",
                          (unsigned long long)c->id, (unsigned long long)id);
                conn_fail(c, id, BATON_EINVAL, "reply did not encode");
                return;
        }
        conn_commit(c, n);
}

static void reply_result(struct conn *c, uint64_t id,
                         const struct proto_result *r)
{
        uint8_t *out = c != NULL ? conn_reserve(c, REPLY_MAX) : NULL;

        if (out != NULL) {
                send_frame(c, id, proto_write_result(out, REPLY_MAX, id, r));
        }
}

static void reply_status(struct conn *c, uint64_t id, int status)
{
        struct proto_result r;

        memset(&r, 0, sizeof r);
        r.status = status;
        reply_result(c, id, &r);
}

static void reply_not_leader(struct gateway *g, struct conn *c, uint64_t id)
{
        uint64_t leader;
        const char *address;
        uint8_t *out = c != NULL ? conn_reserve(c, REPLY_MAX) : NULL;

        if (out == NULL) {
                return;
        }
        node_leader(g->node, &leader, &address);
        /* A leader that is not serving yet must not send clients to
         * itself: say the leader is unknown, so they retry shortly. */
        if (leader == g->cfg->id) {
                leader = 0;
                address = "";
        }
        g->stats.redirects++;
        send_frame(c, id,
                   proto_write_not_leader(out, REPLY_MAX, id, leader, address));
}

/* Answer a request with a state machine outcome and forget it. */
static void settle(struct pending *p, uint64_t index,
                   const struct lockfsm_result *res)
{
        struct proto_result r;

        memset(&r, 0, sizeof r);
        r.status = res->status;
        r.kind = res->kind;
        r.index = index;
        r.session = res->session;
        r.owner = res->owner;
        r.token = res->token;
        r.count = res->count;
        r.waiters = res->waiters;
        reply_result(p->conn, p->req_id, &r);
        pending_free(p);
}

static void settle_status(struct pending *p, int status)
{
        if (status == BATON_EUNKNOWN) {
                p->g->stats.unknown++;
        }
        reply_status(p->conn, p->req_id, status);
        pending_free(p);
}

/* Send a request elsewhere and forget it; it does not count as served. */
static void redirect(struct gateway *g, struct pending *p)
{
        reply_not_leader(g, p->conn, p->req_id);
        p->redirected = true;
        pending_free(p);
}

/* Requests never proposed: the client may send them anywhere, safely. */
static void redirect_all(struct gateway *g, struct queue *list)
{
        while (!queue_empty(list)) {
                redirect(g, QUEUE_DATA(queue_head(list), struct pending, link));
        }
}

/* --- Proposals ------------------------------------------------------------ */

static void on_applied(struct node_request *req, int status)
{
        struct batch *b = req->data;

        b->g->inflight--;
        while (!queue_empty(&b->members)) {
                struct pending *p =
                    QUEUE_DATA(queue_head(&b->members), struct pending, link);
                queue_remove(&p->link);
                p->batch = NULL;
                /* On success the first entry is applied and the rest follow;
                 * their events answer them. On failure none of the batch
                 * answered yet can know its fate: the entries may still
                 * commit under the next leader. */
                if (p->internal) {
                        pending_free(p); /* a deadline re-fires if lost */
                } else if (status != 0) {
                        settle_status(p, BATON_EUNKNOWN);
                }
        }
        if (status != 0) {
                log_warn("proposal failed: %s", req->errmsg);
        }
        free(b);
}

/* Hand one entry to raft for batch `b`; `buf` is raft's on success. If raft
 * refuses it, the members were never proposed: they go elsewhere. */
static bool apply_entry(struct gateway *g, struct batch *b, void *buf,
                        size_t len)
{
        int rv = node_apply(g->node, &b->req, buf, len, on_applied);

        if (rv != 0) {
                node_entry_free(buf);
                log_warn("raft_apply: %s", b->req.errmsg);
                redirect_all(g, &b->members);
                free(b);
                return false;
        }
        g->inflight++;
        return true;
}

/* Propose the MEMBER command at the head of the unsent queue (the leader's
 * own, recording a member's addresses) as an entry of its own. */
static bool propose_member(struct gateway *g)
{
        struct pending *p =
            QUEUE_DATA(queue_head(&g->unsent), struct pending, link);
        struct batch *b = malloc(sizeof *b);
        void *buf = node_entry_alloc(p->len);

        if (b == NULL || buf == NULL) {
                free(b);
                node_entry_free(buf);
                return false;
        }
        memcpy(buf, p->buf, p->len);
        b->g = g;
        b->req.data = b;
        queue_init(&b->members);
        queue_remove(&p->link);
        queue_push_tail(&b->members, &p->link);
        p->batch = b;
        return apply_entry(g, b, buf, p->len);
}

/* Propose the unsent commands that fit in one batch entry (entry.h), in
 * one node_apply: libraft 0.22.1 takes one buffer per call and sends every
 * entry to every follower at once, so an entry per loop iteration, not per
 * command, is what keeps followers' messages and disk writes few. With
 * `nudge`, an empty batch is proposed when nothing is unsent: the next
 * entry, whatever it carries, hands on the locks an earlier one had to
 * defer (lockfsm.h). False when nothing could be proposed (out of memory,
 * or raft refused). */
static bool propose_batch(struct gateway *g, bool nudge)
{
        struct entry_writer w;
        void *buf;
        size_t len;
        struct batch *b;
        struct queue *q;
        uint64_t now_ns;
        unsigned n = 0;
        size_t size = ENTRY_HEADER_SIZE + 8;

        if (queue_empty(&g->unsent) && !nudge) {
                return false;
        }
        if (!queue_empty(&g->unsent) &&
            QUEUE_DATA(queue_head(&g->unsent), struct pending, link)
                    ->cmd.type == COMMAND_MEMBER) {
                return propose_member(g);
        }
        /* Size the entry first: a full batch is ~78 KiB, most are small.
         * MEMBER entries go alone (the raft glue gives them to the member
         * directory, not to the lock state machine). */
        QUEUE_FOREACH(q, &g->unsent)
        {
                const struct pending *p = QUEUE_DATA(q, struct pending, link);
                if (n == ENTRY_MAX_COMMANDS || p->cmd.type == COMMAND_MEMBER) {
                        break;
                }
                size += 2 + p->len;
                n++;
        }
        b = malloc(sizeof *b);
        buf = node_entry_alloc(size);
        if (b == NULL || buf == NULL ||
            hmap_reserve(&g->pending, g->pending.count + n) != 0) {
                free(b);
                node_entry_free(buf);
                return false;
        }
        b->g = g;
        queue_init(&b->members);
        entry_writer_init(&w, buf, size, node_term(g->node));
        while (!queue_empty(&g->unsent)) {
                struct pending *p =
                    QUEUE_DATA(queue_head(&g->unsent), struct pending, link);
                if (p->cmd.type == COMMAND_MEMBER ||
                    !entry_writer_add(&w, p->buf, p->len)) {
                        break;
                }
                queue_remove(&p->link);
                queue_push_tail(&b->members, &p->link);
                p->batch = b;
        }
        n = w.count;
        len = entry_writer_finish(&w);
        b->req.data = b;
        /* Before the call: node_apply itself starts the disk write and
         * sends to the followers, and that is raft's time. */
        now_ns = uv_hrtime();
        if (!apply_entry(g, b, buf, len)) {
                return false;
        }
        g->stats.batches++;
        g->stats.proposed += n;
        /* Keyed only now: an answer can only come from an applied entry. */
        QUEUE_FOREACH(q, &b->members)
        {
                struct pending *p = QUEUE_DATA(q, struct pending, link);
                p->proposed_ns = now_ns;
                if (!p->internal) {
                        hmap_insert(&g->pending, &p->by_key,
                                    key_hash(p->key_a, p->key_b));
                        p->in_map = true;
                }
        }
        return true;
}

/* Queue a command of the leader's own (EXPIRE, TIMEOUT). */
static void propose_internal(struct gateway *g, const struct command *c)
{
        struct pending *p = pending_new(g, NULL, 0, PROTO_COMMAND);

        if (p == NULL) {
                return; /* the deadline fires again after retry_ms */
        }
        p->len = command_encode(c, p->buf, sizeof p->buf);
        if (p->len == 0 || command_decode(&p->cmd, p->buf, p->len) != 0) {
                free(p);
                return;
        }
        p->internal = true;
        queue_push_tail(&g->unsent, &p->link);
}

static void on_deadline(void *data, const struct deadline *d)
{
        struct gateway *g = data;
        struct command c;

        memset(&c, 0, sizeof c);
        c.session = d->session;
        if (d->seq == 0) {
                c.type = COMMAND_EXPIRE;
                g->stats.expirations++;
                log_info("session %llu: lease expired, proposing EXPIRE",
                         (unsigned long long)d->session);
        } else {
                c.type = COMMAND_TIMEOUT;
                c.target = d->seq;
                c.name = d->name;
                c.name_len = d->name_len;
                g->stats.timeouts++;
        }
        propose_internal(g, &c);
}

/* --- Reads and keepalives ------------------------------------------------- */

/* A LIST being answered: the entries gathered so far (names borrowed from
 * the state machine, which does not change until the reply is written). */
struct listing {
        struct proto_lock_entry *e;
        uint32_t n;
        uint32_t limit;
        size_t size; /* body bytes so far */
        bool more;
};

static bool list_one(void *data, const char *name, size_t name_len,
                     const struct lockfsm_result *holder)
{
        struct listing *ls = data;
        size_t size = PROTO_LIST_ENTRY_SIZE(name_len);
        struct proto_lock_entry *e;

        /* Capped by the limit and by the frame: a reply always fits. */
        if (ls->n == ls->limit || ls->size + size > PROTO_MAX_BODY) {
                ls->more = true;
                return false;
        }
        e = &ls->e[ls->n++];
        e->name.p = name;
        e->name.len = (uint8_t)name_len;
        e->session = holder->session;
        e->owner = holder->owner;
        e->token = holder->token;
        e->count = holder->count;
        e->waiters = holder->waiters;
        ls->size += size;
        return true;
}

static void answer_list(struct gateway *g, struct pending *p)
{
        struct lockfsm *f = node_lockfsm(g->node);
        struct listing ls;
        size_t cap;
        uint8_t *out;

        memset(&ls, 0, sizeof ls);
        ls.limit = p->limit;
        ls.size = PROTO_LIST_REPLY_FIXED;
        ls.e = calloc(p->limit, sizeof *ls.e);
        if (ls.e == NULL) {
                settle_status(p, BATON_ENOMEM);
                return;
        }
        lockfsm_foreach_lock(f, p->cmd.name, p->cmd.name_len, list_one, &ls);
        cap = PROTO_HEADER_SIZE + ls.size;
        out = p->conn != NULL ? conn_reserve(p->conn, cap) : NULL;
        if (out != NULL) {
                send_frame(p->conn, p->req_id,
                           proto_write_list_reply(out, cap, p->req_id, ls.e,
                                                  ls.n, ls.more));
        }
        free(ls.e);
        pending_free(p);
}

static void answer_read(struct gateway *g, struct pending *p)
{
        struct lockfsm *f = node_lockfsm(g->node);
        uint64_t applied = node_last_applied(g->node);
        struct lockfsm_result res;
        uint32_t ttl;
        uint8_t *out;
        int st;

        switch (p->frame_type) {
        case PROTO_QUERY:
                lockfsm_query(f, p->cmd.name, p->cmd.name_len, &res);
                settle(p, applied, &res);
                return;
        case PROTO_CHECK:
                lockfsm_check_token(f, p->cmd.name, p->cmd.name_len, p->token,
                                    &res);
                settle(p, applied, &res);
                return;
        case PROTO_LIST:
                answer_list(g, p);
                return;
        default: /* PROTO_KEEPALIVE */
                st = lockfsm_session_status(f, p->key_a);
                if (st != 0) {
                        settle_status(p, st);
                        return;
                }
                /* Dated from arrival: the client dates its lease from its
                 * send, earlier, so the leader never expires it first. */
                ttl = lockfsm_session_ttl(f, p->key_a);
                deadlines_set(&g->deadlines, p->key_a, 0, NULL, 0,
                              p->received + ttl);
                out = p->conn != NULL ? conn_reserve(p->conn, REPLY_MAX) : NULL;
                if (out != NULL) {
                        send_frame(p->conn, p->req_id,
                                   proto_write_keepalive_ok(out, REPLY_MAX,
                                                            p->req_id, ttl));
                }
                pending_free(p);
                return;
        }
}

static void on_read_barrier(struct node_request *req, int status)
{
        struct readbatch *rb = req->data;
        struct gateway *g = rb->g;

        /* A committed barrier of this leader's term proves it still led
         * after every read in the batch arrived: no newer leader can have
         * changed the answer or expired the session before. */
        while (!queue_empty(&rb->members)) {
                struct pending *p =
                    QUEUE_DATA(queue_head(&rb->members), struct pending, link);
                if (status == 0) {
                        answer_read(g, p);
                } else {
                        redirect(g, p);
                }
        }
        free(rb);
}

static void start_reads(struct gateway *g)
{
        struct readbatch *rb;
        int rv;

        if (queue_empty(&g->reads)) {
                return;
        }
        rb = malloc(sizeof *rb);
        if (rb == NULL) {
                return;
        }
        rb->g = g;
        queue_init(&rb->members);
        while (!queue_empty(&g->reads)) {
                struct queue *q = queue_head(&g->reads);
                queue_remove(q);
                queue_push_tail(&rb->members, q);
        }
        rb->req.data = rb;
        rv = node_barrier(g->node, &rb->req, on_read_barrier);
        if (rv != 0) {
                redirect_all(g, &rb->members);
                free(rb);
                return;
        }
        g->stats.barriers++;
}

void gateway_flush(struct gateway *g)
{
        bool nudge;

        if (!node_serving(g->node)) {
                return;
        }
        /* Locks an applied entry left between holders are handed on by the
         * next entry; when none is on its way, propose an empty one. */
        nudge = g->inflight == 0 && lockfsm_deferred(node_lockfsm(g->node)) > 0;
        /* Bound what is proposed but not applied: libraft has no limit of
         * its own. The rest waits for the next iteration. */
        while ((!queue_empty(&g->unsent) || nudge) &&
               node_last_index(g->node) - node_last_applied(g->node) <
                   g->cfg->max_inflight_entries &&
               propose_batch(g, nudge)) {
                nudge = false;
        }
        start_reads(g);
}

/* --- Events from the state machine ---------------------------------------- */

/* Settle every request waiting for (a, b) with this outcome. */
static void settle_key(struct gateway *g, uint64_t a, uint64_t b,
                       uint64_t index, const struct lockfsm_result *res)
{
        struct hnode *n = hmap_first(&g->pending, key_hash(a, b));

        while (n != NULL) {
                struct pending *p = HMAP_DATA(n, struct pending, by_key);
                n = hmap_next(n);
                if (p->key_a != a || p->key_b != b) {
                        continue;
                }
                if (p->applied_ns == 0) {
                        /* The first event for a request is its own
                         * entry's; a grant after a wait comes later. */
                        p->applied_ns = uv_hrtime();
                }
                if (res->status == 0 && res->kind == LOCKFSM_QUEUED) {
                        continue; /* the grant or the timeout answers it */
                }
                settle(p, index, res);
        }
}

static void on_event(void *data, const struct lockfsm_event *ev)
{
        struct gateway *g = data;
        bool serving = node_serving(g->node);
        struct lockfsm_result res;

        applylog_write(&g->applylog, node_entry_term(g->node), ev);
        switch (ev->type) {
        case LOCKFSM_EV_RESULT:
                g->stats.applied++;
                if (ev->cause == COMMAND_OPEN) {
                        settle_key(g, 0, ev->nonce, ev->index, ev->result);
                } else {
                        settle_key(g, ev->session, ev->seq, ev->index,
                                   ev->result);
                }
                break;
        case LOCKFSM_EV_GRANT:
                deadlines_drop(&g->deadlines, ev->session, ev->seq);
                if (ev->cause != COMMAND_ACQUIRE) {
                        /* A handover: the waiter's ACQUIRE is answered now. */
                        memset(&res, 0, sizeof res);
                        res.kind = LOCKFSM_GRANTED;
                        res.session = ev->session;
                        res.owner = ev->owner;
                        res.token = ev->token;
                        res.count = 1;
                        settle_key(g, ev->session, ev->seq, ev->index, &res);
                }
                break;
        case LOCKFSM_EV_UNQUEUE:
                deadlines_drop(&g->deadlines, ev->session, ev->seq);
                memset(&res, 0, sizeof res);
                res.status = ev->status;
                res.session = ev->session;
                res.owner = ev->owner;
                settle_key(g, ev->session, ev->seq, ev->index, &res);
                break;
        case LOCKFSM_EV_QUEUE:
                /* A try queues only behind a lock its own entry freed, and
                 * the next entry grants it: no deadline to keep. */
                if (serving && ev->wait_ms != COMMAND_WAIT_FOREVER &&
                    ev->wait_ms != COMMAND_WAIT_TRY) {
                        deadlines_set(&g->deadlines, ev->session, ev->seq,
                                      ev->name, ev->name_len,
                                      uv_now(g->loop) + ev->wait_ms);
                }
                break;
        case LOCKFSM_EV_OPEN:
                if (serving) {
                        deadlines_set(
                            &g->deadlines, ev->session, 0, NULL, 0,
                            uv_now(g->loop) +
                                lockfsm_session_ttl(node_lockfsm(g->node),
                                                    ev->session));
                }
                break;
        case LOCKFSM_EV_END:
                deadlines_drop(&g->deadlines, ev->session, 0);
                break;
        default:
                break;
        }
}

static void on_entry(void *data, uint64_t index, uint8_t kind)
{
        struct gateway *g = data;

        applylog_write_entry(&g->applylog, node_entry_term(g->node), index,
                             kind);
}

/* --- Leadership ------------------------------------------------------------
 */

static void start_session_clock(void *data, uint64_t session, uint32_t ttl_ms)
{
        struct gateway *g = data;

#ifdef BATON_CHAOS_BUG_SHORT_TTL
        /* A deliberate bug for the chaos suite's negative control
         * (tests/chaos/batond-bug): a new leader expires every session at
         * once instead of giving it a full TTL, so it expires sessions
         * whose clients still hold a valid lease. (An eighth of the TTL
         * went unnoticed once libbaton found a new leader within tens of
         * milliseconds: its clients renewed in time.) Never built into
         * batond. */
        ttl_ms = 0;
#endif
        deadlines_set(&g->deadlines, session, 0, NULL, 0,
                      uv_now(g->loop) + ttl_ms);
}

static void start_wait_clock(void *data, uint64_t session, uint64_t seq,
                             const char *name, size_t name_len,
                             uint32_t wait_ms)
{
        struct gateway *g = data;

        if (wait_ms != COMMAND_WAIT_FOREVER && wait_ms != COMMAND_WAIT_TRY) {
                deadlines_set(&g->deadlines, session, seq, name, name_len,
                              uv_now(g->loop) + wait_ms);
        }
}

/* The first leader of a new cluster records the bootstrap members'
 * addresses, so nodes added later learn them from the log. */
static void seed_directory(struct gateway *g)
{
        const struct directory *d = node_directory(g->node);
        struct command c;
        unsigned i;

        if (d->n > 0) {
                return;
        }
        for (i = 0; i < g->cfg->n_members; i++) {
                const struct config_member *m = &g->cfg->members[i];
                memset(&c, 0, sizeof c);
                c.type = COMMAND_MEMBER;
                c.mode = COMMAND_MEMBER_SET;
                c.target = m->id;
                c.name = m->raft_address;
                c.name_len = (uint8_t)strlen(m->raft_address);
                c.address = m->client_address;
                c.address_len = (uint8_t)strlen(m->client_address);
                propose_internal(g, &c);
        }
}

void gateway_on_ready(void *data)
{
        struct gateway *g = data;
        struct lockfsm *f = node_lockfsm(g->node);

        g->stats.leader_changes++;
        seed_directory(g);
        /* A new leader cannot know its predecessor's clocks: every session
         * gets a full TTL and every waiter its full wait from now. */
        deadlines_clear(&g->deadlines);
        lockfsm_foreach_session(f, start_session_clock, g);
        lockfsm_foreach_waiter(f, start_wait_clock, g);
        while (!queue_empty(&g->held)) {
                struct queue *q = queue_head(&g->held);
                struct pending *p = QUEUE_DATA(q, struct pending, link);
                queue_remove(q);
                queue_push_tail(
                    p->frame_type == PROTO_COMMAND ? &g->unsent : &g->reads, q);
        }
}

/* Answer everything this node holds for clients: what it never proposed
 * goes elsewhere; what it proposed may still commit under the next leader,
 * so its outcome is unknown. */
static void abandon_all(struct gateway *g)
{
        size_t i;

        redirect_all(g, &g->unsent);
        redirect_all(g, &g->held);
        redirect_all(g, &g->reads);
        for (i = 0; i < g->pending.n_buckets; i++) {
                while (g->pending.buckets[i] != NULL) {
                        settle_status(HMAP_DATA(g->pending.buckets[i],
                                                struct pending, by_key),
                                      BATON_EUNKNOWN);
                }
        }
}

void gateway_on_lost(void *data)
{
        struct gateway *g = data;

        deadlines_clear(&g->deadlines);
        abandon_all(g);
}

/* --- Requests --------------------------------------------------------------
 */

/* Where a request goes when this node does not serve: held if it leads
 * but its barrier is not applied yet, else redirected. */
static bool route(struct gateway *g, struct pending *p, struct queue *serving)
{
        uint64_t leader;
        const char *address;

        if (node_serving(g->node)) {
                queue_push_tail(serving, &p->link);
                return true;
        }
        node_leader(g->node, &leader, &address);
        if (leader == g->cfg->id) {
                queue_push_tail(&g->held, &p->link);
                return true;
        }
        redirect(g, p);
        return false;
}

static void on_command(struct gateway *g, struct conn *c, uint64_t id,
                       const uint8_t *body, uint32_t len)
{
        struct pending *p;
        int rv;

        if (len > COMMAND_MAX_SIZE) {
                conn_fail(c, id, BATON_EMALFORMED, "command too long");
                return;
        }
        p = pending_new(g, c, id, PROTO_COMMAND);
        if (p == NULL) {
                reply_status(c, id, BATON_ENOMEM);
                return;
        }
        memcpy(p->buf, body, len);
        p->len = len;
        rv = command_decode(&p->cmd, p->buf, p->len);
        if (rv == BATON_EMALFORMED || rv == BATON_EVERSION) {
                pending_free(p);
                conn_fail(c, id, rv, "malformed command");
                return;
        }
        if (rv == 0 && p->cmd.type != COMMAND_OPEN &&
            p->cmd.type != COMMAND_CLOSE && p->cmd.type != COMMAND_ACQUIRE &&
            p->cmd.type != COMMAND_RELEASE && p->cmd.type != COMMAND_CANCEL) {
                rv = BATON_EINVAL; /* EXPIRE and TIMEOUT are the leader's */
        }
        if (rv == 0 && p->cmd.type == COMMAND_OPEN) {
                /* The nonce is how the answer finds this request. */
                if (p->cmd.nonce == 0) {
                        rv = BATON_EINVAL;
                } else if (p->cmd.ttl_ms < g->cfg->min_ttl_ms) {
                        rv = BATON_ETTL;
                }
        }
        if (rv != 0) {
                settle_status(p, rv);
                return;
        }
        if (p->cmd.type == COMMAND_OPEN) {
                p->key_a = 0;
                p->key_b = p->cmd.nonce;
        } else {
                p->key_a = p->cmd.session;
                p->key_b = p->cmd.seq;
        }
        route(g, p, &g->unsent);
}

static void on_read(struct gateway *g, struct conn *c,
                    const struct proto_header *h, const uint8_t *body)
{
        struct proto_string name = {NULL, 0};
        struct pending *p;
        int rv = 0;

        p = pending_new(g, c, h->id, h->type);
        if (p == NULL) {
                reply_status(c, h->id, BATON_ENOMEM);
                return;
        }
        if (h->type == PROTO_KEEPALIVE) {
                rv = proto_read_u64(body, h->length, &p->key_a);
        } else if (h->type == PROTO_QUERY) {
                rv = proto_read_query(body, h->length, &name);
        } else if (h->type == PROTO_LIST) {
                rv = proto_read_list(body, h->length, &name, &p->limit);
        } else {
                rv = proto_read_check(body, h->length, &name, &p->token);
        }
        if (rv == BATON_ENAME) {
                settle_status(p, rv);
                return;
        }
        if (rv != 0) {
                pending_free(p);
                conn_fail(c, h->id, rv, "malformed request body");
                return;
        }
        if (name.len > 0) {
                memcpy(p->buf, name.p, name.len);
                p->cmd.name = (const char *)p->buf;
                p->cmd.name_len = name.len;
        }
        route(g, p, &g->reads);
}

static void on_status(struct gateway *g, struct conn *c, uint64_t id)
{
        struct node_member members[PROTO_MAX_MEMBERS];
        struct node_state ns;
        struct proto_status st;
        struct lockfsm_stats fs;
        unsigned i, n;
        uint8_t *out;
        size_t cap = PROTO_HEADER_SIZE + 128 +
                     PROTO_MAX_MEMBERS * (10 + 2 * PROTO_ADDRESS_MAX);

        memset(&st, 0, sizeof st);
        node_state(g->node, &ns);
        lockfsm_stats(node_lockfsm(g->node), &fs);
        st.id = g->cfg->id;
        st.role = ns.role;
        st.term = ns.term;
        st.leader_id = ns.leader_id;
        st.commit_index = ns.commit_index;
        st.applied_index = ns.applied_index;
        st.last_index = ns.last_index;
        st.sessions = fs.sessions;
        st.locks = fs.locks;
        st.waiters = fs.waiters;
        n = node_members(g->node, members, PROTO_MAX_MEMBERS);
        for (i = 0; i < n; i++) {
                const char *client =
                    node_client_address(g->node, members[i].id);
                struct proto_member *m = &st.members[st.n_members++];
                m->id = members[i].id;
                m->role = members[i].role;
                m->raft_address.p = members[i].raft_address;
                m->raft_address.len = (uint8_t)strlen(members[i].raft_address);
                m->client_address.p = client;
                m->client_address.len = (uint8_t)strlen(client);
        }
        out = conn_reserve(c, cap);
        if (out != NULL) {
                send_frame(c, id, proto_write_status(out, cap, id, &st));
        }
}

/* --- Membership ------------------------------------------------------------
 */

/* A MEMBER_ADD that failed after recording the member's addresses: take
 * them out of the directory again unless raft did add the member. */
static void forget_member(struct pending *p)
{
        struct command c;

        if (node_has_member(p->g->node, p->member, NULL) ||
            !node_serving(p->g->node)) {
                return; /* a later leader's directory is not ours to fix */
        }
        memset(&c, 0, sizeof c);
        c.type = COMMAND_MEMBER;
        c.mode = COMMAND_MEMBER_REMOVE;
        c.target = p->member;
        propose_internal(p->g, &c);
}

/* The last step of an admin request: answer it, unless its client left. */
static void admin_done(struct pending *p, int status)
{
        if (status != 0) {
                log_warn("member %llu: %s", (unsigned long long)p->member,
                         baton_strerror(status));
        }
        settle_status(p, status);
}

static void on_assigned(struct node_request *req, int status)
{
        struct pending *p = req->data;

        if (status == 0) {
                log_info("member %llu added as a voter",
                         (unsigned long long)p->member);
        }
        admin_done(p, status);
}

static void on_added(struct node_request *req, int status)
{
        struct pending *p = req->data;
        int rv;

        if (status != 0) {
                forget_member(p);
                admin_done(p, status);
                return;
        }
        /* A voter only after it caught up, so quorum never waits on it. */
        rv = node_promote(p->g->node, &p->req, p->member, on_assigned);
        if (rv != 0) {
                admin_done(p, rv);
        }
}

static void on_member_recorded(struct node_request *req, int status)
{
        struct pending *p = req->data;
        int rv;

        if (status != 0) {
                admin_done(p, status);
                return;
        }
        if (req->result != NULL && req->result->status != 0) {
                admin_done(p, req->result->status);
                return;
        }
        rv =
            node_add(p->g->node, &p->req, p->member, p->raft_address, on_added);
        if (rv != 0) {
                admin_done(p, rv);
        }
}

/*
 * MEMBER_ADD: record the member's addresses in the directory (a MEMBER
 * entry), then raft_add it as a spare and promote it to voter once it has
 * caught up. The new node runs with join = true.
 */
static void on_member_add(struct gateway *g, struct conn *c,
                          const struct proto_header *h, const uint8_t *body)
{
        struct proto_string raft, client;
        struct pending *p;
        void *buf;
        uint64_t id;
        int rv;

        if (proto_read_member_add(body, h->length, &id, &raft, &client) != 0) {
                conn_fail(c, h->id, BATON_EMALFORMED, "bad MEMBER_ADD");
                return;
        }
        if (!node_serving(g->node)) {
                reply_not_leader(g, c, h->id);
                return;
        }
        p = pending_new(g, c, h->id, h->type);
        if (p == NULL) {
                reply_status(c, h->id, BATON_ENOMEM);
                return;
        }
        p->member = id;
        memcpy(p->raft_address, raft.p, raft.len);
        /* Refused before anything is recorded: an existing member's
         * directory entry must never be overwritten by a failed add. */
        if (id == 0 || node_has_member(g->node, id, p->raft_address)) {
                admin_done(p, BATON_EINVAL);
                return;
        }
        memset(&p->cmd, 0, sizeof p->cmd);
        p->cmd.type = COMMAND_MEMBER;
        p->cmd.mode = COMMAND_MEMBER_SET;
        p->cmd.target = id;
        p->cmd.name = raft.p;
        p->cmd.name_len = raft.len;
        p->cmd.address = client.p;
        p->cmd.address_len = client.len;
        p->len = command_encode(&p->cmd, p->buf, sizeof p->buf);
        if (p->len == 0) {
                admin_done(p, BATON_EINVAL);
                return;
        }
        buf = node_entry_alloc(p->len);
        if (buf == NULL) {
                admin_done(p, BATON_ENOMEM);
                return;
        }
        memcpy(buf, p->buf, p->len);
        p->req.data = p;
        rv = node_apply(g->node, &p->req, buf, p->len, on_member_recorded);
        if (rv != 0) {
                node_entry_free(buf);
                admin_done(p, rv);
        }
}

static void on_removed(struct node_request *req, int status)
{
        struct pending *p = req->data;
        struct command c;

        if (status == 0) {
                /* Best effort: a stale directory entry only names an
                 * address nobody is sent to. */
                memset(&c, 0, sizeof c);
                c.type = COMMAND_MEMBER;
                c.mode = COMMAND_MEMBER_REMOVE;
                c.target = p->member;
                if (node_serving(p->g->node)) {
                        propose_internal(p->g, &c);
                }
                log_info("member %llu removed", (unsigned long long)p->member);
        }
        admin_done(p, status);
}

static void on_member_remove(struct gateway *g, struct conn *c,
                             const struct proto_header *h, const uint8_t *body)
{
        struct pending *p;
        uint64_t id;
        int rv;

        if (proto_read_u64(body, h->length, &id) != 0) {
                conn_fail(c, h->id, BATON_EMALFORMED, "bad MEMBER_REMOVE");
                return;
        }
        if (!node_serving(g->node)) {
                reply_not_leader(g, c, h->id);
                return;
        }
        p = pending_new(g, c, h->id, h->type);
        if (p == NULL) {
                reply_status(c, h->id, BATON_ENOMEM);
                return;
        }
        p->member = id;
        p->req.data = p;
        rv = node_remove(g->node, &p->req, id, on_removed);
        if (rv != 0) {
                admin_done(p, rv);
        }
}

static void on_transfer_done(struct node *n)
{
        log_info("leadership transfer finished");
        (void)n;
}

void gateway_on_frame(void *data, struct conn *c, const struct proto_header *h,
                      const uint8_t *body)
{
        struct gateway *g = data;
        uint64_t target;
        uint8_t *out;

        if (h->type <= PROTO_LIST) {
                g->stats.requests[h->type]++;
        }
        switch (h->type) {
        case PROTO_COMMAND:
                on_command(g, c, h->id, body, h->length);
                break;
        case PROTO_KEEPALIVE:
        case PROTO_QUERY:
        case PROTO_CHECK:
        case PROTO_LIST:
                on_read(g, c, h, body);
                break;
        case PROTO_STATUS:
        case PROTO_PING:
                if (h->length != 0) {
                        conn_fail(c, h->id, BATON_EMALFORMED,
                                  "STATUS and PING have no body");
                        break;
                }
                if (h->type == PROTO_STATUS) {
                        on_status(g, c, h->id);
                        break;
                }
                out = conn_reserve(c, PROTO_HEADER_SIZE);
                if (out != NULL) {
                        send_frame(c, h->id,
                                   proto_write_empty(out, PROTO_HEADER_SIZE,
                                                     h->id, PROTO_PONG));
                }
                break;
        case PROTO_TRANSFER:
                if (proto_read_u64(body, h->length, &target) != 0) {
                        conn_fail(c, h->id, BATON_EMALFORMED, "bad TRANSFER");
                        break;
                }
                if (!node_serving(g->node)) {
                        reply_not_leader(g, c, h->id);
                        break;
                }
                reply_status(c, h->id,
                             node_transfer(g->node, target, on_transfer_done));
                break;
        case PROTO_MEMBER_ADD:
                on_member_add(g, c, h, body);
                break;
        case PROTO_MEMBER_REMOVE:
                on_member_remove(g, c, h, body);
                break;
        default:
                conn_fail(c, h->id, BATON_EMALFORMED,
                          "a response type sent as a request");
                break;
        }
}

void gateway_on_gone(void *data, struct conn *c)
{
        (void)data;
        /* Requests already proposed still run; only their answer is lost,
         * and the client retries with the same seq after reconnecting. */
        while (!queue_empty(&c->pendings)) {
                struct queue *q = queue_head(&c->pendings);
                struct pending *p = QUEUE_DATA(q, struct pending, conn_link);
                queue_remove(q);
                p->conn = NULL;
        }
}

int gateway_init(struct gateway *g, uv_loop_t *loop, struct node *node,
                 const struct config *cfg)
{
        int rv;

        memset(g, 0, sizeof *g);
        g->loop = loop;
        g->node = node;
        g->cfg = cfg;
        hmap_init(&g->pending, &mem_libc);
        queue_init(&g->unsent);
        queue_init(&g->held);
        queue_init(&g->reads);
        rv = applylog_open(&g->applylog, cfg->apply_log);
        if (rv != 0) {
                return rv;
        }
        /* A lost EXPIRE or TIMEOUT proposal is retried after one election
         * timeout, by when a new leader would have taken over. */
        deadlines_init(&g->deadlines, loop, cfg->election_timeout_ms,
                       on_deadline, g);
        node_set_event_cb(node, on_event, g);
        node_set_entry_cb(node, on_entry, g);
        return 0;
}

void gateway_close(struct gateway *g)
{
        node_set_event_cb(g->node, NULL, NULL);
        node_set_entry_cb(g->node, NULL, NULL);
        abandon_all(g);
        deadlines_close(&g->deadlines);
        applylog_close(&g->applylog);
        hmap_close(&g->pending);
}
