/* The reference model of the lock state machine for test_model: plain
 * arrays and linear scans, written from docs/fsm.md, with the events it
 * predicts in the form lockfsm reports them. */
#ifndef TESTS_UNIT_MODEL_H
#define TESTS_UNIT_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../src/proto/command.h"
#include "../../src/fsm/lockfsm.h"

/*
 * Small limits, so that every limit error is hit often: six sessions with
 * two owners each compete for four locks, and a session may remember only
 * four outcomes before it must acknowledge some.
 */
enum {
        LIM_SESSIONS = 6,
        LIM_LOCKS = 3,
        LIM_WAITERS = 3,
        LIM_INFLIGHT = 4,
        LIM_TOMBS = 4,
        LIM_MIN_TTL = 100,
        LIM_MAX_TTL = 10000,
        LIM_PERMITS = 4, /* a semaphore's permits at most */
        LIM_HOLDERS = 3, /* grants of one lock at once */
        LIM_NAMES = 3,   /* names of one multi-lock */
        LIM_DELAY = 900, /* a session's own lock-delay, at most */
};

/* Capacities of the model's plain arrays. A broken model variant (the
 * negative controls) can keep locks a correct one would free, so the lock
 * table is larger than the limits need. */
enum {
        CAP_LOCKS = 64,
        CAP_EVENTS = 64,
        CAP_KNOWN = 256,
        CAP_HIST = 8,
        CAP_TOKENS = 16,
        CAP_HOLDERS = LIM_SESSIONS * LIM_LOCKS, /* holds of one lock */
};

/* The deliberately wrong model variants used by the negative controls. */
enum {
        BUG_FORGET = 1 << 0,      /* retries run again: no exactly-once */
        BUG_DEAD_WAITER = 1 << 1, /* EXPIRE keeps the session's waiters */
        BUG_TWICE = 1 << 2,       /* an entry hands a lock on twice */
        BUG_STARVE = 1 << 3,      /* readers overtake a waiting writer */
        BUG_OVERGRANT = 1 << 4,   /* a semaphore grants one permit too many */
        BUG_NODELAY = 1 << 5,     /* a lock in its lock-delay is granted */
        BUG_PARTIAL = 1 << 6,     /* a multi-lock takes its free names at
                                     once and waits for the rest */
        BUG_OWNDELAY = 1 << 7,    /* a session's own lock-delay ignored */
        BUG_PROCLAIM = 1 << 8,    /* a stale leadership's PROCLAIM takes */
};

/* ------------------------------------------------------------------------ */
/* Events, as the machine reports them and as the model predicts them. */

struct ev {
        uint8_t type;
        uint8_t cause;
        uint64_t index;
        uint64_t session;
        uint64_t seq;
        uint64_t owner;
        uint64_t token;
        uint64_t nonce;
        uint32_t wait_ms;
        int status;
        uint8_t mode;
        uint32_t permits;
        uint8_t name_len;
        char name[COMMAND_NAME_MAX];
        uint8_t value_len; /* an election's GRANT, QUEUE, PROCLAIM */
        char value[COMMAND_VALUE_MAX];
        bool has_result;
        struct lockfsm_result result;
};

struct evlog {
        struct ev ev[CAP_EVENTS];
        unsigned n;
        bool overflow;
};

/* A lockfsm event callback: records the event in the struct evlog `data`. */
void on_event(void *data, const struct lockfsm_event *e);

/* ------------------------------------------------------------------------ */
/* The reference model: plain arrays and linear scans, nothing clever. */

struct mout {
        uint64_t seq;
        struct lockfsm_result res;
};

struct msess {
        uint64_t id;
        uint64_t nonce;
        uint64_t floor;
        uint32_t ttl;
        uint32_t delay;   /* its own lock-delay */
        uint32_t revoked; /* grants of it REVOKE_LOCK ended */
        uint8_t client_len;
        char client[COMMAND_CLIENT_NAME_MAX];
        uint8_t hash[COMMAND_HASH_SIZE]; /* OPEN's; zero without */
        struct mout out[LIM_INFLIGHT];   /* ordered by seq */
        unsigned nout;
};

struct mtomb {
        uint64_t session;
        int status; /* BATON_EEXPIRED or BATON_ECLOSED */
};

