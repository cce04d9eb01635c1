/* batond's request core on the simulated cluster: one real struct gateway
 * per fixture node, whose host maps its ops onto raft_fixture, and
 * in-process client connections to it. */
#include "simops.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../include/baton/errors.h"
#include "../../src/proto/reply.h"
#include "../lib/simlinks.h"

/* The wall clock of virtual time 0 (2026-01-01): only the CLOCK command
 * a serving leader stamps its batches with reads it. */
#define SIMHOST_EPOCH_MS 1767225600000ULL

/* ------------------------------------------------------------------------
 * Time, logs and the order of inputs
 */

struct gateway_now simhost_clocks(const struct simhost *h)
{
        uint64_t ms = simcluster_now(h->c);
        struct gateway_now now = {ms, ms * 1000000};

        return now;
}

void simhost_say(const struct simhost *h, const char *fmt, ...)
{
        va_list ap;

        if (!h->verbose) {
                return;
        }
        printf("# t=%" PRIu64 " ", (uint64_t)simcluster_now(h->c));
        va_start(ap, fmt);
        vprintf(fmt, ap);
        va_end(ap);
        printf("\n");
}

void simhost_broken(struct simhost *h, const char *what, unsigned node)
{
        if (h->errmsg[0] == '\0') {
                snprintf(h->errmsg, sizeof h->errmsg, "n%u: %s", node, what);
        }
}

void simhost_enter(struct simhost *h)
{
        h->depth++;
}

static void report_gone(struct simconn *conn)
{
        struct simcore *core = conn->core;

        conn->core = NULL;
        queue_remove(&conn->link);
        gateway_conn_gone(&core->g, &conn->gw);
}

/* The input is over: the connections that went inside it are reported
 * now, in the order they went (gateway.h). */
void simhost_leave(struct simhost *h)
{
        if (--h->depth > 0) {
                return;
        }
        while (!queue_empty(&h->gone)) {
                struct queue *q = queue_head(&h->gone);
                struct gateway_conn *gw =
                    QUEUE_DATA(q, struct gateway_conn, host_link);
                struct simconn *conn = QUEUE_DATA(gw, struct simconn, gw);

                queue_remove(q);
                if (conn->core != NULL) {
                        report_gone(conn);
                }
        }
}

/* ------------------------------------------------------------------------
 * Connection ops
 */

static struct simconn *conn_of(struct gateway_conn *gw)
{
        return QUEUE_DATA(gw, struct simconn, gw);
}

static uint8_t *reserve_op(struct gateway_host *ops, struct gateway_conn *gw,
                           size_t n)
{
        struct simcore *core = ops->data;
        struct simhost *h = core->h;
        struct simconn *conn = conn_of(gw);

        if (conn->core != core) {
                simhost_broken(h, "reserve on a connection reported gone",
                               core->node);
                return NULL;
        }
        if (conn->closed) {
                return NULL;
        }
        if (n > h->scratch_cap) {
                uint8_t *p = realloc(h->scratch, n);
                if (p == NULL) {
                        return NULL;
                }
                h->scratch = p;
                h->scratch_cap = n;
        }
        return h->scratch;
}

/* Append one whole frame to `conn`'s inbox. */
static void deliver(struct simhost *h, struct simconn *conn,
                    const uint8_t *frame, size_t n)
{
        struct proto_header hdr;

        if (n < PROTO_HEADER_SIZE ||
            proto_header_decode(&hdr, frame, PROTO_MAX_BODY) != 0 ||
            hdr.length != n - PROTO_HEADER_SIZE) {
                h->stats.bad_frames++;
                simhost_broken(
                    h, "the core committed a frame that does not decode",
                    conn->node);
                return;
        }
        if (conn->len + n > conn->cap) {
                size_t cap = conn->cap != 0 ? conn->cap : 1024;
                uint8_t *p;

                while (cap < conn->len + n) {
                        cap *= 2;
                }
                p = realloc(conn->inbox, cap);
                if (p == NULL) {
                        simhost_broken(h, "out of memory in a client's inbox",
                                       conn->node);
                        return;
                }
                conn->inbox = p;
                conn->cap = cap;
        }
        memcpy(conn->inbox + conn->len, frame, n);
        conn->len += n;
        h->stats.frames_out++;
}

static void commit_op(struct gateway_host *ops, struct gateway_conn *gw,
                      size_t n, bool later)
{
        struct simcore *core = ops->data;
        struct simconn *conn = conn_of(gw);

        (void)later; /* the direct path has no batching of watch events */
        if (conn->core != core || conn->closed) {
                simhost_broken(core->h, "commit without a reserve", core->node);
                return;
        }
        deliver(core->h, conn, core->h->scratch, n);
}

