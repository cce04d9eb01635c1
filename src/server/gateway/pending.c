/* A client request of the write path or of a read, from its arrival to its
 * answer: its record, where it waits, and how it is answered. */
#include "pending.h"

#include <stdlib.h>
#include <string.h>

#include "../../../include/baton/errors.h"
#include "../config/config.h"
#include "gateway.h"
#include "leader.h"

static uint64_t key_hash(uint64_t a, uint64_t b)
{
        return hash_u64(a ^ hash_u64(b));
}

/* A record on no list yet, timed at nothing: the leader's own commands
 * (c NULL) are never timed. */
static struct pending *alloc(struct gateway *g, struct gateway_conn *c,
                             uint64_t req_id, uint8_t type, size_t room)
{
        struct pending *p = calloc(1, sizeof *p + room);

        if (p == NULL) {
                return NULL;
        }
        p->room = room;
        p->g = g;
        p->frame_type = type;
        queue_init(&p->link);
        reply_to_init(&p->to, c, req_id);
        return p;
}

struct pending *pending_new(struct gateway *g, const struct gateway_now *now,
                            struct gateway_conn *c, uint64_t req_id,
                            uint8_t type, size_t room)
{
        struct pending *p = alloc(g, c, req_id, type, room);

        if (p != NULL) {
                p->received = now->ms;
                p->received_ns = now->ns;
        }
        return p;
}