struct mwaiter {
        uint64_t session;
        uint64_t owner;
        uint64_t seq;
        uint64_t queued_at;
        uint32_t wait_ms;
        uint8_t mode;
        uint32_t permits;  /* a semaphore's */
        bool multi;        /* a name of a multi-lock: (session, seq) */
        uint8_t value_len; /* an election's candidate: its value */
        char value[COMMAND_VALUE_MAX];
};

struct mhold {
        uint64_t session;
        uint64_t owner;
        uint64_t seq; /* of the ACQUIRE that was granted */
        uint64_t token;
        uint64_t attached;  /* model.attached when granted: ties' order */
        uint32_t granted_s; /* the model's clock when granted, in s */
        uint32_t count;
        uint8_t mode;
        uint32_t permits;  /* a semaphore's */
        uint8_t value_len; /* an election's leader: its value */
        char value[COMMAND_VALUE_MAX];
};

/* A read/write lock exists while held, or between holders: freed by an
 * entry that granted it already, it waits (no holds) for the next entry
 * to admit the head of its queue, or is deleted at the entry's end when
 * no one waits. Holders are one writer, readers, or one owner's write and
 * read grants (docs/fsm.md, "Read/write locks"). A semaphore's hold
 * permits, at most `limit` of them in all ("Semaphores"). */
struct mlock {
        uint8_t name_len;
        char name[COMMAND_NAME_MAX];
        bool semaphore;
        /* An election ("Elections"): its holds and waiters are of mode
         * COMMAND_MODE_ELECTION here, writers with values; the machine
         * records them as writers of a lock of that kind. */
        bool election;
        uint32_t limit; /* a semaphore's permits; a blocked lock's delay */
        bool blocked;   /* in its lock-delay, until an UNBLOCK */
        uint64_t created;
        uint64_t last_grant; /* index of the entry that granted it last */
        bool entry_writer;   /* that entry granted it to a writer */
        bool entry_ended;    /* a grant that entry made has ended */
        struct mhold h[CAP_HOLDERS]; /* in the order granted */
        unsigned nh;
        struct mwaiter w[LIM_WAITERS]; /* FIFO */
        unsigned nw;
};

struct model {
        unsigned bugs;
        uint64_t stamp;               /* the last command's (lockfsm.h) */
        uint64_t clock_ms;            /* the largest CLOCK so far */
        bool overflow;                /* a broken variant outgrew the arrays */
        unsigned long ties;           /* ends whose grants shared a token */
        uint64_t attached;            /* grants made so far */
        struct msess s[LIM_SESSIONS]; /* live, ordered by id */
        unsigned ns;
        struct mtomb t[LIM_TOMBS]; /* oldest first */
        unsigned nt;
        struct mlock l[CAP_LOCKS]; /* ordered by age (created) */
        unsigned nl;
};

/* Every field docs/fsm.md does not name for an outcome is zero. */
struct lockfsm_result rejected(int status);
struct lockfsm_result outcome(uint8_t kind, uint64_t session, uint64_t owner);

/* The live session `id`, or NULL. */
struct msess *m_session(struct model *m, uint64_t id);

/* The lock called `name`, or NULL. */
struct mlock *m_lock(struct model *m, const char *name, size_t len);

/* The holder a lookup names: the writer if one holds `l`, else the
 * oldest holder; NULL if none. */
const struct mhold *m_first_holder(const struct mlock *l);

/* A new event of `type` at `index`, caused by `cause`, appended to `log`. */
struct ev *m_ev(struct evlog *log, uint8_t type, uint64_t index, uint8_t cause);

/* Every entry starts by handing on the locks left between holders, in lock
 * age order, and ends by deleting those it freed with no one waiting. */
void m_entry_begin(struct model *m, uint64_t index, struct evlog *log);
void m_entry_end(struct model *m);

/* Each command takes a stamp: max(last + 1, the entry's index). */
uint64_t m_stamp(struct model *m, uint64_t index);

/* What QUERY of `name` answers. */
struct lockfsm_result m_query(struct model *m, const char *name, size_t len);

/* Applies one decoded command at `index`, with its events to `log`. */
struct lockfsm_result m_apply(struct model *m, uint64_t index,
                              const struct command *c, struct evlog *log);

#endif /* TESTS_UNIT_MODEL_H */
