/* Integration scenarios on the cluster's members: followers sending
 * clients to the leader, and a node added and removed while it runs. */
#ifndef TESTS_INTEGRATION_SC_MEMBERSHIP_H
#define TESTS_INTEGRATION_SC_MEMBERSHIP_H

#include "scenario.h"

/* Scenarios, run in the order of test_integration.c's table, which says
 * in a line what each one shows. */
void sc_not_leader(struct ctx *x);
void sc_membership(struct ctx *x);

#endif /* TESTS_INTEGRATION_SC_MEMBERSHIP_H */
