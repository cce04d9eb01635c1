/* Seeded runs of batond's real request core on the simulated cluster
 * (tests/sim/simhost.h), with clients speaking the wire protocol and the
 * leader killed now and then, printing TAP. */
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/evp.h>

#include "../../include/baton.h"
#include "../../src/proto/attach.h"
#include "../../src/proto/command.h"
#include "../../src/proto/keepalive.h"
#include "../../src/proto/reply.h"
#include "../lib/simlinks.h"
#include "../../src/lib/hmap.h"
#include "checker.h"
#include "digest.h"
#include "hostrun.h"
#include "faults.h"
#include "sim.h"
#include "simhost.h"

/*
 * One seed = one run: 3 nodes on the fixture, each running batond's
 * request core (src/server/gateway/) through simhost, and 4 clients
 * (--stress: 10, with sessions of half the TTL) that talk to it in
 * frames as libbaton does: each OPENs a
 * session (its hash of a secret), proves it owns it on every new
 * connection (ATTACH), takes one of N_LOCKS exclusive locks (a try, or a
 * wait of up to 2 s), holds it a while, RELEASEs it, and keeps its
 * session alive (KEEPALIVE) all along; one release in ten, it stops dead
 * instead, holding the lock, and comes back later with a new session. A
 * client follows NOT_LEADER to the node it names, sends the same request
 * again (the same session and seq) after BATON_EUNKNOWN, a closed
 * connection or silence, and gives its session up when the cluster says
 * it ended.
 *
 * Every 2 to 5 virtual seconds the leader is killed, and revived 0.5 to
 * 2.5 s later with a fresh core (or, one time in four, cut off from the
 * other nodes for as long, so that it loses its leadership alive); with
 * --faults (the second half of the default run), test_sim's faults
 * (faults.c) strike instead, simhost dropping and starting cores as they
 * kill and revive nodes. After RUN_MS every node is up, the clients
 * finish what they asked, the cluster converges, and the run is checked:
 *
 *  - the replicas agree and raft behaved (check_replicas(): checks (a),
 *    (b), (b') and (g) of test_sim.c);
 *  - in the log node 0 applied, each lock has one holder at a time, and
 *    each grant's token is its entry's index, above the lock's last one;
 *  - every grant a client was told of is a GRANT event of the log, to
 *    its session and seq, at index == token; and every final answer a
 *    client was told is the outcome the log gave its request at the
 *    answer's index (the RESULT, GRANT or UNQUEUE event of its session
 *    and seq, an OPEN's by its nonce): the core routed each outcome in a
 *    batch to the request it belongs to (hostcheck.c);
 *  - no client is told its session ended, nor that it was granted a lock
 *    while another client holds it (or held it when it stopped dead),
 *    while that client's lease still runs: a client counts its lease
 *    from when it sent the OPEN or KEEPALIVE the cluster last
 *    acknowledged, plus the session's TTL, and stops counting a lock as
 *    held when it sends its RELEASE. (The leader's clocks must never
 *    expire a session earlier.)
 *
 * The default run also runs seed 1 twice: both must give the same digest
 * of the whole history (digest_run()) and of what the clients and
 * watchers were told.
 *
 * An operator (hostadmin.h) sends TRANSFERs and MEMBER_REMOVE / _ADD to
 * the leader all along, and checks each answer against the contract.
 *
 * Negative controls: --break ack, holder and answer break a run's record
 * before the checks of the log read it, transfer, member and refusal what
 * the operator checks against (the default run breaks seed 1 each way);
 * test_simhost_shortttl runs the same seeds on a core built with
 * BATON_CHAOS_BUG_SHORT_TTL (a new leader expires every session at once, the
 * bug batond-bug carries for the chaos suite), and test_simhost_watchskip on
 * one with BATON_CHAOS_BUG_WATCHSKIP (every 7th watch event numbered but never
 * sent, batond-watchskip's bug), and test_simhost_earlyack, _forget, _twice and
 * _skipdeadline on the deliberate bugs of hostrun.h's list; each passes when
 * the checks catch its bug in some seed.
 */

static const char *const break_names[N_BREAKS] = {
    "none", "ack", "holder", "answer", "transfer", "member", "refusal"};

