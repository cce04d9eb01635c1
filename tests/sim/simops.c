/* The ops of simhost's struct gateway_host that ask the fixture node:
 * queries, the log, the timer and raft's requests (simops.h). */
#include "simops.h"

#include <stdlib.h>
#include <string.h>

#include "../../include/baton/errors.h"
#include "../../src/proto/attach.h"
#include "../../src/server/raft/handover.h"
#include "../../src/server/raft/raftview.h"
#include "../../src/server/raft/rafterr.h"

/* ------------------------------------------------------------------------
 * Queries
 */

static struct raft *raft_of(struct gateway_host *ops)
{
        struct simcore *core = ops->data;

        return simcluster_raft(core->h->c, core->node);
}

static struct raftfsm *rf_of(struct gateway_host *ops)
{
        struct simcore *core = ops->data;

        return &core->h->c->nodes[core->node].rf;
}

static const struct lockfsm *lockfsm_op(struct gateway_host *ops)
{
        return raftfsm_lockfsm(rf_of(ops));
}

static const struct lockfsm *lockfsm_nowait_op(struct gateway_host *ops)
{
        return raftfsm_lockfsm_nowait(rf_of(ops));
}

/* The client address of member `id`, from the node's config
 * (raftview_address_fn; `data` is the struct simcore). */
static const char *client_address(void *data, uint64_t id)
{
        struct simcore *core = data;
        const struct config *cfg = &core->h->cfg[core->node];
        unsigned i;

        for (i = 0; i < cfg->n_members; i++) {
                if (cfg->members[i].id == id) {
                        return cfg->members[i].client_address;
                }
        }
        return "";
}

static void leader_op(struct gateway_host *ops, uint64_t *id,
                      const char **address)
{
        raft_id leader = 0;
        const char *raft_address = NULL;

        raft_leader(raft_of(ops), &leader, &raft_address);
        *id = leader;
        *address = leader != 0 ? client_address(ops->data, leader) : "";
}

static uint64_t last_applied_op(struct gateway_host *ops)
{
        return raft_last_applied(raft_of(ops));
}

static uint64_t last_index_op(struct gateway_host *ops)
{
        return raft_last_index(raft_of(ops));
}

static void status_op(struct gateway_host *ops, struct proto_status *st,
                      struct proto_versions *v)
{
        raftview_status(raft_of(ops), client_address, ops->data, st);
        if (v != NULL) {
                memset(v, 0, sizeof *v);
        }
}

static void restores_op(struct gateway_host *ops, uint64_t *started,
                        bool *pending)
{
        struct raftfsm_restores rs;

        raftfsm_restores(rf_of(ops), &rs);
        *started = rs.started;
        *pending = rs.pending;
}

static const struct acl *acl_op(struct gateway_host *ops)
{
        return raftfsm_acl(rf_of(ops));
}

static uint64_t acl_epoch_op(struct gateway_host *ops)
{
        return raftfsm_acl_epoch(rf_of(ops));
}

static const struct directory *directory_op(struct gateway_host *ops)
{
        return raftfsm_directory(rf_of(ops));
}

static bool has_member_op(struct gateway_host *ops, uint64_t id)
{
        return raftview_has_member(raft_of(ops), id, NULL);
}

/* The simulated nodes keep no state digests (batond's fsmdigest). */
static bool digest_op(struct gateway_host *ops, uint64_t *index,
                      uint64_t *digest)
{
        (void)ops;
        (void)index;
        (void)digest;
        return false;
}

/* As a client hashes its secret for OPEN. */
static int hash_secret_op(struct gateway_host *ops, const uint8_t *secret,
                          uint8_t *hash)
{
        (void)ops;
        return attach_hash(secret, hash);
}

static int backup_start_op(struct gateway_host *ops, struct gateway_conn *c,
                           uint64_t id)
{
        (void)ops;
        (void)c;
        (void)id;
        return BATON_EUNSUPPORTED;
}

static int backup_chunk_op(struct gateway_host *ops, struct gateway_conn *c,
                           uint64_t id, const struct proto_backup *req)
{
        (void)ops;
        (void)c;
        (void)id;
        (void)req;
        return BATON_EUNSUPPORTED;
}

