/* The ops of simhost's struct gateway_host that ask the fixture node:
 * queries, the log, the timer and raft's requests (simops.h). */
#include "simops.h"

#include <stdlib.h>
#include <string.h>

#include "../../include/baton/errors.h"
#include "../../src/proto/attach.h"
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
        if (raft_state(raft_of(ops)) == RAFT_LEADER &&
            simcluster_may_append(core->h->c, core->node) != 0) {
                /* The fixture cannot send an InstallSnapshot: the leader
                 * holds back, as a node whose raft refuses (barriers
                 * too, which are entries as well). */
                return refuse(core, r, RAFT_NOTLEADER,
                              "leader too far ahead of a follower");
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
        if (raft_state(raft_of(ops)) == RAFT_LEADER &&
            simcluster_may_append(core->h->c, core->node) != 0) {
                return refuse(core, r, RAFT_NOTLEADER,
                              "leader too far ahead of a follower");
        }
        rv = raft_barrier(raft_of(ops), &r->u.barrier, barrier_done);
        if (rv != 0) {
                return refuse(core, r, rv, NULL);
        }
        core->out++;
        return 0;
}

static int change_op(struct gateway_host *ops, struct gateway_req *req,
                     enum gateway_change kind, uint64_t id,
                     const char *raft_address)
{
        (void)ops;
        (void)kind;
        (void)id;
        (void)raft_address;
        req->errmsg = "not simulated";
        return BATON_EUNSUPPORTED;
}

static int probe_op(struct gateway_host *ops, struct gateway_req *req,
                    uint64_t id, const char *address, unsigned timeout_ms)
{
        (void)ops;
        (void)id;
        (void)address;
        (void)timeout_ms;
        req->errmsg = "not simulated";
        return BATON_EUNSUPPORTED;
}

static int transfer_op(struct gateway_host *ops, struct gateway_req *req,
                       uint64_t to)
{
        (void)ops;
        (void)to;
        req->errmsg = "not simulated";
        return BATON_EUNSUPPORTED;
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
        o->timer = timer_op;
        o->entry_alloc = entry_alloc_op;
        o->entry_free = entry_free_op;
        o->propose = propose_op;
        o->barrier = barrier_op;
        o->change = change_op;
        o->probe = probe_op;
        o->transfer = transfer_op;
}
