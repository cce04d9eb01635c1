/* A simulated Baton cluster for tests: raft_fixture nodes running raftfsm. */
#include "simcluster.h"

#include "raftcheck.h"
#include "simacl.h"
#include "simformat.h"
#include "simlinks.h"
#include "simsnap.h"

#include <assert.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../include/baton.h"
#include "../../src/proto/watch.h"

/* A barrier request. Barriers are kept until the cluster is closed, so that
 * a callback fired twice (libraft 0.15.0 did) is caught as an anomaly rather
 * than a use after free. */
struct simbarrier {
        struct raft_barrier req;
        struct simcluster *c;
        struct simbarrier *next;
        unsigned node;
        raft_term term;
        unsigned n_callbacks;
};

void simcluster_trace(struct simcluster *c, const char *fmt, ...)
{
        va_list ap;

        if (!c->verbose) {
                return;
        }
        printf("# t=%" PRIu64 " ", (uint64_t)raft_fixture_time(&c->f));
        va_start(ap, fmt);
        vprintf(fmt, ap);
        va_end(ap);
        printf("\n");
}

/* Keep the first reason only: later ones are usually its consequences. */
static void anomaly(struct simcluster *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void anomaly(struct simcluster *c, const char *fmt, ...)
{
        va_list ap;

        if (c->anomalies++ == 0) {
                va_start(ap, fmt);
                vsnprintf(c->errmsg, sizeof c->errmsg, fmt, ap);
                va_end(ap);
        }
}

/* Grow an array of `size`-byte elements so that one more fits. */
static int reserve(void **array, size_t *cap, size_t n, size_t size)
{
        size_t next;
        void *p;

        if (n < *cap) {
                return 0;
        }
        next = *cap == 0 ? 64 : *cap * 2;
        p = realloc(*array, next * size);
        if (p == NULL) {
                return -1;
        }
        *array = p;
        *cap = next;
        return 0;
}

int simentry_command(const struct simentry *e, struct command *c)
{
        return command_decode(c, e->bytes, e->len);
}

/* libraft's diagnostics, in verbose runs only (the fixture's own tracer
 * prints every one of them to stderr). */
static void raft_trace(struct raft_tracer *t, int type, const void *data)
{
        struct simnode *n = t->impl;
        const struct raft_tracer_info *info = data;

        if (n->c->verbose && type == RAFT_TRACER_DIAGNOSTIC &&
            info->diagnostic.level <= 3) {
                simcluster_trace(n->c, "n%u raft: %s", n->i,
                                 info->diagnostic.message);
        }
}

/* Record what raft applied, after the real glue did (struct simentry). */
static int shim_apply(struct raft_fsm *fsm, const struct raft_buffer *buf,
                      void **result)
{
        struct simnode *n = fsm->data;
        struct simcluster *c = n->c;
        const struct raftfsm_result *r;
        struct simentry *e;
        uint8_t *bytes;
        int rv;

        rv = n->rf.fsm.apply(&n->rf.fsm, buf, result);
        if (rv != 0) {
                return rv;
        }
        r = *result;
        if (reserve((void **)&n->entries, &n->cap_entries, n->n_entries,
                    sizeof *n->entries) != 0 ||
            (bytes = malloc(buf->len > 0 ? buf->len : 1)) == NULL) {
                c->failed = true;
                anomaly(c, "node %u: out of memory recording entries", n->i);
                return 0;
        }
        e = &n->entries[n->n_entries++];
        e->bytes = bytes;
        e->index = r->index;
        e->res = r->res;
        e->len = buf->len;
        memcpy(e->bytes, buf->base, buf->len);
        e->acl = command_peek_type(buf->base, buf->len) == COMMAND_ACL
                     ? simacl_digest(raftfsm_acl(&n->rf))
                     : 0;
        return 0;
}

static int shim_snapshot(struct raft_fsm *fsm, struct raft_buffer *bufs[],
                         unsigned *n_bufs)
{
        struct simnode *n = fsm->data;

        return n->rf.fsm.snapshot(&n->rf.fsm, bufs, n_bufs);
}

static int shim_snapshot_finalize(struct raft_fsm *fsm,
                                  struct raft_buffer *bufs[], unsigned *n_bufs)
{
        struct simnode *n = fsm->data;

        return n->rf.fsm.snapshot_finalize(&n->rf.fsm, bufs, n_bufs);
}

static int shim_restore(struct raft_fsm *fsm, struct raft_buffer *buf)
{
        struct simnode *n = fsm->data;

        return n->rf.fsm.restore(&n->rf.fsm, buf);
}

/* Record the frame a watch of every name is sent for `ev`, if any. */
static void watch_frame(struct simnode *n, const struct lockfsm_event *ev)
{
        uint8_t frame[PROTO_HEADER_SIZE + PROTO_WATCH_EVENT_MAX];
        struct proto_watch_event e;
        size_t len;

        if (!watchfeed_next(&n->feed, ev, &e)) {
                return;
        }
        len = proto_write_watch_event(frame, sizeof frame, 0, &e);
        while (n->n_watched + len > n->cap_watched) {
                size_t cap = n->cap_watched != 0 ? 2 * n->cap_watched : 4096;
                uint8_t *p = realloc(n->watched, cap);
                if (p == NULL) {
                        n->c->failed = true;
                        anomaly(n->c,
                                "node %u: out of memory recording "
                                "watch events",
                                n->i);
                        return;
                }
                n->watched = p;
                n->cap_watched = cap;
        }
        memcpy(n->watched + n->n_watched, frame, len);
        n->n_watched += len;
        n->n_watch_events++;
}

static void on_event(void *data, const struct lockfsm_event *ev)
{
        struct simnode *n = data;
        struct simcluster *c = n->c;
        struct simevent e;

        memset(&e, 0, sizeof e);
        e.type = ev->type;
        e.cause = ev->cause;
        e.index = ev->index;
        e.session = ev->session;
        e.seq = ev->seq;
        e.owner = ev->owner;
        e.token = ev->token;
        e.nonce = ev->nonce;
        e.wait_ms = ev->wait_ms;
        e.mode = ev->mode;
        e.permits = ev->permits;
        e.status = ev->status;
        if (ev->name != NULL) {
                e.name_len = ev->name_len;
                memcpy(e.name, ev->name, ev->name_len);
        }
        if (ev->result != NULL) {
                e.has_result = true;
                e.result = *ev->result;
        }
        if (reserve((void **)&n->events, &n->cap_events, n->n_events,
                    sizeof *n->events) != 0) {
                c->failed = true;
                anomaly(c, "node %u: out of memory recording events", n->i);
                return;
        }
        n->events[n->n_events++] = e;
        watch_frame(n, ev);
        if (c->listener != NULL && !c->closing &&
            raft_state(simcluster_raft(c, n->i)) == RAFT_LEADER) {
                c->listener(c->listener_data, n->i, &e);
        }
        if (c->event_hook != NULL && !c->closing) {
                c->event_hook(c->event_hook_data, n->i, ev);
        }
}

void simcluster_config_default(struct simcluster_config *cfg)
{
        memset(cfg, 0, sizeof *cfg);
        cfg->n = 3;
        lockfsm_limits_default(&cfg->limits);
        cfg->election_timeout = 1000;
        cfg->heartbeat_timeout = 100;
        cfg->snapshot_threshold = 32;
        cfg->snapshot_trailing = 96;
        cfg->pre_vote = true;
        cfg->max_inflight = 8;
        cfg->max_lag = 64;
}

static void free_nodes(struct simcluster *c, unsigned n)
{
        unsigned i;

        for (i = 0; i < n; i++) {
                raftfsm_close(&c->nodes[i].rf);
                simstore_close(&c->nodes[i].store);
                simwire_close(&c->nodes[i].wire);
                free(c->nodes[i].events);
                free(c->nodes[i].watched);
                for (size_t k = 0; k < c->nodes[i].n_entries; k++) {
                        free(c->nodes[i].entries[k].bytes);
                }
                free(c->nodes[i].entries);
        }
}

int simcluster_init(struct simcluster *c, const struct simcluster_config *cfg)
{
        struct raft_configuration conf;
        unsigned i;
        int rv;

        assert(cfg->n >= 1 && cfg->n <= SIMCLUSTER_MAX_NODES);
        memset(c, 0, sizeof *c);
        c->cfg = *cfg;
        c->rng.s = cfg->seed;
        rv = raft_fixture_initialize(&c->f);
        if (rv != 0) {
                snprintf(c->errmsg, sizeof c->errmsg,
                         "raft_fixture_initialize: %s", raft_strerror(rv));
                return rv;
        }
        for (i = 0; i < cfg->n; i++) {
                struct simnode *n = &c->nodes[i];

                n->c = c;
                n->i = i;
                watchfeed_init(&n->feed, 0);
                if (raftfsm_init(&n->rf, &cfg->limits) != 0) {
                        snprintf(c->errmsg, sizeof c->errmsg, "node %u: %s", i,
                                 raftfsm_errmsg(&n->rf));
                        rv = RAFT_NOMEM;
                        goto err_after_fixture;
                }
                raftfsm_set_event_cb(&n->rf, on_event, n);
                n->shim.version = 2;
                n->shim.data = n;
                n->shim.apply = shim_apply;
                n->shim.snapshot = shim_snapshot;
                n->shim.restore = shim_restore;
                n->shim.snapshot_finalize = shim_snapshot_finalize;
                rv = raft_fixture_grow(&c->f, &n->shim);
                if (rv != 0) {
                        raftfsm_close(&n->rf);
                        snprintf(c->errmsg, sizeof c->errmsg,
                                 "raft_fixture_grow: %s", raft_strerror(rv));
                        goto err_after_fixture;
                }
                raftfsm_attach(&n->rf, raft_fixture_get(&c->f, i));
                n->tracer.impl = n;
                n->tracer.version = 2;
                n->tracer.emit = raft_trace;
                raft_fixture_get(&c->f, i)->tracer = &n->tracer;
                rv = simstore_attach(&n->store, raft_fixture_get(&c->f, i)->io);
                if (rv == 0) {
                        rv = simwire_attach(&n->wire,
                                            raft_fixture_get(&c->f, i));
                }
                if (rv != 0) {
                        snprintf(c->errmsg, sizeof c->errmsg,
                                 "node %u: too many stores or wires", i);
                        i++;
                        goto err_after_fixture;
                }
        }
        rv = raft_fixture_configuration(&c->f, cfg->n, &conf);
        if (rv != 0) {
                snprintf(c->errmsg, sizeof c->errmsg,
                         "raft_fixture_configuration: %s", raft_strerror(rv));
                goto err_after_fixture;
        }
        rv = raft_fixture_bootstrap(&c->f, &conf);
        raft_configuration_close(&conf);
        if (rv != 0) {
                snprintf(c->errmsg, sizeof c->errmsg,
                         "raft_fixture_bootstrap: %s", raft_strerror(rv));
                goto err_after_fixture;
        }
        for (i = 0; i < cfg->n; i++) {
                struct raft *r = raft_fixture_get(&c->f, i);

                raft_set_election_timeout(r, cfg->election_timeout);
                raft_set_heartbeat_timeout(r, cfg->heartbeat_timeout);
                raft_set_snapshot_threshold(r, cfg->snapshot_threshold);
                raft_set_snapshot_trailing(r, cfg->snapshot_trailing);
                /* Images at once, so that seeds replay; the tail after
                 * them is what batond's forked images have too. */
                raftfsm_set_snapshots(&c->nodes[i].rf, SNAPIMAGE_INLINE,
                                      cfg->snapshot_threshold, NULL);
                raft_set_pre_vote(r, cfg->pre_vote);
        }
        rv = raft_fixture_start(&c->f);
        if (rv != 0) {
                snprintf(c->errmsg, sizeof c->errmsg, "raft_fixture_start: %s",
                         raft_strerror(rv));
                goto err_after_fixture;
        }
        return 0;

err_after_fixture:
        c->closing = true;
        raft_fixture_close(&c->f);
        free_nodes(c, i < cfg->n ? i : cfg->n);
        return rv;
}

void simcluster_close(struct simcluster *c)
{
        struct simbarrier *b;
        size_t k;

        if (c == NULL) {
                return;
        }
        /* Closing raft fails pending requests: their callbacks run here and
         * must find every proposal and barrier still allocated. */
        c->closing = true;
        raft_fixture_close(&c->f);
        free_nodes(c, c->cfg.n);
        for (k = 0; k < c->n_props; k++) {
                free(c->props[k]);
        }
        free(c->props);
        while ((b = c->barriers) != NULL) {
                c->barriers = b->next;
                free(b);
        }
}

void simcluster_set_listener(struct simcluster *c, simcluster_listener cb,
                             void *data)
{
        c->listener = cb;
        c->listener_data = data;
}

void simcluster_set_event_hook(struct simcluster *c, simcluster_event_hook cb,
                               void *data)
{
        c->event_hook = cb;
        c->event_hook_data = data;
}

raft_time simcluster_now(struct simcluster *c)
{
        return raft_fixture_time(&c->f);
}

struct raft *simcluster_raft(struct simcluster *c, unsigned i)
{
        return raft_fixture_get(&c->f, i);
}

struct lockfsm *simcluster_lockfsm(struct simcluster *c, unsigned i)
{
        return raftfsm_lockfsm(&c->nodes[i].rf);
}

unsigned simcluster_leader(struct simcluster *c)
{
        unsigned best = c->cfg.n;
        raft_term term = 0;
        unsigned i;

        for (i = 0; i < c->cfg.n; i++) {
                struct raft *r = simcluster_raft(c, i);

                if (!raft_fixture_alive(&c->f, i) ||
                    raft_state(r) != RAFT_LEADER) {
                        continue;
                }
                if (best == c->cfg.n || raft_current_term(r) > term) {
                        best = i;
                        term = raft_current_term(r);
                }
        }
        return best;
}

unsigned simcluster_ready_leader(struct simcluster *c)
{
        unsigned l = simcluster_leader(c);

        if (l < c->cfg.n &&
            c->ready_term[l] == raft_current_term(simcluster_raft(c, l))) {
                return l;
        }
        return c->cfg.n;
}

static void barrier_cb(struct raft_barrier *req, int status)
{
        struct simbarrier *b = req->data;
        struct simcluster *c = b->c;
        struct raft *r = simcluster_raft(c, b->node);

        if (++b->n_callbacks > 1) {
                anomaly(c, "node %u: barrier callback fired twice", b->node);
                return;
        }
        if (status == 0) {
                if (raft_state(r) == RAFT_LEADER &&
                    raft_current_term(r) == b->term) {
                        c->ready_term[b->node] = b->term;
                        simcluster_trace(c, "n%u ready as leader in term %llu",
                                         b->node, (unsigned long long)b->term);
                }
        } else if (c->barrier_term[b->node] == b->term) {
                /* Let the next step issue another one if still leader. */
                c->barrier_term[b->node] = 0;
        }
}

/* A new leader commits a barrier before it serves, as batond does: until
 * then its state machine may lag entries that are already committed. */
static void issue_barriers(struct simcluster *c)
{
        unsigned i;

        for (i = 0; i < c->cfg.n; i++) {
                struct raft *r = simcluster_raft(c, i);
                struct simbarrier *b;

                if (!raft_fixture_alive(&c->f, i) ||
                    raft_state(r) != RAFT_LEADER ||
                    c->barrier_term[i] == raft_current_term(r)) {
                        continue;
                }
                b = calloc(1, sizeof *b);
                if (b == NULL) {
                        return; /* try again at the next step */
                }
                b->c = c;
                b->node = i;
                b->term = raft_current_term(r);
                b->req.data = b;
                if (raft_barrier(r, &b->req, barrier_cb) != 0) {
                        free(b);
                        continue;
                }
                b->next = c->barriers;
                c->barriers = b;
                c->barrier_term[i] = b->term;
        }
}

/* Trace every change of a node's state or term. */
static void trace_states(struct simcluster *c)
{
        static const char *const names[] = {"unavailable", "follower",
                                            "candidate", "leader"};
        unsigned i;

        for (i = 0; i < c->cfg.n; i++) {
                struct raft *r = simcluster_raft(c, i);
                int state = raft_state(r);

                if (state == c->seen_state[i] &&
                    raft_current_term(r) == c->seen_term[i]) {
                        continue;
                }
                c->seen_state[i] = state;
                c->seen_term[i] = raft_current_term(r);
                simcluster_trace(
                    c, "n%u %s in term %llu (last=%llu applied=%llu)", i,
                    names[state & 3], (unsigned long long)raft_current_term(r),
                    (unsigned long long)raft_last_index(r),
                    (unsigned long long)raft_last_applied(r));
        }
}

/* A real raft draws a fresh random timeout at every timer reset; the
 * fixture returns a fixed one per node. Redrawing at each new term is
 * enough to break the split votes that fixed timeouts can repeat forever. */
static void redraw_timeouts(struct simcluster *c)
{
        unsigned e = c->cfg.election_timeout;
        unsigned i;

        for (i = 0; i < c->cfg.n; i++) {
                struct raft *r = simcluster_raft(c, i);

                if (raft_current_term(r) == c->timeout_term[i]) {
                        continue;
                }
                c->timeout_term[i] = raft_current_term(r);
                raft_fixture_set_randomized_election_timeout(
                    &c->f, i, e + rng_below(&c->rng, e + 1));
        }
}

bool simcluster_bogus_commit(const struct simcluster *c, uint64_t index)
{
        unsigned k;

        for (k = 0; k < c->n_bogus; k++) {
                if (index > c->bogus[k].from && index <= c->bogus[k].to) {
                        return true;
                }
        }
        return false;
}

struct raft_fixture_event *simcluster_step(struct simcluster *c)
{
        struct raft_fixture_event *ev = raft_fixture_step(&c->f);

        c->n_steps++;
        issue_barriers(c);
        redraw_timeouts(c);
        raftcheck_step(c);
        if (c->verbose) {
                trace_states(c);
                simsnap_trace_install(c);
        }
        return ev;
}

void simcluster_step_for(struct simcluster *c, unsigned ms)
{
        raft_time end = simcluster_now(c) + ms;

        while (simcluster_now(c) < end) {
                simcluster_step(c);
        }
}

const struct simentry *simnode_entry_at(const struct simnode *n, uint64_t index)
{
        size_t lo = 0, hi = n->n_entries;

        /* Recorded in apply order, so by index, except after a restore
         * (which the simulation does not do to a live node). */
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (n->entries[mid].index < index) {
                        lo = mid + 1;
                } else {
                        hi = mid;
                }
        }
        return lo < n->n_entries && n->entries[lo].index == index
                   ? &n->entries[lo]
                   : NULL;
}