/* ------------------------------------------------------------------------
 * Clients
 */

static void send_out(struct run *r, struct rclient *cl, struct out *o)
{
        raft_time now = simcluster_now(&r->s.c);

        if (cl->conn == NULL) {
                cl->conn = simhost_connect(&r->h, cl->node);
                cl->conn_no++;
                if (cl->conn != NULL && cl->session != 0) {
                        /* A new connection proves it owns the session
                         * first, as libbaton's does. */
                        uint8_t frame[PROTO_HEADER_SIZE + ATTACH_BODY_SIZE];
                        size_t n =
                            attach_write(frame, sizeof frame, ++cl->next_id,
                                         cl->session, cl->secret);
                        simhost_send(cl->conn, frame, n);
                }
        }
        if (cl->conn == NULL) {
                /* The node is down: try the next one a little later. */
                cl->node = (cl->node + 1) % r->s.n;
                o->resend_at = now + 50;
                return;
        }
        o->sent_at = now;
        o->resend_at = 0;
        if (o->sends++ == 0) {
                o->first_at = now;
        } else {
                r->resends++;
        }
        hostcheck_sent(cl, o->id);
        simhost_send(cl->conn, o->frame, o->len);
}

static void start_command(struct run *r, struct rclient *cl,
                          const struct command *cmd)
{
        uint8_t buf[COMMAND_ANY_MAX_SIZE];
        size_t n = command_encode(cmd, buf, sizeof buf);
        struct out *o = &cl->req;

        memset(o, 0, sizeof *o);
        o->busy = true;
        o->type = cmd->type;
        o->session = cmd->session;
        o->seq = cmd->seq;
        o->nonce = cmd->nonce;
        o->id = ++cl->next_id;
        o->len = proto_write_command(o->frame, sizeof o->frame, o->id, buf, n);
        send_out(r, cl, o);
}

static void start_keepalive(struct run *r, struct rclient *cl)
{
        struct out *o = &cl->ka;

        memset(o, 0, sizeof *o);
        o->busy = true;
        o->id = ++cl->next_id;
        o->len = proto_write_keepalive(o->frame, sizeof o->frame, o->id, 0,
                                       cl->session);
        send_out(r, cl, o);
}

static void open_session(struct run *r, struct rclient *cl)
{
        struct command c;

        memset(&c, 0, sizeof c);
        c.type = COMMAND_OPEN;
        c.ttl_ms = r->ttl_ms;
        c.nonce = cl->nonce;
        c.hash = cl->hash;
        start_command(r, cl, &c);
}

static void acquire(struct run *r, struct rclient *cl)
{
        struct command c;

        memset(&c, 0, sizeof c);
        cl->lock = rng_below(&r->s.rng, N_LOCKS);
        c.type = COMMAND_ACQUIRE;
        c.mode = COMMAND_MODE_EXCLUSIVE;
        c.session = cl->session;
        c.seq = cl->next_seq++;
        c.ack = c.seq;
        c.owner = 1;
        c.wait_ms = rng_chance(&r->s.rng, 30) ? COMMAND_WAIT_TRY
                                              : rng_range(&r->s.rng, 100, 2000);
        c.name = hostrun_locks[cl->lock];
        c.name_len = (uint8_t)strlen(c.name);
        start_command(r, cl, &c);
}

static void release(struct run *r, struct rclient *cl)
{
        struct command c;

        memset(&c, 0, sizeof c);
        c.type = COMMAND_RELEASE;
        c.session = cl->session;
        c.seq = cl->next_seq++;
        c.ack = c.seq;
        c.owner = 1;
        c.token = cl->token;
        c.name = hostrun_locks[cl->lock];
        c.name_len = (uint8_t)strlen(c.name);
        /* From here on the client no longer counts on the lock. */
        cl->held = false;
        start_command(r, cl, &c);
}

/* Whether `status` says the session is no more. */
static bool session_gone(int status)
{
        return status == BATON_ENOSESSION || status == BATON_EEXPIRED ||
               status == BATON_ECLOSED;
}

/* The cluster says the session ended: it may not before the lease it
 * acknowledged ran out. Then a new one. */
