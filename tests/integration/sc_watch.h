/* Integration scenarios on watches served by followers: what a watch is
 * told when its node installs the leader's snapshot. */
#ifndef TESTS_INTEGRATION_SC_WATCH_H
#define TESTS_INTEGRATION_SC_WATCH_H

#include "scenario.h"

/* Scenarios, run in the order of test_integration.c's table, which says
 * in a line what each one shows. */
void sc_watch_restore(struct ctx *x);

#endif /* TESTS_INTEGRATION_SC_WATCH_H */
