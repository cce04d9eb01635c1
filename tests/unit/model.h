/* The reference model of the lock state machine for test_model: plain
 * arrays and linear scans, written from docs/fsm.md, with the events it
 * predicts in the form lockfsm reports them. */
#ifndef TESTS_UNIT_MODEL_H
#define TESTS_UNIT_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../src/proto/command.h"
#include "../../src/fsm/acl.h"
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
        LIM_PERMITS = 4,    /* a semaphore's permits at most */
        LIM_HOLDERS = 3,    /* grants of one lock at once */
        LIM_NAMES = 3,      /* names of one multi-lock */
        LIM_DELAY = 900,    /* a session's own lock-delay, at most */
        LIM_HOLD_MS = 5000, /* a grant's hold time, at most */
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
        CAP_QUOTAS = 4, /* the generator's subjects: "*" and three teams */
};

/* The deliberately wrong model variants used by the negative controls. */
enum {
        BUG_FORGET = 1 << 0,        /* retries run again: no exactly-once */
        BUG_DEAD_WAITER = 1 << 1,   /* EXPIRE keeps the session's waiters */
        BUG_TWICE = 1 << 2,         /* an entry hands a lock on twice */
        BUG_STARVE = 1 << 3,        /* readers overtake a waiting writer */
        BUG_OVERGRANT = 1 << 4,     /* a semaphore grants one permit too many */
        BUG_NODELAY = 1 << 5,       /* a lock in its lock-delay is granted */
        BUG_PARTIAL = 1 << 6,       /* a multi-lock takes its free names at
                                       once and waits for the rest */
        BUG_OWNDELAY = 1 << 7,      /* a session's own lock-delay ignored */
        BUG_PROCLAIM = 1 << 8,      /* a stale leadership's PROCLAIM takes */
        BUG_QUOTA_LEAK = 1 << 9,    /* a released grant keeps its place in
                                       its identity's locks quota */
        BUG_QUOTA_IGNORE = 1 << 10, /* no quota refuses anything */
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
        uint32_t delay;     /* its own lock-delay */
        uint32_t revoked;   /* grants of it REVOKE_LOCK ended */
        uint64_t principal; /* OPEN's: whose quotas it counts in; 0: none */
        uint32_t leaked;    /* BUG_QUOTA_LEAK: released grants counted */
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
        uint32_t hold_ms;  /* its grant's hold time; 0: none */
        uint8_t value_len; /* its value */
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
        uint32_t hold_ms;  /* its hold time; 0: none */
        uint64_t armed;    /* the entry its hold time dates from */
        uint8_t value_len; /* its value */
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

/* A quota of the access list, as QUOTA_SET gave it: the identity's whose
 * principal this is, or the default's (principal 0, subject "*"). */
struct mquota {
        uint64_t principal;
        uint32_t limit[ACL_QUOTA_KINDS]; /* 0: no limit */
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
        struct mquota q[CAP_QUOTAS]; /* the access list's quotas */
        unsigned nq;
};

/* Every field docs/fsm.md does not name for an outcome is zero. */
struct lockfsm_result rejected(int status);
struct lockfsm_result outcome(uint8_t kind, uint64_t session, uint64_t owner);

/* An outcome as "{status=... waiters=...}", for failure messages. */
void m_result_str(char *out, size_t cap, const struct lockfsm_result *r);

/* Whether two outcomes agree on every field (and on `duplicate` when
 * `check_dup`). */
bool m_result_eq(const struct lockfsm_result *want,
                 const struct lockfsm_result *got, bool check_dup);

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

/* ------------------------------------------------------------------------ */
/* The model's inner steps, which its commands (modelcmd.c) are built from. */

/* What HOLDER, CURRENT and a CHECK's ESTALE say about a lock: `h`'s grant
 * (none: zeros) and the count of waiters. */
void m_holder_fields(struct lockfsm_result *r, const struct mlock *l,
                     const struct mhold *h);

/* An acquire or campaign by the holder of `h` itself: EHELD with the
 * hold's fields, so that the caller can tell it is already its own. */
struct lockfsm_result m_rejected_held(const struct mhold *h);

/* See model.c. */
const struct mtomb *m_tomb(const struct model *m, uint64_t id);

/* The answer for a session that is not live: its tombstone or none. */
struct lockfsm_result m_not_live(const struct model *m, uint64_t id);

/* Locks a session holds plus locks it waits for: what the limit counts. */
unsigned m_nlocks(const struct model *m, uint64_t sid);

/* See model.c. */
struct mout *m_out(struct msess *s, uint64_t seq);

/* See model.c. */
void m_remember(struct msess *s, uint64_t seq, const struct lockfsm_result *r);

/* A queued ACQUIRE's remembered outcome follows its waiter; if the client
 * has acknowledged it already there is nothing left to update. */
void m_set_out(struct model *m, uint64_t sid, uint64_t seq,
               const struct lockfsm_result *r);

/* See model.c. */
void m_ev_name(struct ev *v, const struct mlock *l);

/* See model.c. */
void m_remove_waiter(struct mlock *l, unsigned i);

/* See model.c. */
unsigned m_writers(const struct mlock *l);

/* Whether `k` more permits of semaphore `l` are free. */
bool m_permits_free(const struct model *m, const struct mlock *l, uint32_t k);

/* Whether this entry may still admit `mode`: a writer only to a lock it
 * has not granted yet, a reader or a semaphore's waiter to one it granted
 * to no writer. */
bool m_entry_allows(const struct model *m, const struct mlock *l,
                    uint64_t index, uint8_t mode);

/* A new grant of `l` with this entry's index, with its GRANT event. */
struct mhold *m_grant(struct model *m, struct mlock *l, uint64_t index,
                      uint8_t cause, const struct mwaiter *w,
                      struct evlog *log);

/* A holder or a waiter has left: admit whom the queue's head allows, or
 * delete the lock when no one holds or waits; unless this entry granted
 * it already, when its end settles it. */
void m_settle(struct model *m, struct mlock *l, uint64_t index, uint8_t cause,
              struct evlog *log);

/* Ends hold `i` of `l`, with its RELEASE event, and settles the lock. */
void m_end_hold(struct model *m, struct mlock *l, unsigned i, uint64_t index,
                uint8_t cause, struct evlog *log);

/* The multi-lock of (session, seq) leaves every queue (UNQUEUE events in
 * lock age order, with `why`), then each of its locks settles. */
void m_drop_group(struct model *m, uint64_t session, uint64_t seq,
                  uint64_t index, uint8_t cause, int why, struct evlog *log);

/* CLOSE and EXPIRE: waits leave in queue order, then grants end by token,
 * then lock age, each lock settling as it goes, then the session ends
 * with a tombstone. */
void m_end(struct model *m, uint64_t sid, int status, uint64_t index,
           uint8_t cause, uint32_t delay_ms, struct evlog *log);

/* See model.c. */
struct lockfsm_result m_open(struct model *m, uint64_t index,
                             const struct command *c, struct evlog *log);

#endif /* TESTS_UNIT_MODEL_H */
