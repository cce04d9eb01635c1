/* batond's request gateway: takes every client frame, and proposes lock
 * commands to raft in one batch entry per loop iteration (the write path). */
#include "gateway.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "../../../include/baton/errors.h"
#include "../../fsm/entry.h"
#include "gwaudit.h"
#include "gwlog.h"
#include "access.h"
#include "admin.h"
#include "admit.h"
#include "fanout.h"
#include "gwreq.h"
#include "leader.h"
#include "names.h"
#include "pending.h"
#include "quotas.h"
#include "reads.h"
#include "reply.h"

/* --- Proposals ------------------------------------------------------------ */

/* The commands of one proposed entry, answered by their events once it is
 * applied, or all at once when it fails. */
struct batch {
        struct gateway_req req;
        struct queue members;
};

static void on_applied(struct gateway_req *req, const struct gateway_now *now,
                       int status)
{
        struct batch *b = req->data;
        struct gateway *g = req->g;

        g->inflight--;
        /* Closed, the core answered every tracked member already
         * (gateway_close()): what is left is the leader's own, which only
         * goes. */
        while (!queue_empty(&b->members)) {
                struct pending *p =
                    QUEUE_DATA(queue_head(&b->members), struct pending, link);
                queue_remove(&p->link);
                /* On success the first entry is applied and the rest follow;
                 * their events answer them. On failure none of the batch
                 * answered yet can know its fate: the entries may still
                 * commit under the next leader. */
                if (p->internal || g->closed) {
                        pending_free(p, now); /* a deadline re-fires if lost */
                } else if (status != 0) {
                        pending_settle_status(p, now, BATON_EUNKNOWN);
                }
        }
        if (status != 0 && !g->closed) {
                gwlog(g, LOG_WARN, NULL, "proposal failed: %s",
                      req->errmsg != NULL ? req->errmsg : "");
        }
        free(b);
}

/* Hand one entry to raft for batch `b`; `buf` is raft's on success. If raft
 * refuses it, the members were never proposed: they go elsewhere. */
static bool apply_entry(struct gateway *g, struct batch *b, void *buf,
                        size_t len)
{
        int rv = gwreq_propose(&b->req, buf, len);

        if (rv != 0) {
                gwreq_entry_free(g, buf);
                gwlog(g, LOG_WARN, NULL, "raft_apply: %s",
                      b->req.errmsg != NULL ? b->req.errmsg : "");
                pending_redirect_all(&b->members);
                free(b);
                return false;
        }
        g->inflight++;
        return true;
}

/* A batch for the entry about to be proposed; NULL when out of memory. */
static struct batch *batch_new(struct gateway *g)
{
        struct batch *b = malloc(sizeof *b);

        if (b != NULL) {
                /* Nothing to abandon: gateway_close() answers its tracked
                 * members (pending_abandon_tracked()). */
                gwreq_init(&b->req, g, b, on_applied, NULL);
                queue_init(&b->members);
        }
        return b;
}

/* Move the head of the unsent queue into batch `b`. */
static struct pending *take_unsent(struct gateway *g, struct batch *b)
{
        struct pending *p =
            QUEUE_DATA(queue_head(&g->unsent), struct pending, link);

        queue_remove(&p->link);
        queue_push_tail(&b->members, &p->link);
        return p;
}

/* MEMBER, ACL and DIGEST entries go alone: the raft glue gives them to
 * the member directory, to the access list and to the state digests (an
 * ACL or DIGEST entry also passes the lock state machine, which takes its
 * stamp and answers its RESULT). */
static bool alone(uint8_t type)
{
        return type == COMMAND_MEMBER || type == COMMAND_ACL ||
               type == COMMAND_DIGEST;
}

/* Propose the MEMBER or ACL command at the head of the unsent queue (the
 * leader's own, recording a member's addresses) as an entry of its own. */
