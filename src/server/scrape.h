/* The metrics port's HTTP: a minimal HTTP/1.0 endpoint that answers every
 * request with one text body and closes, over TLS when configured, with a
 * cap on open connections and a deadline for each. */
#ifndef SERVER_SCRAPE_H
#define SERVER_SCRAPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "../lib/queue.h"
#include "../tls/tls.h"

/* Write the body into `buf` (NUL-terminated) and return its length, or the
 * length it would need when `cap` is too small. */
typedef size_t (*scrape_render_cb)(void *data, char *buf, size_t cap);

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
        uint64_t refused;   /* over max_conns, or TLS refused */
        uint64_t timed_out; /* closed at their deadline */
        bool active;
};

/*
 * Serve on "host:port" or "[ipv6]:port" at most `max_conns` connections at
 * once, each closed `timeout_ms` after it was accepted if it has not been
 * answered by then. With `tls` (ownership transferred on success; NULL:
 * plain HTTP) a scraper must present a certificate of the CA. 0, or a
 * BATON_E* code.
 */
int scrape_listen(struct scrape_server *s, uv_loop_t *loop, const char *address,
                  uint32_t max_conns, uint32_t timeout_ms, struct tls_ctx *tls,
                  scrape_render_cb render, void *data);

/* New connections use `tls` (ownership transferred); for SIGHUP. */
void scrape_set_tls(struct scrape_server *s, struct tls_ctx *tls);

/* Stop listening and close every connection. */
void scrape_close(struct scrape_server *s);

#endif /* SERVER_SCRAPE_H */
