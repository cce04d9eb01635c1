/* The request core's client connections in batond: the connection ops of
 * struct gateway_host over net's connections (conn.h), each of which
 * embeds what the core keeps of it (struct gateway_conn). */
#include "coreconn.h"

#include <stddef.h>

struct conn *coreconn_conn(struct gateway_conn *gw)
{
        return (struct conn *)(void *)((char *)gw - offsetof(struct conn, gw));
}

static const struct conn *const_conn(const struct gateway_conn *gw)
{
        return (const struct conn *)(const void *)((const char *)gw -
                                                   offsetof(struct conn, gw));
}

static uint8_t *reserve_op(struct gateway_host *ops, struct gateway_conn *gw,
                           size_t n)
{
        struct conn *c = coreconn_conn(gw);

        (void)ops;
        if (c->set->app != NULL) {
                return c->closing || c->closed
                           ? NULL
                           : c->set->app->reserve(c->set->data, c, n);
        }
        return conn_reserve(c, n);
}

static void commit_op(struct gateway_host *ops, struct gateway_conn *gw,
                      size_t n, bool later)
{
        struct conn *c = coreconn_conn(gw);

        (void)ops;
        if (c->set->app != NULL) {
                c->set->app->commit(c->set->data, c, n, later);
        } else if (later) {
                conn_commit_later(c, n);
        } else {
                conn_commit(c, n);
        }
}

static void fail_op(struct gateway_host *ops, struct gateway_conn *gw,
                    uint64_t id, int status, const char *message)
{
        (void)ops;
        conn_fail(coreconn_conn(gw), id, status, message);
}

/* A closed connection's output goes nowhere: it holds up no watch, which
 * the gone report about to come ends anyway. */
static size_t backlog_op(struct gateway_host *ops,
                         const struct gateway_conn *gw)
{
        const struct conn *c = const_conn(gw);

        (void)ops;
        return c->closed ? 0 : conn_backlog(c);
}

void coreconn_init(struct gateway_host *ops)
{
        ops->reserve = reserve_op;
        ops->commit = commit_op;
        ops->fail = fail_op;
        ops->backlog = backlog_op;
}
