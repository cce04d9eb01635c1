/* Integration scenarios on load, metrics and limits: many clients at once
 * (batched entries), the metrics they move, the connection limit, and
 * backpressure on a client that does not read. */
#ifndef TESTS_INTEGRATION_SC_LOAD_H
#define TESTS_INTEGRATION_SC_LOAD_H

#include "scenario.h"

/* Scenarios, run in the order of test_integration.c's table, which says
 * in a line what each one shows. */
void sc_concurrent(struct ctx *x);
void sc_counted(struct ctx *x);
void sc_metrics(struct ctx *x);
void sc_conn_limit(struct ctx *x);
void sc_backpressure(struct ctx *x);

#endif /* TESTS_INTEGRATION_SC_LOAD_H */
