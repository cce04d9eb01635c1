/* The metrics port's HTTP: a minimal HTTP/1.0 endpoint that answers every
 * request with one body chosen by its path and closes, in plain text and,
 * when configured, over TLS on the same port (the first byte tells), with a
 * cap on open connections and a deadline for each. */
#ifndef SERVER_SCRAPE_H
#define SERVER_SCRAPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "../../lib/queue.h"
#include "../../tls/tls.h"
#include "../base/audit.h"

/* How a request is answered: 200 with the Prometheus text type unless the
 * render callback says otherwise. */
struct scrape_reply {
        int status;               /* 200, 403 or 503 */
        const char *content_type; /* static text */
};

/* The longest request path kept; a longer one is passed cut short. */
#define SCRAPE_PATH_MAX 64

/* A request, as the render callback sees it. */
struct scrape_request {
        const char *path;     /* the request line's target, up to a '?' */
        bool tls;             /* it came over TLS */
        const char *identity; /* with tls, the client certificate's; "" */
};

/* Write the body for the request `req` (borrowed for the call) into `buf`
 * (NUL-terminated) and return its length, or the length it would need
 * when `cap` is too small; set `r` when the answer is not a 200 of
 * metrics. Called twice per request, in one loop turn: once to size the
 * buffer, once to fill it. */
typedef size_t (*scrape_render_cb)(void *data, const struct scrape_request *req,
                                   struct scrape_reply *r, char *buf,
                                   size_t cap);

struct scrape_server {
        uv_loop_t *loop;
        uv_tcp_t listener;
        uv_timer_t sweep;
        struct queue open; /* struct scrape */
        uint32_t n;
        uint32_t max_conns;  /* more are closed at once */
        uint32_t timeout_ms; /* from accept to the reply written */
        struct tls_ctx *tls; /* NULL: plain HTTP */
        scrape_render_cb render;
        void *data;
        uint64_t served;
        uint64_t refused;   /* over max_conns, TLS refused, neither protocol */
        uint64_t forbidden; /* answered 403 */
        uint64_t timed_out; /* closed at their deadline */
        /* Where a request answered 403 and a connection refused for its
         * TLS are recorded (borrowed; NULL: nowhere). */
        struct audit *audit;
        bool active;
};

/*
 * Serve on "host:port" or "[ipv6]:port" at most `max_conns` connections at
 * once, each closed `timeout_ms` after it was accepted if it has not been
 * answered by then. Plain HTTP is always served; with `tls` (ownership
 * transferred on success; NULL: plain HTTP only) a connection whose first
 * byte opens a TLS handshake is served over TLS, where a scraper must
 * present a certificate of the CA. A connection that starts with neither
 * is closed at once. 0, or a BATON_E* code.
 */
int scrape_listen(struct scrape_server *s, uv_loop_t *loop, const char *address,
                  uint32_t max_conns, uint32_t timeout_ms, struct tls_ctx *tls,
                  scrape_render_cb render, void *data);

/* New connections use `tls` (ownership transferred); for SIGHUP. */
void scrape_set_tls(struct scrape_server *s, struct tls_ctx *tls);

/* Stop listening and close every connection. */
void scrape_close(struct scrape_server *s);

#endif /* SERVER_SCRAPE_H */
