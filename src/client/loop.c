/* The background thread of a handle. */
#include "loop.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include "effects.h"
#include "clock.h"

#define POLL_MAX_MS 1000 /* the loop looks around at least this often */

/* Whether the handle needs a connection now. */
static bool needed(const struct loop *lp)
{
        return core_wants_link(lp->core);
}

static int64_t min64(int64_t a, int64_t b)
{
        return a < b ? a : b;
}

/* How long poll() may sleep. */
static int timeout_ms(const struct loop *lp, int64_t now)
{
        int64_t t = min64(core_next_tick(lp->core), now + POLL_MAX_MS);

        t = min64(t, linkio_next_event(lp->io, needed(lp)));
        return t <= now ? 0 : (int)(t - now);
}

/* Run the user's callbacks with the mutex released. True if any ran. */
static bool deliver(struct loop *lp)
{
        const struct baton_options *o = lp->opts;
        struct notify_event *e;
        bool any = false;

        while ((e = core_next_notice(lp->core)) != NULL) {
                any = true;
                /* What the round did is told before the mutex goes. */
                effects_apply(&lp->core->registry, lp->io, lp->cv);
                lp->core->registry.on_loop =
                    false; /* the callbacks are the user's */
                if (e->kind == NOTIFY_WATCH) {
                        /* It takes its events under the mutex. `e` is
                         * the watch's own, and may be freed with it. */
                        watch_callbacks(e->watch, lp->mu);
                        lp->core->registry.on_loop = true;
                        continue;
                }
                pthread_mutex_unlock(lp->mu);
                if (e->kind == NOTIFY_STATE && o->on_session != NULL) {
                        o->on_session(lp->handle, e->state, o->data);
                } else if (e->kind == NOTIFY_LOST && o->on_lock_lost != NULL) {
                        o->on_lock_lost(lp->handle, e->name, e->token, o->data);
                }
                free(e);
                pthread_mutex_lock(lp->mu);
                lp->core->registry.on_loop = true;
        }
        return any;
}

/* One round with the mutex held: the lease, the connection, the
 * requests, then poll() with the mutex released and what it found. */
static void *run(void *arg)
{
        struct loop *lp = arg;
        struct linkio *io = lp->io;
        struct pollfd pfd[2];
        uint64_t drain;
        int64_t now;
        nfds_t n;
        short events;
        int wait;

        pthread_mutex_lock(lp->mu);
        lp->core->registry.on_loop = true;
        while (!lp->stop) {
                now = clock_now_ms();
                core_lease_tick(lp->core, now);
                if (linkio_step(io, now, core_dial(lp->core, now))) {
                        core_tick(lp->core, now);
                        if (linkio_busy(io)) {
                                linkio_flush(io, now);
                        }
                }
                if (deliver(lp)) {
                        continue;
                }
                wait = timeout_ms(lp, now);
                pfd[0].fd = io->wake;
                pfd[0].events = POLLIN;
                pfd[0].revents = 0;
                n = 1;
                events = linkio_events(io);
                if (events != 0) {
                        pfd[1].fd = io->fd;
                        pfd[1].events = events;
                        pfd[1].revents = 0;
                        n = 2;
                }
                effects_apply(&lp->core->registry, lp->io, lp->cv);
                lp->core->registry.on_loop = false;
                pthread_mutex_unlock(lp->mu);
                if (poll(pfd, n, wait) < 0 && errno != EINTR) {
                        pfd[0].revents = 0;
                        n = 1;
                }
                pthread_mutex_lock(lp->mu);
                lp->core->registry.on_loop = true;
                if (pfd[0].revents & POLLIN) {
                        ssize_t rv = read(io->wake, &drain, sizeof drain);
                        (void)rv;
                }
                if (n < 2 || pfd[1].revents == 0 || lp->stop) {
                        continue;
                }
                linkio_ready(io, pfd[1].revents, clock_now_ms());
        }
        linkio_disconnect(io, clock_now_ms());
        effects_apply(&lp->core->registry, lp->io, lp->cv);
        lp->core->registry.on_loop = false;
        pthread_mutex_unlock(lp->mu);
        return NULL;
}

int loop_start(struct loop *lp)
{
        sigset_t all, old;
        int rv;

        lp->stop = false;
        /* The background thread takes no signals: they belong to the
         * user's threads. */
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        rv = pthread_create(&lp->thread, NULL, run, lp);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        return rv != 0 ? BATON_ENOMEM : 0;
}

void loop_stop(struct loop *lp)
{
        lp->stop = true;
        linkio_wake(lp->io);
}

void loop_join(struct loop *lp)
{
        pthread_join(lp->thread, NULL);
}
