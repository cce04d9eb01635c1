/* One job run on a thread of its own while the event loop goes on, its end
 * seen by the loop without waiting. */
#ifndef SERVER_BGJOB_H
#define SERVER_BGJOB_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

/*
 * The shape under bgrestore.h (a snapshot decoded while raft applies) and
 * snapspill.h (a tail segment written into a file): the loop starts the
 * job, polls bgjob_finished() each turn (or is woken, bgjob_set_wake()),
 * and joins only once the job returned, so that it never waits behind one.
 *
 * The job runs alone on its thread and shares nothing with the loop until
 * it returned: whatever it wrote is visible to the loop once
 * bgjob_finished() says true (release on the worker, acquire here).
 * Everything here but the job and `wake` runs on the loop thread.
 */
struct bgjob {
        pthread_t thread;
        bool running;         /* started and not joined */
        atomic_bool finished; /* the job returned */
        int (*fn)(void *arg);
        void *arg;
        int rv; /* the job's result, once finished */
        void (*wake)(void *data);
        void *wake_data;
};

void bgjob_init(struct bgjob *j);

/* Run `fn(arg)` on a new thread (no job may be running). `arg` is borrowed
 * until bgjob_join(). 0, or BATON_ENOMEM when no thread can be started
 * (the job does not run). */
int bgjob_start(struct bgjob *j, int (*fn)(void *arg), void *arg);

/* Have `wake(data)` called on the worker thread each time a job returns,
 * right after bgjob_finished() turns true: a loop that waits for the job
 * then needs no polling (e.g. `wake` calls uv_async_send()). Set it before
 * bgjob_start(); `wake` must be safe to call from any thread until the job
 * is joined. NULL: nobody is told. */
void bgjob_set_wake(struct bgjob *j, void (*wake)(void *data), void *data);

/* Whether a job was started and not joined yet. */
bool bgjob_running(const struct bgjob *j);

/* Whether the running job has returned, so that joining will not wait. */
bool bgjob_finished(const struct bgjob *j);

/* Wait for the running job and return its result (0 when none runs). */
int bgjob_join(struct bgjob *j);

#endif /* SERVER_BGJOB_H */
