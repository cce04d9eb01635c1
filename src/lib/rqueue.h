/* queue.h's list with 32-bit links, for records that lie close together. */
#ifndef LIB_RQUEUE_H
#define LIB_RQUEUE_H

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * An intrusive, circular, doubly linked list like queue.h's, whose links
 * are offsets from the link itself to its neighbour, in units of 8 bytes:
 * 8 bytes a link instead of 16. Every link of a list, its head included,
 * must lie within 16 GiB of the others, as records of one pool do
 * (pool.h); a head that is not in a record of that pool is out of reach.
 * A link keeps working when the whole region moves, not when one record
 * is copied elsewhere.
 */
struct rqueue {
        _Alignas(8) int32_t next;
        int32_t prev;
};

/* The struct of type T whose member M is the link Q. */
#define RQUEUE_DATA(Q, T, M) ((T *)(void *)((char *)(Q)-offsetof(T, M)))

#define RQUEUE_FOREACH(Q, H)                                                   \
        for ((Q) = rqueue_next(H); (Q) != (H); (Q) = rqueue_next(Q))

/* A 32-bit reference from one record to another within 16 GiB of it
 * (both aligned to 8): the offset that leads from `from` to `to`, in
 * units of 8 bytes, and back. */
static inline int32_t rref_of(const void *from, const void *to)
{
        ptrdiff_t d = ((const char *)to - (const char *)from) / 8;

        assert(d >= INT32_MIN && d <= INT32_MAX);
        return (int32_t)d;
}

static inline void *rref_at(const void *from, int32_t off)
{
        return (char *)(uintptr_t)from + (ptrdiff_t)off * 8;
}

static inline struct rqueue *rqueue_next(const struct rqueue *q)
{
        return rref_at(q, q->next);
}

static inline struct rqueue *rqueue_prev(const struct rqueue *q)
{
        return rref_at(q, q->prev);
}

static inline void rqueue_init(struct rqueue *q)
{
        q->next = 0;
        q->prev = 0;
}

static inline bool rqueue_empty(const struct rqueue *q)
{
        return q->next == 0;
}

static inline struct rqueue *rqueue_head(const struct rqueue *q)
{
        return rqueue_next(q);
}

static inline struct rqueue *rqueue_tail(const struct rqueue *q)
{
        return rqueue_prev(q);
}

/* Insert e right after the element (or list head) at. */
static inline void rqueue_insert_after(struct rqueue *at, struct rqueue *e)
{
        struct rqueue *n = rqueue_next(at);

        e->prev = rref_of(e, at);
        e->next = rref_of(e, n);
        n->prev = rref_of(n, e);
        at->next = rref_of(at, e);
}

static inline void rqueue_push_tail(struct rqueue *h, struct rqueue *e)
{
        rqueue_insert_after(rqueue_prev(h), e);
}

static inline void rqueue_remove(struct rqueue *e)
{
        struct rqueue *p = rqueue_prev(e);
        struct rqueue *n = rqueue_next(e);

        p->next = rref_of(p, n);
        n->prev = rref_of(n, p);
        rqueue_init(e);
}

#endif /* LIB_RQUEUE_H */
