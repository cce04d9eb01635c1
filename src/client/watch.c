/* libbaton's watches (include/baton.h): a WATCH request kept pending for
 * as long as the watch is open, resent from the last event delivered
 * whenever the connection changes, and its events queued for the caller.
 *
 * A handle with many watches of one name gets each event once (a frame of
 * id 0) and must give it to all of them: 10,000 watches of a lock handed
 * on 1,000 times a second are 20 million deliveries a second. So an event
 * is decoded into one reference-counted copy per frame, a watch's queue is
 * a ring of pointers to such copies, a callback is given the copy itself,
 * and an iterator copies out only the bytes in use. Every count and queue
 * here is guarded by the handle's mutex. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "../../include/baton.h"
#include "await.h"
#include "client.h"
#include "clock.h"
#include "request.h"

/* Undelivered events a watch keeps before it cuts itself off. */
#define WATCH_QUEUE_MAX 65536
/* A new watch's ring; it doubles up to WATCH_QUEUE_MAX as needed, and a
 * ring emptied after it grew past WATCH_RING_KEEP is given back (a burst
 * does not leave 512 KiB behind in each watch it went through). */
#define WATCH_RING_MIN  8
#define WATCH_RING_KEEP 256
/* Events a callback watch takes per turn of the mutex. */
#define WATCH_BATCH 64

/* One event as received, shared by every watch it was queued for. */
struct watch_item {
        unsigned refs; /* queues (and callbacks running) that hold it */
        struct baton_event ev;
};

struct baton_watch {
        struct baton_client *c;
        struct request *r; /* the WATCH; NULL once it ended and was read */
        /* Undelivered events, oldest at ring[head]: n of cap slots. */
        struct watch_item **ring;
        unsigned cap, head, n;
        int status; /* set when the watch ends here: BATON_ESLOW */
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

static void take_string(char *out, const struct proto_string *s)
{
        if (s->len > 0) {
                memcpy(out, s->p, s->len);
        }
        out[s->len] = '\0';
}

/* A callback watch has something for its callback: tell the handle's
 * thread, once until it has run it. */
static void wake_callback(struct baton_watch *w)
{
        if (w->cb != NULL && !w->notified && !w->running) {
                w->notified = notify_watch(&w->c->core.notify, &w->wake);
        }
}

static void unref(struct watch_item *it)
{
        if (--it->refs == 0) {
                free(it);
        }
}

/* Room for one more in `w`'s ring: false at the bound or without memory. */
static bool room(struct baton_watch *w)
{
        struct watch_item **ring;
        unsigned cap;

        if (w->n < w->cap) {
                return true;
        }
        if (w->cap >= WATCH_QUEUE_MAX) {
                return false;
        }
        cap = w->cap == 0 ? WATCH_RING_MIN : w->cap * 2;
        ring = malloc(cap * sizeof *ring);
        if (ring == NULL) {
                return false;
        }
        /* Unwrapped into the new ring, oldest first. */
        for (unsigned i = 0; i < w->n; i++) {
                ring[i] = w->ring[(w->head + i) % w->cap];
        }
        free(w->ring);
        w->ring = ring;
        w->cap = cap;
        w->head = 0;
        return true;
}

/* The frame's event `e` as one shared item, made on its first watch. */
static struct watch_item *shared_item(const struct proto_watch_event *e,
                                      void **shared)
{
        struct watch_item *it = *shared;

        if (it != NULL) {
                return it;
        }
        /* Zeroed: a callback may look at every byte of what it borrows. */
        it = calloc(1, sizeof *it);
        if (it == NULL) {
                return NULL;
        }
        it->ev.kind = e->kind;
        it->ev.cause = e->cause;
        it->ev.index = e->index;
        it->ev.ord = e->ord;
        it->ev.session = e->session;
        it->ev.owner = e->owner;
        it->ev.token = e->token;
        it->ev.mode = e->mode;
        it->ev.permits = e->permits;
        take_string(it->ev.name, &e->name);
        take_string(it->ev.value, &e->value);
        *shared = it;
        return it;
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
        struct watch_item *it = NULL;

        (void)data;
        if (w == NULL || w->status != 0) {
                return;
        }
        if (e == NULL) {
                wake_callback(w); /* its end */
                return;
        }
        if (room(w)) {
                it = shared_item(e, shared);
        }
        if (it == NULL) {
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
        it->refs++;
        w->ring[(w->head + w->n) % w->cap] = it;
        w->n++;
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
                rv = r->status != 0 ? r->status : BATON_EINVAL;
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

/* The oldest queued event, taken off `w`'s ring (the caller unrefs it),
 * or NULL. */
static struct watch_item *pop(struct baton_watch *w)
{
        struct watch_item *it;

        if (w->n == 0) {
                return NULL;
        }
        it = w->ring[w->head];
        w->head = (w->head + 1) % w->cap;
        w->n--;
        if (w->n == 0 && w->cap > WATCH_RING_KEEP) {
                free(w->ring);
                w->ring = NULL;
                w->cap = 0;
                w->head = 0;
        }
        return it;
}

/* `src` into `ev`, its strings' bytes in use only (most of the struct is
 * room for names and values that are seldom long). */
static void copy_event(struct baton_event *ev, const struct baton_event *src)
{
        memcpy(ev, src, offsetof(struct baton_event, name));
        memcpy(ev->name, src->name, strlen(src->name) + 1);
        memcpy(ev->value, src->value, strlen(src->value) + 1);
}

/* The oldest queued event into `ev`, if any. */
static bool take(struct baton_watch *w, struct baton_event *ev)
{
        struct watch_item *it = pop(w);

        if (it == NULL) {
                return false;
        }
        copy_event(ev, &it->ev);
        unref(it);
        return true;
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
                if (take(w, ev)) {
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
        struct watch_item *it;

        if (w->notified) {
                notify_withdraw(&w->c->core.notify, &w->wake);
        }
        while ((it = pop(w)) != NULL) {
                unref(it);
        }
        free(w->ring);
        free(w);
}

/* Up to WATCH_BATCH of `w`'s events to its callback, lent to it with the
 * mutex released (one turn of the mutex for the lot, not one per event);
 * they are held until it has seen them. One that closes its own watch
 * from inside is given no more. */
static void callback_batch(struct baton_watch *w, pthread_mutex_t *mu)
{
        struct watch_item *batch[WATCH_BATCH];
        unsigned n = 0;

        while (n < WATCH_BATCH && (batch[n] = pop(w)) != NULL) {
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
                unref(batch[i]);
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
                } else if (w->n > 0) {
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
