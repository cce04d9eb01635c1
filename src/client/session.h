/* The handle's session: single-flight OPEN with a random nonce, keepalives
 * every TTL/3, the local lease and its states (live, jeopardy, expired),
 * sequence numbers and the ack. */
#ifndef CLIENT_SESSION_H
#define CLIENT_SESSION_H

#include <stdbool.h>
#include <stdint.h>

struct baton_client;
struct request;

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

struct session {
        int state;          /* enum baton_session_state, as reported */
        uint64_t id;        /* 0: none */
        uint64_t last_id;   /* the latest session opened, even ended */
        uint32_t ttl_ms;    /* as the options asked */
        int64_t margin_ms;  /* max(ttl/10, SESSION_MARGIN_MIN_MS) */
        int64_t acked_sent; /* send time of the last acknowledged keepalive */
        int64_t ka_sent;    /* send time of the last keepalive */
        bool ka_now;        /* send a keepalive as soon as possible */
        bool validating;    /* opened, but live only once a keepalive is */
        struct request *keepalive; /* in flight, internal */
        struct request *opening;   /* the OPEN in flight, internal */
        uint64_t epoch;            /* counts concluded open attempts */
        int open_status;           /* how the last attempt concluded */
        uint64_t next_seq;
};

void session_init(struct session *s, uint32_t ttl_ms);

/*
 * Make sure the handle has a live session, opening one (or joining the
 * open in flight) if needed, waiting on the handle's condition variable
 * until `deadline`. Called with the mutex held. 0, BATON_ETIMEOUT, or the
 * cluster's refusal (BATON_ETTL, BATON_ETOOMANYSESSIONS, ...).
 */
int session_ensure(struct baton_client *c, int64_t deadline);

/* Whether the session can carry requests (LIVE or JEOPARDY). */
bool session_usable(const struct baton_client *c);

/*
 * Bring the lease states up to `now` (queuing callbacks, failing the
 * requests of a session that expired) and create the keepalive when one
 * is due. Any thread may call it, with the mutex held.
 */
void session_tick(struct baton_client *c, int64_t now);

/* When session_tick() next has something to do (CLOCK_NEVER: nothing). */
int64_t session_next_event(const struct baton_client *c);

/* The final answer of the OPEN or a keepalive (the request is freed). */
void session_answered(struct baton_client *c, struct request *r);

/* The connection a keepalive was in flight on is gone. */
void session_conn_lost(struct baton_client *c, uint64_t gen);

/*
 * The cluster answered that `session` is over (BATON_EEXPIRED,
 * BATON_ECLOSED, BATON_ENOSESSION): if it is ours, it is expired for good:
 * its locks are lost and its requests fail.
 */
void session_ended(struct baton_client *c, uint64_t session, int status);

/*
 * Detach the live session: stop its keepalives and forget it (and its
 * holds, without callbacks), leaving the handle with no session (state
 * NONE). Returns its id, or 0 when there is no usable session. Mutex held.
 */
uint64_t session_detach(struct baton_client *c);

/* The ack the next command carries: the lowest seq of a request that
 * pins it, or the next seq when none does. */
uint64_t session_ack(const struct baton_client *c);

/* Whether a new seq fits in the window of unacknowledged seqs. */
bool session_window_open(const struct baton_client *c);

/* Lease left in ms (0 when not live). */
int64_t session_remaining(const struct baton_client *c, int64_t now);

#endif /* CLIENT_SESSION_H */
