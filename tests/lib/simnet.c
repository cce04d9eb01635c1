/* A seeded network of TCP connections between simulated clients and nodes:
 * byte streams, their delays and chunks, and their faults. */
#include "simnet.h"

#include <assert.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../../include/baton/errors.h"
#include "../../src/lib/hmap.h"
#include "rng.h"
#include "simfaults.h"

/* What a queued event does when it falls due. */
enum ev_kind {
        EV_CONNECT, /* the attempt's outcome: established or refused */
        EV_FAIL,    /* the attempt's failure told: timed out, reset */
        EV_DIR      /* the stream towards `side`: bytes, then a close */
};

/*
 * An event names its connection by id, so that it outlives the
 * connection harmlessly. Events are never removed: one that would do
 * nothing when it falls due (its bytes went earlier, its connection is
 * gone, a fault holds it) is dropped then, and whatever lifts a fault
 * queues the events it makes due again.
 */
struct ev {
        uint64_t due;
        uint64_t seq; /* call order, to break ties without addresses */
        uint64_t conn;
        uint8_t kind;
        uint8_t side;
};

/* A run of bytes from one send, due at one time. */
struct seg {
        size_t len;
        uint64_t due;
};

/* One direction of a connection, named by the side it goes to. */
struct dir {
        uint8_t *buf; /* the bytes in flight, from `head` */
        size_t head, len, cap;
        struct seg *segs; /* from `seg_head`: the bytes' segments */
        size_t seg_head, n_segs, seg_cap;
        uint64_t tail_due;   /* the last segment's: no later one is sooner */
        uint64_t not_before; /* set when a stall lifts */
        bool closing;        /* after the last byte, the side is told */
        bool through;        /* that notice passes a partition (a cut) */
        enum simnet_why why;
        uint64_t close_due;
};

enum conn_state { CONNECTING, FAILING, OPEN };

struct conn {
        struct hnode node; /* in net->conns, by id */
        uint64_t id;
        uint64_t client;
        unsigned nodei;
        size_t live; /* index in net->live */
        enum conn_state state;
        uint64_t connect_due;
        uint64_t fail_due;
        enum simnet_why fail_why;
        bool told[2]; /* established, per side */
        bool done[2]; /* told closed, closed it, or killed */
        bool reset;   /* cut or killed: what is sent now is lost */
        struct dir dir[2];
};

struct simnet {
        struct simnet_config cfg;
        struct simnet_cbs cbs;
        struct rng rng;       /* delays, chunks, prefixes */
        struct rng fault_rng; /* simnet_pick() */
        uint64_t clock;       /* no event is queued before it */
        uint64_t next_id;
        uint64_t next_seq;
        struct ev *heap;
        size_t n_ev, ev_cap;
        struct hmap conns;
        struct conn **live; /* every connection not freed, for faults */
        size_t n_live, live_cap;
        struct conn **grave; /* freed once the callback returns */
        size_t n_grave, grave_cap;
        unsigned depth; /* inside a callback */
        uint8_t *scratch;
        struct simfaults faults;
        struct simnet_stats stats;
};

/* Grow `*v` (of `*cap` items of `size` bytes) to hold `n`: 0 or -1. */
static int grow(void *v, size_t *cap, size_t n, size_t size)
{
        void *p;
        size_t c = *cap == 0 ? 16 : *cap;

        if (n <= *cap) {
                return 0;
        }
        while (c < n) {
                c *= 2;
        }
        p = realloc(*(void **)v, c * size);
        if (p == NULL) {
                return -1;
        }
        *(void **)v = p;
        *cap = c;
        return 0;
}

/* --- Events ------------------------------------------------------------ */

static bool ev_less(const struct ev *a, const struct ev *b)
{
        return a->due != b->due ? a->due < b->due : a->seq < b->seq;
}

/* Queue an event, never before the clock. A failed growth loses it, which
 * only a test run out of memory would see: abort rather than diverge. */
static void push(struct simnet *net, uint64_t due, uint64_t conn,
                 enum ev_kind kind, enum simnet_side side)
{
        struct ev e = {due < net->clock ? net->clock : due, net->next_seq++,
                       conn, (uint8_t)kind, (uint8_t)side};
        size_t i;

