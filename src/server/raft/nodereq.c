/* A node's proposals and membership changes: libraft's requests behind
 * node_apply(), node_barrier(), node_add(), node_promote() and
 * node_remove(), and node_probe()'s connection to a member to be. */
#include <stdio.h>
#include <stdlib.h>

#include <raft.h>
#include <raft/uv.h>
#include <uv.h>

#include "../../../include/baton.h"
#include "node.h"
#include "nodecore.h"
#include "rafterr.h"

/* --- Requests --------------------------------------------------------------
 *
 * A node_request holds libraft's request in its private words; the raft
 * request's `data` points back at it, and libraft's callback ends here,
 * where its code is translated before the caller's callback runs. */

static void *raft_request(struct node_request *req, node_request_cb cb)
{
        union node_raft_request *r = (union node_raft_request *)req->priv;

        req->cb = cb;
        req->errmsg = "";
        req->result = NULL;
        r->apply.data = req; /* `data` comes first in every request kind */
        return r;
}

static void finish(struct node_request *req, int status)
{
        if (status != 0) {
                req->errmsg = raft_strerror(status);
        }
        req->cb(req, rafterr_baton(status));
}

/* libraft refused a request: its callback never runs. */
static int refuse(struct node_request *req, int rv)
{
        req->errmsg = raft_strerror(rv);
        return rafterr_baton(rv);
}

static void applied(struct raft_apply *r, int status, void *result)
{
        struct node_request *req = r->data;
        const struct raftfsm_result *res = result;

        req->result = status == 0 && res != NULL ? &res->res : NULL;
        finish(req, status);
}

static void barrier_done(struct raft_barrier *r, int status)
{
        finish(r->data, status);
}

static void changed(struct raft_change *r, int status)
{
        finish(r->data, status);
}

void *node_entry_alloc(size_t size)
{
        return raft_malloc(size);
}

void node_entry_free(void *buf)
{
        raft_free(buf);
}

/* While a handover waits, the node proposes nothing, as libraft refuses
 * proposals once it transfers. */
#define REFUSE_DURING_HANDOVER(n, req)                                         \
        do {                                                                   \
                if ((n)->handover) {                                           \
                        return refuse(req, RAFT_NOTLEADER);                    \
                }                                                              \
        } while (0)

int node_apply(struct node *n, struct node_request *req, void *buf, size_t len,
               node_request_cb cb)
{
        struct raft_apply *r = raft_request(req, cb);
        struct raft_buffer b;
        int rv;

        REFUSE_DURING_HANDOVER(n, req);
        b.base = buf;
        b.len = len;
        rv = raft_apply(&n->core->raft, r, &b, 1, applied);
        return rv != 0 ? refuse(req, rv) : 0;
}

int node_barrier(struct node *n, struct node_request *req, node_request_cb cb)
{
        struct raft_barrier *r = raft_request(req, cb);
        int rv;

        REFUSE_DURING_HANDOVER(n, req);
        rv = raft_barrier(&n->core->raft, r, barrier_done);
        return rv != 0 ? refuse(req, rv) : 0;
}

/* libraft 0.22.1 refuses a configuration change while another is under
 * way (RAFT_CANTCHANGE) only after it has encoded the new configuration,
 * whose buffer it then leaks (clientChangeConfiguration in legacy.c):
 * refuse it here first (docs/raft.md). */
#define REFUSE_WHILE_CHANGING(n, req)                                          \
        do {                                                                   \
                if ((n)->core->raft.legacy.change != NULL ||                   \
                    (n)->core->raft.configuration_uncommitted_index != 0) {    \
                        return refuse(req, RAFT_CANTCHANGE);                   \
                }                                                              \
        } while (0)

int node_add(struct node *n, struct node_request *req, uint64_t id,
             const char *raft_address, node_request_cb cb)
{
        struct raft_change *r = raft_request(req, cb);
        int rv;

        REFUSE_DURING_HANDOVER(n, req);
        REFUSE_WHILE_CHANGING(n, req);
        rv = raft_add(&n->core->raft, r, id, raft_address, changed);
        return rv != 0 ? refuse(req, rv) : 0;
}

int node_promote(struct node *n, struct node_request *req, uint64_t id,
                 node_request_cb cb)
{
        struct raft_change *r = raft_request(req, cb);
        int rv;

        REFUSE_DURING_HANDOVER(n, req);
        REFUSE_WHILE_CHANGING(n, req);
        rv = raft_assign(&n->core->raft, r, id, RAFT_VOTER, changed);
        return rv != 0 ? refuse(req, rv) : 0;
}

int node_remove(struct node *n, struct node_request *req, uint64_t id,
                node_request_cb cb)
{
        struct raft_change *r = raft_request(req, cb);
        int rv;

        REFUSE_DURING_HANDOVER(n, req);
        REFUSE_WHILE_CHANGING(n, req);
        rv = raft_remove(&n->core->raft, r, id, changed);
        return rv != 0 ? refuse(req, rv) : 0;
}