static bool propose_member(struct gateway *g)
{
        struct pending *p =
            QUEUE_DATA(queue_head(&g->unsent), struct pending, link);
        struct batch *b = batch_new(g);
        void *buf = gwreq_entry_alloc(g, p->len);
        /* An ACL or DIGEST entry has a RESULT; a MEMBER entry none. */
        bool result =
            p->cmd.type == COMMAND_ACL || p->cmd.type == COMMAND_DIGEST;

        if (b == NULL || buf == NULL) {
                free(b);
                gwreq_entry_free(g, buf);
                return false;
        }
        memcpy(buf, p->buf, p->len);
        take_unsent(g, b);
        if (!apply_entry(g, b, buf, p->len)) {
                return false;
        }
        /* Its RESULT is counted as applied on every node: count it as
         * proposed too. */
        if (result) {
                g->stats.batches++;
                g->stats.proposed++;
        }
        return true;
}

/* How often the leader's wall clock goes into the log: the grants of a
 * batch record the last CLOCK before them, so their time is this late at
 * most (docs/fsm.md, "Holder identity"). */
#define CLOCK_EVERY_MS 1000

/* Put a CLOCK of `wall_ms` (the host's wall clock) at the head of the
 * next batch when a second has passed since the last one. Nothing when out
 * of memory: the next batch tries. */
static void stamp_clock(struct gateway *g, uint64_t wall_ms)
{
        struct command c = {.type = COMMAND_CLOCK, .time_ms = wall_ms};
        struct queue *t;

        if (c.time_ms < g->clock_sent + CLOCK_EVERY_MS) {
                return;
        }
        pending_queue_own(g, &c);
        t = queue_tail(&g->unsent);
        if (t == &g->unsent ||
            QUEUE_DATA(t, struct pending, link)->cmd.type != COMMAND_CLOCK) {
                return; /* not queued */
        }
        g->clock_sent = c.time_ms;
        queue_remove(t);
        queue_insert_after(&g->unsent, t);
}

#ifdef BATON_CHAOS_BUG_EARLYACK
/* A deliberate bug for test_simhost_earlyack, a negative control of the
 * simulation: the leader answers every ACQUIRE of batch `b` GRANTED, with
 * the entry's index as its token, as soon as it proposes it, not once the
 * entry is applied, so a client may be told a grant that never commits
 * or that the state machine refuses. Unrelated to the raft room's
 * BATON_CHAOS_EARLYACK (appends acknowledged before they are written).
 * Never built into batond. */
static void bug_answer_early(struct gateway *g, struct batch *b,
                             const struct gateway_now *now)
{
        uint64_t index = g->host->last_index(g->host);
        struct queue *q = queue_head(&b->members);

        while (q != &b->members) {
                struct pending *p = QUEUE_DATA(q, struct pending, link);
                struct lockfsm_result res;
                q = q->next;
                if (p->internal || p->cmd.type != COMMAND_ACQUIRE) {
                        continue;
                }
                memset(&res, 0, sizeof res);
                res.kind = PROTO_KIND_GRANTED;
                res.session = p->cmd.session;
                res.owner = p->cmd.owner;
                res.token = index;
                res.count = 1;
                pending_settle(p, now, index, &res);
        }
}
#endif

/* Propose the unsent commands that fit in one batch entry (entry.h), in
 * one proposal: libraft 0.22.1 takes one buffer per call and sends every
 * entry to every follower at once, so an entry per loop iteration, not per
 * command, is what keeps followers' messages and disk writes few. With
 * `nudge`, an empty batch is proposed when nothing is unsent: the next
 * entry, whatever it carries, hands on the locks an earlier one had to
 * defer (lockfsm.h). False when nothing could be proposed (out of memory,
 * or raft refused). Its commands were proposed at now->ns. */
