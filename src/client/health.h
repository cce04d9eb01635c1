/* baton_health_check()'s thread and baton_session_close(): a session
 * ended from the client's side, at once, when its owner is not well. */
#ifndef CLIENT_HEALTH_H
#define CLIENT_HEALTH_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "../../include/baton.h"

/* A handle's health check; every field under the handle's `mu`. */
struct health {
        baton_health_fn fn; /* NULL: none */
        void *data;
        uint32_t interval_ms;
        bool running; /* the thread exists (joined by health_stop()) */
        bool stop;    /* the thread is asked to end */
        pthread_t thread;
};

struct baton_client;

/* Stop the handle's check and join its thread, if any; `mu` not held.
 * After it, no check runs. */
void health_stop(struct baton_client *c);

/* End the handle's live session `id` (0: whichever is live), `mu` held:
 * CLOSE, or given up locally when the cluster cannot be told. */
int health_close(struct baton_client *c, uint64_t id);

#endif /* CLIENT_HEALTH_H */
