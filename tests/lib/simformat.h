/* One-line renderings of a simulated cluster's commands, outcomes and
 * events, for traces and failure reasons. */
#ifndef TESTS_SIMFORMAT_H
#define TESTS_SIMFORMAT_H

#include "simcluster.h"

/* Human-readable one-line renderings for traces and failure reasons. */
void simformat_command(char *buf, size_t cap, const struct command *c);
void simformat_result(char *buf, size_t cap, const struct lockfsm_result *r);
void simformat_event(char *buf, size_t cap, const struct simevent *e);

#endif /* TESTS_SIMFORMAT_H */
