/* test_simhost's operator: TRANSFER, MEMBER_REMOVE and MEMBER_ADD frames
 * sent to the node it believes leads, each answer checked against what
 * the request core and its host promise (hostadmin.h). */
#include "hostadmin.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../../include/baton/errors.h"
#include "../../src/proto/member.h"
#include "../../src/proto/reply.h"
#include "hostrun.h"

/* How long an answer may take before the operator sends again: a
 * MEMBER_ADD probes for 2 s, then waits on two configuration changes. */
#define ADMIN_SILENCE_MS 10000

static const char *const op_names[HOSTADMIN_N_OPS] = {
    "MEMBER_REMOVE", "MEMBER_ADD", "TRANSFER", "MEMBER_ADD (stranger)"};

/* The first answer against the contract, kept for hostadmin_check(). */
static void bad(struct hostadmin *a, struct run *r, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void bad(struct hostadmin *a, struct run *r, const char *fmt, ...)
{
        va_list ap;
        int n;

        if (a->bad[0] != '\0') {
                return;
        }
        n = snprintf(a->bad, sizeof a->bad, "t=%" PRIu64 " %s to n%u: ",
                     (uint64_t)simcluster_now(&r->s.c), op_names[a->op],
                     a->sent_to);
        if (n > 0 && (size_t)n < sizeof a->bad) {
                va_start(ap, fmt);
                vsnprintf(a->bad + n, sizeof a->bad - (size_t)n, fmt, ap);
                va_end(ap);
        }
        say(&r->s, "operator: against the contract: %s", a->bad);
}

/* The role of member `id` in node i's configuration (the latest it
 * holds), or -1 when it is none. */
static int role_in(struct run *r, unsigned i, uint64_t id)
{
        const struct raft *raft = simcluster_raft(&r->s.c, i);
        unsigned k;

        for (k = 0; k < raft->configuration.n; k++) {
                if (raft->configuration.servers[k].id == id) {
                        return raft->configuration.servers[k].role;
                }
        }
        return -1;
}

void hostadmin_init(struct hostadmin *a, struct run *r, raft_time at, int brk)
{
        memset(a, 0, sizeof *a);
        a->node = rng_below(&r->s.rng, r->s.n);
        a->target = r->s.n;
        a->next_at = at;
        a->brk = brk;
}

void hostadmin_close(struct hostadmin *a)
{
        simhost_disconnect(a->conn);
        a->conn = NULL;
}

/* The frame of the op out, with a fresh id. */
static void build(struct hostadmin *a, struct run *r)
{
        char raft_address[32], client_address[32];
        uint64_t member = a->target + 1;

        a->id = ++a->next_id;
        switch (a->op) {
        case HOSTADMIN_REMOVE:
                a->len = proto_write_id(a->frame, sizeof a->frame, a->id,
                                        PROTO_MEMBER_REMOVE, member);
                break;
        case HOSTADMIN_TRANSFER:
                a->len = proto_write_id(a->frame, sizeof a->frame, a->id,
                                        PROTO_TRANSFER, a->to);
                break;
        default:
                /* The client address is the one each node's config gives
                 * the member (simhost.c), so a retry finds it the same. */
                if (a->op == HOSTADMIN_STRANGER) {
                        member = r->s.n + 1;
                }
                snprintf(raft_address, sizeof raft_address, "sim-n%u:7100",
                         (unsigned)member - 1);
                snprintf(client_address, sizeof client_address, "sim-n%u:7000",
                         (unsigned)member - 1);
                a->len = proto_write_member_add(a->frame, sizeof a->frame,
                                                a->id, member, raft_address,
                                                client_address);
                break;
        }
}

/* Send the op out (again) to the node it believes leads. */
static void send_op(struct hostadmin *a, struct run *r, raft_time now)
{
        if (a->conn == NULL) {
                a->conn = simhost_connect(&r->h, a->node);
        }
        if (a->conn == NULL) {
                a->node = (a->node + 1) % r->s.n; /* down: the next one */
                a->resend_at = now + 50;
                return;
        }
        if (a->op == HOSTADMIN_REMOVE && a->node == a->target &&
            a->sends == 0) {
                /* Take out a voter that is not the one it asks (once one
                 * was asked, it may have been taken out already). */
                a->target = (a->target + 1) % r->s.n;
        }
        a->sends++;
        build(a, r);
        a->faulted = false;
        a->sent_to = a->node;
        a->sent_at = now;
        a->resend_at = 0;
        say(&r->s, "operator: %s %" PRIu64 " to n%u", op_names[a->op],
            a->op == HOSTADMIN_TRANSFER ? a->to : (uint64_t)a->target + 1,
            a->node);
        simhost_send(a->conn, a->frame, a->len);
}

/* The ops of a cycle, in order. */
static const int cycle[3] = {HOSTADMIN_REMOVE, HOSTADMIN_TRANSFER,
                             HOSTADMIN_STRANGER};

/* Begin the next op of the cycle, if one is due. */
static void begin(struct hostadmin *a, struct run *r, raft_time now)
{
        if (a->target < r->s.n) {
                a->op = HOSTADMIN_ADD; /* bring it back first */
        } else if (r->stopping) {
                return;
        } else {
                a->op = cycle[a->cycle++ % 3];
                a->sends = 0;
                if (a->op == HOSTADMIN_REMOVE) {
                        a->target = rng_below(&r->s.rng, r->s.n);
                }
        }
        if (a->op == HOSTADMIN_TRANSFER) {
                /* Any voter, or one named (maybe the leader itself). */
                a->to = rng_below(&r->s.rng, r->s.n + 1);
        }
        a->busy = true;
        send_op(a, r, now);
}

/* The op is over: the next one a while later. */
static void end_op(struct hostadmin *a, struct run *r, raft_time now,
                   unsigned min_ms, unsigned max_ms)
{
        a->busy = false;
        a->next_at = now + rng_range(&r->s.rng, min_ms, max_ms);
}

/* Ask again soon, on the node it goes to next. */
static void again(struct hostadmin *a, raft_time now)
{
        a->resend_at = now + 100;
}

/* A TRANSFER's answer `res` (gateway.h, admin.h): TRANSFERRED from the
 * node asked to a voter it may name (the one asked for, unless a fault
 * struck meanwhile and another node was elected), or none yet; within
 * three election timeouts (and a step of the fixture); refused only as
 * documented (every node is a voter meanwhile: no member is out during
 * a TRANSFER). */
static void on_transfer(struct hostadmin *a, struct run *r,
                        const struct proto_result *res, raft_time now)
{
        uint64_t from = a->sent_to + 1;
        /* Three election timeouts, and the gap between two steps of the
         * fixture, at which the host's deadlines fire: at most a
         * heartbeat, when every node's tick is its only event. */
        uint64_t bound = 3 * (uint64_t)r->s.c.cfg.election_timeout +
                         r->s.c.cfg.heartbeat_timeout;

        if (a->brk == HOSTADMIN_BREAK_TRANSFER) {
                from = from % r->s.n + 1;
        }
        if (res->status == 0 && res->kind == PROTO_KIND_TRANSFERRED) {
                a->transferred++;
                if (res->session != from) {
                        bad(a, r, "TRANSFERRED by %" PRIu64, res->session);
                } else if (res->owner == from) {
                        bad(a, r, "TRANSFERRED to the node that still leads");
                } else if (res->owner != 0 && a->to != 0 &&
                           res->owner != a->to && !a->faulted) {
                        bad(a, r, "TRANSFERRED to %" PRIu64 ", asked %" PRIu64,
                            res->owner, a->to);
                } else if (res->owner != 0 &&
                           role_in(r, (unsigned)res->owner - 1, res->owner) !=
                               RAFT_VOTER) {
                        bad(a, r, "TRANSFERRED to %" PRIu64 ", no voter",
                            res->owner);
                }
                if (now - a->sent_at > bound) {
                        bad(a, r, "answered after %" PRIu64 " ms",
                            (uint64_t)(now - a->sent_at));
                }
                return;
        }
        a->refusals++;
        if (res->status == BATON_EUNREACHABLE ||
            res->status == BATON_EUNKNOWN || res->status == BATON_ENOTLEADER ||
            (res->status == BATON_EISLEADER && a->to == from)) {
                return;
        }
        bad(a, r, "answered %s", baton_strerror(res->status));
}

/* A MEMBER_REMOVE's answer: 0 or BATON_ENOMEMBER leave the member out of
 * the configuration of the node that answered (the operator alone changes
 * it, one change at a time); retries after the documented refusals. */
static void on_remove(struct hostadmin *a, struct run *r,
                      const struct proto_result *res, raft_time now)
{
        uint64_t member = a->target + 1;

        if (a->brk == HOSTADMIN_BREAK_MEMBER) {
                member = member % r->s.n + 1;
        }
        if (res->status == 0 || res->status == BATON_ENOMEMBER) {
                if (role_in(r, a->sent_to, member) != -1) {
                        bad(a, r, "answered %s, and n%u still has %" PRIu64,
                            baton_strerror(res->status), a->sent_to, member);
                }
                a->removed++;
                a->op = HOSTADMIN_ADD;
                end_op(a, r, now, 200, 1500);
                return;
        }
        a->refusals++;
        if (res->status != BATON_ECANTCHANGE &&
            res->status != BATON_ENOTLEADER && res->status != BATON_EUNKNOWN) {
                bad(a, r, "answered %s", baton_strerror(res->status));
        }
        again(a, now);
}

/* A MEMBER_ADD's answer, bringing the removed member back: 0 makes it a
 * voter of the node that answered. BATON_EIDINUSE only when a removal
 * answered 0 by a leader cut off never took: the member is there with its
 * first address, and is taken out again. */
static void on_add(struct hostadmin *a, struct run *r,
                   const struct proto_result *res, raft_time now)
{
        uint64_t member = a->target + 1;

        if (a->brk == HOSTADMIN_BREAK_MEMBER) {
                member = member % r->s.n + 1;
        }
        if (res->status == 0) {
                if (role_in(r, a->sent_to, member) != RAFT_VOTER) {
                        bad(a, r,
                            "answered 0, and %" PRIu64 " is no voter "
                            "of n%u",
                            member, a->sent_to);
                }
                a->added++;
                a->target = r->s.n;
                end_op(a, r, now, 2000, 5000);
                return;
        }
        a->refusals++;
        if (res->status == BATON_EIDINUSE &&
            role_in(r, a->sent_to, member) != -1) {
                a->op = HOSTADMIN_REMOVE;
        } else if (res->status == BATON_EUNREACHABLE) {
                a->unreachable++;
        } else if (res->status != BATON_ECANTCHANGE &&
                   res->status != BATON_ENOTLEADER &&
                   res->status != BATON_EUNKNOWN) {
                bad(a, r, "answered %s", baton_strerror(res->status));
        }
        again(a, now);
}

/* A MEMBER_ADD of an id no node answers as: the probe finds none. */
static void on_stranger(struct hostadmin *a, struct run *r,
                        const struct proto_result *res, raft_time now)
{
        bool unreachable_ok = a->brk != HOSTADMIN_BREAK_REFUSAL;

        if (res->status == BATON_EUNREACHABLE) {
                a->unreachable++;
        }
        if ((res->status == BATON_EUNREACHABLE && unreachable_ok) ||
            res->status == BATON_ECANTCHANGE ||
            res->status == BATON_ENOTLEADER || res->status == BATON_EUNKNOWN) {
                a->refusals++;
                end_op(a, r, now, 2000, 5000);
                return;
        }
        bad(a, r, "answered %s", baton_strerror(res->status));
        end_op(a, r, now, 2000, 5000);
}

/* NOT_LEADER: to the node it names, or any other. */
static void redirect(struct hostadmin *a, struct run *r, const uint8_t *body,
                     size_t len, raft_time now)
{
        a->redirects++;
        if (!sim_leader_named(body, len, r->s.n, &a->node)) {
                a->node = rng_below(&r->s.rng, r->s.n);
        }
        hostadmin_close(a);
        again(a, now);
}

static void on_frame(struct hostadmin *a, struct run *r,
                     const struct proto_header *hdr, const uint8_t *body,
                     raft_time now)
{
        struct proto_result res;

        if (!a->busy || a->resend_at != 0 || hdr->id != a->id) {
                return; /* an answer to an earlier send */
        }
        if (hdr->type == PROTO_NOT_LEADER) {
                redirect(a, r, body, hdr->length, now);
                return;
        }
        if (hdr->type != PROTO_RESULT ||
            proto_read_result(body, hdr->length, hdr->flags, &res) != 0) {
                bad(a, r, "answered with a frame of type %s",
                    proto_type_name(hdr->type));
                a->busy = false;
                return;
        }
        say(&r->s,
            "operator: %s answered %s (kind %u, %" PRIu64 ", %" PRIu64 ")",
            op_names[a->op], baton_strerror(res.status), res.kind, res.session,
            res.owner);
        switch (a->op) {
        case HOSTADMIN_TRANSFER:
                a->transfers++;
                on_transfer(a, r, &res, now);
                end_op(a, r, now, 2000, 5000);
                break;
        case HOSTADMIN_REMOVE:
                on_remove(a, r, &res, now);
                break;
        case HOSTADMIN_ADD:
                on_add(a, r, &res, now);
                break;
        default:
                on_stranger(a, r, &res, now);
                break;
        }
}

void hostadmin_drive(struct hostadmin *a, struct run *r, raft_time now)
{
        struct proto_header hdr;
        const uint8_t *body;

        /* A node down or cut off, or handing over (kills), or any of
         * test_sim's faults. */
        a->faulted |=
            r->killed < r->s.n || r->transferring || r->s.n_faults > 0;
        while (a->conn != NULL && simhost_next(a->conn, &hdr, &body)) {
                on_frame(a, r, &hdr, body, now);
        }
        if (a->conn != NULL && simhost_closed(a->conn)) {
                hostadmin_close(a);
        }
        if (a->busy && a->resend_at == 0 &&
            (a->conn == NULL || now > a->sent_at + ADMIN_SILENCE_MS)) {
                /* Its node went, or said nothing: ask another. */
                hostadmin_close(a);
                a->node = rng_below(&r->s.rng, r->s.n);
                again(a, now);
        }
        if (a->busy && a->resend_at != 0 && now >= a->resend_at) {
                send_op(a, r, now);
        }
        if (!a->busy && now >= a->next_at) {
                begin(a, r, now);
        }
}

bool hostadmin_idle(const struct hostadmin *a, const struct run *r)
{
        return !a->busy && a->target >= r->s.n;
}

int hostadmin_check(struct hostadmin *a, struct run *r, char *reason,
                    size_t cap)
{
        unsigned i;

        if (a->bad[0] != '\0') {
                return fail(reason, cap, "operator: %s", a->bad);
        }
        if (a->target < r->s.n) {
                return fail(reason, cap, "operator: member %u never came back",
                            a->target + 1);
        }
        for (i = 0; i < r->s.n; i++) {
                if (role_in(r, 0, i + 1) != RAFT_VOTER) {
                        return fail(reason, cap,
                                    "operator: member %u is no voter of n0 "
                                    "at the end",
                                    i + 1);
                }
        }
        return 0;
}
