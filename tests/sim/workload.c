/* The simulated workload: clients, and what an operator asks for. */
#include "workload.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../include/baton.h"
#include "../../src/proto/reply.h"
#include "../lib/simformat.h"
#include "answers.h"
#include "frames.h"
#include "leases.h"
#include "simpath.h"

/* The operator's id on the network: no client's (theirs are 1 to
 * MAX_CLIENTS). */
#define OPERATOR_ID 100

const char *const lock_names[N_NAMES] = {
    "alpha",
    "beta",
    "gamma",
    "a-long-lock-name/"
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
    "0123456789abcdef0123456789abcdef0123456789abcd",
    "pool",
    "leader",
};

/* What a candidate or a leader of the election advertises. */
static const char *const values[] = {"", "10.0.0.1:7100", "n2"};

static void pick_value(struct rng *r, struct command *cmd)
{
        cmd->value = values[rng_below(r, 3)];
        cmd->value_len = (uint8_t)strlen(cmd->value);
}

/* ------------------------------------------------------------------------
 * Clients
 */

static int name_index(const char *name, size_t len)
{
        int i;

        for (i = 0; i < N_NAMES; i++) {
                if (strlen(lock_names[i]) == len &&
                    memcmp(lock_names[i], name, len) == 0) {
                        return i;
                }
        }
        return -1;
}

/* The client's view ends with its session: its grants, its waits and
 * the request it waits on (an answer still to come is not followed). */
static void client_reset(struct client *cl)
{
        cl->session = 0;
        cl->n_held = 0;
        cl->n_waits = 0;
        cl->req.busy = false;
}

/* The client's grant of `name` to `owner` in `mode`, or with `token` when
 * `mode` is -1. */
static struct held *find_held(struct client *cl, unsigned name, uint64_t owner,
                              int mode, uint64_t token)
{
        unsigned i;

        for (i = 0; i < cl->n_held; i++) {
                struct held *h = &cl->held[i];
                if (h->name == name && h->owner == owner &&
                    (mode < 0 ? h->token == token : h->mode == mode)) {
                        return h;
                }
        }
        return NULL;
}

static void drop_held(struct client *cl, struct held *h)
{
        *h = cl->held[--cl->n_held];
}

static void drop_wait(struct client *cl, struct outreq *w)
{
        frames_move(w, &cl->waits[--cl->n_waits]);
}

/* Name `cmd`, a CANCEL or TIMEOUT of wait `w`, after the wait's lock, or
 * after any one of a MULTI's locks, each of which names the whole wait. */
static void name_wait(struct rng *r, const struct outreq *w,
                      struct command *cmd)
{
        const char *name = w->cmd.name;
        uint8_t len = w->cmd.name_len;
        uint8_t mode;
        size_t at = 0;
        int i;

        if (w->cmd.type == COMMAND_MULTI) {
                unsigned k = rng_below(r, w->cmd.n_names);

                do {
                        command_list_next(&w->cmd, &at, &mode, &name, &len);
                } while (k-- > 0);
        }
        /* The static name, which outlives the wait (a retry re-encodes
         * the command after the wait may be gone). */
        i = name_index(name, len);
        cmd->name = i >= 0 ? lock_names[i] : name;
        cmd->name_len = len;
}

static void add_held(struct client *cl, unsigned name, uint64_t owner,
                     uint8_t mode, uint64_t token, uint32_t count)
{
        struct held *h = find_held(cl, name, owner, mode, 0);

        if (h == NULL) {
                if (cl->n_held == MAX_HELD) {
                        return;
                }
                h = &cl->held[cl->n_held++];
        }
        h->name = name;
        h->owner = owner;
        h->mode = mode;
        h->token = token;
        h->count = count;
        cl->last_token[name] = token;
}

/* Every name that `cmd`, an ACQUIRE or a MULTI, asked for is held with
 * `token`, each in its own mode. */
static void add_held_all(struct client *cl, const struct command *cmd,
                         uint64_t token)
{
        const char *name = cmd->name;
        uint8_t len = cmd->name_len;
        uint8_t mode = cmd->mode;
        size_t at = 0;
        int i;

        while (cmd->type == COMMAND_MULTI
                   ? command_list_next(cmd, &at, &mode, &name, &len)
                   : at++ == 0) {
                i = name_index(name, len);
                if (i >= 0) {
                        add_held(cl, (unsigned)i, cmd->owner, mode, token, 1);
                }
        }
}

