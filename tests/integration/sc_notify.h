/* batond under a service manager: a NOTIFY_SOCKET of its own that checks
 * READY=1, STATUS=, WATCHDOG=1 and STOPPING=1 from real nodes, and the
 * unit under systemd-run where systemd runs. */
#ifndef TESTS_INTEGRATION_SC_NOTIFY_H
#define TESTS_INTEGRATION_SC_NOTIFY_H

#include "scenario.h"

/* Starts a 3-node cluster of its own (x->h must be free) with
 * NOTIFY_SOCKET and WATCHDOG_USEC set, and closes it at the end. */
void sc_notify_socket(struct ctx *x);

/* Runs batond as a transient Type=notify unit; sets `*skipped` with the
 * reason in x->why when systemd is not the service manager here. */
void sc_systemd_run(struct ctx *x, bool *skipped);

#endif /* TESTS_INTEGRATION_SC_NOTIFY_H */
