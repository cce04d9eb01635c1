/* The vocabulary of the lock state machine, below every other fsm module: a
 * command's result, the events an apply reports and the callback they go
 * to, and the limits every replica shares. lockfsm.h, the machine's
 * interface, includes it; the modules that implement the machine include
 * this instead, so that none of them depends on the interface above it. */
#ifndef FSM_TYPES_H
#define FSM_TYPES_H

#include <stdbool.h>
#include <stdint.h>

struct lockfsm_result {
        int status; /* 0 or a negative BATON_E* code */
        uint8_t kind;
        bool duplicate; /* answered from the exactly-once memory */
        uint64_t session;
        uint64_t owner;
        uint64_t token;
        uint32_t count;
        uint32_t waiters;
};

/* State transitions, reported on apply so the server can answer waiting
 * clients (a waiter is granted by someone else's entry) and write its apply
 * log. */
enum lockfsm_event_type {
        LOCKFSM_EV_RESULT = 1, /* the outcome of a client command */
        LOCKFSM_EV_OPEN,       /* session opened */
        LOCKFSM_EV_END,        /* session ended; cause CLOSE or EXPIRE */
        LOCKFSM_EV_GRANT,      /* lock granted: token, seq = the ACQUIRE's */
        LOCKFSM_EV_RELEASE,    /* grant ended; cause RELEASE, CLOSE, EXPIRE */
        LOCKFSM_EV_QUEUE,      /* waiter queued: seq, wait_ms */
        LOCKFSM_EV_UNQUEUE,  /* waiter left without a grant; status says why */
        LOCKFSM_EV_BLOCK,    /* a lock's lock-delay began: name, seq = the
                                lock's creation stamp (UNBLOCK's target),
                                wait_ms = the delay */
        LOCKFSM_EV_UNBLOCK,  /* it ended: name, seq as BLOCK's */
        LOCKFSM_EV_PROCLAIM, /* a holder changed its grant's value
                                (PROCLAIM, SET_VALUE): token, value */
        LOCKFSM_EV_EXTEND,   /* a grant's hold time restarted (EXTEND):
                                seq, token, hold_ms */
};

struct lockfsm_event {
        uint8_t type;   /* enum lockfsm_event_type */
        uint8_t cause;  /* enum command_type of the command being applied;
                           COMMAND_BATCH for a grant the entry's start made */
        uint64_t index; /* the entry being applied */
        uint64_t session;
        uint64_t seq;
        uint64_t owner;
        uint64_t token;
        uint64_t nonce;   /* OPEN */
        uint32_t wait_ms; /* QUEUE */
        uint8_t mode;     /* GRANT, RELEASE, QUEUE, UNQUEUE: COMMAND_MODE_* */
        uint32_t permits; /* the same, of a semaphore: its permits */
        int status; /* UNQUEUE: BATON_ETIMEDOUT, ECANCELLED, EEXPIRED... */
        /* GRANT, RELEASE: the grant's granted_s (0: no CLOCK before it);
         * every event: the state's clock_ms, as the last CLOCK said. For
         * people and metrics (hold times), never for a decision. */
        uint32_t granted_s;
        uint64_t clock_ms;
        const char *name; /* lock name, borrowed for the callback only */
        uint8_t name_len;
        /* END of a REVOKE, events of a REVOKE_LOCK: who asked (by_len
         * bytes, borrowed). */
        const char *by;
        uint8_t by_len;
        /* GRANT, QUEUE and PROCLAIM: the grant's value, an election
         * candidate's or leader's or any other grant's (value_len bytes,
         * borrowed). */
        const char *value;
        uint8_t value_len;
        /* GRANT, RELEASE and EXTEND of a grant with a hold time: the most
         * it may be held, ms from this entry (GRANT, EXTEND); 0: none.
         * The leader times it (src/server/gateway/leader.h). */
        uint32_t hold_ms;
        const struct lockfsm_result *result; /* RESULT only */
};

typedef void (*lockfsm_event_cb)(void *data, const struct lockfsm_event *ev);

/* The quota limits of a principal, or NULL (lockfsm_set_quota_cb()). */
typedef const uint32_t *(*lockfsm_quota_cb)(void *data, uint64_t principal);

/* Limits. Every replica must use the same values: they decide outcomes. */
struct lockfsm_limits {
        uint32_t max_sessions;          /* default 65536 */
        uint32_t max_locks_per_session; /* held + awaited, default 1024 */
        uint32_t max_waiters_per_lock;  /* default 4096 */
        uint32_t max_inflight;          /* remembered outcomes per session,
                                           default 32, at most 255 */
        uint32_t max_tombstones;        /* default 4096 */
        uint32_t min_ttl_ms;            /* default 1 */
        uint32_t max_ttl_ms;            /* default 3,600,000 (one hour) */
        uint32_t max_permits; /* a semaphore's permits, default 4096: they
                                 bound its holders too */
        uint32_t max_holders_per_lock;  /* grants of one lock (readers,
                                           a semaphore's), default 65536 */
        uint32_t max_names_per_acquire; /* names of a multi-lock, default
                                           and at most COMMAND_MULTI_MAX */
        uint32_t max_lock_delay_ms;     /* a session's own lock-delay, at most;
                                           default 60,000 (Consul's cap) */
        uint32_t max_hold_ms;           /* a grant's hold time, at most;
                                           default 86,400,000 (a day) */
};

#endif /* FSM_TYPES_H */
