/* What `batonctl console`'s page asks of the cluster, as JSON: each call
 * reads through the operator's libbaton handle (so with the operator's
 * certificate and role) and answers one JSON document. No HTTP here:
 * console.c serves these. */
#ifndef CLI_CONSOLEAPI_H
#define CLI_CONSOLEAPI_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "../../include/baton.h"

/* The most locks one /api/locks answer lists (their grants each take a
 * read of their own); the answer says when there were more. */
#define CONSOLEAPI_MAX_LOCKS 200

/* Every call returns a new JSON value the caller frees, and sets
 * `*status` to the HTTP status it goes with: 200, or for a refusal of
 * the cluster's the status consoleapi_error() gives (the value is then
 * the error object). NULL only when memory ran out. */

/* {"admin": bool, "endpoints": "..."}: whether the operator's certificate
 * has the admin role (the page shows admin actions only then), found by
 * reading the access list, which only admins may. */
json_t *consoleapi_whoami(baton_client *c, const char *endpoints, int *status);

/* {"leader": ID, "members": [{id, voter, address, role, term, leader,
 * commit, applied, lag, state, release, error?}]}: the leader's member
 * list, each member asked for its own status. `state` is "ok",
 * "lagging" (over 1,000 entries behind the leader's commit index), "no
 * leader", "diverged" or "unreachable". */
json_t *consoleapi_members(baton_client *c, int *status);

/* {"locks": [{name, kind, waiters, holders: [{session, token, count,
 * mode, permits, limit, client_name, since}], value?}], "more":
 * bool}: the held names starting with `prefix`, oldest first, each with
 * its grants; `kind` is "lock", "shared", "semaphore" or "election" (an
 * election's `value` is its leader's). */
json_t *consoleapi_locks(baton_client *c, const char *prefix, int *status);

/* The most pages of BATON_SESSIONS_MAX sessions one /api/sessions answer
 * reads (the answer says when there were more). */
#define CONSOLEAPI_SESSION_PAGES 5

/* {"sessions": [{id, client_name, identity, address, ttl_ms,
 * lock_delay_ms, waiting, revoked, locks: [{name, token, mode}],
 * time_left_ms?, since_keepalive_ms?}], "more": bool}: the live sessions
 * by id, as the leader sees them (the two times only where the leader
 * keeps a lease for the session). */
json_t *consoleapi_sessions(baton_client *c, int *status);

/* The page's admin actions, each answered {"done": "..."} or an error. */
json_t *consoleapi_revoke(baton_client *c, const char *name, uint64_t session,
                          uint64_t token, int *status);
json_t *consoleapi_close_session(baton_client *c, uint64_t session,
                                 int *status);
json_t *consoleapi_transfer(baton_client *c, uint64_t to, int *status);

/* {"error": "BATON_E...", "code": N, "message": "..."} for `rv`, and the
 * HTTP status that fits it (403 not permitted, 404 no such grant or
 * session, 400 a bad argument, 503 no leader or no answer, 409 a change
 * already under way, else 502). */
json_t *consoleapi_error(int rv, int *status);

/* One watch event as the page's event stream sends it: {kind, cause,
 * index, ord, name, session, token, mode, permits, value?}. */
json_t *consoleapi_event(const struct baton_event *ev);

#endif /* CLI_CONSOLEAPI_H */