static int kind_of(uint8_t frame_type, int cmd_type)
{
        switch (frame_type) {
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
        if (frame_type != PROTO_COMMAND) {
                return -1;
        }
        switch (cmd_type) {
        case COMMAND_OPEN:
                return GATEWAY_OPEN;
        case COMMAND_CLOSE:
                return GATEWAY_CLOSE;
        case COMMAND_ACQUIRE:
        case COMMAND_MULTI:
                return GATEWAY_ACQUIRE;
        case COMMAND_RELEASE:
                return GATEWAY_RELEASE;
        case COMMAND_CANCEL:
                return GATEWAY_CANCEL;
        default:
                return -1;
        }
}

void pending_count(struct gateway *g, uint8_t frame_type, int cmd_type,
                   int status)
{
        int kind = kind_of(frame_type, cmd_type);

        if (kind >= 0 && status <= 0 && -status < GATEWAY_N_RESULTS) {
                g->stats.results[kind][-status]++;
        }
}

/* Record how long an answered client request took and its result, and
 * for a command where the time went: waiting to be proposed (group
 * commit), then raft (the leader's disk write and a majority's
 * acknowledgements); for an ACQUIRE granted after it queued, how long it
 * waited. */
static void observe(struct pending *p, const struct gateway_now *now)
{
        struct gateway_stats *st = &p->g->stats;
        int kind = kind_of(p->frame_type, p->cmd.type);

        if (p->to.conn == NULL || p->internal || kind < 0) {
                return;
        }
        pending_count(p->g, p->frame_type, p->cmd.type, p->status);
        histogram_add(&st->latency[kind], now->ns - p->received_ns);
        if (kind == GATEWAY_ACQUIRE && p->queued && p->status == 0) {
                histogram_add(&st->acquire_wait, now->ns - p->received_ns);
        }
        if (p->proposed_ns != 0 && p->applied_ns != 0) {
                histogram_add(&st->stages[GATEWAY_STAGE_QUEUED],
                              p->proposed_ns - p->received_ns);
                histogram_add(&st->stages[GATEWAY_STAGE_RAFT],
                              p->applied_ns - p->proposed_ns);
        }
}

/* Whether `p` is one of the leader's own EXPIREs (leader.h counts them). */
static bool own_expire(const struct pending *p)
{
        return p->internal && p->cmd.type == COMMAND_EXPIRE;
}

/* Take `p` off every list and free it. */
static void forget(struct pending *p)
{
        if (own_expire(p)) {
                leader_expiry_count(p->g, false);
        }
        if (p->in_map) {
                hmap_remove(&p->g->pending, &p->by_key);
        }
        queue_remove(&p->link);
        reply_to_close(&p->to);
        free(p->who);
        free(p);
}

void pending_free(struct pending *p, const struct gateway_now *now)
{
        observe(p, now);
        if (p->audited) {
                gwaudit_command(p->g, NULL, p->who, &p->cmd, p->status, NULL);
        }
        forget(p);
}

void pending_queue_own(struct gateway *g, const struct command *c)
{
        size_t room = command_size(c); /* an ACL seed can be larger */
        struct pending *p = alloc(g, NULL, 0, PROTO_COMMAND,
                                  room > 0 ? room : COMMAND_MAX_SIZE);

        if (p == NULL) {
                return; /* the deadline fires again after retry_ms */
        }
        p->len = command_encode(c, p->buf, p->room);
        if (p->len == 0 || command_decode(&p->cmd, p->buf, p->len) != 0) {
                free(p);
                return;
        }
        p->internal = true;
        queue_push_tail(&g->unsent, &p->link);
        if (own_expire(p)) {
                leader_expiry_count(g, true);
        }
}

void pending_track(struct pending *p)
{
        hmap_insert(&p->g->pending, &p->by_key, key_hash(p->key_a, p->key_b));
        p->in_map = true;
}

/* From `n` on along its hash chain, the first request keyed (a, b). */
static struct pending *match(struct hnode *n, uint64_t a, uint64_t b)
{
        for (; n != NULL; n = hmap_next(n)) {
                struct pending *p = HMAP_DATA(n, struct pending, by_key);
                if (p->key_a == a && p->key_b == b) {
                        return p;
                }
        }
        return NULL;
}

struct pending *pending_find(struct gateway *g, uint64_t a, uint64_t b)
{
        return match(hmap_first(&g->pending, key_hash(a, b)), a, b);
}

struct pending *pending_find_next(const struct pending *p)
{
        return match(hmap_next(&p->by_key), p->key_a, p->key_b);
}

void pending_settle(struct pending *p, const struct gateway_now *now,
                    uint64_t index, const struct lockfsm_result *res)
{
        reply_outcome(p->g, p->to.conn, p->to.id, index, res);
        p->status = res->status;
        if (res->status == BATON_EQUOTA && res->waiters < 5) {
                p->g->stats.quota_refused[res->waiters]++;
        }
#ifdef BATON_CHAOS_BUG_TWICE
        /* A deliberate bug for test_simhost_twice, a negative control of
         * the simulation: a tracked request answered from the log stays
         * tracked once, so the next event for its (session, seq) or the
         * leader's loss (BATON_EUNKNOWN) answers it a second time. Never
         * built into batond. */
        if (p->in_map && !p->bug_answered) {
                p->bug_answered = true;
                return;
        }
#endif
        pending_free(p, now);
}

int pending_recode(struct pending *p)
{
        /* p->cmd borrows from p->buf: encode elsewhere first. */
        uint8_t buf[COMMAND_MAX_SIZE];
        size_t n = command_encode(&p->cmd, buf, sizeof buf);

        if (n == 0) {
                return BATON_EINVAL;
        }
        memcpy(p->buf, buf, n);
        p->len = n;
        return command_decode(&p->cmd, p->buf, p->len);
}

void pending_settle_rejected(struct pending *p, const struct gateway_now *now,
                             int status, uint32_t count, uint32_t waiters)
{
        struct proto_result r = {.status = status,
                                 .kind = PROTO_KIND_REJECTED,
                                 .count = count,
                                 .waiters = waiters};

        reply_result(p->g, p->to.conn, p->to.id, &r);
        p->status = status;
        pending_free(p, now);
}

void pending_settle_status(struct pending *p, const struct gateway_now *now,
                           int status)
{
        if (status == BATON_EUNKNOWN) {
                p->g->stats.unknown++;
        }
        reply_status(p->g, p->to.conn, p->to.id, status);
        p->status = status;
        pending_free(p, now);
}

void pending_not_leader(struct gateway *g, struct gateway_conn *c, uint64_t id)
{
        uint64_t leader;
        const char *address;
        uint8_t *out = c != NULL ? reply_reserve(g, c, REPLY_MAX) : NULL;

        if (out == NULL) {
                return;
        }
        g->host->leader(g->host, &leader, &address);
        /* A leader that is not serving yet must not send clients to
         * itself: say the leader is unknown, so they retry shortly. */
        if (leader == g->cfg->id) {
                leader = 0;
                address = "";
        }
        g->stats.redirects++;
        reply_frame(
            g, c, id,
            proto_write_not_leader(out, REPLY_MAX, id, leader, address));
}

void pending_redirect(struct pending *p)
{
        pending_not_leader(p->g, p->to.conn, p->to.id);
        if (p->to.conn != NULL && !p->internal) {
                pending_count(p->g, p->frame_type, p->cmd.type,
                              BATON_ENOTLEADER);
        }
        forget(p); /* not served: no latency to record */
}

void pending_redirect_all(struct queue *list)
{
        while (!queue_empty(list)) {
                pending_redirect(
                    QUEUE_DATA(queue_head(list), struct pending, link));
        }
}

void pending_abandon_tracked(struct gateway *g, const struct gateway_now *now)
{
        size_t i;

        for (i = 0; i < g->pending.n_buckets; i++) {
                while (g->pending.buckets[i] != NULL) {
                        pending_settle_status(HMAP_DATA(g->pending.buckets[i],
                                                        struct pending, by_key),
                                              now, BATON_EUNKNOWN);
                }
        }
}