static void lose_session(struct run *r, struct rclient *cl)
{
        raft_time now = simcluster_now(&r->s.c);

        if (now < cl->lease_until && r->clash[0] == '\0') {
                snprintf(r->clash, sizeof r->clash,
                         "t=%" PRIu64 ": client %u told its session %" PRIu64
                         " ended, with its lease running until t=%" PRIu64,
                         (uint64_t)now, cl->id, cl->session,
                         (uint64_t)cl->lease_until);
        }
        cl->session = 0;
        cl->held = false;
        cl->req.busy = false;
        cl->ka.busy = false;
        cl->nonce = rng_next(&r->s.rng) | 1;
        r->expired++;
}

/* Another client is told it holds `lock`: nobody else's lease may run. */
static void check_lease(struct run *r, struct rclient *cl, raft_time now)
{
        unsigned i;

        for (i = 0; i < r->n_ghosts && r->clash[0] == '\0'; i++) {
                const struct ghost *g = &r->ghosts[i];

                if (g->lock == cl->lock && g->lease_until > now) {
                        snprintf(r->clash, sizeof r->clash,
                                 "t=%" PRIu64 ": client %u granted %s (token "
                                 "%" PRIu64 ") while crashed client %u's lease "
                                 "on it (token %" PRIu64
                                 ") runs until t=%" PRIu64,
                                 (uint64_t)now, cl->id, hostrun_locks[cl->lock],
                                 cl->token, g->client, g->token,
                                 (uint64_t)g->lease_until);
                }
        }

        for (i = 0; i < r->n_clients; i++) {
                struct rclient *o = &r->cl[i];

                if (o == cl || !o->held || o->lock != cl->lock ||
                    o->lease_until <= now || r->clash[0] != '\0') {
                        continue;
                }
                snprintf(r->clash, sizeof r->clash,
                         "t=%" PRIu64 ": client %u granted %s (token %" PRIu64
                         ") while client %u holds it (token %" PRIu64
                         ") with its lease running until t=%" PRIu64,
                         (uint64_t)now, cl->id, hostrun_locks[cl->lock],
                         cl->token, o->id, o->token, (uint64_t)o->lease_until);
        }
}

static void on_result(struct run *r, struct rclient *cl,
                      const struct proto_result *res, raft_time now)
{
        uint8_t type = cl->req.type;

        cl->req.busy = false;
        if (r->n_answers < MAX_ANSWERS) {
                struct answer *a = &r->answers[r->n_answers++];

                a->type = type;
                a->session = cl->req.session;
                a->seq = cl->req.seq;
                a->nonce = cl->req.nonce;
                a->res = *res;
                a->res.client_name.p = NULL;
        }
        if (session_gone(res->status)) {
                lose_session(r, cl);
                return;
        }
        switch (type) {
        case COMMAND_OPEN:
                if (res->status == 0) {
                        cl->session = res->session;
                        cl->next_seq = 1;
                        cl->lease_until = cl->req.first_at + r->ttl_ms;
                        cl->ka_next = now + r->keepalive_ms;
                }
                break;
        case COMMAND_ACQUIRE:
                if (res->status == 0 && res->kind == PROTO_KIND_GRANTED) {
                        cl->held = true;
                        cl->token = res->token;
                        cl->release_at = now + rng_range(&r->s.rng, 100, 2500);
                        if (r->n_acks < MAX_ACKS) {
                                r->acks[r->n_acks++] =
                                    (struct ack){cl->session, cl->next_seq - 1,
                                                 res->token, cl->lock};
                        }
                        check_lease(r, cl, now);
                }
                break;
        default:
                break;
        }
        cl->next_at = now + rng_range(&r->s.rng, 10, 500);
}

/* Where to go after NOT_LEADER, and the request sent again soon. */
static void redirect(struct run *r, struct rclient *cl, const uint8_t *body,
                     size_t len, struct out *o, raft_time now)
{
        r->redirects++;
        if (!sim_leader_named(body, len, r->s.n, &cl->node)) {
                cl->node = rng_below(&r->s.rng, r->s.n);
        }
        simhost_disconnect(cl->conn);
        cl->conn = NULL;
        o->resend_at = now + 20;
}

