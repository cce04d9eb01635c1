/* libbaton's real client cores on the simulated network and cluster, with
 * a host loop per client doing over simnet what linkio does over sockets. */
#include "simclient.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../include/baton/errors.h"
#include "../../src/lib/mem.h"

static void broken(struct simclients *s, const char *what)
{
        if (s->errmsg[0] == '\0') {
                snprintf(s->errmsg, sizeof s->errmsg, "%s", what);
        }
}

int64_t simclient_clock(const struct simclient *cl, uint64_t now)
{
        const struct simclients_config *cfg = &cl->s->cfg;

        return cl->offset + (int64_t)(now * cfg->rate_num /
                                      (cfg->rate_den ? cfg->rate_den : 1));
}

/* ------------------------------------------------------------------------
 * The environment: draws from the client's seed, a tracer that names it
 */

static uint64_t env_random(void *data)
{
        return rng_nonzero(&((struct simclient *)data)->rng);
}

static int env_secret(void *data, uint8_t *buf, size_t n)
{
        rng_fill(&((struct simclient *)data)->rng, buf, n);
        return 0;
}

static void trace_hold(void *data, const struct locks_hold *h, int change,
                       uint32_t count, int64_t now)
{
        struct simclient *cl = data;
        const struct simclients_hooks *k = &cl->s->cfg.hooks;

        if (now == LOCKS_NO_TIME) {
                broken(cl->s, "a hold recorded without a time in the core");
        }
        if (k->hold != NULL) {
                k->hold(k->data, cl, h, change, count, now);
        }
}

static void trace_lease(void *data, uint64_t session, int state, int64_t now)
{
        struct simclient *cl = data;
        const struct simclients_hooks *k = &cl->s->cfg.hooks;

        if (k->lease != NULL) {
                k->lease(k->data, cl, session, state, now);
        }
}

/* The core's watch_event hook: `data` is the core's session, inside
 * the client. */
static void on_watch(void *data, struct request *r,
                     const struct proto_watch_event *e, void **shared)
{
        struct simclient *cl =
            (struct simclient *)((char *)data -
                                 offsetof(struct simclient, core.session));
        const struct simclients_hooks *k = &cl->s->cfg.hooks;

        (void)shared;
        if (k->watch != NULL) {
                k->watch(k->data, cl, r, e);
        }
}

/* ------------------------------------------------------------------------
 * A client's connection: linkio over simnet
 */

/* The node an endpoint names ("sim-nI:7000"), or n_nodes. */
static unsigned node_of(const struct simclients *s, const char *peer)
{
        unsigned i;

        for (i = 0; i < s->n_nodes; i++) {
                if (strcmp(peer, s->endpoints[i]) == 0) {
                        return i;
                }
        }
        return s->n_nodes;
}

/* Let go of the simnet connection and the reader (the core gave the
 * attempt up, or it failed). */
static void drop_net(struct simclient *cl, uint64_t now)
{
        if (cl->net != 0) {
                simnet_close(cl->s->net, cl->net, SIMNET_CLIENT, now);
        }
        cl->net = 0;
        cl->attempt = 0;
        cl->up = false;
        proto_reader_close(&cl->reader);
        proto_reader_init(&cl->reader, PROTO_MAX_BODY, &mem_libc);
}

/* Tell the caller of each command in the `n` bytes of whole frames at
 * `p` as it leaves. */
static void tell_sent(struct simclient *cl, const uint8_t *p, size_t n,
                      uint64_t now)
{
        const struct simclients_hooks *k = &cl->s->cfg.hooks;
        struct proto_header h;
        struct command c;
        size_t off = 0;

        while (k->sent != NULL && off + PROTO_HEADER_SIZE <= n) {
                if (proto_header_decode(&h, p + off, PROTO_MAX_BODY) != 0 ||
                    off + PROTO_HEADER_SIZE + h.length > n) {
                        broken(cl->s, "the outbox holds a frame cut short");
                        return;
                }
                if (h.type == PROTO_COMMAND &&
                    command_decode(&c, p + off + PROTO_HEADER_SIZE, h.length) ==
                        0) {
                        k->sent(k->data, cl, &c, simclient_clock(cl, now));
                }
                off += PROTO_HEADER_SIZE + h.length;
        }
}

