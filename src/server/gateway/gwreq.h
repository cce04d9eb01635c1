/* The core's requests to raft through its host's request ops: each
 * gateway_req from the op that took it to its one completion, and what
 * becomes of those still out when the core closes. */
#ifndef SERVER_GWREQ_H
#define SERVER_GWREQ_H

#include <stddef.h>
#include <stdint.h>

#include "gateway.h"

/*
 * A request's life (gateway.h, struct gateway_req): gwreq_init() once for
 * its record, then any number of rounds of one op below that returns 0
 * and one gateway_on_done() (which may start the next round from `cb`).
 * While out, it is on g->reqs, so that gateway_close() can call each
 * one's `abandon`, which answers whoever waits on it; from then on the
 * core is closed (g->closed) and each `cb` must only free its record:
 * nothing answers, proposes or asks the host anything more.
 *
 * A completion that is not of a request out (twice, or never sent) is a
 * bug of the host's or of the core's: gateway_on_done() stops batond on
 * it (assert), rather than answer a client twice or touch a freed
 * record. It looks the request up by address among those out
 * (g->reqs_by_ptr) before reading anything of it, since a request
 * completed already may be freed. (It cannot tell a second completion of
 * a request the core has sent again since, as an admin request's next
 * step, from the completion of that next step.)
 */

/* Before the first request: its record of requests out. */
void gwreq_start(struct gateway *g);

/* Set up `req` for record `data` of `g`: `cb` runs at its completions,
 * `abandon` (NULL: nothing to answer) at gateway_close() while it is
 * out. */
void gwreq_init(struct gateway_req *req, struct gateway *g, void *data,
                gateway_req_cb cb,
                void (*abandon)(struct gateway_req *req,
                                const struct gateway_now *now));

/* The host's entry buffers (gateway_host.entry_alloc and entry_free). */
void *gwreq_entry_alloc(struct gateway *g, size_t size);
void gwreq_entry_free(struct gateway *g, void *buf);

/* The host's request ops for `req` (gateway.h says what each does): what
 * the op returned, or BATON_ENOMEM before asking it when the record of
 * requests out cannot grow; on 0 `req` is out until its
 * gateway_on_done(). */
int gwreq_propose(struct gateway_req *req, void *buf, size_t len);
int gwreq_barrier(struct gateway_req *req);
int gwreq_change(struct gateway_req *req, enum gateway_change kind, uint64_t id,
                 const char *raft_address);
int gwreq_probe(struct gateway_req *req, uint64_t id, const char *address,
                unsigned timeout_ms);
int gwreq_transfer(struct gateway_req *req, uint64_t to);

/* gateway_on_done(): `req` is back from the host to `g`; run its `cb`. */
void gwreq_done(struct gateway *g, struct gateway_req *req,
                const struct gateway_now *now, int status);

/* gateway_close(): the core is closed; abandon every request out. The
 * record of requests out goes with the last of them. */
void gwreq_close(struct gateway *g, const struct gateway_now *now);

#endif /* SERVER_GWREQ_H */
