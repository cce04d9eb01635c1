/* test_sim's clients' connections to the cores, over simnet or simhost's
 * direct path. */
#include "simpath.h"

#include <stdlib.h>
#include <string.h>

#include "../../include/baton/errors.h"
#include "../../src/lib/mem.h"
#include "../../src/proto/reader.h"
#include "../lib/rng.h"
#include "../lib/simnet.h"
#include "sim.h"
#include "simhost.h"
#include "simroutes.h"

#define CONNECT_MS 1000 /* an attempt given up, as libbaton gives one up */
#define CHUNK_MAX  200  /* simnet's segments and chunks: frames split */
#define MAX_UNDO   32

/* A byte buffer that grows. */
struct bytes {
        uint8_t *p;
        size_t len, cap, at; /* bytes held, room, read so far */
};

struct pathconn {
        struct simpath *p;
        unsigned node;
        struct simconn *direct; /* the direct path's, or NULL */
        uint64_t net;           /* simnet's connection; 0 once dead */
        bool up;                /* established at the client */
        bool closed;            /* told closed, refused or given up */
        raft_time deadline;     /* of the attempt */
        struct bytes out;       /* sent before the attempt was established */
        struct proto_reader reader;
        struct bytes inbox; /* whole frames, as they came */
};

struct undo {
        struct simnet_fault f;
        raft_time at;
};

struct simpath {
        struct simhost *h;
        struct simcluster *c;
        struct simnet *net; /* NULL: the direct path */
        bool down[SIMNET_MAX_NODES];
        struct pathconn **conns;
        size_t n_conns, conns_cap;
        struct simroutes routes; /* the nodes' side */
        struct rng rng;          /* the fault schedule's */
        raft_time fault_at;
        struct undo undo[MAX_UNDO];
        unsigned n_undo;
        struct simpath_stats stats;
};

static raft_time now_of(const struct simpath *p)
{
        return simcluster_now(p->c);
}

static bool bytes_add(struct bytes *b, const void *p, size_t n)
{
        if (b->at > 0) {
                memmove(b->p, b->p + b->at, b->len - b->at);
                b->len -= b->at;
                b->at = 0;
        }
        if (!sim_grow((void **)&b->p, &b->cap, b->len + n, 1)) {
                return false;
        }
        memcpy(b->p + b->len, p, n);
        b->len += n;
        return true;
}

/* ------------------------------------------------------------------------
 * The clients' side
 */

static struct pathconn *conn_of(struct simpath *p, uint64_t net)
{
        for (size_t i = 0; net != 0 && i < p->n_conns; i++) {
                if (p->conns[i]->net == net) {
                        return p->conns[i];
                }
        }
        return NULL;
}

/* The connection is gone for the client: nothing more in or out. */
static void conn_dead(struct pathconn *c)
{
        c->net = 0;
        c->closed = true;
        c->out.len = c->out.at = 0;
        c->p->stats.closes++;
}

struct pathconn *simpath_connect(struct simpath *p, uint64_t client, unsigned i)
{
        struct pathconn *c = calloc(1, sizeof *c);

        if (c == NULL) {
                return NULL;
        }
        c->p = p;
        c->node = i;
        proto_reader_init(&c->reader, PROTO_MAX_BODY, &mem_libc);
        if (p->net == NULL) {
                c->direct = simhost_connect(p->h, i);
                if (c->direct == NULL) {
                        simpath_disconnect(c);
                        return NULL;
                }
                return c;
        }
        if (!sim_grow((void **)&p->conns, &p->conns_cap, p->n_conns + 1,
                      sizeof *p->conns) ||
            simnet_connect(p->net, client, i, now_of(p), &c->net) != 0) {
                c->net = 0;
                simpath_disconnect(c);
                return NULL;
        }
        p->conns[p->n_conns++] = c;
        c->deadline = now_of(p) + CONNECT_MS;
        return c;
}

void simpath_send(struct pathconn *c, const uint8_t *frame, size_t len)
{
        if (c->direct != NULL) {
                simhost_send(c->direct, frame, len);
        } else if (c->closed) {
                return;
        } else if (c->up) {
                /* Refused only on a connection already reset towards the
                 * client: the notice is on its way. */
                simnet_send(c->p->net, c->net, SIMNET_CLIENT, frame, len,
                            now_of(c->p));
        } else if (!bytes_add(&c->out, frame, len)) {
                simnet_close(c->p->net, c->net, SIMNET_CLIENT, now_of(c->p));
                conn_dead(c);
        }
}

