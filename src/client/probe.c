/* A one-shot STATUS of one node over a short connection of its own. */
#include "probe.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "../lib/address.h"
#include "clock.h"
#include "drive.h"
#include "errmsg.h"
#include "link.h"
#include "linkio.h"
#include "../proto/reply.h"
#include "../proto/status.h"

/* One probe: a link of its own to one node, driven here until the answer,
 * a failure or the deadline. */
struct probe {
        struct link link;
        struct linkio io;
        const char *endpoint;
        struct baton_status *out;
        struct baton_node_version *ver;   /* NULL: not asked */
        struct baton_node_alarms *alarms; /* NULL: not asked */
        int rv;                           /* 1 while waiting */
        bool sent; /* the STATUS went out on the connection */
};

static void on_connected(void *data, int64_t now)
{
        struct probe *p = data;
        uint8_t frame[PROTO_HEADER_SIZE];
        uint16_t flags = (p->ver != NULL ? PROTO_FLAG_VERSIONS : 0) |
                         (p->alarms != NULL ? PROTO_FLAG_ALARMS : 0);
        size_t len = proto_write_status_request(frame, sizeof frame, 0, flags);

        (void)now;
        p->sent = link_put(&p->link, frame, len) != 0;
        if (!p->sent) {
                p->rv = BATON_ENOMEM;
        }
}

static void on_frame(void *data, const struct proto_header *h,
                     const uint8_t *body, int64_t now)
{
        struct probe *p = data;
        struct proto_status ps;
        struct proto_versions pv;

        (void)now;
        if (h->type == PROTO_ERROR) {
                struct proto_string msg;
                int status = BATON_EMALFORMED;
                proto_read_error(body, h->length, &status, &msg);
                p->rv = status < 0 ? status : BATON_EMALFORMED;
                return;
        }
        if (h->type == PROTO_RESULT) {
                /* A refusal (BATON_EPERM: the identity's role allows no
                 * STATUS) answers the probe at once. */
                struct proto_result res;
                p->rv = proto_read_result(body, h->length, 0, &res) == 0 &&
                                res.status < 0
                            ? res.status
                            : BATON_EMALFORMED;
                return;
        }
        if (h->type != PROTO_STATUS_REPLY) {
                return;
        }
        if (proto_read_status(body, h->length, h->flags, &ps, &pv) != 0) {
                p->rv = BATON_EMALFORMED;
                return;
        }
        proto_status_export(p->out, p->endpoint, &ps);
        if (p->ver != NULL) {
                proto_versions_export(p->ver, h->version,
                                      h->flags & PROTO_FLAG_VERSIONS ? &pv
                                                                     : NULL);
        }
        if (p->alarms != NULL) {
                proto_alarms_export(p->alarms, h->flags & PROTO_FLAG_ALARMS
                                                   ? &ps.alarms
                                                   : NULL);
        }
        p->rv = 0;
}

/* One attempt only: a connection that fails or closes ends the probe,
 * with what the link recorded of its one endpoint (a status shows a node
 * that is down at once, without the second a call gives nodes that are
 * starting). */
static void on_closed(void *data, uint64_t gen)
{
        struct probe *p = data;
        const struct reach_endpoint *e = &p->link.reach.ends[0];

        (void)gen;
        if (p->rv != 1) {
                return;
        }
        if (e->outcome == REACH_REFUSED || e->outcome == REACH_NOT_LISTENING) {
                p->rv = e->tls ? BATON_ETLS : BATON_ECONNECT;
        } else {
                p->rv = BATON_EIO;
        }
}

static int probe(const char *endpoint, struct tls_ctx *tls, int64_t deadline,
                 struct baton_status *out, struct baton_node_version *ver,
                 struct baton_node_alarms *alarms)
{
        static const struct link_cb cb0 = {NULL, on_connected, on_frame,
                                           on_closed, NULL};
        char endpoints[1][LINK_ADDR_MAX];
        struct address a;
        struct link_cb cb = cb0;
        struct probe p;
        int rv;

        if (address_parse(endpoint, &a) != 0) {
                return BATON_EINVAL;
        }
        snprintf(endpoints[0], sizeof endpoints[0], "%s", endpoint);
        memset(&p, 0, sizeof p);
        p.endpoint = endpoint;
        p.out = out;
        p.ver = ver;
        p.alarms = alarms;
        p.rv = 1;
        rv = link_init(&p.link, (const char(*)[LINK_ADDR_MAX])endpoints, 1,
                       clock_env());
        if (rv != 0) {
                return rv;
        }
        rv = linkio_init(&p.io, &p.link, tls);
        if (rv != 0) {
                link_close(&p.link);
                return rv;
        }
        cb.data = &p;
        link_listen(&p.link, &cb);
        drive_link(&p.io, &p.rv, deadline, NULL, NULL, NULL);
        rv = p.rv;
        if (rv == BATON_ECONNECT || rv == BATON_ETLS || rv == BATON_EIO) {
                /* The node's own reason, for its line in a status. */
                errmsg_set(rv, "%s%s: %s",
                           rv == BATON_EIO ? "" : "cannot connect to ",
                           endpoint, p.link.reach.ends[0].why);
        }
        linkio_close(&p.io);
        link_close(&p.link);
        return rv;
}

int probe_status(const char *endpoint, struct tls_ctx *tls, int64_t deadline,
                 struct baton_status *out)
{
        return probe(endpoint, tls, deadline, out, NULL, NULL);
}

int probe_status_version(const char *endpoint, struct tls_ctx *tls,
                         int64_t deadline, struct baton_status *out,
                         struct baton_node_version *ver)
{
        int rv = probe(endpoint, tls, deadline, out, ver, NULL);

        if (rv == BATON_EMALFORMED) {
                /* A node before 0.2.0 refuses the flag, then closes: ask
                 * it the plain question on a new connection. */
                rv = probe(endpoint, tls, deadline, out, NULL, NULL);
                memset(ver, 0, sizeof *ver);
                ver->protocol = PROTO_VERSION;
        }
        return rv;
}

int probe_status_alarms(const char *endpoint, struct tls_ctx *tls,
                        int64_t deadline, struct baton_status *out,
                        struct baton_node_version *ver,
                        struct baton_node_alarms *alarms)
{
        int rv = probe(endpoint, tls, deadline, out, ver, alarms);

        if (rv == BATON_EMALFORMED) {
                /* A node before 0.3.0 refuses the alarms flag, then
                 * closes: ask it for its versions alone. */
                memset(alarms, 0, sizeof *alarms);
                rv = probe_status_version(endpoint, tls, deadline, out, ver);
        }
        return rv;
}