static bool propose_batch(struct gateway *g, const struct gateway_now *now,
                          uint64_t wall_ms, bool nudge)
{
        struct entry_writer w;
        struct batch *b;
        struct queue *q;
        void *buf;
        size_t len;
        unsigned n = 0;
        size_t size = ENTRY_HEADER_SIZE + 8;

        if (queue_empty(&g->unsent) && !nudge) {
                return false;
        }
        if (!queue_empty(&g->unsent) &&
            alone(QUEUE_DATA(queue_head(&g->unsent), struct pending, link)
                      ->cmd.type)) {
                return propose_member(g);
        }
        stamp_clock(g, wall_ms);
        /* Size the entry first: a full batch of single-name commands is
         * ~78 KiB (MULTIs can make it larger), most are small.
         * MEMBER entries go alone (the raft glue gives them to the member
         * directory, not to the lock state machine). */
        QUEUE_FOREACH(q, &g->unsent)
        {
                const struct pending *p = QUEUE_DATA(q, struct pending, link);
                if (n == ENTRY_MAX_COMMANDS || alone(p->cmd.type)) {
                        break;
                }
                size += 2 + p->len;
                n++;
        }
        b = batch_new(g);
        buf = gwreq_entry_alloc(g, size);
        if (b == NULL || buf == NULL ||
            hmap_reserve(&g->pending, g->pending.count + n) != 0) {
                free(b);
                gwreq_entry_free(g, buf);
                return false;
        }
        /* The term this node serves in: raft takes the entry only while
         * it leads in that term (gateway.h, gateway_on_ready()). */
        entry_writer_init(&w, buf, size, g->term);
        while (!queue_empty(&g->unsent)) {
                const struct pending *p =
                    QUEUE_DATA(queue_head(&g->unsent), struct pending, link);
                if (alone(p->cmd.type) ||
                    !entry_writer_add(&w, p->buf, p->len)) {
                        break;
                }
                take_unsent(g, b);
        }
        n = w.count;
        len = entry_writer_finish(&w);
        if (!apply_entry(g, b, buf, len)) {
                return false;
        }
        g->stats.batches++;
        g->stats.proposed += n;
        /* Keyed only now: an answer can only come from an applied entry. */
        QUEUE_FOREACH(q, &b->members)
        {
                struct pending *p = QUEUE_DATA(q, struct pending, link);
                /* The turn's time, taken before any batch was built:
                 * the proposal itself starts the disk write and sends to
                 * the followers, and that is raft's time. */
                p->proposed_ns = now->ns;
                if (!p->internal) {
                        pending_track(p);
                }
        }
#ifdef BATON_CHAOS_BUG_EARLYACK
        bug_answer_early(g, b, now);
#endif
        return true;
}

/* Propose the newest digest this leader made of its state, for every
 * node to compare with its own (src/server/raft/fsmdigest.h). Nothing
 * when out of memory: the next digest tries. */
static void propose_digest(struct gateway *g)
{
        struct command c = {.type = COMMAND_DIGEST};

        if (g->host->digest_to_propose(g->host, &c.target, &c.token)) {
                pending_queue_own(g, &c);
        }
}

void gateway_flush(struct gateway *g, const struct gateway_now *now,
                   uint64_t wall_ms)
{
        struct gateway_host *h = g->host;
        bool nudge;

        if (!g->serving) {
                return;
        }
        /* Locks an applied entry left between holders are handed on by the
         * next entry; when none is on its way, propose an empty one. */
        nudge = g->inflight == 0 && lockfsm_deferred(h->lockfsm(h)) > 0;
        access_tick(g, now->ms);
        propose_digest(g);
        /* Bound what is proposed but not applied: libraft has no limit of
         * its own. The rest waits for the next iteration. */
        while ((!queue_empty(&g->unsent) || nudge) &&
               h->last_index(h) - h->last_applied(h) <
                   g->cfg->max_inflight_entries &&
               propose_batch(g, now, wall_ms, nudge)) {
                nudge = false;
        }
        reads_start(g);
}

/* --- Leadership ------------------------------------------------------------
 */

