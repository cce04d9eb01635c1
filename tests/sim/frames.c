/* test_sim's clients' requests as frames to the core they believe leads. */
#include "frames.h"

#include <inttypes.h>
#include <string.h>

#include "../../include/baton.h"
#include "../../src/proto/attach.h"
#include "../../src/proto/query.h"
#include "simpath.h"

#define SILENCE_MS      1500 /* a request not waiting for a lock */
#define WAIT_SILENCE_MS 2000 /* past a wait's own time */
#define FOREVER_MS      8000 /* a wait with no time of its own */
#define RESEND_MS       20
#define DOWN_MS         50 /* before trying the next node */

/* The client's requests by number: 0 the one it waits on, then its waits;
 * NULL past them. */
static struct outreq *out_at(struct client *cl, unsigned i)
{
        return i == 0 ? &cl->req : i <= cl->n_waits ? &cl->waits[i - 1] : NULL;
}

void frames_move(struct outreq *dst, const struct outreq *src)
{
        if (dst == src) {
                return;
        }
        *dst = *src;
        if (dst->cmd.list_len > 0) {
                dst->cmd.list = dst->list;
        }
}

static void encode(struct outreq *o)
{
        uint8_t buf[COMMAND_ANY_MAX_SIZE];
        const struct command *c = &o->cmd;
        size_t n;

        if (c->type == COMMAND_QUERY) {
                o->len = proto_write_query(o->frame, sizeof o->frame, o->id, 0,
                                           c->name, c->name_len);
        } else if (c->type == COMMAND_CHECK) {
                o->len = proto_write_check(o->frame, sizeof o->frame, o->id,
                                           c->name, c->name_len, c->token);
        } else {
                n = command_encode(c, buf, sizeof buf);
                o->len = n == 0 ? 0
                                : proto_write_command(o->frame, sizeof o->frame,
                                                      o->id, buf, n);
        }
}

/* A connection to the node the client believes leads, attached to its
 * session; false when the node is down (the next one is tried later). */
static bool connected(struct sim *s, struct client *cl, uint64_t session)
{
        uint8_t frame[PROTO_HEADER_SIZE + ATTACH_BODY_SIZE];
        size_t n;

        if (cl->conn == NULL) {
                cl->conn = simpath_connect(s->path, cl->id + 1, cl->node);
                cl->conn_session = 0;
        }
        if (cl->conn == NULL) {
                cl->node = (cl->node + 1) % s->n;
                return false;
        }
        if (session != 0 && session != cl->conn_session) {
                n = attach_write(frame, sizeof frame, ++cl->next_id, session,
                                 cl->secret);
                simpath_send(cl->conn, frame, n);
                cl->conn_session = session;
        }
        return true;
}

static void send_out(struct sim *s, struct client *cl, struct outreq *o,
                     raft_time now)
{
        if (!connected(s, cl, o->cmd.session)) {
                o->resend_at = now + DOWN_MS;
                return;
        }
        if (o->sends++ > 0) {
                s->resends++;
        }
        o->sent_at = now;
        o->resend_at = 0;
        simpath_send(cl->conn, o->frame, o->len);
}

void frames_start(struct sim *s, struct client *cl, struct outreq *o,
                  const struct command *cmd)
{
        o->busy = true;
        o->sends = 0;
        o->sent_at = 0;
        o->resend_at = 0;
        o->cmd = *cmd;
        if (cmd->list_len > 0) {
                memmove(o->list, cmd->list, cmd->list_len);
                o->cmd.list = o->list;
        }
        o->id = ++cl->next_id;
        encode(o);
        s->requests++;
        send_out(s, cl, o, simcluster_now(&s->c));
}

void frames_resend(struct sim *s, struct client *cl, struct outreq *o)
{
        send_out(s, cl, o, simcluster_now(&s->c));
}

void frames_close(struct client *cl)
{
        simpath_disconnect(cl->conn);
        cl->conn = NULL;
}

/* The connection is gone or given up: everything out goes again soon, on
 * a new one to cl->node. */