static void fail_op(struct gateway_host *ops, struct gateway_conn *gw,
                    uint64_t id, int status, const char *message)
{
        struct simcore *core = ops->data;
        struct simhost *h = core->h;
        struct simconn *conn = conn_of(gw);
        uint8_t frame[PROTO_HEADER_SIZE + 8 + PROTO_MESSAGE_MAX];
        size_t n;

        if (conn->core != core) {
                simhost_broken(h, "fail on a connection reported gone",
                               core->node);
                return;
        }
        if (conn->closed) {
                return;
        }
        n = proto_write_error(frame, sizeof frame, id, status, message);
        if (n > 0) {
                deliver(h, conn, frame, n);
        }
        conn->closed = true;
        h->stats.fails++;
        simhost_say(h, "n%u core failed conn %" PRIu64 ": %s (%s)", core->node,
                    gw->id, baton_strerror(status), message);
        queue_push_tail(&h->gone, &gw->host_link);
}

static size_t backlog_op(struct gateway_host *ops,
                         const struct gateway_conn *gw)
{
        (void)ops;
        (void)gw;
        return 0;
}

/* ------------------------------------------------------------------------
 * Inputs from the nodes
 */

static void on_event(void *data, unsigned node, const struct lockfsm_event *ev)
{
        struct simhost *h = data;
        struct simcore *core = h->cores[node];
        struct gateway_now now = simhost_clocks(h);

        if (core == NULL) {
                return;
        }
        simhost_enter(h);
        gateway_on_event(&core->g, &now,
                         raftfsm_entry_term(&h->c->nodes[node].rf), ev);
        simhost_leave(h);
}

/* `data` is the node's live core: core_start() sets the callback and
 * core_drop() clears it, since a node the faults killed may still apply
 * entries (a link fault that heals while it is down reconnects it in the
 * fixture) after its dropped core was freed. */
static void on_acl(void *data, uint64_t index, const struct command *c,
                   int status)
{
        struct simcore *core = data;
        struct simhost *h = core->h;

        simhost_enter(h);
        gateway_on_acl(&core->g, index, c, status);
        simhost_leave(h);
}

/* The leadership barrier applied (or failed): ready, if the node still
 * leads in the barrier's term, as batond's node says from its own. */
static void leadership_done(struct raft_barrier *b, int status)
{
        struct simreq *r = b->data;
        struct simcore *core = r->core;
        struct simhost *h = core->h;
        struct raft *raft = simcluster_raft(h->c, core->node);
        struct gateway_now now = simhost_clocks(h);
        uint64_t term = r->term;

        core->out--;
        free(r);
        if (core->dropped) {
                return;
        }
        if (status != 0 || raft_state(raft) != RAFT_LEADER ||
            raft_current_term(raft) != term) {
                if (core->barrier_term == term) {
                        core->barrier_term = 0; /* try again if it leads */
                }
                return;
        }
        core->serving = true;
        core->term = term;
        h->stats.readies++;
        simhost_say(h, "n%u core serves in term %" PRIu64, core->node, term);
        simhost_enter(h);
        gateway_on_ready(&core->g, &now, term);
        simhost_leave(h);
}

static void issue_leadership_barrier(struct simcore *core, struct raft *raft)
{
        struct simreq *r = calloc(1, sizeof *r);

        if (r == NULL) {
                return; /* the next step tries again */
        }
        r->core = core;
        r->term = raft_current_term(raft);
        r->u.barrier.data = r;
        if (raft_barrier(raft, &r->u.barrier, leadership_done) != 0) {
                free(r);
                return;
        }
        core->barrier_term = r->term;
        core->out++;
}

/* Leadership and restores of one live core, as batond's node monitor. */
static void monitor(struct simhost *h, struct simcore *core,
                    const struct gateway_now *now)
{
        struct raft *raft = simcluster_raft(h->c, core->node);
        bool leads = raft_state(raft) == RAFT_LEADER;
        struct raftfsm_restores rs;

        if (core->serving &&
            (!leads || raft_current_term(raft) != core->term)) {
                core->serving = false;
                h->stats.losts++;
                simhost_say(h, "n%u core lost leadership", core->node);
                simhost_enter(h);
                gateway_on_lost(&core->g, now);
                simhost_leave(h);
        }
        if (!core->serving && leads &&
            core->barrier_term != raft_current_term(raft)) {
                issue_leadership_barrier(core, raft);
        }
        raftfsm_restores(&h->c->nodes[core->node].rf, &rs);
        if (rs.started != core->restores_seen && !rs.pending) {
                core->restores_seen = rs.started;
                simhost_enter(h);
                gateway_on_restored(&core->g);
                simhost_leave(h);
        }
}