static void on_frame(struct run *r, struct rclient *cl,
                     const struct proto_header *hdr, const uint8_t *body,
                     raft_time now)
{
        struct out *o = cl->req.busy && hdr->id == cl->req.id ? &cl->req
                        : cl->ka.busy && hdr->id == cl->ka.id ? &cl->ka
                                                              : NULL;
        struct proto_result res;
        uint32_t ttl, revoked;

        if (hdr->type == PROTO_RESULT || hdr->type == PROTO_NOT_LEADER ||
            hdr->type == PROTO_KEEPALIVE_OK) {
                hostcheck_answered(r, cl, hdr->id, now);
        }
        if (o == NULL || o->resend_at != 0) {
                return; /* an answer to an earlier send */
        }
        if (hdr->type == PROTO_NOT_LEADER) {
                redirect(r, cl, body, hdr->length, o, now);
        } else if (hdr->type == PROTO_ERROR) {
                o->resend_at = now + 20; /* the connection closes */
        } else if (o == &cl->ka && hdr->type == PROTO_KEEPALIVE_OK &&
                   proto_read_keepalive_ok(body, hdr->length, hdr->flags, &ttl,
                                           &revoked) == 0) {
                o->busy = false;
                say(&r->s,
                    "client %u: KEEPALIVE of session %" PRIu64 " sent at "
                    "%" PRIu64 " ok, ttl %" PRIu32,
                    cl->id, cl->session, (uint64_t)o->first_at, ttl);
                if (o->first_at + r->ttl_ms > cl->lease_until) {
                        cl->lease_until = o->first_at + r->ttl_ms;
                }
        } else if (hdr->type == PROTO_RESULT &&
                   proto_read_result(body, hdr->length, hdr->flags, &res) ==
                       0) {
                if (res.status == BATON_EUNKNOWN) {
                        r->unknowns++;
                        o->resend_at = now + 20;
                } else if (o == &cl->ka) {
                        o->busy = false;
                        if (session_gone(res.status)) {
                                lose_session(r, cl);
                        }
                } else {
                        on_result(r, cl, &res, now);
                }
        }
}

/* A request out too long, or on a connection that closed: again, on
 * some node. */
static void check_silence(struct run *r, struct rclient *cl, struct out *o,
                          raft_time now)
{
        if (!o->busy || o->resend_at != 0) {
                return;
        }
        if (cl->conn == NULL || now > o->sent_at + 4000) {
                simhost_disconnect(cl->conn);
                cl->conn = NULL;
                cl->node = rng_below(&r->s.rng, r->s.n);
                o->resend_at = now + 20;
        }
}

/* The client stops dead, holding its lock: the cluster must keep the
 * lock its own until its lease runs out, then expire the session. It comes
 * back later with a new session. */
static void crash(struct run *r, struct rclient *cl, raft_time now)
{
        if (r->n_ghosts < MAX_GHOSTS) {
                r->ghosts[r->n_ghosts++] = (struct ghost){
                    cl->id, cl->lock, cl->token, cl->lease_until};
        }
        r->crashes++;
        say(&r->s, "client %u crashes holding %s", cl->id,
            hostrun_locks[cl->lock]);
        simhost_disconnect(cl->conn);
        cl->conn = NULL;
        cl->session = 0;
        cl->held = false;
        cl->req.busy = false;
        cl->ka.busy = false;
        cl->nonce = rng_next(&r->s.rng) | 1;
        cl->next_at = now + rng_range(&r->s.rng, 500, 3000);
}

static void drive_client(struct run *r, struct rclient *cl, raft_time now)
{
        struct proto_header hdr;
        const uint8_t *body;

        while (cl->conn != NULL && simhost_next(cl->conn, &hdr, &body)) {
                on_frame(r, cl, &hdr, body, now);
        }
        if (cl->conn != NULL && simhost_closed(cl->conn)) {
                simhost_disconnect(cl->conn);
                cl->conn = NULL;
        }
        check_silence(r, cl, &cl->req, now);
        check_silence(r, cl, &cl->ka, now);
        if (cl->req.busy && cl->req.resend_at != 0 &&
            now >= cl->req.resend_at) {
                send_out(r, cl, &cl->req);
        }
        if (cl->ka.busy && cl->ka.resend_at != 0 && now >= cl->ka.resend_at) {
                send_out(r, cl, &cl->ka);
        }
        if (cl->session != 0 && !cl->ka.busy && now >= cl->ka_next &&
            !r->stopping) {
                cl->ka_next = now + r->keepalive_ms;
                start_keepalive(r, cl);
        }
        if (cl->req.busy || now < cl->next_at || r->stopping) {
                return;
        }
        if (cl->session == 0) {
                open_session(r, cl);
        } else if (cl->held && now >= cl->release_at) {
                if (rng_chance(&r->s.rng, 10)) {
                        crash(r, cl, now);
                } else {
                        release(r, cl);
                }
        } else if (!cl->held) {
                acquire(r, cl);
        }
}