/* --- Probes ----------------------------------------------------------------
 *
 * A refused connection is tried again every PROBE_RETRY_MS until the wait
 * runs out, so that a node still starting up is found. A probe outlives
 * its answer when the wait ran out during a connection attempt: raft's
 * connect request cannot be taken back, so the record is freed once the
 * transport has called back and the timer is closed. The node's closing
 * answers every probe first (node_closer, probe_end()): the transport a probe
 * dials through is freed with the node, and a retry timer left running
 * would dial through it after. */

#define PROBE_RETRY_MS 100

struct probe {
        struct raft_uv_connect req;
        struct node_closer closer; /* on node->closers */
        struct raft_uv_transport *t;
        uv_timer_t timer; /* the deadline while connecting, else the retry */
        node_probe_cb cb; /* NULL once answered */
        void *data;
        uint64_t id;
        uint64_t deadline; /* in uv_now()'s time */
        bool connecting;   /* the transport has yet to call back */
        bool timing;       /* the timer is not closed yet */
        char address[PROTO_ADDRESS_MAX + 1];
};

static void probe_release(struct probe *p)
{
        if (!p->connecting && !p->timing) {
                queue_remove(&p->closer.link);
                free(p);
        }
}

static void probe_timer_closed(uv_handle_t *h)
{
        struct probe *p = h->data;

        p->timing = false;
        probe_release(p);
}

static void probe_answer(struct probe *p, int status)
{
        node_probe_cb cb = p->cb;

        p->cb = NULL;
        if (!uv_is_closing((uv_handle_t *)&p->timer)) {
                uv_close((uv_handle_t *)&p->timer, probe_timer_closed);
        }
        if (cb != NULL) {
                cb(p->data, status);
        }
}

static void probed(struct raft_uv_connect *req, struct uv_stream_s *stream,
                   int status);
static void probe_tick(uv_timer_t *t);

/* One connection attempt, with the timer at the deadline meanwhile. 0, or
 * BATON_ENOMEM / BATON_EUNREACHABLE (refused at once: no callback). */
static int probe_connect(struct probe *p)
{
        uint64_t now = uv_now(p->timer.loop);
        int rv;

        p->connecting = true;
        rv = p->t->connect(p->t, &p->req, p->id, p->address, probed);
        if (rv != 0) {
                p->connecting = false;
                return rv == RAFT_NOMEM ? BATON_ENOMEM : BATON_EUNREACHABLE;
        }
        /* Both transports call back from the loop, never from here. */
        uv_timer_start(&p->timer, probe_tick,
                       p->deadline > now ? p->deadline - now : 0, 0);
        return 0;
}

/* The deadline, during an attempt; else the time to try again. */
static void probe_tick(uv_timer_t *t)
{
        struct probe *p = t->data;
        int rv;

        if (p->connecting || uv_now(t->loop) >= p->deadline) {
                probe_answer(p, BATON_EUNREACHABLE);
                return;
        }
        rv = probe_connect(p);
        if (rv != 0) {
                probe_answer(p, rv);
        }
}

static void free_stream(uv_handle_t *h)
{
        raft_free(h); /* a transport's stream is raft's to free, closed */
}

static void probed(struct raft_uv_connect *req, struct uv_stream_s *stream,
                   int status)
{
        struct probe *p = req->data;
        uint64_t now;

        p->connecting = false;
        if (stream != NULL) {
                uv_close((uv_handle_t *)stream, free_stream);
        }
        if (p->cb == NULL) {
                probe_release(p); /* answered already: the wait ran out */
                return;
        }
        now = uv_now(p->timer.loop);
        if (status == 0 || status == RAFT_CANCELED ||
            now + PROBE_RETRY_MS >= p->deadline) {
                probe_answer(p, status == 0               ? 0
                                : status == RAFT_CANCELED ? BATON_ESHUTDOWN
                                                          : BATON_EUNREACHABLE);
                return;
        }
        uv_timer_start(&p->timer, probe_tick, PROBE_RETRY_MS, 0);
}

/* node_closer.end: the node closes. Answer the probe (BATON_ESHUTDOWN)
 * and stop its retries: it dials no more, and one still dialling is freed
 * when the transport, closing, cancels it. */
static void probe_end(struct node_closer *c)
{
        struct probe *p = QUEUE_DATA(c, struct probe, closer);

        if (p->cb != NULL) {
                probe_answer(p, BATON_ESHUTDOWN);
        }
}

int node_probe(struct node *n, uint64_t id, const char *address,
               unsigned timeout_ms, node_probe_cb cb, void *data)
{
        struct probe *p = calloc(1, sizeof *p);
        int rv;

        if (p == NULL) {
                return BATON_ENOMEM;
        }
        /* Both transports, TCP and TLS, sit first in struct plaintcp. */
        p->t = &n->core->net.transport;
        p->req.data = p;
        p->data = data;
        p->id = id;
        snprintf(p->address, sizeof p->address, "%s", address);
        p->closer.end = probe_end;
        queue_push_tail(&n->closers, &p->closer.link);
        p->timing = true;
        uv_timer_init(n->loop, &p->timer);
        p->timer.data = p;
        p->deadline = uv_now(n->loop) + timeout_ms;
        p->cb = cb;
        rv = probe_connect(p);
        if (rv != 0) {
                p->cb = NULL;
                uv_close((uv_handle_t *)&p->timer, probe_timer_closed);
        }
        return rv;
}
