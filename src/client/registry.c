/* The owner of every request of a handle that is on its way to the cluster. */
#include "registry.h"

#include <string.h>

#include "../../include/baton.h"
#include "../proto/reply.h"
#include "../proto/keepalive.h"
#include "../proto/watch.h"

#define TRY_MS   3000 /* a quick request unanswered on a live link */
#define RETRY_MS 50   /* resend after BATON_EUNKNOWN / EINFLIGHT */

static void on_connected(void *data, int64_t now);
static void on_frame(void *data, const struct proto_header *h,
                     const uint8_t *body, int64_t now);
static void on_closed(void *data, uint64_t gen, int64_t now);
static void on_unreachable(void *data);

void registry_init(struct registry *reg, struct link *link,
                   const struct core_env *env, uint32_t ttl_ms,
                   const struct registry_owner *owner)
{
        struct link_cb cb = {reg, on_connected, on_frame, on_closed,
                             on_unreachable};
        int hb = (int)(ttl_ms / 5);

        queue_init(&reg->list);
        memset(reg->owned, 0, sizeof reg->owned);
        reg->link = link;
        reg->env = env;
        reg->owner = *owner;
        reg->on_loop = false;
        reg->changed = false;
        reg->loop_needed = false;
        reg->write_now = false;
        reg->ping = NULL;
        /* The heartbeat: well inside the TTL, but never so tight that a
         * busy server is taken for a dead one. */
        reg->hb_timeout_ms = hb < 300 ? 300 : hb > 1000 ? 1000 : hb;
        reg->hb_idle_ms = reg->hb_timeout_ms / 2;
        reg->resends = 0;
        reg->heartbeat_drops = 0;
        link_listen(link, &cb);
}

void registry_drop(struct registry *reg, struct request *r)
{
        if (r == NULL) {
                return;
        }
        queue_remove(&r->link);
        if (r->cancel != NULL) {
                r->cancel->target = NULL;
        }
        if (r->target != NULL) {
                r->target->cancel = NULL;
        }
        if (reg->ping == r) {
                reg->ping = NULL;
        }
        request_free(r);
}

void registry_close(struct registry *reg)
{
        while (!queue_empty(&reg->list)) {
                registry_drop(reg, QUEUE_DATA(queue_head(&reg->list),
                                              struct request, link));
        }
}

bool registry_busy(const struct registry *reg)
{
        return !queue_empty(&reg->list);
}

void registry_changed(struct registry *reg)
{
        reg->changed = true;
}

void registry_need_loop(struct registry *reg)
{
        reg->loop_needed = true;
}

/* --- Sending -------------------------------------------------------------- */

/* Whether `r` is on the wire on the current connection. */
static bool on_wire(const struct registry *reg, const struct request *r)
{
        return link_up(reg->link) && r->sends > 0 && r->gen == reg->link->gen;
}

/* Whether the server owes `r` an answer soon: not a wait, which may wait
 * long, nor a watch it has started, whose events come when they happen. */
static bool awaits_answer(const struct request *r)
{
        return r->kind != REQUEST_WAIT &&
               !(r->kind == REQUEST_WATCH && r->watching);
}

/* An orphaned wait, which a CANCEL follows on every connection. */
static bool withdrawn(const struct request *r)
{
        return r->kind == REQUEST_WAIT && r->state == REQUEST_BACKGROUND;
}

void registry_own(struct registry *reg, uint64_t session, const uint8_t *secret)
{
        struct registry_owned *o;

        registry_disown(reg, session);
        /* Newest first: the last slot falls off. */
        memmove(&reg->owned[1], &reg->owned[0],
                (REGISTRY_MAX_OWNED - 1) * sizeof *o);
        o = &reg->owned[0];
        memset(o, 0, sizeof *o);
        o->session = session;
        memcpy(o->secret, secret, ATTACH_SECRET_SIZE);
}

void registry_disown(struct registry *reg, uint64_t session)
{
        size_t i;

        for (i = 0; i < REGISTRY_MAX_OWNED; i++) {
                if (reg->owned[i].session == session) {
                        memset(&reg->owned[i], 0, sizeof reg->owned[i]);
                }
        }
}

/* Before `r` goes out on this connection: the ATTACH of its session, if
 * the registry holds its secret and has not attached this connection to
 * it yet. False: out of memory. */
