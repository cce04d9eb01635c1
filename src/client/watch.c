/* libbaton's watches (include/baton.h): a WATCH request kept pending for
 * as long as the watch is open, resent from the last event delivered
 * whenever the connection changes, and its events queued for the caller.
 *
 * A handle with many watches of one name gets each event once (a frame of
 * id 0) and must give it to all of them: 10,000 watches of a lock handed
 * on 1,000 times a second are 20 million deliveries a second. So an event
 * is decoded into one reference-counted copy per frame, a watch's queue is
 * a ring of pointers to such copies (watchq.h), a callback is given the
 * copy itself, and an iterator copies out only the bytes in use. Every
 * count and queue here is guarded by the handle's mutex. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "../../include/baton.h"
#include "await.h"
#include "client.h"
#include "clock.h"
#include "request.h"
#include "watchq.h"

/* Events a callback watch takes per turn of the mutex. */
#define WATCH_BATCH 64

struct baton_watch {
        struct baton_client *c;
        struct request *r; /* the WATCH; NULL once it ended and was read */
        struct watchq q;   /* undelivered events */
        int status;        /* set when the watch ends here: BATON_ESLOW */
        /* The callback form: events go to `cb` on the handle's thread. */
        baton_watch_cb cb;
        void *data;
        struct notify_event wake; /* queued while `notified` */
        bool notified;            /* the handle's thread is told to run `cb` */
        bool running;             /* it is running `cb` now */
        bool closing; /* closed from inside `cb`: that thread frees it */
        bool closed;  /* closed from another thread, which waits */
        bool ended;   /* `cb` was told the end */
};

static void free_watch(struct baton_watch *w);

/* A callback watch has something for its callback: tell the handle's
 * thread, once until it has run it. */
static void wake_callback(struct baton_watch *w)
{
        if (w->cb != NULL && !w->notified && !w->running) {
                w->notified = notify_watch(&w->c->core.notify, &w->wake);
        }
}

/* An UNWATCH of `r`'s id on its connection, whose answer nobody reads:
 * without it the server keeps sending until the connection closes. */
static void unwatch(struct baton_client *c, const struct request *r)
{
        struct request *u;

        if (r->sends == 0 || r->gen != c->core.link.gen) {
                return; /* never out, or on a connection gone with it */
        }
        u = request_u64(PROTO_UNWATCH, r->id);
        if (u != NULL) {
                u->kind = REQUEST_UNWATCH;
                registry_submit(&c->core.registry, u, clock_now_ms());
        }
}

void watch_on_event(void *data, struct request *r,
                    const struct proto_watch_event *e, void **shared)
{
        struct baton_watch *w = r->watch;

        (void)data;
        if (w == NULL || w->status != 0) {
                return;
        }
        if (e == NULL) {
                wake_callback(w); /* its end */
                return;
        }
        if (!watchq_push(&w->q, e, shared)) {
                /* Never a gap: the watch ends here, and the caller resumes
                 * from the last event it read. */
                w->status = BATON_ESLOW;
                unwatch(w->c, r);
                r->watch = NULL;
                registry_drop(&w->c->core.registry, r);
                w->r = NULL;
                wake_callback(w);
                return;
        }
        wake_callback(w);
}

/* baton_watch_open(), with `cb` and `data` for the callback form (NULL:
 * the iterator). */
static int open_watch(baton_client *c, const char *name, int flags,
                      uint64_t from_index, uint32_t from_ord, baton_watch_cb cb,
                      void *data, baton_watch **w)
{
        size_t len = name != NULL ? strlen(name) : 0;
        int64_t deadline;
        struct baton_watch *x;
        struct request *r;
        int rv;

        if (w != NULL) {
                *w = NULL;
        }
        if (c == NULL || w == NULL || name == NULL ||
            (flags & ~BATON_WATCH_PREFIX) != 0) {
                return BATON_EINVAL;
        }
        if (len > COMMAND_NAME_MAX || (len == 0 && flags == 0)) {
                return BATON_ENAME;
        }
        x = calloc(1, sizeof *x);
        r = request_watch(name, (uint8_t)len,
                          flags & BATON_WATCH_PREFIX ? PROTO_WATCH_PREFIX : 0,
                          from_index, from_ord);
        if (x == NULL || r == NULL) {
                free(x);
                request_free(r);
                return BATON_ENOMEM;
        }
        x->c = c;
        x->r = r;
        x->cb = cb;
        x->data = data;
        x->wake.kind = NOTIFY_WATCH;
        x->wake.watch = x;
        r->watch = x;
        deadline = clock_after(clock_now_ms(), c->opts.request_timeout_ms);
        client_lock(c);
        registry_submit(&c->core.registry, r, clock_now_ms());
        rv = 0;
        /* `x->r` NULL: started, and then cut off (BATON_ESLOW, its request
         * freed) by the events that came with its start before this
         * thread looked again; its caller reads them, then that end. */
        while (x->r != NULL && r->state == REQUEST_AWAITED && !r->watching &&
               rv == 0) {
                rv = await_unreachable(c, r->mark, r);
                if (rv == 0 && !await_until(c, deadline)) {
                        rv = await_no_answer(c, r->mark, r);
                }
        }
        if (x->r == NULL) {
                rv = 0;
        } else if (rv == 0 && r->state == REQUEST_DONE) {
                rv = r->status != 0 ? client_status(r) : BATON_EINVAL;
        }
        if (rv != 0) {
                r->watch = NULL;
                unwatch(c, r);
                registry_drop(&c->core.registry, r);
                free_watch(x); /* and what its end queued for a callback */
                client_unlock(c);
                return client_user_status(rv);
        }
        *w = x;
        wake_callback(x); /* events that came with its start */
        client_unlock(c);
        return 0;
}

