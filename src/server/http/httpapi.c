/* batond's HTTP/JSON API: its listener, its connections' protocol ops and
 * the queue of steps served outside the core's inputs. */
#include "httpapi.h"

#include <stdlib.h>
#include <string.h>

#include "../../../include/baton/errors.h"
#include "../base/log.h"
#include "../config/tlsconfig.h"
#include "apiconn.h"

static struct httpapi *api_of(void *data)
{
        return data;
}

/* The connection's record, made at its first bytes (or its refusal). */
static struct apiconn *record(struct httpapi *api, struct conn *c)
{
        if (c->app == NULL) {
                c->app = apiconn_create(api, c);
        }
        return c->app;
}

static void on_bytes(void *data, struct conn *c, const uint8_t *p, size_t n)
{
        struct httpapi *api = api_of(data);
        struct apiconn *a = record(api, c);

        if (a == NULL) {
                conn_close_after(c);
                return;
        }
        apiconn_bytes(a, p, n);
        httpapi_drive(api);
}

static void on_fail(void *data, struct conn *c, int status, const char *message)
{
        struct apiconn *a = record(api_of(data), c);

        if (a == NULL) {
                conn_close_after(c);
                return;
        }
        apiconn_refuse(a, status, message);
}

static void on_expired(void *data, struct conn *c)
{
        struct apiconn *a = record(api_of(data), c);

        if (a == NULL) {
                conn_close_after(c);
                return;
        }
        apiconn_expired(a);
}

static void on_free(void *data, struct conn *c)
{
        (void)data;
        apiconn_destroy(c->app);
        c->app = NULL;
}

static uint8_t *on_reserve(void *data, struct conn *c, size_t n)
{
        struct apiconn *a = record(api_of(data), c);
        uint8_t *b;

        if (a == NULL) {
                return NULL;
        }
        if (n > a->ans_cap) {
                b = realloc(a->ans, n);
                if (b == NULL) {
                        return NULL;
                }
                a->ans = b;
                a->ans_cap = n;
        }
        return a->ans;
}

static void on_commit(void *data, struct conn *c, size_t n, bool later)
{
        (void)data;
        (void)later; /* a stream's events are written to wait anyway */
        if (c->app != NULL) {
                apiconn_answer(c->app, n);
        }
}

/* The connection goes: nothing of it is queued any more, and the core
 * hears of it (corehost.h defers that while the core is busy). */
static void on_gone(void *data, struct conn *c)
{
        struct httpapi *api = api_of(data);
        struct apiconn *a = c->app;

        if (a != NULL) {
                a->gone = true;
                queue_remove(&a->run_link);
                if (a->seq_held) {
                        a->seq_held = false;
                        apiseqs_put(&api->seqs, a->call.session);
                }
        }
        corehost_on_gone(api->host, c);
}

/* Frames never arrive here: the protocol ops read the bytes. */
static void on_frame(void *data, struct conn *c, const struct proto_header *h,
                     const uint8_t *body)
{
        (void)data;
        (void)h;
        (void)body;
        conn_close_after(c);
}

/* How often a quiet event stream gets a comment: below the 30 to 60 s
 * idle timeouts of common proxies. */
#define HEARTBEAT_MS 15000

static void on_heartbeat(uv_timer_t *t)
{
        struct httpapi *api = t->data;
        struct queue *q;

        QUEUE_FOREACH(q, &api->conns.all)
        {
                struct conn *c = QUEUE_DATA(q, struct conn, link);
                if (c->app != NULL) {
                        apiconn_heartbeat(c->app);
                }
        }
        conn_flush_all(&api->conns);
}

/* The port's credentials: the client port's (tlsconfig.h). */
static int load_tls(const struct config *cfg, struct tls_ctx **out)
{
        char err[TLS_ERRMSG_MAX];
        int rv;

        *out = NULL;
        if (!cfg->tls) {
                return 0;
        }
        rv = tlsconfig_client_port(cfg, out, err, sizeof err);
        if (rv != 0) {
                log_error("HTTP API: TLS: %s", err);
        }
        return rv;
}

int httpapi_start(struct httpapi *api, uv_loop_t *loop, struct corehost *host,
                  const struct config *cfg)
{
        struct conn_limits limits;
        struct tls_ctx *tls;
        int rv;

        memset(api, 0, sizeof *api);
        if (cfg->http_listen[0] == '\0') {
                return 0;
        }
        rv = load_tls(cfg, &tls);
        if (rv != 0) {
                return rv;
        }
        api->host = host;
        api->cfg = cfg;
        api->tls = tls != NULL;
        api->req_limits.max_header = cfg->http_max_header_bytes;
        api->req_limits.max_body = cfg->http_max_body_bytes;
        api->request_timeout_ms = cfg->http_request_timeout_ms;
        api->max_wait_ms = cfg->http_max_wait_ms;
        queue_init(&api->runnable);
        apiseqs_init(&api->seqs);
        api->app.bytes = on_bytes;
        api->app.fail = on_fail;
        api->app.expired = on_expired;
        api->app.free = on_free;
        api->app.reserve = on_reserve;
        api->app.commit = on_commit;
        memset(&limits, 0, sizeof limits);
        limits.max_conns = cfg->http_max_connections;
        limits.max_per_address = cfg->max_connections_per_address;
        limits.max_frame = PROTO_MAX_BODY;
        limits.output_limit = cfg->output_limit;
        limits.handshake_timeout_ms = cfg->handshake_timeout_ms;
        limits.idle_timeout_ms = cfg->http_idle_timeout_ms;
        limits.watch_batch_ms = cfg->watch_batch_ms;
        rv = conn_listen(&api->conns, loop, cfg->http_listen, &limits, tls,
                         on_frame, on_gone, api);
        if (rv != 0) {
                tls_ctx_destroy(tls);
                apiseqs_close(&api->seqs);
                log_error("cannot serve the HTTP API on %s", cfg->http_listen);
                return rv;
        }
        log_info("HTTP API on %s (%s)", cfg->http_listen,
                 tls != NULL ? "TLS with client certificates" : "plain HTTP");
        conn_set_app(&api->conns, &api->app);
        api->conns.cfg = cfg; /* the roles of TLS identities */
        api->conns.audit = &host->audit;
        uv_timer_init(loop, &api->heartbeat);
        api->heartbeat.data = api;
        uv_timer_start(&api->heartbeat, on_heartbeat, HEARTBEAT_MS,
                       HEARTBEAT_MS);
        api->active = true;
        return 0;
}

void httpapi_reload_tls(struct httpapi *api)
{
        struct tls_ctx *tls;

        if (!api->active || !api->tls) {
                return;
        }
        if (load_tls(api->cfg, &tls) != 0) {
                log_warn("SIGHUP: keeping the HTTP API's current "
                         "certificates");
                return;
        }
        conn_set_tls(&api->conns, tls);
}

bool httpapi_drive(struct httpapi *api)
{
        bool fed;

        api->fed = false;
        while (api->active && !queue_empty(&api->runnable)) {
                struct queue *q = queue_head(&api->runnable);
                queue_remove(q);
                apiconn_step(QUEUE_DATA(q, struct apiconn, run_link));
        }
        fed = api->fed;
        api->fed = false;
        return fed;
}

void httpapi_flush(struct httpapi *api)
{
        if (api->active) {
                conn_flush_all(&api->conns);
        }
}

void httpapi_close(struct httpapi *api)
{
        if (!api->active) {
                return;
        }
        api->active = false;
        uv_close((uv_handle_t *)&api->heartbeat, NULL);
        conn_close_all(&api->conns);
        apiseqs_close(&api->seqs);
}