static void alarms_op(struct gateway_host *ops, struct proto_alarms *out)
{
        (void)ops;
        (void)out;
}

static void log_op(struct gateway_host *ops, enum log_level level,
                   const struct log_fields *f, const char *message)
{
        struct simcore *core = ops->data;

        (void)level;
        (void)f;
        simhost_say(core->h, "n%u core: %s", core->node, message);
}

/* The core's audit lines go nowhere: the simulation checks answers and
 * histories (tests/unit/test_gateway.c checks the lines). */
static void audit_op(struct gateway_host *ops, const struct audit_event *e)
{
        (void)ops;
        (void)e;
}

static void timer_op(struct gateway_host *ops, uint64_t at_ms)
{
        struct simcore *core = ops->data;

        core->timer_at = at_ms;
}

/* ------------------------------------------------------------------------
 * Raft's requests
 */

static void *entry_alloc_op(struct gateway_host *ops, size_t size)
{
        (void)ops;
        return raft_malloc(size);
}

static void entry_free_op(struct gateway_host *ops, void *buf)
{
        (void)ops;
        raft_free(buf);
}

/* A request's answer, into the core it was asked by (dropped or not). */
static void answer(struct simreq *r, int raft_status)
{
        struct simcore *core = r->core;
        struct simhost *h = core->h;
        struct gateway_req *req = r->req;
        struct gateway_now now = simhost_clocks(h);
        int status = rafterr_baton(raft_status);

        core->out--;
        free(r->bytes);
        free(r);
        if (raft_status != 0) {
                req->errmsg = raft_strerror(raft_status);
        }
        simhost_enter(h);
        gateway_on_done(&core->g, &now, req, status);
        simhost_leave(h);
}

/* Whether the proposing node applied r's entry at `index`, the one raft
 * gave it (test_sim's check (e)): raftfsm passed the state machine the
 * right index, which every answer and event carries. Not read from the
 * callback's result, the glue's one slot, which libraft 0.22.1 may have
 * overwritten with a later entry's by the time it calls back. */
static bool applied_at(const struct simreq *r, uint64_t index)
{
        const struct simentry *e;

        index += r->core->h->index_skew;
        e = simnode_entry_at(&r->core->h->c->nodes[r->core->node], index);

        return r->bytes == NULL ||
               (e != NULL && e->index == index && e->len == r->len &&
                memcmp(e->bytes, r->bytes, r->len) == 0);
}

static void applied(struct raft_apply *a, int status, void *result)
{
        struct simreq *r = a->data;
        const struct raftfsm_result *res = result;

        r->req->result = status == 0 && res != NULL ? &res->res : NULL;
        if (status == 0 && !applied_at(r, a->index)) {
                simhost_broken(r->core->h,
                               "an entry raft acknowledged at an index "
                               "where the node applied another",
                               r->core->node);
        }
        answer(r, status);
}

static void barrier_done(struct raft_barrier *b, int status)
{
        answer(b->data, status);
}

static struct simreq *new_req(struct gateway_host *ops, struct gateway_req *req)
{
        struct simreq *r = calloc(1, sizeof *r);

        req->errmsg = NULL;
        req->result = NULL;
        if (r == NULL) {
                req->errmsg = "out of memory";
                return NULL;
        }
        r->core = ops->data;
        r->req = req;
        r->u.apply.data = r;
        return r;
}

/* A refusal by the host: the request never completes. */
static int refuse(struct simcore *core, struct simreq *r, int raft_rv,
                  const char *why)
{
        core->h->stats.refusals++;
        r->req->errmsg = why != NULL ? why : raft_strerror(raft_rv);
        free(r->bytes);
        free(r);
        return rafterr_baton(raft_rv);
}

/* How far past max_lag a MEMBER entry or a configuration change may take
 * the leader: the member a MEMBER_ADD brings back was left behind by its
 * removal, which holds every proposal back once the leader runs max_lag
 * ahead of it (simcluster_may_append() counts every fixture node), and
 * its re-add must still get through. Safe: a leader that appends only
 * while its last index is at most max_lag + this ahead of every node's
 * floor keeps those entries below snapshot_trailing (64 + 16 < 96 - 8). */
#define SIMOPS_ADMIN_LAG 16

