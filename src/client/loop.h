/* The background thread of a handle: it keeps the session's lease and
 * keepalives, drives the link and the registry, and runs the user's
 * callbacks. */
#ifndef CLIENT_LOOP_H
#define CLIENT_LOOP_H

#include <pthread.h>
#include <stdbool.h>

#include "../../include/baton.h"
#include "linkio.h"
#include "core.h"

/*
 * Every pointer is borrowed from the handle. The thread holds `mu` except
 * while it sleeps in poll() and while it runs a callback of `opts`; with
 * `mu` held it tells the core's registry so (registry.on_loop), which leaves
 * the frames of requests made meanwhile to it.
 */
struct loop {
        pthread_t thread;
        bool stop; /* under `mu`: the thread must exit */
        pthread_mutex_t *mu;
        pthread_cond_t *cv;   /* the callers wait on it */
        baton_client *handle; /* the callbacks' first argument */
        const struct baton_options *opts;
        struct core *core; /* the lease, the requests, the callbacks */
        struct linkio *io; /* and through it, the core's link */
};

/* Run the callback of watch `w` (watch.c) for each event it has, and for
 * its end, with `mu` (held on entry and on return) released around each
 * call. */
void watch_callbacks(struct baton_watch *w, pthread_mutex_t *mu);

/* Start the thread (it takes no signals). 0 or BATON_ENOMEM. */
int loop_start(struct loop *lp);

/* Ask the thread to exit (mutex held), then wait for it (mutex not held).
 * It closes the connection on its way out. */
void loop_stop(struct loop *lp);
void loop_join(struct loop *lp);

#endif /* CLIENT_LOOP_H */
