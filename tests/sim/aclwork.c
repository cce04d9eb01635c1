/* test_sim's administrator of the access list: rule and quota changes
 * sent as ACL frames, and the nodes' snapshots restored to read their
 * lists. */
#include "aclwork.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../include/baton/errors.h"
#include "../../src/lib/cursor.h"
#include "../../src/proto/aclwire.h"
#include "../../src/proto/reply.h"
#include "../lib/simsnap.h"
#include "simpath.h"

/* Its id on the network: neither a client's (1 to MAX_CLIENTS) nor the
 * operator's (100). */
#define ADMIN_ID 101
/* Changes out at once: older ones are given up (their answers, if any
 * come, are not read). */
#define OUT_MAX 8
/* A node's snapshot restored every this many changes sent (three or four
 * a run): each restore builds a state machine, which costs more than
 * all the changes do. */
#define SAMPLE_EVERY 8

/* Subjects of rules and quotas, and prefixes of the run's lock names
 * (workload.c): "" is every name, "a" two of them, the long name's
 * folder one. */
static const char *const subjects[] = {"ops", "ci-runner", "payments"};
static const char *const prefixes[] = {
    "", "a", "alpha", "gam", "pool", "a-long-lock-name/", "lead", "beta"};
static const char *const quota_subjects[] = {"*", "ops", "ci-runner"};
#define N_SUBJECTS 3
#define N_PREFIXES 8
#define N_RULES    (2 * N_SUBJECTS * N_PREFIXES) /* by kind too */
#define N_QUOTAS   3

struct sentacl {
        uint64_t id; /* its frame's */
        struct aclanswer a;
};

struct aclwork {
        struct rng rng;
        struct pathconn *conn;
        unsigned node; /* the one it believes leads */
        uint64_t next_id;
        raft_time next_at;
        struct sentacl out[OUT_MAX];
        unsigned n_out;
        /* The rules and quotas it set and did not remove since, by their
         * number in the menus above: mostly what it removes. */
        bool rule_set[N_RULES];
        bool quota_set[N_QUOTAS];
        unsigned sent;
        /* What the nodes' snapshots are restored into, one after the
         * other (a state machine is costly to make, not to restore). */
        struct raftfsm scratch;
        bool has_scratch;
};

bool aclwork_start(struct sim *s, uint64_t seed)
{
        struct aclwork *w = calloc(1, sizeof *w);

        if (w == NULL) {
                return false;
        }
        /* A stream of its own: the run's other draws stay the seed's. */
        w->rng.s = (seed * 0x9e3779b97f4a7c15ULL + 0x61636c) ^ s->n;
        w->node = rng_below(&w->rng, s->n);
        w->next_at = rng_range(&w->rng, 500, 1500);
        s->aclw = w;
        return true;
}

/* Keep `a` as answered with `status`. */
static void answered(struct sim *s, const struct aclanswer *a, int status)
{
        if (!sim_grow((void **)&s->acl_answers, &s->cap_acl_answers,
                      s->n_acl_answers + 1, sizeof *s->acl_answers)) {
                s->oom = true;
                return;
        }
        s->acl_answers[s->n_acl_answers] = *a;
        s->acl_answers[s->n_acl_answers++].status = status;
}

/* The change sent in frame `id`, into `a` and off the list; false if it
 * was given up. */
static bool take_out(struct aclwork *w, uint64_t id, struct aclanswer *a)
{
        for (unsigned i = 0; i < w->n_out; i++) {
                if (w->out[i].id == id) {
                        *a = w->out[i].a;
                        w->out[i] = w->out[--w->n_out];
                        return true;
                }
        }
        return false;
}

/* What came on its connection: a RESULT is a change's answer, a
 * NOT_LEADER names the node it believes leads from then on (the change
 * is not sent again), an ERROR a broken promise of the core. */
static void read_answers(struct sim *s, struct aclwork *w)
{
        struct proto_header hdr;
        struct proto_result res;
        struct proto_string msg;
        struct aclanswer a;
        const uint8_t *body;
        int status;

        while (w->conn != NULL && simpath_next(w->conn, &hdr, &body)) {
                if (hdr.type == PROTO_RESULT &&
                    proto_read_result(body, hdr.length, hdr.flags, &res) == 0 &&
                    take_out(w, hdr.id, &a)) {
                        say(s, "admin: ACL #%" PRIu64 " answered %d", hdr.id,
                            res.status);
                        answered(s, &a, res.status);
                } else if (hdr.type == PROTO_NOT_LEADER) {
                        take_out(w, hdr.id, &a);
                        sim_leader_named(body, hdr.length, s->n, &w->node);
                } else if (hdr.type == PROTO_ERROR && s->acl_error[0] == '\0') {
                        proto_read_error(body, hdr.length, &status, &msg);
                        snprintf(s->acl_error, sizeof s->acl_error,
                                 "n%u failed the administrator's connection: "
                                 "%s (%.*s)",
                                 simpath_node(w->conn), baton_strerror(status),
                                 (int)msg.len, msg.p);
                }
        }
}

