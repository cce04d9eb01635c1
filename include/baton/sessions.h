/*
 * Seeing the cluster's sessions through a libbaton handle: a page of live
 * sessions after a cursor, or one session by id, each with its client,
 * its lease and the locks it holds and awaits (Consul's session list and
 * session info, etcd's lease list and lease timetolive).
 */
#ifndef BATON_SESSIONS_H
#define BATON_SESSIONS_H

#include <stddef.h>
#include <stdint.h>

#include "api.h"
#include "client.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Most sessions one baton_sessions() call returns. */
#define BATON_SESSIONS_MAX 100
/** Most grants and waits listed for one session (n_grants and n_waits
 * count them all). */
#define BATON_SESSION_HOLDS_MAX 200

/** One grant or wait of a session. */
struct baton_session_hold {
        char name[256];   /* the lock's, NUL-terminated */
        int waiting;      /* 1: queued for it; 0: holds it */
        int mode;         /* enum baton_mode (locks.h) */
        uint64_t owner;   /* the owner tag */
        uint64_t token;   /* a grant's fencing token; 0 for a wait */
        uint32_t count;   /* a grant's reentrant holds; 0 for a wait */
        uint32_t permits; /* a semaphore's grant or wait: its permits */
        /* A wait's: how long it asked to wait; UINT32_MAX: until granted
         * (BATON_WAIT_FOREVER). */
        uint32_t wait_ms;
};

/** One live session, as the leader sees it. */
struct baton_session {
        uint64_t id;
        char client_name[65]; /* its OPEN's (baton_options), NUL-terminated */
        /* The certificate identity and source address of the connection
         * its client talks to the leader over; "" when no connection of it
         * is attached to the leader (between connections, or without TLS
         * for the identity). Known to the leader only, not replicated. */
        char identity[256];
        char address[65];
        uint32_t ttl_ms;
        uint32_t lock_delay_ms;
        /* The leader's lease: ms until it expires the session, and since
         * it last renewed it (the last keepalive, or the leader's start:
         * a new leader gives every session a full TTL); -1 when the
         * leader keeps no lease for it. */
        int64_t left_ms;
        int64_t idle_ms;
        uint32_t revoked;  /* grants an administrator revoked (wrapping) */
        uint32_t n_grants; /* every grant it holds ... */
        uint32_t n_waits;  /* ... and every wait, listed or not */
        /* The first BATON_SESSION_HOLDS_MAX of them, grants first (by
         * token), then waits (as queued); freed by baton_sessions_free(). */
        struct baton_session_hold *holds;
        size_t n_holds;
};

/**
 * Linearizable page of the live sessions whose id is above `after` (0:
 * from the first), by id (served by the leader after a barrier). Does not
 * open a session; needs the read role. Allocates `*out` (free it with
 * baton_sessions_free(*out, *n)) with `*n` sessions, at most `limit`
 * (1..BATON_SESSIONS_MAX) and fewer when more would not fit one reply;
 * `*next` is the cursor for the next page (the last id returned), or 0
 * when there are no more. 0, or BATON_EINVAL, BATON_EPERM (the role),
 * BATON_ENOMEM, BATON_ENOANSWER. Thread-safe.
 */
BATON_API int baton_sessions(baton_client *c, uint64_t after, size_t limit,
                             struct baton_session **out, size_t *n,
                             uint64_t *next);

/**
 * The live session `id`, as baton_sessions() describes it, into `*out`
 * (free it with baton_sessions_free(*out, 1)). 0, or BATON_ENOSESSION (no
 * such session), BATON_EEXPIRED / BATON_ECLOSED (it ended), BATON_EINVAL,
 * BATON_EPERM, BATON_ENOMEM, BATON_ENOANSWER. Thread-safe.
 */
BATON_API int baton_session_info(baton_client *c, uint64_t id,
                                 struct baton_session **out);

/** Free `n` sessions from baton_sessions() or baton_session_info()
 * (accepts NULL). */
BATON_API void baton_sessions_free(struct baton_session *s, size_t n);

#ifdef __cplusplus
}
#endif

#endif /* BATON_SESSIONS_H */