        if (grow(&net->heap, &net->ev_cap, net->n_ev + 1, sizeof e) != 0) {
                abort();
        }
        for (i = net->n_ev++; i > 0; i = (i - 1) / 2) {
                struct ev *parent = &net->heap[(i - 1) / 2];
                if (!ev_less(&e, parent)) {
                        break;
                }
                net->heap[i] = *parent;
        }
        net->heap[i] = e;
}

static void pop(struct simnet *net)
{
        struct ev last = net->heap[--net->n_ev];
        size_t i = 0;

        for (;;) {
                size_t l = 2 * i + 1;
                size_t m = i;
                const struct ev *best = &last;
                if (l < net->n_ev && ev_less(&net->heap[l], best)) {
                        m = l;
                        best = &net->heap[l];
                }
                if (l + 1 < net->n_ev && ev_less(&net->heap[l + 1], best)) {
                        m = l + 1;
                }
                if (m == i) {
                        break;
                }
                net->heap[i] = net->heap[m];
                i = m;
        }
        if (net->n_ev > 0) {
                net->heap[i] = last;
        }
}

/* --- Connections and faults -------------------------------------------- */

static struct conn *find(const struct simnet *net, uint64_t id)
{
        struct hnode *n;

        for (n = hmap_first(&net->conns, hash_u64(id)); n != NULL;
             n = hmap_next(n)) {
                struct conn *c = HMAP_DATA(n, struct conn, node);
                if (c->id == id) {
                        return c;
                }
        }
        return NULL;
}

static uint64_t between(struct rng *r, uint64_t lo, uint64_t hi)
{
        return lo + rng_next(r) % (hi - lo + 1);
}

/* One way's delay for a segment of `c`, with its node's spikes. */
static uint64_t delay(struct simnet *net, const struct conn *c)
{
        return between(&net->rng, net->cfg.delay_min_ms,
                       net->cfg.delay_max_ms) +
               net->faults.spike_ms[c->nodei];
}

/* Whether the stream of `c` towards `to` is partitioned. */
static bool parted(const struct simnet *net, const struct conn *c,
                   enum simnet_side to)
{
        return simfaults_parted(&net->faults, c->client, c->nodei, to);
}

/* Whether side `s` of `c` is paused: nothing reaches it. */
static bool held(const struct simnet *net, const struct conn *c,
                 enum simnet_side s)
{
        return simfaults_held(&net->faults, c->client, c->nodei, s);
}

/* Whether an attempt's handshake would go through to `c`'s node: not
 * across a partition, and not to a paused node (unless it is dead, which
 * answers at once from its kernel). */
static bool answers(const struct simnet *net, const struct conn *c)
{
        return !parted(net, c, SIMNET_NODE) && !parted(net, c, SIMNET_CLIENT) &&
               (net->faults.killed[c->nodei] > 0 ||
                net->faults.paused[c->nodei] == 0);
}

/* The bytes of `d` due by `t`, from its head, up to `max`. */
static size_t due_upto(const struct dir *d, uint64_t t, size_t max)
{
        size_t n = 0;
        size_t i;

        for (i = d->seg_head; i < d->n_segs && d->segs[i].due <= t && n < max;
             i++) {
                n += d->segs[i].len;
        }
        return n < max ? n : max;
}

/* Drop every byte of `d` past the first `keep`. */
static void truncate_dir(struct simnet *net, struct dir *d, size_t keep)
{
        size_t i;
        size_t upto = 0;

        net->stats.bytes_dropped += d->len - keep;
        for (i = d->seg_head; i < d->n_segs; i++) {
                if (upto + d->segs[i].len >= keep) {
                        d->segs[i].len = keep - upto;
                        d->n_segs = d->segs[i].len == 0 ? i : i + 1;
                        break;
                }
                upto += d->segs[i].len;
        }
        if (keep == 0) {
                d->head = d->seg_head = d->n_segs = 0;
        }
        d->len = keep;
}

/* Take `n` bytes from the head of `d` into the scratch buffer. */
static void consume(struct simnet *net, struct dir *d, size_t n)
{
        memcpy(net->scratch, d->buf + d->head, n);
        d->head += n;
        d->len -= n;
        while (n > 0) {
                struct seg *s = &d->segs[d->seg_head];
                size_t k = n < s->len ? n : s->len;
                s->len -= k;
                n -= k;
                if (s->len == 0) {
                        d->seg_head++;
                }
        }
        if (d->len == 0) {
                d->head = 0;
                d->seg_head = d->n_segs = 0;
        }
}