/* A proposal's outcome, once raft runs its callback. libraft 0.22.1 runs
 * callbacks on a later loop phase, after other entries may have been
 * applied, so the outcome is not read from the callback's `result` (the
 * raft glue's one result slot) but from what the proposing node recorded
 * when it applied the entry at the index raft assigned: which also proves
 * that raftfsm gave the state machine that index (its bytes must be this
 * proposal's). */
static void prop_cb(struct raft_apply *req, int status, void *result)
{
        struct simprop *p = req->data;
        struct simcluster *c = p->c;
        uint8_t bytes[COMMAND_ANY_MAX_SIZE];
        const struct simentry *e;
        size_t len;
        char buf[200];

        if (++p->n_callbacks > 1) {
                anomaly(c, "proposal %u: apply callback fired twice", p->id);
                return;
        }
        assert(c->inflight[p->node] > 0);
        c->inflight[p->node]--;
        p->status = status;
        p->done_at = simcluster_now(c);
        (void)result;
        if (status == 0) {
                e = simnode_entry_at(&c->nodes[p->node], p->raft_index);
                len = command_encode(&p->cmd, bytes, sizeof bytes);
                if (e == NULL || e->len != len ||
                    memcmp(e->bytes, bytes, len) != 0) {
                        anomaly(c,
                                "proposal %u: acknowledged at index %llu, "
                                "where node %u applied %s",
                                p->id, (unsigned long long)p->raft_index,
                                p->node,
                                e == NULL ? "nothing" : "another entry");
                } else {
                        p->result.index = e->index;
                        p->result.res = e->res;
                }
                p->state = SIMPROP_ACKED;
                simformat_result(buf, sizeof buf, &p->result.res);
                simcluster_trace(c, "#%u acked idx=%llu fsm_idx=%llu: %s",
                                 p->id, (unsigned long long)p->raft_index,
                                 (unsigned long long)p->result.index, buf);
        } else {
                p->state = status == RAFT_LEADERSHIPLOST ||
                                   status == RAFT_NOTLEADER ||
                                   status == RAFT_SHUTDOWN
                               ? SIMPROP_UNKNOWN
                               : SIMPROP_FAILED;
                simcluster_trace(
                    c, "#%u %s idx=%llu: %s", p->id,
                    p->state == SIMPROP_UNKNOWN ? "unknown" : "failed",
                    (unsigned long long)p->raft_index, raft_strerror(status));
        }
}

