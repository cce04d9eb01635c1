/* The simulation checker's model of one lock's holders and queue, of every
 * kind: a read/write lock's writer and readers, a semaphore's permits
 * (docs/fsm.md, "Kinds of lock beyond the exclusive one"), and of a
 * multi-lock across its locks ("Multi-locks"). Written from the
 * documented rules, not from src/fsm: it checks the GRANT, RELEASE,
 * QUEUE and UNQUEUE events node 0 reported, one by one. */
#ifndef TESTS_SIM_HOLDERS_H
#define TESTS_SIM_HOLDERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../src/proto/command.h"
#include "../lib/simcluster.h"

#define HOLDERS_MAX       32
#define HOLDERS_QUEUE_MAX 64

struct holder {
        uint64_t session;
        uint64_t owner;
        uint64_t token;
        uint8_t mode;
        uint32_t permits;
};

struct lockmodel {
        uint8_t len;
        char name[COMMAND_NAME_MAX];
        bool semaphore; /* known once a semaphore ACQUIRE created it */
        bool election;  /* known once a campaign created it */
        bool blocked;   /* in its lock-delay: BLOCK seen, no UNBLOCK yet */
        uint32_t limit;
        struct holder h[HOLDERS_MAX];
        unsigned nh;
        uint64_t last_token;               /* the last grant's */
        bool last_writer;                  /* a writer had that token */
        uint64_t last_session, last_owner; /* who had it, first */
        bool last_shared;                  /* several owners had it */
        struct {
                uint64_t session;
                uint64_t seq;
                uint64_t owner;
        } q[HOLDERS_QUEUE_MAX];
        unsigned nq;
};

/* Whether `session` holds `l` in any way. */
bool holders_has_session(const struct lockmodel *l, uint64_t session);

/* An ACQUIRE or MULTI `cmd` applied at `index` was granted `l` at once:
 * a lock with neither holders nor waiters takes its kind and number of
 * permits from it (a MULTI's are read/write locks). */
void holders_created_by(struct lockmodel *l, const struct command *cmd);

/*
 * Check a GRANT event `ev` of the entry at `index` against `l` and apply
 * it: whom the rules admit (a writer alone but for its own read grant,
 * readers while no other owner writes, a semaphore's holders within its
 * permits), the token (the entry's index, never lower than the last, and
 * shared by a writer with no other owner), and FIFO handover. `cmd` is the
 * entry's command. 0, or -1 with `reason` filled.
 */
int holders_grant(struct lockmodel *l, const struct simevent *ev,
                  const struct command *cmd, uint64_t index, bool queued,
                  const char *text, char *reason, size_t cap);

/* A RELEASE event: the grant it names must be a holder's. */
int holders_release(struct lockmodel *l, const struct simevent *ev,
                    const char *text, char *reason, size_t cap);

/* A QUEUE event: the lock must be held, awaited, in its lock-delay or
 * between holders (granted and freed by the QUEUE's own entry), unless
 * the waiter is a `multi`-lock's, which waits on every name. */
int holders_queue(struct lockmodel *l, const struct simevent *ev, bool multi,
                  const char *text, char *reason, size_t cap);

/* An UNQUEUE event: the waiter must be queued. */
int holders_unqueue(struct lockmodel *l, const struct simevent *ev,
                    const char *text, char *reason, size_t cap);

/* A PROCLAIM or EXTEND event of `l` (NULL: more locks than modelled):
 * only a holder of a grant of it, with that grant's token, changes its
 * value (SET_VALUE) or restarts its hold time (EXTEND), and only of an
 * election when the cause is a PROCLAIM. 0, or -1 with `reason` filled. */
int holders_proclaim(const struct lockmodel *l, const struct simevent *ev,
                     const char *text, char *reason, size_t cap);

/* A BLOCK or UNBLOCK event of `l` (NULL: more locks than modelled) in
 * the entry of `cmd`: an expiry or a revoke begins a lock-delay, an
 * UNBLOCK ends one that began. 0, or -1 with `reason` filled. */
int holders_delay(struct lockmodel *l, const struct simevent *ev,
                  const struct command *cmd, const char *text, char *reason,
                  size_t cap);

/* A multi-lock's request across its locks, as bits of the checker's lock
 * numbers (at most 16 locks): its names, the queues it is in, and which
 * names the entry being checked granted it or took it off. */
struct multilock {
        uint16_t names;
        uint16_t waits;
        uint16_t granted_now;
        uint16_t left_now;
};

/* What holders_multi_end() found a multi-lock's entry did. */
enum {
        HOLDERS_MULTI_QUEUED = 0, /* queued on every name */
        HOLDERS_MULTI_NOW,        /* granted every name by its own entry */
        HOLDERS_MULTI_WAITED,     /* granted every name after waiting */
        HOLDERS_MULTI_LEFT,       /* left every queue without a grant */
};

/* A QUEUE, GRANT or UNQUEUE event `ev` of the lock whose bit is `bit`, of
 * multi-lock `ml`, applied by the MULTI's `own` entry or a later one:
 * note what the entry moves. A multi-lock queues only in its own entry,
 * on each name once, and is granted or leaves only names it waits on (or
 * any of its names when granted at once). 0, or -1 with `reason`. */
int holders_multi_event(struct multilock *ml, uint16_t bit,
                        const struct simevent *ev, bool own, const char *text,
                        char *reason, size_t cap);

/* After the events of the entry at `index` that moved multi-lock `ml` of
 * (`session`, `seq`): it was granted every name, or left every queue it
 * was in, or queued on every name, all in that one entry, so that it is
 * held wholly or not at all. HOLDERS_MULTI_*, or -1 with `reason`. */
int holders_multi_end(struct multilock *ml, uint64_t index, uint64_t session,
                      uint64_t seq, char *reason, size_t cap);

#endif /* TESTS_SIM_HOLDERS_H */
