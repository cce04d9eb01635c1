/* A chaos worker's observer (docs/chaos.md, "History lines"): a thread
 * with a handle of its own that watches one lock name from now on and
 * records every event it is told, in the order it is told them, as
 * f=observe lines of the worker's history; the election workload's
 * workers each run one, watching their election. */
#ifndef CHAOS_OBSERVE_H
#define CHAOS_OBSERVE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "../../include/baton.h"

#define OBSERVE_NAME_CAP 256

struct observer {
        int id;                      /* the worker's J: w= */
        const char *endpoints;       /* borrowed */
        uint32_t request_timeout_ms; /* of its handle */
        int hist_fd;                 /* the worker's history (O_APPEND) */
        char name[OBSERVE_NAME_CAP]; /* the name it watches */
        baton_client *h;             /* its own handle: no session */
        pthread_t thread;
        bool running;
        atomic_bool stop;
        /* Counts for the worker's last stderr line. */
        uint64_t n_events, n_opens, n_compacted, n_ended, n_open_errors;
};

/* Create the observer's handle and start its thread, which watches
 * `o->name` (set the fields above `h` first) until observer_stop(). The
 * thread blocks SIGTERM and SIGINT: the worker's main thread takes them.
 * 0, or a BATON_E* code of baton_client_create() (nothing started). */
int observer_start(struct observer *o);

/* Stop the thread (it notices within ~200 ms, or when a watch_open
 * under way gives up), join it, close its watch and destroy its handle.
 * Accepts an observer that was never started. */
void observer_stop(struct observer *o);

#endif /* CHAOS_OBSERVE_H */