/* A connection to the node it believes leads: the one it has, unless
 * closed (then the next node) or to another node. NULL when down. */
static struct pathconn *connection(struct sim *s, struct aclwork *w)
{
        if (w->conn != NULL && simpath_closed(w->conn)) {
                w->node = (w->node + 1) % s->n;
        }
        if (w->conn != NULL &&
            (simpath_closed(w->conn) || simpath_node(w->conn) != w->node)) {
                simpath_disconnect(w->conn);
                w->conn = NULL;
                w->n_out = 0; /* their answers are lost with it */
        }
        if (w->conn == NULL) {
                w->conn = simpath_connect(s->path, ADMIN_ID, w->node);
        }
        if (w->conn == NULL) {
                w->node = (w->node + 1) % s->n;
        }
        return w->conn;
}

/* One of the `n` flags of `set`: mostly (when `taken`) one that is set,
 * for a removal to find its rule or quota; else any. */
static unsigned pick(struct rng *r, const bool *set, unsigned n, bool taken)
{
        unsigned on = 0, k;

        for (k = 0; k < n; k++) {
                on += set[k];
        }
        if (!taken || on == 0 || !rng_chance(r, 80)) {
                return rng_below(r, n);
        }
        on = rng_below(r, on);
        for (k = 0; !set[k] || on-- > 0; k++) {
        }
        return k;
}

/* A rule's change: RULE_SET, or RULE_REMOVE mostly of one it set. */
static void pick_rule(struct aclwork *w, bool set, struct proto_acl_request *r)
{
        unsigned k = pick(&w->rng, w->rule_set, N_RULES, !set);

        w->rule_set[k] = set;
        r->op = set ? PROTO_ACL_RULE_SET : PROTO_ACL_RULE_REMOVE;
        r->role = set ? (uint8_t)rng_range(&w->rng, 1, PROTO_ACL_PERMS_ALL) : 0;
        r->kind =
            k % 2 == 0 ? PROTO_ACL_KIND_PREFIX : PROTO_ACL_KIND_GROUP_PREFIX;
        r->identity.p = subjects[k / 2 % N_SUBJECTS];
        r->prefix.p = prefixes[k / 2 / N_SUBJECTS];
}

/* A quota's change: QUOTA_SET of one to five limits, or QUOTA_REMOVE
 * mostly of one it set. */
static void pick_quota(struct aclwork *w, bool set, struct proto_acl_request *r)
{
        unsigned k = pick(&w->rng, w->quota_set, N_QUOTAS, !set);

        w->quota_set[k] = set;
        r->op = set ? PROTO_ACL_QUOTA_SET : PROTO_ACL_QUOTA_REMOVE;
        r->identity.p = quota_subjects[k];
        if (!set) {
                return;
        }
        r->limits[rng_below(&w->rng, PROTO_QUOTA_KINDS)] =
            rng_range(&w->rng, 1, 20);
        for (unsigned i = 0; i < PROTO_QUOTA_KINDS; i++) {
                if (rng_chance(&w->rng, 30)) {
                        r->limits[i] = rng_range(&w->rng, 1, 500);
                }
        }
}

/* `r` as its ACL entry will carry it (access.c), for the checker. */
static void as_entry(const struct proto_acl_request *r, struct aclanswer *a)
{
        static const uint8_t modes[] = {
            [PROTO_ACL_RULE_SET] = COMMAND_ACL_RULE_SET,
            [PROTO_ACL_RULE_REMOVE] = COMMAND_ACL_RULE_REMOVE,
            [PROTO_ACL_QUOTA_SET] = COMMAND_ACL_QUOTA_SET,
            [PROTO_ACL_QUOTA_REMOVE] = COMMAND_ACL_QUOTA_REMOVE,
        };
        struct wcursor c;

        memset(a, 0, sizeof *a);
        a->mode = modes[r->op];
        a->role = r->role;
        a->name_len = (uint8_t)r->identity.len;
        memcpy(a->name, r->identity.p, r->identity.len);
        if (r->op == PROTO_ACL_RULE_SET || r->op == PROTO_ACL_RULE_REMOVE) {
                a->table[0] = r->kind;
                a->table[1] = (uint8_t)r->prefix.len;
                memcpy(a->table + 2, r->prefix.p, r->prefix.len);
                a->table_len = (uint8_t)(2 + r->prefix.len);
        } else if (r->op == PROTO_ACL_QUOTA_SET) {
                wcursor_init(&c, a->table, sizeof a->table);
                for (unsigned k = 0; k < PROTO_QUOTA_KINDS; k++) {
                        wcursor_u32(&c, r->limits[k]);
                }
                a->table_len = (uint8_t)c.len;
        }
}

