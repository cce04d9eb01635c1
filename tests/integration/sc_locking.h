/* Integration scenarios on locking itself: grants, releases, try-locks,
 * waiters, expiry, stale tokens, TTL bounds, wait deadlines and LIST. */
#ifndef TESTS_INTEGRATION_SC_LOCKING_H
#define TESTS_INTEGRATION_SC_LOCKING_H

#include "scenario.h"

/* Scenarios, run in the order of test_integration.c's table, which says
 * in a line what each one shows. */
void sc_acquire_release(struct ctx *x);
void sc_try_busy(struct ctx *x);
void sc_waiter(struct ctx *x);
void sc_expiry(struct ctx *x);

/* With --lock-delay-ms on every node: a holder's expiry hands the lock to
 * its waiter only once the delay has passed (BLOCK, then the leader's
 * UNBLOCK); a RELEASE hands it on at once. */
void sc_lock_delay(struct ctx *x);
void sc_stale(struct ctx *x);
void sc_ttl(struct ctx *x);
void sc_wait_deadline(struct ctx *x);
void sc_list(struct ctx *x);

#endif /* TESTS_INTEGRATION_SC_LOCKING_H */
