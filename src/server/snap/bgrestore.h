/* A snapshot restored on a worker thread while the loop queues the entries
 * applied meanwhile, so that installing a large state never freezes it. */
#ifndef SERVER_BGRESTORE_H
#define SERVER_BGRESTORE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bgjob.h"

/*
 * libraft calls fsm->restore on its loop and takes the state as restored
 * when it returns; decoding a million locks takes the best part of a
 * second. raftfsm (RAFTFSM_RESTORE_THREAD) therefore answers at once and
 * decodes into a new state on a worker thread; the entries raft applies
 * meanwhile are copied into this queue, in order, and applied to the new
 * state once it is adopted on the loop. The state it replaces is freed on
 * a thread too (bgrestore_dispose()), since that is as long.
 *
 * Everything here but the job's function runs on the loop thread; the job
 * runs alone on its worker (bgjob.h) and shares nothing with the loop
 * until it finished (bgrestore_finished(), bgrestore_join()).
 */
struct bgrestore_entry {
        uint64_t index;
        size_t len;
        void *buf; /* a copy, malloc'ed */
};

struct bgrestore {
        struct bgjob job;
        pthread_t disposer;
        bool disposing; /* started and not joined */
        void (*dispose_fn)(void *p);
        void *dispose_p;
        /* Entries applied while the job runs, oldest at `head`. */
        struct bgrestore_entry *q;
        size_t head, n, cap;
};

void bgrestore_init(struct bgrestore *b);

/* Run `job(arg)` on a new worker thread (no job may be running). `arg` is
 * borrowed until bgrestore_join(). 0, or BATON_ENOMEM when no thread can
 * be started (the job does not run). */
int bgrestore_start(struct bgrestore *b, int (*job)(void *arg), void *arg);

/* Have `wake(data)` called on the worker thread each time a job returns,
 * right after bgrestore_finished() turns true: a loop that waits for the
 * job then needs no polling (e.g. `wake` calls uv_async_send()). Set it
 * before bgrestore_start(); `wake` must be safe to call from any thread
 * until the job is joined. NULL: nobody is told. */
void bgrestore_set_wake(struct bgrestore *b, void (*wake)(void *data),
                        void *data);

/* Whether a job was started and not joined yet. */
bool bgrestore_running(const struct bgrestore *b);

/* Whether the running job has returned, so that joining will not wait. */
bool bgrestore_finished(const struct bgrestore *b);

/* Wait for the running job and return its result. */
int bgrestore_join(struct bgrestore *b);

/* Copy an entry applied after the snapshot into the queue. 0 or
 * BATON_ENOMEM (nothing queued). */
int bgrestore_queue(struct bgrestore *b, uint64_t index, const void *buf,
                    size_t len);

/* The oldest queued entry, or NULL; it stays queued until
 * bgrestore_pop(). */
const struct bgrestore_entry *bgrestore_peek(const struct bgrestore *b);
void bgrestore_pop(struct bgrestore *b);

/* Drop every queued entry. */
void bgrestore_drop(struct bgrestore *b);

/* Call `fn(p)` on a thread of its own (joined by the next dispose or by
 * bgrestore_close()), or here when no thread can be started. */
void bgrestore_dispose(struct bgrestore *b, void (*fn)(void *p), void *p);

/* Join whatever runs and drop the queue. The job's result is lost: call
 * bgrestore_join() first to have it. */
void bgrestore_close(struct bgrestore *b);

#endif /* SERVER_BGRESTORE_H */