/* The final answer to an ACQUIRE or a MULTI of lock `name` (a MULTI's
 * first): granted now or after waiting, or reentered. */
static void acquire_outcome(struct client *cl, const struct command *cmd,
                            const struct proto_result *res, unsigned name)
{
        if (res->status != 0) {
                return;
        }
        if (res->kind == PROTO_KIND_GRANTED) {
                add_held_all(cl, cmd, res->token);
        } else if (res->kind == PROTO_KIND_REENTERED) {
                add_held(cl, name, cmd->owner, cmd->mode, res->token,
                         res->count);
        }
}

/* Update the client's view from the final answer to its request. */
static void client_outcome(struct client *cl, const struct command *cmd,
                           const struct proto_result *res)
{
        int name =
            cmd->name_len > 0 ? name_index(cmd->name, cmd->name_len) : -1;
        struct held *h;

        if (cmd->type == COMMAND_OPEN) {
                if (res->kind == PROTO_KIND_OPENED) {
                        client_reset(cl);
                        cl->session = res->session;
                        cl->next_seq = 1;
                }
                return;
        }
        if (cmd->session != cl->session) {
                return; /* answered for a session the client left */
        }
        if (res->status == BATON_EEXPIRED || res->status == BATON_ECLOSED ||
            res->status == BATON_ENOSESSION) {
                client_reset(cl);
                return;
        }
        switch (cmd->type) {
        case COMMAND_ACQUIRE:
        case COMMAND_MULTI:
                if (name >= 0) {
                        acquire_outcome(cl, cmd, res, (unsigned)name);
                }
                break;
        case COMMAND_RELEASE:
                if (name < 0) {
                        return;
                }
                h = find_held(cl, (unsigned)name, cmd->owner, -1, cmd->token);
                if (h == NULL) {
                        return;
                }
                if (res->kind == PROTO_KIND_RELEASED) {
                        h->count = res->count;
                        if (res->count == 0) {
                                drop_held(cl, h);
                        }
                } else if (res->status == BATON_ENOTHOLDER) {
                        drop_held(cl, h);
                }
                break;
        case COMMAND_CLOSE:
                if (res->kind == PROTO_KIND_CLOSED) {
                        client_reset(cl);
                }
                break;
        default:
                break;
        }
}

/* The smallest seq whose final answer the client does not have yet: a
 * queued ACQUIRE is not final until granted or gone. */
static uint64_t client_ack(const struct client *cl, uint64_t seq)
{
        uint64_t ack = seq;
        unsigned i;

        for (i = 0; i < cl->n_waits; i++) {
                if (cl->waits[i].cmd.seq < ack) {
                        ack = cl->waits[i].cmd.seq;
                }
        }
        return ack;
}

/* Send `cmd`: an ACQUIRE or MULTI that may wait goes among the client's
 * waits, which it does not wait on (unless they are full); anything else
 * is the request it waits on before its next. */
static void client_start(struct sim *s, struct client *cl,
                         const struct command *cmd)
{
        bool waits =
            (cmd->type == COMMAND_ACQUIRE || cmd->type == COMMAND_MULTI) &&
            cmd->wait_ms != COMMAND_WAIT_TRY && cl->n_waits < MAX_WAITS;
        struct outreq *o = waits ? &cl->waits[cl->n_waits++] : &cl->req;
        char text[200];

        if (s->verbose) {
                simformat_command(text, sizeof text, cmd);
                say(s, "client %u: %s", cl->id, text);
        }
        frames_start(s, cl, o, cmd);
}

/* The final answer `res` to the client's request `o`. */
static void client_answered(struct sim *s, struct client *cl, struct outreq *o,
                            const struct proto_result *res)
{
        char text[200];

        if (s->verbose) {
                simformat_command(text, sizeof text, &o->cmd);
                say(s,
                    "client %u: %s: %s kind %u token %" PRIu64 " at %" PRIu64,
                    cl->id, text, baton_errname(res->status), res->kind,
                    res->token, res->index);
        }
        answers_add(s, cl, &o->cmd, res);
        o->busy = false;
        client_outcome(cl, &o->cmd, res);
        if (o != &cl->req && o < cl->waits + cl->n_waits) {
                drop_wait(cl, o);
        }
}

/* An ACQUIRE's kind: the semaphore's permits (now and then naming
 * another number of them), a candidate of the election with a value, else
 * a writer or a reader. */