static bool attach_first(struct registry *reg, const struct request *r)
{
        uint8_t frame[PROTO_HEADER_SIZE + ATTACH_BODY_SIZE];
        struct registry_owned *o = NULL;
        size_t i, n;

        if (r->session == 0 ||
            (r->type != PROTO_KEEPALIVE &&
             (r->type != PROTO_COMMAND || r->cmd == COMMAND_OPEN))) {
                return true;
        }
        for (i = 0; i < REGISTRY_MAX_OWNED && o == NULL; i++) {
                if (reg->owned[i].session == r->session) {
                        o = &reg->owned[i];
                }
        }
        if (o == NULL || o->gen == reg->link->gen) {
                return true;
        }
        n = attach_write(frame, sizeof frame, 0, o->session, o->secret);
        if (n == 0 || link_put(reg->link, frame, n) == 0) {
                return false;
        }
        o->gen = reg->link->gen;
        return true;
}

/* Queue one request's frame on this connection. False: out of memory,
 * the next round tries again. */
static bool put(struct registry *reg, struct request *r, int64_t now)
{
        uint64_t id;

        if (!attach_first(reg, r)) {
                return false;
        }
        id = link_put(reg->link, r->frame, r->len);

        if (id == 0) {
                return false;
        }
        r->id = id;
        r->gen = reg->link->gen;
        r->sent_ms = now;
        r->watching = false; /* until this connection's server says so */
        if (r->sends++ == 0) {
                r->first_sent_ms = now;
        } else {
                reg->resends++;
        }
        return true;
}

/* Put `r` in the outbox for the calling thread to write, dated `now`: only
 * on an outbox with nothing left in it, as a write of its own would find
 * the socket idle. False means "the background thread sends it". */
static bool put_direct(struct registry *reg, struct request *r, int64_t now)
{
        struct queue *q;

        if (reg->on_loop || !link_up(reg->link) ||
            link_output(reg->link, NULL) > 0) {
                return false;
        }
        QUEUE_FOREACH(q, &reg->list)
        {
                struct request *o = QUEUE_DATA(q, struct request, link);
                if (o != r && request_pending(o) && !on_wire(reg, o)) {
                        return false; /* requests go out in list order */
                }
        }
        if (now < r->not_before || !put(reg, r, now)) {
                return false;
        }
        reg->write_now = true;
        return true;
}

/* The WATCH `r`'s name id: that of a watch of the same name in the
 * list, else a new one. */
static void name_watch(struct registry *reg, struct request *r)
{
        struct queue *q;

        QUEUE_FOREACH(q, &reg->list)
        {
                struct request *w = QUEUE_DATA(q, struct request, link);
                if (w->kind == REQUEST_WATCH && request_watch_same(w, r)) {
                        r->watch_name_id = w->watch_name_id;
                        return;
                }
        }
        r->watch_name_id = ++reg->watch_names;
}

void registry_submit(struct registry *reg, struct request *r, int64_t now)
{
        if (r->kind == REQUEST_WATCH) {
                name_watch(reg, r);
        }
        r->state = r->kind <= REQUEST_FOREIGN || r->kind == REQUEST_WATCH
                       ? REQUEST_AWAITED
                       : REQUEST_BACKGROUND;
        r->mark = registry_mark(reg);
        queue_push_tail(&reg->list, &r->link);
        if (!put_direct(reg, r, now)) {
                registry_need_loop(reg);
        }
}

/* Put every pending request that is not on this connection yet on it, in
 * the order of the list; follow a withdrawn wait by its CANCEL. */
static void send_pending(struct registry *reg, int64_t now)
{
        uint64_t gen = reg->link->gen;
        struct queue *q;

        QUEUE_FOREACH(q, &reg->list)
        {
                struct request *r = QUEUE_DATA(q, struct request, link);
                if (!request_pending(r)) {
                        continue;
                }
                if ((r->gen != gen || r->sends == 0) && now >= r->not_before &&
                    !put(reg, r, now)) {
                        return;
                }
                /* One CANCEL per send of the wait: the CANCEL follows it
                 * on the same connection, so when the CANCEL is answered
                 * the wait's own answer is (or was) on its way. */
                if (withdrawn(r) && r->cancel == NULL && on_wire(reg, r) &&
                    r->withdrawn_gen != gen) {
                        r->withdrawn_gen = gen;
                        /* The CANCEL lands at the tail: this walk sends it. */
                        reg->owner.withdraw(reg->owner.data, r, now);
                }
        }
}