void gateway_on_ready(struct gateway *g, const struct gateway_now *now,
                      uint64_t term)
{
        /* First: what follows (the first lookup may apply entries queued
         * behind a restore) happens on a node that serves, as it did when
         * the core asked the node. */
        g->serving = true;
        g->term = term;
        g->stats.elections_won++;
        leader_start(g, now);
        admit_held(g, now);
}

/* Answer everything this node holds for clients: what it never proposed
 * goes elsewhere; what it proposed may still commit under the next leader,
 * so its outcome is unknown. */
static void abandon_all(struct gateway *g, const struct gateway_now *now)
{
        pending_redirect_all(&g->unsent);
        pending_redirect_all(&g->held);
        pending_redirect_all(&g->reads);
        pending_abandon_tracked(g, now);
}

void gateway_on_lost(struct gateway *g, const struct gateway_now *now)
{
        g->serving = false;
        deadlines_clear(&g->deadlines);
        abandon_all(g, now);
}

/* --- Requests --------------------------------------------------------------
 */

/* Whether a decoded client command may be proposed: 0, or the status that
 * answers it. */
static int check_command(struct gateway *g, const struct command *c)
{
        if (c->type != COMMAND_OPEN && c->type != COMMAND_CLOSE &&
            c->type != COMMAND_ACQUIRE && c->type != COMMAND_MULTI &&
            c->type != COMMAND_RELEASE && c->type != COMMAND_CANCEL &&
            c->type != COMMAND_PROCLAIM && c->type != COMMAND_SET_VALUE &&
            c->type != COMMAND_EXTEND && c->type != COMMAND_REVOKE &&
            c->type != COMMAND_REVOKE_LOCK) {
                /* EXPIRE, TIMEOUT and EXPIRE_HOLD are the leader's. */
                return BATON_EINVAL;
        }
        if (c->type == COMMAND_OPEN) {
                /* The nonce is how the answer finds this request. */
                if (c->nonce == 0) {
                        return BATON_EINVAL;
                }
                if (c->ttl_ms < g->cfg->min_ttl_ms ||
                    c->ttl_ms > g->cfg->max_ttl_ms) {
                        return BATON_ETTL;
                }
                /* A session no secret can attach to would be anyone's
                 * whose connection repeats its OPEN: refuse it. */
                if (c->hash == NULL) {
                        return BATON_EINVAL;
                }
        }
        return 0;
}

/* A REVOKE or REVOKE_LOCK is an administrator's, and says who asked: the
 * identity of the client's certificate, whatever the client put there;
 * the lock-delay is the cluster's, as an expiry's. 0, or the status that
 * answers it. */
static int take_revoke(struct gateway *g, struct gateway_conn *c,
                       struct pending *p)
{
        if (p->cmd.type == COMMAND_REVOKE_LOCK) {
                p->cmd.address = c->identity;
                p->cmd.address_len =
                    (uint8_t)strnlen(c->identity, COMMAND_CLIENT_NAME_MAX);
        } else {
                p->cmd.name = c->identity;
                p->cmd.name_len =
                    (uint8_t)strnlen(c->identity, COMMAND_CLIENT_NAME_MAX);
        }
        p->cmd.delay_ms = g->cfg->lock_delay_ms;
        return pending_recode(p);
}