void simclient_flush(struct simclient *cl, uint64_t now)
{
        const uint8_t *p;
        size_t n;

        if (!cl->up || cl->attempt != cl->core.link.conn) {
                return;
        }
        n = link_output(&cl->core.link, &p);
        if (n == 0) {
                return;
        }
        /* A send the network refuses is on a connection already reset
         * towards the client: the notice is on its way. */
        tell_sent(cl, p, n, now);
        simnet_send(cl->s->net, cl->net, SIMNET_CLIENT, p, n, now);
        cl->bytes_out += n;
        link_output_taken(&cl->core.link, n);
}

/* After an input: a connection the core gave up is closed, and what it
 * put goes out. */
static void settle(struct simclient *cl, uint64_t now)
{
        if (cl->attempt != 0 && cl->attempt != cl->core.link.conn) {
                drop_net(cl, now);
        }
        simclient_flush(cl, now);
}

static void conn_failed(struct simclient *cl, enum reach_outcome outcome,
                        const char *why, uint64_t now)
{
        struct link_failure f = {true, outcome, false, why};
        uint64_t attempt = cl->attempt;

        drop_net(cl, now);
        link_conn_failed(&cl->core.link, attempt, &f, simclient_clock(cl, now));
        settle(cl, now);
}

/* The attempt the core wants: carry out a new one, close any other. */
static void dial(struct simclient *cl, uint64_t now)
{
        int64_t t = simclient_clock(cl, now);
        uint64_t want = core_dial(&cl->core, t);
        unsigned node;

        if (want == cl->attempt) {
                return;
        }
        drop_net(cl, now);
        if (want == 0) {
                return;
        }
        cl->attempt = want;
        cl->dials++;
        node = node_of(cl->s, cl->core.link.peer);
        if (node >= cl->s->n_nodes ||
            simnet_connect(cl->s->net, cl->id, node, now, &cl->net) != 0) {
                cl->net = 0;
                conn_failed(cl, REACH_REFUSED, "no such node", now);
                return;
        }
        cl->deadline = t + LINK_CONNECT_MS;
}

/* One round, as libbaton's background thread runs it. */
static void round_of(struct simclient *cl, uint64_t now)
{
        const struct simclients_hooks *k = &cl->s->cfg.hooks;
        int64_t t = simclient_clock(cl, now);

        core_lease_tick(&cl->core, t);
        dial(cl, now);
        if (cl->attempt != 0 && !cl->up && t >= cl->deadline) {
                conn_failed(cl, REACH_REFUSED, "connect timed out", now);
        } else if (cl->attempt != 0) {
                link_tick(&cl->core.link, t);
                settle(cl, now);
        }
        if (link_up(&cl->core.link)) {
                core_tick(&cl->core, t);
        }
        settle(cl, now);
        if (k->step != NULL) {
                k->step(k->data, cl, t);
        }
        /* What the caller's step wants: a session, a request. */
        dial(cl, now);
        settle(cl, now);
}

static int64_t min64(int64_t a, int64_t b)
{
        return a < b ? a : b;
}

/* When the client's round next has work without an input: what
 * libbaton's loop sleeps until. */
static int64_t next_wake(struct simclient *cl)
{
        const struct simclients_hooks *k = &cl->s->cfg.hooks;
        int64_t t = core_next_tick(&cl->core);

        t = min64(t,
                  link_next_event(&cl->core.link, core_wants_link(&cl->core)));
        if (cl->attempt != 0 && !cl->up) {
                t = min64(t, cl->deadline);
        }
        if (k->next != NULL) {
                t = min64(t, k->next(k->data, cl));
        }
        return t;
}

/* Rounds until the core's flags ask for no more, as libbaton's host acts
 * on them before it sleeps (effects_apply()): `loop_needed` (a request to
 * put, a CANCEL of a wait given up, a callback) wakes the background
 * thread at once, `changed` the callers waiting (the caller's step).
 * `write_now` needs nothing: the outbox is written after every input. */
