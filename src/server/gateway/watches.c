/* Watches: every grant, release and proclaim of a name or prefix, pushed
 * in log order from the events this node applies, resumable from what it
 * keeps. */
#include "watches.h"

#include <stdlib.h>
#include <string.h>

#include "../../../include/baton/errors.h"
#include "gateway.h"
#include "names.h"
#include "reply.h"

struct watch_rec {
        struct proto_watch_event e; /* name and value point into data */
        char data[];
};

struct watch {
        struct hnode by_name;  /* watches.exact, for an exact watch */
        struct queue link;     /* watches.prefixes, for a prefix watch */
        struct queue all_link; /* watches.all */
        struct gateway_conn *conn;
        uint64_t id;         /* the WATCH's frame id: its events' */
        struct watch_pos at; /* the last event sent */
        bool prefix;
        uint8_t name_len;
        char name[];
};

static int pos_cmp(struct watch_pos a, struct watch_pos b)
{
        if (a.index != b.index) {
                return a.index < b.index ? -1 : 1;
        }
        return a.ord < b.ord ? -1 : a.ord > b.ord;
}

static struct watch_pos pos_of(const struct watch_rec *r)
{
        return (struct watch_pos){r->e.index, r->e.ord};
}

/* The i-th kept event, oldest first. */
static struct watch_rec *kept(const struct watches *w, uint32_t i)
{
        return w->ring[(w->head + i) % w->limits.history];
}

int watches_init(struct watches *w, struct gateway *g,
                 const struct watches_limits *limits, uint64_t base,
                 uint64_t restores)
{
        memset(w, 0, sizeof *w);
        w->g = g;
        w->limits = *limits;
        w->ring = calloc(limits->history, sizeof *w->ring);
        if (w->ring == NULL) {
                return BATON_ENOMEM;
        }
        w->base = base;
        w->restores = restores;
        watchfeed_init(&w->feed, base);
        hmap_init(&w->exact, &mem_libc);
        queue_init(&w->prefixes);
        queue_init(&w->all);
        return 0;
}

static void forget_history(struct watches *w)
{
        while (w->n > 0) {
                free(kept(w, 0));
                w->head = (w->head + 1) % w->limits.history;
                w->n--;
        }
        w->head = 0;
}

/* Take `x` off every list and free it. */
static void drop(struct watches *w, struct watch *x)
{
        if (x->prefix) {
                queue_remove(&x->link);
        } else {
                hmap_remove(&w->exact, &x->by_name);
        }
        queue_remove(&x->all_link);
        x->conn->n_watches--;
        w->stats.active--;
        free(x);
}

void watches_close(struct watches *w)
{
        while (!queue_empty(&w->all)) {
                drop(w,
                     QUEUE_DATA(queue_head(&w->all), struct watch, all_link));
        }
        forget_history(w);
        free(w->ring);
        w->ring = NULL;
        hmap_close(&w->exact);
}

void watches_reset(struct watches *w, uint64_t restores, uint64_t applied)
{
        struct queue *q, *next;

        /* A watch that has not seen everything up to `applied` would miss
         * what the node skipped: it ends, and its client reads again. */
        for (q = queue_head(&w->all); q != &w->all; q = next) {
                struct watch *x = QUEUE_DATA(q, struct watch, all_link);
                next = q->next;
                if (pos_cmp(x->at, (struct watch_pos){applied, UINT32_MAX}) <
                    0) {
                        reply_status(w->g, x->conn, x->id, BATON_ECOMPACTED);
                        w->stats.compacted++;
                        drop(w, x);
                }
        }
        forget_history(w);
        w->restores = restores;
        w->base = applied;
        w->evicted = (struct watch_pos){0, 0};
        watchfeed_init(&w->feed, applied);
}

/* Whether `x` is told of `e`: its name or prefix matches, and the rules
 * on names (names.h) let x's client read the name, as they do now: a
 * rule taken away stops the events of a watch already open. */
static bool matches(struct watches *w, const struct watch *x,
                    const struct proto_watch_event *e)
{
        bool named = x->prefix
                         ? e->name.len >= x->name_len &&
                               memcmp(e->name.p, x->name, x->name_len) == 0
                         : e->name.len == x->name_len &&
                               memcmp(e->name.p, x->name, x->name_len) == 0;

        return named && (names_perms(w->g, x->conn, e->name.p, e->name.len) &
                         ACL_PERM_READ) != 0;
}

/* Send `r` to `x` if it is past what `x` has seen: with x's id when it
 * catches up alone (`shared` false: a new watch's kept events), else with
 * id 0, which the client gives to every watch of the connection that
 * matches it and has not seen it, so one frame per connection carries a
 * new event however many of its watches want it. False when `x`'s
 * connection is too far behind: `x` is cut off (a RESULT of BATON_ESLOW
 * ends it) and freed, so the server's memory does not grow with a
 * watcher that does not read. */