/* Queue the event that hands over the next of `d`, towards `to`. */
static void arm_dir(struct simnet *net, struct conn *c, enum simnet_side to)
{
        struct dir *d = &c->dir[to];

        if (c->done[to]) {
                return;
        }
        if (d->seg_head < d->n_segs) {
                uint64_t due = d->segs[d->seg_head].due;
                push(net, due < d->not_before ? d->not_before : due, c->id,
                     EV_DIR, to);
        } else if (d->closing) {
                push(net, d->close_due, c->id, EV_DIR, to);
        }
}

static void free_conn(struct conn *c)
{
        int s;

        for (s = 0; s < 2; s++) {
                free(c->dir[s].buf);
                free(c->dir[s].segs);
        }
        free(c);
}

/* Forget `c` once neither side can hear of it again; inside a callback,
 * the memory waits until the callback returns. */
static void maybe_free(struct simnet *net, struct conn *c)
{
        if (!c->done[SIMNET_CLIENT] || !c->done[SIMNET_NODE] ||
            find(net, c->id) != c) {
                return;
        }
        hmap_remove(&net->conns, &c->node);
        net->live[c->live] = net->live[--net->n_live];
        net->live[c->live]->live = c->live;
        net->stats.open_conns--;
        if (net->depth == 0) {
                free_conn(c);
                return;
        }
        if (grow(&net->grave, &net->grave_cap, net->n_grave + 1,
                 sizeof *net->grave) != 0) {
                abort();
        }
        net->grave[net->n_grave++] = c;
}

/* Side `s` will hear nothing more: what was on its way to it is lost. */
static void side_done(struct simnet *net, struct conn *c, enum simnet_side s)
{
        c->done[s] = true;
        truncate_dir(net, &c->dir[s], 0);
        c->dir[s].closing = false;
}

/* Reset towards `to`: a seeded prefix of what is in flight still arrives
 * (none across a partition), then the notice, `through` a partition or
 * not. */
static void reset_dir(struct simnet *net, struct conn *c, enum simnet_side to,
                      uint64_t now, bool through)
{
        struct dir *d = &c->dir[to];
        size_t keep;

        if (c->done[to]) {
                return;
        }
        keep = parted(net, c, to) ? 0 : rng_next(&net->rng) % (d->len + 1);
        truncate_dir(net, d, keep);
        d->closing = true;
        d->through = through;
        d->why = SIMNET_RESET;
        d->close_due = now + between(&net->rng, 0, net->cfg.skew_max_ms);
        arm_dir(net, c, to);
}

static void cut(struct simnet *net, struct conn *c, uint64_t now)
{
        net->stats.cuts++;
        c->reset = true;
        if (c->state != OPEN) {
                c->state = FAILING;
                c->fail_why = SIMNET_RESET;
                c->fail_due = now + between(&net->rng, 0, net->cfg.skew_max_ms);
                push(net, c->fail_due, c->id, EV_FAIL, SIMNET_CLIENT);
                return;
        }
        reset_dir(net, c, SIMNET_NODE, now, true);
        reset_dir(net, c, SIMNET_CLIENT, now, true);
}

static void kill_node(struct simnet *net, unsigned nodei, uint64_t now)
{
        size_t i;

        net->stats.kills++;
        for (i = net->n_live; i-- > 0;) {
                struct conn *c = net->live[i];
                if (c->nodei != nodei || c->state != OPEN ||
                    c->done[SIMNET_NODE]) {
                        continue;
                }
                c->reset = true;
                side_done(net, c, SIMNET_NODE);
                reset_dir(net, c, SIMNET_CLIENT, now, false);
                maybe_free(net, c);
        }
}

/* After a fault lifts: queue again what `c` may now do, no byte of the
 * directions in `dirs` earlier than `nb` (a partition's: the bytes it
 * held are sent again). */
