/* A node of its own for the tests of connection failures: a one-node
 * cluster whose node starts with the flags of a mistake (TLS off, another
 * host's certificate), waited for until its client port listens; and the
 * ports such a test dials: one nothing listens on, and whether one
 * listens. */
#ifndef TESTS_INTEGRATION_LONENODE_H
#define TESTS_INTEGRATION_LONENODE_H

#include <stdbool.h>

#include "harness.h"

/*
 * Start `h` as a one-node cluster (batond found from `argv0`, as
 * harness_start()) whose node runs with `flags` (n of them, copied, as
 * harness_set_flags()): started, stopped, given the flags and started
 * again, since the harness gives flags from a node's next start. Each
 * wait is up to timeout_ms; the last is only for its client port to
 * listen, since the harness's own client cannot always talk to such a
 * node (that is the point). 0, or -1 with h->errmsg; `h` is to be closed
 * either way.
 */
int lonenode_start(struct harness *h, const char *const *flags, unsigned n,
                   const char *argv0, int timeout_ms);

/* A port of 127.0.0.1 nothing listens on: one the kernel just gave out
 * and took back. 0 when it gave none. */
unsigned lonenode_free_port(void);

/* Whether something accepts TCP connections on 127.0.0.1 at the port of
 * `endpoint` ("HOST:PORT"). */
bool lonenode_listening(const char *endpoint);

#endif /* TESTS_INTEGRATION_LONENODE_H */