static bool push(struct watches *w, struct watch *x, const struct watch_rec *r,
                 bool shared)
{
        struct gateway_conn *c = x->conn;
        struct gateway_host *host = w->g->host;
        size_t cap = PROTO_HEADER_SIZE + PROTO_WATCH_EVENT_MAX;
        uint8_t *out;
        size_t len;

        if (pos_cmp(pos_of(r), x->at) <= 0) {
                return true;
        }
        if (shared && c->watch_sent_index == r->e.index &&
            c->watch_sent_ord == r->e.ord) {
                x->at = pos_of(r); /* on its way in the frame sent */
                return true;
        }
        if (host->backlog(host, c) > w->limits.output_limit) {
                reply_status(w->g, c, x->id, BATON_ESLOW);
                w->stats.cut_off++;
                drop(w, x);
                return false;
        }
        out = host->reserve(host, c, cap);
        if (out == NULL) {
                return true; /* closing: the watch goes with it */
        }
        len = proto_write_watch_event(out, cap, shared ? 0 : x->id, &r->e);
        if (len == 0) {
                reply_frame(w->g, c, shared ? 0 : x->id, 0); /* logs, fails */
        } else {
                /* Events may wait watch-batch-ms for company. */
                host->commit(host, c, len, true);
        }
        if (shared) {
                c->watch_sent_index = r->e.index;
                c->watch_sent_ord = r->e.ord;
        }
        x->at = pos_of(r);
        w->stats.pushed++;
        return true;
}

/* Push `r` to every watch it matches. */
static void deliver(struct watches *w, const struct watch_rec *r)
{
        struct hnode *node =
            hmap_first(&w->exact, hash_bytes(r->e.name.p, r->e.name.len));
        struct queue *q, *next;

        while (node != NULL) {
                struct watch *x = HMAP_DATA(node, struct watch, by_name);
                node = hmap_next(node);
                if (matches(w, x, &r->e)) {
                        (void)push(w, x, r, true);
                }
        }
        for (q = queue_head(&w->prefixes); q != &w->prefixes; q = next) {
                struct watch *x = QUEUE_DATA(q, struct watch, link);
                next = q->next;
                if (matches(w, x, &r->e)) {
                        (void)push(w, x, r, true);
                }
        }
}

/* A kept copy of `e`, its strings in its own allocation; NULL when out
 * of memory. */
static struct watch_rec *record(const struct proto_watch_event *e)
{
        struct watch_rec *r =
            malloc(sizeof *r + (size_t)e->name.len + e->value.len);

        if (r == NULL) {
                return NULL;
        }
        r->e = *e;
        memcpy(r->data, e->name.p, e->name.len);
        if (e->value.len > 0) {
                memcpy(r->data + e->name.len, e->value.p, e->value.len);
        }
        r->e.name = (struct proto_string){r->data, e->name.len};
        r->e.value = (struct proto_string){r->data + e->name.len, e->value.len};
        return r;
}

/* Keep `r`, dropping the oldest event when the history is full. */
static void keep(struct watches *w, struct watch_rec *r)
{
        if (w->n == w->limits.history) {
                struct watch_rec *old = kept(w, 0);
                w->evicted = pos_of(old);
                free(old);
                w->head = (w->head + 1) % w->limits.history;
                w->n--;
        }
        w->ring[(w->head + w->n) % w->limits.history] = r;
        w->n++;
}

void watches_on_event(struct watches *w, const struct lockfsm_event *ev)
{
        struct proto_watch_event e;
        struct watch_rec *r;

        if (!watchfeed_next(&w->feed, ev, &e)) {
                return;
        }
#ifdef BATON_CHAOS_BUG_WATCHSKIP
        /* A deliberate bug for the chaos suite's negative control
         * (tests/chaos/batond-watchskip): every 7th watch event this node
         * applies is numbered (its position is taken) but neither kept
         * nor sent, so a watcher's events have a gap that no resume
         * fills; the observers' checker must catch it. (Every 7th rather
         * than the first after this node became leader: the watches do
         * not see the node's raft state.) Never built into batond. */
        {
                static uint64_t n_watch_events;
                if (++n_watch_events % 7 == 0) {
                        return;
                }
        }
#endif
#ifdef BATON_CHAOS_BUG_LEADERSKIP
        if (w->bug_skip) {
                w->bug_skip = false;
                return; /* numbered, but neither kept nor sent */
        }
#endif
        r = record(&e);
        if (r == NULL) {
                /* Not kept, so not sent: end every watch rather than
                 * leave a gap, and resume no one from before it. */
                while (!queue_empty(&w->all)) {
                        struct watch *x = QUEUE_DATA(queue_head(&w->all),
                                                     struct watch, all_link);
                        reply_status(w->g, x->conn, x->id, BATON_ENOMEM);
                        drop(w, x);
                }
                watches_reset(w, w->restores, ev->index);
                return;
        }
        w->stats.events++;
        keep(w, r);
        deliver(w, r);
}