static void rearm(struct simnet *net, struct conn *c, uint64_t now,
                  unsigned dirs, uint64_t nb)
{
        int s;

        if (c->state == CONNECTING) {
                if (c->connect_due < now) {
                        c->connect_due = now;
                }
                push(net, c->connect_due, c->id, EV_CONNECT, SIMNET_CLIENT);
        }
        if (c->state != OPEN) {
                push(net, c->fail_due, c->id, EV_FAIL, SIMNET_CLIENT);
                return;
        }
        for (s = 0; s < 2; s++) {
                unsigned bit =
                    s == SIMNET_NODE ? SIMNET_TO_NODE : SIMNET_TO_CLIENT;
                if ((dirs & bit) && c->dir[s].not_before < nb) {
                        c->dir[s].not_before = nb;
                }
                arm_dir(net, c, (enum simnet_side)s);
        }
}

/* Rearm every connection the lifted fault `f` held. */
static void rearm_matching(struct simnet *net, const struct simnet_fault *f,
                           uint64_t now)
{
        size_t i;

        for (i = net->n_live; i-- > 0;) {
                struct conn *c = net->live[i];
                bool match;
                switch (f->kind) {
                case SIMNET_PARTITION:
                        match = c->client == f->client && c->nodei == f->node;
                        break;
                case SIMNET_PAUSE_CLIENT:
                        match = c->client == f->client;
                        break;
                default:
                        match = c->nodei == f->node;
                        break;
                }
                if (match && (f->kind == SIMNET_PARTITION ||
                              f->kind == SIMNET_ISOLATE)) {
                        rearm(net, c, now, f->dirs, now + delay(net, c));
                } else if (match) {
                        rearm(net, c, now, 0, now);
                }
        }
}

/* --- Delivery ---------------------------------------------------------- */

/* Whether the stream towards `to` has something to hand over at `t`. */
static bool dir_ready(const struct simnet *net, const struct conn *c,
                      enum simnet_side to, uint64_t t)
{
        const struct dir *d = &c->dir[to];

        if (c->done[to] || !c->told[to] || held(net, c, to)) {
                return false;
        }
        if (d->seg_head < d->n_segs) {
                return !parted(net, c, to) && t >= d->not_before &&
                       d->segs[d->seg_head].due <= t;
        }
        return d->closing && t >= d->close_due &&
               (d->through || !parted(net, c, to));
}

/* Whether the event would run a callback now. */
static bool ready(const struct simnet *net, const struct ev *e)
{
        const struct conn *c = find(net, e->conn);

        if (c == NULL) {
                return false;
        }
        switch ((enum ev_kind)e->kind) {
        case EV_CONNECT:
                return c->state == CONNECTING && e->due >= c->connect_due &&
                       !held(net, c, SIMNET_CLIENT) && answers(net, c);
        case EV_FAIL:
                return c->state != OPEN && e->due >= c->fail_due &&
                       !held(net, c, SIMNET_CLIENT);
        case EV_DIR:
                return dir_ready(net, c, (enum simnet_side)e->side, e->due);
        }
        return false;
}

static void run_connect(struct simnet *net, struct conn *c, uint64_t t)
{
        if (net->faults.killed[c->nodei] > 0) {
                c->done[SIMNET_CLIENT] = c->done[SIMNET_NODE] = true;
                net->stats.refused++;
                net->cbs.failed(net->cbs.data, c->id, SIMNET_REFUSED, t);
                maybe_free(net, c);
                return;
        }
        c->state = OPEN;
        net->stats.established++;
        c->told[SIMNET_NODE] = true;
        net->cbs.established(net->cbs.data, c->id, SIMNET_NODE, t);
        if (!c->done[SIMNET_CLIENT]) {
                c->told[SIMNET_CLIENT] = true;
                net->cbs.established(net->cbs.data, c->id, SIMNET_CLIENT, t);
        }
        arm_dir(net, c, SIMNET_CLIENT);
        arm_dir(net, c, SIMNET_NODE);
}

static void run_fail(struct simnet *net, struct conn *c, uint64_t t)
{
        c->done[SIMNET_CLIENT] = c->done[SIMNET_NODE] = true;
        if (c->fail_why == SIMNET_TIMEDOUT) {
                net->stats.timedout++;
        } else {
                net->stats.failed_reset++;
        }
        net->cbs.failed(net->cbs.data, c->id, c->fail_why, t);
        maybe_free(net, c);
}

