/* Prometheus text metrics over a minimal HTTP endpoint (optional). */
#ifndef SERVER_METRICS_H
#define SERVER_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "conn.h"
#include "gateway.h"
#include "looplag.h"
#include "node.h"

struct metrics {
        uv_loop_t *loop;
        uv_tcp_t listener;
        struct gateway *gateway;
        struct node *node;
        struct conn_set *conns;
        const struct looplag *looplag;
        uint64_t scrapes;
        int active; /* listening */
};

/* Listen on "host:port" or "[ipv6]:port" ("" leaves metrics off). The sources
 * are borrowed for the life of the endpoint. 0 or BATON_EIO. */
int metrics_start(struct metrics *m, uv_loop_t *loop, const char *address,
                  struct gateway *g, struct node *n, struct conn_set *conns,
                  const struct looplag *lag);
void metrics_close(struct metrics *m);

/* Render the exposition text into buf (NUL-terminated); returns its length,
 * or the length it would need when `cap` is too small. */
size_t metrics_render(const struct metrics *m, char *buf, size_t cap);

#endif /* SERVER_METRICS_H */