static void pick_mode(struct rng *r, unsigned name, struct command *cmd)
{
        if (name == ELECT_NAME) {
                cmd->mode = COMMAND_MODE_ELECTION;
                pick_value(r, cmd);
                return;
        }
        if (name == SEM_NAME) {
                cmd->mode = COMMAND_MODE_SEMAPHORE;
                cmd->limit = rng_chance(r, 5) ? SEM_LIMIT - 1 : SEM_LIMIT;
                cmd->permits = rng_range(r, 1, 2);
                if (rng_chance(r, 25)) {
                        pick_value(r, cmd); /* a permit's data */
                }
                return;
        }
        cmd->mode =
            rng_chance(r, 35) ? COMMAND_MODE_SHARED : COMMAND_MODE_EXCLUSIVE;
        if (rng_chance(r, 25)) {
                pick_value(r, cmd); /* a grant's data (version 4) */
        }
        if (rng_chance(r, 15)) {
                /* A hold time (version 4): the leader ends the grant when
                 * it runs out, unless an EXTEND restarts it. */
                cmd->hold_ms = (uint32_t)rng_range(r, 50, 3000);
        }
}

/* A MULTI in `cmd` (its list in `list`, SIM_LIST_MAX bytes) of 2 to
 * SIM_MULTI_NAMES distinct names, now and then one more (too many names);
 * writers and readers, and now and then a semaphore's mode, which no
 * multi-lock takes, or the semaphore's name among them. */
static void pick_multi(struct rng *r, struct command *cmd, uint8_t *list)
{
        unsigned idx[N_NAMES];
        unsigned names = rng_chance(r, 10) ? N_NAMES : SEM_NAME;
        unsigned n =
            rng_chance(r, 4) ? SIM_MULTI_MAX : rng_range(r, 2, SIM_MULTI_NAMES);
        size_t len = 0;
        unsigned i;

        for (i = 0; i < N_NAMES; i++) {
                idx[i] = i;
        }
        for (i = 0; i < n; i++) {
                unsigned j = i + rng_below(r, names - i);
                unsigned name = idx[j];
                uint8_t mode = rng_chance(r, 35) ? COMMAND_MODE_SHARED
                                                 : COMMAND_MODE_EXCLUSIVE;

                idx[j] = idx[i];
                idx[i] = name;
                if (rng_chance(r, 2)) {
                        mode = COMMAND_MODE_SEMAPHORE;
                }
                command_list_add(list, SIM_LIST_MAX, &len, mode,
                                 lock_names[name], strlen(lock_names[name]));
        }
        cmd->type = COMMAND_MULTI;
        cmd->mode = 0;
        cmd->list = list;
        cmd->list_len = (uint16_t)len;
        cmd->n_names = (uint8_t)n;
        /* Not encoded: what a decoded MULTI says, its first name. */
        cmd->name = lock_names[idx[0]];
        cmd->name_len = (uint8_t)strlen(lock_names[idx[0]]);
}

/* An ACQUIRE of lock `name` in `cmd`, a `try` or one that waits; one in
 * ten a MULTI instead, its list in `list` (true). */
static bool pick_acquire(struct rng *r, struct command *cmd, unsigned name,
                         bool try, uint8_t *list)
{
        cmd->type = COMMAND_ACQUIRE;
        cmd->owner = rng_range(r, 1, 2);
        cmd->wait_ms = try                 ? COMMAND_WAIT_TRY
                       : rng_chance(r, 20) ? COMMAND_WAIT_FOREVER
                                           : rng_range(r, 200, 4000);
        if (rng_chance(r, 10)) {
                /* Owner 3 takes only multi-locks: fewer of them are
                 * refused for a name the owner holds. */
                cmd->owner = rng_range(r, 1, 3);
                pick_multi(r, cmd, list);
                return true;
        }
        pick_mode(r, name, cmd);
        return false;
}

/* An ACQUIRE in `cmd` of a grant the client holds, by its owner in its
 * mode: reentrant (a semaphore's: BATON_EHELD). Its lock's number. */
static unsigned pick_reentry(struct rng *r, struct client *cl,
                             struct command *cmd)
{
        struct held *h = &cl->held[rng_below(r, cl->n_held)];

        cmd->type = COMMAND_ACQUIRE;
        cmd->owner = h->owner;
        cmd->wait_ms = COMMAND_WAIT_TRY;
        pick_mode(r, h->name, cmd);
        cmd->mode = h->mode;
        if (cmd->mode != COMMAND_MODE_SEMAPHORE) {
                /* The semaphore's name, held as a lock: a MULTI took it
                 * while it was free. */
                cmd->permits = 0;
                cmd->limit = 0;
        }
        return h->name;
}

