/* The request core's client connections in batond: the connection ops of
 * struct gateway_host over net's connections (conn.h), each of which
 * embeds what the core keeps of it (struct gateway_conn). */
#ifndef SERVER_CORECONN_H
#define SERVER_CORECONN_H

#include "../gateway/gateway.h"
#include "../net/conn.h"

/*
 * Fill the connection ops of `ops` (reserve, commit, fail, backlog), each
 * a call of conn.h on the connection that embeds the core's record:
 * conn_reserve(); conn_commit() or, for output that may wait,
 * conn_commit_later(); conn_fail(), which drops a connection it cannot
 * queue the ERROR frame on and so reports it gone (conn_gone_cb) inside
 * the op: corehost.c holds that report until the core's input returns
 * (gateway.h); conn_backlog(), or 0 for a connection already closed,
 * whose watches go with it when that report arrives. Used only from the
 * loop's thread.
 */
void coreconn_init(struct gateway_host *ops);

/* The connection that embeds `gw` (conn.h: struct conn's gw). */
struct conn *coreconn_conn(struct gateway_conn *gw);

#endif /* SERVER_CORECONN_H */
