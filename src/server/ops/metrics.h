/* Prometheus text metrics over a minimal HTTP endpoint (optional). */
#ifndef SERVER_METRICS_H
#define SERVER_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "../gateway/gateway.h"
#include "../http/httpapi.h"
#include "../net/conn.h"
#include "../raft/node.h"
#include "certwatch.h"
#include "health.h"
#include "looplag.h"
#include "memtrim.h"
#include "scrape.h"
#include "scrapegate.h"

struct metrics {
        uv_loop_t *loop;
        struct scrape_server http;
        struct gateway *gateway;
        struct node *node;
        struct conn_set *conns;
        const struct looplag *looplag;
        const struct memtrim *memtrim;
        struct scrapegate_port port; /* who gets what */
        /* The node's certificate, for baton_tls_cert_expiry_seconds;
         * NULL or not_after 0: no such gauge. */
        const struct certwatch *certwatch;
        /* The HTTP API's counters (NULL, or not active: none). */
        const struct httpapi *api;
        /* The audit trail's counters (NULL, or off: none). */
        const struct audit *audit;
        int active; /* listening */
};

/* Where and how metrics are served. */
struct metrics_settings {
        const char *address; /* "host:port", "[ipv6]:port"; "" or NULL: off */
        uint32_t max_conns;  /* scrapers at once */
        uint32_t timeout_ms; /* for a scrape, from accept to reply */
        struct tls_ctx *tls; /* NULL: plain HTTP; see scrape_listen() */
        bool loopback;       /* `address` reachable from this host only */
};

/* Serve metrics as `set` says (ownership of set->tls transferred on
 * success), each request answered as scrapegate_decide() says. The
 * sources are borrowed for the life of the endpoint. 0 or a BATON_E*
 * code. */
int metrics_start(struct metrics *m, uv_loop_t *loop,
                  const struct metrics_settings *set, struct gateway *g,
                  struct node *n, struct conn_set *conns,
                  const struct looplag *lag, const struct memtrim *trim);
void metrics_close(struct metrics *m);

/* Count the lines of audit trail `a` (borrowed for the endpoint's life),
 * and record there what the port refuses (a 403, a TLS handshake). */
void metrics_set_audit(struct metrics *m, struct audit *a);

/* Render the exposition text into buf (NUL-terminated); returns its length,
 * or the length it would need when `cap` is too small. */
size_t metrics_render(const struct metrics *m, char *buf, size_t cap);

/* What GET /health and GET /ready are answered from, read from the node
 * now. */
void metrics_health_facts(const struct metrics *m, struct health_facts *f);

#endif /* SERVER_METRICS_H */