/* A client without a session opens one. */
static void client_open(struct sim *s, struct client *cl)
{
        static const char *const client_names[] = {
            "", "worker-1", "cron", "batch", "a",
        };
        const char *cn = client_names[cl->id % 5];
        struct command cmd;

        memset(&cmd, 0, sizeof cmd);
        cmd.type = COMMAND_OPEN;
        cl->nonce = rng_next(&s->rng) | 1;
        cmd.nonce = cl->nonce;
        leases_open(s, cl, &cmd);
        cmd.name = cn;
        cmd.name_len = (uint8_t)strlen(cn);
        client_start(s, cl, &cmd);
}

/* Pick the client's next request from its view of its session. */
static void client_next(struct sim *s, struct client *cl)
{
        struct rng *r = &s->rng;
        struct command cmd;
        uint8_t list[SIM_LIST_MAX];
        unsigned roll;
        unsigned name = rng_below(r, N_NAMES);

        memset(&cmd, 0, sizeof cmd);
        if (cl->session == 0) {
                client_open(s, cl);
                return;
        }
        cmd.session = cl->session;
        cmd.seq = cl->next_seq++;
        cmd.ack = client_ack(cl, cmd.seq);
        roll = rng_below(r, 100);
        if (roll < 50) {
                if (pick_acquire(r, &cmd, name, roll < 30, list)) {
                        client_start(s, cl, &cmd);
                        return;
                }
        } else if (roll < 72 && cl->n_held > 0) {
                struct held *h = &cl->held[rng_below(r, cl->n_held)];

                cmd.type = COMMAND_RELEASE;
                name = h->name;
                cmd.owner = h->owner;
                cmd.token = h->token;
                if (name == ELECT_NAME && rng_chance(r, 40)) {
                        /* The leader proclaims another value. */
                        cmd.type = COMMAND_PROCLAIM;
                        pick_value(r, &cmd);
                } else if (rng_chance(r, 20)) {
                        /* Any holder changes its grant's value. */
                        cmd.type = COMMAND_SET_VALUE;
                        pick_value(r, &cmd);
                } else if (rng_chance(r, 15)) {
                        /* Any holder restarts its hold time: refused
                         * (BATON_EINVAL) for a grant without one. */
                        cmd.type = COMMAND_EXTEND;
                        cmd.hold_ms = (uint32_t)rng_range(r, 50, 3000);
                }
                if (rng_chance(r, 20)) {
                        /* A stale token: an older grant's, or a made-up
                         * lower one. It must change nothing. */
                        cmd.token = h->token > 1 ? h->token - 1 : 0;
                }
        } else if (roll < 78) {
                cmd.type = COMMAND_RELEASE;
                cmd.owner = rng_range(r, 1, 2);
                cmd.token = cl->last_token[name];
        } else if (roll < 84 && cl->n_held > 0) {
                name = pick_reentry(r, cl, &cmd);
        } else if (roll < 89 && cl->n_waits > 0) {
                struct outreq *w = &cl->waits[rng_below(r, cl->n_waits)];

                cmd.type = COMMAND_CANCEL;
                cmd.target = w->cmd.seq;
                name_wait(r, w, &cmd);
                client_start(s, cl, &cmd);
                return;
        } else if (roll < 94 && cl->n_waits > 0) {
                /* Poll: send a wait again, byte for byte; its
                 * remembered outcome says where it stands. */
                cl->next_seq--;
                frames_resend(s, cl, &cl->waits[rng_below(r, cl->n_waits)]);
                return;
        } else if (roll < 97) {
                cmd.type = rng_chance(r, 50) ? COMMAND_QUERY : COMMAND_CHECK;
                cmd.token = cl->last_token[name];
                cmd.session = 0;
                cmd.seq = 0;
                cmd.ack = 0;
                cl->next_seq--;
        } else {
                cmd.type = COMMAND_CLOSE;
                client_start(s, cl, &cmd);
                return;
        }
        cmd.name = lock_names[name];
        cmd.name_len = (uint8_t)strlen(lock_names[name]);
        client_start(s, cl, &cmd);
}

void drive_client(struct sim *s, struct client *cl, raft_time now)
{
        struct proto_result res;
        struct outreq *o;

        while (frames_next(s, cl, now, &o, &res)) {
                client_answered(s, cl, o, &res);
        }
        if (cl->req.busy || now < cl->next_at) {
                return;
        }
        client_next(s, cl);
        cl->next_at = now + rng_range(&s->rng, 30, 250);
}