static int core_start(struct simhost *h, unsigned i);
static void core_drop(struct simhost *h, unsigned i);

void simhost_sync(struct simhost *h)
{
        unsigned i;

        for (i = 0; i < h->c->cfg.n; i++) {
                bool down = h->c->killed[i] > 0;

                if (down && h->cores[i] != NULL) {
                        h->stats.kills++;
                        core_drop(h, i);
                } else if (!down && h->cores[i] == NULL &&
                           core_start(h, i) != 0) {
                        simhost_broken(h, "out of memory for a core", i);
                }
        }
}

void simhost_step(struct simhost *h)
{
        struct gateway_now now = simhost_clocks(h);
        struct simcore **p;
        unsigned i;

        simhost_sync(h);
        for (i = 0; i < h->c->cfg.n; i++) {
                struct simcore *core = h->cores[i];

                if (core == NULL) {
                        continue;
                }
                monitor(h, core, &now);
                simops_step(core);
                if (core->timer_at != GATEWAY_NEVER &&
                    core->timer_at <= now.ms) {
                        core->timer_at = GATEWAY_NEVER;
                        h->stats.timers++;
                        simhost_enter(h);
                        gateway_on_timer(&core->g, &now);
                        simhost_leave(h);
                }
                if (core->serving) {
                        simhost_enter(h);
                        gateway_flush(&core->g, &now,
                                      SIMHOST_EPOCH_MS + now.ms);
                        simhost_leave(h);
                }
        }
        /* Dropped cores go once raft answered all they asked. */
        for (p = &h->dropped; *p != NULL;) {
                struct simcore *core = *p;

                if (core->out == 0 && gateway_requests_out(&core->g) == 0) {
                        *p = core->next;
                        free(core);
                } else {
                        p = &core->next;
                }
        }
}

/* ------------------------------------------------------------------------
 * Cores' lives
 */

static int core_start(struct simhost *h, unsigned i)
{
        struct simcore *core = calloc(1, sizeof *core);
        struct raftfsm_restores rs;
        int rv;

        if (core == NULL) {
                return BATON_ENOMEM;
        }
        core->h = h;
        core->node = i;
        core->timer_at = GATEWAY_NEVER;
        queue_init(&core->conns);
        simops_init(core);
        core->ops.reserve = reserve_op;
        core->ops.commit = commit_op;
        core->ops.fail = fail_op;
        core->ops.backlog = backlog_op;
        rv = gateway_init(&core->g, &core->ops, &h->cfg[i],
                          h->verbose ? LOG_DEBUG : LOG_WARN);
        if (rv != 0) {
                free(core);
                return rv;
        }
        raftfsm_restores(&h->c->nodes[i].rf, &rs);
        core->restores_seen = rs.started;
        h->cores[i] = core;
        raftfsm_set_acl_cb(&h->c->nodes[i].rf, on_acl, core);
        return 0;
}

/* Every connection gone, then gateway_close(): the core answers nobody,
 * and stays until raft has answered what it asked. */
static void core_drop(struct simhost *h, unsigned i)
{
        struct simcore *core = h->cores[i];
        struct gateway_now now = simhost_clocks(h);

        if (core == NULL) {
                return;
        }
        h->cores[i] = NULL;
        raftfsm_set_acl_cb(&h->c->nodes[i].rf, NULL, NULL);
        while (!queue_empty(&core->conns)) {
                struct simconn *conn =
                    QUEUE_DATA(queue_head(&core->conns), struct simconn, link);
                conn->closed = true;
                report_gone(conn);
        }
        simhost_enter(h);
        gateway_close(&core->g, &now);
        simhost_leave(h);
        simops_drop(core);
        core->dropped = true;
        core->serving = false;
        core->next = h->dropped;
        h->dropped = core;
}

static void config_node(struct config *cfg, unsigned n, unsigned i,
                        const struct simcluster_config *sc)
{
        unsigned k;

        config_defaults(cfg);
        cfg->id = i + 1;
        cfg->n_members = n;
        for (k = 0; k < n; k++) {
                cfg->members[k].id = k + 1;
                snprintf(cfg->members[k].raft_address,
                         sizeof cfg->members[k].raft_address, "%u", k + 1);
                snprintf(cfg->members[k].client_address,
                         sizeof cfg->members[k].client_address, "sim-n%u:7000",
                         k);
        }
        cfg->election_timeout_ms = sc->election_timeout;
        cfg->heartbeat_timeout_ms = sc->heartbeat_timeout;
        cfg->tls = false;
        cfg->watch_history = 16;
        cfg->max_inflight_entries = 32;
        /* Locks of an expired session stay blocked a while, so that
         * expiries run the core's lock-delay clock too. */
        cfg->lock_delay_ms = 250;
}

