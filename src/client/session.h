/* The handle's session: single-flight OPEN with a random nonce, keepalives
 * every TTL/3, the local lease and its states (live, jeopardy, expired),
 * sequence numbers and the ack. */
#ifndef CLIENT_SESSION_H
#define CLIENT_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../proto/command.h"
#include "coreenv.h"
#include "locks.h"
#include "notify.h"
#include "registry.h"

/*
 * The local lease runs from the SEND time of the last acknowledged
 * keepalive (for a new session: the first send of its OPEN) for the TTL
 * minus a safety margin of max(TTL/10, 200 ms). The leader dates its own
 * deadline from the keepalive's arrival, later than our send, and a new
 * leader restarts every TTL in full, so the cluster never expires the
 * session before this lease runs out; the margin covers the difference in
 * clock rates and scheduling delays of both sides.
 *
 * States: LIVE while keepalives are acknowledged; JEOPARDY when none has
 * been for more than TTL/2 (dated the same way); EXPIRED when the lease
 * runs out or the cluster says the session ended. An expired session is
 * never used again: the next call that needs one opens a new session.
 */
#define SESSION_MARGIN_MIN_MS 200

/* Unacknowledged seqs a session may have: the cluster's max_inflight. */
#define SESSION_WINDOW 32

/*
 * Threading: guarded by the handle's mutex, like everything the borrowed
 * pointers lead to. Any thread may drive the session (session_tick() runs
 * on callers' threads as well as on the background thread).
 */
struct session {
        const struct core_env *env; /* borrowed: an OPEN's secret, nonce */
        struct registry *reg;       /* borrowed: sends OPEN and keepalives, and
                                       takes the effects for the host */
        struct locks *locks;        /* borrowed: the holds, lost on expiry */
        struct notify *notify;      /* borrowed: state changes, lost locks */
        const char *client_name;    /* borrowed: sent with the OPEN */
        int state;                  /* enum baton_session_state, as reported */
        uint64_t id;                /* 0: none */
        uint64_t last_id;           /* the latest session opened, even ended */
        uint32_t ttl_ms;            /* as the options asked */
        uint32_t lock_delay_ms;     /* as the options asked: sent with OPEN */
        int64_t margin_ms;          /* max(ttl/10, SESSION_MARGIN_MIN_MS) */
        int64_t acked_sent; /* send time of the last acknowledged keepalive */
        int64_t ka_sent;    /* send time of the last keepalive */
        bool ka_now;        /* send a keepalive as soon as possible */
        bool validating;    /* opened, but live only once a keepalive is */
        struct request *keepalive; /* in flight, internal */
        struct request *opening;   /* the OPEN in flight, internal */
        uint64_t epoch;            /* counts concluded open attempts */
        int open_status;           /* how the last attempt concluded */
        /* A BATON_ETTL refusal's range of TTLs the cluster accepts (0..0
         * from a node that does not say). */
        uint32_t ttl_min, ttl_max;
        /* A BATON_EQUOTA refusal's quota: its kind (enum baton_quota_kind)
         * and limit. */
        uint32_t quota_kind, quota_limit;
        uint64_t next_seq;
        /* The count of the session's revoked grants its last keepalive
         * answer said; a new count makes the holds be verified. */
        uint32_t revoked_seen;
        /* A server refused the keepalive that asks for the count (one of
         * an earlier version): plain keepalives until the next session. */
        bool ka_plain;
        /* The secret of the session being opened or open: only its
         * SHA-256 goes out, in the OPEN (src/proto/attach.h). */
        uint8_t secret[ATTACH_SECRET_SIZE];
};

/* Every pointer is borrowed for the session's life. */
void session_init(struct session *s, uint32_t ttl_ms,
                  const struct core_env *env, struct registry *reg,
                  struct locks *locks, struct notify *notify,
                  const char *client_name);