/* ------------------------------------------------------------------------
 * The operator: REVOKE and REVOKE_LOCK, sent as COMMAND frames to the
 * request core (tests/sim/simhost.h) of the node it believes leads
 * (following NOT_LEADER), whose serving core writes who
 * asked and its own lock-delay into them. The cores propose the EXPIREs
 * of sessions (kept alive by leases.h), the TIMEOUTs of waits, the
 * UNBLOCKs that end lock-delays and the CLOCK from their own deadlines.
 */

/* Read the answers the operator's connection got: a NOT_LEADER names the
 * node it believes leads from then on. */
static void operator_read(struct sim *s)
{
        struct proto_header hdr;
        struct proto_result res;
        const uint8_t *body;

        while (s->admin != NULL && simpath_next(s->admin, &hdr, &body)) {
                if (hdr.type == PROTO_RESULT &&
                    proto_read_result(body, hdr.length, hdr.flags, &res) == 0) {
                        s->revokes_answered++;
                        say(s, "operator: #%" PRIu64 " answered %d", hdr.id,
                            res.status);
                } else if (hdr.type == PROTO_NOT_LEADER) {
                        sim_leader_named(body, hdr.length, s->n,
                                         &s->admin_node);
                }
        }
}

/* Send `cmd` to the core of the node the operator believes leads, on a
 * new connection when the one it has is closed (then to the next node)
 * or to another node; it is not sent again. */
static void operator_send(struct sim *s, const struct command *cmd)
{
        uint8_t buf[COMMAND_ANY_MAX_SIZE];
        uint8_t frame[PROTO_HEADER_SIZE + COMMAND_ANY_MAX_SIZE];
        size_t n;

        if (s->admin != NULL && simpath_closed(s->admin)) {
                s->admin_node = (s->admin_node + 1) % s->n;
        }
        if (s->admin != NULL && (simpath_closed(s->admin) ||
                                 simpath_node(s->admin) != s->admin_node)) {
                simpath_disconnect(s->admin);
                s->admin = NULL;
        }
        if (s->admin == NULL) {
                s->admin = simpath_connect(s->path, OPERATOR_ID, s->admin_node);
        }
        if (s->admin == NULL) {
                say(s, "operator: n%u is down", s->admin_node);
                s->admin_node = (s->admin_node + 1) % s->n;
                return;
        }
        n = command_encode(cmd, buf, sizeof buf);
        n = proto_write_command(frame, sizeof frame, ++s->admin_id, buf, n);
        if (n == 0) {
                return;
        }
        s->revokes_sent++;
        if (s->verbose) {
                char text[200];

                simformat_command(text, sizeof text, cmd);
                say(s, "operator: #%" PRIu64 " to n%u: %s", s->admin_id,
                    s->admin_node, text);
        }
        simpath_send(s->admin, frame, n);
}

void drive_operator(struct sim *s, raft_time now)
{
        struct rng *r = &s->rng;
        struct command cmd;
        unsigned i;

        operator_read(s);
        if (now < s->next_server_at) {
                return;
        }
        s->next_server_at = now + rng_range(r, 500, 4000);
        i = rng_below(r, s->n_clients);
        memset(&cmd, 0, sizeof cmd);
        if (rng_chance(r, 40) && s->clients[i].n_held > 0) {
                /* An operator takes one grant away, its session living
                 * on; the client finds out when its RELEASE is refused. */
                const struct held *h =
                    &s->clients[i].held[rng_below(r, s->clients[i].n_held)];

                cmd.type = COMMAND_REVOKE_LOCK;
                cmd.session = s->clients[i].session;
                cmd.token = h->token;
                cmd.name = lock_names[h->name];
                cmd.name_len = (uint8_t)strlen(lock_names[h->name]);
                operator_send(s, &cmd);
                return;
        }
        /* Now and then an operator's REVOKE of a session, which ends it
         * as an expiry does and says who asked. */
        if (rng_chance(r, 30)) {
                cmd.type = COMMAND_REVOKE;
                cmd.session = s->clients[i].session != 0 ? s->clients[i].session
                                                         : rng_range(r, 1, 50);
                operator_send(s, &cmd);
        }
}

void operator_close(struct sim *s)
{
        simpath_disconnect(s->admin);
        s->admin = NULL;
}
