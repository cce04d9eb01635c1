/* Clients' sessions kept alive at the request core of the node they
 * believe leads. */
#include "leases.h"

#include <inttypes.h>
#include <openssl/evp.h>
#include <string.h>

#include "../../src/proto/attach.h"
#include "../../src/proto/keepalive.h"
#include "../../src/proto/reply.h"
#include "simpath.h"

void leases_open(struct sim *s, struct client *cl, struct command *cmd)
{
        unsigned len = 0;

        /* One secret for all the client's sessions: the proposals of its
         * earlier OPENs, which the checker encodes again, point at its
         * hash. */
        for (unsigned b = 0; b < sizeof cl->secret && !cl->keyed; b++) {
                cl->secret[b] = (uint8_t)rng_next(&s->rng);
        }
        if (!cl->keyed) {
                EVP_Digest(cl->secret, sizeof cl->secret, cl->hash, &len,
                           EVP_sha256(), NULL);
                cl->keyed = true;
        }
        cl->ttl_ms = rng_range(&s->rng, 2000, 6000);
        cmd->ttl_ms = cl->ttl_ms;
        cmd->hash = cl->hash;
}

/* The answers are the core's business (a session it expired shows in the
 * client's next answer), but for NOT_LEADER, which names the node the
 * client then believes leads. */
static void drain(struct sim *s, struct client *cl)
{
        struct proto_header hdr;
        const uint8_t *body;

        while (cl->ka_conn != NULL && simpath_next(cl->ka_conn, &hdr, &body)) {
                if (hdr.type == PROTO_NOT_LEADER) {
                        sim_leader_named(body, hdr.length, s->n, &cl->node);
                }
        }
}

/* A connection to node `l` attached to the client's session. */
static bool attached(struct sim *s, struct client *cl, unsigned l)
{
        uint8_t frame[PROTO_HEADER_SIZE + ATTACH_BODY_SIZE];
        size_t n;

        if (cl->ka_conn != NULL &&
            (simpath_closed(cl->ka_conn) || cl->ka_node != l ||
             cl->ka_session != cl->session)) {
                simpath_disconnect(cl->ka_conn);
                cl->ka_conn = NULL;
        }
        if (cl->ka_conn != NULL) {
                return true;
        }
        cl->ka_conn = simpath_connect(s->path, cl->id + 1, l);
        if (cl->ka_conn == NULL) {
                return false;
        }
        cl->ka_node = l;
        cl->ka_session = cl->session;
        n = attach_write(frame, sizeof frame, ++cl->ka_id, cl->session,
                         cl->secret);
        simpath_send(cl->ka_conn, frame, n);
        return true;
}

void leases_drive(struct sim *s, struct client *cl, raft_time now)
{
        uint8_t frame[PROTO_HEADER_SIZE + 16];
        unsigned l;
        size_t n;

        drain(s, cl);
        if (cl->session == 0 || now < cl->ka_next) {
                return;
        }
        cl->ka_next = now + cl->ttl_ms / 3;
        if (now < cl->quiet_until) {
                return;
        }
        if (rng_chance(&s->rng, 10)) {
                cl->quiet_until = now + cl->ttl_ms * 3 / 2;
                say(s, "client %u: silent until t=%" PRIu64, cl->id,
                    (uint64_t)cl->quiet_until);
                return;
        }
        l = cl->node;
        if (!attached(s, cl, l)) {
                return;
        }
        n = proto_write_keepalive(frame, sizeof frame, ++cl->ka_id, 0,
                                  cl->session);
        simpath_send(cl->ka_conn, frame, n);
        s->keepalives++;
}

void leases_close(struct sim *s)
{
        for (unsigned i = 0; i < s->n_clients; i++) {
                simpath_disconnect(s->clients[i].ka_conn);
                s->clients[i].ka_conn = NULL;
        }
}