#ifdef BATON_CHAOS_BUG_LEADERSKIP
/* A deliberate bug for the chaos suite's negative control: the first
 * watch event of every entry term after the first this node saw (the
 * first after each leader change the log shows it: an entry names the
 * term of the leader that proposed it) is numbered, so its position is
 * taken, but neither kept nor sent, and no resume fills the hole. Every
 * node drops the same event of a log they share. */
void watches_bug_term(struct watches *w, uint64_t term)
{
        if (term != 0 && term != w->bug_term) {
                w->bug_skip = w->bug_term != 0;
                w->bug_term = term;
        }
}
#endif

/* The first kept event after `at` (w->n if none): the ring is in
 * position order. */
static uint32_t first_after(const struct watches *w, struct watch_pos at)
{
        uint32_t lo = 0, hi = w->n;

        while (lo < hi) {
                uint32_t mid = lo + (hi - lo) / 2;
                if (pos_cmp(pos_of(kept(w, mid)), at) <= 0) {
                        lo = mid + 1;
                } else {
                        hi = mid;
                }
        }
        return lo;
}

/* Whether every event after `at` is still here (or still to come). */
static bool servable(const struct watches *w, struct watch_pos at)
{
        return pos_cmp(at, (struct watch_pos){w->base, UINT32_MAX}) >= 0 &&
               pos_cmp(at, w->evicted) >= 0;
}

static struct watch *new_watch(struct watches *w, struct gateway_conn *c,
                               uint64_t id, const struct proto_watch *req,
                               struct watch_pos at)
{
        struct watch *x = calloc(1, sizeof *x + req->name.len);

        if (x == NULL) {
                return NULL;
        }
        x->conn = c;
        x->id = id;
        x->at = at;
        x->prefix = req->flags & PROTO_WATCH_PREFIX;
        x->name_len = req->name.len;
        if (req->name.len > 0) {
                memcpy(x->name, req->name.p, req->name.len);
        }
        if (x->prefix) {
                queue_push_tail(&w->prefixes, &x->link);
        } else {
                hmap_insert(&w->exact, &x->by_name,
                            hash_bytes(x->name, x->name_len));
        }
        queue_push_tail(&w->all, &x->all_link);
        c->n_watches++;
        w->stats.active++;
        return x;
}

void watches_open(struct watches *w, struct gateway_conn *c, uint64_t id,
                  const struct proto_watch *req, uint64_t applied)
{
        struct watch_pos at = {req->from_index, req->from_ord};
        struct lockfsm_result res;
        struct watch *x;
        uint32_t i;

        if (req->from_index == 0) {
                at = (struct watch_pos){applied, UINT32_MAX};
        }
        if (w->stats.active >= w->limits.max_watches ||
            c->n_watches >= w->limits.max_per_conn) {
                reply_status(w->g, c, id, BATON_ETOOMANYWATCHES);
                return;
        }
        if (!servable(w, at)) {
                w->stats.compacted++;
                reply_status(w->g, c, id, BATON_ECOMPACTED);
                return;
        }
        if ((!(req->flags & PROTO_WATCH_PREFIX) &&
             hmap_reserve(&w->exact, w->exact.count + 1) != 0) ||
            (x = new_watch(w, c, id, req, at)) == NULL) {
                reply_status(w->g, c, id, BATON_ENOMEM);
                return;
        }
        memset(&res, 0, sizeof res);
        res.kind = PROTO_KIND_WATCHING;
        res.count = at.ord;
        reply_outcome(w->g, c, id, at.index, &res);
        for (i = first_after(w, at); i < w->n; i++) {
                if (matches(w, x, &kept(w, i)->e) &&
                    !push(w, x, kept(w, i), false)) {
                        return; /* cut off */
                }
        }
}

void watches_cancel(struct watches *w, struct gateway_conn *c, uint64_t id,
                    uint64_t watch_id)
{
        struct lockfsm_result res;
        struct queue *q;

        QUEUE_FOREACH(q, &w->all)
        {
                struct watch *x = QUEUE_DATA(q, struct watch, all_link);
                if (x->conn == c && x->id == watch_id) {
                        drop(w, x);
                        memset(&res, 0, sizeof res);
                        res.kind = PROTO_KIND_CANCELLED;
                        reply_outcome(w->g, c, id, 0, &res);
                        return;
                }
        }
        reply_status(w->g, c, id, BATON_ENOTFOUND);
}

void watches_forget_conn(struct watches *w, struct gateway_conn *c)
{
        struct queue *q, *next;

        for (q = queue_head(&w->all); q != &w->all && c->n_watches > 0;
             q = next) {
                struct watch *x = QUEUE_DATA(q, struct watch, all_link);
                next = q->next;
                if (x->conn == c) {
                        drop(w, x);
                }
        }
}
