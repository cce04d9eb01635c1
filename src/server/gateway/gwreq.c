/* The core's requests to raft through its host's request ops: each
 * gateway_req from the op that took it to its one completion, and what
 * becomes of those still out when the core closes. */
#include "gwreq.h"

#include <assert.h>

#include "../../../include/baton/errors.h"

void gwreq_start(struct gateway *g)
{
        queue_init(&g->reqs);
        hmap_init(&g->reqs_by_ptr, &mem_libc);
        g->reqs_out = 0;
        g->closed = false;
}

static uint64_t ptr_hash(const struct gateway_req *req)
{
        return hash_u64((uint64_t)(uintptr_t)req);
}

/* Whether `req` is out, found by its address alone: a request completed
 * already may be freed, so nothing of it is read. */
static bool is_out(const struct gateway *g, const struct gateway_req *req)
{
        const struct hnode *n;

        for (n = hmap_first(&g->reqs_by_ptr, ptr_hash(req)); n != NULL;
             n = hmap_next(n)) {
                if (HMAP_DATA(n, struct gateway_req, by_ptr) == req) {
                        return true;
                }
        }
        return false;
}

void gwreq_init(struct gateway_req *req, struct gateway *g, void *data,
                gateway_req_cb cb,
                void (*abandon)(struct gateway_req *req,
                                const struct gateway_now *now))
{
        req->data = data;
        req->g = g;
        req->cb = cb;
        req->abandon = abandon;
        queue_init(&req->link);
        req->out = false;
        req->errmsg = NULL;
        req->result = NULL;
}

void *gwreq_entry_alloc(struct gateway *g, size_t size)
{
        return g->host->entry_alloc(g->host, size);
}

void gwreq_entry_free(struct gateway *g, void *buf)
{
        g->host->entry_free(g->host, buf);
}

/* Whether `req` may go out: room to record it, else BATON_ENOMEM. */
static int room(struct gateway_req *req)
{
        struct gateway *g = req->g;

        /* A request goes out once at a time, and never once closed. */
        assert(!req->out);
        assert(!g->closed);
        if (hmap_reserve(&g->reqs_by_ptr, (size_t)g->reqs_out + 1) != 0) {
                req->errmsg = "out of memory";
                return BATON_ENOMEM;
        }
        return 0;
}

/* What an op returned for `req`: on 0 it is out, until gwreq_done(). The
 * host completes a request only after its op returned. */
static int sent(struct gateway_req *req, int rv)
{
        struct gateway *g = req->g;

        if (rv == 0) {
                req->out = true;
                queue_push_tail(&g->reqs, &req->link);
                hmap_insert(&g->reqs_by_ptr, &req->by_ptr, ptr_hash(req));
                g->reqs_out++;
        }
        return rv;
}

int gwreq_propose(struct gateway_req *req, void *buf, size_t len)
{
        struct gateway_host *h = req->g->host;

        int rv = room(req);

        return rv != 0 ? rv : sent(req, h->propose(h, req, buf, len));
}

int gwreq_barrier(struct gateway_req *req)
{
        struct gateway_host *h = req->g->host;

        int rv = room(req);

        return rv != 0 ? rv : sent(req, h->barrier(h, req));
}

int gwreq_change(struct gateway_req *req, enum gateway_change kind, uint64_t id,
                 const char *raft_address)
{
        struct gateway_host *h = req->g->host;

        int rv = room(req);

        return rv != 0 ? rv
                       : sent(req, h->change(h, req, kind, id, raft_address));
}

int gwreq_probe(struct gateway_req *req, uint64_t id, const char *address,
                unsigned timeout_ms)
{
        struct gateway_host *h = req->g->host;

        int rv = room(req);

        return rv != 0 ? rv
                       : sent(req, h->probe(h, req, id, address, timeout_ms));
}

int gwreq_transfer(struct gateway_req *req, uint64_t to)
{
        struct gateway_host *h = req->g->host;

        int rv = room(req);

        return rv != 0 ? rv : sent(req, h->transfer(h, req, to));
}

void gwreq_done(struct gateway *g, struct gateway_req *req,
                const struct gateway_now *now, int status)
{
        /* Exactly once per request sent: a second completion, or one of
         * a request never sent, would answer twice or free twice. Looked
         * up before `req` is read. */
        assert(is_out(g, req));
        assert(req->g == g && req->out);
        req->out = false;
        queue_remove(&req->link);
        hmap_remove(&g->reqs_by_ptr, &req->by_ptr);
        g->reqs_out--;
        req->cb(req, now, status);
        if (g->closed && g->reqs_out == 0) {
                hmap_close(&g->reqs_by_ptr); /* the last one */
        }
}

void gwreq_close(struct gateway *g, const struct gateway_now *now)
{
        struct queue *q;

        g->closed = true;
        QUEUE_FOREACH(q, &g->reqs)
        {
                struct gateway_req *req =
                    QUEUE_DATA(q, struct gateway_req, link);
                if (req->abandon != NULL) {
                        req->abandon(req, now);
                }
        }
        if (g->reqs_out == 0) {
                hmap_close(&g->reqs_by_ptr);
        }
}