/* Whether the leader may append one more entry: simcluster_may_append(),
 * with SIMOPS_ADMIN_LAG more for an administrator's entry. The fixture
 * cannot send an InstallSnapshot: a leader it holds back refuses, as a
 * node whose raft refuses (barriers too, which are entries as well). */
static int may_append(struct simcore *core, bool admin)
{
        struct simcluster *c = core->h->c;
        unsigned lag = c->cfg.max_lag;
        int rv;

        if (admin && lag != 0) {
                c->cfg.max_lag = lag + SIMOPS_ADMIN_LAG;
        }
        rv = simcluster_may_append(c, core->node);
        c->cfg.max_lag = lag;
        return rv;
}

/* 0 when the core may propose now; else `r` refused (and freed), and the
 * refusal's code: not while it hands leadership over, nor while it leads
 * too far ahead of a follower (may_append(), `admin` for an
 * administrator's entry). */
static int may_propose(struct gateway_host *ops, struct simreq *r, bool admin)
{
        struct simcore *core = ops->data;

        if (core->handover) {
                return refuse(core, r, RAFT_NOTLEADER, "handing over");
        }
        if (raft_state(raft_of(ops)) == RAFT_LEADER &&
            may_append(core, admin) != 0) {
                return refuse(core, r, RAFT_NOTLEADER,
                              "leader too far ahead of a follower");
        }
        return 0;
}

/* Whether `buf` is a MEMBER entry (an administrator's). */
static bool member_entry(const void *buf, size_t len)
{
        struct command c;

        return command_decode(&c, buf, len) == 0 && c.type == COMMAND_MEMBER;
}

static int propose_op(struct gateway_host *ops, struct gateway_req *req,
                      void *buf, size_t len)
{
        struct simcore *core = ops->data;
        struct simreq *r = new_req(ops, req);
        struct raft_buffer b = {buf, len};
        int rv;

        if (r == NULL) {
                return BATON_ENOMEM;
        }
        rv = may_propose(ops, r, member_entry(buf, len));
        if (rv != 0) {
                return rv;
        }
        r->bytes = malloc(len);
        if (r->bytes == NULL) {
                free(r);
                req->errmsg = "out of memory";
                return BATON_ENOMEM;
        }
        memcpy(r->bytes, buf, len);
        r->len = len;
        rv = raft_apply(raft_of(ops), &r->u.apply, &b, 1, applied);
        if (rv != 0) {
                return refuse(core, r, rv, NULL);
        }
        core->out++;
        core->h->stats.proposals++;
        return 0;
}

static int barrier_op(struct gateway_host *ops, struct gateway_req *req)
{
        struct simcore *core = ops->data;
        struct simreq *r = new_req(ops, req);
        int rv;

        if (r == NULL) {
                return BATON_ENOMEM;
        }
        rv = may_propose(ops, r, false);
        if (rv != 0) {
                return rv;
        }
        rv = raft_barrier(raft_of(ops), &r->u.barrier, barrier_done);
        if (rv != 0) {
                return refuse(core, r, rv, NULL);
        }
        core->out++;
        return 0;
}

/* ------------------------------------------------------------------------
 * Membership changes, probes and leadership transfers
 */

static void changed(struct raft_change *req, int status)
{
        answer(req->data, status);
}

/* As batond's node_add(), node_promote() and node_remove() (nodereq.c):
 * refused during a handover, and while another change is under way,
 * which libraft 0.22.1 would refuse only after leaking its encoding. */
