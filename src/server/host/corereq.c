/* The request core's raft requests in batond: the request ops of struct
 * gateway_host (proposals, barriers, membership changes, probes and
 * leadership transfers) as the raft node's requests, whose answers go
 * back into the core with the time. */
#include "corereq.h"

#include <stdalign.h>

#include "../../../include/baton/errors.h"
#include "../raft/node.h"
#include "corehost.h"

/* What the host keeps of a request, in its gateway_req's host words. */
struct corereq {
        struct node_request node; /* proposals, barriers, changes */
        struct corehost *h;
};

_Static_assert(sizeof(struct corereq) <=
                   sizeof(((struct gateway_req *)0)->host),
               "the node's request fits in GATEWAY_REQ_HOST_WORDS");
_Static_assert(alignof(struct corereq) <= alignof(uint64_t),
               "the host words are aligned for the node's request");

/* The host's record behind `req`, for host `ops`. */
static struct corereq *take(struct gateway_host *ops, struct gateway_req *req)
{
        struct corereq *r = (struct corereq *)(void *)req->host;

        r->h = ops->data;
        r->node.data = req;
        req->errmsg = NULL;
        req->result = NULL;
        return r;
}

static struct corereq *of(struct gateway_req *req)
{
        return (struct corereq *)(void *)req->host;
}

/* Every answer: into the core, with the clocks of now. */
static void answer(struct gateway_req *req, int status)
{
        struct corehost *h = of(req)->h;
        struct gateway_now now = corehost_clocks(h);

        corehost_enter(h);
        gateway_on_done(&h->core, &now, req, status);
        corehost_leave(h);
}

/* node_request_cb: a proposal's, barrier's or change's answer. */
static void node_done(struct node_request *nr, int status)
{
        struct gateway_req *req = nr->data;

        req->errmsg = nr->errmsg;
        req->result = status == 0 ? nr->result : NULL;
        answer(req, status);
}

/* An op's refusal: the node's reason with it. */
static int refused(struct gateway_req *req, int rv)
{
        if (rv != 0) {
                req->errmsg = of(req)->node.errmsg;
        }
        return rv;
}

static void *entry_alloc_op(struct gateway_host *ops, size_t size)
{
        (void)ops;
        return node_entry_alloc(size);
}

static void entry_free_op(struct gateway_host *ops, void *buf)
{
        (void)ops;
        node_entry_free(buf);
}

static int propose_op(struct gateway_host *ops, struct gateway_req *req,
                      void *buf, size_t len)
{
        struct corereq *r = take(ops, req);

        return refused(req,
                       node_apply(r->h->node, &r->node, buf, len, node_done));
}

static int barrier_op(struct gateway_host *ops, struct gateway_req *req)
{
        struct corereq *r = take(ops, req);

        return refused(req, node_barrier(r->h->node, &r->node, node_done));
}

static int change_op(struct gateway_host *ops, struct gateway_req *req,
                     enum gateway_change kind, uint64_t id,
                     const char *raft_address)
{
        struct corereq *r = take(ops, req);
        struct node *n = r->h->node;

        switch (kind) {
        case GATEWAY_ADD:
                return refused(
                    req, node_add(n, &r->node, id, raft_address, node_done));
        case GATEWAY_PROMOTE:
                return refused(req, node_promote(n, &r->node, id, node_done));
        case GATEWAY_REMOVE:
                return refused(req, node_remove(n, &r->node, id, node_done));
        }
        return BATON_EINVAL;
}

/* node_probe_cb: `data` is the gateway_req. */
static void probe_done(void *data, int status)
{
        answer(data, status);
}

static int probe_op(struct gateway_host *ops, struct gateway_req *req,
                    uint64_t id, const char *address, unsigned timeout_ms)
{
        struct corereq *r = take(ops, req);

        return node_probe(r->h->node, id, address, timeout_ms, probe_done, req);
}

/* node_transfer_for()'s callback: the transfer ended, however it went
 * (the core asks the leader() op where leadership is). */
static void transfer_done(struct node *n, void *data)
{
        (void)n;
        answer(data, 0);
}

static int transfer_op(struct gateway_host *ops, struct gateway_req *req,
                       uint64_t to)
{
        struct corereq *r = take(ops, req);

        return node_transfer_for(r->h->node, to, transfer_done, req);
}

void corereq_init(struct gateway_host *ops)
{
        ops->entry_alloc = entry_alloc_op;
        ops->entry_free = entry_free_op;
        ops->propose = propose_op;
        ops->barrier = barrier_op;
        ops->change = change_op;
        ops->probe = probe_op;
        ops->transfer = transfer_op;
}
