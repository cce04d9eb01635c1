/* Integration scenarios on who may act in a session: ownership proven with
 * the session's secret (ATTACH), and the answer an old client gets. */
#ifndef TESTS_INTEGRATION_SC_OWNER_H
#define TESTS_INTEGRATION_SC_OWNER_H

#include "scenario.h"

/* A client that learned another's session id, owner tag and token (QUERY)
 * cannot KEEPALIVE, ACQUIRE, RELEASE, CANCEL or CLOSE in it (EPERM), nor
 * ATTACH with a wrong secret; the holder's lock and waiter are untouched,
 * and the holder, re-attaching after a reconnect, still works. */
void sc_foreign_session(struct ctx *x);

/* A version 1 frame: ERROR BATON_EVERSION in a version 1 header, close. */
void sc_old_version(struct ctx *x);

#endif /* TESTS_INTEGRATION_SC_OWNER_H */