static void on_command(struct gateway *g, const struct gateway_now *now,
                       struct gateway_conn *c, uint64_t id, const uint8_t *body,
                       uint32_t len)
{
        struct pending *p;
        int rv, type;

        if (len > COMMAND_ANY_MAX_SIZE) {
                reply_fail(g, c, id, BATON_EMALFORMED, "command too long");
                return;
        }
        /* Room for the command as sent, but a REVOKE's or REVOKE_LOCK's
         * for the largest command: the leader encodes it again with who
         * asked, and an OPEN's with its principal. */
        type = command_peek_type(body, len);
        p = pending_new(g, now, c, id, PROTO_COMMAND,
                        (type == COMMAND_REVOKE ||
                         type == COMMAND_REVOKE_LOCK || type == COMMAND_OPEN) &&
                                len < COMMAND_MAX_SIZE
                            ? COMMAND_MAX_SIZE
                            : len);
        if (p == NULL) {
                reply_status(g, c, id, BATON_ENOMEM);
                return;
        }
        memcpy(p->buf, body, len);
        p->len = len;
        rv = command_decode(&p->cmd, p->buf, p->len);
        if (rv == BATON_EMALFORMED || rv == BATON_EVERSION) {
                p->status = rv;
                pending_free(p, now);
                reply_fail(g, c, id, rv,
                           rv == BATON_EVERSION
                               ? "command version not supported"
                               : "malformed command");
                return;
        }
        if (rv == 0) {
                rv = check_command(g, &p->cmd);
        }
        if (rv == 0) {
                rv = admit_names(g, c, &p->cmd);
                if (rv == BATON_EPERM) {
                        /* No rule gave lock: the client says so. */
                        pending_settle_rejected(p, now, rv, ACL_PERM_LOCK, 0);
                        return;
                }
        }
        if (rv == 0 && p->cmd.type == COMMAND_OPEN) {
                rv = quotas_take_open(g, c, p);
        }
        if (rv == 0 && (p->cmd.type == COMMAND_REVOKE ||
                        p->cmd.type == COMMAND_REVOKE_LOCK)) {
                rv = admit_revoke(g, c, p);
                if (rv == 0) {
                        p->audited = true;
                        p->who = gwaudit_who_new(c);
                        rv = take_revoke(g, c, p);
                }
        }
        if (rv == BATON_ETTL) {
                /* The range accepted, for the client to say. */
                pending_settle_rejected(p, now, rv, g->cfg->min_ttl_ms,
                                        g->cfg->max_ttl_ms);
                return;
        }
        if (rv != 0) {
                pending_settle_status(p, now, rv);
                return;
        }
        if (p->cmd.type == COMMAND_OPEN) {
                p->key_a = 0;
                p->key_b = p->cmd.nonce;
        } else {
                p->key_a = p->cmd.session;
                p->key_b = p->cmd.seq;
        }
        admit_route(p, now, &g->unsent);
}

static void on_status(struct gateway *g, struct gateway_conn *c, uint64_t id,
                      uint16_t flags)
{
        struct proto_status st;
        struct proto_versions v;
        struct lockfsm_stats fs;
        uint8_t *out;
        size_t cap = PROTO_HEADER_SIZE + 128 + 1 + PROTO_RELEASE_MAX + 32 +
                     PROTO_MAX_MEMBERS * (10 + 2 * PROTO_ADDRESS_MAX);

        /* What this node runs and writes, and its alarms, only for a
         * STATUS that asks. */
        flags &= PROTO_FLAG_VERSIONS | PROTO_FLAG_ALARMS;
        g->host->status(g->host, &st,
                        (flags & PROTO_FLAG_VERSIONS) != 0 ? &v : NULL);
        lockfsm_stats(g->host->lockfsm_nowait(g->host), &fs);
        st.id = g->cfg->id;
        st.sessions = fs.sessions;
        st.locks = fs.locks;
        st.waiters = fs.waiters;
        out = reply_reserve(g, c, cap);
        if (out == NULL) {
                return;
        }
        if (flags & PROTO_FLAG_ALARMS) {
                memset(&st.alarms, 0, sizeof st.alarms);
                g->host->alarms(g->host, &st.alarms);
        }
        reply_frame(g, c, id, proto_write_status(out, cap, id, flags, &st, &v));
}

