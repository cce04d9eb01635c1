/* A watch's queue of events. */
#include "watchq.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* A new queue's ring, and the size past which an emptied ring is given
 * back (a burst does not leave 512 KiB behind in each watch). */
#define RING_MIN  8
#define RING_KEEP 256

void watchq_unref(struct watchq_item *it)
{
        if (--it->refs == 0) {
                free(it);
        }
}

/* Room for one more in `q`'s ring: false at the bound or without memory. */
static bool room(struct watchq *q)
{
        struct watchq_item **ring;
        unsigned cap;

        if (q->n < q->cap) {
                return true;
        }
        if (q->cap >= WATCHQ_MAX) {
                return false;
        }
        cap = q->cap == 0 ? RING_MIN : q->cap * 2;
        ring = malloc(cap * sizeof *ring);
        if (ring == NULL) {
                return false;
        }
        /* Unwrapped into the new ring, oldest first. */
        for (unsigned i = 0; i < q->n; i++) {
                ring[i] = q->ring[(q->head + i) % q->cap];
        }
        free(q->ring);
        q->ring = ring;
        q->cap = cap;
        q->head = 0;
        return true;
}

static void take_string(char *out, const struct proto_string *s)
{
        if (s->len > 0) {
                memcpy(out, s->p, s->len);
        }
        out[s->len] = '\0';
}

/* The frame's event `e` as one shared item, made on its first queue. */
static struct watchq_item *shared_item(const struct proto_watch_event *e,
                                       void **shared)
{
        struct watchq_item *it = *shared;

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

bool watchq_push(struct watchq *q, const struct proto_watch_event *e,
                 void **shared)
{
        struct watchq_item *it = NULL;

        if (room(q)) {
                it = shared_item(e, shared);
        }
        if (it == NULL) {
                return false;
        }
        it->refs++;
        q->ring[(q->head + q->n) % q->cap] = it;
        q->n++;
        return true;
}

struct watchq_item *watchq_pop(struct watchq *q)
{
        struct watchq_item *it;

        if (q->n == 0) {
                return NULL;
        }
        it = q->ring[q->head];
        q->head = (q->head + 1) % q->cap;
        q->n--;
        if (q->n == 0 && q->cap > RING_KEEP) {
                free(q->ring);
                q->ring = NULL;
                q->cap = 0;
                q->head = 0;
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

bool watchq_take(struct watchq *q, struct baton_event *ev)
{
        struct watchq_item *it = watchq_pop(q);

        if (it == NULL) {
                return false;
        }
        copy_event(ev, &it->ev);
        watchq_unref(it);
        return true;
}

void watchq_close(struct watchq *q)
{
        struct watchq_item *it;

        while ((it = watchq_pop(q)) != NULL) {
                watchq_unref(it);
        }
        free(q->ring);
        q->ring = NULL;
        q->cap = 0;
        q->head = 0;
}
