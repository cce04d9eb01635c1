/* Integration scenario on holder descriptions: client names in QUERY and
 * LIST answers. */
#ifndef TESTS_INTEGRATION_SC_HOLDER_H
#define TESTS_INTEGRATION_SC_HOLDER_H

#include "scenario.h"

/* A holder opened as "build-42": a QUERY or LIST asking for client names
 * shows it; one that does not gets the old bytes. */
void sc_client_names(struct ctx *x);

#endif /* TESTS_INTEGRATION_SC_HOLDER_H */
