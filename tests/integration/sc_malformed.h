/* Integration scenarios on malformed input: frames that must get an ERROR
 * and a closed connection, and names that must get ENAME. */
#ifndef TESTS_INTEGRATION_SC_MALFORMED_H
#define TESTS_INTEGRATION_SC_MALFORMED_H

#include "scenario.h"

/* Scenarios, run in the order of test_integration.c's table, which says
 * in a line what each one shows. */
void sc_malformed(struct ctx *x);
void sc_names(struct ctx *x);

#endif /* TESTS_INTEGRATION_SC_MALFORMED_H */
