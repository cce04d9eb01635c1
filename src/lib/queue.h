/* An intrusive, circular, doubly linked list (FIFO queues and member lists). */
#ifndef LIB_QUEUE_H
#define LIB_QUEUE_H

#include <stdbool.h>
#include <stddef.h>

struct queue {
        struct queue *next;
        struct queue *prev;
};

/* The struct of type T whose member M is the queue link Q. */
#define QUEUE_DATA(Q, T, M) ((T *)(void *)((char *)(Q)-offsetof(T, M)))

#define QUEUE_FOREACH(Q, H) for ((Q) = (H)->next; (Q) != (H); (Q) = (Q)->next)

static inline void queue_init(struct queue *q)
{
        q->next = q;
        q->prev = q;
}

static inline bool queue_empty(const struct queue *q)
{
        return q->next == q;
}

static inline struct queue *queue_head(const struct queue *q)
{
        return q->next;
}

static inline struct queue *queue_tail(const struct queue *q)
{
        return q->prev;
}

/* Insert e right after the element (or list head) at. */
static inline void queue_insert_after(struct queue *at, struct queue *e)
{
        e->prev = at;
        e->next = at->next;
        at->next->prev = e;
        at->next = e;
}

static inline void queue_push_tail(struct queue *h, struct queue *e)
{
        queue_insert_after(h->prev, e);
}

static inline void queue_remove(struct queue *e)
{
        e->prev->next = e->next;
        e->next->prev = e->prev;
        queue_init(e);
}

#endif /* LIB_QUEUE_H */