/* ------------------------------------------------------------------------
 * Faults: the leader killed, and revived with a fresh core
 */

static void transfer_done(struct raft_transfer *req)
{
        struct run *r = (struct run *)(void *)((char *)req -
                                               offsetof(struct run, transfer));

        r->transferring = false;
}

/* The leader hands its leadership over (raft_transfer, as `batonctl
 * transfer` does): it lives on with its connections, so its core loses
 * leadership with requests out on connections that stay open, which only
 * a step-down shows (a killed node's connections reset). */
static bool hand_over(struct run *r, unsigned l)
{
        if (r->transferring ||
            raft_transfer(simcluster_raft(&r->s.c, l), &r->transfer, 0,
                          transfer_done) != 0) {
                return false;
        }
        r->transferring = true;
        r->transfers++;
        say(&r->s, "leader n%u hands over", l);
        return true;
}

static void drive_kills(struct run *r, raft_time now)
{
        unsigned l;

        if (r->killed < r->s.n && now >= r->revive_at) {
                say(&r->s, "%s n%u", r->isolated ? "reconnect" : "revive",
                    r->killed);
                if (r->isolated) {
                        simlinks_unisolate(&r->s.c, r->killed);
                } else {
                        simhost_revive(&r->h, r->killed);
                }
                r->killed = r->s.n;
        }
        if (r->killed < r->s.n || now < r->kill_at || r->stopping) {
                return;
        }
        r->kill_at = now + rng_range(&r->s.rng, 2000, 5000);
        l = simcluster_leader(&r->s.c);
        if (l == r->s.n) {
                return;
        }
        /* One time in four the leader hands over instead, and one in four
         * it is cut off: it lives on, loses its leadership, and answers
         * what it proposed with BATON_EUNKNOWN. */
        if (rng_chance(&r->s.rng, 25) && hand_over(r, l)) {
                return;
        }
        r->isolated = rng_chance(&r->s.rng, 33);
        say(&r->s, "%s leader n%u", r->isolated ? "isolate" : "kill", l);
        if (r->isolated) {
                simlinks_isolate(&r->s.c, l);
        } else {
                simhost_kill(&r->h, l);
        }
        r->killed = l;
        r->revive_at = now + rng_range(&r->s.rng, 500, 2500);
}

/* ------------------------------------------------------------------------
 * A run
 */

static void clients_init(struct run *r)
{
        unsigned i;

        for (i = 0; i < r->n_clients; i++) {
                struct rclient *cl = &r->cl[i];
                unsigned len = 0;

                cl->id = i;
                cl->node = rng_below(&r->s.rng, r->s.n);
                cl->nonce = rng_next(&r->s.rng) | 1;
                for (unsigned b = 0; b < sizeof cl->secret; b++) {
                        cl->secret[b] = (uint8_t)rng_next(&r->s.rng);
                }
                EVP_Digest(cl->secret, sizeof cl->secret, cl->hash, &len,
                           EVP_sha256(), NULL);
                cl->next_at = rng_range(&r->s.rng, 1500, 2500);
        }
}

static bool clients_idle(const struct run *r)
{
        unsigned i;

        for (i = 0; i < r->n_clients; i++) {
                if (r->cl[i].req.busy || r->cl[i].ka.busy) {
                        return false;
                }
        }
        return hostadmin_idle(&r->admin, r);
}