/* STATUS and PING: answered here, by any node, with no body. */
static void on_probe(struct gateway *g, struct gateway_conn *c,
                     const struct proto_header *h)
{
        uint8_t *out;

        if (h->length != 0) {
                reply_fail(g, c, h->id, BATON_EMALFORMED,
                           "STATUS and PING have no body");
                return;
        }
        if (h->type == PROTO_STATUS) {
                on_status(g, c, h->id, h->flags);
                return;
        }
        out = reply_reserve(g, c, PROTO_HEADER_SIZE);
        if (out != NULL) {
                reply_frame(g, c, h->id,
                            proto_write_empty(out, PROTO_HEADER_SIZE, h->id,
                                              PROTO_PONG));
        }
}

/* The watches, with a history that starts at the state as it is. */
static int watches_start(struct gateway *g)
{
        struct watches_limits l = {g->cfg->max_watches,
                                   g->cfg->max_watches_per_conn,
                                   g->cfg->watch_history, g->cfg->output_limit};
        struct gateway_host *h = g->host;
        uint64_t started;
        bool pending;

        access_compare(g);
        h->restores(h, &started, &pending);
        return watches_init(&g->watches, g, &l, h->last_applied(h), started);
}

/* WATCH and UNWATCH, served by any node from what it applied: every node
 * applies the same log, so each tells the same events in the same order.
 * While it installs a leader's snapshot a node has not applied what the
 * snapshot holds, so it serves no watch (BATON_EUNAVAILABLE: the client
 * goes to another node); once it has, what came before is not kept. */
static void on_watch(struct gateway *g, struct gateway_conn *c,
                     const struct proto_header *h, const uint8_t *body)
{
        struct gateway_host *host = g->host;
        struct proto_watch req;
        uint64_t watch_id, started;
        bool pending;
        int rv;

        if (h->type == PROTO_UNWATCH) {
                if (proto_read_u64(body, h->length, &watch_id) != 0) {
                        reply_fail(g, c, h->id, BATON_EMALFORMED,
                                   "bad UNWATCH");
                        return;
                }
                watches_cancel(&g->watches, c, h->id, watch_id);
                return;
        }
        rv = proto_read_watch(body, h->length, &req);
        if (rv == BATON_ENAME) {
                /* A bad name, as a QUERY's: refused, the connection kept. */
                reply_status(g, c, h->id, BATON_ENAME);
                return;
        }
        if (rv != 0) {
                reply_fail(g, c, h->id, BATON_EMALFORMED, "bad WATCH");
                return;
        }
        if (names_admit(g, c, "WATCH", req.name.p, req.name.len,
                        (req.flags & PROTO_WATCH_PREFIX) != 0,
                        ACL_PERM_READ) != 0) {
                /* No rule gave read: the RESULT's count says so. */
                reply_result(g, c, h->id,
                             &(struct proto_result){.status = BATON_EPERM,
                                                    .kind = PROTO_KIND_REJECTED,
                                                    .count = ACL_PERM_READ});
                return;
        }
        host->restores(host, &started, &pending);
        if (pending) {
                reply_status(g, c, h->id, BATON_EUNAVAILABLE);
                return;
        }
        if (started != g->watches.restores) {
                watches_reset(&g->watches, started, host->last_applied(host));
        }
        watches_open(&g->watches, c, h->id, &req, host->last_applied(host));
}

void gateway_on_restored(struct gateway *g)
{
        struct gateway_host *h = g->host;
        uint64_t started;
        bool pending;

        h->restores(h, &started, &pending);
        if (!pending && started != g->watches.restores) {
                watches_reset(&g->watches, started, h->last_applied(h));
        }
}

