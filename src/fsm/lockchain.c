/* The entry's lists of locks (lockchain.h). */
#include "lockchain.h"

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>

#include "state.h"

void lockchain_init(struct lockchain *c)
{
        c->head = NULL;
        c->tail = NULL;
        c->n = 0;
}

struct lock *lockchain_next(const struct lock *l)
{
        const char *next;

        if (l->entry_next == 0) {
                return NULL;
        }
        next = rref_at(&l->entry_next, l->entry_next);
        return (struct lock *)(void *)(next -
                                       offsetof(struct lock, entry_next));
}

/* Make `next` follow `l`; NULL ends the chain at `l`. */
static void link_to(struct lock *l, const struct lock *next)
{
        l->entry_next =
            next == NULL ? 0 : rref_of(&l->entry_next, &next->entry_next);
}

void lockchain_push(struct lockchain *c, struct lock *l)
{
        link_to(l, NULL);
        if (c->tail == NULL) {
                c->head = l;
        } else {
                link_to(c->tail, l);
        }
        c->tail = l;
        c->n++;
}

struct lock *lockchain_pop(struct lockchain *c)
{
        struct lock *l = c->head;

        if (l != NULL) {
                c->head = lockchain_next(l);
                if (c->head == NULL) {
                        c->tail = NULL;
                }
                link_to(l, NULL);
                c->n--;
        }
        return l;
}

void lockchain_remove(struct lockchain *c, struct lock *l)
{
        struct lock *prev = NULL, *at = c->head;

        while (at != l) {
                assert(at != NULL);
                prev = at;
                at = lockchain_next(at);
        }
        if (prev == NULL) {
                (void)lockchain_pop(c);
                return;
        }
        link_to(prev, lockchain_next(l));
        if (c->tail == l) {
                c->tail = prev;
        }
        link_to(l, NULL);
        c->n--;
}

/* Merge the sorted chains `a` and `b` (from `a` first for equal stamps,
 * so the sort is stable) onto `out`. */
static void merge(struct lockchain *out, struct lockchain *a,
                  struct lockchain *b)
{
        while (a->head != NULL || b->head != NULL) {
                struct lockchain *from = a;
                if (a->head == NULL ||
                    (b->head != NULL && b->head->created < a->head->created)) {
                        from = b;
                }
                lockchain_push(out, lockchain_pop(from));
        }
}

static bool in_order(const struct lockchain *c)
{
        const struct lock *l, *next;

        for (l = c->head; l != NULL && (next = lockchain_next(l)) != NULL;
             l = next) {
                if (next->created < l->created) {
                        return false;
                }
        }
        return true;
}

/* Bottom-up: merge runs of `width` locks into runs of twice that, until
 * one run is left. Usually the chain is in order already. */
void lockchain_sort(struct lockchain *c)
{
        uint64_t width, i, n = c->n;

        if (in_order(c)) {
                return;
        }
        for (width = 1; width < n; width *= 2) {
                struct lockchain sorted;
                lockchain_init(&sorted);
                while (c->head != NULL) {
                        struct lockchain a, b;
                        lockchain_init(&a);
                        lockchain_init(&b);
                        for (i = 0; i < width && c->head != NULL; i++) {
                                lockchain_push(&a, lockchain_pop(c));
                        }
                        for (i = 0; i < width && c->head != NULL; i++) {
                                lockchain_push(&b, lockchain_pop(c));
                        }
                        merge(&sorted, &a, &b);
                }
                *c = sorted;
        }
}