static void rounds(struct simclient *cl, uint64_t now)
{
        struct registry *reg = &cl->core.registry;

        for (unsigned i = 0; i < 8; i++) {
                cl->dirty = false;
                reg->loop_needed = reg->changed = reg->write_now = false;
                round_of(cl, now);
                if (!reg->loop_needed && !reg->changed) {
                        return;
                }
        }
        cl->dirty = true; /* still busy: on at the next run */
}

static struct simclient *client_of(struct simclients *s, uint64_t net)
{
        unsigned i;

        for (i = 0; i < s->n; i++) {
                if (s->cl[i].net == net && net != 0) {
                        return &s->cl[i];
                }
        }
        return NULL;
}

static void client_bytes(struct simclient *cl, const uint8_t *p, size_t n,
                         uint64_t now)
{
        size_t off = 0;

        while (off < n && cl->net != 0) {
                long used = proto_reader_feed(&cl->reader, p + off, n - off);

                if (used < 0) {
                        conn_failed(cl, REACH_REFUSED, "garbled frames", now);
                        return;
                }
                off += (size_t)used;
                if (!cl->reader.ready) {
                        continue;
                }
                cl->frames_in++;
                cl->s->frames_to_clients++;
                link_conn_frame(&cl->core.link, cl->attempt, &cl->reader.h,
                                cl->reader.body, simclient_clock(cl, now));
                if (cl->s->cfg.hooks.frame != NULL) {
                        cl->s->cfg.hooks.frame(cl->s->cfg.hooks.data, cl,
                                               simclient_clock(cl, now));
                }
                settle(cl, now);
        }
}

/* ------------------------------------------------------------------------
 * The nodes' side: simroutes.h's
 */

void simclients_pump(struct simclients *s, uint64_t now)
{
        simroutes_pump(&s->routes, now);
}

/* ------------------------------------------------------------------------
 * simnet's callbacks
 */

static void on_established(void *data, uint64_t net, enum simnet_side side,
                           uint64_t now)
{
        struct simclients *s = data;
        struct simclient *cl;

        if (side == SIMNET_NODE) {
                simroutes_on_established(&s->routes, net, now);
                return;
        }
        cl = client_of(s, net);
        if (cl == NULL) {
                return;
        }
        cl->dirty = true;
        cl->up = true;
        link_conn_up(&cl->core.link, cl->attempt, simclient_clock(cl, now));
        settle(cl, now);
}

static void on_failed(void *data, uint64_t net, enum simnet_why why,
                      uint64_t now)
{
        struct simclients *s = data;
        struct simclient *cl = client_of(s, net);

        if (cl == NULL) {
                return;
        }
        cl->dirty = true;
        cl->net = 0; /* dead: nothing to close */
        conn_failed(
            cl, why == SIMNET_REFUSED ? REACH_NOT_LISTENING : REACH_REFUSED,
            why == SIMNET_REFUSED ? "connection refused" : "connect timed out",
            now);
}

static void on_bytes(void *data, uint64_t net, enum simnet_side to,
                     const uint8_t *p, size_t n, uint64_t now)
{
        struct simclients *s = data;
        struct simclient *cl;

        if (to == SIMNET_NODE) {
                simroutes_on_bytes(&s->routes, net, p, n);
                return;
        }
        cl = client_of(s, net);
        if (cl != NULL) {
                cl->dirty = true;
                client_bytes(cl, p, n, now);
        }
}

static void on_closed(void *data, uint64_t net, enum simnet_side side,
                      enum simnet_why why, uint64_t now)
{
        struct simclients *s = data;
        struct simclient *cl;

        if (side == SIMNET_NODE) {
                simroutes_on_closed(&s->routes, net);
                return;
        }
        cl = client_of(s, net);
        if (cl == NULL) {
                return;
        }
        cl->dirty = true;
        cl->net = 0; /* told: nothing more to close */
        conn_failed(cl, REACH_REFUSED,
                    why == SIMNET_EOF ? "closed the connection"
                                      : "connection reset",
                    now);
}

/* ------------------------------------------------------------------------
 * The whole
 */

void simclients_config_defaults(struct simclients_config *cfg,
                                unsigned n_clients, unsigned n_nodes,
                                uint64_t seed)
{
        memset(cfg, 0, sizeof *cfg);
        cfg->n_clients = n_clients;
        cfg->seed = seed;
        cfg->ttl_ms = 5000;
        cfg->rate_num = cfg->rate_den = 1;
        simnet_config_defaults(&cfg->net, seed ^ 0x5151, n_nodes);
}