void gateway_on_frame(struct gateway *g, const struct gateway_now *now,
                      struct gateway_conn *c, const struct proto_header *h,
                      const uint8_t *body)
{
        if (h->type <= PROTO_ATTACH) {
                g->stats.requests[h->type]++;
        }
        if (!c->listed) {
                queue_push_tail(&g->conns, &c->core_link);
                c->listed = true;
        }
        if (!admit_frame(g, c, h, body) || !quotas_admit(g, now, c, h, body)) {
                return;
        }
        switch (h->type) {
        case PROTO_COMMAND:
                on_command(g, now, c, h->id, body, h->length);
                break;
        case PROTO_KEEPALIVE:
        case PROTO_QUERY:
        case PROTO_CHECK:
        case PROTO_LIST:
        case PROTO_SESSIONS:
        case PROTO_ATTACH:
                reads_on_frame(g, now, c, h, body);
                break;
        case PROTO_STATUS:
        case PROTO_PING:
                on_probe(g, c, h);
                break;
        case PROTO_TRANSFER:
                admin_transfer(g, c, h, body);
                break;
        case PROTO_MEMBER_ADD:
                admin_member_add(g, c, h, body);
                break;
        case PROTO_MEMBER_REMOVE:
                admin_member_remove(g, c, h, body);
                break;
        case PROTO_WATCH:
        case PROTO_UNWATCH:
                on_watch(g, c, h, body);
                break;
        case PROTO_BACKUP:
                reads_on_backup(g, now, c, h, body);
                break;
        case PROTO_ACL:
                access_on_frame(g, c, h, body);
                break;
        default:
                reply_fail(g, c, h->id, BATON_EMALFORMED,
                           "a response type sent as a request");
                break;
        }
}

void gateway_conn_gone(struct gateway *g, struct gateway_conn *c)
{
        if (c->listed) {
                queue_remove(&c->core_link);
                c->listed = false;
        }
        watches_forget_conn(&g->watches, c);
        reply_forget_conn(c);
}

void gateway_on_event(struct gateway *g, const struct gateway_now *now,
                      uint64_t term, const struct lockfsm_event *ev)
{
        fanout_event(g, now, term, ev);
}

void gateway_on_acl(struct gateway *g, uint64_t index, const struct command *c,
                    int status)
{
        access_on_applied(g, index, c, status);
}

void gateway_on_timer(struct gateway *g, const struct gateway_now *now)
{
        deadlines_run(&g->deadlines, now->ms, leader_expiry_room(g));
}

void gateway_on_done(struct gateway *g, const struct gateway_now *now,
                     struct gateway_req *req, int status)
{
        gwreq_done(g, req, now, status);
}

unsigned gateway_requests_out(const struct gateway *g)
{
        return g->reqs_out;
}

/* deadlines_arm_cb: the host's timer is the deadlines' one. */
static void arm_timer(void *data, uint64_t at)
{
        struct gateway *g = data;

        _Static_assert(DEADLINES_NEVER == GATEWAY_NEVER, "one 'no timer'");
        g->host->timer(g->host, at);
}

int gateway_init(struct gateway *g, struct gateway_host *host,
                 const struct config *cfg, enum log_level level)
{
        int rv;

        memset(g, 0, sizeof *g);
        g->host = host;
        g->log_level = level;
        g->cfg = cfg;
        gwreq_start(g);
        hmap_init(&g->pending, &mem_libc);
        queue_init(&g->unsent);
        queue_init(&g->held);
        queue_init(&g->reads);
        queue_init(&g->conns);
        quotas_init(g);
        rv = watches_start(g);
        if (rv != 0) {
                return rv;
        }
        /* A lost EXPIRE or TIMEOUT proposal is retried after one election
         * timeout, by when a new leader would have taken over. */
        deadlines_init(&g->deadlines, cfg->election_timeout_ms,
                       leader_on_deadline, arm_timer, g);
        leases_init(&g->expiring);
        access_init(g);
        return 0;
}

void gateway_close(struct gateway *g, const struct gateway_now *now)
{
        abandon_all(g, now);
        gwreq_close(g, now);
        deadlines_close(&g->deadlines);
        leases_clear(&g->expiring);
        watches_close(&g->watches);
        quotas_close(g);
        hmap_close(&g->pending);
        /* Connections may outlive the core: none points into it now. */
        while (!queue_empty(&g->conns)) {
                struct queue *q = queue_head(&g->conns);
                queue_remove(q);
                QUEUE_DATA(q, struct gateway_conn, core_link)->listed = false;
        }
}
