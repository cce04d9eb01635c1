/* The nodes' side of simnet: simhost's connections behind it. */
#include "simroutes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/proto/proto.h"
#include "sim.h"

/* A connection at a node: simnet's and simhost's. */
struct simroute {
        uint64_t net;
        struct simconn *sc;
        uint8_t *buf; /* bytes of a frame not yet whole */
        size_t len, cap;
};

static void broken(struct simroutes *rs, const char *what)
{
        if (rs->errmsg[0] == '\0') {
                snprintf(rs->errmsg, sizeof rs->errmsg, "%s", what);
        }
}

static struct simroute *route_of(struct simroutes *rs, uint64_t net)
{
        for (size_t i = 0; i < rs->n; i++) {
                if (rs->routes[i].net == net) {
                        return &rs->routes[i];
                }
        }
        return NULL;
}

static void route_drop(struct simroutes *rs, struct simroute *r)
{
        simhost_disconnect(r->sc);
        free(r->buf);
        *r = rs->routes[--rs->n];
}

void simroutes_init(struct simroutes *rs, struct simhost *h, struct simnet *net)
{
        memset(rs, 0, sizeof *rs);
        rs->h = h;
        rs->net = net;
}

void simroutes_close(struct simroutes *rs)
{
        while (rs->n > 0) {
                route_drop(rs, &rs->routes[rs->n - 1]);
        }
        free(rs->routes);
        rs->routes = NULL;
        rs->cap = 0;
}

void simroutes_on_established(struct simroutes *rs, uint64_t net, uint64_t now)
{
        uint64_t client;
        unsigned node;
        struct simconn *sc;

        if (simnet_peer(rs->net, net, &client, &node) != 0) {
                broken(rs, "an established connection without peers");
                return;
        }
        sc = simhost_connect(rs->h, node);
        if (sc == NULL) {
                /* The node's core is down and simnet not told yet. */
                simnet_close(rs->net, net, SIMNET_NODE, now);
                return;
        }
        if (!sim_grow((void **)&rs->routes, &rs->cap, rs->n + 1,
                      sizeof *rs->routes)) {
                broken(rs, "out of memory for routes");
                simhost_disconnect(sc);
                simnet_close(rs->net, net, SIMNET_NODE, now);
                return;
        }
        rs->routes[rs->n++] = (struct simroute){net, sc, NULL, 0, 0};
}

void simroutes_on_bytes(struct simroutes *rs, uint64_t net, const uint8_t *p,
                        size_t n)
{
        struct simroute *r = route_of(rs, net);
        struct proto_header h;
        size_t off = 0;
        size_t whole;

        if (r == NULL || n == 0) {
                return;
        }
        if (!sim_grow((void **)&r->buf, &r->cap, r->len + n, 1)) {
                broken(rs, "out of memory for a node's stream");
                return;
        }
        memcpy(r->buf + r->len, p, n);
        r->len += n;
        while (r->len - off >= PROTO_HEADER_SIZE) {
                if (proto_header_decode(&h, r->buf + off, PROTO_MAX_BODY) !=
                    0) {
                        broken(rs,
                               "a client sent a header that does not decode");
                        r->len = 0;
                        return;
                }
                whole = PROTO_HEADER_SIZE + h.length;
                if (r->len - off < whole) {
                        break;
                }
                rs->frames++;
                simhost_send(r->sc, r->buf + off, whole);
                off += whole;
        }
        memmove(r->buf, r->buf + off, r->len - off);
        r->len -= off;
}

void simroutes_on_closed(struct simroutes *rs, uint64_t net)
{
        struct simroute *r = route_of(rs, net);

        if (r != NULL) {
                route_drop(rs, r);
        }
}

void simroutes_pump(struct simroutes *rs, uint64_t now)
{
        struct proto_header h;
        const uint8_t *body;
        size_t i = 0;

        while (i < rs->n) {
                struct simroute *r = &rs->routes[i];

                while (simhost_next(r->sc, &h, &body)) {
                        simnet_send(rs->net, r->net, SIMNET_NODE,
                                    body - PROTO_HEADER_SIZE,
                                    PROTO_HEADER_SIZE + h.length, now);
                }
                if (simhost_closed(r->sc)) {
                        simnet_close(rs->net, r->net, SIMNET_NODE, now);
                        route_drop(rs, r);
                        continue;
                }
                i++;
        }
}
