/* Threads that call baton_acquire() on a handle, so that a case can leave
 * one call blocked and go on to act on the lock it waits for. */
#ifndef TESTS_CLIENT_ACQTHREAD_H
#define TESTS_CLIENT_ACQTHREAD_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "../../include/baton.h"

/* One baton_acquire() on its own thread; the results are valid once `done`
 * is true (or after pthread_join(thread)). */
struct acqthread {
        pthread_t thread;
        baton_client *c;
        const char *name;
        uint64_t owner;
        int64_t wait_ms;
        int rv;          /* what baton_acquire() returned */
        uint64_t token;  /* the token it gave, on success */
        int64_t started; /* tclient_now_ms() when the call began */
        int64_t took;    /* how long it ran, in ms */
        atomic_bool done;
};

/* Starts baton_acquire(c, name, owner, wait_ms) on a new thread (asserts it
 * could). `c` and `name` are borrowed until the thread is joined. */
void acqthread_start_owner(struct acqthread *k, baton_client *c,
                           const char *name, uint64_t owner, int64_t wait_ms);

/* The same for BATON_OWNER_THREAD, the calling thread's own owner. */
void acqthread_start(struct acqthread *k, baton_client *c, const char *name,
                     int64_t wait_ms);

/* Polls until the lock has at least `waiters` waiters (a QUERY is
 * linearizable); fails the case after LIVECLUSTER_HEALTHY_MS. */
void acqthread_wait_waiters(baton_client *c, const char *name,
                            uint32_t waiters);

#endif /* TESTS_CLIENT_ACQTHREAD_H */