bool simpath_next(struct pathconn *c, struct proto_header *hdr,
                  const uint8_t **body)
{
        struct bytes *b = &c->inbox;

        if (c->direct != NULL) {
                return simhost_next(c->direct, hdr, body);
        }
        return simhost_frames_next(b->p, &b->at, &b->len, hdr, body);
}

bool simpath_closed(struct pathconn *c)
{
        if (c->direct != NULL) {
                return simhost_closed(c->direct);
        }
        if (!c->closed && !c->up && now_of(c->p) >= c->deadline) {
                /* Given up: the attempt is abandoned, nobody told. */
                simnet_close(c->p->net, c->net, SIMNET_CLIENT, now_of(c->p));
                conn_dead(c);
                c->p->stats.refused++;
        }
        return c->closed;
}

unsigned simpath_node(const struct pathconn *c)
{
        return c->node;
}

void simpath_disconnect(struct pathconn *c)
{
        struct simpath *p;

        if (c == NULL) {
                return;
        }
        p = c->p;
        simhost_disconnect(c->direct);
        if (c->net != 0) {
                simnet_close(p->net, c->net, SIMNET_CLIENT, now_of(p));
        }
        for (size_t i = 0; i < p->n_conns; i++) {
                if (p->conns[i] == c) {
                        p->conns[i] = p->conns[--p->n_conns];
                        break;
                }
        }
        proto_reader_close(&c->reader);
        free(c->out.p);
        free(c->inbox.p);
        free(c);
}

/* Whole frames out of the chunks that reached the client, into its
 * inbox; a stream that does not decode closes the connection. */
static void client_bytes(struct pathconn *c, const uint8_t *p, size_t n)
{
        uint8_t head[PROTO_HEADER_SIZE];
        size_t off = 0;

        while (off < n && !c->closed) {
                long used = proto_reader_feed(&c->reader, p + off, n - off);

                if (used < 0) {
                        simnet_close(c->p->net, c->net, SIMNET_CLIENT,
                                     now_of(c->p));
                        conn_dead(c);
                        return;
                }
                off += (size_t)used;
                if (!c->reader.ready) {
                        continue;
                }
                proto_header_encode(&c->reader.h, head);
                if (!bytes_add(&c->inbox, head, sizeof head) ||
                    !bytes_add(&c->inbox, c->reader.body, c->reader.h.length)) {
                        simnet_close(c->p->net, c->net, SIMNET_CLIENT,
                                     now_of(c->p));
                        conn_dead(c);
                        return;
                }
        }
}

/* ------------------------------------------------------------------------
 * simnet's callbacks
 */

static void on_established(void *data, uint64_t net, enum simnet_side side,
                           uint64_t now)
{
        struct simpath *p = data;
        struct pathconn *c;

        if (side == SIMNET_NODE) {
                simroutes_on_established(&p->routes, net, now);
                return;
        }
        c = conn_of(p, net);
        if (c == NULL || c->closed) {
                return;
        }
        c->up = true;
        if (c->out.len > c->out.at) {
                simnet_send(p->net, net, SIMNET_CLIENT, c->out.p + c->out.at,
                            c->out.len - c->out.at, now);
        }
        c->out.len = c->out.at = 0;
}

static void on_failed(void *data, uint64_t net, enum simnet_why why,
                      uint64_t now)
{
        struct simpath *p = data;
        struct pathconn *c = conn_of(p, net);

        (void)why;
        (void)now;
        if (c != NULL) {
                conn_dead(c);
                p->stats.refused++;
        }
}

static void on_bytes(void *data, uint64_t net, enum simnet_side to,
                     const uint8_t *b, size_t n, uint64_t now)
{
        struct simpath *p = data;
        struct pathconn *c;

        (void)now;
        if (to == SIMNET_NODE) {
                simroutes_on_bytes(&p->routes, net, b, n);
                return;
        }
        c = conn_of(p, net);
        if (c != NULL) {
                client_bytes(c, b, n);
        }
}

static void on_closed(void *data, uint64_t net, enum simnet_side side,
                      enum simnet_why why, uint64_t now)
{
        struct simpath *p = data;
        struct pathconn *c;

        (void)why;
        (void)now;
        if (side == SIMNET_NODE) {
                simroutes_on_closed(&p->routes, net);
                return;
        }
        c = conn_of(p, net);
        if (c != NULL) {
                conn_dead(c);
        }
}