/* Hand over what is due towards `to` at `t`, in seeded chunks, checking
 * the connection again after each callback, which may have cut or
 * closed it. */
static void run_dir(struct simnet *net, struct conn *c, enum simnet_side to,
                    uint64_t t)
{
        struct dir *d = &c->dir[to];

        while (dir_ready(net, c, to, t)) {
                if (d->seg_head < d->n_segs) {
                        size_t n = due_upto(
                            d, t, 1 + rng_next(&net->rng) % net->cfg.chunk_max);
                        consume(net, d, n);
                        net->stats.bytes_delivered[to] += n;
                        net->cbs.bytes(net->cbs.data, c->id, to, net->scratch,
                                       n, t);
                        continue;
                }
                c->done[to] = true;
                d->closing = false;
                if (d->why == SIMNET_EOF) {
                        net->stats.closed_eof++;
                } else {
                        net->stats.closed_reset++;
                }
                net->cbs.closed(net->cbs.data, c->id, to, d->why, t);
                break;
        }
        arm_dir(net, c, to);
        maybe_free(net, c);
}

static void run(struct simnet *net, const struct ev *e)
{
        struct conn *c = find(net, e->conn);

        switch ((enum ev_kind)e->kind) {
        case EV_CONNECT:
                run_connect(net, c, e->due);
                break;
        case EV_FAIL:
                run_fail(net, c, e->due);
                break;
        case EV_DIR:
                run_dir(net, c, (enum simnet_side)e->side, e->due);
                break;
        }
}

/* --- The API ----------------------------------------------------------- */

void simnet_config_defaults(struct simnet_config *cfg, uint64_t seed,
                            unsigned n_nodes)
{
        *cfg = (struct simnet_config){
            .seed = seed,
            .n_nodes = n_nodes,
            .connect_min_ms = 1,
            .connect_max_ms = 5,
            .connect_timeout_ms = 3000,
            .delay_min_ms = 1,
            .delay_max_ms = 20,
            .chunk_max = 1500,
            .skew_max_ms = 50,
        };
}

struct simnet *simnet_create(const struct simnet_config *cfg,
                             const struct simnet_cbs *cbs)
{
        struct simnet *net;

        if (cfg->n_nodes == 0 || cfg->n_nodes > SIMNET_MAX_NODES ||
            cfg->chunk_max == 0 || cfg->connect_min_ms > cfg->connect_max_ms ||
            cfg->delay_min_ms > cfg->delay_max_ms ||
            cfg->connect_max_ms > cfg->connect_timeout_ms) {
                return NULL;
        }
        net = calloc(1, sizeof *net);
        if (net == NULL) {
                return NULL;
        }
        net->scratch = malloc(cfg->chunk_max);
        if (net->scratch == NULL) {
                free(net);
                return NULL;
        }
        net->cfg = *cfg;
        net->cbs = *cbs;
        net->rng.s = cfg->seed;
        net->fault_rng.s = hash_u64(cfg->seed ^ 0x5eedfa17u);
        net->next_id = 1;
        hmap_init(&net->conns, &mem_libc);
        simfaults_init(&net->faults);
        return net;
}

void simnet_destroy(struct simnet *net)
{
        size_t i;

        if (net == NULL) {
                return;
        }
        for (i = 0; i < net->n_live; i++) {
                free_conn(net->live[i]);
        }
        hmap_close(&net->conns);
        free(net->live);
        free(net->grave);
        free(net->heap);
        simfaults_close(&net->faults);
        free(net->scratch);
        free(net);
}

int simnet_connect(struct simnet *net, uint64_t client, unsigned node,
                   uint64_t now, uint64_t *conn)
{
        struct conn *c;

        if (node >= net->cfg.n_nodes) {
                return BATON_EINVAL;
        }
        if (hmap_reserve(&net->conns, net->conns.count + 1) != 0 ||
            grow(&net->live, &net->live_cap, net->n_live + 1,
                 sizeof *net->live) != 0 ||
            (c = calloc(1, sizeof *c)) == NULL) {
                return BATON_ENOMEM;
        }
        c->id = net->next_id++;
        c->client = client;
        c->nodei = node;
        c->state = CONNECTING;
        c->connect_due = now +
                         between(&net->rng, net->cfg.connect_min_ms,
                                 net->cfg.connect_max_ms) +
                         net->faults.spike_ms[node];
        c->fail_due = now + net->cfg.connect_timeout_ms;
        c->fail_why = SIMNET_TIMEDOUT;
        hmap_insert(&net->conns, &c->node, hash_u64(c->id));
        c->live = net->n_live;
        net->live[net->n_live++] = c;
        net->stats.connects++;
        net->stats.open_conns++;
        push(net, c->connect_due, c->id, EV_CONNECT, SIMNET_CLIENT);
        push(net, c->fail_due, c->id, EV_FAIL, SIMNET_CLIENT);
        *conn = c->id;
        return 0;
}