static void new_ping(struct registry *reg, int64_t now)
{
        struct request *r = request_empty(PROTO_PING);

        if (r != NULL) {
                r->kind = REQUEST_PING;
                reg->ping = r;
                registry_submit(reg, r, now);
        }
}

static int64_t min64(int64_t a, int64_t b)
{
        return a < b ? a : b;
}

static int64_t max64(int64_t a, int64_t b)
{
        return a > b ? a : b;
}

/* When the PING in flight makes the connection silent: hb_timeout_ms after
 * the later of its send and the last frame received. Frames still coming
 * prove the server alive, with the answer queued behind them; a burst of
 * watch events to a slow reader is not silence, and dropping the
 * connection would only bring the burst again. */
static int64_t ping_deadline(const struct registry *reg)
{
        return max64(reg->ping->sent_ms, reg->link->last_rx) +
               reg->hb_timeout_ms;
}

/* Heartbeat and per-request silence: a server that does not answer is
 * abandoned. True when the connection was dropped. */
static bool silent(struct registry *reg, int64_t now)
{
        struct queue *q;

        if (reg->ping != NULL && on_wire(reg, reg->ping) &&
            now >= ping_deadline(reg)) {
                reg->heartbeat_drops++;
                link_fail(reg->link, now, true);
                return true;
        }
        QUEUE_FOREACH(q, &reg->list)
        {
                struct request *r = QUEUE_DATA(q, struct request, link);
                if (request_pending(r) && awaits_answer(r) && on_wire(reg, r) &&
                    now - r->sent_ms >= TRY_MS) {
                        link_fail(reg->link, now, true);
                        return true;
                }
        }
        return false;
}

void registry_step(struct registry *reg, int64_t now)
{
        if (silent(reg, now)) {
                return;
        }
        if (reg->ping == NULL && now - reg->link->last_rx >= reg->hb_idle_ms) {
                new_ping(reg, now);
        }
        send_pending(reg, now);
}

int64_t registry_next_event(const struct registry *reg)
{
        const struct request *ping = reg->ping;
        int64_t t;
        struct queue *q;

        if (ping != NULL && on_wire(reg, ping)) {
                t = ping_deadline(reg);
        } else {
                t = reg->link->last_rx + reg->hb_idle_ms;
        }
        QUEUE_FOREACH(q, &reg->list)
        {
                const struct request *r = QUEUE_DATA(q, struct request, link);
                if (!request_pending(r)) {
                        continue;
                }
                if (!on_wire(reg, r)) {
                        t = min64(t, r->not_before);
                } else if (awaits_answer(r)) {
                        t = min64(t, r->sent_ms + TRY_MS);
                }
        }
        return t;
}

/* --- Final answers -------------------------------------------------------- */

/* `r` is final at `now`: its caller collects it, or its owner follows it
 * up and it is freed. */
static void finish(struct registry *reg, struct request *r, int how,
                   int64_t now)
{
        bool awaited = r->state == REQUEST_AWAITED;

        r->state = awaited ? REQUEST_DONE : REQUEST_ENDED;
        reg->owner.final(reg->owner.data, r, how, now);
        if (r->kind == REQUEST_WATCH) {
                reg->owner.watch_event(reg->owner.data, r, NULL, NULL);
        }
        if (!awaited) {
                registry_drop(reg, r);
        }
        registry_changed(reg);
}

/* Make the pending `r` final without an answer, with `status`. */
static void fail(struct registry *reg, struct request *r, int status, int how,
                 int64_t now)
{
        r->status = status;
        memset(&r->res, 0, sizeof r->res);
        r->res.status = status;
        finish(reg, r, how, now);
}

/* The first pending request of `session`. */
static struct request *first_pending(struct registry *reg, uint64_t session)
{
        struct queue *q;

        QUEUE_FOREACH(q, &reg->list)
        {
                struct request *r = QUEUE_DATA(q, struct request, link);
                if (r->session == session && request_pending(r)) {
                        return r;
                }
        }
        return NULL;
}

void registry_fail_session(struct registry *reg, uint64_t session, int status,
                           int64_t now)
{
        struct request *r;

        /* Restart the walk after each failure: failing one request may
         * free another (the CANCEL of a withdrawn wait). */
        while ((r = first_pending(reg, session)) != NULL) {
                fail(reg, r, status, REGISTRY_FAILED, now);
        }
}