static int change_op(struct gateway_host *ops, struct gateway_req *req,
                     enum gateway_change kind, uint64_t id,
                     const char *raft_address)
{
        struct simcore *core = ops->data;
        struct raft *raft = raft_of(ops);
        struct simreq *r = new_req(ops, req);
        int rv;

        if (r == NULL) {
                return BATON_ENOMEM;
        }
        if (core->handover) {
                return refuse(core, r, RAFT_NOTLEADER, NULL);
        }
        if (raft->legacy.change != NULL ||
            raft->configuration_uncommitted_index != 0) {
                return refuse(core, r, RAFT_CANTCHANGE, NULL);
        }
        if (id == 0 || id > core->h->c->cfg.n) {
                /* Only the fixture's nodes exist; a probe of any other id
                 * fails first. */
                return refuse(core, r, RAFT_BADID, "no such fixture node");
        }
        if (raft_state(raft) == RAFT_LEADER && may_append(core, true) != 0) {
                return refuse(core, r, RAFT_NOTLEADER,
                              "leader too far ahead of a follower");
        }
        r->u.change.data = r;
        switch (kind) {
        case GATEWAY_ADD:
                rv = raft_add(raft, &r->u.change, id, raft_address, changed);
                break;
        case GATEWAY_PROMOTE:
                rv = raft_assign(raft, &r->u.change, id, RAFT_VOTER, changed);
                break;
        default:
                rv = raft_remove(raft, &r->u.change, id, changed);
                break;
        }
        if (rv != 0) {
                return refuse(core, r, rv, NULL);
        }
        core->out++;
        return 0;
}

/* A probe or a transfer, which the host answers at a step (never inside
 * the op that asked). A transfer's record outlives its answer while raft
 * holds its `transfer` (0.22.1 may call it back long after, at the latest
 * when it closes). */
struct simwait {
        struct raft_transfer transfer; /* with raft once `asked` */
        struct simcore *core;          /* NULL once answered */
        struct gateway_req *req;
        bool is_transfer;
        bool asked;           /* raft_transfer() took `transfer` */
        uint64_t to;          /* the voter (0: any), or the member probed */
        uint64_t since;       /* when the op was called */
        uint64_t deadline;    /* when it is answered, however it stands */
        struct simwait *next; /* in core->waits, until answered */
};

static struct simwait *new_wait(struct simcore *core, struct gateway_req *req,
                                uint64_t to, uint64_t wait_ms)
{
        struct simwait *w = calloc(1, sizeof *w);
        uint64_t now = simcluster_now(core->h->c);

        req->errmsg = NULL;
        req->result = NULL;
        if (w == NULL) {
                req->errmsg = "out of memory";
                return NULL;
        }
        w->core = core;
        w->req = req;
        w->to = to;
        w->since = now;
        w->deadline = now + wait_ms;
        w->transfer.data = w;
        return w;
}

/* Answer `w` with `status` (at a step, or at the core's drop), and let go
 * of it unless raft still holds its transfer. */
static void wait_answer(struct simwait *w, int status, const char *why)
{
        struct simcore *core = w->core;
        struct simhost *h = core->h;
        struct gateway_now now = simhost_clocks(h);
        struct simwait **p;

        for (p = &core->waits; *p != w; p = &(*p)->next) {
        }
        *p = w->next;
        if (w->is_transfer) {
                core->handover = false;
        }
        w->core = NULL;
        core->out--;
        w->req->errmsg = why;
        simhost_enter(h);
        gateway_on_done(&core->g, &now, w->req, status);
        simhost_leave(h);
        if (!w->asked) {
                free(w);
        }
}

static void transferred(struct raft_transfer *t)
{
        struct simwait *w = t->data;

        w->asked = false;
        if (w->core != NULL) {
                wait_answer(w, 0, NULL);
        } else {
                free(w);
        }
}

/* Whether node `i` answers node `from` in the simulation: up, and the
 * link between them not cut either way. */
static bool reachable(const struct simcluster *c, unsigned from, unsigned i)
{
        return c->killed[i] == 0 && c->disconnected[from][i] == 0 &&
               c->disconnected[i][from] == 0;
}

/* A probe answers 0 at the first step that finds the member's node
 * reachable, BATON_EUNREACHABLE once its time ran out. */
static void probe_step(struct simwait *w, uint64_t now)
{
        const struct simcluster *c = w->core->h->c;

        if (w->to >= 1 && w->to <= c->cfg.n &&
            reachable(c, w->core->node, (unsigned)w->to - 1)) {
                wait_answer(w, 0, NULL);
        } else if (now >= w->deadline) {
                wait_answer(w, BATON_EUNREACHABLE, "no node answers there");
        }
}

/* As batond's nodetransfer_step(): once a voter holds the whole log (or
 * two election timeouts passed), raft_transfer(); answered when raft
 * calls back, when this node no longer leads before it asked, or at the
 * deadline, three election timeouts after the op. */
