/* batond's HTTP/JSON API (docs/http.md): a listener of its own whose
 * requests become the binary protocol's frames, served by the same request
 * core as the client port's, with the same TLS, roles, refusals and
 * limits, and whose answers come back as JSON or a stream of events. */
#ifndef SERVER_HTTPAPI_H
#define SERVER_HTTPAPI_H

#include <stdbool.h>
#include <stdint.h>

#include <uv.h>

#include "../../lib/queue.h"
#include "../config/config.h"
#include "../host/corehost.h"
#include "../net/conn.h"
#include "../net/httpreq.h"
#include "apiseq.h"

/*
 * How a request is served. The API reads one request of a connection at
 * a time (httpreq.h), checks it (apicall.h) and hands the request core
 * the frame it maps onto (apiframe.h), after an ATTACH with the
 * request's session secret when it acts in a session, exactly as
 * libbaton would on the client port; the core's answer frames come back
 * through the connection's protocol ops (struct conn_app) and become the
 * HTTP answer (apireply.h). A blocking acquire holds its request open
 * until the core answers it. A watch's answer is a Server-Sent Events
 * stream, until the core ends the watch or the client goes.
 *
 * The core's inputs are never called from inside another: an answer
 * that needs a next frame (an ATTACH that succeeded, then the call) or a
 * connection whose next pipelined request can now be read is queued, and
 * httpapi_drive() serves the queue; the host calls it after every read
 * of a connection's bytes and around the core's flush each loop turn.
 *
 * Exactly once: a session's write carries a seq; Idempotency-Key gives
 * it, else this node numbers the session's writes itself, from the state
 * machine's next free seq and the writes it has out (docs/http.md).
 */
struct httpapi {
        struct conn_set conns;
        struct conn_app app;
        struct corehost *host;
        const struct config *cfg; /* borrowed: member HTTP addresses */
        struct httpreq_limits req_limits;
        uint32_t request_timeout_ms;
        uint32_t max_wait_ms;
        bool tls;
        struct queue runnable; /* struct apiconn, by run_link */
        uv_timer_t heartbeat;  /* a comment on every event stream */
        struct apiseqs seqs;   /* the seqs this node has out */
        bool fed;              /* a frame went to the core in this drive */
        bool active;
        uint64_t served;  /* requests answered */
        uint64_t refused; /* answered 4xx/5xx before reaching the core */
};

/*
 * Serve the HTTP API on cfg->http_listen, when set, with cfg's limits:
 * with tls on, every connection completes a TLS handshake with a client
 * certificate of the client port's CA first, whose identity gets its role
 * from cfg, as on the client port. `host`, `loop` and `cfg` are borrowed
 * for the API's life. 0 (also when http-listen is empty: the API is off),
 * or a BATON_E* code after logging what failed (the certificates, the
 * address), with nothing left to close.
 */
int httpapi_start(struct httpapi *api, uv_loop_t *loop, struct corehost *host,
                  const struct config *cfg);

/* SIGHUP: read the certificates again, for new connections; a file that
 * does not load leaves the current ones (logged). */
void httpapi_reload_tls(struct httpapi *api);

/* Serve what is queued (see above): true when a frame went to the core,
 * which the host's flush must then propose. */
bool httpapi_drive(struct httpapi *api);

/* Write what every connection gathered in this loop turn. */
void httpapi_flush(struct httpapi *api);

/* Stop listening and close every connection; accepts one never started. */
void httpapi_close(struct httpapi *api);

#endif /* SERVER_HTTPAPI_H */