uint64_t registry_lowest_seq(const struct registry *reg, uint64_t session,
                             uint64_t next)
{
        uint64_t seq = next;
        struct queue *q;

        QUEUE_FOREACH(q, &reg->list)
        {
                const struct request *r = QUEUE_DATA(q, struct request, link);
                if (request_pins_ack(r) && request_pending(r) &&
                    r->session == session && r->seq < seq) {
                        seq = r->seq;
                }
        }
        return seq;
}

uint64_t registry_mark(const struct registry *reg)
{
        return reg->link->reach.pass;
}

/* Whether `r` (NULL: the call has no request of its own) went out: then
 * the cluster may have applied it, and only its answer or the deadline
 * ends the wait. The first PING of a connection is answered before any
 * request goes out on it (link.h), so a request never sent is one no node
 * has seen. */
static bool sent(const struct request *r)
{
        return r != NULL && r->sends > 0;
}

int registry_unreachable(const struct registry *reg, uint64_t mark,
                         const struct request *r, char *why, size_t size)
{
        return reach_answer(&reg->link->reach, mark, sent(r), false, why, size);
}

int registry_no_answer(const struct registry *reg, uint64_t mark,
                       const struct request *r, char *why, size_t size)
{
        return reach_answer(&reg->link->reach, mark, sent(r), true, why, size);
}

void registry_abandon(struct registry *reg, struct request *r, int64_t now)
{
        /* Nothing is dated yet: what follows up a withdrawn wait goes out
         * from the background thread's round, at its own time. */
        (void)now;
        /* Never sent: the cluster cannot have seen it (its seq is simply
         * never used; seqs need not be contiguous). */
        if (r->state == REQUEST_DONE || r->type != PROTO_COMMAND ||
            r->sends == 0) {
                registry_drop(reg, r);
                return;
        }
        r->state = REQUEST_BACKGROUND;
        registry_need_loop(reg);
}

/* --- Receiving ------------------------------------------------------------ */

static void on_connected(void *data, int64_t now)
{
        (void)data;
        (void)now;
        /* The node has answered the link's PING: it is alive, and what is
         * pending goes out on this round of the background thread. */
}

/* A pass over the endpoints failed: the callers of requests never sent
 * may stop waiting. */
static void on_unreachable(void *data)
{
        registry_changed(data);
}

static void on_closed(void *data, uint64_t gen, int64_t now)
{
        struct registry *reg = data;
        struct queue *q;

        registry_drop(reg, reg->ping);
        /* A keepalive is dated by its send: never resend it, send anew. */
        QUEUE_FOREACH(q, &reg->list)
        {
                struct request *r = QUEUE_DATA(q, struct request, link);
                if (r->kind == REQUEST_KEEPALIVE && request_pending(r) &&
                    r->gen == gen && r->sends > 0) {
                        fail(reg, r, BATON_EIO, REGISTRY_LOST, now);
                        return;
                }
        }
}

static struct request *find(struct registry *reg, uint64_t id)
{
        struct queue *q;

        if (id == 0) {
                return NULL; /* a server's own (a shared watch event) */
        }
        QUEUE_FOREACH(q, &reg->list)
        {
                struct request *r = QUEUE_DATA(q, struct request, link);
                if (r->id == id && r->gen == reg->link->gen && r->sends > 0 &&
                    request_pending(r)) {
                        return r;
                }
        }
        return NULL;
}

/* A RESULT for `r`. */
static void result(struct registry *reg, struct request *r,
                   const struct proto_header *h, const uint8_t *body,
                   int64_t now)
{
        struct proto_result res;

        if (request_take_result(r, h->flags, body, h->length, &res) != 0) {
                link_fail(reg->link, now, false);
                return;
        }
        switch (res.status) {
        case BATON_EUNKNOWN:
        case BATON_EINFLIGHT:
                /* Not decided, or not remembered: the same bytes again,
                 * shortly (to the next leader, if this node lost
                 * leadership: it answers NOT_LEADER). */
                r->gen = 0;
                r->not_before = now + coreenv_jitter(reg->env, RETRY_MS);
                return;
        case BATON_ENOTLEADER:
                link_no_leader(reg->link, now); /* it lost the leadership */
                return;
        case BATON_EUNAVAILABLE:
        case BATON_ESHUTDOWN:
                link_fail(reg->link, now, false);
                return;
        default:
                break;
        }
        link_leader_answered(reg->link);
        if (r->kind == REQUEST_WATCH && res.status == 0 &&
            res.kind == PROTO_KIND_WATCHING) {
                /* Sent again before an event comes, it must start where
                 * this node started it, not from that node's "now". */
                request_watch_started(r, res.index, res.count);
                r->watching = true; /* events follow, under its id */
                registry_changed(reg);
                return;
        }
        r->status = res.status;
        r->res = res;
        finish(reg, r, REGISTRY_ANSWERED, now);
}