/*
 * The lowest index from which leader l may have to send node j entries: j's
 * applied index (a new leader probes back from j's last index to the first
 * conflict, which is above j's commit index), or lower if l's match index
 * for j is older (it stays put while j's replies are dropped even though j
 * itself moves on; a follower it finds unreachable is probed again from
 * match index + 1).
 */
static raft_index follower_floor(struct simcluster *c, unsigned l, unsigned j)
{
        struct raft *r = simcluster_raft(c, l);
        raft_index floor = raft_last_applied(simcluster_raft(c, j));
        raft_index match;

        if (j == l) {
                return floor;
        }
        if (raft_match_index(r, j + 1, &match) == 0 && match > 0 &&
            match < floor) {
                floor = match;
        }
        return floor;
}

/* A proposal of a copy of `cmd`, its name and a MULTI's list too; NULL
 * when out of memory. */
static struct simprop *prop_new(const struct command *cmd)
{
        struct simprop *p = calloc(1, sizeof *p + cmd->list_len);

        if (p == NULL) {
                return NULL;
        }
        p->cmd = *cmd;
        if (cmd->name_len > 0) {
                memcpy(p->name, cmd->name, cmd->name_len);
        }
        p->cmd.name = p->name;
        if (cmd->list_len > 0) {
                memcpy(p->list, cmd->list, cmd->list_len);
                p->cmd.list = p->list;
        }
        return p;
}

