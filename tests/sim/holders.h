/* The simulation checker's model of one lock's holders and queue, of every
 * kind: a read/write lock's writer and readers, a semaphore's permits
 * (docs/fsm.md, "Kinds of lock beyond the exclusive one"). Written from
 * the documented rules, not from src/fsm: it checks the GRANT, RELEASE,
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

/* An ACQUIRE `cmd` applied at `index` queued or was granted `l`: a lock
 * with neither holders nor waiters takes its kind and number of permits
 * from it. */
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

/* A QUEUE event: the lock must be held, awaited or in its lock-delay. */
int holders_queue(struct lockmodel *l, const struct simevent *ev,
                  const char *text, char *reason, size_t cap);

/* An UNQUEUE event: the waiter must be queued. */
int holders_unqueue(struct lockmodel *l, const struct simevent *ev,
                    const char *text, char *reason, size_t cap);

#endif /* TESTS_SIM_HOLDERS_H */