static void steps(struct run *r, raft_time until, bool stop_when_idle)
{
        while (simcluster_now(&r->s.c) < until) {
                raft_time now = simcluster_now(&r->s.c);

                if (stop_when_idle && clients_idle(r)) {
                        return;
                }
                for (unsigned i = 0; i < r->n_clients; i++) {
                        drive_client(r, &r->cl[i], now);
                }
                for (unsigned i = 0; i < r->s.n; i++) {
                        if (now >= r->watch_drop_at[i] && !r->stopping) {
                                /* It resumes where it stood, on a node
                                 * that still keeps those events. */
                                hostwatch_drop(&r->watch[i], now);
                                r->watch_drop_at[i] =
                                    now + rng_range(&r->s.rng, 500, 4000);
                        }
                        hostwatch_drive(&r->watch[i], now);
                }
                hostadmin_drive(&r->admin, r, now);
                if (!r->all_faults) {
                        drive_kills(r, now);
                } else if (!r->stopping) {
                        drive_faults(&r->s, now);
                        simhost_sync(&r->h);
                }
                simcluster_step(&r->s.c);
                simhost_step(&r->h);
        }
}

static int finish(struct run *r, char *reason, size_t cap)
{
        unsigned i;

        if (hostrun_converge(r, reason, cap) != 0) {
                return -1;
        }
        if (r->clash[0] != '\0') {
                return fail(reason, cap, "lease: %s", r->clash);
        }
        if (r->twice[0] != '\0') {
                return fail(reason, cap, "answers: %s", r->twice);
        }
        if (check_replicas(&r->s, reason, cap) != 0 ||
            check_log(&r->s, reason, cap) != 0) {
                return -1;
        }
        hostcheck_break(r);
        if (hostcheck_acks(r, reason, cap) != 0 ||
            hostcheck_answers(r, reason, cap) != 0 ||
            hostcheck_log(r, reason, cap) != 0 ||
            hostcheck_once(r, reason, cap) != 0 ||
            hostcheck_ended(r, reason, cap) != 0 ||
            hostadmin_check(&r->admin, r, reason, cap) != 0) {
                return -1;
        }
        for (i = 0; i < r->s.n; i++) {
                /* What the converging steps sent them, read. */
                hostwatch_drive(&r->watch[i], simcluster_now(&r->s.c));
                if (hostwatch_check(&r->watch[i], &r->s.c.nodes[i], reason,
                                    cap) != 0) {
                        return -1;
                }
        }
        return 0;
}

/* The run's whole history (digest_run()), and what its clients and
 * watchers were told: two runs of one seed must agree on it. */
static uint64_t digest(struct run *r)
{
        uint64_t d = digest_run(&r->s);
        unsigned i;

        for (i = 0; i < r->n_answers; i++) {
                const struct answer *a = &r->answers[i];

                d = hash_u64(d ^ a->session ^ hash_u64(a->seq ^ a->res.index));
                d = hash_u64(d ^ (uint64_t)(uint32_t)a->res.status ^
                             ((uint64_t)a->res.kind << 32) ^ a->res.token);
        }
        for (i = 0; i < r->s.n; i++) {
                d = hash_u64(
                    d ^ hash_bytes(r->watch[i].bodies, r->watch[i].n_bodies));
        }
        return hash_u64(d ^ r->h.stats.frames_out);
}

/* How to run a seed. */
struct runopts {
        unsigned nodes;
        bool verbose;
        int brk;         /* enum brk */
        bool all_faults; /* test_sim's faults, not only kills */
        bool stress;     /* 10 clients, TTL 2500 ms, keepalives every 800 */
};

