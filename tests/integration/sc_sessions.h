/* Integration scenario on listing sessions: SESSIONS pages and one
 * session's record, against three live sessions. */
#ifndef TESTS_INTEGRATION_SC_SESSIONS_H
#define TESTS_INTEGRATION_SC_SESSIONS_H

#include "scenario.h"

/* Three sessions of different names and TTLs, two locks and a waiter:
 * pages of two list them all by id; one session's record shows its lock
 * with its token and its wait; a closed session is gone; a read-role
 * client may list. */
void sc_sessions(struct ctx *x);

#endif /* TESTS_INTEGRATION_SC_SESSIONS_H */
