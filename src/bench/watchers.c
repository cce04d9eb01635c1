/* baton-bench --watchers: watches of one lock over many connections. */
#include "watchers.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "../../include/baton.h"

/* One connection and its watches, drained by one thread. */
struct drain {
        pthread_t thread;
        baton_client *c;
        baton_watch **w;
        long n;
        bool callbacks; /* no thread: the watches' callbacks count */
        /* With `callbacks`, counted on the handle's thread only. */
        uint64_t events, ended, failed;
        atomic_bool *stop;
};

struct watchers {
        struct drain *d;
        long conns;
        atomic_bool stop;
};

/* Take whatever each watch has, round after round, until told to stop;
 * a watch that ends is closed and counted. */
static void *drain_main(void *arg)
{
        struct drain *d = arg;
        struct baton_event ev;

        while (!atomic_load(d->stop)) {
                bool any = false;
                for (long i = 0; i < d->n; i++) {
                        int rv;
                        if (d->w[i] == NULL) {
                                continue;
                        }
                        while ((rv = baton_watch_next(d->w[i], &ev, 0)) == 0) {
                                d->events++;
                                any = true;
                        }
                        if (rv != BATON_ETIMEDOUT) {
                                baton_watch_close(d->w[i]);
                                d->w[i] = NULL;
                                d->ended++;
                        }
                }
                if (!any && d->n > 0 && d->w[0] != NULL) {
                        /* Nothing anywhere: wait for the first watch's next
                         * event rather than spin. */
                        if (baton_watch_next(d->w[0], &ev, 5) == 0) {
                                d->events++;
                        }
                }
        }
        return NULL;
}

/* A callback watch's events: counted (`d`'s watches share one handle,
 * so one thread runs them all). */
static void on_event(void *data, const struct baton_event *ev, int status)
{
        struct drain *d = data;

        (void)status;
        if (ev != NULL) {
                d->events++;
        } else {
                d->ended++;
        }
}

static int open_drain(struct drain *d, const char *endpoints, const char *name,
                      long n, long ttl_ms)
{
        struct baton_options o;

        baton_options_init(&o);
        o.ttl_ms = (uint32_t)ttl_ms;
        o.client_name = "baton-bench-watcher";
        if (baton_client_create(&d->c, endpoints, &o) != 0) {
                d->failed = (uint64_t)n;
                return 0;
        }
        d->w = calloc((size_t)n, sizeof *d->w);
        if (d->w == NULL) {
                return -1;
        }
        d->n = n;
        for (long i = 0; i < n; i++) {
                int rv = d->callbacks
                             ? baton_watch_open_cb(d->c, name, 0, 0, 0,
                                                   on_event, d, &d->w[i])
                             : baton_watch_open(d->c, name, 0, 0, 0, &d->w[i]);
                if (rv != 0) {
                        d->w[i] = NULL;
                        d->failed++;
                }
        }
        if (d->callbacks) {
                return 0;
        }
        return pthread_create(&d->thread, NULL, drain_main, d) == 0 ? 0 : -1;
}

struct watchers *watchers_start(const char *endpoints, const char *name, long n,
                                long conns, long ttl_ms, bool callbacks)
{
        struct watchers *w = calloc(1, sizeof *w);

        if (w == NULL || conns < 1) {
                free(w);
                return NULL;
        }
        w->d = calloc((size_t)conns, sizeof *w->d);
        if (w->d == NULL) {
                free(w);
                return NULL;
        }
        w->conns = conns;
        atomic_init(&w->stop, false);
        for (long i = 0; i < conns; i++) {
                w->d[i].stop = &w->stop;
                w->d[i].callbacks = callbacks;
                /* n spread evenly: the first n % conns get one more. */
                if (open_drain(&w->d[i], endpoints, name,
                               n / conns + (i < n % conns), ttl_ms) != 0) {
                        fprintf(stderr, "baton-bench: watchers: out of "
                                        "memory or threads\n");
                        exit(1);
                }
        }
        return w;
}

void watchers_stop(struct watchers *w, struct watchers_result *out)
{
        out->events = out->ended = out->failed = 0;
        atomic_store(&w->stop, true);
        for (long i = 0; i < w->conns; i++) {
                struct drain *d = &w->d[i];
                if (d->w != NULL && !d->callbacks) {
                        pthread_join(d->thread, NULL);
                }
                /* Once closed, a watch's callback runs no more: its counts
                 * are final and seen here (the handle's mutex orders them). */
                for (long j = 0; j < d->n; j++) {
                        baton_watch_close(d->w[j]);
                }
                baton_client_destroy(d->c);
                free(d->w);
                out->events += d->events;
                out->ended += d->ended;
                out->failed += d->failed;
        }
        free(w->d);
        free(w);
}
