/* The simulated workload: clients and the leader's own proposals. */
#include "workload.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../include/baton.h"

#define CLIENT_TIMEOUT_MS 1500 /* a pending attempt is retried after this */

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
};

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

static void client_reset(struct client *cl)
{
        cl->session = 0;
        cl->n_held = 0;
        cl->n_waits = 0;
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

static struct wait *find_wait_seq(struct client *cl, uint64_t seq)
{
        unsigned i;

        for (i = 0; i < cl->n_waits; i++) {
                if (cl->waits[i].cmd.seq == seq) {
                        return &cl->waits[i];
                }
        }
        return NULL;
}

static void drop_wait(struct client *cl, struct wait *w)
{
        *w = cl->waits[--cl->n_waits];
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

/* A grant that the server learned from a GRANT event or from a poll. */
static void grant_waiter(struct client *cl, uint64_t seq, uint64_t token)
{
        struct wait *w = find_wait_seq(cl, seq);
        int name;

        if (w == NULL) {
                return;
        }
        name = name_index(w->cmd.name, w->cmd.name_len);
        if (name >= 0) {
                add_held(cl, (unsigned)name, w->cmd.owner, w->cmd.mode, token,
                         1);
        }
        drop_wait(cl, w);
}

static struct client *client_of_session(struct sim *s, uint64_t session)
{
        unsigned i;

        for (i = 0; i < s->n_clients; i++) {
                if (s->clients[i].session == session && session != 0) {
                        return &s->clients[i];
                }
        }
        return NULL;
}

/* The events a leader applies are what batond uses to answer clients that
 * wait: a GRANT to a queued ACQUIRE, a waiter leaving, a session ending. */
/* A lock's lock-delay began or ended, as the leader applied it. */
static void on_delay_event(struct sim *s, const struct simevent *ev)
{
        int name = name_index(ev->name, ev->name_len);
        unsigned i;

        for (i = 0; i < s->n_blocked; i++) {
                if (s->blocked[i].created == ev->seq) {
                        break;
                }
        }
        say(s, "lock-delay %s: '%.*s' (stamp %" PRIu64 ")",
            ev->type == LOCKFSM_EV_BLOCK ? "began" : "ended",
            ev->name_len > 24 ? 24 : (int)ev->name_len, ev->name, ev->seq);
        if (ev->type == LOCKFSM_EV_UNBLOCK && i < s->n_blocked) {
                s->blocked[i] = s->blocked[--s->n_blocked];
        } else if (ev->type == LOCKFSM_EV_BLOCK && i == s->n_blocked &&
                   name >= 0 && s->n_blocked < MAX_BLOCKED) {
                s->blocked[s->n_blocked].created = ev->seq;
                s->blocked[s->n_blocked].name = (unsigned)name;
                s->blocked[s->n_blocked++].at = 0;
        }
}

void on_leader_event(void *data, unsigned node, const struct simevent *ev)
{
        struct sim *s = data;
        struct client *cl = client_of_session(s, ev->session);

        (void)node;
        if (ev->type == LOCKFSM_EV_BLOCK || ev->type == LOCKFSM_EV_UNBLOCK) {
                on_delay_event(s, ev);
                return;
        }
        if (cl == NULL) {
                return;
        }
        switch (ev->type) {
        case LOCKFSM_EV_GRANT:
                if (find_wait_seq(cl, ev->seq) == NULL) {
                        return;
                }
                if (s->n_reports == s->cap_reports) {
                        size_t cap = s->cap_reports ? s->cap_reports * 2 : 64;
                        struct report *r = realloc(s->reports, cap * sizeof *r);
                        if (r == NULL) {
                                s->oom = true;
                                return;
                        }
                        s->reports = r;
                        s->cap_reports = cap;
                }
                s->reports[s->n_reports++] =
                    (struct report){ev->session, ev->seq, ev->token};
                say(s,
                    "client %u: reported grant s=%" PRIu64 " q=%" PRIu64
                    " tok=%" PRIu64,
                    cl->id, ev->session, ev->seq, ev->token);
                grant_waiter(cl, ev->seq, ev->token);
                break;
        case LOCKFSM_EV_UNQUEUE: {
                struct wait *w = find_wait_seq(cl, ev->seq);
                if (w != NULL) {
                        drop_wait(cl, w);
                }
                break;
        }
        case LOCKFSM_EV_END:
                client_reset(cl);
                break;
        default:
                break;
        }
}

/* Update the client's view from an acknowledged outcome of its request. */
static void client_outcome(struct client *cl, const struct command *cmd,
                           const struct lockfsm_result *res)
{
        int name =
            cmd->name_len > 0 ? name_index(cmd->name, cmd->name_len) : -1;
        struct held *h;
        struct wait *w;

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
                if (name < 0) {
                        return;
                }
                if (res->kind == PROTO_KIND_GRANTED) {
                        if (find_wait_seq(cl, cmd->seq) != NULL) {
                                grant_waiter(cl, cmd->seq, res->token);
                        } else {
                                add_held(cl, (unsigned)name, cmd->owner,
                                         cmd->mode, res->token, 1);
                        }
                } else if (res->kind == PROTO_KIND_REENTERED) {
                        add_held(cl, (unsigned)name, cmd->owner, cmd->mode,
                                 res->token, res->count);
                } else if (res->kind == PROTO_KIND_QUEUED) {
                        if (find_wait_seq(cl, cmd->seq) == NULL &&
                            cl->n_waits < MAX_WAITS) {
                                w = &cl->waits[cl->n_waits++];
                                w->cmd = *cmd;
                                w->since = 0;
                                w->timeout_sent = false;
                        }
                } else if (res->status == BATON_ETIMEDOUT ||
                           res->status == BATON_ECANCELLED) {
                        w = find_wait_seq(cl, cmd->seq);
                        if (w != NULL) {
                                drop_wait(cl, w);
                        }
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
        case COMMAND_CANCEL:
                if (res->kind == PROTO_KIND_CANCELLED) {
                        w = find_wait_seq(cl, cmd->target);
                        if (w != NULL) {
                                drop_wait(cl, w);
                        }
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

static bool same_request(const struct command *a, const struct command *b)
{
        if (a->type != b->type) {
                return false;
        }
        if (a->type == COMMAND_OPEN) {
                return a->nonce == b->nonce;
        }
        return a->session == b->session && a->seq == b->seq;
}

static void on_client_prop(struct simprop *p)
{
        struct client *cl = p->data;

        /* Unknown outcomes are retried from drive_client(). */
        if (p->state != SIMPROP_ACKED || !cl->busy ||
            !same_request(&cl->cmd, &p->cmd)) {
                return;
        }
        cl->busy = false;
        client_outcome(cl, &p->cmd, &p->result.res);
}

static void client_send(struct sim *s, struct client *cl)
{
        struct simprop *p = NULL;
        int rv;

        cl->attempts++;
        rv = simcluster_propose(&s->c, &cl->cmd, on_client_prop, cl, &p);
        cl->prop = rv == 0 ? p : NULL;
        cl->sent_at = simcluster_now(&s->c);
        if (rv != 0 && cl->attempts > 1) {
                say(s, "client %u: retry refused: %s", cl->id,
                    raft_strerror(rv));
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

static void client_start(struct sim *s, struct client *cl,
                         const struct command *cmd)
{
        char text[200];

        cl->cmd = *cmd;
        cl->busy = true;
        cl->attempts = 0;
        if (s->verbose) {
                simcluster_format_command(text, sizeof text, cmd);
                say(s, "client %u: %s", cl->id, text);
        }
        client_send(s, cl);
}

/* An ACQUIRE's kind: the semaphore's permits (now and then naming
 * another number of them), else a writer or a reader. */
static void pick_mode(struct rng *r, unsigned name, struct command *cmd)
{
        if (name == SEM_NAME) {
                cmd->mode = COMMAND_MODE_SEMAPHORE;
                cmd->limit = rng_chance(r, 5) ? SEM_LIMIT - 1 : SEM_LIMIT;
                cmd->permits = rng_range(r, 1, 2);
                return;
        }
        cmd->mode =
            rng_chance(r, 35) ? COMMAND_MODE_SHARED : COMMAND_MODE_EXCLUSIVE;
}

/* Pick the client's next request from its view of its session. */
static void client_next(struct sim *s, struct client *cl)
{
        struct rng *r = &s->rng;
        struct command cmd;
        unsigned roll;
        unsigned name = rng_below(r, N_NAMES);

        memset(&cmd, 0, sizeof cmd);
        if (cl->session == 0) {
                static const char *const client_names[] = {
                    "", "worker-1", "cron", "batch", "a",
                };
                const char *cn = client_names[cl->id % 5];

                cmd.type = COMMAND_OPEN;
                cl->nonce = rng_next(r) | 1;
                cmd.nonce = cl->nonce;
                cmd.ttl_ms = 60000;
                cmd.name = cn;
                cmd.name_len = (uint8_t)strlen(cn);
                client_start(s, cl, &cmd);
                return;
        }
        cmd.session = cl->session;
        cmd.seq = cl->next_seq++;
        cmd.ack = client_ack(cl, cmd.seq);
        roll = rng_below(r, 100);
        if (roll < 30) {
                cmd.type = COMMAND_ACQUIRE;
                cmd.owner = rng_range(r, 1, 2);
                cmd.wait_ms = COMMAND_WAIT_TRY;
                pick_mode(r, name, &cmd);
        } else if (roll < 50) {
                cmd.type = COMMAND_ACQUIRE;
                cmd.owner = rng_range(r, 1, 2);
                cmd.wait_ms = rng_chance(r, 20) ? COMMAND_WAIT_FOREVER
                                                : rng_range(r, 200, 4000);
                pick_mode(r, name, &cmd);
        } else if (roll < 72 && cl->n_held > 0) {
                struct held *h = &cl->held[rng_below(r, cl->n_held)];

                cmd.type = COMMAND_RELEASE;
                name = h->name;
                cmd.owner = h->owner;
                cmd.token = h->token;
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
                struct held *h = &cl->held[rng_below(r, cl->n_held)];

                cmd.type = COMMAND_ACQUIRE; /* reentrant; a semaphore's:
                                               BATON_EHELD */
                name = h->name;
                cmd.owner = h->owner;
                cmd.wait_ms = COMMAND_WAIT_TRY;
                pick_mode(r, name, &cmd);
                cmd.mode = h->mode;
        } else if (roll < 89 && cl->n_waits > 0) {
                struct wait *w = &cl->waits[rng_below(r, cl->n_waits)];

                cmd.type = COMMAND_CANCEL;
                cmd.target = w->cmd.seq;
                cmd.name = w->cmd.name;
                cmd.name_len = w->cmd.name_len;
                client_start(s, cl, &cmd);
                return;
        } else if (roll < 94 && cl->n_waits > 0) {
                /* Poll: retry the queued ACQUIRE itself, byte for byte;
                 * its remembered outcome says where it stands. */
                cl->next_seq--;
                client_start(s, cl, &cl->waits[rng_below(r, cl->n_waits)].cmd);
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
        if (now < cl->next_at) {
                return;
        }
        if (cl->busy) {
                /* No answer yet: retry the same bytes (same session and
                 * seq) when the attempt was refused, lost its leader, or
                 * has been pending too long. Exactly-once makes it safe. */
                bool retry = cl->prop == NULL ||
                             cl->prop->state == SIMPROP_UNKNOWN ||
                             cl->prop->state == SIMPROP_FAILED ||
                             (cl->prop->state == SIMPROP_PENDING &&
                              now - cl->sent_at > CLIENT_TIMEOUT_MS);
                if (retry) {
                        if (cl->prop != NULL) {
                                say(s, "client %u: retry #%u (%s)", cl->id,
                                    cl->prop->id,
                                    cl->prop->state == SIMPROP_PENDING
                                        ? "timed out"
                                        : "outcome unknown");
                        }
                        client_send(s, cl);
                }
                cl->next_at = now + rng_range(&s->rng, 20, 80);
                return;
        }
        client_next(s, cl);
        cl->next_at = now + rng_range(&s->rng, 30, 250);
}

/* ------------------------------------------------------------------------
 * The leader's own proposals: EXPIRE and TIMEOUT (and an operator's
 * REVOKE, which reaches the log the same way)
 */

static void server_propose(struct sim *s, const struct command *cmd)
{
        char text[200];
        int rv;

        rv = simcluster_propose(&s->c, cmd, NULL, NULL, NULL);
        if (s->verbose) {
                simcluster_format_command(text, sizeof text, cmd);
                say(s, "server: %s%s%s", text, rv != 0 ? ": refused, " : "",
                    rv != 0 ? raft_strerror(rv) : "");
        }
}

void drive_server(struct sim *s, raft_time now)
{
        struct rng *r = &s->rng;
        struct command cmd;
        unsigned i;
        unsigned k;

        /* Lock-delays: UNBLOCK once they have passed, again a while later
         * if that proposal was lost, as the leader's timers would. */
        for (i = 0; i < s->n_blocked; i++) {
                if (s->blocked[i].at == 0) {
                        s->blocked[i].at = now + SIM_LOCK_DELAY_MS;
                } else if (now >= s->blocked[i].at) {
                        memset(&cmd, 0, sizeof cmd);
                        cmd.type = COMMAND_UNBLOCK;
                        cmd.target = s->blocked[i].created;
                        cmd.name = lock_names[s->blocked[i].name];
                        cmd.name_len =
                            (uint8_t)strlen(lock_names[s->blocked[i].name]);
                        s->blocked[i].at = now + 4 * SIM_LOCK_DELAY_MS;
                        server_propose(s, &cmd);
                }
        }

        /* Waits whose time ran out get a TIMEOUT, as the leader's timers
         * would propose it. */
        for (i = 0; i < s->n_clients; i++) {
                struct client *cl = &s->clients[i];

                for (k = 0; k < cl->n_waits; k++) {
                        struct wait *w = &cl->waits[k];

                        if (w->since == 0) {
                                w->since = now;
                        }
                        if (w->timeout_sent ||
                            w->cmd.wait_ms == COMMAND_WAIT_FOREVER ||
                            now - w->since < w->cmd.wait_ms) {
                                continue;
                        }
                        memset(&cmd, 0, sizeof cmd);
                        cmd.type = COMMAND_TIMEOUT;
                        cmd.session = w->cmd.session;
                        cmd.target = w->cmd.seq;
                        cmd.name = w->cmd.name;
                        cmd.name_len = w->cmd.name_len;
                        w->timeout_sent = true;
                        server_propose(s, &cmd);
                }
        }
        if (now < s->next_server_at) {
                return;
        }
        s->next_server_at = now + rng_range(r, 500, 4000);
        i = rng_below(r, s->n_clients);
        memset(&cmd, 0, sizeof cmd);
        if (rng_chance(r, 60) && s->clients[i].n_waits > 0) {
                /* An early TIMEOUT, racing with a grant. */
                struct wait *w = &s->clients[i].waits[0];

                cmd.type = COMMAND_TIMEOUT;
                cmd.session = w->cmd.session;
                cmd.target = w->cmd.seq;
                cmd.name = w->cmd.name;
                cmd.name_len = w->cmd.name_len;
        } else {
                /* A session's expiry, or now and then an operator's REVOKE
                 * of it, which ends it alike and says who asked. */
                cmd.type = rng_chance(r, 30) ? COMMAND_REVOKE : COMMAND_EXPIRE;
                cmd.session = s->clients[i].session != 0 ? s->clients[i].session
                                                         : rng_range(r, 1, 50);
                /* Half of them with a lock-delay, which the leader writes
                 * in the entry. */
                cmd.delay_ms = rng_chance(r, 50) ? SIM_LOCK_DELAY_MS : 0;
                if (cmd.type == COMMAND_REVOKE) {
                        cmd.name = "sim-operator";
                        cmd.name_len = 12;
                }
        }
        server_propose(s, &cmd);
}
