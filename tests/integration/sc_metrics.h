/* Integration scenarios on the metric families a Prometheus user expects
 * (docs/operations.md, "Metrics"): each asserted with a value that could
 * be wrong. */
#ifndef TESTS_INTEGRATION_SC_METRICS_H
#define TESTS_INTEGRATION_SC_METRICS_H

#include "scenario.h"

/* Scenarios, run in the order of test_integration.c's table, which says
 * in a line what each one shows. */
void sc_metrics_node(struct ctx *x);
void sc_metrics_grants(struct ctx *x);

#endif /* TESTS_INTEGRATION_SC_METRICS_H */