static int client_init(struct simclients *s, struct simclient *cl, unsigned i)
{
        struct core_config cc = {s->cfg.ttl_ms, s->cfg.lock_delay_ms, "sim",
                                 s->endpoints,  s->n_nodes,           on_watch};

        cl->id = i + 1;
        cl->s = s;
        cl->rng.s = (s->cfg.seed + 1) * 0x9E3779B97F4A7C15ULL ^ (i + 1) * 77;
        cl->offset = (int64_t)rng_below(&cl->rng, 1u << 30) + 1000000;
        cl->tracer = (struct core_tracer){cl, trace_hold, trace_lease};
        cl->env = (struct core_env){cl, env_random, env_secret, &cl->tracer};
        proto_reader_init(&cl->reader, PROTO_MAX_BODY, &mem_libc);
        /* Each client starts at another endpoint, as a shuffled list. */
        if (core_init(&cl->core, &cc, &cl->env) != 0) {
                return BATON_ENOMEM;
        }
        cl->core_ok = true;
        cl->core.link.next = i % s->n_nodes;
        return 0;
}

int simclients_init(struct simclients *s, struct simhost *h,
                    const struct simclients_config *cfg)
{
        struct simnet_cbs cbs = {s, on_established, on_failed, on_bytes,
                                 on_closed};
        unsigned i;

        memset(s, 0, sizeof *s);
        if (cfg->net.n_nodes == 0 || cfg->net.n_nodes > SIMNET_MAX_NODES ||
            cfg->n_clients == 0) {
                return BATON_EINVAL;
        }
        s->h = h;
        s->cfg = *cfg;
        s->n_nodes = cfg->net.n_nodes;
        for (i = 0; i < s->n_nodes; i++) {
                snprintf(s->endpoints[i], LINK_ADDR_MAX, "sim-n%u:7000", i);
        }
        s->net = simnet_create(&cfg->net, &cbs);
        simroutes_init(&s->routes, h, s->net);
        s->cl = calloc(cfg->n_clients, sizeof *s->cl);
        if (s->net == NULL || s->cl == NULL) {
                simclients_free(s);
                return BATON_ENOMEM;
        }
        for (i = 0; i < cfg->n_clients; i++) {
                s->n++;
                if (client_init(s, &s->cl[i], i) != 0) {
                        simclients_free(s);
                        return BATON_ENOMEM;
                }
        }
        return 0;
}

void simclients_free(struct simclients *s)
{
        unsigned i;

        for (i = 0; i < s->n; i++) {
                if (s->cl[i].core_ok) {
                        core_close(&s->cl[i].core);
                }
                proto_reader_close(&s->cl[i].reader);
        }
        simroutes_close(&s->routes);
        free(s->cl);
        simnet_destroy(s->net);
        s->cl = NULL;
        s->net = NULL;
        s->n = 0;
}

void simclients_poke(struct simclients *s)
{
        for (unsigned i = 0; i < s->n; i++) {
                s->cl[i].dirty = true;
        }
}

void simclients_sync(struct simclients *s, uint64_t now)
{
        unsigned i;

        for (i = 0; i < s->n_nodes; i++) {
                bool down = s->h->cores[i] == NULL;
                struct simnet_fault f = {.kind = SIMNET_KILL, .node = i};

                if (down == s->down[i]) {
                        continue;
                }
                s->down[i] = down;
                if (down) {
                        simnet_apply(s->net, &f, now);
                } else {
                        simnet_undo(s->net, &f, now);
                }
        }
        simclients_pump(s, now);
}

void simclients_run(struct simclients *s, uint64_t now)
{
        unsigned i;

        simclients_sync(s, now);
        simnet_advance(s->net, now);
        simclients_pump(s, now);
        for (i = 0; i < s->n; i++) {
                struct simclient *cl = &s->cl[i];

                if (!cl->dirty && simclient_clock(cl, now) < cl->wake_at) {
                        continue;
                }
                rounds(cl, now);
                cl->wake_at = next_wake(cl);
        }
        simnet_advance(s->net, now);
        simclients_pump(s, now);
}