/* One change, to the node it believes leads. */
static void send_change(struct sim *s, struct aclwork *w)
{
        uint8_t frame[PROTO_HEADER_SIZE + PROTO_ACL_REQUEST_MAX];
        struct proto_acl_request r;
        struct pathconn *conn;
        unsigned roll = rng_below(&w->rng, 100);
        size_t len;

        memset(&r, 0, sizeof r);
        if (roll < 65) {
                pick_rule(w, roll < 40, &r);
        } else {
                pick_quota(w, roll < 85, &r);
        }
        r.identity.len = (uint8_t)strlen(r.identity.p);
        r.prefix.len = r.prefix.p != NULL ? (uint8_t)strlen(r.prefix.p) : 0;
        if ((conn = connection(s, w)) == NULL) {
                say(s, "admin: n%u is down", w->node);
                return;
        }
        len = proto_write_acl(frame, sizeof frame, ++w->next_id, &r);
        if (len == 0) {
                snprintf(s->acl_error, sizeof s->acl_error,
                         "an ACL request that does not encode (op %u)", r.op);
                return;
        }
        if (w->n_out == OUT_MAX) {
                w->out[0] = w->out[--w->n_out]; /* given up */
        }
        w->out[w->n_out].id = w->next_id;
        as_entry(&r, &w->out[w->n_out++].a);
        w->sent++;
        say(s, "admin: ACL #%" PRIu64 " to n%u: op %u '%.*s' on '%.*s'",
            w->next_id, w->node, r.op, (int)r.identity.len, r.identity.p,
            (int)r.prefix.len, r.prefix.p != NULL ? r.prefix.p : "");
        simpath_send(conn, frame, len);
}

/* Node `i`'s snapshot restored, its list kept for the checker. */
static void sample(struct sim *s, struct aclwork *w, unsigned i)
{
        struct aclsample a = {.node = i};
        int rv = -1;

        if (w->has_scratch || simsnap_fresh(&s->c, &w->scratch) == 0) {
                w->has_scratch = true;
                rv = simsnap_restore_acl(&s->c, i, &w->scratch, &a.index,
                                         &a.digest);
        }

        if (rv < 0 && s->acl_error[0] == '\0') {
                snprintf(s->acl_error, sizeof s->acl_error, "%s", s->c.errmsg);
        }
        if (rv != 0) {
                return;
        }
        if (!sim_grow((void **)&s->acl_samples, &s->cap_acl_samples,
                      s->n_acl_samples + 1, sizeof *s->acl_samples)) {
                s->oom = true;
                return;
        }
        s->acl_samples[s->n_acl_samples++] = a;
}

void aclwork_drive(struct sim *s, raft_time now)
{
        struct aclwork *w = s->aclw;

        if (w == NULL) {
                return;
        }
        read_answers(s, w);
        if (now < w->next_at) {
                return;
        }
        w->next_at = now + rng_range(&w->rng, 400, 1600);
        send_change(s, w);
        if (w->sent % SAMPLE_EVERY == 0) {
                sample(s, w, rng_below(&w->rng, s->n));
        }
}

unsigned aclwork_sent(const struct sim *s)
{
        return s->aclw != NULL ? s->aclw->sent : 0;
}

void aclwork_close(struct sim *s)
{
        if (s->aclw != NULL) {
                simpath_disconnect(s->aclw->conn);
                if (s->aclw->has_scratch) {
                        raftfsm_close(&s->aclw->scratch);
                }
        }
        free(s->aclw);
        s->aclw = NULL;
        free(s->acl_samples);
        s->acl_samples = NULL;
        s->n_acl_samples = s->cap_acl_samples = 0;
        free(s->acl_answers);
        s->acl_answers = NULL;
        s->n_acl_answers = s->cap_acl_answers = 0;
}
