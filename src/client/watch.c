/* libbaton's watches (include/baton.h): a WATCH request kept pending for
 * as long as the watch is open, resent from the last event delivered
 * whenever the connection changes, and its events queued for the caller. */
#include <stdlib.h>
#include <string.h>

#include "../../include/baton.h"
#include "client.h"
#include "clock.h"
#include "request.h"

/* Undelivered events a watch keeps before it cuts itself off. */
#define WATCH_QUEUE_MAX 65536

struct watch_item {
        struct queue link;
        struct baton_event ev;
};

struct baton_watch {
        struct baton_client *c;
        struct request *r;  /* the WATCH; NULL once it ended and was read */
        struct queue items; /* struct watch_item, oldest first */
        unsigned n;
        int status; /* set when the watch ends here: BATON_ESLOW */
};

static void take_string(char *out, const struct proto_string *s)
{
        if (s->len > 0) {
                memcpy(out, s->p, s->len);
        }
        out[s->len] = '\0';
}

/* An UNWATCH of `r`'s id on its connection, whose answer nobody reads:
 * without it the server keeps sending until the connection closes. */
static void unwatch(struct baton_client *c, const struct request *r)
{
        struct request *u;

        if (r->sends == 0 || r->gen != c->link.gen) {
                return; /* never out, or on a connection gone with it */
        }
        u = request_u64(PROTO_UNWATCH, r->id);
        if (u != NULL) {
                u->kind = REQUEST_UNWATCH;
                registry_submit(&c->registry, u);
        }
}

void watch_on_event(void *data, struct request *r,
                    const struct proto_watch_event *e)
{
        struct baton_watch *w = r->watch;
        struct watch_item *it;

        (void)data;
        if (w == NULL || w->status != 0) {
                return;
        }
        it = w->n < WATCH_QUEUE_MAX ? calloc(1, sizeof *it) : NULL;
        if (it == NULL) {
                /* Never a gap: the watch ends here, and the caller resumes
                 * from the last event it read. */
                w->status = BATON_ESLOW;
                unwatch(w->c, r);
                r->watch = NULL;
                registry_drop(&w->c->registry, r);
                w->r = NULL;
                return;
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
        queue_push_tail(&w->items, &it->link);
        w->n++;
}

int baton_watch_open(baton_client *c, const char *name, int flags,
                     uint64_t from_index, uint32_t from_ord, baton_watch **w)
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
        queue_init(&x->items);
        r->watch = x;
        deadline = clock_after(clock_now_ms(), c->opts.request_timeout_ms);
        client_lock(c);
        registry_submit(&c->registry, r);
        rv = 0;
        while (r->state == REQUEST_AWAITED && !r->watching && rv == 0) {
                if (!registry_wait(&c->registry, deadline)) {
                        rv = registry_no_answer(&c->registry);
                }
        }
        if (rv == 0 && r->state == REQUEST_DONE) {
                rv = r->status != 0 ? r->status : BATON_EINVAL;
        }
        if (rv != 0) {
                unwatch(c, r);
                registry_drop(&c->registry, r);
                client_unlock(c);
                free(x);
                return client_user_status(rv);
        }
        client_unlock(c);
        *w = x;
        return 0;
}

/* The oldest queued event into `ev`, if any. */
static bool pop(struct baton_watch *w, struct baton_event *ev)
{
        struct watch_item *it;

        if (w->n == 0) {
                return false;
        }
        it = QUEUE_DATA(queue_head(&w->items), struct watch_item, link);
        queue_remove(&it->link);
        w->n--;
        *ev = it->ev;
        free(it);
        return true;
}

int baton_watch_next(baton_watch *w, struct baton_event *ev, int64_t wait_ms)
{
        struct baton_client *c;
        int64_t deadline;
        int rv = BATON_ETIMEDOUT;

        if (w == NULL || ev == NULL || wait_ms < BATON_WAIT_FOREVER) {
                return BATON_EINVAL;
        }
        c = w->c;
        deadline =
            wait_ms < 0 ? CLOCK_NEVER : clock_after(clock_now_ms(), wait_ms);
        client_lock(c);
        for (;;) {
                if (pop(w, ev)) {
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
                if (!registry_wait(&c->registry, deadline)) {
                        break;
                }
        }
        client_unlock(c);
        return rv == 0 ? 0 : client_user_status(rv);
}

void baton_watch_close(baton_watch *w)
{
        struct baton_event ev;

        if (w == NULL) {
                return;
        }
        client_lock(w->c);
        if (w->r != NULL) {
                w->r->watch = NULL;
                unwatch(w->c, w->r);
                registry_drop(&w->c->registry, w->r);
        }
        while (pop(w, &ev)) {
        }
        client_unlock(w->c);
        free(w);
}
