/* Integration scenarios on faults: kill -9, SIGSTOP and SIGTERM of the
 * leader or of every node, and retries across a failover. */
#ifndef TESTS_INTEGRATION_SC_FAULTS_H
#define TESTS_INTEGRATION_SC_FAULTS_H

#include "scenario.h"

/* Scenarios, run in the order of test_integration.c's table, which says
 * in a line what each one shows. */
void sc_kill_leader_holder(struct ctx *x);
void sc_kill_leader_waiter(struct ctx *x);
void sc_restart_all(struct ctx *x);
void sc_retry_exactly_once(struct ctx *x);
void sc_pause_leader(struct ctx *x);
void sc_term_leader(struct ctx *x);
void sc_term_all(struct ctx *x);
void sc_transfer_lagging(struct ctx *x);

#endif /* TESTS_INTEGRATION_SC_FAULTS_H */