static int run_seed(struct run *r, uint64_t seed, const struct runopts *o,
                    char *reason, size_t cap)
{
        unsigned i;
        int rv;

        memset(r, 0, sizeof *r);
        r->brk = o->brk;
        r->all_faults = o->all_faults;
        r->s.next_fault_at = 2000;
        r->n_clients = o->stress ? HOST_CLIENTS_MAX : 4;
        r->ttl_ms = o->stress ? 2500 : 5000;
        r->keepalive_ms = o->stress ? 800 : 1000;
        if (hostrun_start(r, seed, o->nodes, o->verbose, reason, cap) != 0) {
                return -1;
        }
        r->killed = r->s.n;
        r->kill_at = rng_range(&r->s.rng, 2000, 5000);
        clients_init(r);
        hostadmin_init(&r->admin, r, rng_range(&r->s.rng, 2000, 4000),
                       o->brk > BREAK_ANSWER ? o->brk - BREAK_ANSWER : 0);
        for (i = 0; i < r->s.n; i++) {
                hostwatch_init(&r->watch[i], &r->h, i);
                r->watch_drop_at[i] = rng_range(&r->s.rng, 2000, 6000);
        }
        steps(r, RUN_MS, false);
        r->stopping = true;
        if (r->killed < r->s.n) {
                r->revive_at = 0;
                drive_kills(r, simcluster_now(&r->s.c));
        }
        while (r->s.n_faults > 0) {
                fault_undo(&r->s, &r->s.faults[--r->s.n_faults]);
        }
        simhost_sync(&r->h);
        steps(r, simcluster_now(&r->s.c) + SETTLE_MS, true);
        /* Then silence, until every lease has run out. */
        steps(r, simcluster_now(&r->s.c) + HOST_QUIET_MS, false);
        rv = finish(r, reason, cap);
        r->digest = digest(r);
        for (i = 0; i < r->n_clients; i++) {
                simhost_disconnect(r->cl[i].conn);
        }
        hostadmin_close(&r->admin);
        for (i = 0; i < r->s.n; i++) {
                r->watched += r->watch[i].n_got;
                r->watches += r->watch[i].n_segs;
                r->compacted += r->watch[i].compacted;
                hostwatch_close(&r->watch[i]);
        }
        return hostrun_stop(r, rv, reason, cap);
}

/* What a run was asked to do. */
struct plan {
        uint64_t first, n_seeds;
        unsigned nodes;           /* 3 or 5 */
        bool verbose, raw, whole; /* whole: the default run, with controls */
        bool faults;              /* test_sim's faults, not only kills */
        bool stress;              /* more clients, shorter sessions */
        int brk;
};

static int parse_args(int argc, char **argv, struct plan *p)
{
        memset(p, 0, sizeof *p);
        p->first = 1;
        p->n_seeds = 20;
        p->nodes = 3;
        p->whole = true;
        for (int a = 1; a < argc; a++) {
                const char *v = a + 1 < argc ? argv[a + 1] : NULL;

                if (strcmp(argv[a], "--seed") == 0 && v != NULL) {
                        p->first = strtoull(v, NULL, 10);
                        p->n_seeds = 1;
                } else if (strcmp(argv[a], "--first") == 0 && v != NULL) {
                        p->first = strtoull(v, NULL, 10);
                } else if (strcmp(argv[a], "--seeds") == 0 && v != NULL) {
                        p->n_seeds = strtoull(v, NULL, 10);
                } else if (strcmp(argv[a], "--nodes") == 0 && v != NULL &&
                           (atoi(v) == 3 || atoi(v) == 5)) {
                        p->nodes = (unsigned)atoi(v);
                } else if (strcmp(argv[a], "--break") == 0 && v != NULL) {
                        for (p->brk = N_BREAKS - 1; p->brk > 0; p->brk--) {
                                if (strcmp(v, break_names[p->brk]) == 0) {
                                        break;
                                }
                        }
                } else if (strcmp(argv[a], "--verbose") == 0) {
                        p->verbose = true;
                        continue;
                } else if (strcmp(argv[a], "--faults") == 0) {
                        p->faults = true;
                        continue;
                } else if (strcmp(argv[a], "--stress") == 0) {
                        p->stress = true;
                        continue;
                } else if (strcmp(argv[a], "--raw") == 0) {
                        p->raw = true; /* the control: each seed's verdict */
                        continue;
                } else {
                        fprintf(stderr,
                                "usage: %s [--seed S | --first S --seeds N] "
                                "[--nodes 3|5] [--break NAME] "
                                "[--faults] [--stress] [--verbose] [--raw]\n",
                                argv[0]);
                        return 2;
                }
                p->whole = false;
                a++;
        }
        return -1;
}

