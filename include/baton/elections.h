/*
 * Leader elections through a libbaton handle: campaign, proclaim a value,
 * resign, and ask who leads.
 */
#ifndef BATON_ELECTIONS_H
#define BATON_ELECTIONS_H

#include <stdint.h>

#include "api.h"
#include "client.h"
#include "locks.h" /* BATON_VALUE_MAX */

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Campaign in the election `name` for `owner`, advertising `value` (a
 * C string of at most BATON_VALUE_MAX bytes; NULL: empty) once it leads
 * (the leadership's value, as any grant's: baton_set_value() changes it
 * too):
 * lead at once if no one does, else wait in the election's FIFO queue of
 * candidates, as baton_acquire() waits (`wait_ms` 0: BATON_EBUSY while
 * anyone leads; BATON_WAIT_FOREVER; else at most that long). On success
 * `*token` is the leadership's fencing token: the Raft index of the entry
 * that made this owner leader, higher than every earlier leader's, so a
 * resource that keeps the highest token it has seen refuses a deposed
 * leader's writes. Leadership is held as a lock is: lost when the session
 * expires or is revoked (on_lock_lost runs for it, and the lease states
 * apply), handed to the next candidate by baton_resign(). Not reentrant:
 * a second campaign of the leader's owner gets BATON_EHELD. Errors as
 * baton_acquire()'s, and: BATON_EINVAL (`value` too long), BATON_EKIND
 * (`name` is a lock or a semaphore; a lock's acquire of an election's name
 * gets it too). Thread-safe.
 */
BATON_API int baton_campaign(baton_client *c, const char *name,
                             const char *value, uint64_t owner, int64_t wait_ms,
                             uint64_t *token);

/**
 * As the leader of `name` that `token` names, advertise `value` (as in
 * baton_campaign()) from now on, keeping the leadership and its token.
 * Errors: BATON_ESTALE (the owner leads with another token: this one was
 * lost), BATON_ENOTHOLDER (it does not lead), BATON_EKIND, BATON_EINVAL,
 * BATON_EEXPIRED, BATON_ENAME, BATON_EPERM (a connection that could not
 * prove it owns the session), BATON_ENOANSWER. Thread-safe.
 */
BATON_API int baton_proclaim(baton_client *c, const char *name, uint64_t owner,
                             uint64_t token, const char *value);

/**
 * Give up the leadership of `name` that `token` names: the next candidate
 * leads in the same log entry, with a higher token. The same as
 * baton_release(), errors included. Thread-safe.
 */
BATON_API int baton_resign(baton_client *c, const char *name, uint64_t owner,
                           uint64_t token);

/** Who leads an election, as baton_leader() reports it. */
struct baton_leader {
        int held;            /* 0: no one leads (every other field 0) */
        uint64_t session;    /* the leader's session id */
        uint64_t owner;      /* its owner tag */
        uint64_t token;      /* the leadership's fencing token */
        uint32_t candidates; /* waiting to lead after it */
        /* The leader's wall clock when it became leader, s since the Unix
         * epoch (to within a second; 0: not known). */
        uint32_t since_s;
        char client_name[65]; /* the leader session's, NUL-terminated */
        char value[BATON_VALUE_MAX + 1]; /* what it advertises */
};

/**
 * Linearizable read of who leads the election `name` (served by the
 * leader of the cluster after a barrier; needs no session). `*out` is
 * zeroed first. 0 (`out->held` says whether anyone leads), BATON_EKIND
 * (`name` is held as a lock or a semaphore), BATON_ENAME, BATON_EINVAL,
 * BATON_ENOMEM, BATON_ENOANSWER. Thread-safe.
 */
BATON_API int baton_leader(baton_client *c, const char *name,
                           struct baton_leader *out);

#ifdef __cplusplus
}
#endif

#endif /* BATON_ELECTIONS_H */
