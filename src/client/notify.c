/* The queue of user callbacks that the background thread delivers. */
#include "notify.h"

#include <stdlib.h>
#include <string.h>

void notify_init(struct notify *n)
{
        queue_init(&n->events);
        n->muted = false;
        n->dropped = 0;
}

void notify_close(struct notify *n)
{
        struct notify_event *e;

        while ((e = notify_pop(n)) != NULL) {
                if (e->kind != NOTIFY_WATCH) {
                        free(e);
                }
        }
}

static struct notify_event *push(struct notify *n, int kind)
{
        struct notify_event *e;

        if (n->muted) {
                return NULL;
        }
        e = calloc(1, sizeof *e);
        if (e == NULL) {
                n->dropped++;
                return NULL;
        }
        e->kind = kind;
        queue_push_tail(&n->events, &e->link);
        return e;
}

void notify_state(struct notify *n, int state)
{
        struct notify_event *e = push(n, NOTIFY_STATE);

        if (e != NULL) {
                e->state = state;
        }
}

void notify_lost(struct notify *n, const char *name, uint8_t name_len,
                 uint64_t token)
{
        struct notify_event *e = push(n, NOTIFY_LOST);

        if (e != NULL) {
                memcpy(e->name, name, name_len);
                e->name[name_len] = '\0';
                e->token = token;
        }
}

bool notify_watch(struct notify *n, struct notify_event *e)
{
        if (n->muted) {
                return false;
        }
        queue_push_tail(&n->events, &e->link);
        return true;
}

void notify_withdraw(struct notify *n, struct notify_event *e)
{
        (void)n;
        queue_remove(&e->link);
}

struct notify_event *notify_pop(struct notify *n)
{
        struct queue *q;

        if (queue_empty(&n->events)) {
                return NULL;
        }
        q = queue_head(&n->events);
        queue_remove(q);
        return QUEUE_DATA(q, struct notify_event, link);
}