/*
 * One step of making sure the handle has a live session, at `now`: 1
 * while the caller is to wait (for a change, then step again), having
 * opened one if none is open or opening; 0 once the session is usable; or
 * a negative code: the cluster's refusal (BATON_ETTL, with the range the
 * cluster accepts written into `why`, `size` bytes;
 * BATON_ETOOMANYSESSIONS, ...) or why no OPEN could be made. `why` is
 * empty for a code without detail. `*seen` is the session's `epoch` when
 * the caller began, kept across its steps: an attempt that concluded
 * since then is the caller's answer. The OPEN in flight is s->opening.
 */
int session_ensure_step(struct session *s, uint64_t *seen, int64_t now,
                        char *why, size_t size);

/* Whether the session can carry requests (LIVE or JEOPARDY). */
bool session_usable(const struct session *s);

/*
 * A request for the command `k` of the live session, which gets the
 * session, the next seq and the ack (`kind`: enum request_kind). NULL with
 * `*rv` set as request_command() sets it; no seq is used up then.
 */
struct request *session_command(struct session *s, struct command *k,
                                uint8_t kind, int *rv);

/*
 * One step of submitting the caller's command `k` as a request of the
 * live session, at `now`: 0 with `*out` submitted (AWAITED); 1 while the
 * window of unacknowledged seqs is full (the command is not made yet:
 * wait for a change, then step again); BATON_EEXPIRED (no usable session)
 * or what session_command() fails with. A blocking ACQUIRE does not hold
 * the ack back: the cluster may forget its outcome while it waits (a
 * retry then learns BATON_ESEQ and baton_acquire() finds out what became
 * of it), so a long wait never stops the other threads of the handle.
 */
int session_submit_step(struct session *s, struct command *k, int64_t now,
                        struct request **out);

/*
 * Bring the lease states up to `now` (queuing callbacks, failing the
 * requests of a session that expired) and create the keepalive when one
 * is due.
 */
void session_tick(struct session *s, int64_t now);

/* When session_tick() next has something to do (CLOCK_NEVER: nothing). */
int64_t session_next_event(const struct session *s);

/* The OPEN or a keepalive became final (`how`: enum registry_end),
 * handled at `now`: the lease is checked as of then, and a slow OPEN
 * (answered more than TTL/2 after its first send) waits for a keepalive
 * before the session is live. */
void session_answered(struct session *s, struct request *r, int how,
                      int64_t now);

/*
 * The cluster answered that `session` is over (BATON_EEXPIRED,
 * BATON_ECLOSED, BATON_ENOSESSION): if it is ours, it is expired for good:
 * its locks are lost and its requests fail (at `now`).
 */
void session_ended(struct session *s, uint64_t session, int status,
                   int64_t now);

/*
 * Detach the live session at `now`: stop its keepalives and forget it (and
 * its holds, without callbacks), leaving the handle with no session (state
 * NONE). Returns its id and copies its secret into `secret`
 * (ATTACH_SECRET_SIZE bytes; may be NULL), or 0 when there is no usable
 * session.
 */
uint64_t session_detach(struct session *s, uint8_t *secret, int64_t now);

/* Draw `secret` (ATTACH_SECRET_SIZE bytes) from `env` and write its
 * SHA-256 into `hash` (ATTACH_HASH_SIZE bytes). 0, or BATON_EIO when no
 * secret or no hash could be had. */
int session_new_secret(const struct core_env *env, uint8_t *secret,
                       uint8_t *hash);

/* The first ms of JEOPARDY of the lease as it stands: no keepalive sent
 * since `acked_sent` acknowledged for more than TTL/2. */
int64_t session_jeopardy_at(const struct session *s);

/* The first ms of EXPIRED of the lease as it stands: TTL less the margin
 * after `acked_sent`. */
int64_t session_expires_at(const struct session *s);

/*
 * The state session_tick() would report at `now` (enum
 * baton_session_state), without changing anything: LIVE before
 * session_jeopardy_at(), JEOPARDY before session_expires_at(), EXPIRED
 * from then; with no session, or one validating, the state as reported.
 * session_tick() decides by it, so the two cannot disagree. `now` is no
 * earlier than the session's last input.
 */
int session_lease_at(const struct session *s, int64_t now);

/* Lease left in ms (0 when not live). */
int64_t session_remaining(const struct session *s, int64_t now);

#endif /* CLIENT_SESSION_H */