/* Append `n` bytes to `d` in seeded segments, each due no sooner than the
 * one before it. 0 or BATON_ENOMEM. */
static int append(struct simnet *net, struct conn *c, struct dir *d,
                  const uint8_t *p, size_t n, uint64_t now)
{
        if (d->head > 0 && d->head + d->len + n > d->cap) {
                memmove(d->buf, d->buf + d->head, d->len);
                d->head = 0;
        }
        if (grow(&d->buf, &d->cap, d->head + d->len + n, 1) != 0) {
                return BATON_ENOMEM;
        }
        memcpy(d->buf + d->head + d->len, p, n);
        d->len += n;
        while (n > 0) {
                size_t k = 1 + rng_next(&net->rng) % net->cfg.chunk_max;
                uint64_t due = now + delay(net, c);
                if (d->seg_head > 0 && d->n_segs == d->seg_cap) {
                        d->n_segs -= d->seg_head;
                        memmove(d->segs, d->segs + d->seg_head,
                                d->n_segs * sizeof *d->segs);
                        d->seg_head = 0;
                }
                if (grow(&d->segs, &d->seg_cap, d->n_segs + 1,
                         sizeof *d->segs) != 0) {
                        abort(); /* the bytes are in: keep them whole */
                }
                k = k < n ? k : n;
                d->tail_due = due > d->tail_due ? due : d->tail_due;
                d->segs[d->n_segs++] = (struct seg){k, d->tail_due};
                n -= k;
        }
        return 0;
}

int simnet_send(struct simnet *net, uint64_t conn, enum simnet_side side,
                const void *p, size_t n, uint64_t now)
{
        struct conn *c = find(net, conn);
        enum simnet_side to = side == SIMNET_NODE ? SIMNET_CLIENT : SIMNET_NODE;
        struct dir *d;
        bool was_empty;
        int rv;

        if (c == NULL || c->state != OPEN || !c->told[side] || c->done[side]) {
                return BATON_EINVAL;
        }
        net->stats.bytes_sent[side] += n;
        d = &c->dir[to];
        if (c->reset || c->done[to] || d->closing) {
                net->stats.bytes_dropped += n;
                return 0;
        }
        was_empty = d->seg_head == d->n_segs;
        rv = append(net, c, d, p, n, now);
        if (rv == 0 && was_empty) {
                arm_dir(net, c, to);
        }
        return rv;
}

int simnet_close(struct simnet *net, uint64_t conn, enum simnet_side side,
                 uint64_t now)
{
        struct conn *c = find(net, conn);
        enum simnet_side to = side == SIMNET_NODE ? SIMNET_CLIENT : SIMNET_NODE;
        struct dir *d;

        if (c == NULL || c->done[side] ||
            (!c->told[side] && !(side == SIMNET_CLIENT && c->state != OPEN))) {
                return BATON_EINVAL;
        }
        if (c->state != OPEN) {
                c->done[SIMNET_CLIENT] = c->done[SIMNET_NODE] = true;
                maybe_free(net, c);
                return 0;
        }
        side_done(net, c, side);
        d = &c->dir[to];
        if (!c->done[to] && !d->closing && !c->reset) {
                uint64_t due = now + delay(net, c);
                d->closing = true;
                d->through = false;
                d->why = SIMNET_EOF;
                d->close_due = due > d->tail_due ? due : d->tail_due;
                arm_dir(net, c, to);
        }
        maybe_free(net, c);
        return 0;
}