/* Give `e` to the watch `r`; its frame resumes after it if sent again. */
static void deliver(struct registry *reg, struct request *r,
                    const struct proto_watch_event *e, void **shared)
{
        request_watch_seen(r, e->index, e->ord);
        reg->owner.watch_event(reg->owner.data, r, e, shared);
}

/* An event of the watch `r` (its id), or of every watch started on this
 * connection that wants it (id 0: the server sends a new event once per
 * connection, however many of its watches match it). */
static void watch_event(struct registry *reg, struct request *r,
                        const struct proto_header *h, const uint8_t *body,
                        int64_t now)
{
        struct proto_watch_event e;
        struct queue *q, *next;
        void *shared = NULL;  /* the owner's one copy of `e` */
        uint64_t name_id = 0; /* the last name matched against `e` */
        bool name_matches = false;

        if (proto_read_watch_event(body, h->length, &e) != 0) {
                link_fail(reg->link, now, false);
                return;
        }
        if (h->id != 0) {
                if (r != NULL && r->kind == REQUEST_WATCH && r->watching) {
                        deliver(reg, r, &e, &shared);
                }
        } else {
                /* A delivery may drop its watch (a full queue). */
                for (q = queue_head(&reg->list); q != &reg->list; q = next) {
                        struct request *w = QUEUE_DATA(q, struct request, link);
                        next = q->next;
                        if (w->kind != REQUEST_WATCH || !w->watching ||
                            !on_wire(reg, w)) {
                                continue;
                        }
                        if (w->watch_name_id != name_id) {
                                name_id = w->watch_name_id;
                                name_matches = request_watch_matches(w, &e);
                        }
                        if (name_matches && request_watch_after(w, &e)) {
                                deliver(reg, w, &e, &shared);
                        }
                }
        }
        registry_changed(reg);
}

/* One whole frame from the server. */
static void on_frame(void *data, const struct proto_header *h,
                     const uint8_t *body, int64_t now)
{
        struct registry *reg = data;
        struct request *r = find(reg, h->id);
        int status = 0;

        switch (h->type) {
        case PROTO_PONG:
                if (r != NULL && r == reg->ping) {
                        registry_drop(reg, r);
                }
                return;
        case PROTO_ERROR:
                /* The server refused a frame of ours and closes. */
                if (proto_read_error(body, h->length, &status,
                                     &(struct proto_string){NULL, 0}) != 0) {
                        status = BATON_EMALFORMED;
                }
                if (r != NULL && r != reg->ping) {
                        fail(reg, r, status, REGISTRY_FAILED, now);
                }
                link_fail(reg->link, now, false);
                return;
        case PROTO_RESULT:
                if (r != NULL) {
                        result(reg, r, h, body, now);
                }
                return;
        case PROTO_KEEPALIVE_OK:
                if (r == NULL) {
                        return;
                }
                link_leader_answered(reg->link);
                r->status = proto_read_keepalive_ok(body, h->length, h->flags,
                                                    &r->ttl_ms, &r->revoked);
                finish(reg, r, REGISTRY_ANSWERED, now);
                return;
        case PROTO_STATUS_REPLY:
                if (r == NULL) {
                        return;
                }
                r->status =
                    request_take_status(r, reg->link->peer, body, h->length);
                finish(reg, r, REGISTRY_ANSWERED, now);
                return;
        case PROTO_WATCH_EVENT:
                watch_event(reg, r, h, body, now);
                return;
        case PROTO_LIST_REPLY:
                if (r == NULL || (r->type != PROTO_LIST && r->grants == NULL &&
                                  r->leader == NULL)) {
                        return;
                }
                link_leader_answered(reg->link);
                r->status = request_take_list(r, h->flags, body, h->length);
                if (r->status == BATON_EMALFORMED) {
                        link_fail(reg->link, now, false);
                        return;
                }
                finish(reg, r, REGISTRY_ANSWERED, now);
                return;
        default:
                return; /* a request type: not from a server */
        }
}