int simhost_init(struct simhost *h, struct simcluster *c, bool verbose)
{
        unsigned i;
        int rv;

        memset(h, 0, sizeof *h);
        h->c = c;
        h->verbose = verbose;
        queue_init(&h->gone);
        for (i = 0; i < c->cfg.n; i++) {
                config_node(&h->cfg[i], c->cfg.n, i, &c->cfg);
                rv = core_start(h, i);
                if (rv != 0) {
                        simhost_shutdown(h);
                        simhost_free(h);
                        return rv;
                }
        }
        simcluster_set_event_hook(c, on_event, h);
        return 0;
}

void simhost_acl_on(struct simhost *h)
{
        /* The cores read their config through the pointer they were
         * given, and a revived node's core gets the same one. */
        for (unsigned i = 0; i < h->c->cfg.n; i++) {
                h->cfg[i].tls = true;
        }
}

void simhost_kill(struct simhost *h, unsigned i)
{
        simlinks_kill(h->c, i);
        simhost_sync(h);
}

void simhost_revive(struct simhost *h, unsigned i)
{
        simlinks_revive(h->c, i);
        simhost_sync(h);
}

unsigned simhost_serving(const struct simhost *h)
{
        unsigned best = h->c->cfg.n;
        uint64_t term = 0;
        unsigned i;

        for (i = 0; i < h->c->cfg.n; i++) {
                const struct simcore *core = h->cores[i];

                if (core != NULL && core->serving && core->term >= term) {
                        best = i;
                        term = core->term;
                }
        }
        return best;
}

void simhost_shutdown(struct simhost *h)
{
        unsigned i;

        for (i = 0; i < h->c->cfg.n; i++) {
                core_drop(h, i);
        }
        simcluster_set_event_hook(h->c, NULL, NULL);
}

void simhost_free(struct simhost *h)
{
        while (h->dropped != NULL) {
                struct simcore *core = h->dropped;

                h->dropped = core->next;
                if (core->out != 0 || gateway_requests_out(&core->g) != 0) {
                        simhost_broken(h,
                                       "raft closed with requests unanswered",
                                       core->node);
                }
                free(core);
        }
        free(h->scratch);
        h->scratch = NULL;
}

/* ------------------------------------------------------------------------
 * Client connections: the direct path
 */

struct simconn *simhost_connect(struct simhost *h, unsigned i)
{
        struct simcore *core = i < h->c->cfg.n ? h->cores[i] : NULL;
        struct simconn *conn;

        if (core == NULL) {
                return NULL;
        }
        conn = calloc(1, sizeof *conn);
        if (conn == NULL) {
                return NULL;
        }
        conn->h = h;
        conn->core = core;
        conn->node = i;
        gateway_conn_init(&conn->gw, ++h->next_conn_id, "", true);
        queue_push_tail(&core->conns, &conn->link);
        return conn;
}

void simhost_send(struct simconn *conn, const uint8_t *frame, size_t len)
{
        struct simhost *h = conn->h;
        struct gateway_now now = simhost_clocks(h);
        struct proto_header hdr;

        if (conn->closed || conn->core == NULL) {
                return;
        }
        if (len < PROTO_HEADER_SIZE ||
            proto_header_decode(&hdr, frame, h->cfg[conn->node].max_frame) !=
                0 ||
            hdr.length != len - PROTO_HEADER_SIZE) {
                simhost_broken(h, "a client sent a frame that does not decode",
                               conn->node);
                return;
        }
        h->stats.frames_in++;
        simhost_enter(h);
        gateway_on_frame(&conn->core->g, &now, &conn->gw, &hdr,
                         frame + PROTO_HEADER_SIZE);
        simhost_leave(h);
}

bool simhost_frames_next(const uint8_t *buf, size_t *at, size_t *len,
                         struct proto_header *hdr, const uint8_t **body)
{
        if (*at >= *len) {
                *at = *len = 0;
                return false;
        }
        /* Every frame in the buffer decoded when it was put there. */
        proto_header_decode(hdr, buf + *at, PROTO_MAX_BODY);
        *body = buf + *at + PROTO_HEADER_SIZE;
        *at += PROTO_HEADER_SIZE + hdr->length;
        return true;
}

bool simhost_next(struct simconn *conn, struct proto_header *hdr,
                  const uint8_t **body)
{
        return simhost_frames_next(conn->inbox, &conn->at, &conn->len, hdr,
                                   body);
}

void simhost_disconnect(struct simconn *conn)
{
        if (conn == NULL) {
                return;
        }
        if (conn->core != NULL) {
                conn->closed = true;
                report_gone(conn);
        }
        free(conn->inbox);
        free(conn);
}