int simnet_peer(const struct simnet *net, uint64_t conn, uint64_t *client,
                unsigned *node)
{
        const struct conn *c = find(net, conn);

        if (c == NULL) {
                return BATON_EINVAL;
        }
        *client = c->client;
        *node = c->nodei;
        return 0;
}

/* Count `f` in or out, and note it; a node's first kill resets its
 * connections. */
static int change(struct simnet *net, const struct simnet_fault *f, bool up,
                  uint64_t now)
{
        struct simnet_stats *st = &net->stats;
        int rv = simfaults_count(&net->faults, f, up);

        if (rv != 0 || !up) {
                return rv;
        }
        st->partitions += f->kind == SIMNET_PARTITION;
        st->isolations += f->kind == SIMNET_ISOLATE;
        st->pauses +=
            f->kind == SIMNET_PAUSE_NODE || f->kind == SIMNET_PAUSE_CLIENT;
        st->spikes += f->kind == SIMNET_SPIKE;
        if (f->kind == SIMNET_KILL && net->faults.killed[f->node] == 1) {
                kill_node(net, f->node, now);
        }
        return 0;
}

/* A partition names one direction or both. */
static bool dirs_ok(const struct simnet_fault *f)
{
        return (f->kind != SIMNET_PARTITION && f->kind != SIMNET_ISOLATE) ||
               (f->dirs >= SIMNET_TO_NODE && f->dirs <= SIMNET_BOTH);
}

int simnet_apply(struct simnet *net, const struct simnet_fault *f, uint64_t now)
{
        if (f->kind == SIMNET_CUT) {
                struct conn *c = find(net, f->conn);
                if (c == NULL) {
                        return BATON_EINVAL;
                }
                if (!c->reset) {
                        cut(net, c, now);
                }
                return 0;
        }
        if (f->node >= net->cfg.n_nodes || !dirs_ok(f)) {
                return BATON_EINVAL;
        }
        return change(net, f, true, now);
}

int simnet_undo(struct simnet *net, const struct simnet_fault *f, uint64_t now)
{
        int rv;

        if (f->kind == SIMNET_CUT || f->node >= net->cfg.n_nodes ||
            !dirs_ok(f)) {
                return BATON_EINVAL;
        }
        rv = change(net, f, false, now);
        if (rv == 0 && f->kind != SIMNET_SPIKE) {
                rearm_matching(net, f, now);
        }
        return rv;
}

void simnet_pick(struct simnet *net, struct simnet_fault *f)
{
        struct rng *r = &net->fault_rng;
        const struct conn *c =
            net->n_live > 0 ? net->live[rng_below(r, (uint32_t)net->n_live)]
                            : NULL;

        *f = (struct simnet_fault){0};
        f->kind = (enum simnet_fault_kind)(SIMNET_CUT + rng_below(r, 7));
        f->node = rng_below(r, net->cfg.n_nodes);
        f->dirs = 1 + rng_below(r, 3);
        f->extra_ms =
            between(r, net->cfg.delay_max_ms, 10 * net->cfg.delay_max_ms + 1);
        if (c == NULL) {
                if (f->kind == SIMNET_CUT || f->kind == SIMNET_PARTITION ||
                    f->kind == SIMNET_PAUSE_CLIENT) {
                        f->kind = SIMNET_ISOLATE;
                }
                return;
        }
        f->conn = c->id;
        f->client = c->client;
        if (f->kind == SIMNET_PARTITION) {
                f->node = c->nodei;
        }
}

uint64_t simnet_next_due(struct simnet *net)
{
        while (net->n_ev > 0) {
                if (ready(net, &net->heap[0])) {
                        return net->heap[0].due;
                }
                pop(net);
        }
        return SIMNET_NEVER;
}

void simnet_advance(struct simnet *net, uint64_t now)
{
        while (net->n_ev > 0 && net->heap[0].due <= now) {
                struct ev e = net->heap[0];
                pop(net);
                net->clock = e.due > net->clock ? e.due : net->clock;
                if (!ready(net, &e)) {
                        continue;
                }
                net->depth++;
                run(net, &e);
                net->depth--;
                while (net->n_grave > 0) {
                        free_conn(net->grave[--net->n_grave]);
                }
        }
        net->clock = now > net->clock ? now : net->clock;
}

const struct simnet_stats *simnet_stats(const struct simnet *net)
{
        return &net->stats;
}