static void transfer_step(struct simwait *w, uint64_t now)
{
        struct simcore *core = w->core;
        struct raft *raft = simcluster_raft(core->h->c, core->node);
        uint64_t to;

        if (!w->asked && core->handover) {
                if (raft_state(raft) != RAFT_LEADER) {
                        wait_answer(w, 0, NULL);
                        return;
                }
                to = handover_caught_up(raft, w->to);
                if (to == 0 &&
                    now - w->since <
                        2 * (uint64_t)core->h->c->cfg.election_timeout) {
                        return;
                }
                core->handover = false;
                if (raft_transfer(raft, &w->transfer, to != 0 ? to : w->to,
                                  transferred) != 0) {
                        wait_answer(w, 0, NULL);
                        return;
                }
                w->asked = true;
        }
        if (now >= w->deadline) {
                wait_answer(w, 0, NULL);
        }
}

void simops_step(struct simcore *core)
{
        uint64_t now = simcluster_now(core->h->c);
        struct simwait *w = core->waits, *next;

        for (; w != NULL; w = next) {
                next = w->next;
                if (w->is_transfer) {
                        transfer_step(w, now);
                } else {
                        probe_step(w, now);
                }
        }
}

void simops_drop(struct simcore *core)
{
        while (core->waits != NULL) {
                struct simwait *w = core->waits;

                wait_answer(w, w->is_transfer ? 0 : BATON_ESHUTDOWN,
                            w->is_transfer ? NULL : "shutting down");
        }
}

/* The fixture routes by id: the address is not looked at. */
static int probe_op(struct gateway_host *ops, struct gateway_req *req,
                    uint64_t id, const char *address, unsigned timeout_ms)
{
        struct simcore *core = ops->data;
        struct simwait *w = new_wait(core, req, id, timeout_ms);

        (void)address;
        if (w == NULL) {
                return BATON_ENOMEM;
        }
        w->next = core->waits;
        core->waits = w;
        core->out++;
        return 0;
}

/* Whether a transfer of the core's is not answered yet. */
static bool transferring(const struct simcore *core)
{
        const struct simwait *w;

        for (w = core->waits; w != NULL; w = w->next) {
                if (w->is_transfer) {
                        return true;
                }
        }
        return false;
}

/* As batond's node_transfer_for() (nodetransfer.c). */
static int transfer_op(struct gateway_host *ops, struct gateway_req *req,
                       uint64_t to)
{
        struct simcore *core = ops->data;
        struct raft *raft = raft_of(ops);
        struct simwait *w;

        if (raft_state(raft) != RAFT_LEADER || transferring(core) ||
            raft_transferee(raft) != 0) {
                req->errmsg = "not leader, or transferring already";
                return BATON_ENOTLEADER;
        }
        if (!handover_possible(raft, to)) {
                req->errmsg = "no such voter";
                return BATON_EINVAL;
        }
        w = new_wait(core, req, to,
                     3 * (uint64_t)core->h->c->cfg.election_timeout);
        if (w == NULL) {
                return BATON_ENOMEM;
        }
        w->is_transfer = true;
        w->next = core->waits;
        core->waits = w;
        core->handover = true;
        core->out++;
        return 0;
}

void simops_init(struct simcore *core)
{
        struct gateway_host *o = &core->ops;

        memset(o, 0, sizeof *o);
        o->data = core;
        o->lockfsm = lockfsm_op;
        o->lockfsm_nowait = lockfsm_nowait_op;
        o->leader = leader_op;
        o->last_applied = last_applied_op;
        o->last_index = last_index_op;
        o->status = status_op;
        o->restores = restores_op;
        o->acl = acl_op;
        o->acl_epoch = acl_epoch_op;
        o->directory = directory_op;
        o->has_member = has_member_op;
        o->digest_to_propose = digest_op;
        o->hash_secret = hash_secret_op;
        o->backup_start = backup_start_op;
        o->backup_chunk = backup_chunk_op;
        o->alarms = alarms_op;
        o->log = log_op;
        o->audit = audit_op;
        o->timer = timer_op;
        o->entry_alloc = entry_alloc_op;
        o->entry_free = entry_free_op;
        o->propose = propose_op;
        o->barrier = barrier_op;
        o->change = change_op;
        o->probe = probe_op;
        o->transfer = transfer_op;
}