int simcluster_may_append(struct simcluster *c, unsigned l)
{
        struct raft *r = simcluster_raft(c, l);
        unsigned j;

        if (c->cfg.max_lag == 0) {
                return 0;
        }
        for (j = 0; j < c->cfg.n; j++) {
                if (raft_last_index(r) >
                    follower_floor(c, l, j) + c->cfg.max_lag) {
                        return RAFT_BUSY;
                }
        }
        return 0;
}

/* raft_apply() `cmd` (copied) as the one entry of one request on the
 * ready leader: 0 with *out the proposal, the cluster's until closed; or
 * RAFT_NOTLEADER, RAFT_BUSY (too many in flight, or
 * simcluster_may_append()), RAFT_INVALID, RAFT_NOMEM or raft_apply()'s. */
static int propose(struct simcluster *c, const struct command *cmd,
                   struct simprop **out)
{
        struct raft_buffer buf;
        struct simprop *p;
        struct raft *r;
        unsigned l;
        size_t size;
        char text[200];
        int rv;

        l = simcluster_ready_leader(c);
        if (l == c->cfg.n) {
                return RAFT_NOTLEADER;
        }
        if (c->inflight[l] >= c->cfg.max_inflight) {
                return RAFT_BUSY;
        }
        r = simcluster_raft(c, l);
        rv = simcluster_may_append(c, l);
        if (rv != 0) {
                return rv;
        }
        size = command_size(cmd);
        if (size == 0) {
                return RAFT_INVALID;
        }
        if (reserve((void **)&c->props, &c->cap_props, c->n_props,
                    sizeof *c->props) != 0) {
                return RAFT_NOMEM;
        }
        p = prop_new(cmd);
        if (p == NULL) {
                return RAFT_NOMEM;
        }
        buf.len = size;
        buf.base = raft_malloc(size);
        if (buf.base == NULL) {
                free(p);
                return RAFT_NOMEM;
        }
        if (command_encode(cmd, buf.base, size) != size) {
                raft_free(buf.base);
                free(p);
                return RAFT_INVALID;
        }
        p->c = c;
        p->id = (unsigned)c->n_props + 1;
        p->node = l;
        p->proposed_at = simcluster_now(c);
        p->req.data = p;
        rv = raft_apply(r, &p->req, &buf, 1, prop_cb);
        if (rv != 0) {
                /* The buffer stays ours when raft_apply() fails. */
                raft_free(buf.base);
                free(p);
                return rv;
        }
        p->raft_index = p->req.index;
        c->inflight[l]++;
        c->props[c->n_props++] = p;
        simformat_command(text, sizeof text, &p->cmd);
        simcluster_trace(c, "#%u propose on n%u idx=%llu: %s", p->id, l,
                         (unsigned long long)p->raft_index, text);
        *out = p;
        return 0;
}

