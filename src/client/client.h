/* The handle behind include/baton.h's baton_client, shared by the modules of
 * libbaton. */
#ifndef CLIENT_CLIENT_H
#define CLIENT_CLIENT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "../../include/baton.h"
#include "../lib/queue.h"
#include "link.h"
#include "locks.h"
#include "notify.h"
#include "session.h"

#define CLIENT_MAX_ENDPOINTS 16

/*
 * Threading: one mutex guards everything below except `thread`; callers
 * wait on `cv`, which is broadcast whenever a request is answered or the
 * session changes. The background thread (link.c) is the only one that
 * touches the socket; it drops the mutex only to poll() and to run the
 * user's callbacks.
 */
struct baton_client {
        pthread_mutex_t mu;
        pthread_cond_t cv; /* on CLOCK_MONOTONIC */
        pthread_t thread;
        bool stop; /* the background thread must exit */
        struct baton_options opts;
        char client_name[COMMAND_CLIENT_NAME_MAX + 1];
        char endpoints[CLIENT_MAX_ENDPOINTS][LINK_ADDR_MAX];
        unsigned n_endpoints;
        struct queue requests; /* struct request, creation order */
        struct link link;
        struct session session;
        struct locks locks;
        struct notify notify;
};

/* Unlink and free `r`, clearing every pointer the handle keeps to it.
 * Mutex held. */
void client_discard(struct baton_client *c, struct request *r);

#endif /* CLIENT_CLIENT_H */
