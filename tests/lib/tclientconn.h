/* The connection of a tclient (tclient.h): to an endpoint, plain or TLS,
 * moving on to the next one, and bytes and whole frames sent and received
 * with deadlines (tclient_now_ms() values). Every call that loses the
 * connection drops it (c->fd -1) with c->errmsg saying why. */
#ifndef TESTS_LIB_TCLIENTCONN_H
#define TESTS_LIB_TCLIENTCONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tclient.h"

#define TCLIENTCONN_CONNECT_MS_MAX 1000 /* one connect attempt, at most */

/* Close the connection, if any, and forget what was read and not yet
 * sent: the next call connects afresh. */
void tclientconn_drop(struct tclient *c);

/* Connect to `address` (which need not be an endpoint of the list),
 * dropping any current connection, with TLS when the environment asks:
 * 0, BATON_EIO, BATON_ETLS or BATON_ENOANSWER. */
int tclientconn_open(struct tclient *c, const char *address, int64_t deadline);

/* After a lost or useless connection: forget the leader hint and move on
 * to the endpoint after the one `c` was on. */
void tclientconn_advance(struct tclient *c);

/* A live connection to the hinted leader, or else the next endpoint (a
 * connection the server closed is dropped first): 0 or what
 * tclientconn_open() returns. */
int tclientconn_ensure(struct tclient *c, int64_t deadline);

/* Send `len` bytes, in TLS records when the connection has TLS; `*sent`
 * (may be NULL) counts what went. 0, BATON_ENOANSWER (the socket stayed
 * full), BATON_EIO or BATON_ETLS (dropped). */
int tclientconn_send(struct tclient *c, const uint8_t *p, size_t len,
                     int64_t deadline, size_t *sent);

/* tclientconn_send() of all `len` bytes, not counted. */
int tclientconn_send_all(struct tclient *c, const uint8_t *p, size_t len,
                         int64_t deadline);

/* The next whole frame: 0 with `*h` and `*body` (valid until the next
 * read on `c`), BATON_ENOANSWER, or BATON_EIO when the connection is gone
 * (it is dropped). */
int tclientconn_recv(struct tclient *c, int64_t deadline,
                     struct proto_header *h, const uint8_t **body);

/* Exactly `len` bytes of the connection (decrypted, with TLS) as they
 * come, frames or not: false if they did not all come. */
bool tclientconn_read(struct tclient *c, uint8_t *p, size_t len,
                      int64_t deadline);

#endif /* TESTS_LIB_TCLIENTCONN_H */