bool simcluster_set_disk_latency(struct simcluster *c, unsigned i, unsigned ms)
{
        if (c->nodes[i].store.writes != NULL ||
            c->nodes[i].store.held != NULL) {
                return false;
        }
        raft_fixture_set_disk_latency(&c->f, i, ms);
        return true;
}

size_t simcluster_pending(struct simcluster *c)
{
        size_t n = 0;
        unsigned i;

        for (i = 0; i < c->cfg.n; i++) {
                n += c->inflight[i];
        }
        return n;
}

/* Every node has applied the same index, at least `index`. */
static bool all_applied(struct simcluster *c, raft_index index)
{
        raft_index first = raft_last_applied(simcluster_raft(c, 0));
        unsigned i;

        if (first < index) {
                return false;
        }
        for (i = 1; i < c->cfg.n; i++) {
                if (raft_last_applied(simcluster_raft(c, i)) != first) {
                        return false;
                }
        }
        return true;
}

/* "n0 L t3 last=12 applied=12 ..." for failure reasons. */
static void describe_nodes(struct simcluster *c, char *buf, size_t cap)
{
        static const char states[] = "UFCL";
        size_t len = 0;
        unsigned i;

        buf[0] = '\0';
        for (i = 0; i < c->cfg.n && len < cap; i++) {
                struct raft *r = simcluster_raft(c, i);
                int n = snprintf(
                    buf + len, cap - len,
                    "%sn%u %c%s t%llu last=%llu commit=%llu applied=%llu%s",
                    i > 0 ? ", " : "", i, states[raft_state(r) & 3],
                    raft_fixture_alive(&c->f, i) ? "" : " dead",
                    (unsigned long long)raft_current_term(r),
                    (unsigned long long)raft_last_index(r),
                    (unsigned long long)raft_commit_index(r),
                    (unsigned long long)raft_last_applied(r),
                    c->ready_term[i] == raft_current_term(r) ? " ready" : "");
                if (n < 0) {
                        break;
                }
                len += (size_t)n;
        }
}