static void report(unsigned k, uint64_t seed, const struct runopts *o, int rv,
                   const char *reason, const struct run *r, const char *self)
{
        char mode[40];

        snprintf(mode, sizeof mode, "%s%s%s", o->nodes == 5 ? " --nodes 5" : "",
                 o->all_faults ? " --faults" : "",
                 o->stress ? " --stress" : "");

        if (rv != 0) {
                printf("not ok %u - seed %" PRIu64 "%s: %s\n", k, seed, mode,
                       reason);
                printf("# replay: %s --seed %" PRIu64 "%s --verbose\n", self,
                       seed, mode);
                return;
        }
        printf("ok %u - seed %" PRIu64
               "%s (answers %u, grants %u, watches %zu (%u compacted) of %zu "
               "events, kills %" PRIu64 ", handovers %u, redirects %u, unknown "
               "%u, resends %u, sessions lost %u, "
               "crashes %u, frames %" PRIu64 "; operator: transfers %u (%u "
               "done), members out %u back %u, unreachable %u)\n",
               k, seed, mode, r->n_answers, r->n_acks, r->watches, r->compacted,
               r->watched, r->h.stats.kills, r->transfers, r->redirects,
               r->unknowns, r->resends, r->expired, r->crashes,
               r->h.stats.frames_in, r->admin.transfers, r->admin.transferred,
               r->admin.removed, r->admin.added, r->admin.unreachable);
}

/* The default run also runs seed 1 twice, which must give the same
 * history (the core reads no clock and draws no random number), and
 * breaks its record each way, and passes only if the checks report it. */
static unsigned run_controls(struct run *r, unsigned k)
{
        char reason[1024];
        unsigned failed = 0;
        struct runopts once = {3, false, BREAK_NONE, true, false};
        uint64_t first;

        run_seed(r, 1, &once, reason, sizeof reason);
        first = r->digest;
        run_seed(r, 1, &once, reason, sizeof reason);
        printf("%s %u - seed 1 --faults replays to the same history "
               "(%016" PRIx64 ", %016" PRIx64 ")\n",
               first == r->digest ? "ok" : "not ok", ++k, first, r->digest);
        failed += first != r->digest;

        for (int b = BREAK_NONE + 1; b < N_BREAKS; b++) {
                struct runopts o = {3, false, b, false, false};
                int rv = run_seed(r, 1, &o, reason, sizeof reason);

                printf("%s %u - --break %s is caught%s%s\n",
                       rv != 0 ? "ok" : "not ok", ++k, break_names[b],
                       rv != 0 ? ": " : "", rv != 0 ? reason : "");
                failed += rv == 0;
        }
        return failed;
}

int main(int argc, char **argv)
{
        struct plan p;
        unsigned failed = 0, k, modes;
        struct timespec t0;
        char reason[1024];
        struct run *r;
        bool control = false;
        int rv = parse_args(argc, argv, &p);

        if (rv >= 0) {
                return rv;
        }
#if CONTROL_RUN
        control = !p.raw;
        p.whole = false;
#endif
        r = malloc(sizeof *r);
        if (r == NULL) {
                return 1;
        }
        /* The default run: every seed with leader kills, then with
         * test_sim's faults. */
        modes = p.whole ? 2 : 1;
        printf("1..%" PRIu64 "\n",
               control ? 1 : modes * p.n_seeds + (p.whole ? N_BREAKS : 0));
        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (k = 0; k < modes * p.n_seeds; k++) {
                uint64_t seed = p.first + k % p.n_seeds;
                bool faults = p.faults || k >= p.n_seeds;
                struct runopts o = {p.nodes, p.verbose, p.brk, faults,
                                    p.stress};

                rv = run_seed(r, seed, &o, reason, sizeof reason);
                failed += rv != 0;
                if (control && rv != 0) {
                        printf("# seed %" PRIu64 " caught: %s\n", seed, reason);
                } else if (!control) {
                        report(k + 1, seed, &o, rv, reason, r, argv[0]);
                }
                fflush(stdout);
        }
        hostrun_rate(&t0, k);
        if (control) {
                printf("%s 1 - %s is caught (%u of %" PRIu64 " seeds)\n",
                       failed > 0 ? "ok" : "not ok", CONTROL_BUG, failed,
                       p.n_seeds);
                failed = failed == 0;
        } else if (p.whole) {
                failed += run_controls(r, k);
        }
        free(r);
        return failed != 0;
}
