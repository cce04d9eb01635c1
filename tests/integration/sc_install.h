/* Integration scenario on a follower's data directory as a kill during a
 * snapshot install leaves it. */
#ifndef TESTS_INTEGRATION_SC_INSTALL_H
#define TESTS_INTEGRATION_SC_INSTALL_H

#include "scenario.h"

/* Scenarios, run in the order of test_integration.c's table, which says
 * in a line what each one shows. */
void sc_install_cut_short(struct ctx *x);

#endif /* TESTS_INTEGRATION_SC_INSTALL_H */