/* ------------------------------------------------------------------------
 * The whole: time, kills and faults
 */

struct simpath *simpath_create(struct simhost *h, struct simcluster *c,
                               bool direct, uint64_t seed)
{
        struct simnet_cbs cbs = {NULL, on_established, on_failed, on_bytes,
                                 on_closed};
        struct simnet_config cfg;
        struct simpath *p = calloc(1, sizeof *p);

        if (p == NULL) {
                return NULL;
        }
        p->h = h;
        p->c = c;
        p->rng.s = seed * 0x9E3779B97F4A7C15ULL + 0x51;
        p->fault_at = 1000 + rng_below(&p->rng, 1000);
        if (direct) {
                return p;
        }
        cbs.data = p;
        simnet_config_defaults(&cfg, seed ^ 0x5157, c->cfg.n);
        cfg.chunk_max = CHUNK_MAX;
        p->net = simnet_create(&cfg, &cbs);
        if (p->net == NULL) {
                free(p);
                return NULL;
        }
        simroutes_init(&p->routes, p->h, p->net);
        return p;
}

void simpath_destroy(struct simpath *p)
{
        if (p == NULL) {
                return;
        }
        while (p->n_conns > 0) {
                simpath_disconnect(p->conns[p->n_conns - 1]);
        }
        simroutes_close(&p->routes);
        simnet_destroy(p->net);
        free(p->conns);
        free(p);
}

/* simnet's kills and revivals, as the cores were dropped and started. */
static void sync_kills(struct simpath *p, uint64_t now)
{
        for (unsigned i = 0; i < p->c->cfg.n && i < SIMNET_MAX_NODES; i++) {
                bool down = p->h->cores[i] == NULL;
                struct simnet_fault f = {.kind = SIMNET_KILL, .node = i};

                if (down == p->down[i]) {
                        continue;
                }
                p->down[i] = down;
                if (down) {
                        simnet_apply(p->net, &f, now);
                } else {
                        simnet_undo(p->net, &f, now);
                }
        }
}

static void heal_due(struct simpath *p, uint64_t now, bool all)
{
        unsigned i = 0;

        while (i < p->n_undo) {
                if (all || p->undo[i].at <= now) {
                        simnet_undo(p->net, &p->undo[i].f, now);
                        p->undo[i] = p->undo[--p->n_undo];
                        continue;
                }
                i++;
        }
}

/* One of simnet_pick()'s faults but kills and pauses of nodes (a node's
 * life is raft's faults' business). */
static void strike(struct simpath *p, uint64_t now)
{
        struct simnet_fault f;

        simnet_pick(p->net, &f);
        if (f.kind == SIMNET_KILL || f.kind == SIMNET_PAUSE_NODE ||
            (f.kind != SIMNET_CUT && p->n_undo == MAX_UNDO) ||
            simnet_apply(p->net, &f, now) != 0) {
                return;
        }
        p->stats.faults++;
        p->stats.cuts += f.kind == SIMNET_CUT;
        p->stats.partitions += f.kind == SIMNET_PARTITION;
        p->stats.isolations += f.kind == SIMNET_ISOLATE;
        p->stats.pauses += f.kind == SIMNET_PAUSE_CLIENT;
        p->stats.spikes += f.kind == SIMNET_SPIKE;
        if (f.kind != SIMNET_CUT) {
                p->undo[p->n_undo++] =
                    (struct undo){f, now + 200 + rng_below(&p->rng, 2801)};
        }
}

void simpath_run(struct simpath *p, bool faults)
{
        uint64_t now = now_of(p);

        if (p->net == NULL) {
                return;
        }
        simnet_advance(p->net, now);
        sync_kills(p, now);
        if (faults) {
                heal_due(p, now, false);
                if (now >= p->fault_at) {
                        strike(p, now);
                        p->fault_at = now + 200 + rng_below(&p->rng, 601);
                }
        }
        simroutes_pump(&p->routes, now);
}

void simpath_heal(struct simpath *p)
{
        if (p->net != NULL) {
                heal_due(p, now_of(p), true);
        }
}

const struct simpath_stats *simpath_stats(const struct simpath *p)
{
        return &p->stats;
}

const char *simpath_error(const struct simpath *p)
{
        return p->routes.errmsg[0] != '\0' ? p->routes.errmsg : NULL;
}