int simcluster_converge(struct simcluster *c, const struct command *final,
                        unsigned max_ms, struct simprop **out)
{
        raft_time deadline = simcluster_now(c) + max_ms;
        struct simprop *p = NULL;
        char nodes[400];

        simlinks_heal(c);
        while (simcluster_now(c) < deadline) {
                if ((p == NULL || p->state == SIMPROP_UNKNOWN ||
                     p->state == SIMPROP_FAILED) &&
                    propose(c, final, &p) != 0) {
                        p = NULL;
                }
                if (p != NULL && p->state == SIMPROP_ACKED) {
                        break;
                }
                simcluster_step(c);
        }
        if (p == NULL || p->state != SIMPROP_ACKED) {
                describe_nodes(c, nodes, sizeof nodes);
                snprintf(c->errmsg, sizeof c->errmsg,
                         "no leader committed the final command within %u ms "
                         "(%s)",
                         max_ms, nodes);
                return -1;
        }
        while (!all_applied(c, p->raft_index) || simcluster_pending(c) > 0) {
                if (simcluster_now(c) >= deadline) {
                        describe_nodes(c, nodes, sizeof nodes);
                        snprintf(c->errmsg, sizeof c->errmsg,
                                 "nodes did not converge within %u ms "
                                 "(%zu proposals pending; %s)",
                                 max_ms, simcluster_pending(c), nodes);
                        return -1;
                }
                simcluster_step(c);
        }
        *out = p;
        return 0;
}