int baton_watch_open(baton_client *c, const char *name, int flags,
                     uint64_t from_index, uint32_t from_ord, baton_watch **w)
{
        return open_watch(c, name, flags, from_index, from_ord, NULL, NULL, w);
}

int baton_watch_open_cb(baton_client *c, const char *name, int flags,
                        uint64_t from_index, uint32_t from_ord,
                        baton_watch_cb cb, void *data, baton_watch **w)
{
        if (cb == NULL) {
                if (w != NULL) {
                        *w = NULL;
                }
                return BATON_EINVAL;
        }
        return open_watch(c, name, flags, from_index, from_ord, cb, data, w);
}

int baton_watch_next(baton_watch *w, struct baton_event *ev, int64_t wait_ms)
{
        struct baton_client *c;
        int64_t deadline;
        int rv = BATON_ETIMEDOUT;

        if (w == NULL || ev == NULL || wait_ms < BATON_WAIT_FOREVER ||
            w->cb != NULL) {
                return BATON_EINVAL;
        }
        c = w->c;
        deadline =
            wait_ms < 0 ? CLOCK_NEVER : clock_after(clock_now_ms(), wait_ms);
        client_lock(c);
        for (;;) {
                if (watchq_take(&w->q, ev)) {
                        rv = 0;
                        break;
                }
                if (w->status != 0) {
                        rv = w->status;
                        break;
                }
                if (w->r != NULL && w->r->state == REQUEST_DONE) {
                        rv = w->r->status != 0 ? w->r->status : BATON_EIO;
                        break;
                }
                if (w->r == NULL) {
                        rv = BATON_EIO; /* ended here, with no status */
                        break;
                }
                if (!await_until(c, deadline)) {
                        break;
                }
        }
        client_unlock(c);
        return rv == 0 ? 0 : client_user_status(rv);
}

/* Why `w` ended, or 0 while it goes on. */
static int end_status(const struct baton_watch *w)
{
        if (w->status != 0) {
                return w->status;
        }
        if (w->r == NULL) {
                return BATON_EIO; /* ended here, with no status */
        }
        if (w->r->state == REQUEST_DONE) {
                return w->r->status != 0 ? w->r->status : BATON_EIO;
        }
        return 0;
}

/* Free `w` and what it holds; the mutex is held, its request gone. */
static void free_watch(struct baton_watch *w)
{
        if (w->notified) {
                notify_withdraw(&w->c->core.notify, &w->wake);
        }
        watchq_close(&w->q);
        free(w);
}

/* Up to WATCH_BATCH of `w`'s events to its callback, lent to it with the
 * mutex released (one turn of the mutex for the lot, not one per event);
 * they are held until it has seen them. One that closes its own watch
 * from inside is given no more. */
static void callback_batch(struct baton_watch *w, pthread_mutex_t *mu)
{
        struct watchq_item *batch[WATCH_BATCH];
        unsigned n = 0;

        while (n < WATCH_BATCH && (batch[n] = watchq_pop(&w->q)) != NULL) {
                n++;
        }
        client_effects(w->c);
        pthread_mutex_unlock(mu);
        /* `closing` is only ever set on this thread, by the callback. */
        for (unsigned i = 0; i < n && !w->closing; i++) {
                w->cb(w->data, &batch[i]->ev, 0);
        }
        pthread_mutex_lock(mu);
        for (unsigned i = 0; i < n; i++) {
                watchq_unref(batch[i]);
        }
}

void watch_callbacks(struct baton_watch *w, pthread_mutex_t *mu)
{
        int st;

        w->notified = false;
        w->running = true;
        for (;;) {
                if (w->closed) {
                        break; /* its closer waits for this return */
                } else if (w->q.n > 0) {
                        callback_batch(w, mu);
                } else if (!w->ended && (st = end_status(w)) != 0) {
                        w->ended = true;
                        client_effects(w->c);
                        pthread_mutex_unlock(mu);
                        w->cb(w->data, NULL, client_user_status(st));
                        pthread_mutex_lock(mu);
                } else {
                        break;
                }
                if (w->closing) {
                        free_watch(w);
                        return;
                }
        }
        w->running = false;
        pthread_cond_broadcast(&w->c->cv);
}

void baton_watch_close(baton_watch *w)
{
        struct baton_client *c;

        if (w == NULL) {
                return;
        }
        c = w->c;
        client_lock(c);
        if (w->r != NULL) {
                w->r->watch = NULL;
                unwatch(c, w->r);
                registry_drop(&c->core.registry, w->r);
                w->r = NULL;
        }
        if (w->running && pthread_equal(pthread_self(), c->loop.thread)) {
                /* From inside its own callback: freed when it returns. */
                w->closing = true;
                client_unlock(c);
                return;
        }
        w->closed = true;
        client_effects(c); /* the UNWATCH, before this thread sleeps */
        while (w->running) {
                pthread_cond_wait(&c->cv, &c->mu);
        }
        free_watch(w);
        client_unlock(c);
}