static void hang_up(struct client *cl, raft_time now)
{
        struct outreq *o;

        frames_close(cl);
        for (unsigned i = 0; (o = out_at(cl, i)) != NULL; i++) {
                if (o->busy && o->resend_at == 0) {
                        o->resend_at = now + RESEND_MS;
                }
        }
}

/* After NOT_LEADER: the node it names, else one drawn. */
static void redirect(struct sim *s, struct client *cl, const uint8_t *body,
                     size_t len, raft_time now)
{
        s->redirects++;
        if (!sim_leader_named(body, len, s->n, &cl->node)) {
                cl->node = rng_below(&s->rng, s->n);
        }
        hang_up(cl, now);
}

/* Whether `status` only says the request's fate is not known here yet. */
static bool again(int status)
{
        return status == BATON_EUNKNOWN || status == BATON_EUNAVAILABLE ||
               status == BATON_ESHUTDOWN || status == BATON_ENOTREADY;
}

/* One frame for the client: true when it is request *o's final answer. */
static bool on_frame(struct sim *s, struct client *cl,
                     const struct proto_header *hdr, const uint8_t *body,
                     raft_time now, struct outreq **o, struct proto_result *res)
{
        struct outreq *x = NULL;

        for (unsigned i = 0; (x = out_at(cl, i)) != NULL; i++) {
                if (x->busy && x->id == hdr->id) {
                        break;
                }
        }
        if (x == NULL) {
                return false; /* an ATTACH's, or a request settled */
        }
        if (hdr->type == PROTO_NOT_LEADER) {
                if (x->resend_at == 0) {
                        redirect(s, cl, body, hdr->length, now);
                }
                return false;
        }
        if (hdr->type != PROTO_RESULT ||
            proto_read_result(body, hdr->length, hdr->flags, res) != 0) {
                /* An ERROR: the connection closes. */
                x->resend_at = x->resend_at != 0 ? x->resend_at : now;
                return false;
        }
        res->client_name.p = NULL;
        res->client_name.len = 0;
        if (again(res->status)) {
                s->unknowns += res->status == BATON_EUNKNOWN;
                x->resend_at =
                    x->resend_at != 0 ? x->resend_at : now + RESEND_MS;
                return false;
        }
        *o = x;
        return true;
}

/* How long a request may go unanswered before it is sent elsewhere. */
static raft_time silence_ms(const struct command *c)
{
        if ((c->type != COMMAND_ACQUIRE && c->type != COMMAND_MULTI) ||
            c->wait_ms == COMMAND_WAIT_TRY) {
                return SILENCE_MS;
        }
        return c->wait_ms == COMMAND_WAIT_FOREVER
                   ? FOREVER_MS
                   : c->wait_ms + WAIT_SILENCE_MS;
}

/* A closed connection, or a request unanswered too long: everything out
 * again on a new connection; then what is due goes. */
static void resend_due(struct sim *s, struct client *cl, raft_time now)
{
        struct outreq *o;
        unsigned i;

        if (cl->conn != NULL && simpath_closed(cl->conn)) {
                s->cuts++;
                cl->node = (cl->node + 1) % s->n;
                hang_up(cl, now);
        }
        for (i = 0; (o = out_at(cl, i)) != NULL; i++) {
                if (o->busy && o->resend_at == 0 &&
                    now > o->sent_at + silence_ms(&o->cmd)) {
                        say(s, "client %u: request %" PRIu64 " unanswered",
                            cl->id, o->id);
                        cl->node = rng_below(&s->rng, s->n);
                        hang_up(cl, now);
                        break;
                }
        }
        for (i = 0; (o = out_at(cl, i)) != NULL; i++) {
                if (o->busy && o->resend_at != 0 && now >= o->resend_at) {
                        send_out(s, cl, o, now);
                }
        }
}

bool frames_next(struct sim *s, struct client *cl, raft_time now,
                 struct outreq **o, struct proto_result *res)
{
        struct proto_header hdr;
        const uint8_t *body;

        while (cl->conn != NULL && simpath_next(cl->conn, &hdr, &body)) {
                if (on_frame(s, cl, &hdr, body, now, o, res)) {
                        return true;
                }
        }
        resend_due(s, cl, now);
        return false;
}
